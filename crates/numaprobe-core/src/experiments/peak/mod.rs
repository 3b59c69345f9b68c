//! System peak bandwidth: every allowed CPU of every node streaming its own
//! node's memory at once, per mix, beside each node alone.
//!
//! A step is one mix on a set of threads: the whole system (every allowed
//! CPU of every node with its own memory, MLC's peak injection bandwidth)
//! or one node alone. Each thread is pinned (checked), then maps and
//! touches its own buffer bound to its node, so the pages and page tables
//! come from the measuring side; a barrier starts every thread together,
//! each runs the mix kernel (`kernels::mix`, no delay) over its buffer, and
//! a sample is the bytes all threads asked for over the span from the first
//! start to the last end. In the system step each node's threads also give
//! that node's figure under full load. The pages are verified (move_pages)
//! after the last sample. Between steps the run stops on a cancel or when
//! the caller's time is spent, keeping what it has.

use super::{target_sample_ns, ExperimentError, StepProgress};
use crate::experiments::team::{shortened, Part, Team, MIN_PART_BYTES};
use crate::held::Lost;
use crate::kernels::mix::{self, Mix, MixBuffers, LINE};
use crate::kernels::VectorWidth;
use crate::model::matrix::CellPlacement;
use crate::model::peak::{MemoryPopulation, NodePeak, PeakResult, SystemPeak};
use crate::placement::{
    pin_current_thread, BufferSpec, LiveSystem, MemPolicy, NodeBuffer, PageKind, PlacementCheck,
    PLACEMENT_THRESHOLD,
};
use crate::stats::{self, StopRule, Summary};
use crate::timer::{Stamp, Timer};
use crate::topology::Topology;
use std::collections::BTreeMap;

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
    /// Vector width of the read kernel; default the widest (as `bandwidth`).
    pub width: Option<VectorWidth>,
}

#[derive(Debug, Clone)]
pub struct PeakPlan {
    pub nodes: Vec<u32>,
    pub mixes: Vec<String>,
    pub size: u64,
    pub rule: StopRule,
    pub per_node: bool,
    /// The allowed CPUs of each node in `nodes`, in the same order.
    pub cpus: Vec<Vec<u32>>,
    pub pages: PageKind,
    pub width: VectorWidth,
    /// Known at plan time (a CPU node without memory this process may use).
    pub notes: Vec<String>,
}

impl PeakPlan {
    pub fn steps(&self) -> usize {
        self.mixes.len() * (1 + if self.per_node { self.nodes.len() } else { 0 })
    }

    /// Every step in order: per mix, the system first (the figure wanted
    /// most if the time runs out), then each node alone.
    fn step_list(&self) -> Vec<(Mix, Option<usize>)> {
        let mut out = Vec::new();
        for m in &self.mixes {
            let m = Mix::parse(m).unwrap_or(Mix::Read);
            out.push((m, None));
            if self.per_node {
                out.extend((0..self.nodes.len()).map(|i| (m, Some(i))));
            }
        }
        out
    }
}

/// The valid mixes, for an error line.
pub const MIX_HELP: &str =
    "read, nt-write, or R:W with R and W from 1 to 16 (3:1, 2:1, 1:1 as MLC)";

/// Resolve defaults and check everything. Nothing is allocated here.
pub fn plan(topo: &Topology, cfg: &PeakConfig) -> Result<PeakPlan, ExperimentError> {
    let mut mixes: Vec<String> = Vec::new();
    for s in cfg.mixes.clone().unwrap_or_else(|| vec!["read".into()]) {
        let m = Mix::parse(&s).ok_or_else(|| {
            ExperimentError::Invalid(format!("--mix: invalid value '{s}' (valid: {MIX_HELP})"))
        })?;
        if !mixes.contains(&m.name()) {
            mixes.push(m.name());
        }
    }
    if mixes.is_empty() {
        return Err(ExperimentError::Invalid(format!(
            "--mix: no mix given (valid: {MIX_HELP})"
        )));
    }
    let live = LiveSystem::read()?;
    let mem_ok = topo.allowed_mem_nodes();
    let mut notes = Vec::new();
    let mut nodes = Vec::new();
    let mut cpus = Vec::new();
    for n in topo.allowed_cpu_nodes() {
        if !mem_ok.contains(&n) {
            notes.push(format!(
                "node {n} has CPUs but no memory this process may allocate: its CPUs take no part"
            ));
            continue;
        }
        nodes.push(n);
        cpus.push(topo.allowed_cpus_of_node(n));
    }
    if nodes.is_empty() {
        return Err(ExperimentError::NoCpuNodes);
    }
    let pages = cfg.pages.unwrap_or_else(|| super::default_pages(&live));
    let base = crate::pagesize::base();
    // Per thread: the node's total of max(256 MiB, 2 x LLC) (a sequential
    // stream only has to exceed the cache, as `policy` found; 8 x LLC made
    // every step touch gigabytes), capped by its free memory, over its
    // threads; the smallest over the nodes so every thread streams the same
    // amount.
    let size = match cfg.size {
        Some(s) => s,
        None => nodes
            .iter()
            .zip(&cpus)
            .map(|(&n, c)| {
                // Every node streams its own memory at once: one node's
                // total per node within the run's footprint.
                super::default_size_times_llc(topo, &live, &[n], 2, nodes.len())
                    / c.len().max(1) as u64
            })
            .min()
            .unwrap_or(0),
    };
    let size = size / base * base;
    if size < 2 * base {
        return Err(ExperimentError::Invalid(format!(
            "--size: {} per thread is too small: at least {} (a read and a write page)",
            crate::units::format_size(size),
            crate::units::format_size(2 * base)
        )));
    }
    for (&n, c) in nodes.iter().zip(&cpus) {
        let total = c.len() as u64 * crate::placement::footprint(size, pages);
        let total = usize::try_from(total)
            .map_err(|_| ExperimentError::Invalid(format!("--size {size} B is too large")))?;
        BufferSpec::new(total, MemPolicy::Bind(n), pages).check_capacity(&live, None)?;
    }
    Ok(PeakPlan {
        nodes,
        mixes,
        size,
        rule: cfg.rule.unwrap_or_default(),
        per_node: cfg.per_node,
        cpus,
        pages,
        width: super::vector_width(cfg.width)?,
        notes,
    })
}

/// An empty result for `plan`: the memory population is the caller's.
fn new_result(plan: &PeakPlan, timer: &Timer) -> PeakResult {
    PeakResult {
        schema: crate::SCHEMA.into(),
        system: Vec::new(),
        nodes: Vec::new(),
        memory: MemoryPopulation::default(),
        achieved_fraction: None,
        size_bytes: plan.size,
        pages: plan.pages.to_string(),
        vector: plan.width.name().into(),
        timer: timer.info(),
        notes: plan.notes.clone(),
        complete: false,
        interrupted: false,
    }
}

/// A result holding only the memory population (`--memory-only`).
pub fn memory_only(memory: MemoryPopulation) -> PeakResult {
    let mut r = PeakResult {
        schema: crate::SCHEMA.into(),
        system: Vec::new(),
        nodes: Vec::new(),
        memory: MemoryPopulation::default(),
        achieved_fraction: None,
        size_bytes: 0,
        pages: String::new(),
        vector: String::new(),
        timer: Timer::get().info(),
        notes: Vec::new(),
        complete: true,
        interrupted: false,
    };
    set_memory(&mut r, memory);
    r
}

/// Attach the memory population and the achieved fraction: the best
/// system figure over the theoretical DRAM peak.
pub fn set_memory(r: &mut PeakResult, memory: MemoryPopulation) {
    let best = r
        .system
        .iter()
        .map(|s| s.gbs)
        .fold(None, |a: Option<f64>, g| Some(a.map_or(g, |a| a.max(g))));
    r.achieved_fraction = match (best, memory.theoretical_gbs) {
        (Some(b), Some(t)) if t > 0.0 => Some(b / t),
        _ => None,
    };
    r.memory = memory;
}

/// Measure every step of the plan in order.
pub fn run(
    plan: &PeakPlan,
    progress: &mut dyn StepProgress,
) -> Result<PeakResult, ExperimentError> {
    run_with(plan, progress, &mut |_| {})
}

/// [`run`], handing the result so far to `partial` after every step (the
/// command rewrites `--output` with it, so a killed run keeps its steps).
pub fn run_with(
    plan: &PeakPlan,
    progress: &mut dyn StepProgress,
    partial: &mut dyn FnMut(&PeakResult),
) -> Result<PeakResult, ExperimentError> {
    let timer = *Timer::get();
    let mut result = new_result(plan, &timer);
    let steps = plan.step_list();
    let total = steps.len();
    let (mut stopped, mut failed) = (false, false);
    let phase = crate::beside::Watch::start();
    for (i, &(m, alone)) in steps.iter().enumerate() {
        let label = match alone {
            None => format!("{}: every node at once", m.name()),
            Some(k) => format!("{}: node {} alone", m.name(), plan.nodes[k]),
        };
        progress.step_started(i, total, &label);
        if crate::cancel::requested() {
            result.interrupted = true;
            break;
        }
        if progress.out_of_time() {
            stopped = true;
            break;
        }
        let rule = progress.rule_for_step(i, plan.rule);
        let groups: Vec<usize> = match alone {
            None => (0..plan.nodes.len()).collect(),
            Some(k) => vec![k],
        };
        let threads: Vec<(u32, u32)> = groups
            .iter()
            .flat_map(|&k| plan.cpus[k].iter().map(move |&c| (plan.nodes[k], c)))
            .collect();
        let watch = crate::beside::Watch::start();
        match measure(plan, m, &threads, &rule, &timer) {
            Ok(mm) => {
                // Not `mark_step`: one step's reading stars several figures
                // (each node's and the system's), whose flags `record` builds.
                let others = crate::beside::beside_step(watch, phase);
                record(&mut result, m, alone.is_none(), &threads, mm, others)
            }
            Err(e) => {
                failed = true;
                result.notes.push(format!("{label}: not measured: {e}"));
            }
        }
        progress.step_finished(i, total);
        partial(&result);
    }
    // The sum of the nodes alone, beside each system figure.
    for s in &mut result.system {
        let alone: Vec<f64> = result
            .nodes
            .iter()
            .filter(|n| !n.concurrent && n.mix == s.mix)
            .map(|n| n.gbs)
            .collect();
        if plan.per_node && alone.len() == plan.nodes.len() {
            s.sum_of_nodes_alone_gbs = Some(alone.iter().sum());
        }
    }
    if plan.mixes.iter().any(|m| m.contains(':')) {
        result.notes.push(
            "R:W mixes use ordinary stores: each stored line is first read from memory (write-allocate), so the memory traffic is higher than the bytes counted; nt-write avoids it"
                .into(),
        );
    }
    result.interrupted |= crate::cancel::requested();
    result.complete = !result.interrupted && !stopped && !failed;
    Ok(result)
}

/// What one step measured.
struct StepMeasure {
    system: stats::Measured,
    /// Per node: its threads' GB/s per sample.
    per_node: BTreeMap<u32, Vec<f64>>,
    /// Per thread, in `threads` order: the CPU it ran on and its buffer's check.
    observed: Vec<u32>,
    checks: Vec<PlacementCheck>,
}

/// One step's figures into `r`; `others` is what other tasks kept busy
/// beside the step ([`crate::beside::beside_step`]).
fn record(
    r: &mut PeakResult,
    m: Mix,
    system: bool,
    threads: &[(u32, u32)],
    mm: StepMeasure,
    others: Option<f64>,
) {
    let mut all_flags = Vec::new();
    let mut node_peaks = Vec::new();
    for (&node, samples) in &mm.per_node {
        let idx: Vec<usize> = (0..threads.len())
            .filter(|&i| threads[i].0 == node)
            .collect();
        let checks: Vec<PlacementCheck> = idx.iter().map(|&i| mm.checks[i].clone()).collect();
        let placement = CellPlacement::combine(&checks).fraction_on_intended;
        let mut flags = Vec::new();
        if placement < PLACEMENT_THRESHOLD {
            flags.push(format!(
                "placement {:.1} % on node {node} < {:.0} %",
                placement * 100.0,
                PLACEMENT_THRESHOLD * 100.0
            ));
        }
        for &i in &idx {
            if mm.observed[i] != threads[i].1 {
                flags.push(format!(
                    "a thread pinned to CPU {} ran on CPU {}",
                    threads[i].1, mm.observed[i]
                ));
            }
        }
        all_flags.extend(flags.iter().cloned());
        let s = Summary::of(samples);
        if let Some(s) = s {
            flags.extend(crate::stats::flags::figure_flags(
                samples,
                s.cv,
                s.min,
                s.max,
                samples.len(),
                &mm.system.set_aside,
                "GB/s",
            ));
        }
        crate::beside::mark(&mut flags, others);
        node_peaks.push(NodePeak {
            node,
            mix: m.name(),
            threads: idx.len(),
            gbs: s.map(|s| s.median).unwrap_or(0.0),
            concurrent: system,
            cpus: idx.iter().map(|&i| mm.observed[i]).collect(),
            placement,
            cv: s.map(|s| s.cv).unwrap_or(0.0),
            flagged: !flags.is_empty(),
            flags,
            set_aside: mm.system.set_aside,
        });
    }
    if system {
        all_flags.extend(mm.system.flags("GB/s"));
        crate::beside::mark(&mut all_flags, others);
        r.system.push(SystemPeak {
            mix: m.name(),
            threads: threads.len(),
            gbs: mm.system.summary.median,
            placement: CellPlacement::combine(&mm.checks).fraction_on_intended,
            samples: mm.system.samples.len(),
            cv: mm.system.summary.cv,
            sum_of_nodes_alone_gbs: None,
            flagged: !all_flags.is_empty(),
            flags: all_flags,
            set_aside: mm.system.set_aside,
        });
    }
    r.nodes.extend(node_peaks);
}

fn measure(
    plan: &PeakPlan,
    m: Mix,
    threads: &[(u32, u32)],
    rule: &StopRule,
    timer: &Timer,
) -> Result<StepMeasure, ExperimentError> {
    let work = |i: usize, team: &Team| {
        let (node, cpu) = threads[i];
        let spec = BufferSpec::new(plan.size as usize, MemPolicy::Bind(node), plan.pages);
        let setup = || -> Result<_, ExperimentError> {
            let observed = pin_current_thread(&[cpu])?;
            let mut buf = NodeBuffer::alloc(&spec)?;
            buf.touch();
            let bufs = split(m, buf.as_mut_ptr(), spec.len.min(buf.len()));
            Ok((observed, buf, bufs))
        };
        let pass = |(_, _, bufs): &mut (u32, NodeBuffer, MixBuffers), reps: u64, part: Part| {
            let bufs = &part_of(bufs, part);
            let mut bytes = 0u64;
            for _ in 0..reps {
                // SAFETY: both parts lie inside our page-aligned buffer,
                // 64-byte aligned, not overlapping.
                bytes += unsafe { mix::run(m, bufs, 0, plan.width) };
            }
            bytes
        };
        let (observed, buf, _) = team.serve(i, setup, timer, crate::fault::PEAK_WORKER, pass)?;
        Ok((observed, buf.verify()?))
    };
    let (reports, (system, per_node)) = Team::run(threads.len(), work, |team| {
        coordinate(threads, plan.size, rule, timer, team)
    })?;
    let (observed, checks) = reports.into_iter().unzip();
    Ok(StepMeasure {
        system,
        per_node,
        observed,
        checks,
    })
}

type Coordinated = (stats::Measured, BTreeMap<u32, Vec<f64>>);

/// Each node's threads' GB/s in one sample, and whether any thread lost
/// its CPU during it.
type NodeSample = (Vec<(u32, f64)>, bool);

/// Size the samples, then sample under the rule, setting aside a sample in
/// which any thread lost its CPU (as bandwidth's matrix does, shortening
/// to parts of a pass when many are); each sample also gives each node's
/// threads' figure, kept or set aside with the system's.
fn coordinate(
    threads: &[(u32, u32)],
    per_thread: u64,
    rule: &StopRule,
    timer: &Timer,
    team: &Team,
) -> Result<Coordinated, ExperimentError> {
    let mut taken: Vec<NodeSample> = Vec::new();
    let nodes: std::collections::BTreeSet<u32> = threads.iter().map(|t| t.0).collect();
    let mut sample = |reps: u64, part: Part| -> Result<(f64, f64, Option<Lost>), ExperimentError> {
        let s = team.sample_part(reps, part)?;
        let gbs = |idx: &mut dyn Iterator<Item = usize>| -> (f64, f64) {
            let (mut a, mut b, mut bytes) = (Stamp(u64::MAX), Stamp(0), 0u64);
            for i in idx {
                let (st, e, n) = s.stamps[i];
                a = a.min(st);
                b = b.max(e);
                bytes += n;
            }
            let ns = timer.elapsed_ns(a, b).max(1.0);
            (bytes as f64 / ns, ns)
        };
        let per_node = nodes
            .iter()
            .map(|&n| {
                (
                    n,
                    gbs(&mut (0..threads.len()).filter(|&i| threads[i].0 == n)).0,
                )
            })
            .collect();
        let lost = s.lost(timer);
        taken.push((per_node, lost.is_some()));
        let (g, ns) = gbs(&mut (0..threads.len()));
        Ok((g, ns, lost))
    };
    let (_, pass_ns, _) = sample(1, Part::WHOLE)?;
    let reps = (target_sample_ns(rule.budget) / pass_ns).clamp(1.0, 1e6) as u64;
    let most_parts = (per_thread / MIN_PART_BYTES).max(1);
    let mut k = 0u64;
    let measured = stats::repeat_held(rule, |shorten| {
        let (reps, part) = shortened(reps, shorten as u64, most_parts, k);
        k += 1;
        let (g, _, lost) = sample(reps, part)?;
        Ok::<_, ExperimentError>(stats::Taken { value: g, lost })
    })?;
    let per_node = per_node_of(&taken, &measured);
    Ok((measured, per_node))
}

/// Each node's figures from the samples the system's figure rests on: the
/// last `measured.samples.len()` that held their CPU (the sizing probe and
/// the warm-up come first), or that lost it when none held (the figure is
/// then made of them, and flagged).
fn per_node_of(taken: &[NodeSample], measured: &stats::Measured) -> BTreeMap<u32, Vec<f64>> {
    let lost = measured.set_aside.used_anyway;
    let chosen: Vec<&NodeSample> = taken.iter().filter(|t| t.1 == lost).collect();
    let from = chosen.len().saturating_sub(measured.samples.len());
    let mut per_node: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for (nodes, _) in &chosen[from..] {
        for &(n, g) in nodes {
            per_node.entry(n).or_default().push(g);
        }
    }
    per_node
}

/// The part `part` of a thread's read and write buffers (each split alike,
/// in whole lines); the whole of a buffer too small to split.
fn part_of(b: &MixBuffers, part: Part) -> MixBuffers {
    if part.parts <= 1 {
        return *b;
    }
    let r = part.range(b.read_len, LINE).unwrap_or((0, b.read_len));
    let w = part.range(b.write_len, LINE).unwrap_or((0, b.write_len));
    MixBuffers {
        read: b.read.wrapping_add(r.0),
        read_len: r.1,
        write: b.write.wrapping_add(w.0),
        write_len: w.1,
    }
}

/// The read and write buffers of one thread's `len` bytes for mix `m`: the
/// read part first, the write part from the next page, in the mix's ratio.
fn split(m: Mix, base: *mut u8, len: usize) -> MixBuffers {
    let (r, w) = m.group();
    let page = crate::pagesize::base() as usize;
    let (rl, wl) = match (r, w) {
        (_, 0) => (len, 0),
        (0, _) => (0, len),
        _ => {
            let rl = (len / (r + w) as usize * r as usize) / page * page;
            (rl, (len - rl) / LINE * LINE)
        }
    };
    MixBuffers {
        read: base as *const u8,
        read_len: rl / LINE * LINE,
        // SAFETY of the offset: rl <= len, inside the buffer.
        write: base.wrapping_add(rl),
        write_len: wl,
    }
}

#[cfg(test)]
mod tests;
