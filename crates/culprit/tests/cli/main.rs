//! The `culprit` binary's end-to-end tests that measure no time: one module per concern or per QA pass (named
//! after it, as `qa45_fixes`), all in one test binary so that the build links it once and its tests run in parallel.
//! Tests whose verdict comes from measured time live in the `timed` binary, which keeps the machine quiet for them.

#[path = "../common/mod.rs"]
mod common;

mod bad_inputs_cli;
mod bounded_reads;
mod cli_run;
mod iperf_cli;
mod kernel;
mod lkp_needs;
mod oltp_cli;
mod perf_bench;
mod pgbench_cli;
mod plot;
mod qa13_fixes;
mod qa14a_fixes;
mod qa14b_fixes;
mod qa15_fixes;
mod qa16_fixes;
mod qa17_fixes;
mod qa18_fixes;
mod qa20_fixes;
mod qa21_fixes;
mod qa22_fixes;
mod qa2_fixes;
mod qa3_fixes;
mod qa45_compare;
mod qa45_peak_rss;
mod qa46_fixes;
mod qa46_report;
mod qa46_scratch;
mod qa47_fixes;
mod qa47_lkp_jobs;
mod qa47_time_metrics;
mod qa48_import;
mod qa48_layout;
mod qa5_fixes;
mod qa_check;
mod qa_cli_checks;
mod qa_import;
mod qa_monitors;
mod qa_run_inputs;
mod qa_store_path;
mod reported_by;
mod review17;
mod split_lkp_programs;
mod stored_answer;
