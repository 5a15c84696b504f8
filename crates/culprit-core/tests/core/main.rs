//! culprit-core's integration tests, one module per concern, in one test binary so the build links it once: the
//! statistics against scipy and lkp's rules, the compare, report and change-point goldens, and the bisect machine
//! and simulator.

mod bisect_machine;
mod bisect_sim;
mod changepoint_engine;
mod changepoint_location;
mod compare_cases;
mod compare_golden;
mod compare_lkp_rules;
mod compare_props;
mod compare_scipy;
mod report_golden;
mod track_scipy;
