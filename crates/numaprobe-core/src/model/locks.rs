//! Lock and atomic contention (seed 000 §3.5, `numaprobe c2c --locks`): N
//! threads on chosen CPUs update one shared counter (atomic add, spin lock)
//! or each its own counter on one line (false sharing) or on its own line;
//! throughput and cost per operation as threads and placement grow.

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
    /// `same_core`, `same_l3`, `same_node`, `cross_node` or `cpus` (given).
    pub placement: String,
    pub cpus: Vec<u32>,
    pub threads: usize,
    /// Operations per second of all threads together (median of samples).
    pub ops_per_s: f64,
    /// Wall ns per operation of one thread (threads / ops_per_s).
    pub ns_per_op: f64,
    pub cv: f64,
    pub samples: Vec<f64>,
}

/// `numaprobe c2c --locks`'s document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocksResult {
    pub schema: String,
    /// How the read-modify-writes ran: "lse", "load/store exclusive", "x86 lock".
    pub atomics: String,
    pub runs: Vec<LockRun>,
    pub timer: TimerInfo,
    pub notes: Vec<String>,
    pub complete: bool,
    #[serde(default)]
    pub interrupted: bool,
}
