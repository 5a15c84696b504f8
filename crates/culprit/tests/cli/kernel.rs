//! The short kernel-target test: one prebuilt kernel booted twice under qemu through `culprit run`, its results
//! parsed, and the failure paths of the boot hook (missing kernel, hung guest, unknown benchmark) checked; and the
//! ssh path of the deploy hook against a stand-in box (that case needs no kernel and always runs).
//!
//! This test depends on the environment. It needs Debian's `linux-source-6.1`, `qemu-system-x86_64` and a prebuilt
//! kernel in the cache `kernel/prebuilt.sh` manages (built only when `CULPRIT_KERNEL_BUILD=1`, since a cold build
//! takes about 12 minutes). When any of these is missing it prints why and passes without testing anything; this is
//! the one test in the suite allowed to do so, because the normal suite must not do a cold kernel build. The long
//! check (fixture history, real bisect, report) is `kernel/e2e.sh`, described in docs/kernel.md.

use crate::common::write_script;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn kernel_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernel")
}

fn text(out: &Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The prebuilt kernel, or the reason there is none here.
fn prebuilt_kernel() -> Result<PathBuf, String> {
    if !Path::new("/usr/src/linux-source-6.1.tar.xz").exists() {
        return Err("linux-source-6.1 is not installed (kernel/install-deps.sh)".into());
    }
    let qemu = Command::new("sh").args(["-c", "command -v qemu-system-x86_64"]).output().map_err(|e| e.to_string())?;
    if !qemu.status.success() {
        return Err("qemu-system-x86_64 is not installed (kernel/install-deps.sh)".into());
    }
    let out =
        Command::new(kernel_dir().join("prebuilt.sh")).output().map_err(|e| format!("kernel/prebuilt.sh: {e}"))?;
    let (stdout, stderr) = text(&out);
    match out.status.code() {
        Some(0) => Ok(PathBuf::from(stdout.trim())),
        Some(3) => Err(stderr.trim().to_string()),
        _ => panic!("kernel/prebuilt.sh failed:\n{stdout}\n{stderr}"),
    }
}

fn boot(args: &[&str]) -> Output {
    boot_with_path(args, &std::env::var("PATH").unwrap_or_default())
}

/// `boot` with its own `PATH`, so a test can put a stand-in program first.
fn boot_with_path(args: &[&str], path: &str) -> Output {
    Command::new(kernel_dir().join("boot.sh"))
        .args(args)
        .env("PATH", path)
        .env_remove("CULPRIT_COMMIT")
        .output()
        .expect("run kernel/boot.sh")
}

#[test]
fn a_prebuilt_kernel_boots_twice_and_its_results_are_parsed() {
    let kernel = match prebuilt_kernel() {
        Ok(k) => k,
        Err(why) => {
            eprintln!("kernel test skipped, nothing was tested: {why}");
            return;
        }
    };
    let kernel_text = kernel.display().to_string();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let job = dir.path().join("kernel.yaml");
    let boot_sh = kernel_dir().join("boot.sh");
    std::fs::write(
        &job,
        format!(
            "suite: kernel-smoke\ncommand:\n  cmd: '\"{}\" --kernel \"{}\" --runs 3 --timeout 300'\n  capture:\n    spread_max: 'spread\\.elapsed_max: ([0-9.]+)'\n    spread_median: 'spread\\.elapsed_median: ([0-9.]+)'\n    stuck_runs: 'spread\\.stuck_runs: ([0-9]+)'\n    guest_idle: 'spread\\.cpu_idle_percent: ([0-9.]+)'\n    guest_cpus: 'guest\\.nr_cpu: ([0-9]+)'\n",
            boot_sh.display(),
            kernel_text
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_culprit"))
        .args(["--db", db.to_str().unwrap(), "run", job.to_str().unwrap(), "-n", "2", "--label", "kernel-smoke"])
        .args(["--monitors", "none", "--json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "culprit run of two guest boots failed:\n{stdout}\n{stderr}");
    let runs: Vec<serde_json::Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(runs.len(), 2, "{stdout}");
    for run in &runs {
        let m = &run["metrics"];
        let max = m["command.spread_max"].as_f64().unwrap();
        let median = m["command.spread_median"].as_f64().unwrap();
        assert!(max > 0.0 && median > 0.0 && median <= max, "{m}");
        let stuck = m["command.stuck_runs"].as_f64().unwrap();
        assert!((0.0..=3.0).contains(&stuck), "{m}");
        let idle = m["command.guest_idle"].as_f64().unwrap();
        assert!((0.0..=100.0).contains(&idle), "{m}");
        assert_eq!(m["command.guest_cpus"].as_f64(), Some(2.0), "boot.sh boots 2 vCPUs by default: {m}");
    }

    // The hook's own output carries the kernel's provenance, read from inside the guest.
    let out = boot(&["--kernel", &kernel_text, "--bench", "none", "--timeout", "300"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let info = std::fs::read_to_string(kernel.with_file_name("info")).unwrap();
    let release = info.lines().find_map(|l| l.strip_prefix("kernel.release: ")).unwrap();
    assert!(stdout.lines().any(|l| l == format!("kernel.release: {release}")), "{stdout}");
    let config = info.lines().find_map(|l| l.strip_prefix("kernel.config_sha256: ")).unwrap();
    assert!(
        stdout.lines().any(|l| l == format!("kernel.config_sha256: {config}")),
        "the guest's /proc/config.gz hash: {stdout}"
    );
}

#[test]
fn boot_failures_name_the_step_and_fail() {
    // A missing kernel image fails before qemu starts.
    let out = boot(&["--kernel", "/nonexistent/vmlinux"]);
    assert!(!out.status.success());
    assert!(text(&out).1.contains("boot failed") && text(&out).1.contains("/nonexistent/vmlinux"), "{:?}", text(&out));

    let kernel = match prebuilt_kernel() {
        Ok(k) => k.display().to_string(),
        Err(why) => {
            eprintln!("kernel boot-failure cases skipped: {why}");
            return;
        }
    };
    // A guest that does not finish in time is killed and reported, never left running.
    let out = boot(&["--kernel", &kernel, "--timeout", "1"]);
    let stderr = text(&out).1;
    assert!(!out.status.success());
    assert!(stderr.contains("did not finish within 1 s"), "{stderr}");
    // A guest killed before qemu even opened its console log (a loaded CI host once took over a second to start
    // it) is still reported as the timeout. A stand-in qemu that only sleeps makes that moment deterministic.
    let fake = tempfile::tempdir().unwrap();
    write_script(&fake.path().join("qemu-system-x86_64"), "#!/bin/sh\nsleep 5\n");
    let path = format!("{}:{}", fake.path().display(), std::env::var("PATH").unwrap_or_default());
    let out = boot_with_path(&["--kernel", &kernel, "--timeout", "1"], &path);
    let stderr = text(&out).1;
    assert!(!out.status.success());
    assert!(stderr.contains("did not finish within 1 s"), "{stderr}");
    // A benchmark the initramfs does not have: the agent says so and the hook fails at the benchmark step.
    let out = boot(&["--kernel", &kernel, "--bench", "nosuchbench", "--timeout", "300"]);
    let stderr = text(&out).1;
    assert!(!out.status.success());
    assert!(stderr.contains("benchmark failed") && stderr.contains("nosuchbench"), "{stderr}");
}

/// A stand-in box for `kernel/deploy.sh`'s ssh path: `ssh` and `scp` on `PATH` act on a directory instead of a
/// machine (scp copies into it; `kexec -l` there "boots" the copied image, whose first line is its release;
/// `uname -r` answers that release), and `sleep` returns at once. `FAKE_BOX_MODE` makes the box come back with
/// another kernel (`fallback`) or never answer again (`gone`). No second machine exists here, so this checks the
/// script's own steps and failure messages; the real kexec is documented in docs/kernel.md.
fn stand_in_box(dir: &Path) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(dir.join("box/boot")).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    let scripts = [
        (
            "ssh",
            r#"#!/bin/sh
while [ $# -gt 0 ]; do case $1 in -o) shift 2 ;; -*) shift ;; *) break ;; esac; done
target=$1; shift
echo "$target $*" >> "$FAKE_BOX/ssh.log"
case "$*" in
    "uname -r") [ -s "$FAKE_BOX/release" ] || exit 255; cat "$FAKE_BOX/release" ;;
    kexec*)
        case ${FAKE_BOX_MODE:-ok} in
            ok) head -n 1 "$FAKE_BOX/boot/vmlinuz-culprit" > "$FAKE_BOX/release" ;;
            fallback) echo 6.1.0-distro > "$FAKE_BOX/release" ;;
            gone) rm -f "$FAKE_BOX/release" ;;
        esac ;;
    *) exit 127 ;;
esac
"#,
        ),
        (
            "scp",
            r#"#!/bin/sh
while [ $# -gt 0 ]; do case $1 in -o) shift 2 ;; -*) shift ;; *) break ;; esac; done
cp "$1" "$FAKE_BOX/${2#*:}"
"#,
        ),
        ("sleep", "#!/bin/sh\nexit 0\n"),
    ];
    for (name, body) in scripts {
        write_script(&bin.join(name), body);
    }
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default())
}

/// Runs `kernel/deploy.sh` for a commit whose built artifact (release `release`, with or without a bzImage) sits
/// in a state directory under `dir`, against the stand-in box at `ssh://root@testbox`.
fn deploy_to_stand_in(dir: &Path, release: &str, with_image: bool, mode: &str) -> Output {
    let path = stand_in_box(dir);
    let commit = "0123456789abcdef0123456789abcdef01234567";
    let artifact = dir.join("state/artifacts").join(commit).join("current");
    std::fs::create_dir_all(&artifact).unwrap();
    std::fs::write(artifact.join("info"), format!("kernel.release: {release}\n")).unwrap();
    if with_image {
        std::fs::write(artifact.join("bzImage"), format!("{release}\n(kernel image bytes)\n")).unwrap();
    }
    Command::new(kernel_dir().join("deploy.sh"))
        .env("PATH", path)
        .env("CULPRIT_COMMIT", commit)
        .env("CULPRIT_KERNEL_STATE", dir.join("state"))
        .env("CULPRIT_KERNEL_BOX", "ssh://root@testbox")
        .env("CULPRIT_KERNEL_BOX_INITRD", "none")
        .env("CULPRIT_KERNEL_BOX_WAIT", "40")
        .env("FAKE_BOX", dir.join("box"))
        .env("FAKE_BOX_MODE", mode)
        .output()
        .expect("run kernel/deploy.sh")
}

#[test]
fn the_ssh_box_path_copies_the_kernel_kexecs_it_and_checks_the_release() {
    let release = "6.1.99-culprit-00042-g0123456789ab";
    let dir = tempfile::tempdir().unwrap();
    let out = deploy_to_stand_in(dir.path(), release, true, "ok");
    let (_, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains(&format!("box root@testbox is up with {release}")), "{stderr}");
    let copied = std::fs::read_to_string(dir.path().join("box/boot/vmlinuz-culprit")).unwrap();
    assert!(copied.starts_with(release), "the box got {copied:?}");
    let log = std::fs::read_to_string(dir.path().join("box/ssh.log")).unwrap();
    let kexec = log.lines().find(|l| l.contains("kexec -l")).unwrap_or_else(|| panic!("no kexec in {log}"));
    assert!(kexec.starts_with("root@testbox kexec -l /boot/vmlinuz-culprit"), "{kexec}");
    assert!(kexec.contains("--reuse-cmdline") && !kexec.contains("--initrd"), "{kexec}");
    assert!(log.lines().any(|l| l == "root@testbox uname -r"), "{log}");

    // A box that falls back to its own kernel is caught by the release check: the commit is untestable.
    let dir = tempfile::tempdir().unwrap();
    let out = deploy_to_stand_in(dir.path(), release, true, "fallback");
    let stderr = text(&out).1;
    assert!(!out.status.success());
    assert!(stderr.contains(&format!("came back with 6.1.0-distro, not {release}")), "{stderr}");

    // A box that never answers again fails after the wait, naming the box and the limit.
    let dir = tempfile::tempdir().unwrap();
    let out = deploy_to_stand_in(dir.path(), release, true, "gone");
    let stderr = text(&out).1;
    assert!(!out.status.success());
    assert!(stderr.contains("root@testbox did not come back within 40 s"), "{stderr}");

    // A build without a bzImage cannot go to bare metal; nothing is copied or booted.
    let dir = tempfile::tempdir().unwrap();
    let out = deploy_to_stand_in(dir.path(), release, false, "ok");
    let stderr = text(&out).1;
    assert!(!out.status.success());
    assert!(stderr.contains("bzImage missing") && stderr.contains("CULPRIT_KERNEL_IMAGE=bzImage"), "{stderr}");
    assert!(!dir.path().join("box/ssh.log").exists(), "the box was contacted");
}
