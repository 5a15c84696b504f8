//! Robustness sweep of the result-root import: each file of an lkp result root, damaged as a full disk, a killed
//! copy or a stray edit damages it, must give an error naming the file, a skipped run with a reason naming the file,
//! or a run imported with a warning naming it; never a panic, never a NaN stored, and never a loss of the other runs.
//!
//! The root is written by Culprit itself (two runs of one revision, one of them failed with its reason and standard
//! error beside it, monitors in the run's `matrix.json`, and lkp's own `meminfo.json` and `proc-stat.json.gz`), then
//! each file in turn is replaced by a damaged copy: empty, cut at each line and at a spread of bytes, each line
//! deleted, garbage, bytes overwritten by a seeded xorshift generator, and, in the JSON files, each of the first
//! numbers replaced by a value of another type. Every damaged root is imported into a fresh store under
//! `catch_unwind`.

use crate::common::{commit, failed, run};
use culprit_core::model::{MonitorSeries, RunRecord};
use culprit_core::rng::Rng;
use culprit_store::result_root::{self, import, write_run, ImportOptions, ImportReport};
use culprit_store::{SqliteStore, Store};
use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};

const SHA: &str = "8cc621d2f45ddd3dc664024a647ee7adf48d79a5";
const PATH_PARAMS: &str = "4k-randwrite-300s";

/// Byte offsets cut at an even spread through each file, besides the line boundaries.
const BYTE_CUTS: usize = 12;

/// Rounds of random byte corruption per file.
const CORRUPTION_ROUNDS: usize = 6;

/// How many of a JSON file's numbers are each replaced by every value of another type.
const NUMBERS_REPLACED: usize = 6;

/// What a number in a JSON file is replaced by: every JSON type but a number, and numbers JSON cannot hold.
const NOT_NUMBERS: [&str; 7] = ["null", "\"x\"", "[]", "{}", "true", "1e999", "-1e400"];

/// At most this many failures are listed; past that the list only repeats one defect.
const MAX_LISTED: usize = 40;

fn run_with_monitor(iops: f64) -> RunRecord {
    let mut record = run("fio-basic", commit(SHA), "lkp-host", &[("fio.write_iops", iops), ("time.elapsed_time", 9.5)]);
    record.job_yaml =
        "suite: fio-basic\ntbox_group: lkp-host\nruntime: 300s\nfio-setup-basic:\n  bs: 4k\n  rw: randwrite\n".into();
    record.params = result_root::flatten_job_params(&record.job_yaml);
    record.testcase = "fio-basic".to_string();
    let series = BTreeMap::from([
        ("cpu.id".to_string(), vec![90.0, 91.0, 89.5]),
        ("procs.r".to_string(), vec![1.0, 2.0, 1.0]),
    ]);
    record.monitors = vec![MonitorSeries { monitor: "vmstat".to_string(), times: vec![0.0, 1.0, 2.0], series }];
    record
}

/// Writes the root: run 0 succeeded, run 1 failed with its reason and standard error. Returns the revision directory.
fn write_root(root: &Path) -> PathBuf {
    let local = result_root::local_build_of("ID=debian\n", Some("gcc-14"));
    write_run(root, PATH_PARAMS, &run_with_monitor(100.0), &local).unwrap();
    let mut failing = failed(run_with_monitor(0.0), "fio exited with status 1");
    failing.metrics.insert("time.elapsed_time".to_string(), 3.0);
    failing.stderr = "fio: io_u error on file /fs/sda: No space left on device\n".to_string();
    write_run(root, PATH_PARAMS, &failing, &local).unwrap();
    root.join("fio-basic").join(PATH_PARAMS).join("lkp-host/debian/defconfig/gcc-14").join(SHA)
}

/// The damaged versions of one file's bytes, each with a description of the damage.
fn damages(bytes: &[u8], json: bool, rng: &mut Rng) -> Vec<(String, Vec<u8>)> {
    let mut out = vec![("emptied".to_string(), Vec::new())];
    let line_ends: Vec<usize> = bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i + 1).collect();
    for &end in &line_ends {
        out.push((format!("cut at byte {end}, a line's end"), bytes[..end].to_vec()));
    }
    for i in 1..BYTE_CUTS {
        let cut = i * bytes.len() / BYTE_CUTS;
        out.push((format!("cut at byte {cut}"), bytes[..cut].to_vec()));
    }
    let mut start = 0;
    for (line, &end) in line_ends.iter().enumerate() {
        let mut deleted = bytes[..start].to_vec();
        deleted.extend_from_slice(&bytes[end..]);
        out.push((format!("line {} deleted", line + 1), deleted));
        start = end;
    }
    out.push(("replaced by text".to_string(), b"Segmentation fault (core dumped)\n".to_vec()));
    out.push(("replaced by binary bytes".to_string(), (0..=255u8).rev().collect()));
    for round in 0..CORRUPTION_ROUNDS {
        if bytes.is_empty() {
            break;
        }
        let mut corrupt = bytes.to_vec();
        for _ in 0..=rng.below(3) {
            let at = rng.below(corrupt.len());
            corrupt[at] = rng.next_u64() as u8;
        }
        out.push((format!("corruption round {round}"), corrupt));
    }
    if json {
        let numbers: Vec<(usize, usize)> = number_spans(bytes).into_iter().take(NUMBERS_REPLACED).collect();
        for (start, end) in numbers {
            for replacement in NOT_NUMBERS {
                let mut replaced = bytes[..start].to_vec();
                replaced.extend_from_slice(replacement.as_bytes());
                replaced.extend_from_slice(&bytes[end..]);
                let number = String::from_utf8_lossy(&bytes[start..end]);
                out.push((format!("number {number} at byte {start} replaced by {replacement}"), replaced));
            }
        }
    }
    out
}

/// The byte ranges of the JSON numbers of a text (after a `:`, a `[` or a `,`).
fn number_spans(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts = (bytes[i].is_ascii_digit() || bytes[i] == b'-')
            && bytes[..i].iter().rev().find(|b| !b.is_ascii_whitespace()).is_some_and(|b| b":[,".contains(b));
        if starts {
            let start = i;
            i += 1;
            while i < bytes.len() && (bytes[i].is_ascii_digit() || b".eE+-".contains(&bytes[i])) {
                i += 1;
            }
            spans.push((start, i));
        } else {
            i += 1;
        }
    }
    spans
}

/// Imports `root` into a fresh store under `catch_unwind`; the report, or the error's message, or the panic's. The
/// fresh store is a copy of `empty`, a store made once: making each anew (its schema's migrations) took most of the
/// sweep's time.
fn import_into_fresh_store(
    root: &Path,
    db: &Path,
    empty: &[u8],
) -> Result<(Result<ImportReport, String>, SqliteStore), String> {
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    std::fs::write(db, empty).map_err(|e| format!("cannot write the test store: {e}"))?;
    let mut store = SqliteStore::open(db).map_err(|e| format!("cannot open the test store: {e}"))?;
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        import(&mut store, root, &ImportOptions::default()).map_err(|e| e.to_string())
    }));
    match result {
        Ok(result) => Ok((result, store)),
        Err(payload) => {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(format!("panicked: {message}"))
        }
    }
}

/// Whether a file reads as the format it is in (JSON for `.json`, a YAML hash for `job.yaml`, anything else for the
/// rest), decoded lossily as the import decodes it; a `.gz` file must also unpack.
fn reads_as_its_format(name: &str, bytes: &[u8]) -> bool {
    if let Some(unpacked_name) = name.strip_suffix(".gz") {
        let mut unpacked = Vec::new();
        let read = std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(bytes), &mut unpacked);
        return read.is_ok() && reads_as_its_format(unpacked_name, &unpacked);
    }
    let text = String::from_utf8_lossy(bytes);
    if name.ends_with(".json") {
        serde_json::from_str::<serde_json::Value>(&text).is_ok()
    } else if name.ends_with(".yaml") {
        serde_yaml::from_str::<serde_yaml::Value>(&text).is_ok_and(|v| v.is_mapping())
    } else {
        true
    }
}

/// The failures of one import of a root whose file `damaged` was damaged into `bytes`. `read` says whether the
/// import reads that file (a revision's `avg.json` is not), and `whole_runs` how many runs have every file of
/// their own whole and so must be imported.
fn judge(
    report: &ImportReport,
    store: &SqliteStore,
    damaged: &Path,
    bytes: &[u8],
    read: bool,
    whole_runs: usize,
) -> Vec<String> {
    let mut failures = Vec::new();
    let name = damaged.file_name().unwrap().to_string_lossy().into_owned();
    let mentioned = |text: &str| text.contains(&name);
    // Nothing else is lost: every run whose own files are whole is imported.
    let stored = report.imported.len() + report.already_stored.len();
    if stored < whole_runs {
        failures.push(format!("only {stored} runs imported, not the {whole_runs} left whole; {:?}", report.skipped));
    }
    for (path, reason) in &report.skipped {
        if !mentioned(reason) && !mentioned(&path.display().to_string()) {
            failures.push(format!("skipped {} with a reason that does not name {name}: {reason}", path.display()));
        }
    }
    // A file that no longer reads as its format is never taken in silence.
    let said = report.skipped.iter().any(|(path, reason)| mentioned(reason) || mentioned(&path.display().to_string()))
        || report.warnings.iter().any(|w| mentioned(w));
    if read && !reads_as_its_format(&name, bytes) && !said {
        failures.push(format!("{name} no longer reads as its format, yet the import said nothing of it"));
    }
    for id in report.imported.iter().chain(&report.already_stored) {
        let record = match store.run(*id) {
            Ok(record) => record,
            Err(e) => {
                failures.push(format!("the imported run {id} cannot be read back: {e}"));
                continue;
            }
        };
        if let Some((key, value)) = record.metrics.iter().find(|(_, v)| !v.is_finite()) {
            failures.push(format!("stored the metric {key} = {value}"));
        }
        for monitor in &record.monitors {
            let samples = monitor.series.iter().map(|(key, values)| (key.as_str(), values));
            for (key, values) in std::iter::once(("time", &monitor.times)).chain(samples) {
                if values.iter().any(|v| !v.is_finite()) {
                    failures.push(format!("stored the monitor series {}.{key} = {values:?}", monitor.monitor));
                }
            }
        }
        if !record.started_at.is_finite() || !record.ended_at.is_finite() {
            failures.push(format!("stored the times {} to {}", record.started_at, record.ended_at));
        }
    }
    failures
}

#[test]
fn damaged_result_root_files_are_named_and_never_panic_or_store_a_non_finite_value() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("result");
    let revision = write_root(&root);
    // A monitor's own lkp file beside the run's matrix.json, as lkp's dump-stat leaves it: the import reads the
    // series of a monitor the matrix lacks from it.
    let meminfo = "{\n  \"meminfo.time\": [1, 2, 3],\n  \"meminfo.MemFree\": [5120, 4096, 4000],\n  \
                   \"meminfo.Active\": [100.5, 101, 99]\n}\n";
    std::fs::write(revision.join("0/meminfo.json"), meminfo).unwrap();
    // And one gzipped, as lkp may leave a monitor's file.
    let proc_stat = br#"{"proc-stat.time": [1, 2, 3], "proc-stat.ctxt": [100, 250, 420]}"#;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut encoder, proc_stat).unwrap();
    std::fs::write(revision.join("1/proc-stat.json.gz"), encoder.finish().unwrap()).unwrap();
    let db = dir.path().join("culprit.db");
    // An empty store, closed so that its file holds all of it (closing the last connection folds the WAL in).
    drop(SqliteStore::open(&db).unwrap());
    let empty = std::fs::read(&db).unwrap();
    // Seeded, so every run damages the same bytes.
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    // Each file, and whether it is a run's own (which the import reads, and whose damage must leave the other run
    // whole) rather than the revision's (which it does not read while the run directories are there).
    let mut files: Vec<(PathBuf, bool)> = Vec::new();
    for run_name in ["0", "1"] {
        let run_dir = revision.join(run_name);
        let mut names: Vec<PathBuf> = std::fs::read_dir(&run_dir).unwrap().map(|e| e.unwrap().path()).collect();
        names.sort();
        files.extend(names.into_iter().map(|path| (path, true)));
    }
    for name in ["matrix.json", "avg.json", "stddev.json"] {
        files.push((revision.join(name), false));
    }
    let mut failures = Vec::new();
    let mut failed = 0usize;
    let mut imports = 0usize;
    for (path, own) in &files {
        let original = std::fs::read(path).unwrap();
        let json = path.extension().is_some_and(|e| e == "json");
        for (damage, bytes) in damages(&original, json, &mut rng) {
            std::fs::write(path, &bytes).unwrap();
            imports += 1;
            let found = match import_into_fresh_store(&root, &db, &empty) {
                Err(panicked) => vec![panicked],
                Ok((Err(message), _)) if !message.contains(&*path.file_name().unwrap().to_string_lossy()) => {
                    vec![format!("refused without naming the file: {message}")]
                }
                Ok((Err(_), _)) => Vec::new(),
                Ok((Ok(report), store)) => judge(&report, &store, path, &bytes, *own, usize::from(*own)),
            };
            failed += found.len();
            let shown = path.strip_prefix(&root).unwrap_or(path).display().to_string();
            failures.extend(found.into_iter().map(|f| format!("{shown}, {damage}: {f}")).take(MAX_LISTED));
        }
        std::fs::write(path, &original).unwrap();
    }
    // A revision whose run directories are gone is read from its matrix.json, one run per column.
    for run_name in ["0", "1"] {
        std::fs::remove_dir_all(revision.join(run_name)).unwrap();
    }
    let matrix = revision.join("matrix.json");
    let original = std::fs::read(&matrix).unwrap();
    for (damage, bytes) in damages(&original, true, &mut rng) {
        std::fs::write(&matrix, &bytes).unwrap();
        imports += 1;
        let found = match import_into_fresh_store(&root, &db, &empty) {
            Err(panicked) => vec![panicked],
            Ok((Err(message), _)) if !message.contains("matrix.json") => {
                vec![format!("refused without naming the file: {message}")]
            }
            Ok((Err(_), _)) => Vec::new(),
            Ok((Ok(report), store)) => judge(&report, &store, &matrix, &bytes, true, 0),
        };
        failed += found.len();
        failures.extend(found.into_iter().map(|f| format!("matrix-only revision, {damage}: {f}")).take(MAX_LISTED));
    }
    failures.truncate(MAX_LISTED);
    assert!(imports > 300, "only {imports} damaged roots were imported");
    assert!(failed == 0, "{failed} failures among {imports} damaged roots:\n{}", failures.join("\n"));
}
