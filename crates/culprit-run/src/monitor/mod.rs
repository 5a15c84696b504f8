//! Monitors: samplers that run alongside a benchmark and record what the system did (CPU shares, memory, interrupts,
//! perf events), one module per monitor, one [`Monitor`] trait, one registry.

use culprit_core::model::{MonitorSeries, RawOutput};
use std::collections::BTreeMap;
use thiserror::Error;

/// Why a monitor could not start, sample or finish. A monitor failure never fails the benchmark run: the run
/// goes on and the failure is recorded with it.
#[derive(Debug, Error)]
pub enum MonitorError {
    #[error("unknown monitor '{name}'; known monitors: {known}")]
    Unknown { name: String, known: String },
    #[error("monitor {monitor}: cannot read {path}: {source}")]
    Read { monitor: &'static str, path: String, source: std::io::Error },
    #[error("monitor {monitor}: {detail}")]
    Failed { monitor: &'static str, detail: String },
    #[error("monitor {monitor} needs '{program}' ({package}): {detail}")]
    MissingProgram { monitor: &'static str, program: &'static str, package: &'static str, detail: String },
}

/// What a monitor hands back when the run ends.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MonitorOutput {
    /// Per-interval samples, named without the monitor prefix (`cpu.id`), with their times since the run started.
    pub series: MonitorSeries,
    /// The per-run reduction, with the monitor prefix (`vmstat.cpu.id`): the mean of gauges, last minus first of
    /// event counters, as lkp does.
    pub metrics: BTreeMap<String, f64>,
    /// Raw files worth keeping (a perf report, the perf-stat log).
    pub raw: Vec<RawOutput>,
}

/// One monitor. In-process samplers do their work in [`Monitor::sample`], called from the sampling thread every
/// interval; monitors that wrap an external program (perf) start it in [`Monitor::start`] and collect it in
/// [`Monitor::finish`].
pub trait Monitor: Send {
    /// The lkp monitor name, which is also the metric prefix (`vmstat`, `meminfo`, `perf-stat`, ...).
    fn name(&self) -> &'static str;
    /// Called once, just before the benchmark starts.
    fn start(&mut self) -> Result<(), MonitorError>;
    /// Called every interval while the benchmark runs; `elapsed` is seconds since `start`.
    fn sample(&mut self, elapsed: f64) -> Result<(), MonitorError>;
    /// Called once after the benchmark ended: stop and return what was gathered.
    fn finish(&mut self) -> Result<MonitorOutput, MonitorError>;
}
