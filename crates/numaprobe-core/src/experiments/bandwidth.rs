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

use super::barrier::Barrier;
use super::node_buffers;
use super::{
    fit_cell, resolve_nodes, target_sample_ns, ExperimentError, LiveGauge, MemoryGauge, Progress,
};
use crate::kernels::stream::{self, StreamOp, Streams};
use crate::kernels::VectorWidth;
use crate::model::matrix::{Cell, CellParams, CellPlacement, FailedCell, MatrixKind, MatrixResult};
use crate::placement::{
    pin_current_thread, BufferSpec, LiveSystem, MemPolicy, NodeBuffer, PageKind,
    PLACEMENT_THRESHOLD,
};
use crate::stats::{self, StopRule};
use crate::timer::{Stamp, Timer};
use crate::topology::Topology;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

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
    let touchers = super::latency::touchers(topo, &mem_nodes)?;
    notes.extend(super::latency::page_table_notes(topo, &touchers));
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

/// Measure every cell of the plan, in order, checking each cell's memory
/// against the live machine right before it allocates.
pub fn run(
    plan: &BandwidthPlan,
    progress: &mut dyn Progress,
) -> Result<MatrixResult, ExperimentError> {
    run_with(plan, progress, &mut LiveGauge(LiveSystem::read()?))
}

/// [`run`] with the memory figures taken from `gauge`.
pub fn run_with(
    plan: &BandwidthPlan,
    progress: &mut dyn Progress,
    gauge: &mut dyn MemoryGauge,
) -> Result<MatrixResult, ExperimentError> {
    let timer = *Timer::get();
    let mut result = MatrixResult::new(
        MatrixKind::Bandwidth,
        plan.cpu_nodes.clone(),
        plan.mem_nodes.clone(),
        plan.rule,
        timer.info(),
    );
    result.notes.extend(plan.notes.iter().cloned());
    result.notes.extend(write_allocate_note(plan.op));
    if plan.scaling {
        result.scaling = Some(Vec::new());
    }
    let total = plan.cells.len();
    let mut index = 0;
    let label = |pc: &PlannedCell| {
        format!(
            "{} thread(s) on CPUs {} (node {}) -> memory node {}",
            pc.cpus.len(),
            crate::units::format_list(&pc.cpus),
            pc.cpu_node,
            pc.mem_node
        )
    };
    let fail = |result: &mut MatrixResult, pc: &PlannedCell, reason: &str| {
        result.failed.push(FailedCell {
            cpu_node: pc.cpu_node,
            mem_node: pc.mem_node,
            cpus: pc.cpus.clone(),
            reason: reason.to_string(),
        });
    };
    'nodes: for (mn, group) in
        node_buffers::by_memory_node(&plan.cells, &plan.mem_nodes, |c| c.mem_node)
    {
        if crate::cancel::requested() {
            break;
        }
        let first = &plan.cells[group[0]];
        let toucher = super::latency::toucher_of(&plan.touchers, mn, first.cpus[0]);
        let prepared = size_cell(plan, gauge, index, first).and_then(|(size, reduced)| {
            let spec = BufferSpec::new(size as usize, MemPolicy::Bind(mn), plan.pages);
            Ok((
                node_buffers::set_up(&spec, mn, toucher, |_| Ok(()))?,
                size,
                reduced,
            ))
        });
        let (mut prepared, size, reduced) = match prepared {
            Ok(p) => p,
            Err(e) => {
                let reason = e.to_string();
                for &i in &group {
                    if crate::cancel::requested() {
                        break 'nodes;
                    }
                    progress.cell_started(index, total, &label(&plan.cells[i]));
                    fail(&mut result, &plan.cells[i], &reason);
                    progress.cell_failed(index, total, &reason, &result);
                    index += 1;
                }
                continue;
            }
        };
        progress.buffer_ready(&prepared.record);
        result.setups.push(prepared.record.clone());
        for &i in &group {
            let pc = &plan.cells[i];
            progress.cell_started(index, total, &label(pc));
            if crate::cancel::requested() {
                break 'nodes;
            }
            let rule = progress.rule_for_cell(index, plan.rule);
            let began = std::time::Instant::now();
            index += 1;
            let measured = measure_cell(plan, &mut prepared.buf, size, &rule, &timer, pc);
            let mut cell = match measured {
                Ok(cell) => cell,
                Err(e) => {
                    let reason = e.to_string();
                    fail(&mut result, pc, &reason);
                    progress.cell_failed(index - 1, total, &reason, &result);
                    continue;
                }
            };
            if let Some(why) = &reduced {
                cell.flags.push(why.clone());
                cell.flagged = true;
            }
            cell.setup_s = (began.elapsed().as_secs_f64() - cell.elapsed_s).max(0.0);
            prepared.record.cells += 1;
            if let Some(s) = result.setups.last_mut() {
                s.cells = prepared.record.cells;
            }
            if let Some(sc) = result.scaling.as_mut() {
                sc.push(cell.clone());
                // The matrix shows the largest thread count measured so far.
                result.cells.clear();
                result.matrix = vec![vec![None]];
            }
            result.push(cell);
            progress.cell_finished(&result);
        }
    }
    // A stop requested during the last cell cut that cell short too.
    result.interrupted |= crate::cancel::requested();
    result.complete = !result.interrupted && result.failed.is_empty();
    Ok(result)
}

/// The size the memory node's buffer is set up with (checked before cell
/// `index`, the first on it, with its threads' CPUs), and why it is
/// smaller than planned.
fn size_cell(
    plan: &BandwidthPlan,
    gauge: &mut dyn MemoryGauge,
    index: usize,
    pc: &PlannedCell,
) -> Result<(u64, Option<String>), ExperimentError> {
    // Huge page pools are checked by the allocations themselves.
    if plan.pages.hugetlb() {
        return Ok((plan.size, None));
    }
    let available = gauge.allocatable(index, pc.mem_node, &pc.cpus)?;
    let threads = plan.cells.iter().map(|c| c.cpus.len()).max().unwrap_or(1);
    let footprint = |s: u64| buffer_footprint(s, plan.pages);
    let min = threads as u64 * plan.op.streams() as u64 * crate::pagesize::base();
    let fit = fit_cell(
        plan.size,
        plan.size_explicit,
        &footprint,
        min,
        pc.mem_node,
        available,
    )?;
    Ok((fit.size, fit.reduced))
}

/// What the workers share with the coordinating thread.
struct Shared {
    barrier: Barrier,
    stop: AtomicBool,
    reps: AtomicU64,
    /// (start, end) of each worker's last sample.
    stamps: Mutex<Vec<(Stamp, Stamp)>>,
}

struct WorkerReport {
    observed_cpu: u32,
    bytes_per_pass: u64,
}

/// Measure one cell on the memory node's buffer: each thread streams its
/// own contiguous share of `size` bytes.
fn measure_cell(
    plan: &BandwidthPlan,
    buf: &mut NodeBuffer,
    size: u64,
    rule: &StopRule,
    timer: &Timer,
    pc: &PlannedCell,
) -> Result<Cell, ExperimentError> {
    let threads = pc.cpus.len();
    let per_thread = per_thread(size.min(buf.len() as u64), threads, plan.op);
    if per_thread == 0 {
        return Err(ExperimentError::Invalid(format!(
            "{} B is too small for {threads} threads of {}",
            buf.len(),
            plan.op.name()
        )));
    }
    if !buf.flush_caches() && crate::cancel::requested() {
        return Err(crate::placement::PlacementError::Interrupted.into());
    }
    let shared = Shared {
        barrier: Barrier::new(threads + 1),
        stop: AtomicBool::new(false),
        reps: AtomicU64::new(1),
        stamps: Mutex::new(vec![(Stamp(0), Stamp(0)); threads]),
    };
    // Addresses, not pointers: the workers' shares are disjoint parts of
    // the buffer, which outlives the scope below.
    let base = buf.as_mut_ptr() as usize;
    let result = std::thread::scope(|s| {
        let handles: Vec<_> = pc
            .cpus
            .iter()
            .enumerate()
            .map(|(i, &cpu)| {
                let shared = &shared;
                let share = (base + i * per_thread as usize, per_thread as usize);
                s.spawn(move || worker(i, cpu, share, plan, timer, shared))
            })
            .collect();
        // A panic on this side breaks the barrier too: no worker waits
        // for a coordinator that is gone.
        let _guard = shared.barrier.guard();
        // Every worker reaches this barrier once it is pinned (or its
        // pinning failed); then the coordinator knows whether to measure.
        let ready = shared.barrier.wait()
            && shared
                .stamps
                .lock()
                .map(|v| v.iter().all(|&(a, _)| a == Stamp(1)))
                .unwrap_or(false);
        let outcome = if ready {
            coordinate(plan, per_thread, rule, timer, &shared)
        } else {
            // Never returned: the failing worker's own error is (below).
            Err(ExperimentError::Invalid("a worker could not set up".into()))
        };
        shared.stop.store(true, Ordering::SeqCst);
        shared.barrier.wait();
        let reports = crate::experiments::workers::join_all(handles)?;
        Ok::<_, ExperimentError>((reports, outcome?))
    });
    let (reports, (measured, elapsed_s)) = result?;
    let placement = CellPlacement::combine(&[buf.verify()?]);
    let mut flags = Vec::new();
    if placement.fraction_on_intended < PLACEMENT_THRESHOLD {
        flags.push(format!(
            "placement {:.1} % on node {} < {:.0} %",
            placement.fraction_on_intended * 100.0,
            pc.mem_node,
            PLACEMENT_THRESHOLD * 100.0
        ));
    }
    if measured.stop == crate::stats::StopReason::Interrupted {
        flags.push(super::cut_short_flag(measured.samples.len()));
    }
    let bytes: u64 = reports.iter().map(|r| r.bytes_per_pass).sum();
    Ok(Cell {
        cpu_node: pc.cpu_node,
        mem_node: pc.mem_node,
        median: measured.summary.median,
        min: measured.summary.min,
        max: measured.summary.max,
        cv: measured.summary.cv,
        samples: measured.samples,
        stop: measured.stop,
        placement,
        cpus: reports.iter().map(|r| r.observed_cpu).collect(),
        params: CellParams {
            size_bytes: bytes,
            stride_bytes: None,
            pattern: None,
            window_pages: None,
            pages: plan.pages,
            threads: threads as u32,
            op: Some(plan.op.name().into()),
            policy: MemPolicy::Bind(pc.mem_node).to_string(),
        },
        kernel: plan.op.spec_for(plan.width),
        vector_width: plan.width,
        flagged: !flags.is_empty(),
        flags,
        elapsed_s,
        setup_s: 0.0,
    })
}

/// The coordinator's side: size the samples, then sample under the rule.
fn coordinate(
    plan: &BandwidthPlan,
    per_thread: u64,
    rule: &StopRule,
    timer: &Timer,
    shared: &Shared,
) -> Result<(stats::Measured, f64), ExperimentError> {
    let sample = |reps: u64| -> Result<f64, ExperimentError> {
        shared.reps.store(reps, Ordering::SeqCst);
        // A broken barrier: a worker panicked, this sample never completes.
        if !(shared.barrier.wait() && shared.barrier.wait()) {
            return Err(ExperimentError::Panicked);
        }
        let stamps = shared.stamps.lock().map(|v| v.clone()).unwrap_or_default();
        let start = stamps.iter().map(|s| s.0).min().unwrap_or(Stamp(0));
        let end = stamps.iter().map(|s| s.1).max().unwrap_or(Stamp(0));
        Ok(timer.elapsed_ns(start, end).max(1.0))
    };
    // Probe one pass to size the samples.
    let pass_ns = sample(1)?;
    let reps = (target_sample_ns(rule.budget) / pass_ns).clamp(1.0, 1e6) as u64;
    let per_pass: u64 = {
        // Bytes one pass asks for, all threads: the same split as the workers.
        let threads = shared.stamps.lock().map(|v| v.len()).unwrap_or(1) as u64;
        let s = Streams::split(plan.op, std::ptr::null_mut(), per_thread as usize);
        s.bytes_per_pass(plan.op) * threads
    };
    let started = std::time::Instant::now();
    let measured = stats::repeat(rule, || {
        let ns = sample(reps)?;
        Ok::<f64, ExperimentError>((per_pass * reps) as f64 / ns)
    })?;
    Ok((measured, started.elapsed().as_secs_f64()))
}

fn worker(
    index: usize,
    cpu: u32,
    share: (usize, usize),
    plan: &BandwidthPlan,
    timer: &Timer,
    shared: &Shared,
) -> Result<WorkerReport, ExperimentError> {
    // A panic anywhere below breaks the barrier: nobody waits for us forever.
    let _guard = shared.barrier.guard();
    let pinned = pin_current_thread(&[cpu]);
    // Stamp(1) in the start slot tells the coordinator this worker is ready.
    if pinned.is_ok() {
        if let Ok(mut v) = shared.stamps.lock() {
            v[index] = (Stamp(1), Stamp(0));
        }
    }
    shared.barrier.wait();
    let observed = match pinned {
        Ok(c) => c,
        Err(e) => {
            // Keep the barrier protocol: wait for the coordinator's stop.
            shared.barrier.wait();
            return Err(e.into());
        }
    };
    let streams = Streams::split(plan.op, share.0 as *mut u8, share.1);
    loop {
        // start (or stop); a broken barrier (a thread panicked) stops too
        if !shared.barrier.wait() || shared.stop.load(Ordering::SeqCst) {
            break;
        }
        crate::fault::panic_at(crate::fault::BANDWIDTH_WORKER);
        let reps = shared.reps.load(Ordering::SeqCst);
        let a = timer.now();
        for _ in 0..reps {
            // SAFETY: the arrays lie inside this worker's share of the
            // buffer, page-aligned, and the width was checked available in
            // the plan.
            std::hint::black_box(unsafe { stream::run(plan.op, plan.width, &streams) });
        }
        let b = timer.now();
        if let Ok(mut v) = shared.stamps.lock() {
            v[index] = (a, b);
        }
        shared.barrier.wait(); // done
    }
    Ok(WorkerReport {
        observed_cpu: observed,
        bytes_per_pass: streams.bytes_per_pass(plan.op),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::{testing, NoProgress};
    use std::time::Duration;

    fn small() -> BandwidthConfig {
        BandwidthConfig {
            mem_nodes: Some(vec![0]),
            cpu_nodes: Some(vec![0]),
            size: Some(8 << 20),
            pages: Some(PageKind::Small),
            rule: Some(StopRule {
                budget: Duration::from_millis(100),
                ..StopRule::default()
            }),
            ..BandwidthConfig::default()
        }
    }

    #[test]
    fn every_op_runs_placed_with_all_threads() {
        let topo = testing::live_topology();
        let n = topo.allowed_core_cpus_of_node(0).len();
        for op in [StreamOp::Read, StreamOp::CopyNt, StreamOp::Triad] {
            let cfg = BandwidthConfig {
                op: Some(op),
                ..small()
            };
            let plan = plan(&topo, &cfg).unwrap();
            let r = run(&plan, &mut NoProgress).unwrap();
            let c = &r.cells[0];
            assert_eq!(c.params.threads as usize, n);
            assert_eq!(c.cpus.len(), n);
            assert_eq!(c.placement.fraction_on_intended, 1.0, "{op:?}");
            assert!(c.median > 0.0);
            assert_eq!(c.params.op.as_deref(), Some(op.name()));
            assert_eq!(r.unit, "GB/s");
            assert_eq!(r.notes.is_empty(), op != StreamOp::Triad);
        }
    }

    #[test]
    fn scaling_measures_one_to_n_threads() {
        let topo = testing::live_topology();
        let cfg = BandwidthConfig {
            scaling: true,
            threads: Some(2.min(topo.allowed_cpus_of_node(0).len())),
            ..small()
        };
        let plan = plan(&topo, &cfg).unwrap();
        let r = run(&plan, &mut NoProgress).unwrap();
        let sc = r.scaling.as_ref().unwrap();
        assert_eq!(sc.len(), plan.cells.len());
        for (i, c) in sc.iter().enumerate() {
            assert_eq!(c.params.threads as usize, i + 1);
        }
        assert_eq!(r.cells.len(), 1);
        assert_eq!(r.matrix, vec![vec![Some(sc.last().unwrap().median)]]);
    }

    #[test]
    fn a_buffer_that_does_not_fit_fails_every_cell_on_it() {
        let topo = testing::live_topology();
        if topo.allowed_cpus_of_node(0).len() < 2 {
            return; // one CPU: a scaling run has one cell
        }
        let cfg = BandwidthConfig {
            scaling: true,
            threads: Some(2),
            ..small()
        };
        let plan = plan(&topo, &cfg).unwrap();
        // Node 0 has 7 MiB left for the 8 MiB buffer both cells share.
        let mut gauge = testing::ShortAt::new(0, 0, 7 << 20);
        let r = run_with(&plan, &mut NoProgress, &mut gauge).unwrap();
        assert_eq!(r.failed.len(), 2);
        assert_eq!(r.failed[0].cpus, plan.cells[0].cpus);
        assert_eq!(r.failed[1].cpus, plan.cells[1].cpus);
        assert!(
            r.failed[0]
                .reason
                .starts_with("8 MiB does not fit in node 0's allocatable memory (7 MiB now"),
            "{}",
            r.failed[0].reason
        );
        assert!(r.scaling.as_ref().unwrap().is_empty());
        assert!(r.setups.is_empty());
        assert!(!r.complete);
        // With room, one buffer serves both thread counts.
        let r = run(&plan, &mut NoProgress).unwrap();
        assert_eq!(r.setups.len(), 1);
        assert_eq!(r.setups[0].cells, 2);
        let sc = r.scaling.as_ref().unwrap();
        assert_eq!(sc[0].params.size_bytes, sc[1].params.size_bytes);
        assert_eq!(sc[1].placement.fraction_on_intended, 1.0);
    }

    #[test]
    fn the_threads_of_a_cell_are_checked_together() {
        let topo = testing::live_topology();
        if topo.allowed_cpus_of_node(0).len() < 2 {
            return;
        }
        // Two threads of 4 MiB each: 6 MiB left is enough for either alone.
        let cfg = BandwidthConfig {
            threads: Some(2),
            ..small()
        };
        let plan = plan(&topo, &cfg).unwrap();
        let mut gauge = testing::ShortAt::new(0, 0, 6 << 20);
        let r = run_with(&plan, &mut NoProgress, &mut gauge).unwrap();
        assert_eq!(r.failed.len(), 1, "{:?}", r.cells);
        assert!(r.cells.is_empty());
        assert_eq!(r.matrix, vec![vec![None]]);
    }

    #[test]
    fn too_many_threads_and_tiny_sizes_fail_in_the_plan() {
        let topo = testing::live_topology();
        let cfg = BandwidthConfig {
            threads: Some(1000),
            ..small()
        };
        let e = plan(&topo, &cfg).unwrap_err().to_string();
        assert!(e.contains("1000 threads asked for node 0"), "{e}");
        let cfg = BandwidthConfig {
            size: Some(4096),
            op: Some(StreamOp::Triad),
            ..small()
        };
        assert!(matches!(
            plan(&topo, &cfg),
            Err(ExperimentError::Invalid(_))
        ));
    }

    #[test]
    fn write_allocate_is_stated_for_ordinary_stores_only() {
        assert!(write_allocate_note(StreamOp::Write)
            .unwrap()
            .contains("2.00x"));
        assert!(write_allocate_note(StreamOp::Copy)
            .unwrap()
            .contains("1.50x"));
        assert!(write_allocate_note(StreamOp::Read).is_none());
        assert!(write_allocate_note(StreamOp::WriteNt).is_none());
    }
}
