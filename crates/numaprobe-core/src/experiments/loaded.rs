//! Loaded latency: a chase thread measures latency while the other allowed
//! CPUs of its node stream to a memory node at decreasing injected delays.

use super::{ExperimentError, StepProgress};
use crate::model::loaded::LoadedResult;
use crate::placement::PageKind;
use crate::stats::StopRule;
use crate::topology::Topology;

#[derive(Debug, Clone, Default)]
pub struct LoadedConfig {
    /// (cpu node, memory node) pairs; default: local and the worst remote.
    pub pairs: Option<Vec<(u32, u32)>>,
    /// `read`, `3:1`, `2:1`, `1:1`, `nt-write`; default: read.
    pub mixes: Option<Vec<String>>,
    /// Injected delays, heaviest last; default: a geometric series.
    pub delays: Option<Vec<u32>>,
    /// Buffer bytes per thread.
    pub size: Option<u64>,
    pub pages: Option<PageKind>,
    /// Per point.
    pub rule: Option<StopRule>,
}

#[derive(Debug, Clone)]
pub struct LoadedPlan {
    pub pairs: Vec<(u32, u32)>,
    pub mixes: Vec<String>,
    pub delays: Vec<u32>,
    pub size: u64,
    pub rule: StopRule,
}

impl LoadedPlan {
    /// One step per point: idle plus every delay, per pair and mix.
    pub fn steps(&self) -> usize {
        self.pairs.len() * self.mixes.len() * (self.delays.len() + 1)
    }
}

pub fn plan(_topo: &Topology, _cfg: &LoadedConfig) -> Result<LoadedPlan, ExperimentError> {
    Err(ExperimentError::Invalid(
        "loaded-latency is not built yet".into(),
    ))
}

pub fn run(
    _plan: &LoadedPlan,
    _progress: &mut dyn StepProgress,
) -> Result<LoadedResult, ExperimentError> {
    Err(ExperimentError::Invalid(
        "loaded-latency is not built yet".into(),
    ))
}
