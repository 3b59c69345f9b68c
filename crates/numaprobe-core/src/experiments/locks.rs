//! Lock and atomic contention (seed 000 §3.5): threads on chosen CPUs
//! update a shared counter by atomic add and under a spin lock, or their own
//! counters on one line or on their own lines.

use super::{ExperimentError, StepProgress};
use crate::model::locks::LocksResult;
use crate::stats::StopRule;
use crate::topology::Topology;

#[derive(Debug, Clone, Default)]
pub struct LocksConfig {
    /// Explicit CPUs; default: placements chosen from the topology.
    pub cpus: Option<Vec<u32>>,
    pub rule: Option<StopRule>,
}

#[derive(Debug, Clone)]
pub struct LocksPlan {
    pub rule: StopRule,
    /// (op, sharing, placement, cpus) in run order.
    pub runs: Vec<(String, String, String, Vec<u32>)>,
}

impl LocksPlan {
    pub fn steps(&self) -> usize {
        self.runs.len()
    }
}

pub fn plan(_topo: &Topology, _cfg: &LocksConfig) -> Result<LocksPlan, ExperimentError> {
    Err(ExperimentError::Invalid("locks is not built yet".into()))
}

pub fn run(
    _plan: &LocksPlan,
    _progress: &mut dyn StepProgress,
) -> Result<LocksResult, ExperimentError> {
    Err(ExperimentError::Invalid("locks is not built yet".into()))
}
