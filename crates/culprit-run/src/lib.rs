//! The outer layer that touches the machine: benchmark programs, monitors, machine facts, git, and the executor
//! that runs a validated plan into the store.

pub mod monitor;
