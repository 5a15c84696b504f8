//! The `culprit` binary: a thin command-line layer over the library crates (being written).

fn main() {}
