//! The result model of `pin`: the CPU list in thread order, the nodes and
//! packages used and the command lines to paste. The serde form is the JSON
//! contract documented in doc/json.md (`numaprobe/1`). `analysis::pin_report`
//! builds it from a binding; `render::pin` draws it.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadPlace {
    pub thread: usize,
    pub cpu: u32,
    pub package: Option<i64>,
    pub node: Option<u32>,
    pub core: Option<i64>,
    /// 0 for a core's first hardware thread, 1 for its second, ...
    pub smt_rank: usize,
}

/// Ready-to-paste forms of the same placement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Commands {
    pub taskset: String,
    pub numactl: String,
    pub omp_places: String,
    pub omp_proc_bind: String,
    pub gomp_cpu_affinity: String,
    pub kmp_affinity: String,
    pub srun: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PinReport {
    pub schema: String,
    pub strategy: String,
    pub smt: String,
    pub threads: usize,
    /// Node restriction given with `--nodes`, if any.
    pub restricted_to_nodes: Option<Vec<u32>>,
    /// OS CPU numbers in thread order: thread i runs on `cpus[i]`.
    pub cpus: Vec<u32>,
    pub nodes: Vec<u32>,
    pub packages: Vec<i64>,
    /// Nodes given to `numactl --membind`: `nodes` whose memory may be used.
    pub mem_nodes: Vec<u32>,
    pub placement: Vec<ThreadPlace>,
    pub commands: Commands,
    /// The naive `first N CPU numbers` and what is wrong with it.
    pub naive_cpus: Vec<u32>,
    pub naive_problems: Vec<String>,
    pub warnings: Vec<String>,
}
