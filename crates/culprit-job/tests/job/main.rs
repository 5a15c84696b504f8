//! culprit-job's integration tests, one module per concern, in one test binary so the build links it once: lkp's
//! job files and their atomic jobs, and bad or damaged job files.

mod atomic_jobs;
mod bad_inputs;
mod damaged_job_files;
mod example_jobs;
mod qa47_lkp_names;
mod qa48_quoted_booleans;
mod split_job_fixtures;
