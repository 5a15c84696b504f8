//! Import of lkp's per-monitor JSON files (`<monitor>.json`, `<monitor>.json.gz`) of a run directory: the series they
//! hold when the run has no `matrix.json`, under the names and with the values Culprit's own parser gives the raw
//! output (checked on every vmstat, perf-stat and mpstat fixture of lkp), and warnings naming each file that does not
//! read.

use culprit_core::model::MonitorSeries;
use culprit_store::result_root::{import, ImportOptions};
use culprit_store::{RunFilter, SqliteStore, Store};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

const SHA: &str = "1234567890abcdef1234567890abcdef12345678";

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/stats_part_result_root")
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn gzip(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(&bytes).unwrap();
    let name = format!("{}.gz", path.file_name().unwrap().to_str().unwrap());
    std::fs::write(path.with_file_name(name), encoder.finish().unwrap()).unwrap();
    std::fs::remove_file(path).unwrap();
}

/// lkp's stats_part fixture laid out as a root whose runs kept their stats.json, job.yaml and per-monitor files but
/// lost their matrix.json (a root copied without it, or made before lkp wrote one per run).
fn root_without_matrices(into: &Path) -> PathBuf {
    let revision = into.join("pmbench/30s-100%/lkp-bdw-ep6").join(SHA);
    for index in 0..3 {
        let run = revision.join(index.to_string());
        std::fs::create_dir_all(&run).unwrap();
        std::fs::copy(data().join(format!("stats_{index}.json")), run.join("stats.json")).unwrap();
        for file in ["job.yaml", "mpstat.json", "perf-stat.json"] {
            std::fs::copy(data().join(index.to_string()).join(file), run.join(file)).unwrap();
        }
    }
    revision
}

/// The series a run's lkp `matrix.json` holds, as the monitors they belong to.
fn series_of_matrix(matrix: &Value, monitor: &str) -> (Vec<f64>, BTreeMap<String, Vec<f64>>) {
    let numbers = |value: &Value| value.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect::<Vec<_>>();
    let prefix = format!("{monitor}.");
    let object = matrix.as_object().unwrap();
    let times = numbers(&object[&format!("{monitor}.time")]);
    let series = object
        .iter()
        .filter_map(|(key, value)| Some((key.strip_prefix(&prefix)?.to_string(), numbers(value))))
        .filter(|(key, _)| key != "time")
        .collect();
    (times, series)
}

fn monitor<'a>(monitors: &'a [MonitorSeries], name: &str) -> &'a MonitorSeries {
    monitors.iter().find(|m| m.monitor == name).unwrap_or_else(|| panic!("no {name} series in {monitors:?}"))
}

#[test]
fn monitor_files_give_the_series_lkp_merges_into_a_run_s_matrix() {
    let dir = tempfile::tempdir().unwrap();
    let revision = root_without_matrices(&dir.path().join("result"));
    // lkp gzips monitor files too, and compresses the run's matrix.json: run 1 keeps perf-stat gzipped, and run 2
    // has only a gzipped matrix.json, which gives both monitors.
    gzip(&revision.join("1/perf-stat.json"));
    for file in ["mpstat.json", "perf-stat.json"] {
        std::fs::remove_file(revision.join("2").join(file)).unwrap();
    }
    std::fs::copy(data().join("matrix_2.json"), revision.join("2/matrix.json")).unwrap();
    gzip(&revision.join("2/matrix.json"));

    let mut store = SqliteStore::open(dir.path().join("s.db")).unwrap();
    let report = import(&mut store, &dir.path().join("result"), &ImportOptions::default()).unwrap();
    assert_eq!(report.imported.len(), 3, "{report:?}");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    for (index, id) in report.imported.iter().enumerate() {
        let record = store.run(*id).unwrap();
        let matrix = read_json(&data().join(format!("matrix_{index}.json")));
        for name in ["mpstat", "perf-stat"] {
            let (times, series) = series_of_matrix(&matrix, name);
            let stored = monitor(&record.monitors, name);
            assert_eq!(stored.times, times, "run {index} {name}");
            assert_eq!(stored.series, series, "run {index} {name}");
        }
        assert_eq!(record.monitors.len(), 2, "run {index}: {:?}", record.monitors);
    }
    let first = store.run(report.imported[0]).unwrap();
    assert_eq!(monitor(&first.monitors, "mpstat").series["cpu.all.usr%"].len(), 36);
}

#[test]
fn a_vmstat_json_reads_as_culprit_s_parser_reads_the_raw_vmstat() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../culprit-parse/tests/data/lkp/vmstat");
    let raw = std::fs::read_to_string(fixtures.join("1")).unwrap();
    let lkp_output = std::fs::read_to_string(fixtures.join("1.yaml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("result/fio-basic/4k/host").join(SHA).join("0");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("stats.json"), r#"{"fio.write_iops": 100}"#).unwrap();
    std::fs::write(run.join("vmstat.json"), dump_stat_padded("vmstat", &lkp_output).to_string()).unwrap();
    // A benchmark's JSON holds no time series; its numbers are in stats.json, and it must not become a monitor.
    std::fs::write(run.join("fio.json"), r#"{"fio.write_iops": [100]}"#).unwrap();

    let mut store = SqliteStore::open(dir.path().join("s.db")).unwrap();
    let report = import(&mut store, &dir.path().join("result"), &ImportOptions::default()).unwrap();
    assert_eq!(report.imported.len(), 1, "{report:?}");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let record = store.run(report.imported[0]).unwrap();
    assert_eq!(record.monitors.len(), 1, "{:?}", record.monitors);
    let vmstat = monitor(&record.monitors, "vmstat");

    let parser = culprit_parse::lookup("vmstat").unwrap();
    let parsed = parser.parse(&culprit_parse::ParseInput::text(&raw)).unwrap();
    let expected = parsed.samples();
    assert!(expected.contains_key("cpu.us") && expected.len() >= 17, "{expected:?}");
    assert_eq!(vmstat.series, expected, "the names and values of the raw parser");
    let times: Vec<f64> = lkp_output.lines().filter_map(|l| l.strip_prefix("time: ")?.parse().ok()).collect();
    assert_eq!(vmstat.times, times);
    assert_eq!(vmstat.times.len(), expected["cpu.us"].len());
}

/// The `key: value` lines lkp's parser printed for a raw fixture, made into the `<monitor>.json` lkp's `dump-stat`
/// writes of them: every key prefixed with the monitor's name and an array of its samples in order. As `dump-stat`
/// does, a key first printed in a later record gets a zero for each record before it, and a value that is not a
/// number is left out.
fn dump_stat_padded(monitor: &str, parser_output: &str) -> Value {
    let mut object: Map<String, Value> = Map::new();
    let mut record = 0usize;
    for line in parser_output.lines() {
        let Some((key, value)) = line.split_once(": ") else { continue };
        let Ok(value) = value.trim().parse::<serde_json::Number>() else { continue };
        let samples = object.entry(format!("{monitor}.{key}")).or_insert_with(|| Value::Array(Vec::new()));
        let samples = samples.as_array_mut().unwrap();
        if record < samples.len() {
            record = samples.len();
        }
        samples.resize(record, Value::from(0));
        samples.push(Value::Number(value));
    }
    Value::Object(object)
}

#[test]
fn every_monitor_fixture_s_json_reads_as_culprit_s_parser_reads_its_raw_output() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../culprit-parse/tests/data/lkp");
    let mut compared = 0;
    for (name, cases) in [("vmstat", 1..=1), ("perf-stat", 1..=5), ("mpstat", 1..=5)] {
        for case in cases {
            let raw = std::fs::read_to_string(fixtures.join(name).join(case.to_string())).unwrap();
            let lkp_output = std::fs::read_to_string(fixtures.join(name).join(format!("{case}.yaml"))).unwrap();
            let json = dump_stat_padded(name, &lkp_output);
            if json.get(format!("{name}.time")).is_none() {
                // lkp printed no record (mpstat 5): no time series, no file that would give one.
                continue;
            }
            let dir = tempfile::tempdir().unwrap();
            let run = dir.path().join("result/t/p/host").join(SHA).join("0");
            std::fs::create_dir_all(&run).unwrap();
            std::fs::write(run.join("stats.json"), r#"{"t.score": 1}"#).unwrap();
            std::fs::write(run.join(format!("{name}.json")), json.to_string()).unwrap();
            let mut store = SqliteStore::open(dir.path().join("s.db")).unwrap();
            let report = import(&mut store, &dir.path().join("result"), &ImportOptions::default()).unwrap();
            assert!(report.warnings.is_empty(), "{name} {case}: {:?}", report.warnings);
            let record = store.run(report.imported[0]).unwrap();
            let stored = monitor(&record.monitors, name);

            let parser = culprit_parse::lookup(name).unwrap();
            let parsed = parser.parse(&culprit_parse::ParseInput::text(&raw)).unwrap().samples();
            let names = |keys: Vec<&String>| keys.into_iter().cloned().collect::<Vec<_>>();
            assert_eq!(names(stored.series.keys().collect()), names(parsed.keys().collect()), "{name} {case}");
            for (key, samples) in &parsed {
                // lkp's padding puts zeros before the records a key is printed from; the values are the same.
                let series = &stored.series[key];
                let padding = series.len() - samples.len();
                assert!(series[..padding].iter().all(|v| *v == 0.0), "{name} {case} {key}: {series:?}");
                assert_eq!(&series[padding..], &samples[..], "{name} {case} {key}");
            }
            compared += 1;
        }
    }
    assert!(compared >= 9, "only {compared} fixtures compared");
}

#[test]
fn a_monitor_file_that_does_not_read_is_named_and_the_rest_of_the_run_imported() {
    let cases: [(&str, &[u8], &str); 7] = [
        ("cut short", b"{\"meminfo.time\": [1, 2], \"meminfo.MemFree\": [5", "not valid lkp JSON"),
        ("empty", b"", "not valid lkp JSON"),
        ("an array", b"[1, 2, 3]", "not an object"),
        ("no series", b"{\"meminfo.time\": [1, 2]}", "no series of samples"),
        ("not gzip", b"\x1f\x8b garbage", "not a readable gzip file"),
        ("a string sample", b"{\"meminfo.time\": [1, 2], \"meminfo.MemFree\": [5, \"x\"], \"meminfo.Active\": [3, 4]}",
         "\"meminfo.MemFree\" is [5,\"x\"], not an array of numbers"),
        ("a foreign key", b"{\"meminfo.time\": [1, 2], \"vmstat.cpu.us\": [5, 6], \"meminfo.Active\": [3, 4]}",
         "\"vmstat.cpu.us\" does not begin with \"meminfo.\""),
    ];
    for (what, content, reason) in cases {
        let dir = tempfile::tempdir().unwrap();
        let revision = root_without_matrices(&dir.path().join("result"));
        let name = if what == "not gzip" { "meminfo.json.gz" } else { "meminfo.json" };
        let bad = revision.join("1").join(name);
        std::fs::write(&bad, content).unwrap();
        let mut store = SqliteStore::open(dir.path().join("s.db")).unwrap();
        let report = import(&mut store, &dir.path().join("result"), &ImportOptions::default()).unwrap();
        assert_eq!((report.imported.len(), report.skipped.len()), (3, 0), "{what}: {report:?}");
        assert_eq!(report.warnings.len(), 1, "{what}: {:?}", report.warnings);
        let warning = &report.warnings[0];
        assert!(warning.contains(&bad.display().to_string()) && warning.contains(reason), "{what}: {warning}");

        let record = store.run(report.imported[1]).unwrap();
        assert_eq!(record.metrics.len(), 3, "{what}: the run's stats are all kept");
        assert_eq!(monitor(&record.monitors, "mpstat").times.len(), 36, "{what}");
        assert_eq!(monitor(&record.monitors, "perf-stat").series["i.cpu-cycles"].len(), 34, "{what}");
        let meminfo = record.monitors.iter().find(|m| m.monitor == "meminfo");
        match what {
            "a string sample" | "a foreign key" => {
                let meminfo = meminfo.unwrap_or_else(|| panic!("{what}: the good series stays"));
                assert_eq!(meminfo.series.keys().collect::<Vec<_>>(), ["Active"], "{what}");
                assert_eq!(meminfo.times, [1.0, 2.0], "{what}");
            }
            _ => assert!(meminfo.is_none(), "{what}: {meminfo:?}"),
        }

        // A second import after the file is fixed stores nothing twice and loses nothing stored.
        std::fs::remove_file(&bad).unwrap();
        let again = import(&mut store, &dir.path().join("result"), &ImportOptions::default()).unwrap();
        assert_eq!((again.imported.len(), again.already_stored.len()), (0, 3), "{what}: {again:?}");
        assert_eq!(store.list_runs(&RunFilter::default()).unwrap().len(), 3, "{what}");
    }
}

/// Culprit's parsers of monitors' raw outputs, as `culprit import` hands them to the importer.
struct RawMonitors;

impl culprit_store::result_root::MonitorParser for RawMonitors {
    fn reads(&self, monitor: &str) -> bool {
        ["vmstat", "perf-stat", "mpstat"].contains(&monitor)
    }

    fn parse(&self, monitor: &str, text: &str) -> Result<MonitorSeries, String> {
        let parser = culprit_parse::lookup(monitor).unwrap();
        let output = parser.parse(&culprit_parse::ParseInput::text(text)).map_err(|e| e.to_string())?;
        Ok(MonitorSeries { monitor: monitor.to_string(), times: output.times(), series: output.samples() })
    }
}

#[test]
fn a_raw_monitor_output_gives_the_series_only_where_lkp_s_json_of_it_is_missing() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../culprit-parse/tests/data/lkp");
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("result/t/p/host").join(SHA).join("0");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("stats.json"), r#"{"t.score": 1}"#).unwrap();
    // vmstat as lkp gzips it, without its JSON: read through the parser.
    std::fs::copy(fixtures.join("vmstat/1"), run.join("vmstat")).unwrap();
    gzip(&run.join("vmstat"));
    // perf-stat with its JSON: the JSON is read, and the raw output (garbage here) never.
    let perf_stat = std::fs::read_to_string(fixtures.join("perf-stat/1.yaml")).unwrap();
    std::fs::write(run.join("perf-stat.json"), dump_stat_padded("perf-stat", &perf_stat).to_string()).unwrap();
    std::fs::write(run.join("perf-stat"), "Segmentation fault\n").unwrap();
    // mpstat gzipped, but cut short: named, and the rest of the run imported.
    std::fs::write(run.join("mpstat.gz"), b"\x1f\x8b\x08\x00").unwrap();

    let mut store = SqliteStore::open(dir.path().join("s.db")).unwrap();
    let options = ImportOptions { parse_monitor: Some(&RawMonitors), ..Default::default() };
    let report = import(&mut store, &dir.path().join("result"), &options).unwrap();
    assert_eq!(report.imported.len(), 1, "{report:?}");
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    let warning = &report.warnings[0];
    assert!(warning.contains(&run.join("mpstat.gz").display().to_string()), "{warning}");
    assert!(warning.contains("not a readable gzip file") && warning.contains("without the mpstat series"), "{warning}");
    let record = store.run(report.imported[0]).unwrap();
    let names: Vec<&str> = record.monitors.iter().map(|m| m.monitor.as_str()).collect();
    assert_eq!(names, ["perf-stat", "vmstat"]);
    let raw = std::fs::read_to_string(fixtures.join("vmstat/1")).unwrap();
    let parsed = culprit_parse::lookup("vmstat").unwrap().parse(&culprit_parse::ParseInput::text(&raw)).unwrap();
    let vmstat = monitor(&record.monitors, "vmstat");
    assert_eq!(vmstat.series, parsed.samples());
    assert_eq!(vmstat.times.len(), vmstat.series["cpu.us"].len());
    assert_eq!(monitor(&record.monitors, "perf-stat").times.len(), 1);

    // Without a parser, raw outputs are not read at all.
    let mut plain = SqliteStore::open(dir.path().join("plain.db")).unwrap();
    let report = import(&mut plain, &dir.path().join("result"), &ImportOptions::default()).unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let names: Vec<String> = plain.run(report.imported[0]).unwrap().monitors.into_iter().map(|m| m.monitor).collect();
    assert_eq!(names, ["perf-stat"]);
}

/// QA 58: a run's `matrix.json` cut short skipped the whole run, whose `stats.json` was whole, where a monitor file
/// that does not read only costs its samples. It is named in a warning, and the run imported with its stats.
#[test]
fn a_runs_matrix_that_does_not_read_is_named_and_the_run_imported_with_its_stats() {
    let dir = tempfile::tempdir().unwrap();
    let revision = root_without_matrices(&dir.path().join("result"));
    let bad = revision.join("1").join("matrix.json");
    std::fs::write(&bad, b"{\"mpstat.time\": [1, 2], \"mpstat.cpu.all.usr%\": [5").unwrap();
    let mut store = SqliteStore::open(dir.path().join("s.db")).unwrap();
    let report = import(&mut store, &dir.path().join("result"), &ImportOptions::default()).unwrap();
    assert_eq!((report.imported.len(), report.skipped.len()), (3, 0), "{report:?}");
    let warning = report.warnings.iter().find(|w| w.contains(&bad.display().to_string())).expect("a warning");
    assert!(warning.contains("not valid lkp JSON") && warning.contains("without its monitors' samples"), "{warning}");
    let record = store.run(report.imported[1]).unwrap();
    assert_eq!(record.metrics.len(), 3, "the run's stats are all kept");
}
