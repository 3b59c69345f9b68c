//! System peak bandwidth: every allowed CPU of every node streaming its own
//! node's memory at once, per mix, beside each node alone.

use super::{ExperimentError, StepProgress};
use crate::model::peak::PeakResult;
use crate::placement::PageKind;
use crate::stats::StopRule;
use crate::topology::Topology;

#[derive(Debug, Clone, Default)]
pub struct PeakConfig {
    /// `read`, `3:1`, `2:1`, `1:1`, `nt-write`; default: read.
    pub mixes: Option<Vec<String>>,
    /// Buffer bytes per thread.
    pub size: Option<u64>,
    pub pages: Option<PageKind>,
    pub rule: Option<StopRule>,
    /// Also measure each node alone (default true for `numaprobe peak`).
    pub per_node: bool,
}

#[derive(Debug, Clone)]
pub struct PeakPlan {
    pub nodes: Vec<u32>,
    pub mixes: Vec<String>,
    pub size: u64,
    pub rule: StopRule,
    pub per_node: bool,
}

impl PeakPlan {
    pub fn steps(&self) -> usize {
        self.mixes.len() * (1 + if self.per_node { self.nodes.len() } else { 0 })
    }
}

pub fn plan(_topo: &Topology, _cfg: &PeakConfig) -> Result<PeakPlan, ExperimentError> {
    Err(ExperimentError::Invalid("peak is not built yet".into()))
}

pub fn run(
    _plan: &PeakPlan,
    _progress: &mut dyn StepProgress,
) -> Result<PeakResult, ExperimentError> {
    Err(ExperimentError::Invalid("peak is not built yet".into()))
}
