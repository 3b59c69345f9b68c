//! Measuring a cache-line transfer plan: each pair and line state in turn,
//! under its share of the budget, the result so far handed on after every
//! pair.

use crate::experiments::{ExperimentError, StepProgress};
use crate::kernels::pingpong::{self, LineState, PairMeasure};
use crate::model::c2c::{C2cFailed, C2cPair, C2cResult, DomainSummary, Figure};
use crate::stats::StopRule;
use crate::timer::Timer;

use super::{C2cPlan, MIN_PAIR_BUDGET};

fn figure(m: &PairMeasure) -> Figure {
    Figure::of(&m.measured)
}

/// Measure every pair of the plan, in order.
pub fn run(plan: &C2cPlan, progress: &mut dyn StepProgress) -> Result<C2cResult, ExperimentError> {
    run_with(plan, progress, &mut |_| {})
}

/// [`run`], handing the result so far to `partial` after every pair (the
/// command rewrites `--output` with it, so a killed run keeps its pairs).
pub fn run_with(
    plan: &C2cPlan,
    progress: &mut dyn StepProgress,
    partial: &mut dyn FnMut(&C2cResult),
) -> Result<C2cResult, ExperimentError> {
    let timer = Timer::get();
    let n = plan.cpus.len();
    let idx = |c: u32| plan.cpus.iter().position(|&x| x == c);
    let node = |c: u32| idx(c).map(|i| plan.nodes[i]).unwrap_or(0);
    let mut r = C2cResult {
        schema: "numaprobe/1".into(),
        unit: "ns".into(),
        cpus: plan.cpus.clone(),
        hitm: vec![vec![None; n]; n],
        shared: vec![vec![None; n]; n],
        pairs: Vec::new(),
        domains: Vec::new(),
        atomics: "loads and stores".into(),
        hitm_lines: plan
            .states
            .hitm()
            .then(|| plan.hitm_lines.name().to_string()),
        platform_atomics: crate::platform::Platform::live().atomics,
        stop_rule: plan.rule,
        timer: timer.info(),
        notes: plan.notes.clone(),
        failed: Vec::new(),
        complete: false,
        interrupted: false,
    };
    let total = plan.pairs.len();
    let mut done = 0;
    let phase = crate::beside::Watch::start();
    for (i, (&(a, b), &d)) in plan.pairs.iter().zip(&plan.domains).enumerate() {
        progress.step_started(i, total, &format!("CPU {a} -> CPU {b} ({})", d.name()));
        if crate::cancel::requested() {
            r.interrupted = true;
            break;
        }
        if progress.out_of_time() {
            r.notes.push(format!(
                "stopped after {i} of {total} pairs: the time given to c2c was spent"
            ));
            break;
        }
        // A step samples once per line state: the caller's rule is for the
        // whole step, so it is asked for all states and split between them
        // (asking for one state's would let a budget keeper plan half of
        // what the step takes).
        let n = plan.states.count().max(1);
        let step = progress.rule_for_step(
            i,
            StopRule {
                budget: plan.rule.budget * n,
                ..plan.rule
            },
        );
        let rule = StopRule {
            budget: (step.budget / n).max(MIN_PAIR_BUDGET),
            ..step
        };
        let mut reasons = Vec::new();
        let mut one = |state: LineState, name: &str| -> Option<Figure> {
            match pingpong::measure_pair(a, b, state, plan.hitm_lines, &rule, plan.timeout) {
                Ok(m) => Some(figure(&m)),
                Err(e) => {
                    reasons.push(format!("{name}: {e}"));
                    None
                }
            }
        };
        let watch = crate::beside::Watch::start();
        let mut hitm = plan
            .states
            .hitm()
            .then(|| one(LineState::Hitm, "hitm"))
            .flatten();
        // A stop asked for during HITM leaves the pair's other state out.
        let mut shared = (plan.states.shared() && !crate::cancel::requested())
            .then(|| one(LineState::Shared, "shared"))
            .flatten();
        // Not `mark_step`: one reading of the pair stars both its figures,
        // and each keeps its `flagged` with its flags (`mark_beside`).
        let others = crate::beside::beside_step(watch, phase);
        for f in [hitm.as_mut(), shared.as_mut()].into_iter().flatten() {
            f.mark_beside(others);
        }
        if !reasons.is_empty() {
            r.failed.push(C2cFailed {
                a,
                b,
                reason: reasons.join("; "),
            });
        }
        if hitm.is_some() || shared.is_some() {
            if let (Some(x), Some(y)) = (idx(a), idx(b)) {
                r.hitm[x][y] = hitm.as_ref().map(|f| f.median);
                r.shared[x][y] = shared.as_ref().map(|f| f.median);
            }
            r.pairs.push(C2cPair {
                a,
                b,
                node_a: node(a),
                node_b: node(b),
                domain: d,
                hitm,
                shared,
            });
            super::directions::mark(&mut r.pairs);
        }
        done += 1;
        r.domains = DomainSummary::of_pairs(&r.pairs);
        partial(&r);
        progress.step_finished(i, total);
    }
    r.interrupted |= crate::cancel::requested();
    r.domains = DomainSummary::of_pairs(&r.pairs);
    r.complete = !r.interrupted && done == total && r.failed.is_empty();
    Ok(r)
}
