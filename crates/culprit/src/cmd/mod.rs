//! One module per subcommand; [`dispatch`] routes the parsed command line to it.

use crate::cli::{Cli, Command};
use anyhow::Result;
use std::process::ExitCode;

pub mod bisect;
pub mod check;
pub mod compare;
pub mod parse;
pub mod plot;
pub mod report;
pub mod results;
pub mod run;
pub mod sim;
pub mod split;
pub mod track;
pub mod try_fix;

use anyhow::Context;
use culprit_store::{PostgresStore, SqliteStore, Store};
use std::path::PathBuf;

/// Opens the store named by `--db`, `$CULPRIT_DB`, or `./culprit.db`: a SQLite file, or a PostgreSQL server when
/// the value is a `postgres://` or `postgresql://` URL (a farm of machines sharing one store).
pub fn open_store(db: Option<PathBuf>) -> Result<Box<dyn Store>> {
    let path = db.unwrap_or_else(culprit_store::default_path);
    if let Some(url) = path.to_str().filter(|p| culprit_store::is_postgres_url(p)) {
        // The store's own error names the server without the password, so the URL is not repeated here.
        return Ok(Box::new(PostgresStore::connect(url)?));
    }
    let store = SqliteStore::open(&path).with_context(|| format!("cannot open the result store {}", path.display()))?;
    Ok(Box::new(store))
}

pub fn dispatch(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Parse(args) => parse::run(&args.program, &args.file).map(|_| ExitCode::SUCCESS),
        Command::Split(args) => split::run(&args).map(|_| ExitCode::SUCCESS),
        Command::Run(args) => {
            let mut store = open_store(cli.db)?;
            run::run(&mut store, &args)
        }
        Command::Results(args) => {
            let store = open_store(cli.db)?;
            results::run(&store as &dyn Store, &args).map(|_| ExitCode::SUCCESS)
        }
        Command::Compare(args) => {
            let store = open_store(cli.db)?;
            compare::run(&store as &dyn Store, &args)
        }
        Command::Check(args) => {
            let mut store = open_store(cli.db)?;
            check::run(&mut store, &args)
        }
        Command::Sim(args) => sim::run(&args).map(|_| ExitCode::SUCCESS),
        Command::Track(args) => track::run(cli.db, &args),
        Command::Bisect(args) => {
            let mut store = open_store(cli.db)?;
            bisect::run(&mut store, &args)
        }
        Command::Report(args) => {
            let store = open_store(cli.db)?;
            report::run(&store as &dyn Store, &args)
        }
        Command::TryFix(args) => {
            let mut store = open_store(cli.db)?;
            try_fix::run(&mut store, &args)
        }
        Command::Import(args) => {
            let mut store = open_store(cli.db)?;
            let report = culprit_store::result_root::import(&mut store, &args.dir, &Default::default())
                .with_context(|| format!("cannot import the lkp result root {}", args.dir.display()))?;
            crate::output::println(&format!("{report:?}"))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
