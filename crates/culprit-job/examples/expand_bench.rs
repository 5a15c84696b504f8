//! How long loading and expanding job files takes: lkp's own files (as checked in under tests/data/lkp-jobs) and
//! generated matrices up to the 10,000-job limit, with and without an lkp `{{ }}` template computed at every point.
//!
//! Run: `cargo run --release -p culprit-job --example expand_bench [-- --repeat N]`. Prints one row per case: the
//! atomic jobs made, and the median time of N loads-and-expansions (default 20), per file and per atomic job.

use culprit_job::JobFile;
use std::path::Path;
use std::time::{Duration, Instant};

/// A matrix of `a` x `b` x `c` points of a hackbench job, with `template` as one more param when given.
fn matrix(a: usize, b: usize, c: usize, template: Option<&str>) -> String {
    let list = |n: usize| (1..=n).map(|i| i.to_string()).collect::<Vec<_>>().join(", ");
    let mut text = format!("suite: bench\nnr_threads: [{}]\nhackbench:\n  loops: [{}]\n", list(a), list(b));
    text.push_str(&format!("  groups: [{}]\n", list(c)));
    if let Some(template) = template {
        text.push_str(&format!("  datasize: {template}\n"));
    }
    text
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let given = args.iter().position(|a| a == "--repeat").and_then(|i| args.get(i + 1));
    let repeat: usize = given.and_then(|n| n.parse().ok()).unwrap_or(20);
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/lkp-jobs");
    let mut cases: Vec<(String, String)> = Vec::new();
    for name in ["fsmark.yaml", "fsmark-1hdd-400m.yaml", "fio-basic-2pmem.yaml", "stress-ng-part4.yaml", "oltp.yaml"] {
        let text = std::fs::read_to_string(data.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        cases.push((format!("lkp {name}"), text));
    }
    let template = "{{ case nr_threads when 1 then 100 when 2 then 200 else hackbench.loops * 10 end }}";
    for (a, b, c) in [(10, 10, 10), (20, 25, 20)] {
        cases.push((format!("matrix {}", a * b * c), matrix(a, b, c, None)));
        cases.push((format!("matrix {} + template", a * b * c), matrix(a, b, c, Some(template))));
    }
    println!("{:<34} {:>7} {:>12} {:>12}", "case", "jobs", "per file", "per job");
    for (name, text) in cases {
        let mut jobs = 0;
        let times: Vec<Duration> = (0..repeat)
            .map(|_| {
                let started = Instant::now();
                let file = JobFile::parse(&text, &name).unwrap_or_else(|e| panic!("{name}: {e}"));
                jobs = file.expand().unwrap_or_else(|e| panic!("{name}: {e}")).len();
                started.elapsed()
            })
            .collect();
        let per_file = median(times);
        let per_job = per_file / jobs.max(1) as u32;
        println!("{name:<34} {jobs:>7} {:>12.3?} {:>12.3?}", per_file, per_job);
    }
}
