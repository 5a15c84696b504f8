//! The outer layer that touches the machine: benchmark programs, monitors, machine facts, git, and the executor
//! that runs one atomic job into a run record.

pub mod bisect;
pub mod executor;
pub mod filesystem;
pub mod git;
pub mod machine;
pub mod measure;
pub mod monitor;
pub mod process;
pub mod program;
pub mod scratch;
pub mod step_record;
pub mod worktree;
