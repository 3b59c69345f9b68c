//! Tests of the calibration on a real buffer's decisions, with simulated
//! set-up rates: which size is set up first, how long each may take, and
//! that a plan at the smallest buffer that fits the budget is never lost
//! to the try at the preferred size.

use super::real_buffer::{
    calibration_allowance, fallback, first_buffer_allowance, first_size, next, rescaled, Failed,
    Next,
};
use super::*;

const MIB: u64 = 1 << 20;
/// The busy 2-CPU host's candidates: the preferred 1.7 GiB, the 520 MiB
/// fallback.
const PREFERRED: u64 = 1740 * MIB;
const SMALLEST: u64 = 520 * MIB;

/// The main job's request on one node with the probe's (CPU-time) rates.
fn request(budget_s: f64) -> plan::Request {
    plan::Request {
        budget: Duration::from_secs_f64(budget_s),
        budget_given: Duration::from_secs_f64(budget_s),
        cpu_nodes: vec![0],
        mem_nodes: vec![0],
        distances: None,
        sizes: vec![PREFERRED, SMALLEST],
        at_most: None,
        costs: CostModel::SERVER,
        matrix_share: extra_plan::MATRIX_SHARE,
    }
}

/// The probe's rates corrected to a latency set-up of `s_per_gib`.
fn at_rate(s_per_gib: f64) -> CostModel {
    let m = CostModel::SERVER;
    rescaled(&m, m.latency_setup_s_per_gib, s_per_gib)
}

fn setup_s(costs: &CostModel, size: u64) -> f64 {
    costs.setup_s(Phase::Latency, size)
}

/// The plan with sizes up to `at_most` (the sound budget still the
/// preferred size's).
fn plan_at(costs: CostModel, at_most: u64, budget_s: f64) -> JobPlan {
    plan::plan(&plan::Request {
        budget: Duration::from_secs_f64(budget_s.max(0.0)),
        costs,
        at_most: Some(at_most),
        ..request(budget_s)
    })
}

fn sound(p: &JobPlan) -> bool {
    !p.is_empty()
        && p.phases
            .iter()
            .all(|ph| ph.coverage == plan::Coverage::Full)
}

/// `--budget 30s` at load 12: 580 MiB were set up in 14.9 s (26 s/GiB).
/// The smallest buffer is set up in its allowance, and the plan stays on
/// it: a document, where a try at 1.7 GiB first left no room for it.
#[test]
fn a_busy_machine_keeps_the_smallest_buffer_it_set_up_first() {
    let busy = at_rate(14.9 / (580.0 / 1024.0));
    let left = 29.5;
    let took = setup_s(&busy, SMALLEST);
    assert!((13.0..14.0).contains(&took), "{took}");
    assert!(first_buffer_allowance(&request(left), SMALLEST, left) >= took);
    assert_eq!(
        next(&request(left), &busy, SMALLEST, left - took),
        Next::Keep
    );
    // The plan on it, the set-up given back as paid: it measures.
    let p = plan_at(busy, SMALLEST, left);
    assert!(!p.is_empty() && p.size_bytes == SMALLEST, "{p:?}");
    // What the preferred size's set-up alone takes: more than the budget.
    assert!(setup_s(&busy, PREFERRED) > 30.0);
}

/// An idle machine (0.3 s/GiB): the preferred size is tried, with twice
/// its prediction, and the sound plan at the smallest still fits after it.
#[test]
fn an_idle_machine_tries_the_preferred_size_and_keeps_the_fallback_sound() {
    let idle = at_rate(0.3);
    let left = 59.0;
    let took = setup_s(&idle, SMALLEST);
    match next(&request(left), &idle, SMALLEST, left - took) {
        Next::Calibrate { size, allowance } => {
            assert_eq!(size, PREFERRED);
            assert!(allowance >= 2.0 * setup_s(&idle, PREFERRED), "{allowance}");
            assert!(sound(&plan_at(idle, SMALLEST, left - took - allowance)));
        }
        Next::Keep => panic!("the preferred size fits an idle minute"),
    }
}

/// Over rates from an idle server's to a loaded host's and budgets from
/// 5 s to 2 min: whenever a plan at the smallest buffer fits what is left,
/// the run ends with one. Its set-up is not stopped, and either the plan
/// stays on it, or the try at the preferred size is bounded so that the
/// smallest buffer's plan, as good as it was, still fits after it.
#[test]
fn a_plan_that_fits_at_the_smallest_buffer_is_never_lost_to_the_preferred_one() {
    let mut kept = 0;
    let mut tried = 0;
    for budget in [5.0, 10.0, 20.0, 30.0, 60.0, 120.0] {
        for step in 0..60 {
            let rate = 0.1 * 1.15f64.powi(step);
            let costs = at_rate(rate);
            let fits = plan_at(costs, SMALLEST, budget);
            if fits.is_empty() {
                continue;
            }
            let took = setup_s(&costs, SMALLEST);
            let allowance = first_buffer_allowance(&request(budget), SMALLEST, budget);
            assert!(
                allowance >= took - 1e-6,
                "{budget} s, {rate} s/GiB: {allowance} < {took}"
            );
            let left = budget - took;
            match next(&request(budget), &costs, SMALLEST, left) {
                Next::Keep => kept += 1,
                Next::Calibrate { size, allowance } => {
                    tried += 1;
                    assert!(size > SMALLEST);
                    let after = plan_at(costs, SMALLEST, left - allowance);
                    assert!(
                        !after.is_empty()
                            && (sound(&after) || !sound(&plan_at(costs, SMALLEST, left))),
                        "{budget} s, {rate} s/GiB: {after:?}"
                    );
                }
            }
        }
    }
    // Both branches were walked.
    assert!(kept > 10 && tried > 10, "{kept} {tried}");
}

/// `--budget 10s` at load 12: the smallest buffer alone takes longer than
/// the budget, so its set-up is stopped within it, where no plan on it
/// fits any more; the refusal names how far it got.
#[test]
fn a_smallest_buffer_past_the_budget_is_stopped_where_its_plan_stops_fitting() {
    let busy = at_rate(26.0);
    let left = 9.5;
    let allowance = first_buffer_allowance(&request(left), SMALLEST, left);
    assert!(
        allowance < left && allowance < setup_s(&busy, SMALLEST),
        "{allowance}"
    );
    let fits_at = |t: f64| {
        !plan_at(
            rescaled(&CostModel::SERVER, setup_s(&CostModel::SERVER, SMALLEST), t),
            SMALLEST,
            left,
        )
        .is_empty()
    };
    assert!(
        fits_at(allowance) && !fits_at(allowance + 0.01),
        "{allowance}"
    );
}

#[test]
fn a_rescaled_model_sets_up_at_the_measured_rate() {
    let m = CostModel::SERVER;
    let c = rescaled(&m, 2.0, 6.0);
    assert!((c.latency_setup_s_per_gib - 3.0 * m.latency_setup_s_per_gib).abs() < 1e-12);
    assert!((c.bandwidth_setup_s_per_gib - 3.0 * m.bandwidth_setup_s_per_gib).abs() < 1e-12);
    assert_eq!(c.cell_s_per_gib, m.cell_s_per_gib);
    assert_eq!(c.source, "calibration on a real buffer");
    assert_eq!(rescaled(&m, 0.0, 6.0), m);
    // Not positive: unchanged, as a measured 0 would make set-ups free.
    assert_eq!(rescaled(&m, 2.0, 0.0), m);
    assert_eq!(rescaled(&m, 2.0, -1.0), m);
    assert_eq!(rescaled(&m, -2.0, 6.0), m);
}

/// With a last-level cache of 16 MiB or less the candidates end at 32 MiB
/// (8 MiB: 256, 64, 32 MiB), too small to learn a rate from; the first
/// buffer is then the 64 MiB above it, not the preferred 256 MiB.
#[test]
fn a_small_cache_starts_from_the_smallest_candidate_worth_learning_from() {
    for llc in [8 * MIB, 16 * MIB] {
        let sizes = buffer_sizes(Some(llc), 256 * MIB);
        assert_eq!(sizes, vec![256 * MIB, 64 * MIB, 32 * MIB], "{llc}");
        assert_eq!(first_size(&sizes), Some(64 * MIB), "{llc}");
    }
    // A larger cache's smallest candidate is already large enough.
    let sizes = buffer_sizes(Some(32 * MIB), 256 * MIB);
    assert_eq!(first_size(&sizes), sizes.last().copied());
    // Nothing over 32 MiB: nothing to learn.
    assert_eq!(first_size(&[32 * MIB]), None);
}

/// On the 8 MiB-cache candidates, a busy machine's 64 MiB buffer is the
/// one set up first and kept: the preferred 256 MiB is never set up with
/// a large allowance before it.
#[test]
fn a_small_cache_on_a_busy_machine_keeps_its_first_buffer() {
    let req = |budget_s: f64| plan::Request {
        sizes: buffer_sizes(Some(8 * MIB), 256 * MIB),
        ..request(budget_s)
    };
    let busy = at_rate(60.0);
    let left = 9.5;
    let first = first_size(&req(left).sizes).unwrap();
    let took = setup_s(&busy, first);
    assert!(first_buffer_allowance(&req(left), first, left) >= took);
    assert_eq!(next(&req(left), &busy, first, left - took), Next::Keep);
}

/// A cache of 8 MiB: 64 MiB is set up first, 32 MiB is still a candidate.
/// Where the 64 MiB set-up cannot fit but a 32 MiB plan can, the first
/// set-up may not take all that is left: the time spent on a buffer then
/// dropped is not counted as given back.
#[test]
fn a_first_buffer_is_stopped_in_time_for_a_smaller_candidate_s_plan() {
    let req = |budget_s: f64| plan::Request {
        sizes: buffer_sizes(Some(8 * MIB), 256 * MIB),
        ..request(budget_s)
    };
    let left = 9.5;
    let first = first_size(&req(left).sizes).unwrap();
    assert_eq!(first, 64 * MIB);
    let mut seen = 0;
    for step in 0..60 {
        let s_per_gib = 20.0 * 1.08f64.powi(step);
        let costs = at_rate(s_per_gib);
        let plan_of = |budget_s: f64, at_most: u64| {
            plan::plan(&plan::Request {
                budget: Duration::from_secs_f64(budget_s.max(0.0)),
                costs,
                at_most: Some(at_most),
                ..req(left)
            })
        };
        let took = setup_s(&costs, first);
        let small_fits = !plan_of(left, 32 * MIB).is_empty();
        let kept = plan_of(left, first);
        if took < left || !small_fits || (!kept.is_empty() && kept.size_bytes == first) {
            continue;
        }
        seen += 1;
        // The set-up may not take all that is left: a 64 MiB buffer done
        // just within its allowance, at the rate that shows, still leaves
        // the 32 MiB plan room (one slower than that is cut there, and the
        // plan at its rate decides).
        let allowance = first_buffer_allowance(&req(left), first, left);
        assert!(allowance < left, "{s_per_gib} s/GiB: {allowance}");
        let shown = rescaled(&costs, took, allowance);
        let after = plan::plan(&plan::Request {
            budget: Duration::from_secs_f64(left - allowance),
            costs: shown,
            at_most: Some(32 * MIB),
            ..req(left)
        });
        assert!(
            !after.is_empty(),
            "{s_per_gib} s/GiB: done at {allowance} s, no room left for 32 MiB"
        );
    }
    assert!(seen > 0, "no rate where only the smaller plan fits");
}

/// The preferred plan gets what is left, not the smallest buffer's set-up
/// back: where that credit alone would make the preferred size fit, the
/// smallest buffer is kept (the credit is the Keep decision's).
#[test]
fn the_smallest_buffers_set_up_is_not_given_back_to_the_preferred_size() {
    let mut found = 0;
    for budget in [5.0, 10.0, 20.0, 30.0, 60.0, 120.0] {
        for step in 0..80 {
            let costs = at_rate(0.05 * 1.1f64.powi(step));
            let took = setup_s(&costs, SMALLEST);
            let left = budget - took;
            if left <= 0.0 {
                continue;
            }
            let all = |b: f64| {
                plan::plan(&plan::Request {
                    budget: Duration::from_secs_f64(b),
                    costs,
                    ..request(budget)
                })
            };
            let with_credit = all(left + took);
            let without = all(left);
            let decided = next(&request(budget), &costs, SMALLEST, left);
            if let Next::Calibrate { size, .. } = decided {
                assert_eq!(size, without.size_bytes, "{budget} s, {costs:?}");
            }
            if with_credit.size_bytes == PREFERRED
                && (without.is_empty() || without.size_bytes < PREFERRED)
            {
                found += 1;
                assert_eq!(decided, Next::Keep, "{budget} s, {costs:?}");
            }
        }
    }
    assert!(found > 0, "no budget where the credit decided");
}

/// A failed try at the preferred size (allocation, binding) falls back to
/// the smaller sizes at the rate measured on the smallest, with what is
/// left, and says why; Ctrl-C is told apart, as it ends the run.
#[test]
fn a_failed_try_at_the_preferred_size_falls_back_to_the_smaller_sizes() {
    use crate::experiments::ExperimentError;
    use crate::placement::PlacementError;
    let measured = at_rate(0.3);
    let at = plan::Request {
        costs: measured,
        ..request(59.0)
    };
    let why: Failed = ExperimentError::Invalid("mbind failed".into()).into();
    let Failed::Other(why) = why else {
        panic!("a bind failure is not an interruption")
    };
    let left = Duration::from_secs_f64(40.0);
    let (p, r) = fallback(
        &at,
        PREFERRED,
        left,
        Some(format!("could not be set up: {why}")),
    );
    assert_eq!(p.size_bytes, SMALLEST, "{p:?}");
    assert_eq!(
        (r.at_most, r.budget, r.costs),
        (Some(SMALLEST), left, measured)
    );
    if let Some(s) = &p.statement {
        assert!(s.contains("mbind failed"), "{s}");
    }
    assert_eq!(
        Failed::from(ExperimentError::Placement(PlacementError::Interrupted)),
        Failed::Interrupted
    );
}

#[test]
fn the_real_buffer_may_take_twice_its_prediction_or_half_what_is_left() {
    let s = |x: f64| Duration::from_secs_f64(x);
    assert_eq!(calibration_allowance(1.0, s(10.0)), s(5.0));
    assert_eq!(calibration_allowance(4.0, s(10.0)), s(8.0));
    // Never past the budget.
    assert_eq!(calibration_allowance(6.0, s(10.0)), s(10.0));
    assert_eq!(calibration_allowance(1.0, Duration::ZERO), Duration::ZERO);
}
