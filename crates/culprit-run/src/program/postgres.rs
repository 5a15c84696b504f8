//! A throwaway PostgreSQL server for one run, shared by the programs that measure a database (pgbench, and
//! sysbench's OLTP tests as lkp's `oltp` when not on MariaDB): found, started in the run's scratch directory, and
//! stopped.
//!
//! 1. (as root) `chown postgres <scratch>`, because PostgreSQL refuses to run as root, so the cluster's commands
//!    run as `postgres` through `runuser -u postgres --`;
//! 2. `initdb -D <scratch>/data -U postgres -A trust --no-sync -E UTF8 --locale=C` (trust: nothing but this run can
//!    reach it; the superuser is `postgres` whoever runs it, so clients name one user in every case);
//! 3. `pg_ctl -D <scratch>/data -l <scratch>/postgres.log -w start`, listening only on a Unix socket in the
//!    scratch directory (port 5432 then only names the socket file, so runs never collide); when the scratch path
//!    is too long for a socket address or holds unusual characters, on 127.0.0.1 at a free port instead;
//!
//! then the program's own setup and measured command, and in cleanup `pg_ctl -m fast -w stop`. Should the run layer
//! skip the cleanup (a failed or interrupted setup), the server still goes: the scratch directory is removed after
//! every run, and a postmaster whose `postmaster.pid` has vanished shuts itself down within a minute. A culprit
//! killed with `kill -9` removes nothing: the postmaster, which `pg_ctl start` puts in a session of its own, carries
//! the run's step token, so the next culprit to take up the work kills it with the step it finds left running
//! (`step_record::reap`).

use super::{ProgramContext, ProgramError};
use crate::process::{find_in_path, shell_quote, Invocation};
use std::path::{Path, PathBuf};

/// What to install for the server, for every program that starts one: on Debian, initdb and pg_ctl come with the
/// server package.
pub const SERVER_INSTALL_HINT: &str =
    "install it with: apt-get install postgresql postgresql-client (Debian keeps pgbench, initdb and pg_ctl in /usr/lib/postgresql/<version>/bin)";

/// The throwaway cluster's superuser, whoever starts it.
pub const SUPERUSER: &str = "postgres";

/// The database clients of the throwaway cluster use (initdb creates it).
pub const DATABASE: &str = "postgres";

/// What the throwaway cluster needs from this machine, found once per plan (and given by hand in tests).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerHost {
    /// The newest `/usr/lib/postgresql/<version>/bin` holding initdb and pg_ctl.
    pub bin_dir: Option<PathBuf>,
    /// Whether Culprit runs as root, so the server must run as `postgres`.
    pub as_root: bool,
    /// Whether the `postgres` account exists (Debian's server package creates it).
    pub postgres_user: bool,
}

impl ServerHost {
    /// This machine's PostgreSQL server binaries and user.
    pub fn detect() -> Self {
        let as_root = crate::process::effective_uid() == 0;
        let postgres_user = crate::process::user_exists("postgres");
        ServerHost { bin_dir: server_bin_dir(Path::new("/usr/lib/postgresql")), as_root, postgres_user }
    }
}

/// The PostgreSQL version of a Debian `/usr/lib/postgresql/<version>` directory name, for ordering (`9.6` < `15`).
fn version_key(name: &str) -> Vec<u32> {
    name.split('.').map(|part| part.parse().unwrap_or(0)).collect()
}

/// The newest `<root>/<version>/bin` that holds both initdb and pg_ctl, else the directory of an `initdb` in
/// `PATH` (distributions that install the server binaries there).
pub fn server_bin_dir(root: &Path) -> Option<PathBuf> {
    let has_server = |dir: &Path| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file();
    let mut versions: Vec<(Vec<u32>, PathBuf)> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| (version_key(&entry.file_name().to_string_lossy()), entry.path().join("bin")))
        .filter(|(_, bin)| has_server(bin))
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return Some(bin);
    }
    find_in_path("initdb").and_then(|initdb| initdb.parent().map(Path::to_path_buf)).filter(|dir| has_server(dir))
}

/// Whether the server can put its socket in `dir`: the socket address (`<dir>/.s.PGSQL.5432`) must fit in
/// `sun_path` (108 bytes with its NUL; a margin is kept), and the path must survive pg_ctl's shell and PostgreSQL's
/// list syntax unquoted.
pub fn socket_dir_usable(dir: &Path) -> bool {
    let Some(text) = dir.to_str() else {
        return false;
    };
    text.starts_with('/')
        && text.len() + "/.s.PGSQL.5432".len() <= 100
        && text.chars().all(|c| c.is_ascii_alphanumeric() || "/-_.".contains(c))
}

/// Where clients connect: a host name or socket directory, a port, a user, a database.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Connection {
    pub host: Option<String>,
    pub port: Option<u64>,
    pub user: Option<String>,
    pub dbname: Option<String>,
}

impl Connection {
    /// libpq's client options (`-h`, `-p`, `-U`) for what is given, as pgbench and psql take them.
    pub fn libpq_options(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(host) = &self.host {
            args.extend(["-h".to_string(), host.clone()]);
        }
        if let Some(port) = self.port {
            args.extend(["-p".to_string(), port.to_string()]);
        }
        if let Some(user) = &self.user {
            args.extend(["-U".to_string(), user.clone()]);
        }
        args
    }
}

/// A throwaway server's commands, and where its clients connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThrowawayServer {
    /// The commands that make and start it, before the program's own setup.
    pub setup: Vec<Invocation>,
    /// The command that stops it.
    pub cleanup: Vec<Invocation>,
    pub connection: Connection,
    /// The bin directory it was found in, where pgbench also lives.
    pub bin_dir: PathBuf,
}

/// The commands of a throwaway server in `ctx`'s scratch directory for `program`, with extra server `settings`
/// (`max_wal_size=60GB`, values already checked), on `host`; `free_port` is asked only when a socket cannot be used.
pub fn throwaway_server(
    program: &'static str,
    ctx: &ProgramContext,
    host: &ServerHost,
    free_port: &dyn Fn() -> Option<u16>,
    settings: &[(String, String)],
) -> Result<ThrowawayServer, ProgramError> {
    let bin_dir = host.bin_dir.as_ref().ok_or(ProgramError::MissingBinary {
        program,
        binary: "initdb".into(),
        hint: SERVER_INSTALL_HINT,
    })?;
    if host.as_root && !host.postgres_user {
        return Err(ProgramError::MissingBinary {
            program,
            binary: "the 'postgres' user (PostgreSQL will not run as root)".into(),
            hint: SERVER_INSTALL_HINT,
        });
    }
    let as_server_user = |argv: Vec<String>| as_account("postgres", host.as_root, argv);
    let scratch = &ctx.scratch_dir;
    let data = scratch.join("data").display().to_string();
    let tool = |name: &str| bin_dir.join(name).display().to_string();

    let (listen, connection) = if socket_dir_usable(scratch) {
        let dir = scratch.display().to_string();
        (
            [("listen_addresses", String::new()), ("unix_socket_directories", dir.clone()), ("port", "5432".into())],
            Connection { host: Some(dir), port: Some(5432), ..Connection::default() },
        )
    } else {
        let port = free_port().ok_or_else(|| ProgramError::BadParam {
            program,
            key: "host".into(),
            value: String::new(),
            reason: "no free TCP port on 127.0.0.1 for the throwaway server".into(),
        })?;
        (
            [("listen_addresses", "127.0.0.1".into()), ("unix_socket_directories", String::new()), ("port", port.to_string())],
            Connection { host: Some("127.0.0.1".into()), port: Some(port.into()), ..Connection::default() },
        )
    };
    let connection =
        Connection { user: Some(SUPERUSER.to_string()), dbname: Some(DATABASE.to_string()), ..connection };
    let mut server_options: Vec<String> = Vec::new();
    for (name, value) in &listen {
        server_options.extend(["-c".to_string(), shell_quote(&format!("{name}={value}"))]);
    }
    for (name, value) in settings {
        server_options.extend(["-c".to_string(), format!("{name}={value}")]);
    }

    let mut setup = Vec::new();
    if host.as_root {
        setup.push(hand_over(scratch, "postgres"));
    }
    let initdb = [tool("initdb"), "-D".into(), data.clone(), "-U".into(), SUPERUSER.into(), "-A".into(), "trust".into()];
    let mut initdb = initdb.to_vec();
    initdb.extend(["--no-sync", "-E", "UTF8", "--locale=C"].map(String::from));
    setup.push(as_server_user(initdb));
    let log = scratch.join("postgres.log").display().to_string();
    let start = [
        tool("pg_ctl"),
        "-D".into(),
        data.clone(),
        "-l".into(),
        log.clone(),
        "-w".into(),
        "-t".into(),
        "120".into(),
        "-o".into(),
        server_options.join(" "),
        "start".into(),
    ];
    // pg_ctl only says "Examine the log output" when the server does not start, and the log goes with the
    // scratch directory, so a failed start copies it to stderr, which the failed run keeps.
    let start_line = start.iter().map(|w| shell_quote(w)).collect::<Vec<_>>().join(" ");
    setup.push(as_server_user(vec![
        "sh".into(),
        "-c".into(),
        format!("{start_line} || {{ status=$?; cat {} >&2; exit $status; }}", shell_quote(&log)),
    ]));
    let stop = [tool("pg_ctl"), "-D".into(), data, "-m".into(), "fast".into(), "-w".into(), "stop".into()];
    Ok(ThrowawayServer {
        setup,
        cleanup: vec![as_server_user(stop.to_vec())],
        connection,
        bin_dir: bin_dir.clone(),
    })
}

/// `argv` run as the server's own `account` when Culprit runs as root, through `runuser -u <account> --` (which keeps
/// the environment, so the server still carries the run's step token), else as it is: PostgreSQL refuses to run as
/// root, and MariaDB's throwaway server ([`super::mariadb`]) runs as `mysql` as lkp's `mysql-setup` starts it.
pub(crate) fn as_account(account: &str, as_root: bool, argv: Vec<String>) -> Invocation {
    if as_root {
        let mut wrapped: Vec<String> = ["runuser", "-u", account, "--"].map(String::from).to_vec();
        wrapped.extend(argv);
        Invocation::new(wrapped)
    } else {
        Invocation::new(argv)
    }
}

/// The command that gives the scratch directory to a server's `account` before the server, run as that account by
/// [`as_account`], makes its data directory and socket there; it fails, saying why and what to do, when the account
/// cannot enter the directory after all. The scratch directory's owner is not enough: a directory above it closed to
/// other accounts (`--scratch /root/...`, or a test's 0700 temporary directory) keeps the server's account out, and
/// the server's own tools then failed with `mkdir: cannot create directory '/root': Permission denied`, which names
/// neither the scratch directory nor the cure.
pub(crate) fn hand_over(scratch: &Path, account: &str) -> Invocation {
    let script = "chown \"$1\" \"$2\" || exit 1
if ! runuser -u \"$1\" -- test -w \"$2\" -a -x \"$2\"; then
  echo \"the $1 account, which runs the server, cannot enter it (a directory above is closed to others); give \
--scratch a directory every account can reach, e.g. under /var/tmp, or chmod o+x those above it\" >&2
  exit 1
fi";
    let scratch = scratch.display().to_string();
    let label = format!("chown {account} {scratch}");
    Invocation::new(["sh", "-c", script, "sh", account, &scratch]).labelled(label)
}

/// A machine with PostgreSQL 15's server binaries, as root or not, for the plans' tests.
#[cfg(test)]
pub(crate) fn test_host(as_root: bool) -> ServerHost {
    ServerHost { bin_dir: Some(PathBuf::from("/usr/lib/postgresql/15/bin")), as_root, postgres_user: true }
}

/// No free port, for plans that must not need one.
#[cfg(test)]
pub(crate) fn no_port() -> Option<u16> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_server_version_wins() {
        let root = tempfile::tempdir().unwrap();
        for version in ["9.6", "15", "13"] {
            let bin = root.path().join(version).join("bin");
            std::fs::create_dir_all(&bin).unwrap();
            for tool in ["initdb", "pg_ctl"] {
                std::fs::write(bin.join(tool), "").unwrap();
            }
        }
        // A newer version without the server binaries (client only) is skipped.
        std::fs::create_dir_all(root.path().join("17/bin")).unwrap();
        assert_eq!(server_bin_dir(root.path()), Some(root.path().join("15/bin")));
    }

    #[test]
    fn a_socket_needs_a_short_plain_path() {
        assert!(socket_dir_usable(Path::new("/tmp/culprit-scratch/pg.1.0")));
        assert!(!socket_dir_usable(Path::new("/tmp/with space")));
        assert!(!socket_dir_usable(Path::new(&format!("/tmp/{}", "x".repeat(90)))));
        assert!(!socket_dir_usable(Path::new("relative/dir")));
    }
}
