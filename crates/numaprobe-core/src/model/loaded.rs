//! Loaded latency (`numaprobe loaded-latency`): one chase thread's latency
//! while load threads stream at decreasing injected delays, from idle to
//! saturation, per traffic mix and node pair; the curve, its knee and peak.

use crate::timer::TimerInfo;
use serde::{Deserialize, Serialize};

/// One point of a curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadPoint {
    /// Injected delay of the load threads (work units between lines; larger
    /// is lighter; `None` is idle: no load threads).
    pub delay: Option<u32>,
    /// Achieved bandwidth of every thread, the chase's included, GB/s.
    pub bandwidth_gbs: f64,
    /// Median, 90th and 99th percentile of the chase windows' ns per load
    /// (one distribution, so `latency_ns <= p90_ns <= p99_ns`).
    pub latency_ns: f64,
    pub p90_ns: f64,
    pub p99_ns: f64,
    /// Load threads that ran during the point (0 at idle).
    #[serde(default)]
    pub load_threads: u32,
    /// Short chase windows the percentiles are taken over.
    #[serde(default)]
    pub windows: usize,
    /// Why the point stopped sampling (`cv_reached`, `budget_spent`, ...).
    #[serde(default)]
    pub stop: Option<crate::stats::StopReason>,
    /// Samples set aside because the chase thread or a load thread lost its
    /// CPU during them (their windows are not among the percentiles', nor
    /// their bytes in the bandwidth).
    #[serde(default)]
    pub set_aside: crate::stats::SetAside,
    /// CPUs other tasks kept busy beside the point, on average
    /// ([`crate::beside`]); absent where it could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_busy_cpus: Option<f64>,
    /// Why this point's latency cannot be taken as is (the rule every
    /// figure follows, `stats::flags`, and other tasks' busy CPUs beside
    /// it); empty for a trusted point. Written as `flag_ids` into the
    /// curve's `flag_texts` ([`super::reasons`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
}

impl super::reasons::Flagged for LoadPoint {
    fn flags_mut(&mut self) -> &mut Vec<String> {
        &mut self.flags
    }
}

/// One curve: a CPU node, a memory node and a traffic mix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Curve {
    pub cpu_node: u32,
    pub mem_node: u32,
    /// `read`, `3:1`, `2:1`, `1:1` (reads:writes) or `nt-write`.
    pub mix: String,
    pub chase_cpu: u32,
    pub load_cpus: Vec<u32>,
    /// Idle first, then heavier; written with their flags' texts once, in
    /// `flag_texts`.
    #[serde(flatten, with = "super::reasons")]
    pub points: Vec<LoadPoint>,
    /// Index into `points` of the knee (where latency starts to climb).
    pub knee: Option<usize>,
    /// Highest achieved bandwidth of the curve, GB/s.
    pub peak_gbs: f64,
    /// Fraction of the buffers' pages on `mem_node`.
    pub placement: f64,
    /// Buffer bytes of each thread (the chase's and every load thread's).
    #[serde(default)]
    pub size_bytes: u64,
    /// Page kind of the buffers (`4k`, `thp`, `2m`, `1g`).
    #[serde(default)]
    pub pages: String,
}

/// `numaprobe loaded-latency`'s document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadedResult {
    pub schema: String,
    pub curves: Vec<Curve>,
    pub timer: TimerInfo,
    /// The stop rule of a point (before a budget-keeping caller adjusts it).
    #[serde(default)]
    pub rule: Option<crate::stats::StopRule>,
    /// Vector width of the load threads' read kernel (`avx512`, `neon`, ...),
    /// as `bandwidth` records it.
    #[serde(default)]
    pub vector: String,
    pub notes: Vec<String>,
    #[serde(default)]
    pub failed: Vec<String>,
    pub complete: bool,
    #[serde(default)]
    pub interrupted: bool,
}
