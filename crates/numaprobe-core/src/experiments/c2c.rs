//! Cache-line transfer between CPUs: ping-pong on one line between two
//! pinned threads, the line modified by the other side (HITM) or read-shared,
//! for every pair of the chosen CPUs (by default representatives of each
//! sharing domain on big machines).

use super::{ExperimentError, StepProgress};
use crate::model::c2c::C2cResult;
use crate::stats::StopRule;
use crate::topology::Topology;

/// What the user asked for; `None` means "the default".
#[derive(Debug, Clone, Default)]
pub struct C2cConfig {
    /// The CPUs to measure between; default: every allowed CPU on small
    /// machines, representatives per sharing domain on big ones.
    pub cpus: Option<Vec<u32>>,
    /// Default: a short per-pair budget.
    pub rule: Option<StopRule>,
}

/// Everything resolved and checked.
#[derive(Debug, Clone)]
pub struct C2cPlan {
    pub cpus: Vec<u32>,
    /// Ordered pairs (a, b) in run order.
    pub pairs: Vec<(u32, u32)>,
    pub rule: StopRule,
}

impl C2cPlan {
    /// Steps reported to [`StepProgress`], one per pair.
    pub fn steps(&self) -> usize {
        self.pairs.len()
    }
}

pub fn plan(_topo: &Topology, _cfg: &C2cConfig) -> Result<C2cPlan, ExperimentError> {
    Err(ExperimentError::Invalid("c2c is not built yet".into()))
}

pub fn run(
    _plan: &C2cPlan,
    _progress: &mut dyn StepProgress,
) -> Result<C2cResult, ExperimentError> {
    Err(ExperimentError::Invalid("c2c is not built yet".into()))
}
