//! A regression's mail asks the fix to carry a `Reported-by:` tag, as the robot's mails do, when a reporter is given
//! (`report --reported-by`, else `$CULPRIT_REPORTED_BY`); a reporter that is no `Name <email>` is refused, naming
//! where it came from, and an improvement's mail carries no tag.

use crate::common::{self, stdout};
use std::path::Path;
use std::process::{Command, Output};

fn culprit(dir: &Path, env: Option<&str>, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_culprit"));
    command.current_dir(dir).env_remove("CULPRIT_REPORTED_BY").args(["--db", "r.db"]).args(args);
    if let Some(reporter) = env {
        command.env("CULPRIT_REPORTED_BY", reporter);
    }
    command.output().unwrap()
}

#[test]
fn a_regressions_mail_carries_the_reported_by_tag_it_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Wall time ten times longer at b: a regression whatever else runs beside the test.
    common::write(d, "job.yaml", "suite: qa\ntestcase: qa\ncommand:\n  cmd: sleep $(cat delay)\n");
    for (label, delay) in [("a", "0.02"), ("b", "0.2")] {
        common::write(d, "delay", delay);
        let run = ["run", "job.yaml", "-n", "3", "--label", label, "--monitors", "none"];
        stdout(&culprit(d, None, &run));
    }
    let regression = ["report", "--compare", "a", "b", "--metric", "command.elapsed_time"];
    let ask = "If you fix the issue, kindly add following tag\n";
    let mail = stdout(&culprit(d, None, &regression));
    assert!(mail.starts_with("[culprit] b: command.elapsed_time ") && !mail.contains("Reported-by"), "{mail}");

    let given = [&regression[..], &["--reported-by", "Jane Doe <jane@example.org>"]].concat();
    let mail = stdout(&culprit(d, None, &given));
    let tag = format!("{ask}Reported-by: Jane Doe <jane@example.org>\n");
    assert!(mail.contains(&tag), "{mail}");
    assert!(mail.find(&tag) < mail.find("To reproduce:"), "the tag comes before the steps: {mail}");
    // The variable names the robot's reporter; the flag wins over it.
    let mail = stdout(&culprit(d, Some("Culprit Robot <robot@example.org>"), &regression));
    assert!(mail.contains(&format!("{ask}Reported-by: Culprit Robot <robot@example.org>\n")), "{mail}");
    let mail = stdout(&culprit(d, Some("Culprit Robot <robot@example.org>"), &given));
    assert!(mail.contains(&tag) && !mail.contains("Culprit Robot"), "{mail}");
    let markdown = stdout(&culprit(d, None, &[&given[..], &["--format", "markdown"]].concat()));
    assert!(markdown.contains("\n`Reported-by: Jane Doe <jane@example.org>`\n"), "{markdown}");
    let html = stdout(&culprit(d, None, &[&given[..], &["--format", "html"]].concat()));
    assert!(html.contains("<pre>Reported-by: Jane Doe &lt;jane@example.org&gt;</pre>"), "{html}");

    // b to a is an improvement: nothing to fix, no tag.
    let improvement = ["report", "--compare", "b", "a", "--metric", "command.elapsed_time", "--reported-by", "J <j@x>"];
    let mail = stdout(&culprit(d, None, &improvement));
    assert!(mail.contains("improvement") && !mail.contains("Reported-by"), "{mail}");

    // A reporter that is no tag's `Name <email>` is refused, naming where it came from.
    for (flag, env, source) in
        [(Some("jane"), None, "--reported-by is \"jane\""), (None, Some("jane@example.org"), "$CULPRIT_REPORTED_BY")]
    {
        let args = [&regression[..], flag.map(|f| ["--reported-by", f]).as_ref().map_or(&[][..], |a| &a[..])].concat();
        let out = culprit(d, env, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        let says_how = err.contains("'Jane Doe <jane@example.org>'");
        assert!(!out.status.success() && err.contains(source) && says_how, "{err}");
    }
}
