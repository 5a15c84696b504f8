//! Benchmark of the change-point engine (`culprit_core::changepoint`) on seeded synthetic histories, the figures
//! behind `docs/statistics.md` `## Track`. With `--out DIR` it also writes every series as CSV (and its true change
//! points) so `bench/otava/compare.sh` runs Apache Otava on exactly the same data.
//!
//! ```sh
//! cargo run --release -p culprit-core --example changepoint_bench -- [--out DIR] [--sizes 1000,10000,100000] \
//!     [--seed 7 | --seeds 1..=20]
//! ```
//!
//! Series: Gaussian noise of sigma 2 around a level that starts at 100, a step every 100 to 500 points (uniform;
//! none in the last 100) of 1 to 2 sigma; the `outliers` variant replaces 5% of the points by the point plus or
//! minus 5 sigma. A step's sign is random, except that the level is kept within 100 ± 10 sigma: a step that would
//! leave that band goes the other way. Without the band the level is a random walk that wanders far from 100 on
//! long series (to about 240 on seed 1 of 100,000 points), where a 1-sigma step is under the verdict's 1% minimum
//! magnitude, so real and significant steps would be refused for the generator's sake, not the method's.
//!
//! A found change point is right when it lies within 5 points of a true one not matched yet (one-to-one, greedy
//! in order); precision = right / found, recall = matched true / true. With several seeds, each row pools the
//! counts of all seeds (precision = all right / all found) and gives the mean time per series.

use culprit_core::changepoint::{analyze, decide, ChangePoint, TrackOptions, Tracker};
use culprit_core::rng::Rng;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

const LEVEL: f64 = 100.0;
const SIGMA: f64 = 2.0;
const TOLERANCE: usize = 5;
/// The level stays within `LEVEL ± BAND_SIGMAS * SIGMA`.
const BAND_SIGMAS: f64 = 10.0;

/// A synthetic series and the indices of the first point after each true step.
struct Series {
    values: Vec<f64>,
    truth: Vec<usize>,
    /// Size of each true step in noise units (for the verbose diagnosis of misses).
    steps: Vec<f64>,
}

fn generate(size: usize, outliers: bool, seed: u64) -> Series {
    let mut rng = Rng::new(seed);
    let mut level = LEVEL;
    let mut next_step = 100 + rng.below(401);
    let mut truth = Vec::new();
    let mut steps = Vec::new();
    let mut values = Vec::with_capacity(size);
    for i in 0..size {
        // The last segment is at least 100 points too: a step in the last few points cannot be located by any
        // method, and would only measure the end of the series.
        if i == next_step && i + 100 <= size {
            let delta = (1.0 + rng.next_f64()) * SIGMA;
            let up = rng.next_f64() >= 0.5;
            // Keep the level within the band (see the module documentation): the sign is drawn as before and
            // flipped only when the step would leave the band.
            let up = if up { level + delta <= LEVEL + BAND_SIGMAS * SIGMA } else { level - delta < LEVEL - BAND_SIGMAS * SIGMA };
            level += if up { delta } else { -delta };
            truth.push(i);
            steps.push(delta / SIGMA);
            next_step = i + 100 + rng.below(401);
        }
        let mut v = level + SIGMA * rng.normal();
        if outliers && rng.next_f64() < 0.05 {
            v += if rng.next_f64() < 0.5 { -5.0 * SIGMA } else { 5.0 * SIGMA };
        }
        values.push(v);
    }
    Series { values, truth, steps }
}

/// Right found points, with one-to-one matching within [`TOLERANCE`] points.
fn matched(found: &[usize], truth: &[usize]) -> usize {
    let mut used = vec![false; truth.len()];
    let mut right = 0;
    for &f in found {
        let hit = truth
            .iter()
            .enumerate()
            .filter(|(k, &t)| !used[*k] && f.abs_diff(t) <= TOLERANCE)
            .min_by_key(|(_, &t)| f.abs_diff(t))
            .map(|(k, _)| k);
        if let Some(k) = hit {
            used[k] = true;
            right += 1;
        }
    }
    right
}

/// Counts pooled over seeds for one size and variant.
#[derive(Default)]
struct Tally {
    series: usize,
    truth: usize,
    found: usize,
    right: usize,
    seconds: f64,
}

impl Tally {
    fn precision(&self) -> f64 {
        if self.found == 0 { 1.0 } else { self.right as f64 / self.found as f64 }
    }
    fn recall(&self) -> f64 {
        if self.truth == 0 { 1.0 } else { self.right as f64 / self.truth as f64 }
    }
}

/// `A..=B` (inclusive), `A..B` (exclusive, as in Rust) or a single seed.
fn parse_seeds(text: &str) -> Result<Vec<u64>, Box<dyn std::error::Error>> {
    if let Some((a, b)) = text.split_once("..=") {
        return Ok((a.parse()?..=b.parse()?).collect());
    }
    if let Some((a, b)) = text.split_once("..") {
        return Ok((a.parse()?..b.parse()?).collect());
    }
    Ok(vec![text.parse()?])
}

/// With `BENCH_VERBOSE`: every true step missed by more than [`TOLERANCE`], told apart as a placement error (a
/// change point within [`NEAR`] points, just not close enough), a change point the verdict did not count, or a
/// detection error (none near); every found change point with no true step near it (false); and how often the
/// location interval covers the truth.
fn diagnose(series: &Series, all: &[ChangePoint]) {
    const NEAR: usize = 30;
    let found: Vec<&ChangePoint> = all.iter().filter(|c| c.verdict.is_change()).collect();
    let (mut placement, mut below_verdict, mut undetected, mut covered, mut near_total) = (0, 0, 0, 0, 0);
    for (t, step) in series.truth.iter().zip(&series.steps) {
        let nearest = found.iter().min_by_key(|c| c.index.abs_diff(*t));
        let distance = nearest.map_or(usize::MAX, |c| c.index.abs_diff(*t));
        if let Some(c) = nearest.filter(|_| distance <= NEAR) {
            near_total += 1;
            if c.index_low <= *t && *t <= c.index_high {
                covered += 1;
            }
            if distance > TOLERANCE {
                placement += 1;
                eprintln!(
                    "  placement: true {t} (step {step:.2} sigma) found {} interval {}..={}",
                    c.index, c.index_low, c.index_high
                );
            }
        } else if let Some(c) = all.iter().find(|c| !c.verdict.is_change() && c.index.abs_diff(*t) <= NEAR) {
            // The segmentation found it but the verdict did not count it (q above the level, or a change under
            // the minimum magnitude: the benchmark's level wanders, so a 1-sigma step can be under 1% of it).
            below_verdict += 1;
            eprintln!(
                "  found, not a change by the verdict: true {t} (step {step:.2} sigma) at {} change {:+.2}% q {:.1e}",
                c.index,
                c.change_pct.unwrap_or(f64::NAN),
                c.q.unwrap_or(1.0)
            );
        } else {
            undetected += 1;
            eprintln!("  undetected: true {t} (step {step:.2} sigma), nearest found {:?}", nearest.map(|c| c.index));
        }
    }
    let false_points: Vec<usize> =
        found.iter().map(|c| c.index).filter(|f| series.truth.iter().all(|t| t.abs_diff(*f) > NEAR)).collect();
    eprintln!(
        "  misses: {placement} placement, {below_verdict} not a change by the verdict, {undetected} undetected; {} false \
         {false_points:?}; interval covers the truth for {covered} of {near_total} detected steps",
        false_points.len()
    );
}

fn write_csv(dir: &std::path::Path, name: &str, series: &Series) -> std::io::Result<()> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join(format!("{name}.csv")))?);
    writeln!(f, "value")?;
    for v in &series.values {
        writeln!(f, "{v}")?;
    }
    let truth: Vec<String> = series.truth.iter().map(|t| t.to_string()).collect();
    std::fs::write(dir.join(format!("{name}.truth")), truth.join("\n") + "\n")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut out: Option<PathBuf> = None;
    let mut sizes = vec![1_000usize, 10_000, 100_000];
    let mut seeds = vec![7u64];
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--out" => out = Some(PathBuf::from(args.next().ok_or("--out needs a directory")?)),
            "--sizes" => {
                sizes = args.next().ok_or("--sizes needs a list")?.split(',').map(str::parse).collect::<Result<_, _>>()?
            }
            "--seed" => seeds = vec![args.next().ok_or("--seed needs a number")?.parse()?],
            "--seeds" => seeds = parse_seeds(&args.next().ok_or("--seeds needs a range such as 1..=20")?)?,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    if seeds.is_empty() {
        return Err("--seeds: the range is empty".into());
    }
    let options = TrackOptions::default();
    if let Some(dir) = &out {
        std::fs::create_dir_all(dir)?;
        println!("series written to {}", dir.display());
    }
    let seed_label = match (seeds.first(), seeds.last()) {
        (Some(a), Some(b)) if a != b => format!("{a}-{b}"),
        (Some(a), _) => a.to_string(),
        _ => String::new(),
    };
    println!(
        "{:>7} {:>9} {:>7} {:>6} {:>6} {:>9} {:>7} {:>9}",
        "points", "variant", "seeds", "true", "found", "precision", "recall", "seconds"
    );
    for &size in &sizes {
        for outliers in [false, true] {
            let variant = if outliers { "outliers" } else { "gaussian" };
            let mut tally = Tally::default();
            for &seed in &seeds {
                let series = generate(size, outliers, seed ^ (size as u64) ^ (outliers as u64) << 40);
                if let Some(dir) = &out {
                    write_csv(dir, &format!("{size}-{variant}-{seed}"), &series)?;
                }
                let points: Vec<Vec<f64>> = series.values.iter().map(|&v| vec![v]).collect();
                let started = Instant::now();
                let analysis = analyze(&points, &options)?;
                let mut all = vec![(String::new(), analysis)];
                decide(&mut all, &options);
                tally.seconds += started.elapsed().as_secs_f64();
                let found: Vec<usize> =
                    all[0].1.change_points.iter().filter(|c| c.verdict.is_change()).map(|c| c.index).collect();
                if std::env::var_os("BENCH_VERBOSE").is_some() {
                    eprintln!("{size} {variant} seed {seed}:");
                    diagnose(&series, &all[0].1.change_points);
                }
                tally.series += 1;
                tally.truth += series.truth.len();
                tally.found += found.len();
                tally.right += matched(&found, &series.truth);
            }
            println!(
                "{size:>7} {variant:>9} {seed_label:>7} {:>6} {:>6} {:>9.3} {:>7.3} {:>9.4}",
                tally.truth,
                tally.found,
                tally.precision(),
                tally.recall(),
                tally.seconds / tally.series as f64
            );
        }
    }
    // Incremental: the time to append one point to a 10,000-point series and list the change points again.
    let series = generate(10_100, true, seeds[0]);
    let mut tracker = Tracker::new(options.clone())?;
    let head: Vec<&[f64]> = series.values[..10_000].iter().map(std::slice::from_ref).collect();
    tracker.extend(head);
    let mut worst: f64 = 0.0;
    let mut total = 0.0;
    for v in &series.values[10_000..] {
        let started = Instant::now();
        tracker.push(std::slice::from_ref(v));
        let analysis = tracker.analysis()?;
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        std::hint::black_box(analysis);
        worst = worst.max(ms);
        total += ms;
    }
    println!("append one point to a 10,000-point series and update: mean {:.3} ms, worst {:.3} ms (100 appends)", total / 100.0, worst);
    Ok(())
}
