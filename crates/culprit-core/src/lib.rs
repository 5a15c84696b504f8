//! Culprit's pure core: the result model, statistics, the comparison verdict, and the bisect state machine.
//!
//! Nothing in this crate touches the file system, the network, a clock or a process. Inputs are values and
//! strings; outputs are values and strings. That is what lets the statistics, the verdict and the bisect be
//! tested with tables of cases and simulated end to end (see `ARCHITECTURE.md`).

// `!(x > 0.0)` is how this crate says "not a positive number, NaN included": the negated comparison is true for NaN,
// which a rewrite to `x <= 0.0` would silently let through. Clippy's suggestion (`partial_cmp`) reads worse.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

pub mod model;
pub mod rng;
pub mod stats;
pub mod compare;
pub mod bisect;
pub mod check;
pub mod report;
pub mod changepoint;
pub mod words;
