//! End-to-end tests of the iperf program through the real binary: iperf3 over the loopback device, TCP and UDP, one
//! session and several at once, its rates stored under lkp's names, and no server left behind; a server that
//! cannot bind its port stops the run with iperf3's own words instead of hanging it.

use crate::common;

use std::path::Path;

/// The process ids of running iperf3 servers bound to 127.0.0.1 on `port`.
fn servers_on(port: u16) -> Vec<String> {
    let needle = format!("iperf3 -s -B 127.0.0.1 -p {port} ");
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|raw| String::from_utf8_lossy(&raw).replace('\0', " "))
        .filter(|line| line.starts_with(&needle))
        .collect()
}

fn run(dir: &Path, job: &str, label: &str) -> (bool, String) {
    std::fs::write(dir.join("iperf.yaml"), job).unwrap();
    let out = common::culprit(dir.join("r.db"), &["run", "iperf.yaml", "-n", "1", "--label", label], dir);
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), said)
}

/// The stored runs of `label`, as `results --json` lists them and `results --run ID --json` holds each.
fn stored_runs(dir: &Path, label: &str) -> Vec<serde_json::Value> {
    let db = dir.join("r.db");
    let out = common::culprit(&db, &["results", "--json"], dir);
    let groups: serde_json::Value = serde_json::from_slice(&out.stdout).expect("results --json");
    let mut runs = Vec::new();
    for group in groups.as_array().unwrap().iter().filter(|g| g["revision"]["name"] == label) {
        for id in group["run_ids"].as_array().unwrap() {
            let out = common::culprit(&db, &["results", "--run", &id.to_string(), "--json"], dir);
            runs.push(serde_json::from_slice(&out.stdout).expect("results --run --json"));
        }
    }
    runs
}

/// The stored value of `metric` in the one run of the atomic job named `job`.
fn metric(runs: &[serde_json::Value], job: &str, metric: &str) -> f64 {
    let run = runs.iter().find(|run| run["job"] == job).unwrap_or_else(|| panic!("no run of {job}: {runs:?}"));
    run["metrics"][metric].as_f64().unwrap_or_else(|| panic!("{job} has no {metric}: {}", run["metrics"]))
}

#[test]
fn tcp_and_udp_over_loopback_store_lkps_rates_and_leave_no_server() {
    let dir = tempfile::tempdir().unwrap();
    // A port of the job's, free now, so that the test can look for servers left on it (and the next one).
    let port = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap().local_addr().unwrap().port();
    let job = "suite: iperf\nruntime: 1s\niperf:\n  protocol: [tcp, udp]\n  sessions: [1, 2]\n  bitrate: 0\n";
    let job = format!("{job}  port: {port}\n");
    let (ok, said) = run(dir.path(), &job, "a");
    assert!(ok, "{said}");
    let runs = stored_runs(dir.path(), "a");
    assert_eq!(runs.len(), 4, "{said}");
    for sessions in ["1", "2"] {
        let tcp = format!("iperf-0-{port}-tcp-1s-{sessions}");
        let sent = metric(&runs, &tcp, "iperf.tcp.sender.bps");
        let received = metric(&runs, &tcp, "iperf.tcp.receiver.bps");
        // Loopback moves gigabits a second; what was received was sent, and TCP loses nothing of it.
        assert!(sent > 1e8 && received > 1e8, "{tcp}: {sent} sent, {received} received\n{said}");
        assert!(received <= sent * 1.01 && received >= sent * 0.9, "{tcp}: {sent} sent, {received} received");
        let udp = format!("iperf-0-{port}-udp-1s-{sessions}");
        assert!(metric(&runs, &udp, "iperf.udp.bps") > 1e8, "{udp}\n{said}");
    }
    for port in [port, port + 1] {
        assert_eq!(servers_on(port), Vec::<String>::new(), "port {port}");
    }
}

#[test]
fn lkps_iperf_job_runs_on_one_machine_playing_both_roles_and_says_what_its_udp_measures() {
    // lkp's jobs/iperf.yaml: `cluster: cs-localhost` with `if role server: {iperf-server:}` and `if role client:
    // {iperf: {protocol: [tcp, udp]}}`, refused as unknown keys before; shortened to 1 s.
    let dir = tempfile::tempdir().unwrap();
    let lkp_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../culprit-job/tests/data/lkp-jobs/iperf.yaml");
    let lkp = std::fs::read_to_string(lkp_path).unwrap();
    let job = lkp.replace("runtime: 300s", "runtime: 1s");
    assert_ne!(job, lkp);
    let (ok, said) = run(dir.path(), &job, "l");
    assert!(ok, "{said}");
    let runs = stored_runs(dir.path(), "l");
    let names: Vec<&str> = runs.iter().map(|run| run["job"].as_str().unwrap()).collect();
    assert_eq!(names, ["iperf-cs-localhost-tcp-1s", "iperf-cs-localhost-udp-1s"], "as lkp's split-job names them");
    assert!(metric(&runs, "iperf-cs-localhost-tcp-1s", "iperf.tcp.sender.bps") > 1e8, "{said}");
    // UDP without a bitrate is iperf3's 1 Mbit/s target, as on lkp's robot, and the run says so.
    let udp = metric(&runs, "iperf-cs-localhost-udp-1s", "iperf.udp.bps");
    assert!((udp / 1.048576e6 - 1.0).abs() < 0.05, "{udp}");
    assert!(said.contains("add 'bitrate: 0' to the iperf hash"), "{said}");
    assert!(said.contains("starts no iperf3 daemon"), "{said}");
}

#[test]
fn a_port_another_program_holds_fails_the_run_with_iperfs_words() {
    let dir = tempfile::tempdir().unwrap();
    let holder = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = holder.local_addr().unwrap().port();
    let job = format!("suite: iperf\nruntime: 1s\niperf:\n  port: {port}\n");
    let begun = std::time::Instant::now();
    let (ok, said) = run(dir.path(), &job, "b");
    assert!(!ok || said.contains("0 ok, 1 failed"), "{said}");
    // The run's reason names the run instead of quoting its script, and gives iperf3's own words.
    let failed = said.lines().find(|l| l.contains("failed: '")).unwrap_or_else(|| panic!("{said}"));
    assert!(failed.contains(&format!("'iperf3 tcp over 127.0.0.1, 1 session from port {port}, 1 s'")), "{failed}");
    assert!(!failed.contains("servers="), "{failed}");
    let reason = said.lines().find(|l| l.contains(&format!("iperf3 server on port {port} exited: "))).unwrap_or("");
    assert!(reason.contains("Address already in use"), "iperf3's own reason: {said}");
    assert!(begun.elapsed() < std::time::Duration::from_secs(60), "took {:?}", begun.elapsed());
    drop(holder);
}
