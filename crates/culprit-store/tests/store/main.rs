//! culprit-store's integration tests, one module per concern, in one test binary so the build links it once: the
//! SQLite and PostgreSQL stores, migrations and upgrades, and lkp result roots.

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/contract.rs"]
mod contract;
#[path = "../common/v1_fixture.rs"]
mod v1_fixture;

mod damaged_result_root;
mod lkp_monitor_files;
mod lkp_result_tree;
mod postgres;
mod postgres_password;
mod result_root;
mod sqlite_store;
mod upgrade;
