//! Loaded latency: a chase thread measures latency while the other allowed
//! CPUs of its node stream to a memory node at decreasing injected delays.
//!
//! This file is the plan: which (CPU node, memory node) pairs, which CPU
//! chases and which load, which mixes and delays, how large each thread's
//! buffer is; every value checked against the topology and the live machine
//! before anything is allocated. `run.rs` measures the plan.
//!
//! Defaults: the first CPU node's local memory and its worst remote memory
//! by SLIT (a CPU-less node included; just local on a one-node machine);
//! the read mix; delays [`DEFAULT_DELAYS`]; the chase on the node's first
//! core, load threads on every other allowed CPU of the node except the
//! chase's SMT siblings (which would share its core and slow the chase by
//! themselves, not through memory). A CPU node with no other CPU gives a
//! curve of the idle point alone (and a note), so a one-CPU node can still
//! measure a memory node, a CPU-less one included.

mod chase;
mod load;
mod loads_held;
mod rig;
mod run;

pub use run::{run, run_with};

use super::ExperimentError;
use crate::kernels::mix::Mix;
use crate::kernels::VectorWidth;
use crate::placement::{BufferSpec, LiveSystem, MemPolicy, PageKind};
use crate::stats::StopRule;
use crate::topology::Topology;
use crate::units::{format_list, format_size};
use std::time::Duration;

/// Injected delays, lightest first, ending at saturation (0). Each step
/// halves the idle work between line groups. A unit costs a few cycles
/// (a store and a reload the compiler must keep), so 2048 is close to idle
/// and the climb to saturation happens in the last few halvings.
pub const DEFAULT_DELAYS: [u32; 13] = [2048, 1024, 512, 256, 128, 64, 32, 16, 8, 4, 2, 1, 0];

/// The largest delay accepted: about a millisecond of idle work per group
/// of lines, far lighter than any memory system notices.
pub const MAX_DELAY: u32 = 1 << 20;

/// Default per-point budget: a point that does not converge stops here.
pub const DEFAULT_POINT_BUDGET: Duration = Duration::from_secs(1);

/// The most memory a thread's default buffer takes.
const MAX_DEFAULT_PER_THREAD: u64 = 1 << 30;
/// The least: far beyond any private cache.
const MIN_DEFAULT_PER_THREAD: u64 = 64 << 20;

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
    /// The CPU node of the default pairs (local and its worst remote);
    /// ignored when `pairs` is given.
    pub cpu_node: Option<u32>,
    /// With `cpu_node` (or the first CPU node): the one memory node to
    /// measure instead of local and the worst remote.
    pub mem_node: Option<u32>,
    /// The chase thread's CPU; default the CPU node's first core. Must be
    /// on every pair's CPU node.
    pub chase_cpu: Option<u32>,
    /// The load threads' CPUs; default every other allowed CPU of the CPU
    /// node but the chase's SMT siblings. Must be on every pair's CPU node.
    pub load_cpus: Option<Vec<u32>>,
    /// Vector width of the load threads' read kernel; default the widest
    /// (as `bandwidth`, so the saturated read point is its figure).
    pub width: Option<VectorWidth>,
}

/// The CPUs of one pair's curve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairCpus {
    pub chase: u32,
    pub load: Vec<u32>,
}

#[derive(Debug, Clone)]
pub struct LoadedPlan {
    pub pairs: Vec<(u32, u32)>,
    pub mixes: Vec<String>,
    pub delays: Vec<u32>,
    pub size: u64,
    pub rule: StopRule,
    /// Per pair, in the order of `pairs`.
    pub cpus: Vec<PairCpus>,
    pub pages: PageKind,
    pub width: VectorWidth,
    /// Notes known at plan time (a memory-side cache in front of a node).
    pub notes: Vec<String>,
}

impl LoadedPlan {
    /// One step per point: idle plus every delay, per pair and mix (idle
    /// only for a pair without load CPUs).
    pub fn steps(&self) -> usize {
        (0..self.pairs.len()).map(|k| self.pair_steps(k)).sum()
    }

    /// Points of one curve of pair `k`: idle alone when its CPU node has no
    /// CPU left for load threads.
    pub fn points(&self, k: usize) -> usize {
        match self.cpus.get(k) {
            Some(c) if c.load.is_empty() => 1,
            _ => self.delays.len() + 1,
        }
    }

    /// Steps of pair `k`: every mix's points.
    pub fn pair_steps(&self, k: usize) -> usize {
        self.mixes.len() * self.points(k)
    }

    /// The planned seconds of every step, in the order they run: the
    /// sampling the rule allows (its budget and the sample past it), and on
    /// a pair's first step the set-up of its buffers (one per thread,
    /// mapped, touched and chained, [`SETUP_S_PER_GIB`]).
    pub fn step_costs(&self) -> Vec<f64> {
        const GIB: f64 = (1u64 << 30) as f64;
        let sampling =
            self.rule.budget.as_secs_f64() + super::target_sample_ns(self.rule.budget) / 1e9;
        let mut out = Vec::with_capacity(self.steps());
        for k in 0..self.pairs.len() {
            let threads = 1 + self.cpus.get(k).map_or(0, |c| c.load.len());
            let setup = threads as f64 * self.size as f64 / GIB * SETUP_S_PER_GIB;
            out.extend(
                (0..self.pair_steps(k)).map(|i| sampling + if i == 0 { setup } else { 0.0 }),
            );
        }
        out
    }
}

/// A buffer's set-up per GiB: map, touch and chain (an upper figure; the
/// ETA scales it by what the steps measured cost).
pub const SETUP_S_PER_GIB: f64 = 3.0;

/// The mixes' names as `--mix` takes them.
pub fn mix_names() -> String {
    Mix::ALL
        .iter()
        .map(|m| m.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parse mixes, canonical names out; the error names the bad value and the
/// valid ones.
pub fn parse_mixes(v: &[String]) -> Result<Vec<String>, ExperimentError> {
    let mut out: Vec<String> = Vec::new();
    for s in v {
        let m = Mix::parse(s).ok_or_else(|| {
            ExperimentError::Invalid(format!(
                "mix '{s}' is not one (valid: {}, or R:W with R and W from 1 to 16)",
                mix_names()
            ))
        })?;
        if !out.contains(&m.name()) {
            out.push(m.name());
        }
    }
    if out.is_empty() {
        return Err(ExperimentError::Invalid(format!(
            "no mix given (valid: {})",
            mix_names()
        )));
    }
    Ok(out)
}

/// Check delays and order them lightest first (0, saturation, last),
/// without repeats.
pub fn check_delays(v: &[u32]) -> Result<Vec<u32>, ExperimentError> {
    if let Some(bad) = v.iter().find(|&&d| d > MAX_DELAY) {
        return Err(ExperimentError::Invalid(format!(
            "delay {bad} is out of range (valid: 0 to {MAX_DELAY})"
        )));
    }
    if v.is_empty() {
        return Err(ExperimentError::Invalid(format!(
            "no delay given (valid: 0 to {MAX_DELAY})"
        )));
    }
    let mut d = v.to_vec();
    d.sort_unstable_by(|a, b| b.cmp(a));
    d.dedup();
    Ok(d)
}

/// Local memory and the memory node farthest from `cpu_node` by SLIT (the
/// highest node number among equals; without a SLIT, the last other node).
pub fn default_pairs(topo: &Topology, cpu_node: u32) -> Vec<(u32, u32)> {
    let mems = topo.allowed_mem_nodes();
    let mut pairs = Vec::new();
    if mems.contains(&cpu_node) {
        pairs.push((cpu_node, cpu_node));
    }
    let worst = mems
        .iter()
        .filter(|&&m| m != cpu_node)
        .max_by_key(|&&m| (topo.distance(cpu_node, m).unwrap_or(0), m));
    if let Some(&m) = worst {
        pairs.push((cpu_node, m));
    }
    pairs
}

/// The chase and load CPUs on `node`.
fn pair_cpus(
    topo: &Topology,
    node: u32,
    chase: Option<u32>,
    load: Option<&[u32]>,
) -> Result<PairCpus, ExperimentError> {
    let allowed = topo.allowed_cpus_of_node(node);
    let not_on = |cpu: u32, what: &str| {
        ExperimentError::Invalid(format!(
            "{what} CPU {cpu} is not an allowed CPU of node {node} (allowed: {})",
            format_list(&allowed)
        ))
    };
    let chase = match chase {
        Some(c) if allowed.contains(&c) => c,
        Some(c) => return Err(not_on(c, "chase")),
        None => *topo
            .allowed_core_cpus_of_node(node)
            .first()
            .ok_or_else(|| ExperimentError::CpuLessNode {
                node,
                cpu_nodes: topo.allowed_cpu_nodes(),
            })?,
    };
    let load = match load {
        Some(v) => {
            for &c in v {
                if !allowed.contains(&c) {
                    return Err(not_on(c, "load"));
                }
                if c == chase {
                    return Err(ExperimentError::Invalid(format!(
                        "load CPU {c} is the chase CPU; choose others (allowed on node {node}: {})",
                        format_list(&allowed)
                    )));
                }
            }
            let mut v = v.to_vec();
            v.sort_unstable();
            v.dedup();
            v
        }
        None => {
            let siblings = topo
                .cpu(chase)
                .map(|c| c.smt_siblings.clone())
                .unwrap_or_default();
            allowed
                .iter()
                .copied()
                .filter(|&c| c != chase && !siblings.contains(&c))
                .collect()
        }
    };
    Ok(PairCpus { chase, load })
}

/// Default bytes per thread: 4 x the LLC spread over all threads (so their
/// buffers together are far beyond the cache), between 64 MiB and 1 GiB,
/// and all of them within half of the smallest allocatable memory among
/// the memory nodes, in 2 MiB steps; the load threads' buffers and the
/// chase's, alive at once, within the run's footprint limit
/// ([`FootprintLimit`](crate::placement::FootprintLimit)).
pub fn default_size(topo: &Topology, live: &LiveSystem, mem_nodes: &[u32], threads: usize) -> u64 {
    let threads = threads.max(1) as u64;
    let want = (4 * topo.llc_bytes().unwrap_or(0) / threads)
        .clamp(MIN_DEFAULT_PER_THREAD, MAX_DEFAULT_PER_THREAD);
    let free = mem_nodes
        .iter()
        .filter_map(|&n| live.allocatable_bytes(n).ok())
        .min()
        .unwrap_or(u64::MAX);
    let cap = free / 2 / threads;
    let size = (want.min(cap) / (2 << 20) * (2 << 20)).max(2 << 20);
    crate::placement::FootprintLimit::live(live).per_buffer(size, threads as usize + 1)
}

/// Resolve defaults and check everything. Nothing is allocated here.
pub fn plan(topo: &Topology, cfg: &LoadedConfig) -> Result<LoadedPlan, ExperimentError> {
    let live = LiveSystem::read()?;
    let pairs = match &cfg.pairs {
        Some(p) => p.clone(),
        None => {
            let cpu_node = match cfg.cpu_node {
                Some(n) => n,
                None => *topo
                    .allowed_cpu_nodes()
                    .first()
                    .ok_or(ExperimentError::NoCpuNodes)?,
            };
            match cfg.mem_node {
                Some(m) => vec![(cpu_node, m)],
                None => default_pairs(topo, cpu_node),
            }
        }
    };
    if pairs.is_empty() {
        return Err(ExperimentError::Invalid(
            "no (CPU node, memory node) pair to measure".into(),
        ));
    }
    for &(c, m) in &pairs {
        super::resolve_nodes(topo, Some(&[c]), Some(&[m]))?;
    }
    let mixes = parse_mixes(cfg.mixes.as_deref().unwrap_or(&["read".to_string()]))?;
    let delays = check_delays(cfg.delays.as_deref().unwrap_or(&DEFAULT_DELAYS))?;
    let cpus = pairs
        .iter()
        .map(|&(c, _)| pair_cpus(topo, c, cfg.chase_cpu, cfg.load_cpus.as_deref()))
        .collect::<Result<Vec<_>, _>>()?;
    let pages = cfg.pages.unwrap_or_else(|| super::default_pages(&live));
    let mut mem_nodes: Vec<u32> = pairs.iter().map(|p| p.1).collect();
    mem_nodes.sort_unstable();
    mem_nodes.dedup();
    let threads = cpus.iter().map(|c| c.load.len() + 1).max().unwrap_or(1);
    let size = match cfg.size {
        Some(s) => s,
        None => default_size(topo, &live, &mem_nodes, threads),
    };
    // A write mix splits a load buffer in two halves; each must hold lines.
    if size < 2 * crate::pagesize::base() {
        return Err(ExperimentError::Invalid(format!(
            "size {} per thread is too small (at least {})",
            format_size(size),
            format_size(2 * crate::pagesize::base())
        )));
    }
    if size / 64 > u32::MAX as u64 {
        return Err(ExperimentError::Invalid(format!(
            "size {} per thread has more lines than the chase can index (2^32)",
            format_size(size)
        )));
    }
    let per_thread = crate::placement::footprint(size, pages);
    let total = usize::try_from(per_thread.saturating_mul(threads as u64))
        .map_err(|_| ExperimentError::Invalid(format!("size {size} B is too large")))?;
    // Every thread's buffer is on the memory node at once.
    for &m in &mem_nodes {
        BufferSpec::new(total, MemPolicy::Bind(m), pages).check_capacity(&live, None)?;
    }
    let rule = cfg.rule.unwrap_or(StopRule {
        budget: DEFAULT_POINT_BUDGET,
        ..StopRule::default()
    });
    let mut notes = super::memory_side_notes(topo, &mem_nodes);
    let mut lone: Vec<u32> = pairs
        .iter()
        .zip(&cpus)
        .filter(|(_, c)| c.load.is_empty())
        .map(|(p, _)| p.0)
        .collect();
    lone.dedup();
    for n in lone {
        notes.push(format!(
            "node {n} has no allowed CPU for load threads beside the chase CPU: its curves are the idle point alone"
        ));
    }
    Ok(LoadedPlan {
        notes,
        pairs,
        mixes,
        delays,
        size,
        rule,
        cpus,
        pages,
        width: super::vector_width(cfg.width)?,
    })
}

#[cfg(test)]
mod tests;
