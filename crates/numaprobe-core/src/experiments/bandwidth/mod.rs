//! The bandwidth matrix (the RWTH Aachen blog on an 8-socket Nehalem-EX):
//! N threads pinned to the cores of node i stream memory bound to node j;
//! and `--scaling`, one node pair for 1..N threads (the iXBT Opteron
//! study's "how many threads saturate a node").
//!
//! One buffer per memory node (DESIGN: set-up grows with nodes, not cells):
//! a thread pinned to a CPU of node j (the nearest CPU node's for a node
//! without CPUs) maps it with `MPOL_BIND` and touches every page once;
//! then every CPU node's cell streams it, column by column, each of the
//! cell's threads its own contiguous share. Before a cell the buffer is
//! flushed from every cache (dirty lines a write cell left in another
//! node's cache would otherwise be written back on this cell's time). The
//! workers are pinned (checked) and wait on a barrier; every sample
//! releases them together, each times its own passes, and the sample is
//! the bytes all threads asked for divided by the span from the earliest
//! start to the latest end. The pages are verified after each cell's last
//! sample; the buffer is freed before the next memory node's is set up.
//!
//! Right before a buffer is set up, its size is checked against the memory
//! node's allocatable figure, read again then ([`super::MemoryGauge`]). A
//! cell that cannot be measured is recorded in `failed` and the run goes
//! on.
//!
//! This file is the plan (what the user asked for, checked against the
//! topology); `run.rs` measures it.

mod run;

pub use run::{run, run_with};

use super::{resolve_nodes, ExperimentError};
use crate::kernels::stream::StreamOp;
use crate::kernels::VectorWidth;
use crate::placement::{BufferSpec, LiveSystem, MemPolicy, PageKind};
use crate::stats::StopRule;
use crate::topology::Topology;

/// What the user asked for; `None` means "the default".
#[derive(Debug, Clone, Default)]
pub struct BandwidthConfig {
    pub cpu_nodes: Option<Vec<u32>>,
    /// The CPUs the threads run on (`--cpus`, see [`super::cpus`]): a row
    /// node's threads use the listed CPUs on it (the first `threads` of
    /// them); without `cpu_nodes` the rows are their nodes. Default: one
    /// per physical core of every row node.
    pub cpus: Option<Vec<u32>>,
    pub mem_nodes: Option<Vec<u32>>,
    /// Total bytes over all threads; default [`super::default_size`].
    pub size: Option<u64>,
    /// Default: read.
    pub op: Option<StreamOp>,
    /// Threads per cell; default one per physical core of the CPU node.
    pub threads: Option<usize>,
    /// Measure 1..N threads on the first CPU node and first memory node
    /// (N = `threads`, or every allowed CPU of the node).
    pub scaling: bool,
    pub pages: Option<PageKind>,
    pub rule: Option<StopRule>,
    /// Default: the widest the CPU has.
    pub width: Option<VectorWidth>,
}

/// One cell to measure: which node pair, on which CPUs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedCell {
    pub cpu_node: u32,
    pub mem_node: u32,
    pub cpus: Vec<u32>,
}

#[derive(Debug, Clone)]
pub struct BandwidthPlan {
    /// Notes for the whole matrix known at plan time (a memory-side cache
    /// in front of a memory node).
    pub notes: Vec<String>,
    pub cpu_nodes: Vec<u32>,
    pub mem_nodes: Vec<u32>,
    pub cells: Vec<PlannedCell>,
    /// (memory node, CPU that sets up its buffer).
    pub touchers: Vec<(u32, u32)>,
    /// True when `cells` are a thread-count series on one node pair.
    pub scaling: bool,
    pub size: u64,
    /// True when the size was asked for: a cell it does not fit fails; a
    /// default size is reduced for that cell instead (and the cell flagged).
    pub size_explicit: bool,
    pub op: StreamOp,
    pub pages: PageKind,
    pub rule: StopRule,
    pub width: VectorWidth,
}

/// The CPUs `threads` workers use on `node`: one per physical core first
/// (two threads on one core share its load ports and would halve each
/// other), then the remaining SMT siblings.
pub fn cpus_for(topo: &Topology, node: u32, threads: usize) -> Result<Vec<u32>, ExperimentError> {
    let mut order = topo.allowed_core_cpus_of_node(node);
    for c in topo.allowed_cpus_of_node(node) {
        if !order.contains(&c) {
            order.push(c);
        }
    }
    if threads == 0 {
        return Err(ExperimentError::Invalid(
            "--threads must be at least 1".into(),
        ));
    }
    if threads > order.len() {
        let mut cpus = order;
        cpus.sort_unstable();
        return Err(ExperimentError::TooManyThreads {
            node,
            threads,
            cpus,
        });
    }
    order.truncate(threads);
    Ok(order)
}

/// Resolve defaults and check everything. Nothing is allocated here.
pub fn plan(topo: &Topology, cfg: &BandwidthConfig) -> Result<BandwidthPlan, ExperimentError> {
    let (mut cpu_nodes, mut mem_nodes) =
        resolve_nodes(topo, cfg.cpu_nodes.as_deref(), cfg.mem_nodes.as_deref())?;
    let chosen = cfg
        .cpus
        .as_deref()
        .map(|c| super::cpus::resolve(topo, c))
        .transpose()?;
    if let Some(ch) = &chosen {
        cpu_nodes = ch.rows(cfg.cpu_nodes.as_deref())?;
    }
    // The CPUs of `n` threads on `node`: the listed ones when --cpus is
    // given, else one per core first (`cpus_for`).
    let threads_on = |node: u32, n: Option<usize>, default: usize| match &chosen {
        Some(ch) => {
            let listed = ch.on_node(node);
            let n = n.unwrap_or(listed.len());
            if n == 0 || n > listed.len() {
                return Err(ExperimentError::Invalid(format!(
                    "--threads {n}: node {node} has {} CPU(s) listed in --cpus ({}); give at most that many",
                    listed.len(),
                    crate::units::format_list(listed)
                )));
            }
            Ok(listed[..n].to_vec())
        }
        None => cpus_for(topo, node, n.unwrap_or(default)),
    };
    let live = LiveSystem::read()?;
    let op = cfg.op.unwrap_or(StreamOp::Read);
    let width = super::vector_width(cfg.width)?;
    let pages = cfg.pages.unwrap_or_else(|| super::default_pages(&live));
    let mut cells = Vec::new();
    if cfg.scaling {
        let cn = cpu_nodes[0];
        // Local memory unless a memory node was asked for.
        let mn = match &cfg.mem_nodes {
            Some(v) => v[0],
            None if mem_nodes.contains(&cn) => cn,
            None => mem_nodes[0],
        };
        let all = threads_on(cn, cfg.threads, topo.allowed_cpus_of_node(cn).len())?;
        for t in 1..=all.len() {
            cells.push(PlannedCell {
                cpu_node: cn,
                mem_node: mn,
                cpus: all[..t].to_vec(),
            });
        }
        cpu_nodes = vec![cn];
        mem_nodes = vec![mn];
    } else {
        for &cn in &cpu_nodes {
            let cpus = threads_on(cn, cfg.threads, topo.allowed_core_cpus_of_node(cn).len())?;
            for &mn in &mem_nodes {
                cells.push(PlannedCell {
                    cpu_node: cn,
                    mem_node: mn,
                    cpus: cpus.clone(),
                });
            }
        }
    }
    let size = cfg
        .size
        .unwrap_or_else(|| super::default_size(topo, &live, &mem_nodes));
    let max_threads = cells.iter().map(|c| c.cpus.len()).max().unwrap_or(1);
    let min_size = max_threads as u64 * op.streams() as u64 * crate::pagesize::base();
    if size < min_size {
        return Err(ExperimentError::Invalid(format!(
            "size {size} B is too small for {max_threads} threads of {}: at least {min_size} B",
            op.name()
        )));
    }
    // What a memory node's buffer really maps: rounded up to whole pages
    // (which matters for 2 MiB and 1 GiB huge pages). What can never fit
    // fails here; what does not fit now is checked again before each
    // buffer is set up.
    let mapped = buffer_footprint(size, pages);
    let mapped = usize::try_from(mapped)
        .map_err(|_| ExperimentError::Invalid(format!("size {size} B is too large")))?;
    for &m in &mem_nodes {
        BufferSpec::new(mapped, MemPolicy::Bind(m), pages).check_capacity(&live, None)?;
    }
    let mut notes = super::memory_side_notes(topo, &mem_nodes);
    notes.extend(chosen.map(|c| c.note()));
    let touchers = super::node_buffers::touchers(topo, &mem_nodes)?;
    notes.extend(super::node_buffers::page_table_notes(topo, &touchers));
    Ok(BandwidthPlan {
        notes,
        cpu_nodes,
        mem_nodes,
        cells,
        touchers,
        scaling: cfg.scaling,
        size,
        size_explicit: cfg.size.is_some(),
        op,
        pages,
        rule: cfg.rule.unwrap_or_default(),
        width,
    })
}

/// Each of `threads` threads' share of `size` bytes: a whole number of
/// the kernel's base pages per array.
fn per_thread(size: u64, threads: usize, op: StreamOp) -> u64 {
    let unit = crate::pagesize::base() * op.streams() as u64;
    (size / threads.max(1) as u64) / unit * unit
}

/// Bytes a memory node's buffer takes: `size` in whole pages of the kind
/// used (whole 2 MiB pages for THP), whatever the cells' thread counts.
fn buffer_footprint(size: u64, pages: PageKind) -> u64 {
    crate::placement::footprint(size, pages)
}

/// The note every bandwidth result carries about write-allocate traffic.
pub fn write_allocate_note(op: StreamOp) -> Option<String> {
    let spec = op.spec();
    if spec.write_allocate_bytes_per_iter == 0 {
        return None;
    }
    let factor = (spec.bytes_per_iter + spec.write_allocate_bytes_per_iter) as f64
        / spec.bytes_per_iter as f64;
    Some(format!(
        "{} uses ordinary stores: each stored line is first read from memory (write-allocate), \
         so the memory traffic is about {factor:.2}x the bytes counted here; write-nt and copy-nt avoid it",
        op.name()
    ))
}

#[cfg(test)]
mod tests;
