//! The main job as data: which experiments, cells and samples fit the
//! budget, then running them.
//!
//! [`prepare`] checks the request against every node, times a small
//! calibration of what a buffer's set-up and a cell cost on this machine
//! and plans ([`plan`]): each phase's cells, each cell's sampling and the
//! buffer size, one set-up per memory node counted; a budget that holds not
//! even one cell is refused there, with the budget that would do. [`run`]
//! measures the phases in order through a [`Keeper`](keeper::Keeper), which
//! re-plans every cell from what the buffers and cells before it really
//! cost (the first real buffer's set-up corrects the calibration); before
//! the bandwidth phase the whole phase is re-planned with what is left. The
//! budget covers the calibration, every buffer's set-up and every cell;
//! reading the topology before and the inference and report writing after
//! are outside it (doc/main-job.md states that allowance).
//!
//! The matrices come first: they are planned into
//! [`extra_plan::MATRIX_SHARE`] of the budget when that holds them soundly,
//! else into all of it; after them the extra phases ([`extra`]: c2c,
//! loaded latency, system peak, sweep) share what is left.

pub mod busy_figures;
pub mod cells;
pub mod conclusions;
pub mod cost;
pub mod eta;
pub mod extra;
pub mod extra_plan;
pub mod interleave;
pub mod keeper;
pub mod observer;
pub mod plan;
mod real_buffer;
#[cfg(test)]
mod real_buffer_tests;
pub mod status;
pub mod step_keeper;

use crate::experiments::{self, bandwidth, latency, ExperimentError};
use crate::model::extra::ExtraRecord;
use crate::model::matrix::MatrixResult;
use crate::model::run_status::RunStatus;
use crate::placement::LiveSystem;
use crate::stats::StopRule;
use crate::topology::Topology;
use crate::units::format_size;
use cost::{CostModel, Load, Observed};
use keeper::{Keeper, Later, Observer};
use plan::{Coverage, JobPlan, PhasePlan};
use serde::Serialize;
use std::time::{Duration, Instant};

/// A part of the main job, in run order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Latency = 0,
    Bandwidth = 1,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Latency => "latency",
            Phase::Bandwidth => "bandwidth",
        }
    }
}

/// The shortest `--budget` the main job accepts: below it, even one node
/// pair gets no more than a handful of samples after the calibration and
/// set-up, and the result would be noise presented as a matrix.
pub const MIN_BUDGET: Duration = Duration::from_secs(1);

/// Buffer sizes the main job tries, preferred first: the experiments'
/// default (`cap`: max(256 MiB, 8x the last-level cache), never above half
/// the free memory of the smallest node), the same as `latency` and
/// `bandwidth` measure with, so the main job's figures are theirs; then, as
/// levers when set-up would eat the budget, 4x and 2x the last-level cache,
/// 64 MiB, never below 2x the last-level cache nor the 32 MiB the latency
/// method's smallest array is (DESIGN, McCalpin's remote-latency
/// measurements). The reported LLC can be smaller than what really caches
/// the buffer (a VM's host, victim caches): on a 2-vCPU VM reporting 32 MiB
/// of L3, read bandwidth was 100 GB/s at 128 MiB, 79 GB/s at 512 MiB and
/// 45 GB/s at 1 GiB, which is why the small sizes are levers only.
pub fn buffer_sizes(llc: Option<u64>, cap: u64) -> Vec<u64> {
    const STEP: u64 = 2 << 20;
    let round = |x: u64| x.div_ceil(STEP) * STEP;
    let floor = memory_floor(llc);
    let llc = llc.unwrap_or(0);
    let mut v = vec![cap];
    // Without a known LLC, a smaller buffer might be cache: keep the default.
    if llc > 0 {
        let mut levers = [4 * llc, 2 * llc, 64 << 20];
        levers.sort_unstable_by(|a, b| b.cmp(a));
        for lever in levers {
            let size = round(lever.max(floor)).min(cap);
            if v.last().is_some_and(|&last| size < last) {
                v.push(size);
            }
        }
    }
    v
}

/// The smallest buffer whose figure is memory's: twice the last-level cache,
/// and never below the 32 MiB of the latency method's smallest array.
pub fn memory_floor(llc: Option<u64>) -> u64 {
    (2 * llc.unwrap_or(0)).max(32 << 20)
}

/// A note for a default buffer the footprint limit kept below
/// [`memory_floor`]: the run measures what it may hold, and says that its
/// figures may then include cache hits and what would help.
fn below_floor_note(size: u64, llc: Option<u64>, why: &str) -> Option<String> {
    let floor = memory_floor(llc);
    (size < floor).then(|| {
        format!(
            "buffers of {}, below the {} a memory figure needs (32 MiB, or twice the last-level cache{}): {why}; the figures may include cache hits (--size sets the buffer, within the machine's memory)",
            format_size(size),
            format_size(floor),
            llc.map(|l| format!(" of {}", format_size(l))).unwrap_or_default(),
        )
    })
}

/// What the user asked of the main job.
#[derive(Debug, Clone)]
pub struct Config {
    pub budget: Duration,
    /// Buffer bytes for both matrices; checked against every node.
    pub size: Option<u64>,
}

/// A planned main job, ready to run.
pub struct Job {
    start: Instant,
    budget: Duration,
    pub plan: JobPlan,
    lat: latency::LatencyPlan,
    bw: bandwidth::BandwidthPlan,
    cpu_nodes: Vec<u32>,
    mem_nodes: Vec<u32>,
    distances: Option<crate::topology::Distances>,
    /// Seconds from the start by which the matrices must be done: the
    /// budget less what is held back for the extra phases.
    matrix_deadline_s: f64,
    topo: Topology,
    /// `--size` was given; the planner's preferred size otherwise.
    size_given: bool,
    preferred_size: u64,
}

/// Check, calibrate and plan. The budget's clock starts here.
pub fn prepare(topo: &Topology, cfg: &Config) -> Result<Job, ExperimentError> {
    let start = Instant::now();
    let (cpu_nodes, mem_nodes) = experiments::resolve_nodes(topo, None, None)?;
    let live = LiveSystem::read()?;
    let sizes = match cfg.size {
        Some(s) => vec![s],
        None => buffer_sizes(
            topo.llc_bytes(),
            experiments::default_size(topo, &live, &mem_nodes),
        ),
    };
    // The largest size is checked against every node by both plans, so a
    // size that cannot fit fails here, before anything is measured.
    let mut lat = latency::plan(
        topo,
        &latency::LatencyConfig {
            size: Some(sizes[0]),
            ..Default::default()
        },
    )?;
    let mut bw = bandwidth::plan(
        topo,
        &bandwidth::BandwidthConfig {
            size: Some(sizes[0]),
            ..Default::default()
        },
    )?;
    // The planner's own size is a default, not the user's word: a cell that
    // finds its node fuller than at plan time gets a smaller buffer with a
    // note (per-CPU lists and watermarks move during a run), and only a
    // `--size` the user gave fails the cell instead.
    lat.size_explicit = cfg.size.is_some();
    bw.size_explicit = cfg.size.is_some();
    if cfg.size.is_none() {
        // The figures behind the limit are the run's own note (one
        // statement for the run); each matrix says only what held it.
        let why = format!(
            "held there by {}",
            crate::placement::FootprintLimit::live(&live)
                .limited_by
                .words()
        );
        if let Some(n) = below_floor_note(sizes[0], topo.llc_bytes(), &why) {
            lat.notes.push(n.clone());
            bw.notes.push(n);
        }
    }
    // A failed calibration is no reason to refuse the job: the assumed
    // rates are corrected after the first cell anyway.
    let costs = cost::calibrate(mem_nodes[0], lat.pages).unwrap_or(CostModel::ASSUMED);
    let preferred = sizes[0];
    let mut request = plan::Request {
        budget: cfg.budget.saturating_sub(start.elapsed()),
        budget_given: cfg.budget,
        cpu_nodes: cpu_nodes.clone(),
        mem_nodes: mem_nodes.clone(),
        distances: topo.distances.clone(),
        sizes,
        at_most: None,
        costs,
        matrix_share: extra_plan::MATRIX_SHARE,
    };
    let mut plan = plan::plan(&request);
    if !plan.is_empty() {
        if let Some(better) = real_buffer::replan(&lat, &request, &plan, start, cfg.budget) {
            (plan, request) = better;
        }
    }
    if plan.is_empty() {
        return Err(ExperimentError::Invalid(
            plan.statement.clone().unwrap_or_default(),
        ));
    }
    let held_back = request.budget.as_secs_f64() * (1.0 - plan.matrix_share);
    Ok(Job {
        start,
        budget: cfg.budget,
        plan,
        lat,
        bw,
        cpu_nodes,
        mem_nodes,
        distances: topo.distances.clone(),
        matrix_deadline_s: cfg.budget.as_secs_f64() - held_back,
        topo: topo.clone(),
        size_given: cfg.size.is_some(),
        preferred_size: preferred,
    })
}

/// One phase as it ran.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseRecord {
    #[serde(flatten)]
    pub plan: PhasePlan,
    pub planned_cells: usize,
    pub measured_cells: usize,
    pub elapsed_s: f64,
    /// The memory nodes' buffers, each set up once for the phase. Not
    /// written: the phase's matrix in run.json lists them (`setups`), and a
    /// figure is stored once.
    #[serde(skip_serializing)]
    pub setups: Vec<crate::model::matrix::BufferSetup>,
    /// Their set-up time together (derived from `setups`, not written).
    #[serde(skip_serializing)]
    pub setup_s: f64,
}

/// The main job as it ran: `plan` in `run.json`.
#[derive(Debug, Clone, Serialize)]
pub struct Record {
    pub budget_s: f64,
    /// Wall time from the calibration to the last cell.
    pub elapsed_s: f64,
    /// Nothing was interrupted and nothing failed (`status` in run.json
    /// says which phases are partial by budget).
    pub complete: bool,
    pub size_bytes: u64,
    pub estimated_s: f64,
    pub sound_budget_s: f64,
    pub statement: Option<String>,
    pub costs: CostModel,
    pub phases: Vec<PhaseRecord>,
    /// The matrices' buffer set-ups together (derived from the matrices'
    /// `setups`, not written).
    #[serde(skip_serializing)]
    pub setup_s: f64,
    /// Part of the budget the matrices were planned into.
    pub matrix_share: f64,
    /// The extra phases and the share each would get, as planned before
    /// measuring.
    pub extras_plan: Vec<extra_plan::ExtraPlan>,
    /// The extra phases as they ran. Not written: each extra phase's part
    /// of run.json (`c2c`, `loaded_latency`, `peak`, `sweep`) carries its
    /// record.
    #[serde(skip_serializing)]
    pub extras: Vec<ExtraRecord>,
}

pub struct Outcome {
    pub latency: Option<MatrixResult>,
    pub bandwidth: Option<MatrixResult>,
    /// c2c, loaded latency and peak.
    pub extras: extra::Extras,
    pub record: Record,
    /// What fell short of the plan and why; `record.complete` is its
    /// `complete`.
    pub status: RunStatus,
}

/// Measure the plan, phase by phase, keeping the budget.
pub fn run(job: &Job, observer: &mut dyn Observer) -> Result<Outcome, ExperimentError> {
    run_with(
        job,
        observer,
        &mut experiments::LiveGauge(LiveSystem::read()?),
    )
}

/// [`run`] with the memory figures each cell is checked against given
/// (`gauge`), as the experiments' `run_with` takes them.
pub fn run_with(
    job: &Job,
    observer: &mut dyn Observer,
    gauge: &mut dyn experiments::MemoryGauge,
) -> Result<Outcome, ExperimentError> {
    run_all(job, observer, gauge, &mut extra::Live)
}

/// [`run_with`] with the extra phases' experiments given (stand-ins in
/// tests).
pub fn run_all(
    job: &Job,
    observer: &mut dyn Observer,
    gauge: &mut dyn experiments::MemoryGauge,
    exps: &mut dyn extra::Experiments,
) -> Result<Outcome, ExperimentError> {
    let (latency, bandwidth, mut record) = run_matrices(job, observer, gauge)?;
    let start = job.start;
    let clock = move || start.elapsed().as_secs_f64();
    let ctx = extra::Context {
        topo: &job.topo,
        latency: latency.as_ref(),
        cpu_nodes: &job.cpu_nodes,
        mem_nodes: &job.mem_nodes,
        clock: &clock,
        // The per-line check of a node's memory runs after the extras
        // (`numaprobe run`): they end that much earlier, so it fits too.
        budget_s: record.budget_s
            - interleave::reserve_s(&job.topo, job.plan.costs.bandwidth_setup_s_per_gib),
        size_per_node: job.plan.size_bytes,
        size_given: job.size_given || job.plan.size_bytes < job.preferred_size,
        costs: job.plan.costs,
        pages: job.lat.pages,
    };
    let extras = extra::run(&ctx, exps, observer);
    record.extras = extras.records();
    let status = status::of(
        &record.phases,
        latency.as_ref(),
        bandwidth.as_ref(),
        Some(&extras),
    );
    record.complete = status.complete;
    record.elapsed_s = job.start.elapsed().as_secs_f64();
    Ok(Outcome {
        latency,
        bandwidth,
        extras,
        record,
        status,
    })
}

/// The two matrices, phase by phase, within the matrices' part of the
/// budget.
fn run_matrices(
    job: &Job,
    observer: &mut dyn Observer,
    gauge: &mut dyn experiments::MemoryGauge,
) -> Result<(Option<MatrixResult>, Option<MatrixResult>, Record), ExperimentError> {
    let budget_s = job.budget.as_secs_f64();
    let deadline_s = job.matrix_deadline_s;
    let size = job.plan.size_bytes;
    let total: usize = job.plan.phases.iter().map(|p| p.cells.len()).sum();
    let mut observed = Observed::default();
    let mut records = Vec::new();
    let mut out = Matrices {
        latency: None,
        bandwidth: None,
        record: Record {
            budget_s,
            elapsed_s: 0.0,
            complete: true,
            size_bytes: size,
            estimated_s: job.plan.estimated_s,
            sound_budget_s: job.plan.sound_budget_s,
            statement: job.plan.statement.clone(),
            costs: job.plan.costs,
            phases: Vec::new(),
            setup_s: 0.0,
            matrix_share: job.plan.matrix_share,
            extras_plan: job.plan.extras.clone(),
            extras: Vec::new(),
        },
    };
    let mut done = 0;
    for (i, planned) in job.plan.phases.iter().enumerate() {
        let mut phase = planned.clone();
        if crate::cancel::requested() {
            out.record.complete = false;
            phase.skipped.append(&mut phase.cells);
            phase.coverage = Coverage::Skipped;
            phase.reason = Some(extra::INTERRUPTED_BEFORE.into());
            records.push(PhaseRecord {
                planned_cells: 0,
                measured_cells: 0,
                elapsed_s: 0.0,
                plan: phase,
                setups: Vec::new(),
                setup_s: 0.0,
            });
            continue;
        }
        let mut deadline_s = deadline_s;
        if i > 0 {
            // What the phases before really cost decides what is left; the
            // matrices come first, so when the matrices' part no longer
            // holds this phase soundly it takes the rest of the budget.
            let full: Vec<(u32, u32)> = phase.cells.iter().chain(&phase.skipped).copied().collect();
            let replan = |until: f64| {
                let avail = until - job.start.elapsed().as_secs_f64();
                let (mut v, _) = plan::plan_phases(
                    &observed.correct(&job.plan.costs, phase.phase),
                    &[size],
                    &[(
                        phase.phase,
                        sort_like(&full, &job.cpu_nodes, &job.mem_nodes),
                    )],
                    &job.cpu_nodes,
                    &job.mem_nodes,
                    job.distances.as_ref(),
                    avail,
                );
                (v.remove(0), avail)
            };
            let (mut p, mut avail) = replan(deadline_s);
            if p.coverage != Coverage::Full && deadline_s < budget_s {
                deadline_s = budget_s;
                (p, avail) = replan(budget_s);
            }
            phase = p;
            if phase.cells.len() < planned.cells.len() || phase.coverage != planned.coverage {
                if let Some(r) = phase.reason.as_mut() {
                    r.push_str(&format!(
                        " (re-planned when it began, with {:.1} s of the budget left)",
                        avail.max(0.0)
                    ));
                    observer.replanned(&phase);
                }
            }
        }
        let later: Vec<Later> = job.plan.phases[i + 1..]
            .iter()
            .map(|p| Later {
                load: Load::of(p.phase, &p.cells),
                cell_budget_s: p.cell_budget_s,
            })
            .collect();
        let began = Instant::now();
        let result = if phase.cells.is_empty() {
            None
        } else {
            observer.phase_started(phase.phase, phase.cells.len());
            let rule = StopRule {
                budget: Duration::from_secs_f64(phase.cell_budget_s),
                ..StopRule::default()
            };
            let start = job.start;
            let mut keeper = Keeper::new(
                &mut *observer,
                Box::new(move || start.elapsed().as_secs_f64()),
                deadline_s,
                size,
                job.plan.costs,
                &mut observed,
                (Load::of(phase.phase, &phase.cells), phase.cell_budget_s),
                later,
                done,
                total.max(done + phase.cells.len()),
            )
            // The extra phases after the matrices take what is left.
            .then_filled_until(budget_s);
            let keep = |c: u32, m: u32| phase.cells.contains(&(c, m));
            let mut r = match phase.phase {
                Phase::Latency => {
                    let mut p = job.lat.clone();
                    p.size = size;
                    p.rule = rule;
                    p.cells.retain(|&(c, _, m)| keep(c, m));
                    latency::run_with(&p, &mut keeper, gauge)?
                }
                Phase::Bandwidth => {
                    let mut p = job.bw.clone();
                    p.size = size;
                    p.rule = rule;
                    p.cells.retain(|pc| keep(pc.cpu_node, pc.mem_node));
                    bandwidth::run_with(&p, &mut keeper, gauge)?
                }
            };
            done += keeper.finished();
            drop(keeper);
            if !phase.skipped.is_empty() {
                r.notes.push(format!(
                    "{} of {} cells planned to keep the budget; run.json's plan names the skipped ones",
                    phase.cells.len(),
                    phase.cells.len() + phase.skipped.len()
                ));
            }
            if r.interrupted {
                out.record.complete = false;
            }
            observer.phase_finished(phase.phase, &r);
            Some(r)
        };
        let setups = result
            .as_ref()
            .map(|r| r.setups.clone())
            .unwrap_or_default();
        records.push(PhaseRecord {
            planned_cells: phase.cells.len(),
            measured_cells: result.as_ref().map_or(0, |r| r.cells.len()),
            elapsed_s: began.elapsed().as_secs_f64(),
            plan: phase.clone(),
            setup_s: setups.iter().fold(0.0, |t, s| t + s.seconds),
            setups,
        });
        match phase.phase {
            Phase::Latency => out.latency = result,
            Phase::Bandwidth => out.bandwidth = result,
        }
    }
    out.record.elapsed_s = job.start.elapsed().as_secs_f64();
    out.record.setup_s = records.iter().map(|p| p.setup_s).fold(0.0, |t, s| t + s);
    out.record.phases = records;
    Ok((out.latency, out.bandwidth, out.record))
}

struct Matrices {
    latency: Option<MatrixResult>,
    bandwidth: Option<MatrixResult>,
    record: Record,
}

/// `cells` in row-major order of the matrix.
fn sort_like(cells: &[(u32, u32)], cpu: &[u32], mem: &[u32]) -> Vec<(u32, u32)> {
    let mut v = cells.to_vec();
    v.sort_by_key(|&(c, m)| {
        (
            cpu.iter().position(|&x| x == c),
            mem.iter().position(|&x| x == m),
        )
    });
    v
}

#[cfg(test)]
mod tests;
