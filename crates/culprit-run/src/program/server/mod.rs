//! The throwaway database server a run starts in its scratch directory for the programs that measure a database
//! (pgbench, and sysbench's OLTP tests as lkp's `oltp`): the steps every engine's server goes through, written once
//! ([`throwaway`]), and one module per engine for its own parts ([`Engine`]): [`postgres`] and [`mariadb`].
//!
//! 1. Before anything runs, a machine without the engine's programs is refused, and so is one where Culprit runs as
//!    root and the account the server runs as is missing, naming what to install.
//! 2. (as root) The scratch directory is handed over to that account ([`hand_over`]), and the server's own commands
//!    run as it through `runuser -u <account> --` ([`as_account`]): PostgreSQL refuses to run as root, and lkp's
//!    `mysql-setup` starts MySQL as `mysql`.
//! 3. The engine makes its data directory in the scratch directory.
//! 4. The server starts, listening on a Unix socket in the scratch directory, so that runs never collide, or, when
//!    the scratch path is too long for a socket address, on 127.0.0.1 at a free port. The start step returns once
//!    the server accepts connections ([`START_LIMIT_SECS`] at most), or fails with the server's log on stderr, which
//!    the failed run keeps: the log itself goes with the scratch directory. A port is only free when it is picked,
//!    and two runs starting at once can pick the same one; a start whose log says its port was taken is tried again
//!    from a new plan, with a new port ([`PORT_TRIES`] tries in all: the plan's `SetupRetry`).
//! 5. What the engine runs once the server is up (MariaDB's database), then the program's own setup and measured
//!    command. In cleanup the server stops; the run attempts cleanup whatever happened, so the server of a setup that
//!    failed halfway stops too.
//!
//! The server leaves the setup step's process group (a session of its own), which is killed when the step ends, but
//! carries the run's step token in its environment (`runuser` keeps it), so a culprit killed with `kill -9` leaves it
//! for the next culprit to take up the work to kill (`step_record::reap`). Nothing of it lives outside the scratch
//! directory, which that culprit then removes (`scratch::remove_left_by_dead_runs`).

pub mod mariadb;
pub mod postgres;

use super::{ProgramContext, ProgramError, SetupRetry};
use crate::process::{shell_quote, Invocation};
use std::path::{Path, PathBuf};

/// How long a server gets to accept connections.
pub const START_LIMIT_SECS: u32 = 120;

/// The tries a server on 127.0.0.1 gets to find its port free, each on a new one.
pub const PORT_TRIES: u32 = 5;

/// What PostgreSQL's and MariaDB's logs say when their port is taken (the error text of `EADDRINUSE`), which the
/// start step copies to its stderr.
const PORT_TAKEN: &str = "Address already in use";

/// One engine's parts of a throwaway server, which [`throwaway`] puts in their places.
pub trait Engine: Sized + Clone {
    /// Where the measured program connects.
    type Connection: std::fmt::Debug + Clone;
    /// What to install, named by every refusal.
    const INSTALL_HINT: &'static str;
    /// The account the server runs as under root, which the engine's Debian package creates.
    const ACCOUNT: &'static str;
    /// What a refusal names when Culprit runs as root and the account is missing.
    const MISSING_ACCOUNT: &'static str;
    /// This machine's programs of the engine, or the name of the first one missing.
    fn find() -> Result<Self, &'static str>;
    /// The socket the server can listen on in `scratch` (PostgreSQL's socket directory, MariaDB's socket file), when
    /// the engine's tools can reach it by its path, else `None`.
    fn socket_in(scratch: &Path) -> Option<String>;
    /// The commands of a server in `scratch` listening at `listen`, with extra server `settings` (values already
    /// checked).
    fn parts(&self, scratch: &Path, listen: &Listen, settings: &[(String, String)]) -> Parts<Self::Connection>;
}

/// What a throwaway server needs from this machine, found once per plan (and given by hand in tests).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host<E> {
    /// The engine's programs; `Err` names the first one missing.
    pub tools: Result<E, &'static str>,
    /// Whether Culprit runs as root, so the server runs as the engine's account.
    pub as_root: bool,
    /// Whether that account exists.
    pub account: bool,
}

impl<E: Engine> Host<E> {
    /// This machine's programs of the engine, and its account.
    pub fn detect() -> Self {
        let as_root = crate::process::effective_uid() == 0;
        Host { tools: E::find(), as_root, account: crate::process::user_exists(E::ACCOUNT) }
    }
}

/// Where the server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    /// On a Unix socket in the scratch directory, as [`Engine::socket_in`] gives it.
    Socket(String),
    /// On 127.0.0.1 at this port.
    Tcp(u16),
}

/// An engine's commands for one server, in the order they run.
#[derive(Debug, Clone)]
pub struct Parts<C> {
    /// Makes the data directory, as the server's account.
    pub make: Vec<String>,
    /// Starts the server, as its account.
    pub start: Start,
    /// The server's log, copied to stderr when it does not start.
    pub log: String,
    /// What Culprit runs once the server is up, before the program's own setup.
    pub once_up: Vec<Invocation>,
    /// Stops the server.
    pub stop: Command,
    pub connection: C,
}

/// How a server starts and says that it accepts connections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Start {
    /// A command that starts the server in a session of its own and returns once it accepts connections, or fails
    /// when it does not (`pg_ctl -w start`).
    Returning(Vec<String>),
    /// The server itself (`name`), which runs in the foreground, started in the background in a session of its own,
    /// and a client command that succeeds once it accepts connections (`mariadb-admin ping`), run in `dir`, which the
    /// ping may name the server's socket relative to.
    Detached { name: &'static str, server: Vec<String>, ping: Vec<String>, dir: PathBuf },
}

/// One of a server's commands, and whose it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// A tool of the server's that works on its data directory (`pg_ctl stop`), run as the server's account.
    AsAccount(Vec<String>),
    /// A client of the server (`mariadb-admin shutdown`), run as Culprit.
    AsCaller(Invocation),
}

/// A throwaway server's commands, and where the program connects.
#[derive(Debug, Clone)]
pub struct ThrowawayServer<E: Engine> {
    /// The commands that make and start it, and what its engine runs once it is up, before the program's own setup.
    pub setup: Vec<Invocation>,
    /// The command that stops it.
    pub cleanup: Vec<Invocation>,
    pub connection: E::Connection,
    /// The engine's programs it was made with (PostgreSQL's bin directory, where pgbench lives too).
    pub tools: E,
    /// On a port: the start, to try again on a new port when another process took this one first.
    pub retry: Option<SetupRetry>,
}

/// The commands of a throwaway server of `host`'s engine in `ctx`'s scratch directory for `program`, with extra
/// server `settings` (values already checked); `free_port` is asked only when a socket cannot be used.
pub fn throwaway<E: Engine>(
    program: &'static str,
    ctx: &ProgramContext,
    host: &Host<E>,
    free_port: &dyn Fn() -> Option<u16>,
    settings: &[(String, String)],
) -> Result<ThrowawayServer<E>, ProgramError> {
    let tools = host.tools.as_ref().map_err(|missing| ProgramError::MissingBinary {
        program,
        binary: missing.to_string(),
        hint: E::INSTALL_HINT,
    })?;
    if host.as_root && !host.account {
        return Err(ProgramError::MissingBinary {
            program,
            binary: E::MISSING_ACCOUNT.into(),
            hint: E::INSTALL_HINT,
        });
    }
    let scratch = &ctx.scratch_dir;
    let listen = match E::socket_in(scratch) {
        Some(socket) => Listen::Socket(socket),
        None => Listen::Tcp(free_port().ok_or_else(|| ProgramError::BadParam {
            program,
            key: "host".into(),
            value: String::new(),
            reason: "no free TCP port on 127.0.0.1 for the throwaway server".into(),
        })?),
    };
    let parts = tools.parts(scratch, &listen, settings);
    let as_server = |argv: Vec<String>| as_account(E::ACCOUNT, host.as_root, argv);

    let mut setup = Vec::new();
    if host.as_root {
        setup.push(hand_over(scratch, E::ACCOUNT));
    }
    setup.push(as_server(parts.make));
    // A free port is only free when it is picked, and two runs starting at once can pick the same one: the start of
    // the second fails, and a new plan picks another port.
    let retry = matches!(listen, Listen::Tcp(_)).then_some(SetupRetry {
        step: setup.len(),
        when_stderr_has: PORT_TAKEN,
        tries: PORT_TRIES,
        why: "another process took the throwaway server's port on 127.0.0.1 first; each try picks a new port",
    });
    let start = as_server(vec!["sh".into(), "-c".into(), start_script(&parts.start, &parts.log)]);
    setup.push(match &parts.start {
        Start::Returning(_) => start,
        Start::Detached { dir, .. } => start.in_dir(dir),
    });
    setup.extend(parts.once_up);
    let stop = match parts.stop {
        Command::AsAccount(argv) => as_server(argv),
        Command::AsCaller(invocation) => invocation,
    };
    Ok(ThrowawayServer { setup, cleanup: vec![stop], connection: parts.connection, tools: tools.clone(), retry })
}

/// The start step's shell script: `start`, and the server's `log` on stderr when the server does not start, since
/// the start command's own words do not say why (pg_ctl says only "Examine the log output"). The log is emptied
/// first, as both servers append to it: a start tried again after its port was taken is told by its own words, not
/// by the earlier try's.
fn start_script(start: &Start, log: &str) -> String {
    let quoted = |argv: &[String]| argv.iter().map(|w| shell_quote(w)).collect::<Vec<_>>().join(" ");
    let log = shell_quote(log);
    let script = match start {
        Start::Returning(argv) => format!("{} || {{ status=$?; cat {log} >&2; exit $status; }}", quoted(argv)),
        // The server's output goes to its log, not the step's pipes, which would otherwise stay open for as long as
        // the server runs; `setsid` takes it out of the step's process group, which is killed when the step ends.
        Start::Detached { name, server, ping, .. } => format!(
            "setsid {server} </dev/null >/dev/null 2>&1 & pid=$!; tries=0; \
             until {ping} >/dev/null 2>&1; do \
             if ! kill -0 $pid 2>/dev/null; then echo '{name} exited:' >&2; cat {log} >&2; exit 1; fi; \
             tries=$((tries + 1)); \
             if [ $tries -ge {tries} ]; then echo '{name} did not answer in {START_LIMIT_SECS} s:' >&2; \
             cat {log} >&2; kill $pid; exit 1; fi; \
             sleep 0.1; done",
            server = quoted(server),
            ping = quoted(ping),
            tries = START_LIMIT_SECS * 10,
        ),
    };
    format!(": > {log}; {script}")
}

/// `argv` run as the server's own `account` when Culprit runs as root, through `runuser -u <account> --` (which keeps
/// the environment, so the server still carries the run's step token), else as it is.
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

/// No free port, for plans that must not need one.
#[cfg(test)]
pub(crate) fn no_port() -> Option<u16> {
    None
}
