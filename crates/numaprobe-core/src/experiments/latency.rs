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

use super::node_buffers;
use super::{
    fit_cell, resolve_nodes, target_sample_ns, ExperimentError, LiveGauge, MemoryGauge, Progress,
};
use crate::kernels::chase::{self, ChasePattern};
use crate::kernels::VectorWidth;
use crate::model::matrix::{Cell, CellParams, CellPlacement, FailedCell, MatrixKind, MatrixResult};
use crate::placement::{
    pin_current_thread, BufferSpec, LiveSystem, MemPolicy, NodeBuffer, PageKind,
    PLACEMENT_THRESHOLD,
};
use crate::stats::{self, StopRule};
use crate::timer::Timer;
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
    })
}

/// Measure every cell of the plan, in order, checking each cell's memory
/// against the live machine right before it allocates.
pub fn run(
    plan: &LatencyPlan,
    progress: &mut dyn Progress,
) -> Result<MatrixResult, ExperimentError> {
    run_with(plan, progress, &mut LiveGauge(LiveSystem::read()?))
}

/// (memory node, CPU that sets up its buffer) for every memory node.
pub(crate) fn touchers(
    topo: &Topology,
    mem_nodes: &[u32],
) -> Result<Vec<(u32, u32)>, ExperimentError> {
    mem_nodes
        .iter()
        .map(|&m| Ok((m, node_buffers::toucher(topo, m)?)))
        .collect()
}

/// Where the page tables of a CPU-less node's buffer are, said once per
/// matrix.
pub(crate) fn page_table_notes(topo: &Topology, touchers: &[(u32, u32)]) -> Vec<String> {
    touchers
        .iter()
        .filter(|(m, _)| topo.allowed_cpus_of_node(*m).is_empty())
        .map(|&(m, cpu)| {
            let node = topo
                .allowed_cpu_nodes()
                .into_iter()
                .find(|&n| topo.allowed_cpus_of_node(n).contains(&cpu));
            format!(
                "memory node {m} has no CPU: its buffer is set up by CPU {cpu}{}, so its page tables are there, not on node {m}",
                node.map(|n| format!(" (node {n})")).unwrap_or_default()
            )
        })
        .collect()
}

/// The CPU that sets up `mem_node`'s buffer in `touchers`, else `fallback`.
pub(crate) fn toucher_of(touchers: &[(u32, u32)], mem_node: u32, fallback: u32) -> u32 {
    touchers
        .iter()
        .find(|(m, _)| *m == mem_node)
        .map_or(fallback, |&(_, c)| c)
}

/// [`run`] with the memory figures taken from `gauge`.
pub fn run_with(
    plan: &LatencyPlan,
    progress: &mut dyn Progress,
    gauge: &mut dyn MemoryGauge,
) -> Result<MatrixResult, ExperimentError> {
    let timer = *Timer::get();
    let mut result = MatrixResult::new(
        MatrixKind::Latency,
        plan.cpu_nodes.clone(),
        plan.mem_nodes.clone(),
        plan.rule,
        timer.info(),
    );
    result.notes.extend(plan.notes.iter().cloned());
    let total = plan.cells.len();
    let mut index = 0;
    'nodes: for (mn, group) in node_buffers::by_memory_node(&plan.cells, &plan.mem_nodes, |c| c.2) {
        if crate::cancel::requested() {
            break;
        }
        let first = plan.cells[group[0]];
        let toucher = toucher_of(&plan.touchers, mn, first.1);
        let prepared = size_cell(plan, gauge, index, mn, toucher).and_then(|(size, reduced)| {
            let spec = BufferSpec::new(size as usize, MemPolicy::Bind(mn), plan.pages);
            let p = node_buffers::set_up(&spec, mn, toucher, |buf| {
                // SAFETY: the buffer is ours, page-aligned, and outlives
                // every chase on it (it is dropped after its cells).
                let setup = unsafe {
                    chase::build(
                        buf.as_mut_ptr(),
                        buf.len(),
                        plan.stride as usize,
                        plan.pattern,
                        plan.seed,
                    )
                }?;
                Ok((setup.start as usize, setup.lines))
            })?;
            Ok((p, reduced))
        });
        let (mut prepared, reduced) = match prepared {
            Ok(p) => p,
            Err(e) => {
                let reason = e.to_string();
                for &i in &group {
                    if crate::cancel::requested() {
                        break 'nodes;
                    }
                    let (cn, cpu, _) = plan.cells[i];
                    progress.cell_started(index, total, &label(cn, cpu, mn));
                    result.failed.push(FailedCell {
                        cpu_node: cn,
                        mem_node: mn,
                        cpus: vec![cpu],
                        reason: reason.clone(),
                    });
                    progress.cell_failed(index, total, &reason, &result);
                    index += 1;
                }
                continue;
            }
        };
        progress.buffer_ready(&prepared.record);
        result.setups.push(prepared.record.clone());
        // Each cell walks on from where the one before stopped.
        let (mut at, lines) = prepared.filled;
        for &i in &group {
            let (cn, cpu, _) = plan.cells[i];
            progress.cell_started(index, total, &label(cn, cpu, mn));
            if crate::cancel::requested() {
                break 'nodes;
            }
            let rule = progress.rule_for_cell(index, plan.rule);
            let began = std::time::Instant::now();
            let measured = measure_cell(plan, &prepared.buf, at, lines, &rule, &timer, cn, cpu, mn)
                .map(|(mut cell, end)| {
                    at = end;
                    if let Some(why) = &reduced {
                        cell.flags.push(why.clone());
                        cell.flagged = true;
                    }
                    cell
                });
            match measured {
                Ok(mut cell) => {
                    cell.setup_s = (began.elapsed().as_secs_f64() - cell.elapsed_s).max(0.0);
                    prepared.record.cells += 1;
                    if let Some(s) = result.setups.last_mut() {
                        s.cells = prepared.record.cells;
                    }
                    result.push(cell);
                    progress.cell_finished(&result);
                }
                Err(e) => {
                    let reason = e.to_string();
                    result.failed.push(FailedCell {
                        cpu_node: cn,
                        mem_node: mn,
                        cpus: vec![cpu],
                        reason: reason.clone(),
                    });
                    progress.cell_failed(index, total, &reason, &result);
                }
            }
            index += 1;
        }
    }
    // A stop requested during the last cell cut that cell short too.
    result.interrupted |= crate::cancel::requested();
    result.complete = !result.interrupted && result.failed.is_empty();
    Ok(result)
}

fn label(cn: u32, cpu: u32, mn: u32) -> String {
    format!("CPU {cpu} (node {cn}) -> memory node {mn}")
}

/// The size `mem_node`'s buffer is set up with (checked before cell
/// `index`, the first on it), and why it is smaller than planned.
fn size_cell(
    plan: &LatencyPlan,
    gauge: &mut dyn MemoryGauge,
    index: usize,
    mem_node: u32,
    cpu: u32,
) -> Result<(u64, Option<String>), ExperimentError> {
    // Huge page pools are checked by the allocation itself.
    if plan.pages.hugetlb() {
        return Ok((plan.size, None));
    }
    let available = gauge.allocatable(index, mem_node, &[cpu])?;
    let footprint = |s: u64| crate::placement::footprint(s, plan.pages);
    let fit = fit_cell(
        plan.size,
        plan.size_explicit,
        &footprint,
        2 * plan.stride,
        mem_node,
        available,
    )?;
    Ok((fit.size, fit.reduced))
}

/// Measure one cell on `buf`, whose chain is walked on from `at`; returns
/// the cell and where its walk stopped.
#[allow(clippy::too_many_arguments)]
fn measure_cell(
    plan: &LatencyPlan,
    buf: &NodeBuffer,
    at: usize,
    lines: usize,
    rule: &StopRule,
    timer: &Timer,
    cpu_node: u32,
    cpu: u32,
    mem_node: u32,
) -> Result<(Cell, usize), ExperimentError> {
    std::thread::scope(|s| {
        s.spawn(|| {
            measure_on_this_thread(plan, buf, at, lines, rule, timer, cpu_node, cpu, mem_node)
        })
        .join()
        .map_err(|_| ExperimentError::Panicked)?
    })
}

#[allow(clippy::too_many_arguments)]
fn measure_on_this_thread(
    plan: &LatencyPlan,
    buf: &NodeBuffer,
    at: usize,
    lines: usize,
    rule: &StopRule,
    timer: &Timer,
    cpu_node: u32,
    cpu: u32,
    mem_node: u32,
) -> Result<(Cell, usize), ExperimentError> {
    crate::fault::panic_at(crate::fault::LATENCY_CELL);
    let observed = pin_current_thread(&[cpu])?;
    // The previous cell's CPU may hold the lines it chased last; the
    // flush sends every load of this cell to memory again.
    if !buf.flush_caches() && crate::cancel::requested() {
        return Err(crate::placement::PlacementError::Interrupted.into());
    }
    let mut p = at as *const usize;
    // Probe: how long is one step, to size the samples.
    let probe = (lines as u64).clamp(1 << 10, 1 << 14);
    let a = timer.now();
    // SAFETY: p is on the chain written into `buf`, which outlives this.
    p = unsafe { chase::run(p, probe) };
    let b = timer.now();
    let per_step = (timer.elapsed_ns(a, b) / probe as f64).max(0.1);
    let steps = (target_sample_ns(rule.budget) / per_step).clamp(1024.0, 1e9) as u64;
    let started = std::time::Instant::now();
    let measured = stats::repeat(rule, || {
        let a = timer.now();
        // SAFETY: p stays on the chain.
        p = unsafe { chase::run(p, steps) };
        let b = timer.now();
        Ok::<f64, ExperimentError>(timer.elapsed_ns(a, b) / steps as f64)
    })?;
    let end = std::hint::black_box(p) as usize;
    let elapsed_s = started.elapsed().as_secs_f64();
    // Checked after the measurement: this is where the pages were while it ran.
    let check = buf.verify()?;
    let placement = CellPlacement::combine(&[check]);
    let mut flags = Vec::new();
    if placement.fraction_on_intended < PLACEMENT_THRESHOLD {
        flags.push(format!(
            "placement {:.1} % on node {mem_node} < {:.0} %",
            placement.fraction_on_intended * 100.0,
            PLACEMENT_THRESHOLD * 100.0
        ));
    }
    if measured.stop == crate::stats::StopReason::Interrupted {
        flags.push(super::cut_short_flag(measured.samples.len()));
    }
    let (window_pages, pattern) = match plan.pattern {
        ChasePattern::Random { window_pages } => (window_pages.map(|w| w as u64), "random"),
        ChasePattern::Stride => (None, "stride"),
    };
    let cell = Cell {
        cpu_node,
        mem_node,
        median: measured.summary.median,
        min: measured.summary.min,
        max: measured.summary.max,
        cv: measured.summary.cv,
        samples: measured.samples,
        stop: measured.stop,
        placement,
        cpus: vec![observed],
        params: CellParams {
            size_bytes: buf.len() as u64,
            stride_bytes: Some(plan.stride),
            pattern: Some(pattern.into()),
            window_pages,
            pages: plan.pages,
            threads: 1,
            op: None,
            policy: MemPolicy::Bind(mem_node).to_string(),
        },
        kernel: chase::spec(plan.pattern),
        // The chase is one scalar load at a time by construction.
        vector_width: VectorWidth::Scalar,
        flagged: !flags.is_empty(),
        flags,
        elapsed_s,
        setup_s: 0.0,
    };
    Ok((cell, end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::testing;
    use crate::experiments::NoProgress;
    use std::time::Duration;

    fn small() -> LatencyConfig {
        LatencyConfig {
            size: Some(4 << 20),
            pages: Some(PageKind::Small),
            rule: Some(StopRule {
                budget: Duration::from_millis(100),
                ..StopRule::default()
            }),
            ..LatencyConfig::default()
        }
    }

    #[test]
    fn small_matrix_on_this_machine_is_fully_placed() {
        let topo = testing::live_topology();
        let plan = plan(&topo, &small()).unwrap();
        let r = run(&plan, &mut NoProgress).unwrap();
        assert!(r.complete);
        assert_eq!(r.cells.len(), plan.cells.len());
        for c in &r.cells {
            assert_eq!(c.placement.fraction_on_intended, 1.0);
            // Noise may flag a cell on a busy machine; nothing else may.
            assert!(
                c.flags.iter().all(|f| f.starts_with("unstable:")),
                "{:?}",
                c.flags
            );
            assert_eq!(c.flagged, !c.flags.is_empty());
            assert!(c.samples.len() >= 3);
            assert!(c.median > 0.0);
            assert_eq!(c.cpus.len(), 1);
            assert_eq!(c.params.size_bytes, 4 << 20);
        }
        assert!(r.matrix.iter().flatten().all(Option::is_some));
    }

    /// Records what a caller drawing progress would see.
    #[derive(Default)]
    struct Seen {
        started: Vec<(usize, usize)>,
        finished: Vec<(usize, bool)>,
    }
    impl Progress for Seen {
        fn cell_started(&mut self, index: usize, total: usize, _label: &str) {
            self.started.push((index, total));
        }
        fn cell_finished(&mut self, partial: &MatrixResult) {
            self.finished.push((partial.cells.len(), partial.complete));
        }
    }

    #[test]
    fn progress_sees_every_cell_and_partial_results() {
        let topo = testing::live_topology();
        let plan = plan(&topo, &small()).unwrap();
        let mut seen = Seen::default();
        run(&plan, &mut seen).unwrap();
        let n = plan.cells.len();
        assert_eq!(seen.started, (0..n).map(|i| (i, n)).collect::<Vec<_>>());
        // After each cell the partial result holds that many cells and is
        // not yet complete: what `--output` is rewritten with.
        assert_eq!(
            seen.finished,
            (1..=n).map(|i| (i, false)).collect::<Vec<_>>()
        );
    }

    /// Records failures as a caller drawing progress would see them.
    #[derive(Default)]
    struct Failures(Vec<(usize, usize, String, usize)>);
    impl Progress for Failures {
        fn cell_failed(&mut self, index: usize, total: usize, reason: &str, p: &MatrixResult) {
            self.0
                .push((index, total, reason.to_string(), p.failed.len()));
        }
    }

    #[test]
    fn an_explicit_size_that_no_longer_fits_fails_the_cells_of_its_buffer() {
        let topo = testing::live_topology();
        let mut plan = plan(&topo, &small()).unwrap();
        // Node 0 measured twice: both cells share its one buffer.
        let (cn, cpu, mn) = plan.cells[0];
        plan.cells = vec![(cn, cpu, mn), (cn, cpu, mn)];
        let mut seen = Failures::default();
        let mut gauge = testing::ShortAt::new(0, mn, 3 << 20);
        let r = run_with(&plan, &mut seen, &mut gauge).unwrap();
        assert_eq!(r.failed.len(), 2);
        let f = &r.failed[0];
        assert_eq!(
            (f.cpu_node, f.mem_node, f.cpus.clone()),
            (cn, mn, vec![cpu])
        );
        assert!(
            f.reason.starts_with(&format!(
                "4 MiB does not fit in node {mn}'s allocatable memory (3 MiB now"
            )),
            "{}",
            f.reason
        );
        assert_eq!(
            seen.0,
            [(0, 2, f.reason.clone(), 1), (1, 2, f.reason.clone(), 2)]
        );
        assert!(r.cells.is_empty() && r.setups.is_empty());
        assert!(!r.complete);
        assert!(!r.interrupted);
        // With room again, both are measured on one buffer set up once.
        let r = run(&plan, &mut NoProgress).unwrap();
        assert_eq!(r.cells.len(), 2);
        assert_eq!(r.setups.len(), 1);
        assert_eq!(r.setups[0].cells, 2);
        assert_eq!(r.setups[0].touched_by_cpu, plan.touchers[0].1);
        assert!(r.complete);
    }

    #[test]
    fn a_default_size_that_no_longer_fits_is_reduced_and_flagged() {
        let topo = testing::live_topology();
        let cfg = LatencyConfig {
            size: Some(8 << 20),
            ..small()
        };
        let mut plan = plan(&topo, &cfg).unwrap();
        // As if 8 MiB had been the default of the plan.
        plan.size_explicit = false;
        // One cell: on a multi-node machine (the arm64 VM runs these tests
        // on two nodes) the other cells would be measured and fill the matrix.
        plan.cells.truncate(1);
        let mn = plan.cells[0].2;
        let mut gauge = testing::ShortAt::new(0, mn, 6 << 20);
        let r = run_with(&plan, &mut NoProgress, &mut gauge).unwrap();
        assert!(r.failed.is_empty());
        let c = &r.cells[0];
        // Half of what is left, in whole 2 MiB.
        assert_eq!(c.params.size_bytes, 2 << 20);
        assert!(c.flagged);
        assert!(
            c.flags[0].contains("reduced from 8 MiB to 2 MiB"),
            "{:?}",
            c.flags
        );
        // Less than 2 MiB worth measuring left: the cell fails instead.
        let mut gauge = testing::ShortAt::new(0, mn, 3 << 20);
        let r = run_with(&plan, &mut NoProgress, &mut gauge).unwrap();
        assert_eq!(r.failed.len(), 1);
        assert!(r.matrix.iter().flatten().all(Option::is_none));
    }

    #[test]
    fn stride_pattern_defaults_to_128_bytes() {
        let topo = testing::live_topology();
        let cfg = LatencyConfig {
            pattern: Some(ChasePattern::Stride),
            ..small()
        };
        assert_eq!(plan(&topo, &cfg).unwrap().stride, 128);
    }

    #[test]
    fn bad_requests_fail_in_the_plan() {
        let topo = testing::with_memory_only_node();
        let mut cfg = small();
        cfg.cpu_nodes = Some(vec![7]);
        assert!(matches!(
            plan(&topo, &cfg),
            Err(ExperimentError::CpuLessNode { .. })
        ));
        cfg.cpu_nodes = Some(vec![99]);
        assert!(matches!(
            plan(&topo, &cfg),
            Err(ExperimentError::NoSuchNode { .. })
        ));
        let mut cfg = small();
        cfg.mem_nodes = Some(vec![0]);
        cfg.size = Some(1 << 50);
        let e = plan(&topo, &cfg).unwrap_err().to_string();
        assert!(
            e.contains("does not fit in node 0 even when nothing else uses it"),
            "{e}"
        );
        let mut cfg = small();
        cfg.stride = Some(12);
        assert!(matches!(
            plan(&topo, &cfg),
            Err(ExperimentError::Invalid(_))
        ));
    }
}
