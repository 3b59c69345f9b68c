//! Plans of kernel runs: the latency matrix, the bandwidth matrix and the
//! contention study. An experiment decides what runs where; it never prints.
//! In the flow topology -> plan -> kernels -> samples -> stats -> model ->
//! analysis -> renderers it is the plan and the runner: it reads the
//! topology, runs kernels through `placement`, summarises samples with
//! `stats` and fills result-model values (`model::matrix`, `model::study`).
//! It never names `render` (checked by `tests/layering.rs`).
//!
//! Each matrix experiment has two steps: `plan` resolves the defaults and
//! checks every node, CPU and size against the topology and the live machine
//! (so a bad request fails before a single byte is allocated), and `run`
//! measures the cells one after the other, reporting to a [`Progress`]
//! observer after each so the caller can draw progress or save partial
//! results. What `plan` rejects can never be measured (a node that does not
//! exist, a size larger than a node could ever hold); what depends on the
//! moment (free memory, a CPU still online, the kernel's answer to `mbind`)
//! is checked by each cell, and a cell that fails is recorded in the
//! result's `failed` list while the run goes on.

pub mod bandwidth;
pub mod barrier;
pub mod c2c;
pub mod cpus;
pub mod latency;
pub mod line_samples;
pub mod loaded;
pub mod locks;
pub mod node_buffers;
pub mod peak;
pub mod policy;
pub mod study;
pub mod sweep;
mod team;
pub mod tune;
mod workers;

use crate::kernels::chase::ChaseError;
use crate::kernels::VectorWidth;
use crate::model::matrix::MatrixResult;
use crate::placement::{FootprintLimit, LiveSystem, PageKind, PlacementError};
use crate::stats::StopRule;
use crate::topology::Topology;
use crate::units::{format_list, format_size};

/// Observer of a running experiment. Every method has an empty default, so
/// an observer implements only what it shows.
pub trait Progress {
    /// Cell `index` (0-based) of `total` starts; `label` says what it is.
    fn cell_started(&mut self, _index: usize, _total: usize, _label: &str) {}
    /// A cell finished; `partial` holds every cell measured so far.
    fn cell_finished(&mut self, _partial: &MatrixResult) {}
    /// A cell could not be measured (`reason` says why); the experiment goes
    /// on with the next one, and `partial` already records the failure.
    fn cell_failed(
        &mut self,
        _index: usize,
        _total: usize,
        _reason: &str,
        _partial: &MatrixResult,
    ) {
    }
    /// The stop rule cell `index` samples under. `planned` is the plan's
    /// rule; a budget-keeping observer (the main job's planner) returns a
    /// shorter or longer budget from what the cells before it cost.
    fn rule_for_cell(&mut self, _index: usize, planned: StopRule) -> StopRule {
        planned
    }
    /// A memory node's buffer is set up; the cells measured on it follow.
    fn buffer_ready(&mut self, _setup: &crate::model::matrix::BufferSetup) {}
}

/// An observer that ignores everything.
pub struct NoProgress;
impl Progress for NoProgress {}
impl StepProgress for NoProgress {}

/// Observer of an experiment that is not a node matrix (c2c, locks, loaded
/// latency, peak): steps (a CPU pair, a curve point, a mix) one after the
/// other. Every method has an empty default.
pub trait StepProgress {
    /// Step `index` (0-based) of `total` starts; `label` says what it is.
    fn step_started(&mut self, _index: usize, _total: usize, _label: &str) {}
    /// A step finished (measured or failed; the result records which).
    fn step_finished(&mut self, _index: usize, _total: usize) {}
    /// The stop rule step `index` samples under: the main job's planner
    /// shortens or lengthens it from what the steps before cost.
    fn rule_for_step(&mut self, _index: usize, planned: StopRule) -> StopRule {
        planned
    }
    /// True when the caller's time is spent: the experiment stops before its
    /// next step and returns what it has (`complete: false`), as on a cancel.
    fn out_of_time(&self) -> bool {
        false
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    #[error("node {node} does not exist (nodes: {})", format_list(.nodes))]
    NoSuchNode { node: u32, nodes: Vec<u32> },
    #[error("node {node} has no CPU this process may use, so it cannot be a CPU node (nodes with allowed CPUs: {})", format_list(.cpu_nodes))]
    CpuLessNode { node: u32, cpu_nodes: Vec<u32> },
    #[error("memory node {node} is not allowed for this process (allowed memory nodes: {})", format_list(.allowed))]
    MemNodeNotAllowed { node: u32, allowed: Vec<u32> },
    #[error("no NUMA node has a CPU this process may use")]
    NoCpuNodes,
    #[error("{threads} threads asked for node {node}, which has {} allowed CPUs ({})", .cpus.len(), format_list(.cpus))]
    TooManyThreads {
        node: u32,
        threads: usize,
        cpus: Vec<u32>,
    },
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Placement(#[from] PlacementError),
    #[error(transparent)]
    Chase(#[from] ChaseError),
    #[error("a measuring thread panicked")]
    Panicked,
}

/// The CPU and memory nodes of a matrix: the ones asked for, checked, or by
/// default every node with allowed CPUs (rows) and every allowed memory node,
/// memory-only nodes included (columns).
pub fn resolve_nodes(
    topo: &Topology,
    cpu_nodes: Option<&[u32]>,
    mem_nodes: Option<&[u32]>,
) -> Result<(Vec<u32>, Vec<u32>), ExperimentError> {
    let all = topo.node_ids();
    let cpu_ok = topo.allowed_cpu_nodes();
    let mem_ok = topo.allowed_mem_nodes();
    // Asked-for nodes must exist and be usable in their role; the error for
    // an unusable one names the nodes that would have been valid.
    let check = |asked: Option<&[u32]>,
                 ok: &[u32],
                 unusable: &dyn Fn(u32) -> ExperimentError|
     -> Result<Vec<u32>, ExperimentError> {
        let Some(v) = asked else {
            return Ok(ok.to_vec());
        };
        for &n in v {
            if !all.contains(&n) {
                return Err(ExperimentError::NoSuchNode {
                    node: n,
                    nodes: all.clone(),
                });
            }
            if !ok.contains(&n) {
                return Err(unusable(n));
            }
        }
        Ok(v.to_vec())
    };
    let cpus = check(cpu_nodes, &cpu_ok, &|node| ExperimentError::CpuLessNode {
        node,
        cpu_nodes: cpu_ok.clone(),
    })?;
    let mems = check(mem_nodes, &mem_ok, &|node| {
        ExperimentError::MemNodeNotAllowed {
            node,
            allowed: mem_ok.clone(),
        }
    })?;
    if cpus.is_empty() {
        return Err(ExperimentError::NoCpuNodes);
    }
    if mems.is_empty() {
        return Err(ExperimentError::Invalid(
            "no memory node this process may allocate on".into(),
        ));
    }
    Ok((cpus, mems))
}

/// Default buffer size: max(256 MiB, 8 x LLC) — well above every cache so
/// the figure is memory, not cache (McCalpin's remote-latency measurements
/// used 32 MiB-1 GiB and saw no difference above the cache) — but never more
/// than half of the smallest allocatable memory among `mem_nodes`
/// ([`LiveSystem::allocatable_bytes`]: above the kernel's watermarks),
/// rounded down to 2 MiB, so the default cannot push a node into reclaim;
/// and one buffer per memory node, all alive at once, within the run's
/// footprint limit ([`FootprintLimit`]).
pub fn default_size(topo: &Topology, live: &LiveSystem, mem_nodes: &[u32]) -> u64 {
    default_size_times_llc(topo, live, mem_nodes, 8, mem_nodes.len())
}

/// max(256 MiB, `llc_factor` x the last-level cache), capped like
/// [`default_size`] for `buffers` of that size alive at once. A chase needs
/// many times the LLC to defeat it; a sequential stream needs only to
/// exceed it, so `policy` takes 2 and stays quick on machines whose LLC is
/// hundreds of MiB.
pub fn default_size_times_llc(
    topo: &Topology,
    live: &LiveSystem,
    mem_nodes: &[u32],
    llc_factor: u64,
    buffers: usize,
) -> u64 {
    let want = (256u64 << 20).max(llc_factor * topo.llc_bytes().unwrap_or(0));
    let free = mem_nodes
        .iter()
        .filter_map(|&n| live.allocatable_bytes(n).ok())
        .min()
        .unwrap_or(want * 2);
    let by_node = want.min(half_in_2mib(free).max(MIN_REDUCED));
    FootprintLimit::live(live).per_buffer(by_node, buffers)
}

/// Half of `bytes`, rounded down to 2 MiB (whole THP pages).
fn half_in_2mib(bytes: u64) -> u64 {
    (bytes / 2) / (2 << 20) * (2 << 20)
}

/// The smallest buffer a default size is ever reduced to: one THP page.
/// Below it a cell fails rather than measure something else than memory.
const MIN_REDUCED: u64 = 2 << 20;

/// The flag of a cell whose sampling a stop request cut short: its median
/// stands on fewer samples than its rule asked for, and every rendering
/// marks it.
pub fn cut_short_flag(samples: usize) -> String {
    format!("cut short by an interruption after {samples} sample(s)")
}

/// Where a run learns, right before each cell allocates, how many bytes a
/// memory node can give: the live machine ([`LiveGauge`]) in a real run; a
/// test can make a node "full" for one cell.
pub trait MemoryGauge {
    /// Bytes `node` can give cell `cell` (0-based index in the plan), whose
    /// threads run on `cpus`, now.
    fn allocatable(&mut self, cell: usize, node: u32, cpus: &[u32]) -> Result<u64, PlacementError>;
}

/// The live machine's figure, read fresh for every cell.
pub struct LiveGauge(pub LiveSystem);

impl MemoryGauge for LiveGauge {
    fn allocatable(
        &mut self,
        _cell: usize,
        node: u32,
        cpus: &[u32],
    ) -> Result<u64, PlacementError> {
        self.0.allocatable_bytes_on(node, cpus)
    }
}

/// The size one cell will really use, decided right before it allocates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CellSize {
    /// Bytes to measure with (the `size` of the plan, or less).
    pub size: u64,
    /// Why it is smaller than planned (a flag of the cell), if it is.
    pub reduced: Option<String>,
}

/// Fit a cell's planned `size` to what `node` can give now (`available`).
/// `footprint(size)` is what the cell's buffers will really take on the node
/// (whole pages, every thread's share); `min` is the smallest size the cell
/// can measure with. An explicit size that does not fit fails the cell (the
/// user asked for that size, a smaller one would be another measurement); a
/// default size is reduced by the rule of [`default_size`] (half of what the
/// node can give, in 2 MiB steps) and the reason is returned as a flag.
pub(crate) fn fit_cell(
    size: u64,
    explicit: bool,
    footprint: &dyn Fn(u64) -> u64,
    min: u64,
    node: u32,
    available: u64,
) -> Result<CellSize, PlacementError> {
    let need = footprint(size);
    if need <= available {
        return Ok(CellSize {
            size,
            reduced: None,
        });
    }
    let too_large = PlacementError::TooLarge {
        node,
        requested: need,
        available,
    };
    if explicit {
        return Err(too_large);
    }
    let smaller = half_in_2mib(available).min(size);
    if smaller < min.max(MIN_REDUCED) || footprint(smaller) > available {
        return Err(too_large);
    }
    Ok(CellSize {
        size: smaller,
        reduced: Some(format!(
            "default size reduced from {} to {}: node {node} could give only {} when this cell started",
            format_size(size),
            format_size(smaller),
            format_size(available)
        )),
    })
}

/// One note per measured memory node that has a memory-side cache in front
/// of it (Optane memory mode, HBM or DRAM caching slower memory): its cells
/// measure that cache as long as the buffer fits in it, not the memory
/// behind, and the reader must know which cells those are.
pub fn memory_side_notes(topo: &Topology, mem_nodes: &[u32]) -> Vec<String> {
    mem_nodes
        .iter()
        .filter_map(|&n| {
            let caches = topo.memory_side_cache(n);
            let first = caches.first()?;
            let size = first
                .size_bytes
                .map(crate::units::format_size)
                .unwrap_or_else(|| "unknown size".into());
            Some(format!(
                "memory node {n} has a memory-side cache in front ({size}, {}, {}): its cells measure that cache while the buffer fits in it, the memory behind it only beyond",
                first.indexing, first.write_policy
            ))
        })
        .collect()
}

/// The streaming kernels' vector width: the one asked for, or the widest
/// this CPU has (DESIGN: recorded in every result). One rule for every
/// experiment that streams, so `bandwidth`, `peak` and the loaded-latency
/// load threads run the same kernel at the same settings.
pub fn vector_width(asked: Option<VectorWidth>) -> Result<VectorWidth, ExperimentError> {
    let width = asked.unwrap_or_else(VectorWidth::detect);
    if !width.available() {
        return Err(ExperimentError::Invalid(format!(
            "vector width {} is not supported by this CPU (detected: {})",
            width.name(),
            VectorWidth::detect().name()
        )));
    }
    Ok(width)
}

/// Default page kind: transparent huge pages when the kernel offers them
/// (`always` or `madvise`) — they take TLB misses out of a memory latency
/// figure, which is what tools like Intel MLC report too — 4 KiB otherwise.
pub fn default_pages(live: &LiveSystem) -> PageKind {
    match live.thp_mode.as_deref() {
        Some("always") | Some("madvise") => PageKind::Thp,
        _ => PageKind::Small,
    }
}

/// The sample length a cell aims for: a twentieth of its budget, between
/// 5 ms (far above the timer's resolution and overhead) and 100 ms (enough
/// samples for a median even in a short budget).
pub(crate) fn target_sample_ns(budget: std::time::Duration) -> f64 {
    (budget.as_secs_f64() * 1e9 / 20.0).clamp(5e6, 1e8)
}

#[cfg(test)]
pub(crate) mod rival;

#[cfg(test)]
pub(crate) mod testing {
    //! A minimal topology of the live machine, built from the placement
    //! layer's own reads, so experiments can be tested without the sysfs
    //! reader.
    use crate::placement::LiveSystem;
    use crate::topology::testing::{build, CpuSpec, NodeSpec};
    use crate::topology::*;

    pub fn live_topology() -> Topology {
        let live = LiveSystem::read().unwrap();
        let mut cpus = Vec::new();
        let mut nodes = Vec::new();
        for (&n, list) in &live.node_cpus {
            for &c in list {
                cpus.push(CpuSpec {
                    allowed: live.cpus_allowed.contains(&c),
                    ..CpuSpec::new(c, 0, i64::from(c), n)
                });
            }
            nodes.push(NodeSpec {
                os_index: n,
                memory_bytes: 0,
                free_bytes: live.allocatable_bytes(n).unwrap_or(0),
                allowed: live.mems_allowed.contains(&n),
            });
        }
        let mut t = build("/", &cpus, &nodes, None);
        // What the placement layer read, even where it names CPUs or nodes
        // outside `node_cpus`.
        t.allowed.cpus = live.cpus_allowed.clone();
        t.allowed.nodes = live.mems_allowed.clone();
        t.thp_mode = live.thp_mode.clone();
        t
    }

    /// The live machine's memory figures, except that `node` has `bytes`
    /// left for cell `cell`: a node filling up in the middle of a run.
    pub struct ShortAt {
        pub cell: usize,
        pub node: u32,
        pub bytes: u64,
        pub live: LiveSystem,
    }

    impl ShortAt {
        pub fn new(cell: usize, node: u32, bytes: u64) -> Self {
            ShortAt {
                cell,
                node,
                bytes,
                live: LiveSystem::read().unwrap(),
            }
        }
    }

    impl crate::experiments::MemoryGauge for ShortAt {
        fn allocatable(
            &mut self,
            cell: usize,
            node: u32,
            cpus: &[u32],
        ) -> Result<u64, crate::placement::PlacementError> {
            if (cell, node) == (self.cell, self.node) {
                Ok(self.bytes)
            } else {
                self.live.allocatable_bytes_on(node, cpus)
            }
        }
    }

    /// The live topology plus a memory-only node 7 (not on this machine), to
    /// test the checks that happen before any allocation.
    pub fn with_memory_only_node() -> Topology {
        let mut t = live_topology();
        t.nodes.push(NumaNode {
            os_index: 7,
            cpus: vec![],
            memory_bytes: 1 << 30,
            free_bytes: 1 << 30,
            allowed: true,
            hugepages: vec![],
        });
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_default_to_allowed_and_are_checked() {
        let t = testing::with_memory_only_node();
        let (c, m) = resolve_nodes(&t, None, None).unwrap();
        assert!(c.contains(&0) && !c.contains(&7));
        assert!(m.contains(&7), "memory-only nodes are columns");
        let e = resolve_nodes(&t, Some(&[7]), None).unwrap_err().to_string();
        assert!(e.contains("node 7 has no CPU"), "{e}");
        let e = resolve_nodes(&t, Some(&[0]), Some(&[99]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("node 99 does not exist"), "{e}");
    }

    #[test]
    fn default_size_is_capped_by_allocatable_memory() {
        let t = testing::live_topology();
        let live = LiveSystem::read().unwrap();
        let s = default_size(&t, &live, &[0]);
        assert!(s <= 256 << 20 || s >= 8 * t.llc_bytes().unwrap_or(0));
        assert!(s <= live.allocatable_bytes(0).unwrap() / 2 + (2 << 20));
        assert_eq!(s % (2 << 20), 0);
    }

    #[test]
    fn buffers_alive_at_once_share_the_footprint_limit() {
        let t = testing::live_topology();
        let live = LiveSystem::read().unwrap();
        let limit = FootprintLimit::live(&live).buffers_bytes();
        for buffers in [1usize, 4, 64] {
            let s = default_size_times_llc(&t, &live, &[0], 8, buffers);
            assert!(
                s * buffers as u64 <= limit.max(2 << 20) || s == 2 << 20,
                "{buffers} x {s} B over the limit of {limit} B"
            );
        }
        let one = default_size_times_llc(&t, &live, &[0], 8, 1);
        let many = default_size_times_llc(&t, &live, &[0], 8, 64);
        assert!(many <= one);
    }

    #[test]
    fn a_smaller_llc_factor_never_asks_for_more_and_keeps_the_floor() {
        let t = testing::live_topology();
        let live = LiveSystem::read().unwrap();
        let eight = default_size(&t, &live, &[0]);
        let two = default_size_times_llc(&t, &live, &[0], 2, 1);
        assert!(two <= eight, "2 x LLC {two} > 8 x LLC {eight}");
        let cap = (live.allocatable_bytes(0).unwrap() / 2)
            .min(FootprintLimit::live(&live).buffers_bytes());
        assert!(two >= (256 << 20).min(cap / (2 << 20) * (2 << 20)));
        if let Some(llc) = t.llc_bytes() {
            if 2 * llc > 256 << 20 && 2 * llc < cap {
                assert_eq!(two, 2 * llc);
            }
        }
    }

    const MIB: u64 = 1 << 20;

    #[test]
    fn a_cell_that_fits_keeps_its_size() {
        let same = |s: u64| s;
        let c = fit_cell(64 * MIB, true, &same, 0, 3, 64 * MIB).unwrap();
        assert_eq!(
            c,
            CellSize {
                size: 64 * MIB,
                reduced: None
            }
        );
    }

    #[test]
    fn an_explicit_size_that_does_not_fit_fails_the_cell() {
        let same = |s: u64| s;
        let e = fit_cell(70 * MIB, true, &same, 0, 3, 69 * MIB + 800 * 1024)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("70 MiB does not fit in node 3's allocatable memory (69.8 MiB now"),
            "{e}"
        );
    }

    #[test]
    fn a_default_size_shrinks_to_half_of_what_is_left_and_says_so() {
        // THP: whole 2 MiB pages.
        let thp = |s: u64| s.div_ceil(2 * MIB) * 2 * MIB;
        let c = fit_cell(102 * MIB, false, &thp, 0, 3, 99 * MIB).unwrap();
        assert_eq!(c.size, 48 * MIB);
        let why = c.reduced.unwrap();
        assert!(why.contains("from 102 MiB to 48 MiB"), "{why}");
        assert!(why.contains("node 3 could give only 99 MiB"), "{why}");
        // Nothing worth measuring left: the cell fails.
        assert!(fit_cell(102 * MIB, false, &thp, 0, 3, 3 * MIB).is_err());
        // Nor below what the cell needs (e.g. a page per thread and stream).
        assert!(fit_cell(102 * MIB, false, &thp, 40 * MIB, 3, 60 * MIB).is_err());
    }

    #[test]
    fn a_memory_side_cache_is_named_in_the_matrix_notes() {
        let mut t = testing::live_topology();
        assert!(memory_side_notes(&t, &[0]).is_empty());
        t.memory_side_caches.push(crate::topology::MemorySideCache {
            node: 0,
            level: 1,
            size_bytes: Some(96 << 30),
            line_size: Some(64),
            indexing: "direct-mapped".into(),
            write_policy: "write-back".into(),
        });
        let notes = memory_side_notes(&t, &[0]);
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].starts_with("memory node 0 has a memory-side cache in front (96 GiB, direct-mapped, write-back)"),
            "{}",
            notes[0]
        );
        // The plan carries it into every matrix it measures.
        let plan = latency::plan(
            &t,
            &latency::LatencyConfig {
                size: Some(4 << 20),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(plan.notes, notes);
    }
}
