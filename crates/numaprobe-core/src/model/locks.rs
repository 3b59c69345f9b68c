//! Lock and atomic contention (AMD 40555 §3.5, `numaprobe c2c --locks`): N
//! threads on chosen CPUs update one shared counter (atomic add, spin lock)
//! or each its own counter on one line (false sharing) or on its own line;
//! throughput and cost per operation as threads and placement grow.

use crate::stats::sketch::{self, Sketch};
use crate::stats::StopRule;
use crate::timer::TimerInfo;
use serde::{Deserialize, Serialize};

/// One run: an operation, a sharing, a placement and a thread count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LockRun {
    /// `atomic_add` or `spin_lock`.
    pub op: String,
    /// `shared` (one counter), `false_sharing` (own counters, one line),
    /// `own_line` (own counters, own lines).
    pub sharing: String,
    /// `same_core`, `same_l3`, `same_node`, `cross_node`, `cpus` (given),
    /// or `single` (the one-thread baseline, no contention).
    pub placement: String,
    pub cpus: Vec<u32>,
    /// The NUMA node of each of `cpus`, in the same order.
    #[serde(default)]
    pub nodes: Vec<u32>,
    /// The node holding the counters' page (first touch by the first
    /// thread, checked with `move_pages`); null where it could not be read.
    #[serde(default)]
    pub memory_node: Option<u32>,
    pub threads: usize,
    /// Operations per second of all threads together (median of samples).
    pub ops_per_s: f64,
    /// Wall ns per operation of one thread (threads / ops_per_s).
    pub ns_per_op: f64,
    pub cv: f64,
    /// Every kept sample (ops/s); empty in a document that leaves them out
    /// (`sketch` then).
    pub samples: Vec<f64>,
    /// Their count and quantiles, in a document that leaves the samples
    /// out (unless `--keep-samples`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sketch: Option<Sketch>,
    /// Why sampling stopped (`cv_reached`, `budget_spent`, ...).
    #[serde(default)]
    pub stop: String,
    /// Slices set aside because a thread lost its CPU during them
    /// ([`crate::held`]), by reason: never part of `samples`.
    #[serde(default)]
    pub set_aside: crate::stats::SetAside,
    /// True when the row must not be trusted as is (see `flags`).
    #[serde(default)]
    pub flagged: bool,
    /// Why ([`crate::stats::flags::figure_flags`] of the ops/s samples).
    #[serde(default)]
    pub flags: Vec<String>,
}

impl LockRun {
    /// How many samples the run kept, whether or not the document has them.
    pub fn kept(&self) -> usize {
        sketch::kept(&self.samples, self.sketch.as_ref())
    }

    /// Replace the samples by their sketch (nothing for a run without).
    pub fn leave_out_samples(&mut self) {
        sketch::leave_out(&mut self.samples, &mut self.sketch);
    }
}

/// A run that could not be measured or whose counters did not add up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LockFailed {
    pub op: String,
    pub sharing: String,
    pub placement: String,
    pub cpus: Vec<u32>,
    pub reason: String,
}

/// `numaprobe c2c --locks`'s document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocksResult {
    pub schema: String,
    /// How the read-modify-writes ran: "lse", "load/store exclusive", "x86 lock".
    pub atomics: String,
    pub runs: Vec<LockRun>,
    #[serde(default)]
    pub failed: Vec<LockFailed>,
    /// The sampling rule of each run (its budget is the time per run).
    #[serde(default)]
    pub stop_rule: Option<StopRule>,
    /// Length of one timed slice (one sample), seconds.
    #[serde(default)]
    pub slice_s: f64,
    pub timer: TimerInfo,
    pub notes: Vec<String>,
    pub complete: bool,
    #[serde(default)]
    pub interrupted: bool,
}

impl LocksResult {
    /// Every run's samples replaced by their sketch.
    pub fn leave_out_samples(&mut self) {
        self.runs.iter_mut().for_each(LockRun::leave_out_samples);
    }
}
