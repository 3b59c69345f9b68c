//! The latency matrix (McCalpin's remote-latency measurements): one thread
//! on a CPU of node i chases pointers through a buffer bound to node j, for
//! every (i, j).
//!
//! One buffer per memory node (DESIGN: set-up grows with nodes, not cells):
//! a thread pinned to a CPU of node j (the nearest CPU node's for a node
//! without CPUs, see [`node_buffers::toucher`]) maps it with `MPOL_BIND`,
//! touches every page and writes the chain once; then every CPU node's cell
//! is measured on it, column by column. Each cell's thread is pinned
//! (checked), flushes the buffer from every cache (what the cell before it
//! left there would otherwise answer some of its loads), takes a short
//! probe to size its samples, samples under the stop rule, and asks the
//! kernel where the pages are. The buffer is freed before the next memory
//! node's is set up, so one buffer is resident at a time.
//!
//! Right before a buffer is set up, the memory node's allocatable figure is
//! read again ([`super::MemoryGauge`]): free memory moves during a long run.
//! A cell that cannot be measured (its memory does not fit, a kernel call
//! fails, its thread panics) is recorded in `failed` and the run goes on.
//!
//! This file is the plan (what the user asked for, checked against the
//! topology); `run.rs` measures it.

mod handed;
mod run;
mod sampling;

pub use handed::{Chained, Handed};
pub use run::{run, run_with, set_up_node, set_up_node_by};
pub(crate) use sampling::sample_chain;

use super::node_buffers::{page_table_notes, touchers};
use super::{resolve_nodes, ExperimentError};
use crate::kernels::chase::ChasePattern;
use crate::placement::{BufferSpec, LiveSystem, MemPolicy, PageKind};
use crate::stats::StopRule;
use crate::topology::Topology;

/// What the user asked for; `None` means "the default".
#[derive(Debug, Clone, Default)]
pub struct LatencyConfig {
    pub cpu_nodes: Option<Vec<u32>>,
    /// The CPUs that run the chase (`--cpus`, see [`super::cpus`]): one per
    /// row node; without `cpu_nodes` the rows are their nodes. Default: the
    /// first allowed core of every row node.
    pub cpus: Option<Vec<u32>>,
    pub mem_nodes: Option<Vec<u32>>,
    /// Buffer bytes; default [`super::default_size`].
    pub size: Option<u64>,
    /// Bytes between chased lines; default 64 for random (every line of the
    /// buffer), 128 for stride (the value of McCalpin's remote-latency measurements).
    pub stride: Option<u64>,
    /// Default: random, no TLB window.
    pub pattern: Option<ChasePattern>,
    /// Default: [`super::default_pages`].
    pub pages: Option<PageKind>,
    /// Default: [`StopRule::default`].
    pub rule: Option<StopRule>,
    /// Seed of the random chain (a fixed default so runs are repeatable).
    pub seed: Option<u64>,
}

/// Everything resolved and checked; running it allocates and measures.
#[derive(Debug, Clone)]
pub struct LatencyPlan {
    /// Notes for the whole matrix known at plan time (a memory-side cache
    /// in front of a memory node).
    pub notes: Vec<String>,
    pub cpu_nodes: Vec<u32>,
    pub mem_nodes: Vec<u32>,
    /// (cpu node, CPU that will run the chase, memory node), in run order.
    pub cells: Vec<(u32, u32, u32)>,
    /// (memory node, CPU that sets up its buffer).
    pub touchers: Vec<(u32, u32)>,
    pub size: u64,
    /// True when the size was asked for: a cell it does not fit fails; a
    /// default size is reduced for that cell instead (and the cell flagged).
    pub size_explicit: bool,
    pub stride: u64,
    pub pattern: ChasePattern,
    pub pages: PageKind,
    pub rule: StopRule,
    pub seed: u64,
    /// A buffer set up before the run (the main job's calibration on a
    /// real buffer), used instead of setting that node's up again.
    pub handed: Handed,
}

pub const DEFAULT_SEED: u64 = 0x6e75_6d61_7072_6f62; // "numaprob"

/// Resolve defaults and check everything against the topology and the live
/// machine. Nothing is allocated here.
pub fn plan(topo: &Topology, cfg: &LatencyConfig) -> Result<LatencyPlan, ExperimentError> {
    let (mut cpu_nodes, mem_nodes) =
        resolve_nodes(topo, cfg.cpu_nodes.as_deref(), cfg.mem_nodes.as_deref())?;
    let chosen = cfg
        .cpus
        .as_deref()
        .map(|c| super::cpus::resolve(topo, c))
        .transpose()?;
    if let Some(ch) = &chosen {
        cpu_nodes = ch.rows(cfg.cpu_nodes.as_deref())?;
    }
    let live = LiveSystem::read()?;
    let pattern = cfg
        .pattern
        .unwrap_or(ChasePattern::Random { window_pages: None });
    let stride = cfg.stride.unwrap_or(match pattern {
        ChasePattern::Random { .. } => 64,
        ChasePattern::Stride => 128,
    });
    if stride < 8 || !stride.is_multiple_of(8) || stride > 1 << 30 {
        return Err(ExperimentError::Invalid(format!(
            "stride {stride} B: must be a multiple of 8 B between 8 B and 1 GiB"
        )));
    }
    let pages = cfg.pages.unwrap_or_else(|| super::default_pages(&live));
    let size = cfg
        .size
        .unwrap_or_else(|| super::default_size(topo, &live, &mem_nodes));
    if size < 2 * stride {
        return Err(ExperimentError::Invalid(format!(
            "size {size} B holds fewer than 2 lines of {stride} B"
        )));
    }
    let size_usize = usize::try_from(size)
        .map_err(|_| ExperimentError::Invalid(format!("size {size} B is too large")))?;
    // What can never fit fails here, before anything is measured; what does
    // not fit now is checked again by each cell (memory comes and goes).
    for &m in &mem_nodes {
        BufferSpec::new(size_usize, MemPolicy::Bind(m), pages).check_capacity(&live, None)?;
    }
    if size / stride > u32::MAX as u64 {
        return Err(ExperimentError::Invalid(format!(
            "size {size} B with stride {stride} B has more lines than the chase can index (2^32); use a larger stride or a smaller size"
        )));
    }
    let mut cells = Vec::new();
    for &c in &cpu_nodes {
        if let Some(ch) = &chosen {
            let cpu = ch.single_on(c)?;
            for &m in &mem_nodes {
                cells.push((c, cpu, m));
            }
            continue;
        }
        // The node's first core: "a CPU of node i", stable from run to run.
        let cpu =
            *topo
                .allowed_core_cpus_of_node(c)
                .first()
                .ok_or(ExperimentError::CpuLessNode {
                    node: c,
                    cpu_nodes: topo.allowed_cpu_nodes(),
                })?;
        for &m in &mem_nodes {
            cells.push((c, cpu, m));
        }
    }
    let mut notes = super::memory_side_notes(topo, &mem_nodes);
    notes.extend(chosen.map(|c| c.note()));
    let touchers = touchers(topo, &mem_nodes)?;
    notes.extend(page_table_notes(topo, &touchers));
    Ok(LatencyPlan {
        notes,
        cpu_nodes,
        mem_nodes,
        cells,
        touchers,
        size,
        size_explicit: cfg.size.is_some(),
        stride,
        pattern,
        pages,
        rule: cfg.rule.unwrap_or_default(),
        seed: cfg.seed.unwrap_or(DEFAULT_SEED),
        handed: Handed::default(),
    })
}

#[cfg(test)]
mod tests;
