//! End-to-end tests of the oltp program (lkp's `oltp`: sysbench's OLTP tests) through the real binary: lkp's own job
//! file, shortened, run for real against the throwaway MariaDB server Culprit starts per run for its `mysql-setup`
//! (as lkp starts MySQL), and against a throwaway PostgreSQL server when told `db_driver: pgsql`; the metrics checked
//! against sysbench's own arithmetic, and no server left afterwards, not even after a `kill -9` of culprit.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

fn lkp_job(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../culprit-job/tests/data/lkp-jobs").join(name)
}

fn stored_runs(db: &Path, dir: &Path) -> serde_json::Value {
    let out = common::culprit(db, &["results", "--json"], dir);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("results --json is JSON")
}

/// A directory for a test, which a server run as `postgres` or `mysql` under root can reach.
fn reachable_tempdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// lkp's oltp job on MariaDB (its `mysql-setup:`), sysbench measuring for `runtime`, on small tables.
fn mariadb_job(runtime: &str) -> String {
    format!("suite: oltp\nruntime: {runtime}\nmysql-setup:\nsetup-oltp:\n  table_size: 100\noltp:\n")
}

/// Whether the run of culprit `first`, with scratch root `scratch`, has the record of its measured step, which is
/// written just after sysbench starts and which the next run reaps by (a kill between the two would leave nothing to
/// reap). A first run that ended (its setup failed) will never write it: the test fails at once, saying why.
fn measured_step_recorded(first: &mut std::process::Child, scratch: &Path) -> bool {
    if first.try_wait().unwrap().is_some() {
        let out = first.stdout.take().map(std::io::read_to_string).transpose().unwrap();
        let err = first.stderr.take().map(std::io::read_to_string).transpose().unwrap();
        panic!("the first run ended before it was killed:\n{out:?}\n{err:?}");
    }
    let record = std::fs::read_to_string(scratch.join(format!("run-{}.step", first.id()))).unwrap_or_default();
    record.contains("\nstep run\n")
}

/// lkp's jobs/oltp.yaml as it is, `mysql-setup:` included, but for 2 s on 2 threads and small tables, with `oltp`'s
/// hash replaced by `oltp_hash` (lkp's is empty).
fn shortened_lkp_job(oltp_hash: &str) -> String {
    let lkp = std::fs::read_to_string(lkp_job("oltp.yaml")).unwrap();
    let job = lkp.replace("runtime: 600s", "runtime: 2s").replace("nr_threads: 100%", "nr_threads: 2");
    let job = job.replace("table_size: 1000000", "table_size: 1000");
    assert_ne!(job, lkp, "the shortening found lkp's values");
    assert!(job.contains("\nmysql-setup:\n") && job.ends_with("\noltp:\n"), "lkp's job changed: {job}");
    format!("{job}{oltp_hash}")
}

/// Checks the two read-only runs of a 2 s job that lkp's matrix.json under `root` holds against sysbench's own
/// arithmetic.
fn check_two_read_only_runs(root: &Path) {
    let matrix = common::revision_matrix(root);
    let series = |key: &str| -> Vec<f64> {
        let values = matrix[key].as_array().unwrap_or_else(|| panic!("{key} missing from {matrix}"));
        values.iter().map(|v| v.as_f64().unwrap()).collect()
    };
    let (transactions, rates) = (series("oltp.transactions"), series("oltp.transactions/s"));
    assert_eq!(transactions.len(), 2, "{matrix}");
    for (run, (&count, &rate)) in transactions.iter().zip(&rates).enumerate() {
        assert!(count >= 1.0 && rate > 0.0, "run {run}: {matrix}");
        // sysbench's own arithmetic: a read-only transaction is 10 point selects and 4 range selects between BEGIN
        // and COMMIT, and the rate is the count over the 2 s run.
        assert_eq!(series("oltp.read")[run], 14.0 * count, "run {run}: {matrix}");
        assert_eq!(series("oltp.other")[run], 2.0 * count, "run {run}: {matrix}");
        assert_eq!(series("oltp.write")[run], 0.0, "run {run}: {matrix}");
        assert!((count / 2.0 / rate - 1.0).abs() < 0.1, "run {run}: {count} in 2 s vs {rate}/s");
        assert!(series("oltp.latency_avg_ms")[run] > 0.0, "run {run}: {matrix}");
    }
}

/// Fails the test if anything is left in the scratch directory (every run's server stopped, its data removed).
fn check_scratch_empty(scratch: &Path) {
    let leftovers: Vec<_> =
        std::fs::read_dir(scratch).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn lkps_oltp_job_runs_sysbench_against_a_throwaway_mariadb_as_lkp_does_and_leaves_no_server() {
    let dir = reachable_tempdir();
    let (db, scratch, root) = (dir.path().join("r.db"), dir.path().join("scratch"), dir.path().join("lkp-root"));
    std::fs::write(dir.path().join("oltp.yaml"), shortened_lkp_job("")).unwrap();
    let (scratch_arg, root_arg) = (scratch.to_str().unwrap(), root.to_str().unwrap());
    let args = ["run", "oltp.yaml", "-n", "2", "--label", "x", "--scratch", scratch_arg, "--result-root", root_arg];
    let running = common::spawn_culprit(&db, &args, dir.path());
    // The server that answers is MariaDB's, made in the run's scratch directory: lkp's mysql-setup is applied.
    let mut seen = Vec::new();
    common::wait_until("no mariadbd ran in the scratch directory", || {
        seen = common::pids_mentioning(scratch_arg);
        seen.iter().any(|(_, line)| line.contains("mariadbd") && line.contains("--datadir="))
    });
    let out = running.wait_with_output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{said}");
    assert!(!seen.iter().any(|(_, line)| line.contains("postgres")), "{seen:?}");
    // The run does not call mysql-setup a setting it leaves undone, as it did when oltp ran on PostgreSQL only.
    assert!(!said.contains("mysql-setup") && !said.contains("MySQL"), "{said}");
    let results = stored_runs(&db, dir.path());
    assert_eq!(results[0]["ok_runs"], 2, "{results}");
    check_two_read_only_runs(&root);
    check_scratch_empty(&scratch);
    assert_eq!(common::pids_mentioning(scratch_arg), Vec::new());
}

#[test]
fn lkps_oltp_job_told_pgsql_runs_sysbench_against_a_throwaway_postgresql_and_leaves_no_server() {
    let dir = reachable_tempdir();
    let (db, scratch, root) = (dir.path().join("r.db"), dir.path().join("scratch"), dir.path().join("lkp-root"));
    // The job's own db_driver wins over the one lkp's mysql-setup implies.
    std::fs::write(dir.path().join("oltp.yaml"), shortened_lkp_job("  db_driver: pgsql\n")).unwrap();
    let (scratch_arg, root_arg) = (scratch.to_str().unwrap(), root.to_str().unwrap());
    let args = ["run", "oltp.yaml", "-n", "2", "--label", "x", "--scratch", scratch_arg, "--result-root", root_arg];
    let out = common::culprit(&db, &args, dir.path());
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{said}");
    // lkp's mysql-setup is then recorded, not applied, and the run says so.
    let note = "mysql-setup are recorded with the runs but not applied: Culprit prepares no disk, makes and mounts no \
                filesystem and starts no MySQL server (only oltp does, a throwaway MariaDB, unless told db_driver: \
                pgsql)";
    assert!(said.contains(note), "{said}");
    let results = stored_runs(&db, dir.path());
    assert_eq!(results[0]["ok_runs"], 2, "{results}");
    check_two_read_only_runs(&root);
    check_scratch_empty(&scratch);
}

#[test]
fn an_oltp_run_on_mariadb_whose_culprit_was_killed_leaves_no_server_after_the_next_run() {
    // mariadbd leaves the setup step's process group (setsid), so only the run's step token, which it carries in its
    // environment, lets the next culprit kill what a culprit killed with kill -9 left running; unlike PostgreSQL's
    // postmaster, it would not even stop once its data directory is gone.
    let dir = reachable_tempdir();
    let scratch = dir.path().join("scratch");
    let scratch_arg = scratch.to_str().unwrap();
    common::write(dir.path(), "o.yaml", &mariadb_job("60s"));
    let args = ["run", "o.yaml", "-n", "1", "--label", "x", "--monitors", "none", "--scratch", scratch_arg];
    let mut first = common::spawn_culprit("o.db", &args, dir.path());
    let lines = || common::pids_mentioning(scratch_arg).into_iter().map(|(_, line)| line).collect::<Vec<_>>();
    common::wait_until("sysbench never started its measured run", || {
        measured_step_recorded(&mut first, &scratch)
            && lines().iter().any(|line| line.starts_with("sysbench") && line.ends_with("run "))
    });
    first.kill().unwrap();
    first.wait().unwrap();
    let left = lines();
    assert!(left.iter().any(|line| line.contains("mariadbd")), "the test needs the server left running: {left:?}");
    common::write(dir.path(), "o.yaml", &mariadb_job("1s"));
    let next = common::culprit("o.db", &args, dir.path());
    let out = format!("{}{}", common::stdout(&next), String::from_utf8_lossy(&next.stderr));
    assert!(out.contains("(1 ok, 0 failed)"), "{out}");
    let left = common::pids_mentioning(scratch_arg);
    // What a failing run left is killed before the test fails, so that it loads no later test.
    for (pid, _) in &left {
        let _ = std::process::Command::new("kill").args(["-9", pid]).status();
    }
    assert!(left.is_empty(), "left running after the next run: {left:?}\n{out}");
}

#[test]
fn a_mariadb_on_a_port_keeps_its_socket_in_the_scratch_directory_so_a_server_killed_with_sigkill_leaves_none() {
    // A scratch path too long for a socket address puts MariaDB on a port, and it makes a socket all the same: that
    // was /tmp/culprit-mariadb-<port>.sock, which a server killed with SIGKILL (as the next culprit's reap does when
    // SIGTERM is not enough after a kill -9 of culprit, or the OOM killer) left there for good.
    let dir = reachable_tempdir();
    let scratch = dir.path().join("s".repeat(90));
    let scratch_arg = scratch.to_str().unwrap();
    common::write(dir.path(), "o.yaml", &mariadb_job("60s"));
    let args = ["run", "o.yaml", "-n", "1", "--label", "x", "--monitors", "none", "--scratch", scratch_arg];
    let mut first = common::spawn_culprit("o.db", &args, dir.path());
    let mut server = None;
    common::wait_until("sysbench never started its measured run on a MariaDB on a port", || {
        let recorded = measured_step_recorded(&mut first, &scratch);
        let running = common::pids_mentioning(scratch_arg);
        server = running.into_iter().find(|(_, line)| line.contains("mariadbd") && line.contains(" --port="));
        // sysbench's command line names the port, not the scratch directory; the record of its step names it.
        server.is_some() && recorded
    });
    let (pid, line) = server.unwrap();
    let argument = |name: &str| line.split(' ').find_map(|word| word.strip_prefix(name)).unwrap().to_string();
    // The socket's name is the server's to resolve, from the directory it runs in.
    let socket = std::fs::read_link(format!("/proc/{pid}/cwd")).unwrap().join(argument("--socket="));
    let in_temp = std::env::temp_dir().join(format!("culprit-mariadb-{}.sock", argument("--port=")));
    assert!(socket.exists(), "{} is not the socket of {line}", socket.display());
    assert!(socket.starts_with(&scratch), "{} is outside the scratch directory", socket.display());
    first.kill().unwrap();
    first.wait().unwrap();
    assert!(std::process::Command::new("kill").args(["-9", &pid]).status().unwrap().success());
    common::write(dir.path(), "o.yaml", &mariadb_job("1s"));
    let next = common::culprit("o.db", &args, dir.path());
    let out = format!("{}{}", common::stdout(&next), String::from_utf8_lossy(&next.stderr));
    assert!(out.contains("(1 ok, 0 failed)"), "{out}");
    // The next culprit removed the killed run's scratch directory, and the socket with it.
    assert!(!socket.exists() && !in_temp.exists(), "{} or {} is left", socket.display(), in_temp.display());
    check_scratch_empty(&scratch);
    assert_eq!(common::pids_mentioning(scratch_arg), Vec::new());
}
