//! culprit-parse's integration tests, one module per concern, in one test binary so the build links it once: lkp's
//! parser fixtures, recorded real outputs of the benchmarks, and damaged recordings.

mod benchmarks_real;
mod damaged_recordings;
mod import_formats;
mod lkp_fixtures;
mod perf_real;
mod pgbench_real;
mod qa48_own_keys;
