//! The `culprit` binary's end-to-end tests whose verdicts come from measured time (real bisects, follows and
//! comparisons of slowdown repositories), with the other tests of their modules. Each such test holds the machine
//! alone (`common::quiet_machine`) and every other test of this binary holds it shared (`common::shared_machine`), so
//! a timing never has another test's processes beside it; the tests that measure nothing live in the `cli` binary.

#[path = "../common/mod.rs"]
mod common;

mod bisect_e2e;
mod compare_builds;
mod concurrent_bisects;
mod farm_sessions;
mod follow;
mod no_checkout;
mod postgres_cli;
mod qa10_fixes;
mod qa11_fixes;
mod qa12_fixes;
mod qa19_fixes;
mod qa45_fixes;
mod qa45b_7;
mod qa45b_json;
mod qa45b_leftovers;
mod qa48_9d_share_words;
mod qa48_noise_words;
mod qa48_open_stretches;
mod qa48_resume;
mod qa48_sides;
mod qa48_stale_sessions;
mod qa48_untestable_culprit;
mod qa49_forget_finished;
mod qa4_fixes;
mod qa50_bisect;
mod qa50_two_stores;
mod qa51_report;
mod qa51_track;
mod qa6_fixes;
mod qa7_fixes;
mod qa8_fixes;
mod qa9_fixes;
mod report;
mod review14_fixes;
mod review16_fixes;
mod serve;
mod step_timeouts;
mod track;
