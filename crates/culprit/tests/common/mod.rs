//! Helpers shared by the binary's end-to-end tests.

// Both test binaries (`cli` and `timed`) compile this module, and `cli` uses only some of it.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Bytes a process printed, as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs git with `args` in `repo`, failing the test when it fails; its output, trimmed.
pub fn git(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git").arg("-C").arg(repo).args(args).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
    text(&out.stdout).trim().to_string()
}

/// Runs the culprit binary with `--db db` and `args` in `cwd`.
pub fn culprit(db: impl AsRef<OsStr>, args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_culprit")).current_dir(cwd).arg("--db").arg(db).args(args).output().unwrap()
}

/// Starts the culprit binary with `--db db` and `args` in `cwd`, its standard output and error piped, for a test
/// that acts while it runs.
pub fn spawn_culprit(db: impl AsRef<OsStr>, args: &[&str], cwd: &Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_culprit"))
        .current_dir(cwd)
        .arg("--db")
        .arg(db)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until `path` exists; fails the test after a minute, saying that `what` never happened.
pub fn wait_for_file(path: &Path, what: &str) {
    wait_until(what, || path.exists());
}

/// Waits until `happened` says so, asking every 50 ms; fails the test after a minute, saying that `what` never
/// happened.
pub fn wait_until(what: &str, mut happened: impl FnMut() -> bool) {
    let begun = std::time::Instant::now();
    while !happened() {
        assert!(begun.elapsed() < std::time::Duration::from_secs(60), "{what}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The standard output of a run that must have succeeded; otherwise the test fails with its exit code and output.
pub fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\n{}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Makes `dir/repo` with `tests/fixtures/make-slowdown-repo.sh`: `commits` commits of a small C program, `slowdown`
/// percent more work from commit `slow_at` on, and commit `broken_at` not building. Returns the repository and its
/// commit SHAs, oldest first.
pub fn make_slowdown_repo(
    dir: &Path,
    commits: usize,
    slow_at: usize,
    broken_at: usize,
    slowdown: i32,
) -> (PathBuf, Vec<String>) {
    let repo = dir.join("repo");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/make-slowdown-repo.sh");
    let status = Command::new("bash")
        .arg(&script)
        .arg(&repo)
        .args([commits.to_string(), slow_at.to_string(), broken_at.to_string(), slowdown.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let log = Command::new("git").arg("-C").arg(&repo).args(["log", "--reverse", "--format=%H"]).output().unwrap();
    (repo, String::from_utf8_lossy(&log.stdout).lines().map(str::to_string).collect())
}

/// Writes `dir/name`, a patch of a slowdown repository's `bench.c` that makes its `slowdown` percent more work
/// `patched` percent instead (0 undoes it), as `git diff` writes it, and leaves the checkout as it was: the patch a
/// `culprit try-fix` test applies. Returns the patch's path.
pub fn work_patch(dir: &Path, repo: &Path, name: &str, slowdown: i32, patched: i32) -> PathBuf {
    let source = repo.join("bench.c");
    let bench = std::fs::read_to_string(&source).unwrap();
    std::fs::write(&source, bench.replace(&format!("(100 + {slowdown})"), &format!("(100 + {patched})"))).unwrap();
    let diff = Command::new("git").arg("-C").arg(repo).arg("diff").output().unwrap();
    let patch = dir.join(name);
    std::fs::write(&patch, &diff.stdout).unwrap();
    assert!(Command::new("git").arg("-C").arg(repo).args(["checkout", "-q", "bench.c"]).status().unwrap().success());
    patch
}

/// A temporary directory holding a slowdown repository of `commits` commits (30% from commit `slow_at`, commit
/// `broken_at` not building), its commits, and the path of a store beside it.
pub fn slowdown(commits: usize, slow_at: usize, broken_at: usize) -> (tempfile::TempDir, PathBuf, Vec<String>, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = make_slowdown_repo(dir.path(), commits, slow_at, broken_at, 30);
    let db = dir.path().join("b.db");
    (dir, repo, shas, db)
}

/// The lock files culprit keeps in `repo` (`.git/culprit/*.lock`), by name.
pub fn lock_files(repo: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(repo.join(".git").join("culprit")) else { return Vec::new() };
    let names = entries.map(|e| e.unwrap().file_name().to_string_lossy().into_owned());
    names.filter(|name| name.ends_with(".lock")).collect()
}

/// Writes an executable shell script: the stand-in programs (qemu, ssh, perf, ...) a test puts first on `PATH`.
pub fn write_script(path: &Path, body: &str) {
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// Writes `DIR/wrap.sh`, a `--run` command standing in for a crash mid-bisect, and returns the command line (`sh
/// DIR/wrap.sh`). It counts its runs in `DIR/total` and appends each run's commit to `DIR/trace`; the run whose number
/// is in `DIR/kill-at` (none while that file is missing) runs the shell text `on_kill`, then kills the culprit whose
/// pid is in `DIR/pid` with kill -9 and sleeps, as a benchmark left running would. Every run then runs `./bench`.
pub fn kill_at_run_wrapper(dir: &Path, on_kill: &str) -> String {
    let wrapper = dir.join("wrap.sh");
    write_script(
        &wrapper,
        &format!(
            "#!/bin/sh\nn=$(cat {d}/total 2>/dev/null || echo 0)\nn=$((n + 1))\necho $n > {d}/total\n\
             echo $CULPRIT_COMMIT >> {d}/trace\n\
             if [ \"$n\" = \"$(cat {d}/kill-at 2>/dev/null)\" ]; then {on_kill} kill -9 $(cat {d}/pid); sleep 30; fi\n\
             exec ./bench\n",
            d = dir.display()
        ),
    );
    format!("sh {}", wrapper.display())
}

/// A running `culprit serve`, killed when dropped, so that a failing test leaves no server behind.
pub struct Server {
    child: std::process::Child,
    /// The address it listens on, as its start line printed it: `127.0.0.1:PORT`.
    pub addr: String,
    /// Its stderr lines after the start line, read by a thread so that the pipe never fills.
    lines: std::sync::mpsc::Receiver<String>,
}

/// Starts `culprit --db DB serve --listen 127.0.0.1:0` in `cwd` and waits for the line naming the address it bound.
pub fn serve(db: &str, cwd: &Path) -> Server {
    serve_with(db, cwd, &[])
}

/// [`serve`] with the variables `env` set for the server.
pub fn serve_with(db: &str, cwd: &Path, env: &[(&str, &str)]) -> Server {
    use std::io::BufRead;
    let mut child = Command::new(env!("CARGO_BIN_EXE_culprit"))
        .envs(env.iter().copied())
        .arg("--db")
        .arg(db)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("culprit serve starts");
    let stderr = child.stderr.take().expect("stderr is piped");
    let (sender, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    let mut server = Server { child, addr: String::new(), lines };
    let mut before = Vec::new();
    // The line comes as soon as the store is open and the port bound; if the server exits instead, its stderr
    // closes and the wait ends at once with what it said.
    while let Ok(line) = server.lines.recv_timeout(std::time::Duration::from_secs(60)) {
        if let Some((_, url)) = line.strip_prefix("culprit: serving ").and_then(|rest| rest.rsplit_once(" on http://"))
        {
            server.addr = url.trim_end_matches('/').to_string();
            return server;
        }
        before.push(line);
    }
    panic!("culprit serve printed no address: {}", before.join("\n"));
}

/// An HTTP response: the status code, the headers (lower-case names) and the body.
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// `GET path` from the server at `addr` over HTTP/1.1 with plain std sockets; the server closes the connection after
/// the response.
pub fn get(addr: &str, path: &str) -> Response {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).expect("connect to culprit serve");
    stream.set_read_timeout(Some(std::time::Duration::from_secs(120))).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap_or_else(|e| panic!("GET {path}: {e}"));
    let text = String::from_utf8(raw).unwrap_or_else(|e| panic!("GET {path}: not UTF-8: {e}"));
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or_else(|| panic!("GET {path}: no header end in {text:?}"));
    let mut head_lines = head.lines();
    let status_line = head_lines.next().unwrap_or_default();
    let status =
        status_line.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("{status_line:?}"));
    let headers = head_lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let response = Response { status, headers, body: body.to_string() };
    // The pages are whole strings, sent with their length, never in chunks.
    assert_eq!(response.header("content-length"), Some(response.body.len().to_string().as_str()), "GET {path}");
    response
}

impl Server {
    /// [`get`] from this server.
    pub fn get(&self, path: &str) -> Response {
        get(&self.addr, path)
    }

    /// Stops the server as Ctrl-C does and returns how it exited, within `timeout`.
    pub fn interrupt(mut self, timeout: std::time::Duration) -> (std::process::ExitStatus, Vec<String>) {
        let status = Command::new("kill").args(["-INT", &self.child.id().to_string()]).status().unwrap();
        assert!(status.success());
        let started = std::time::Instant::now();
        loop {
            if let Some(exit) = self.child.try_wait().unwrap() {
                // Its stderr is closed now, so this ends once the reader has passed on every line.
                let lines = self.lines.iter().collect();
                return (exit, lines);
            }
            assert!(started.elapsed() < timeout, "culprit serve still runs {timeout:?} after Ctrl-C");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Text as the dashboard escapes it into its pages.
pub fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

/// Writes `dir/wrap.sh`, a `--run` command's wrapper of `./bench` whose `nth` run (counted in `dir/total`, from 1)
/// touches `dir/holding` and waits until the test writes `dir/go`, or 30 seconds when a failed test never does: a
/// bisect held in the middle of a run, for a test to start another beside it. Returns the wrapper's path.
pub fn holding_wrapper(dir: &Path, nth: usize) -> PathBuf {
    let wrapper = dir.join("wrap.sh");
    write_script(
        &wrapper,
        &format!(
            "#!/bin/sh\nn=$(cat {d}/total 2>/dev/null || echo 0)\nn=$((n + 1))\necho $n > {d}/total\n\
             if [ $n = {nth} ]; then touch {d}/holding; i=0; while [ ! -e {d}/go ] && [ $i -lt 600 ]; do sleep 0.05; \
             i=$((i + 1)); done; fi\nexec ./bench\n",
            d = dir.display()
        ),
    );
    wrapper
}

/// The machine the `timed` binary's tests share: a test whose verdict comes from measured time holds it alone
/// (`quiet_machine`), every other test of that binary holds it shared (`shared_machine`).
static MACHINE: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Holds the machine alone for a test whose verdict comes from measured time (a real bisect of a slowdown
/// repository), so that no other test of its binary runs beside it. Tests of a binary run in parallel threads, and
/// on the two CPUs of a CI machine (often siblings of one core) a second test's benchmark beside this one's shifted
/// its levels by several percent from one visit of a commit to the next: a series' share was read as 81% where it is
/// half. A test that failed while holding the lock still releases it (the poison is ignored).
pub fn quiet_machine() -> std::sync::RwLockWriteGuard<'static, ()> {
    MACHINE.write().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Holds the machine shared, for a test of the `timed` binary that measures nothing itself: it runs beside other
/// such tests but never beside one holding `quiet_machine`. A thread holding this must not call `quiet_machine`.
pub fn shared_machine() -> std::sync::RwLockReadGuard<'static, ()> {
    MACHINE.read().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Stores 3 successful runs of a small `command` job at label `ok` and 3 failed runs of it at label `failed` in the
/// store `db`, the job file written to `dir/job.yaml`: a store whose one side has nothing to compare.
pub fn store_ok_and_failed_runs(dir: &Path, db: &Path, ok: &str, failed: &str) {
    let job = "suite: qa\ntestcase: qa\ncommand:\n  cmd: \"test -z \\\"$QA_FAIL\\\" && echo 'ops/s: 42'\"\n  \
               capture:\n    ops: 'ops/s: ([0-9.]+)'\n";
    std::fs::write(dir.join("job.yaml"), job).unwrap();
    for (label, fail) in [(ok, ""), (failed, "1")] {
        let out = Command::new(env!("CARGO_BIN_EXE_culprit"))
            .current_dir(dir)
            .env("QA_FAIL", fail)
            .arg("--db")
            .arg(db)
            .args(["run", "job.yaml", "-n", "3", "--label", label, "--monitors", "none"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(if fail.is_empty() { 0 } else { 1 }), "{out:?}");
    }
}

/// Writes `body` to `dir/name` and returns its path.
pub fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path
}

/// The standard error of a command that must have failed with culprit's error exit.
pub fn refused(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{}\n{err}", String::from_utf8_lossy(&out.stdout));
    err
}

/// Every file below `dir`, at any depth (a result root's `matrix.json`, a scratch directory's leftovers).
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// Stores `runs` of a `command` job under the labels `a` and `b` (so many of each) in `dir/q.db`, the job printing
/// `ops: N` with N read in turn from `values` (a's, then b's); no monitors.
pub fn store_ops_runs(dir: &Path, values: &[f64], runs: [usize; 2]) {
    let lines: Vec<String> = values.iter().map(f64::to_string).collect();
    write(dir, "vals", &(lines.join("\n") + "\n"));
    let job = "suite: x\ncommand:\n  cmd: 'n=$(cat n 2>/dev/null || echo 0); echo $((n + 1)) > n; \
               echo \"ops: $(sed -n \"$((n + 1))p\" vals)\"'\n  capture:\n    ops: 'ops: ([0-9.]+)'\n";
    write(dir, "ops.yaml", job);
    for (label, n) in ["a", "b"].into_iter().zip(runs) {
        let n = n.to_string();
        stdout(&culprit("q.db", &["run", "ops.yaml", "-n", &n, "--label", label, "--monitors", "none"], dir));
    }
}

/// The revision's `matrix.json` (each run's values by metric) of the one job of an lkp result root `root`: the one
/// beside an `avg.json`, since each run's own directory holds a matrix of its samples.
pub fn revision_matrix(root: &Path) -> serde_json::Value {
    let path = files_under(root)
        .into_iter()
        .find(|p| p.ends_with("matrix.json") && p.with_file_name("avg.json").exists())
        .unwrap_or_else(|| panic!("no matrix.json under {}", root.display()));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// The ids and command lines of live processes that mention `needle` (a server a run started names its scratch
/// directory in its options); a zombie, whose command line is empty, mentions nothing.
pub fn pids_mentioning(needle: &str) -> Vec<(String, String)> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|pid| pid.bytes().all(|b| b.is_ascii_digit()))
        .filter_map(|pid| Some((pid.clone(), std::fs::read(format!("/proc/{pid}/cmdline")).ok()?)))
        .map(|(pid, raw)| (pid, String::from_utf8_lossy(&raw).replace('\0', " ")))
        .filter(|(_, line)| line.contains(needle))
        .collect()
}

/// The command lines of live processes that mention `needle`, as [`pids_mentioning`] finds them.
pub fn processes_mentioning(needle: &str) -> Vec<String> {
    pids_mentioning(needle).into_iter().map(|(_, line)| line).collect()
}

/// Stores `runs` runs of `job` at each of `shas` in `repo`, each built with `make -s` in the checkout, as a branch's
/// history of results for `track` to read; the checkout is left on `main`, without the built benchmark, so that
/// what runs next builds its own.
pub fn run_at_every_commit(db: &Path, repo: &Path, shas: &[String], job: &Path, runs: usize) {
    let git = |args: &[&str]| assert!(Command::new("git").arg("-C").arg(repo).args(args).status().unwrap().success());
    let runs = runs.to_string();
    for sha in shas {
        git(&["checkout", "-q", sha]);
        assert!(Command::new("make").arg("-s").current_dir(repo).status().unwrap().success());
        let run = ["run", job.to_str().unwrap(), "-n", &runs, "--commit", sha, "--monitors", "none"];
        stdout(&culprit(db, &run, repo));
    }
    git(&["checkout", "-q", "main"]);
    let _ = std::fs::remove_file(repo.join("bench"));
}

/// `culprit run` into store `db` (a SQLite file or a PostgreSQL URL) of a command job whose program writes NUL bytes
/// and bytes that are not UTF-8 to stderr and fails, under `label` (unique in a shared store): the failed run is
/// stored, its reason shows each NUL as U+2400 wherever it is printed, and its stderr keeps the NULs.
pub fn a_run_writing_nul_bytes_is_stored_with_a_readable_reason(db: &str, cwd: &Path, label: &str) {
    // YAML's double quotes read `\\` as one backslash, so the shell's printf gets `\0`, `\377` and `\376`.
    let command = r#"printf 'before\\0after\\377\\376 tail\\0\\n' >&2; exit 3"#;
    let job = write(cwd, "garbage.yaml", &format!("suite: command\ncommand:\n  cmd: \"{command}\"\n"));
    let shown = "exit status 3: before\u{2400}after\u{FFFD}\u{FFFD} tail\u{2400}";
    let run = culprit(db, &["run", job.to_str().unwrap(), "-n", "1", "--label", label, "--monitors", "none"], cwd);
    let said = String::from_utf8_lossy(&run.stderr).into_owned();
    assert_eq!(run.status.code(), Some(1), "{said}");
    assert!(said.contains(shown) && !said.contains('\0'), "{said:?}");

    let failures = culprit(db, &["results", "--failures", "--json"], cwd);
    assert!(failures.status.success(), "{}", String::from_utf8_lossy(&failures.stderr));
    let listed: serde_json::Value = serde_json::from_slice(&failures.stdout).unwrap();
    let ours = listed.as_array().unwrap().iter().find(|r| r["revision"]["name"] == label).cloned();
    let ours = ours.unwrap_or_else(|| panic!("no failed run of {label}: {listed}"));
    assert!(ours["failure_reason"].as_str().unwrap().ends_with(shown), "{ours}");

    let id = ours["id"].to_string();
    let json = culprit(db, &["results", "--run", &id, "--json"], cwd);
    let record: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert!(record["outcome"]["reason"].as_str().unwrap().ends_with(shown), "{record}");
    assert!(record["stderr"].as_str().unwrap().contains("before\0after\u{FFFD}\u{FFFD} tail\0\n"), "{record}");
    let text = culprit(db, &["results", "--run", &id], cwd);
    let text = String::from_utf8_lossy(&text.stdout).into_owned();
    assert!(text.contains("outcome: failed: ") && text.contains(shown), "{text}");
    let stderr = "stderr:\nbefore\u{2400}after\u{FFFD}\u{FFFD} tail\u{2400}\n";
    assert!(text.contains(stderr) && !text.contains('\0'), "{text:?}");
}

/// One commit of a [`score_repo`]: the level its score sits at, its `build.sh` (none: the repository has none), and
/// its subject.
pub struct ScoreCommit {
    pub level: f64,
    pub build: Option<&'static str>,
    pub subject: String,
}

/// A repository whose commits print a score (`score.sh`): 100, plus each commit's level, plus run-to-run noise of
/// about 0.75 from a fixed sequence, so a bisect sees the same numbers on every machine. Returns the repository and
/// its commit SHAs, oldest first.
pub fn score_repo(dir: &Path, commits: &[ScoreCommit]) -> (PathBuf, Vec<String>) {
    // A bisect chooses its commits by measured costs (a run's seconds against a build's): the sleep makes a run's
    // cost the same on a loaded machine as on a quiet one, so the path, and with it the numbers each commit draws,
    // is too.
    let noise = |counter: &Path| {
        format!(
            "sleep 0.2\nn=$(cat {counter} 2>/dev/null || echo 0)\necho $((n + 1)) > {counter}\n\
             awk -v n=\"$n\" -v level=\"$(cat level)\" 'BEGIN {{ split(\"0.8 -1.1 0.3 -0.4 1.2 -0.9 0.1 -0.2 0.6 -0.5 \
             1.0 -1.3 -0.7 0.9 -0.1 0.4\", z, \" \"); printf \"score: %.4f\\n\", 100 + level + z[n % 16 + 1] }}'\n",
            counter = counter.display()
        )
    };
    score_repo_with(dir, commits, noise)
}

/// [`score_repo`] with its `score.sh` written by `script`, given the run counter's path: a file outside the
/// repository, so that every worktree draws from one noise sequence; the script reads the commit's level from
/// `level`.
pub fn score_repo_with(
    dir: &Path,
    commits: &[ScoreCommit],
    script: impl Fn(&Path) -> String,
) -> (PathBuf, Vec<String>) {
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["config", "user.email", "robot@culprit.invalid"]);
    git(&repo, &["config", "user.name", "Culprit Test"]);
    std::fs::write(repo.join("score.sh"), script(&dir.join("runs"))).unwrap();
    for commit in commits {
        std::fs::write(repo.join("level"), format!("{}\n", commit.level)).unwrap();
        git(&repo, &["add", "score.sh", "level"]);
        if let Some(build) = commit.build {
            std::fs::write(repo.join("build.sh"), build).unwrap();
            git(&repo, &["add", "build.sh"]);
        }
        git(&repo, &["commit", "-q", "--allow-empty", "-m", &commit.subject]);
    }
    let log = git(&repo, &["log", "--reverse", "--format=%H"]);
    (repo, log.lines().map(str::to_string).collect())
}

/// The job that runs a [`score_repo`] commit's `score.sh` and captures its score, written into `dir`.
pub fn score_job(dir: &Path) -> PathBuf {
    let job = dir.join("score.yaml");
    let yaml = "suite: command\ntestcase: score\ncommand:\n  cmd: sh score.sh\n  capture.score: 'score: ([0-9.]+)'\n";
    std::fs::write(&job, yaml).unwrap();
    job
}
