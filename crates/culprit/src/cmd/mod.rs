//! One module per subcommand; [`dispatch`] routes the parsed command line to it.

use crate::cli::{Cli, Command};
use anyhow::Result;
use std::process::ExitCode;

pub mod bisect;
pub mod check;
pub mod compare;
pub mod follow;
pub mod parse;
pub mod plot;
pub mod report;
pub mod results;
pub mod run;
pub mod serve;
pub mod sim;
pub mod split;
pub mod track;
pub mod try_fix;

use anyhow::Context;
use culprit_store::{PostgresStore, SqliteStore, Store};
use std::path::{Path, PathBuf};

/// `path` as it reads from any directory, for a name that outlives the current one (a mail's steps, a session's job
/// line): canonical where it exists, else joined to the current directory, else as given.
pub(crate) fn absolute_path(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).or_else(|_| std::path::absolute(path)).unwrap_or_else(|_| path.to_path_buf())
}

/// The store `--db`, `$CULPRIT_DB` or `./culprit.db` names. A URL of another database (`mysql://...`) is refused:
/// taken as a SQLite path, it would become a directory `mysql:` with a file in it.
fn store_location(db: Option<PathBuf>) -> Result<PathBuf> {
    let path = db.unwrap_or_else(culprit_store::default_path);
    if let Some(text) = path.to_str().filter(|p| p.contains("://") && !culprit_store::is_postgres_url(p)) {
        let scheme = text.split("://").next().unwrap_or_default();
        anyhow::bail!(
            "--db {scheme}://...: culprit keeps results in a SQLite file (give its path) or on a PostgreSQL server \
             (postgresql://user@host/database)"
        );
    }
    Ok(path)
}

/// Opens the store named by `--db`, `$CULPRIT_DB`, or `./culprit.db`: a SQLite file, or a PostgreSQL server when
/// the value is a `postgres://` or `postgresql://` URL (a farm of machines sharing one store).
pub fn open_store(db: Option<PathBuf>) -> Result<Box<dyn Store>> {
    let (store, created) = open_store_telling_if_created(db)?;
    if let Some(created) = created {
        crate::note!("{created}");
    }
    Ok(store)
}

/// [`open_store`], returning the line that says a new store was created (when one was) instead of printing it, for
/// a command that removes the store again when it fails before storing anything ([`with_store_kept_if_used`]).
fn open_store_telling_if_created(db: Option<PathBuf>) -> Result<(Box<dyn Store>, Option<String>)> {
    let path = store_location(db)?;
    if let Some(url) = path.to_str().filter(|p| culprit_store::is_postgres_url(p)) {
        // The store's own error names the server without the password, so the URL is not repeated here.
        return Ok((Box::new(PostgresStore::connect(url)?), None));
    }
    let new_file = !path.exists();
    let missing_directory = path.parent().filter(|dir| !dir.as_os_str().is_empty() && !dir.exists()).map(PathBuf::from);
    let store = SqliteStore::open(&path).with_context(|| format!("cannot open the result store {}", path.display()))?;
    // A mistyped --db or $CULPRIT_DB made a new empty store without a word, its directories too, and a bisect then
    // started from nothing beside the stored runs it meant to use (QA 48, 9a). The first store of a directory at the
    // default path is what a first `culprit run` is expected to make, so it is not worth a line.
    let created = (new_file && path != std::path::Path::new(culprit_store::DEFAULT_STORE_FILE)).then(|| {
        let directory =
            missing_directory.map_or_else(String::new, |dir| format!(" (and its directory {})", dir.display()));
        format!("culprit: created a new store at {}{directory}", path.display())
    });
    Ok((Box::new(store), created))
}

/// [`open_store`] for commands that write runs: a SQLite file that is read-only is refused before any benchmark runs,
/// rather than after the first run has been measured and cannot be saved.
pub fn open_writable_store(db: Option<PathBuf>) -> Result<Box<dyn Store>> {
    let path = store_location(db)?;
    refuse_read_only(&path)?;
    open_store(Some(path))
}

/// [`open_writable_store`] for commands that add runs to a store that must exist already (`bisect --resume`,
/// `track --bisect`): a mistyped `--db` is an error, not a new store, and a read-only file is refused before the
/// first build.
pub fn open_existing_writable_store(db: Option<PathBuf>) -> Result<Box<dyn Store>> {
    let path = store_location(db)?;
    // A missing file is not read-only: open_existing_store then says it is missing.
    refuse_read_only(&path)?;
    open_existing_store(Some(path))
}

/// An error when `path` is a SQLite file this process cannot write (nothing to check for a PostgreSQL URL).
fn refuse_read_only(path: &std::path::Path) -> Result<()> {
    if path.to_str().is_some_and(culprit_store::is_postgres_url) {
        return Ok(());
    }
    if let Ok(meta) = std::fs::metadata(path) {
        // The mode bits say "read-only" to root too (who could write anyway); access(2) says it of a file this
        // user may not write, such as a colleague's store, which the store opens read-only for reading.
        if on_read_only_filesystem(path) {
            // chmod cannot help there, and root's writes fail too.
            anyhow::bail!(
                "the result store {} is on a read-only filesystem; remount it read-write or give another store with \
                 --db",
                path.display()
            );
        }
        if meta.permissions().readonly() || !writable_by_this_user(path) {
            anyhow::bail!(
                "the result store {} is read-only; make it writable (chmod u+w) or give another store with --db",
                path.display()
            );
        }
    }
    Ok(())
}

/// Whether `path` is on a filesystem mounted read-only (statvfs(3)'s `ST_RDONLY`); false when that cannot be asked.
fn on_read_only_filesystem(path: &std::path::Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else { return false };
    let mut facts = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: a NUL-terminated path that lives across the call and a buffer statvfs fills when it returns 0.
    let asked = unsafe { libc::statvfs(c_path.as_ptr(), facts.as_mut_ptr()) == 0 };
    // SAFETY: statvfs returned 0, so it filled the buffer.
    asked && unsafe { facts.assume_init() }.f_flag & libc::ST_RDONLY != 0
}

/// Whether this process's user may write `path` (access(2) with W_OK); true when that cannot be asked.
pub(crate) fn writable_by_this_user(path: &std::path::Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else { return true };
    // SAFETY: a NUL-terminated path that lives across the call; access(2) only reads it.
    unsafe { libc::access(c_path.as_ptr(), libc::W_OK) == 0 }
}

/// [`open_store`] for commands that only read: a SQLite path that does not exist is an error rather than a new empty
/// store, so a mistyped `--db` says so instead of leaving an empty file behind and answering "no results".
pub fn open_existing_store(db: Option<PathBuf>) -> Result<Box<dyn Store>> {
    let path = store_location(db)?;
    if !path.to_str().is_some_and(culprit_store::is_postgres_url) {
        require_sqlite_file(&path)?;
    }
    open_store(Some(path))
}

/// A mistyped SQLite path is an error for commands that only read, rather than a new empty store.
fn require_sqlite_file(path: &std::path::Path) -> Result<()> {
    if !path.exists() {
        anyhow::bail!(
            "there is no result store at {}; give the store with --db or $CULPRIT_DB (`culprit run` creates one)",
            path.display()
        );
    }
    // SQLite would take an empty file for an empty database and write its schema into it: a command that only
    // reads must not change a file, and an empty one holds no results anyway.
    if std::fs::metadata(path).is_ok_and(|meta| meta.is_file() && meta.len() == 0) {
        anyhow::bail!(
            "{} is an empty file, not a result store; give the store with --db or $CULPRIT_DB (`culprit run` makes \
             a new one)",
            path.display()
        );
    }
    Ok(())
}

/// [`open_existing_store`] for the dashboard, which never writes: a SQLite file is opened read-only (other commands
/// may write to it meanwhile; its WAL journal lets both go on), and a PostgreSQL session is made read-only by the
/// server, so not even a mistake in the dashboard could change a stored result.
pub fn open_read_only_store(db: Option<PathBuf>) -> Result<Box<dyn Store>> {
    let path = store_location(db)?;
    if let Some(url) = path.to_str().filter(|p| culprit_store::is_postgres_url(p)) {
        return Ok(Box::new(PostgresStore::connect(&read_only_url(url))?));
    }
    require_sqlite_file(&path)?;
    let options = culprit_store::OpenOptions { read_only: true, ..Default::default() };
    let store = SqliteStore::open_with(&path, &options)
        .with_context(|| format!("cannot open the result store {}", path.display()))?;
    Ok(Box::new(store))
}

/// A PostgreSQL URL whose sessions start every transaction read-only (`default_transaction_read_only`), passed as a
/// server option in the URL's `options` parameter, added to the options the URL already sets.
fn read_only_url(url: &str) -> String {
    const READ_ONLY: &str = "-c%20default_transaction_read_only%3Don";
    let Some((base, query)) = url.split_once('?') else { return format!("{url}?options={READ_ONLY}") };
    let mut found = false;
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.strip_prefix("options=") {
            Some(value) if !found => {
                found = true;
                format!("options={value}%20{READ_ONLY}")
            }
            _ => pair.to_string(),
        })
        .collect();
    let query = pairs.join("&");
    if found {
        format!("{base}?{query}")
    } else {
        format!("{base}?{query}&options={READ_ONLY}")
    }
}

/// Checks the directory `culprit import` is given before the store is opened (or created). A wrong path is the
/// commonest mistake, and one line saying so beats a chain of causes.
fn check_import_dir(dir: &std::path::Path) -> Result<()> {
    if !dir.exists() {
        anyhow::bail!("{} does not exist; give the top directory of an lkp result root", dir.display());
    }
    if !dir.is_dir() {
        anyhow::bail!("{} is a file, not a directory; give the top directory of an lkp result root", dir.display());
    }
    Ok(())
}

/// `culprit import DIR`: an lkp result root into the store. A run whose `job.yaml` Culprit can read gets the same
/// stable job id as `culprit run` gives that job, so imported and measured results of one job meet.
/// How many job, commit and machine groups the import's summary lists one by one before it counts the rest.
const IMPORT_GROUPS_SHOWN: usize = 20;

fn import(store: &mut dyn Store, dir: &std::path::Path) -> Result<ExitCode> {
    let identify = |job: &culprit_store::result_root::ImportedJob<'_>| {
        let atomic_of = |yaml: &str, file_name: &str| {
            culprit_job::JobFile::parse(yaml, file_name)
                .ok()
                .and_then(|file| file.expand().ok())
                .filter(|jobs| jobs.len() == 1)
                .and_then(|jobs| jobs.into_iter().next())
        };
        // Read as the file it came from (its job_origin), the job gets the name `culprit run` gave it.
        let atomic = job.job_yaml.and_then(|yaml| {
            let first = atomic_of(yaml, "job.yaml")?;
            let origin = first.params().get("job_origin").and_then(|v| v.as_str()).map(str::to_string);
            origin.and_then(|origin| atomic_of(yaml, &origin)).or(Some(first))
        });
        match atomic {
            // The name `culprit run` gave the job (from its job_origin), so the imported runs meet the measured ones
            // under `results --job` too; without the commit lkp's finished job.yaml names, which the store keeps as
            // the run's revision (a name per commit listed one job as several).
            Some(atomic) => culprit_store::result_root::JobIdentity {
                job_id: atomic.id(),
                job_name: atomic.name_across_revisions(),
            },
            None => culprit_store::result_root::default_identity(job),
        }
    };
    let options = culprit_store::result_root::ImportOptions {
        identify: Some(&identify),
        parse_monitor: Some(&RawMonitors),
        parse_benchmark: Some(&RawBenchmarks),
        ..Default::default()
    };
    let report = culprit_store::result_root::import(store, dir, &options)
        .with_context(|| format!("cannot import the lkp result root {}", dir.display()))?;
    if report.imported.is_empty() && report.already_stored.is_empty() && report.skipped.is_empty() {
        // Most likely a wrong directory; "imported 0 runs" with success would hide that.
        anyhow::bail!(
            "found no lkp run under {}: a result root holds <testcase>/<path_params>/<host>/.../<commit>/<run>/stats.json; give its top directory",
            dir.display()
        );
    }
    let mut text = format!(
        "imported {} run(s) from {} into {}; {} already stored",
        report.imported.len(),
        dir.display(),
        store.location(),
        report.already_stored.len()
    );
    // A root of several jobs, commits and machines (lkp's `/result`) is summed up per job, revision and machine, so
    // that one look tells whether every run the root holds arrived under the job and commit it belongs to. A farm's
    // root holds thousands of them, which no one reads line by line: past the first IMPORT_GROUPS_SHOWN, one line
    // counts the rest and says where to list them.
    for (group, counts) in report.groups.iter().take(IMPORT_GROUPS_SHOWN) {
        let already = match counts.already_stored {
            0 => String::new(),
            n => format!(", {n} already stored"),
        };
        text.push_str(&format!(
            "\n  {} at {} on {}: {} run(s){already}",
            group.job_name, group.revision, group.hostname, counts.imported
        ));
    }
    if report.groups.len() > IMPORT_GROUPS_SHOWN {
        let rest: Vec<_> = report.groups.values().skip(IMPORT_GROUPS_SHOWN).collect();
        let imported: usize = rest.iter().map(|c| c.imported).sum();
        let already: usize = rest.iter().map(|c| c.already_stored).sum();
        text.push_str(&format!(
            "\n  ... and {} more job, commit and machine group(s): {imported} run(s), {already} already stored \
             (`culprit results` lists every stored run)",
            rest.len()
        ));
    }
    if !report.from_raw_outputs.is_empty() {
        // Their numbers are Culprit's reading of the outputs, not lkp's stats.json: the reader must know which.
        let directories: Vec<String> = report.from_raw_outputs.iter().map(|p| p.display().to_string()).collect();
        text.push_str(&format!(
            "\nparsed from raw output: {} run(s) had no stats.json (lkp's post-processing did not finish) and were \
             read from their raw benchmark and monitor outputs by Culprit's parsers: {}",
            directories.len(),
            directories.join(", ")
        ));
    }
    for (path, reason) in &report.skipped {
        text.push_str(&format!("\nskipped {}: {reason}", path.display()));
    }
    for warning in &report.warnings {
        text.push_str(&format!("\nwarning: {warning}"));
    }
    crate::output::println(&text)?;
    Ok(if report.skipped.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Culprit's own parsers of monitors' raw outputs (`vmstat`, `perf-stat`, `mpstat`, gzipped or not), which `culprit
/// import` reads for a run of an lkp root that kept them but neither the monitor's lkp JSON nor the run's matrix.
struct RawMonitors;

impl culprit_store::result_root::MonitorParser for RawMonitors {
    fn reads(&self, monitor: &str) -> bool {
        // perf-profile's report is a profile of the whole run, not samples over time.
        monitor != "perf-profile"
            && culprit_parse::lookup(monitor).is_some_and(|parser| parser.kind() == culprit_parse::Kind::Monitor)
    }

    fn parse(&self, monitor: &str, text: &str) -> std::result::Result<culprit_core::model::MonitorSeries, String> {
        let parser = culprit_parse::lookup(monitor).ok_or_else(|| format!("Culprit has no parser of {monitor}"))?;
        let output = parser.parse(&culprit_parse::ParseInput::text(text)).map_err(|error| error.to_string())?;
        let times = output.times();
        let series = output.samples();
        if series.is_empty() {
            return Err(format!("Culprit's {monitor} parser found no sample in it"));
        }
        Ok(culprit_core::model::MonitorSeries { monitor: monitor.to_string(), times, series })
    }
}

/// Culprit's own parsers of benchmarks' raw outputs (`stress-ng`, `fio.output`, `sysbench-cpu`, ..., gzipped or not),
/// which `culprit import` reads for a run of an lkp root that has no stats.json, as a run of Culprit's reads them.
struct RawBenchmarks;

impl culprit_store::result_root::BenchmarkParser for RawBenchmarks {
    fn program_of(&self, file_name: &str) -> Option<String> {
        // lkp keeps fio's output as `fio.output`, one `fio.output.N` per instance; every other program's under its
        // own name.
        if file_name == "fio.output" || file_name.strip_prefix("fio.output.").is_some_and(|n| n.parse::<u32>().is_ok())
        {
            return Some("fio".to_string());
        }
        let parser = culprit_parse::lookup(file_name)?;
        (parser.kind() == culprit_parse::Kind::Benchmark && parser.name() == file_name).then(|| file_name.to_string())
    }

    fn metrics(
        &self,
        program: &str,
        files: &std::collections::BTreeMap<String, String>,
    ) -> std::result::Result<std::collections::BTreeMap<String, f64>, String> {
        let parser = culprit_parse::lookup(program).ok_or_else(|| format!("Culprit has no parser of {program}"))?;
        let main = files.get(program).map(String::as_str).unwrap_or_default();
        let input = culprit_parse::ParseInput { main, files: files.clone() };
        let metrics = parser.parse(&input).map_err(|error| error.to_string())?.metrics(program);
        if metrics.is_empty() {
            return Err(format!("Culprit's {program} parser found no result in it"));
        }
        Ok(metrics)
    }
}

/// Runs a command that adds runs to the store it opens (writable). A refused command (a job file with a mistake,
/// `-n 0`, a directory that is no result root) must not leave a new empty store behind, which a later `--db` typo
/// check would then take for a real one; so a SQLite file this command created is removed again when the command
/// fails before any run was stored in it.
fn with_store_kept_if_used(
    db: Option<PathBuf>,
    command: impl FnOnce(&mut Box<dyn Store>) -> Result<ExitCode>,
) -> Result<ExitCode> {
    let path = store_location(db)?;
    let created = !path.to_str().is_some_and(culprit_store::is_postgres_url) && !path.exists();
    refuse_read_only(&path)?;
    let (mut store, created_line) = open_store_telling_if_created(Some(path.clone()))?;
    let result = command(&mut store);
    let unused = || store.results_summary(&culprit_store::RunFilter::default()).is_ok_and(|groups| groups.is_empty());
    let removed = created && result.is_err() && unused();
    // The line that says a store was created is said once the store is known to stay.
    if let Some(line) = created_line.filter(|_| !removed) {
        crate::note!("{line}");
    }
    if removed {
        drop(store);
        // SQLite's journal files sit beside the store, named after it.
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut file = path.clone().into_os_string();
            file.push(suffix);
            let _ = std::fs::remove_file(file);
        }
    }
    result
}

pub fn dispatch(cli: Cli) -> Result<ExitCode> {
    // Checked before anything runs: a malformed machine name would be stored with every run and session.
    if let Some(problem) = culprit_store::machine_name_setting_problem() {
        anyhow::bail!("{problem}; set it to a name unique in the farm, or unset it to use the host name");
    }
    match cli.command {
        Command::Parse(args) => parse::run(&args.program, &args.file).map(|_| ExitCode::SUCCESS),
        Command::Split(args) => split::run(&args).map(|_| ExitCode::SUCCESS),
        Command::Run(args) if args.dry_run => run::run_dry(&args),
        Command::Run(args) => with_store_kept_if_used(cli.db, |store| run::run(store, &args)),
        Command::Results(args) => {
            let store = open_existing_store(cli.db)?;
            results::run(&store as &dyn Store, &args).map(|_| ExitCode::SUCCESS)
        }
        Command::Compare(mut args) => {
            if args.json {
                args.format = crate::cli::CompareFormat::Json;
            }
            let store = open_existing_store(cli.db)?;
            compare::run(&store as &dyn Store, &args)
        }
        Command::Check(args) if args.clean => check::clean(),
        Command::Check(args) => {
            let mut store = open_writable_store(cli.db)?;
            check::run(&mut store, &args)
        }
        Command::Sim(args) => sim::run(&args).map(|_| ExitCode::SUCCESS),
        Command::Track(args) => track::run(cli.db, &args),
        Command::Bisect(args) => {
            // Only a new bisect may start a store; `log`, `list`, `forget` and `--resume` read a session that must
            // exist, so a mistyped --db is an error rather than an empty store that holds no such session.
            let starts = args.action.is_none() && args.resume.is_none();
            let forgets = matches!(args.action, Some(crate::cli::BisectAction::Forget { .. }));
            let mut store = if starts {
                open_writable_store(cli.db)?
            } else if args.resume.is_some() || forgets {
                open_existing_writable_store(cli.db)?
            } else {
                open_existing_store(cli.db)?
            };
            bisect::run(&mut store, &args)
        }
        Command::Report(args) => {
            let store = open_existing_store(cli.db)?;
            report::run(&store as &dyn Store, &args)
        }
        Command::TryFix(args) => {
            try_fix::check_args(&args)?;
            let mut store = open_writable_store(cli.db)?;
            try_fix::run(&mut store, &args)
        }
        Command::Import(args) => {
            check_import_dir(&args.dir)?;
            with_store_kept_if_used(cli.db, |store| import(store.as_mut(), &args.dir))
        }
        Command::Serve(args) => serve::run(cli.db, &args),
    }
}

#[cfg(test)]
mod tests {
    use super::read_only_url;

    #[test]
    fn read_only_urls_keep_the_options_already_given() {
        let read_only = "-c%20default_transaction_read_only%3Don";
        assert_eq!(read_only_url("postgresql://u:p@h/db"), format!("postgresql://u:p@h/db?options={read_only}"));
        assert_eq!(
            read_only_url("postgresql://h/db?connect_timeout=5"),
            format!("postgresql://h/db?connect_timeout=5&options={read_only}")
        );
        assert_eq!(
            read_only_url("postgresql://h/db?options=-c%20work_mem%3D8MB&sslmode=disable"),
            format!("postgresql://h/db?options=-c%20work_mem%3D8MB%20{read_only}&sslmode=disable")
        );
    }
}
