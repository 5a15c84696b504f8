//! Speed of the change-point search of `culprit track --series` (`culprit_core::changepoint::analyze` and
//! `decide`) on long series with few or no changes, where a search that prunes only at change points turns
//! quadratic. The figures behind `docs/statistics.md`, `## Track`, "Speed on long series".
//!
//! ```sh
//! cargo run --release -p culprit-core --example track_speed -- [--sizes 1000,10000,100000] [--seed 7] [--out DIR]
//! ```
//!
//! Two series per size, one run per point: pure Gaussian noise (sigma 2 around 100), and the same noise with three
//! steps of 3 sigma at a quarter, half and three quarters of the series (up, up, down). Each row gives the change
//! points found (counted by the verdict) and the seconds of one analysis (the mean of several repeats below
//! 100,000 points, so the small rows are not timer noise). With `--out DIR` every series is also written as a
//! one-column CSV (`noise-<points>.csv`, `steps-<points>.csv`) for timing `culprit track --series` itself.

use culprit_core::changepoint::{analyze, decide, TrackOptions};
use culprit_core::rng::Rng;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

const LEVEL: f64 = 100.0;
const SIGMA: f64 = 2.0;
/// Size of each step of the `steps` series, in noise units: large enough that every analysis finds all three.
const STEP_SIGMAS: f64 = 3.0;

fn series(points: usize, steps: bool, seed: u64) -> Vec<f64> {
    let mut rng = Rng::new(seed ^ points as u64);
    (0..points)
        .map(|i| {
            let step = |at: usize| if i >= points * at / 4 { STEP_SIGMAS * SIGMA } else { 0.0 };
            let level = if steps { LEVEL + step(1) + step(2) - step(3) } else { LEVEL };
            level + SIGMA * rng.normal()
        })
        .collect()
}

fn write_csv(path: &std::path::Path, values: &[f64]) -> std::io::Result<()> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(f, "value")?;
    for v in values {
        writeln!(f, "{v}")?;
    }
    f.flush()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut out: Option<PathBuf> = None;
    let mut sizes = vec![1_000usize, 10_000, 100_000];
    let mut seed = 7u64;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--out" => out = Some(PathBuf::from(args.next().ok_or("--out needs a directory")?)),
            "--sizes" => {
                sizes =
                    args.next().ok_or("--sizes needs a list")?.split(',').map(str::parse).collect::<Result<_, _>>()?
            }
            "--seed" => seed = args.next().ok_or("--seed needs a number")?.parse()?,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    if let Some(dir) = &out {
        std::fs::create_dir_all(dir)?;
    }
    let options = TrackOptions::default();
    println!("| points | series | change points | seconds |");
    println!("|---:|---|---:|---:|");
    for &size in &sizes {
        for steps in [false, true] {
            let name = if steps { "noise + 3 steps" } else { "pure noise" };
            let values = series(size, steps, seed);
            if let Some(dir) = &out {
                write_csv(&dir.join(format!("{}-{size}.csv", if steps { "steps" } else { "noise" })), &values)?;
            }
            let points: Vec<Vec<f64>> = values.iter().map(|&v| vec![v]).collect();
            // Enough repeats for about 100,000 points of work, so the rows of small series are not timer noise.
            let repeats = (100_000 / size.max(1)).clamp(1, 100);
            let mut found = 0;
            let started = Instant::now();
            for _ in 0..repeats {
                let mut all = vec![(String::new(), analyze(&points, &options)?)];
                decide(&mut all, &options);
                found = all[0].1.change_points.iter().filter(|c| c.verdict.is_change()).count();
            }
            let seconds = started.elapsed().as_secs_f64() / repeats as f64;
            println!("| {size} | {name} | {found} | {seconds:.4} |");
        }
    }
    Ok(())
}
