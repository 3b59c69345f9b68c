//! The two-thread contention study of AMD 40555 (with
//! its "Threads firing at each other (crossfire)" figure): thread labels,
//! hop counts from distance levels, background load definitions, the preset
//! planners, the arrays' size within the footprint limit, the runner and the
//! hop-myths search. Results go to `model::study`.

pub mod background;
pub use crate::model::hops;
pub mod label;
pub mod myths;
pub mod plan;
pub mod presets;
pub mod runner;
pub mod size;
#[cfg(test)]
pub(crate) mod testing;

pub use background::{BackgroundDefinitions, LoadLevel, Subscription};
pub use hops::{DistanceSource, HopMap};
pub use label::{parse_label, parse_labels, Access, LabelError, Mix, ThreadSpec};
pub use plan::{plan_custom, PlanOptions, Preset, StudyPlan};
pub use presets::plan_preset;

/// What can go wrong planning or running the study. Messages are one line and
/// name the offending value and what would have been valid.
#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    #[error(transparent)]
    Label(#[from] LabelError),
    #[error("`{label}`: node {node} has no allowed CPUs (CPU nodes: {valid})")]
    NoSuchCpuNode {
        label: String,
        node: u32,
        valid: String,
    },
    #[error("`{label}`: node {node} has {cores} allowed cores (core indices 0-{last})", last = cores.saturating_sub(1))]
    NoSuchCore {
        label: String,
        node: u32,
        cores: usize,
    },
    #[error("`{label}`: memory node {node} is not an allowed memory node (allowed: {valid})")]
    NoSuchMemNode {
        label: String,
        node: u32,
        valid: String,
    },
    #[error("`{case}`: two threads on the same core (CPU {cpu}); give each thread its own core")]
    SharedCore { case: String, cpu: u32 },
    #[error("no thread labels given: name a preset or at least one label such as 0.0.w.1")]
    NoThreads,
    #[error("--mix all needs every case to have the same number of threads, at most {max}")]
    MixShape { max: usize },
    #[error("this process may use no CPU on any NUMA node")]
    NoCpus,
    #[error(transparent)]
    Placement(#[from] crate::placement::PlacementError),
    #[error("CPU {0} has no NUMA node in the topology, so its background buffer cannot be placed")]
    CpuWithoutNode(u32),
    #[error(transparent)]
    Footprint(#[from] size::DoesNotFit),
    #[error("a measurement thread panicked")]
    ThreadPanicked,
}
