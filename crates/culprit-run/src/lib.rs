//! The outer layer that touches the machine: programs, monitors, machine facts, git, result roots (being written).
