//! Culprit's pure core: the result model, statistics, the comparison verdict, and the bisect state machine.
//!
//! Nothing in this crate touches the file system, the network, a clock or a process. Inputs are values and
//! strings; outputs are values and strings. That is what lets the statistics, the verdict and the bisect be
//! tested with tables of cases and simulated end to end (see `ARCHITECTURE.md`).

pub mod model;
pub mod rng;
pub mod stats;
pub mod compare;
pub mod bisect;
pub mod check;
pub mod report;
pub mod changepoint;
