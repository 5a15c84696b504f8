//! End-to-end regressions of QA pass 45b, sections 11 and 12 (and QA 45, 8b): one vocabulary in every command's JSON
//! (`machine`, `job`, `change`), `bisect list --json`, the session that bisected a change named by `track`, and the
//! display findings: the job file's absolute path, an unfinished session's dashboard page, and the `--machine` of a
//! farm report's `culprit compare` line.

use crate::common;

use crate::common::{culprit, stdout};
use std::path::Path;
use std::process::Command;

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: not JSON:\n{text}"))
}

/// The machine's name as culprit stores it: `$CULPRIT_MACHINE` when the test runs under one, else the host name.
fn this_machine() -> String {
    let here = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap().trim().to_string();
    std::env::var("CULPRIT_MACHINE").ok().filter(|name| !name.is_empty()).unwrap_or(here)
}

#[test]
fn qa45b_11_json_names_the_machine_job_change_and_the_session_that_bisected_a_change() {
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    // A 60% step, `--min-change 20`, and the change read by where it is: four runs a commit measured one commit after
    // another can read identical builds 10% apart on a loaded host, and such a change point would come first.
    let (repo, shas) = common::make_slowdown_repo(dir.path(), 5, 3, 0, 60);
    let job = common::write(dir.path(), "job.yaml", "suite: qa45b\ncommand:\n  cmd: ./bench\n");
    let db = dir.path().join("t.db");
    common::run_at_every_commit(&db, &repo, &shas, &job, 4);
    let here = this_machine();
    let track = ["track", "--metric", "command.user_time", "--min-change", "20", "--json"];
    let step = |tracked: &serde_json::Value| -> serde_json::Value {
        let changes = tracked["series"][0]["change_points"].as_array().unwrap_or_else(|| panic!("{tracked:#}"));
        let found = changes.iter().find(|c| c["after"] == shas[2].as_str()).cloned();
        found.unwrap_or_else(|| panic!("no change point after {}: {tracked:#}", shas[2]))
    };
    let tracked = json(&stdout(&culprit(&db, &track, &repo)));
    let change = &step(&tracked);
    assert_eq!(change["verdict"], "regression", "{tracked:#}");
    assert!(change["bisect_session"].is_null(), "nothing bisected it yet: {tracked:#}");
    let (good, bad) = (change["before"].as_str().unwrap().to_string(), change["after"].as_str().unwrap().to_string());

    // A bisect of the change, from the repository with the job file named relative to it.
    let bisect = [
        "bisect", "--good", &good, "--bad", &bad, "--job", "../job.yaml", "--build", "make -s", "--metric",
        "command.user_time", "--min-change", "10",
    ];
    let out = culprit(&db, &bisect, &repo);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // `track --json` names that session (it said null), and `change` is the percentage, as in compare's rows.
    let tracked = json(&stdout(&culprit(&db, &track, &repo)));
    let change = &step(&tracked);
    assert_eq!(change["bisect_session"], 1, "{tracked:#}");
    assert_eq!(change["absolute"], false, "{tracked:#}");
    assert!(change["change"].as_f64().is_some_and(|pct| pct > 15.0), "a 60% step: {tracked:#}");
    assert!(change["difference"].as_f64().is_some_and(|d| d > 0.0 && d < 1.0), "seconds: {tracked:#}");
    assert!(change.get("change_pct").is_none(), "{tracked:#}");
    assert_eq!(tracked["series"][0]["machine"], here.as_str(), "{tracked:#}");

    // `track --bisect` says the change is bisected already, and by which session, rather than nothing.
    let again = ["track", "--metric", "command.user_time", "--min-change", "20", "--bisect", "--build", "make -s"];
    let text = stdout(&culprit(&db, &again, &repo));
    assert!(text.contains("is bisected already, by session 1 (`culprit bisect log 1`"), "{text}");
    assert!(text.contains("bisect session 1 (`culprit bisect log 1`)"), "{text}");

    // `bisect list --json`: the listing's columns, full SHAs, the machine by name; still one session.
    let listed = json(&stdout(&culprit(&db, &["bisect", "list", "--json"], &repo)));
    let sessions = listed.as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{listed:#}");
    assert_eq!(sessions[0]["id"], 1, "{listed:#}");
    assert_eq!((sessions[0]["good"].as_str(), sessions[0]["bad"].as_str()), (Some(&*good), Some(&*bad)));
    assert_eq!(sessions[0]["machine"], here.as_str(), "{listed:#}");
    assert_eq!(sessions[0]["metric"], "command.user_time", "{listed:#}");
    assert_eq!(sessions[0]["status"], "found", "{listed:#}");
    let other = json(&stdout(&culprit(&db, &["bisect", "list", "--json", "--machine", "no-such-*"], &repo)));
    assert_eq!(other, serde_json::json!([]));

    // `results --json` and `results --run ID --json` say `job` and `machine` (a name), as track and compare do.
    let results = json(&stdout(&culprit(&db, &["results", "--json"], &repo)));
    for group in results.as_array().unwrap() {
        assert_eq!(group["machine"], here.as_str(), "{group:#}");
        assert!(group["job"].as_str().is_some_and(|name| name.starts_with("job-")), "{group:#}");
        assert!(group.get("hostname").is_none() && group.get("job_name").is_none(), "{group:#}");
    }
    let run = json(&stdout(&culprit(&db, &["results", "--run", "1", "--json"], &repo)));
    assert_eq!(run["machine"], here.as_str(), "{run:#}");
    assert_eq!(run["machine_facts"]["hostname"], here.as_str(), "{run:#}");
    assert!(run["machine_facts"]["nr_cpu"].as_u64().is_some_and(|n| n > 0), "{run:#}");
    assert_eq!(run["job"], results[0]["job"], "{run:#}");

    // The report's JSON: the machine by name too, its facts beside it.
    let report = json(&stdout(&culprit(&db, &["report", "1", "--format", "json"], &repo)));
    assert_eq!(report["report"]["machine"], here.as_str(), "{report:#}");
    assert_eq!(report["report"]["machine_facts"]["hostname"], here.as_str(), "{report:#}");
    // QA 45, 8b: the relative spread is named as lkp's population one, beside the sample stddev.
    let side = &report["report"]["comparison"]["rows"][0]["sides"][0];
    assert!(side["population_rel_stddev_pct"].is_number() && side.get("rel_stddev_pct").is_none(), "{side:#}");

    // QA 45b, 12: the session names its job file by its absolute path, not `../job.yaml` of the bisect's directory,
    // in its log (and so on the dashboard's page of it), and the job file written beside its report names no
    // relative path either (the one `track --follow` writes is checked in tests/timed/follow.rs).
    let absolute = std::fs::canonicalize(&job).unwrap().display().to_string();
    let log = stdout(&culprit(&db, &["bisect", "log", "1"], dir.path()));
    assert!(log.contains(&absolute) && !log.contains("../job.yaml"), "{log}");
    let written = dir.path().join("mail");
    let args = ["report", "1", "-o", written.to_str().unwrap()];
    stdout(&culprit(&db, &args, dir.path()));
    let job_file = std::fs::read_to_string(written.join("job.yaml")).unwrap();
    assert!(job_file.contains("cmd: ./bench") && !job_file.contains("../job.yaml"), "{job_file}");
}

/// Runs culprit as the farm machine `machine` (`$CULPRIT_MACHINE`) in `dir`.
fn as_machine(machine: &str, dir: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_culprit"))
        .env("CULPRIT_MACHINE", machine)
        .env("CULPRIT_DB", "q.db")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn qa45b_12_a_farm_report_s_compare_line_names_the_machine_of_its_table() {
    let _machine = common::shared_machine();
    // The reproduce `culprit compare` of a report on one machine's runs, in a store where another machine ran the
    // same job at the same revisions, printed two tables when pasted; the mail's numbers were in one of them.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let values = [100.0, 101.0, 99.0, 150.0, 151.0, 149.0];
    let lines: Vec<String> = values.iter().chain(&values).map(f64::to_string).collect();
    common::write(d, "vals", &(lines.join("\n") + "\n"));
    let job = "suite: x\ncommand:\n  cmd: 'n=$(cat n 2>/dev/null || echo 0); echo $((n + 1)) > n; \
               echo \"ops: $(sed -n \"$((n + 1))p\" vals)\"'\n  capture:\n    ops: 'ops: ([0-9.]+)'\n";
    common::write(d, "ops.yaml", job);
    for machine in ["farm-a", "farm-b"] {
        for label in ["a", "b"] {
            as_machine(machine, d, &["run", "ops.yaml", "-n", "3", "--label", label, "--monitors", "none"]);
        }
    }
    let mail = as_machine("farm-a", d, &["report", "--compare", "a", "b", "--machine", "farm-a"]);
    // Since QA 46 the steps measure into a new store of their own, which holds the runs of the machine that follows
    // them only: its compare line needs no --machine, and, followed on farm-a, prints the one table.
    let steps: Vec<&str> = mail.lines().map(str::trim).filter(|l| l.starts_with("culprit ")).collect();
    assert_eq!(steps.len(), 3, "{mail}");
    assert!(steps.iter().all(|step| step.contains(" --db repro.db ") && !step.contains("--machine")), "{mail}");
    common::write(d, "n", "0\n");
    let mut pasted = String::new();
    for step in steps {
        let args = step.split_whitespace().skip(1).map(|a| if a == "job.yaml" { "ops.yaml" } else { a });
        pasted = as_machine("farm-a", d, &args.collect::<Vec<_>>());
    }
    assert!(pasted.contains("farm-a") && !pasted.contains("farm-b"), "{pasted}");

    // A store of one machine needs no --machine: the line stays as short as it was.
    let alone = tempfile::tempdir().unwrap();
    common::write(alone.path(), "vals", &(lines.join("\n") + "\n"));
    common::write(alone.path(), "ops.yaml", job);
    for label in ["a", "b"] {
        as_machine("farm-a", alone.path(), &["run", "ops.yaml", "-n", "3", "--label", label, "--monitors", "none"]);
    }
    let mail = as_machine("farm-a", alone.path(), &["report", "--compare", "a", "b"]);
    assert!(mail.lines().any(|l| l.trim() == "culprit compare --db repro.db a b"), "{mail}");
}

#[test]
fn qa45b_12_the_dashboard_does_not_link_the_report_of_an_unfinished_session() {
    // `/bisect/ID` of a stopped session linked "the report", whose page answered 400 "has not finished".
    let _machine = common::quiet_machine();
    let (dir, repo, shas, db) = common::slowdown(5, 4, 99);
    let d = dir.path();
    let run = common::kill_at_run_wrapper(d, "");
    let args = [
        "bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[0], "--bad", &shas[4], "--run", &run, "--build",
        "make -s", "--metric", "command.elapsed_time", "--max-runs", "10",
    ];
    std::fs::write(d.join("kill-at"), "3").unwrap();
    let mut child = common::spawn_culprit(&db, &args, d);
    std::fs::write(d.join("pid"), child.id().to_string()).unwrap();
    child.wait().unwrap();
    let listed = json(&stdout(&culprit(&db, &["bisect", "list", "--json"], d)));
    assert_eq!(listed[0]["status"], "stopped", "{listed:#}");
    let server = common::serve(db.to_str().unwrap(), d);
    let page = server.get("/bisect/1");
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(!page.body.contains("/bisect/1/report"), "{}", page.body);
    assert!(page.body.contains("has not finished") && page.body.contains("--resume 1"), "{}", page.body);
    // QA 58: the report's own page is a conflict, not a bad request, and names the machine to resume it on.
    let report = server.get("/bisect/1/report");
    assert_eq!(report.status, 409, "{}", report.body);
    let machine = listed[0]["machine"].as_str().unwrap();
    // QA 59: with the store named, as the command to run next needs it.
    let said = format!("continue it with `culprit --db {} bisect --resume 1` on machine {machine}", db.display());
    let said = culprit_core::report::escape_html(&said);
    assert!(report.body.contains(&said) && page.body.contains(&said), "{}\n{}", report.body, page.body);
}
