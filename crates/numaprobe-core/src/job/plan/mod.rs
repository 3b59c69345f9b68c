//! The budget planner: which cells of which phase, with how much sampling
//! each and which buffer, fit the main job's budget, set-up counted (one
//! buffer per memory node and matrix, see [`Load`]). Pure arithmetic over a
//! [`CostModel`], so it is tested with synthetic costs.
//!
//! The matrices come first: they are planned into their share of the
//! budget ([`Request::matrix_share`]) when every cell gets a sound
//! measurement there, else into the whole budget, and the extra phases get
//! only what the matrices leave. When not even one latency cell fits, the
//! plan is empty and the main job refuses to start.
//!
//! The policy, in the order it gives things up (what `run --help` and
//! doc/commands/run.md promise):
//! 1. Every cell of both matrices with a sound measurement (at least
//!    [`SOUND_CELL_S`] of sampling: a warm-up and well over five samples of at
//!    least 5 ms), at the preferred buffer size, else at the smaller one.
//! 2. Every cell with fewer samples (down to a warm-up and three samples).
//! 3. The whole latency matrix (inference is made from it), and bandwidth
//!    only on the diagonal plus, per row, the remote node the SLIT puts
//!    farthest (the local-to-worst range a placement decision needs).
//! 4. The whole latency matrix, bandwidth skipped.
//! 5. Latency only on the diagonal, then row by row as far as the budget
//!    goes (at least one cell).

use super::cells::{all_cells, diagonal_and_farthest};
use super::cost::{Corrected, CostModel, Load};
use super::Phase;
use crate::topology::Distances;
use serde::Serialize;
use std::time::Duration;

/// Sampling a cell gets at most: an idle machine reaches the CV target long
/// before, and a busy one gains little from more.
pub const CELL_MAX_S: f64 = 2.0;
/// Sampling below which a cell is not a sound measurement: one warm-up and
/// about nineteen samples of 5 ms, so even when the probe misjudges the
/// sample length by 2x there are more than five samples for the median.
pub const SOUND_CELL_S: f64 = 0.1;

/// How much of a phase's matrix is measured, and how well.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Coverage {
    /// Every cell, each a sound measurement.
    Full,
    /// Every cell, with fewer samples than a sound measurement.
    FewerSamples,
    /// Some cells; `skipped` names the others.
    Subset,
    /// Nothing.
    Skipped,
}

/// One phase of the plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhasePlan {
    pub phase: Phase,
    pub coverage: Coverage,
    /// (CPU node, memory node) to measure, in run order (in the matrix
    /// documents, not repeated here).
    #[serde(skip)]
    pub cells: Vec<(u32, u32)>,
    /// Cells of the full matrix left out.
    pub skipped: Vec<(u32, u32)>,
    /// Planned sampling per cell, seconds (the re-planning adjusts it).
    pub cell_budget_s: f64,
    /// Planned wall time of the phase, set-up included.
    pub estimated_s: f64,
    /// Why the phase is less than a sound full matrix.
    pub reason: Option<String>,
}

/// The main job's plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobPlan {
    pub budget_s: f64,
    /// Buffer bytes of every cell of both matrices.
    pub size_bytes: u64,
    pub phases: Vec<PhasePlan>,
    /// Planned wall time of all phases.
    pub estimated_s: f64,
    /// Budget that gives every cell of both matrices a sound measurement.
    pub sound_budget_s: f64,
    /// One line for the user when the budget falls short: what it cannot
    /// do, the budget that would, and what is done instead.
    pub statement: Option<String>,
    pub costs: CostModel,
    /// The extra phases after the matrices and the share each would get if
    /// the matrices take their estimated time.
    pub extras: Vec<super::extra_plan::ExtraPlan>,
    /// Part of the budget the matrices were planned into: the request's
    /// share, or 1 when they need the whole budget.
    pub matrix_share: f64,
}

impl JobPlan {
    /// True when nothing at all fits the budget.
    pub fn is_empty(&self) -> bool {
        self.phases.iter().all(|p| p.cells.is_empty())
    }
}

/// What the planner plans from.
#[derive(Debug, Clone)]
pub struct Request {
    /// Wall time left for the measurements (set-up and sampling).
    pub budget: Duration,
    /// The budget as the user gave it, for the statement.
    pub budget_given: Duration,
    pub cpu_nodes: Vec<u32>,
    pub mem_nodes: Vec<u32>,
    /// The SLIT, to pick the remote bandwidth cell of each row.
    pub distances: Option<Distances>,
    /// Candidate buffer sizes, preferred first (one when given explicitly).
    pub sizes: Vec<u64>,
    /// The largest of `sizes` the plan may take, when the larger ones are
    /// ruled out by what a real buffer's set-up showed (or one is set up at
    /// this size already); the preferred size still names the sound budget.
    pub at_most: Option<u64>,
    pub costs: CostModel,
    /// Part of `budget` the matrices are planned into; the rest is held
    /// back for the extra phases ([`super::extra_plan`]). 1 plans the
    /// matrices alone.
    pub matrix_share: f64,
}

/// The diagonal first, then every other cell row by row: the order the
/// latency matrix is given up in when even its minimum does not fit.
fn latency_priority(cpu: &[u32], mem: &[u32]) -> Vec<(u32, u32)> {
    let mut v: Vec<(u32, u32)> = cpu
        .iter()
        .filter(|c| mem.contains(c))
        .map(|&c| (c, c))
        .collect();
    for cell in all_cells(cpu, mem) {
        if !v.contains(&cell) {
            v.push(cell);
        }
    }
    v
}

fn total_s(costs: &Corrected, size: u64, loads: &[Load], budget_s: f64) -> f64 {
    loads
        .iter()
        .map(|&l| costs.phase_s(l, size, budget_s))
        .sum()
}

/// The largest sampling per cell in [`min_s`, CELL_MAX_S] with which the
/// cells fit in `avail_s`; None when even `min_s` does not.
pub fn fit(costs: &Corrected, size: u64, phases: &[Load], avail_s: f64, min_s: f64) -> Option<f64> {
    if total_s(costs, size, phases, min_s) > avail_s {
        return None;
    }
    if total_s(costs, size, phases, CELL_MAX_S) <= avail_s {
        return Some(CELL_MAX_S);
    }
    let (mut lo, mut hi) = (min_s, CELL_MAX_S);
    for _ in 0..50 {
        let mid = (lo + hi) / 2.0;
        if total_s(costs, size, phases, mid) <= avail_s {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(lo)
}

/// A budget a user can type, rounded up: whole seconds below two minutes,
/// whole minutes above.
pub fn budget_arg(secs: f64) -> String {
    if secs < 120.0 {
        format!("{}s", secs.ceil().max(1.0) as u64)
    } else {
        format!("{}m", (secs / 60.0).ceil() as u64)
    }
}

/// A duration as `--budget` takes it: `500ms`, `5s`, `2.5s`.
pub fn duration_arg(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{}ms", d.as_millis())
    } else if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

/// One option of the ladder: the cells of each phase.
type Choice = Vec<(Phase, Vec<(u32, u32)>)>;

/// Plan `phases` (each with its full matrix) into `avail_s`, walking the
/// ladder of the module doc. Returns the phase plans and the buffer size.
pub fn plan_phases(
    costs: &Corrected,
    sizes: &[u64],
    phases: &[(Phase, Vec<(u32, u32)>)],
    cpu: &[u32],
    mem: &[u32],
    distances: Option<&Distances>,
    avail_s: f64,
) -> (Vec<PhasePlan>, u64) {
    let counts = |c: &Choice| -> Vec<Load> { c.iter().map(|(p, v)| Load::of(*p, v)).collect() };
    let full: Choice = phases.to_vec();
    // 1. Everything, sound, at the largest size that allows it.
    for &size in sizes {
        if let Some(b) = fit(costs, size, &counts(&full), avail_s, SOUND_CELL_S) {
            return (build(costs, size, phases, &full, b), size);
        }
    }
    let size = *sizes.last().expect("at least one buffer size");
    let has = |p: Phase| phases.iter().any(|(q, _)| *q == p);
    let mut ladder: Vec<Choice> = vec![full.clone()];
    if has(Phase::Bandwidth) {
        let reduce = |with_bw: Option<Vec<(u32, u32)>>| -> Choice {
            phases
                .iter()
                .map(|(p, v)| match p {
                    Phase::Bandwidth => (*p, with_bw.clone().unwrap_or_default()),
                    Phase::Latency => (*p, v.clone()),
                })
                .collect()
        };
        let diag = diagonal_and_farthest(cpu, mem, distances);
        if phases
            .iter()
            .any(|(p, v)| *p == Phase::Bandwidth && diag.len() < v.len())
        {
            ladder.push(reduce(Some(diag)));
        }
        ladder.push(reduce(None));
    }
    for choice in &ladder {
        if let Some(b) = fit(costs, size, &counts(choice), avail_s, 0.0) {
            return (build(costs, size, phases, choice, b), size);
        }
    }
    // 5. Latency cells in priority order, as many as fit at the floor
    // (a cell on a memory node not used yet brings its buffer's set-up);
    // none when not even one does.
    let mut choice: Choice = phases.iter().map(|(p, _)| (*p, Vec::new())).collect();
    if let Some(lat) = choice.iter_mut().find(|(p, _)| *p == Phase::Latency) {
        let mut keep: Vec<(u32, u32)> = Vec::new();
        for cell in latency_priority(cpu, mem) {
            let mut with = keep.clone();
            with.push(cell);
            if costs.phase_s(Load::of(Phase::Latency, &with), size, 0.0) <= avail_s {
                keep = with;
            }
        }
        let full_lat = &phases
            .iter()
            .find(|(p, _)| *p == Phase::Latency)
            .expect("latency phase")
            .1;
        keep.sort_by_key(|c| full_lat.iter().position(|x| x == c));
        lat.1 = keep;
    }
    (build(costs, size, phases, &choice, 0.0), size)
}

fn build(
    costs: &Corrected,
    size: u64,
    full: &[(Phase, Vec<(u32, u32)>)],
    choice: &Choice,
    b: f64,
) -> Vec<PhasePlan> {
    full.iter()
        .zip(choice)
        .map(|((phase, all), (_, cells))| {
            let skipped: Vec<(u32, u32)> =
                all.iter().filter(|c| !cells.contains(c)).copied().collect();
            // One test decides both the coverage and the sampling words, so
            // a reason never says a sound cell is short of samples.
            let sound = b >= SOUND_CELL_S;
            let coverage = if cells.is_empty() {
                Coverage::Skipped
            } else if !skipped.is_empty() {
                Coverage::Subset
            } else if sound {
                Coverage::Full
            } else {
                Coverage::FewerSamples
            };
            let samples = if sound {
                String::new()
            } else {
                format!(
                    "; {:.0} ms of sampling per cell instead of at least {:.0} ms",
                    b * 1e3,
                    SOUND_CELL_S * 1e3
                )
            };
            let reason = match coverage {
                Coverage::Full => None,
                Coverage::FewerSamples => Some(format!(
                    "every cell with fewer samples{samples} (at least a warm-up and 3 samples)"
                )),
                Coverage::Subset if *phase == Phase::Bandwidth => Some(format!(
                    "only the diagonal and the farthest remote node of each row; {} of {} cells skipped{samples}",
                    skipped.len(),
                    all.len()
                )),
                Coverage::Subset => Some(format!(
                    "only the diagonal, then row by row as far as the budget goes: {} of {} cells skipped{samples}",
                    skipped.len(),
                    all.len()
                )),
                Coverage::Skipped => Some("skipped: the budget does not reach it".into()),
            };
            PhasePlan {
                phase: *phase,
                coverage,
                estimated_s: if cells.is_empty() {
                    0.0
                } else {
                    costs.phase_s(Load::of(*phase, cells), size, b)
                },
                cells: cells.clone(),
                skipped,
                cell_budget_s: b,
                reason,
            }
        })
        .collect()
}

/// The plan for the main job: both matrices over every allowed node pair.
pub fn plan(req: &Request) -> JobPlan {
    let costs = Corrected {
        model: req.costs,
        setup: 1.0,
        overhead: 1.0,
        sampling: 1.0,
    };
    let all = all_cells(&req.cpu_nodes, &req.mem_nodes);
    let phases = vec![
        (Phase::Latency, all.clone()),
        (Phase::Bandwidth, all.clone()),
    ];
    let share = req.matrix_share.clamp(0.01, 1.0);
    let left = req.budget.as_secs_f64();
    let allowed: Vec<u64> = match req.at_most {
        Some(most) => req.sizes.iter().copied().filter(|&s| s <= most).collect(),
        None => req.sizes.clone(),
    };
    // A bound below every size leaves the smallest.
    let smallest = req.sizes.last().map(|&s| vec![s]).unwrap_or_default();
    let sizes = if allowed.is_empty() {
        &smallest
    } else {
        &allowed
    };
    let plan_into = |avail: f64| {
        plan_phases(
            &costs,
            sizes,
            &phases,
            &req.cpu_nodes,
            &req.mem_nodes,
            req.distances.as_ref(),
            avail,
        )
    };
    // The matrices first: when their share cannot hold them soundly they
    // take the whole budget, and the extras what is left after them.
    let (mut plans, mut size) = plan_into(left * share);
    let mut share_used = share;
    if share < 1.0 && plans.iter().any(|p| p.coverage != Coverage::Full) {
        (plans, size) = plan_into(left);
        share_used = 1.0;
    }
    let n = all.len();
    let sound_size = req.sizes[0];
    // What the user gave plus what the measurements need beyond what is left.
    // The matrices' part scales with the budget, so what they need is
    // divided by their share.
    let spent = (req.budget_given.as_secs_f64() - left).max(0.0);
    let sound_budget_s = spent
        + total_s(
            &costs,
            sound_size,
            &[
                Load::of(Phase::Latency, &all),
                Load::of(Phase::Bandwidth, &all),
            ],
            SOUND_CELL_S,
        ) / share;
    let statement = statement(req, &plans, n, sound_budget_s);
    let matrices_s: f64 = plans.iter().map(|p| p.estimated_s).sum();
    let extras = if share < 1.0 {
        super::extra_plan::plan((left - matrices_s).max(0.0))
    } else {
        Vec::new()
    };
    JobPlan {
        budget_s: req.budget_given.as_secs_f64(),
        size_bytes: size,
        estimated_s: matrices_s,
        phases: plans,
        sound_budget_s,
        statement,
        costs: req.costs,
        extras,
        matrix_share: share_used,
    }
}

fn statement(req: &Request, plans: &[PhasePlan], n: usize, sound_s: f64) -> Option<String> {
    if plans.iter().all(|p| p.coverage == Coverage::Full) {
        return None;
    }
    if plans.iter().all(|p| p.cells.is_empty()) {
        return Some(format!(
            "--budget {} is too short to measure even one latency cell (one buffer set up and a \
             warm-up and three samples on it); --budget {} measures every cell of both matrices soundly",
            duration_arg(req.budget_given),
            budget_arg(sound_s)
        ));
    }
    let given = duration_arg(req.budget_given);
    let b = plans.iter().map(|p| p.cell_budget_s).fold(0.0, f64::max);
    let fewer = format!(
        "fewer samples ({:.0} ms of sampling per cell, at least 3 samples)",
        b * 1e3
    );
    let mut what = Vec::new();
    if plans.iter().all(|p| p.coverage == Coverage::FewerSamples) {
        what.push(format!("every cell with {fewer}"));
    } else {
        for p in plans {
            let name = p.phase.name();
            match p.coverage {
                Coverage::Full => what.push(format!("the whole {name} matrix")),
                Coverage::FewerSamples => what.push(format!("the whole {name} matrix with {fewer}")),
                Coverage::Subset if p.phase == Phase::Bandwidth => what.push(format!(
                    "{name} only on the diagonal and the farthest remote node of each row ({} cells skipped)",
                    p.skipped.len()
                )),
                Coverage::Subset => what.push(format!(
                    "{name} on {} of {} cells (the diagonal first, then row by row)",
                    p.cells.len(),
                    p.cells.len() + p.skipped.len()
                )),
                Coverage::Skipped => what.push(format!("no {name} matrix")),
            }
        }
    }
    let skipped = if plans.iter().any(|p| !p.skipped.is_empty()) {
        "; run.json's plan names the skipped cells"
    } else {
        ""
    };
    Some(format!(
        "--budget {given} is too short for a sound measurement of {n} latency and {n} bandwidth cells \
         (at least {:.0} ms of sampling each; with set-up that takes --budget {}{}): measuring {}{skipped}",
        SOUND_CELL_S * 1e3,
        budget_arg(sound_s),
        if req.matrix_share < 1.0 {
            format!(
                ", the matrices getting {:.0} % of it and the extra phases the rest; \
                 the matrices take all of a shorter one first",
                req.matrix_share * 100.0
            )
        } else {
            String::new()
        },
        what.join(", ")
    ))
}

#[cfg(test)]
mod tests;
