//! culprit-run's integration tests, one module per concern, in one test binary so the build links it once: the
//! monitors on real and damaged /proc files, and the throwaway database servers.

mod damaged_proc_files;
mod monitors;
mod throwaway_servers;
