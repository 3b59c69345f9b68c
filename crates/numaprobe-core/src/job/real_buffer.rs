//! The calibration on a real buffer, before anything is measured: a memory
//! node's latency buffer set up within a bound of its own, the smallest
//! candidate size first, and the plan made again from what it cost.

use super::{cost, plan, plan::JobPlan, CostModel, Phase};
use crate::experiments::{latency, ExperimentError};
use crate::placement::PlacementError;
use crate::units::format_size;
use std::time::{Duration, Instant};

/// The calibration on a real buffer: the small probe misjudges a large
/// buffer's set-up (past the caches the chain is written at memory's pace,
/// a large mapping meets reclaim and huge-page availability the probe
/// does not), by 2.5 to 5x at 256 MiB on the 2-CPU development machine,
/// and by far more on a busy machine, where the probe's CPU time leaves
/// out the waiting. So a real buffer is set up now and the plan made again
/// from what it cost, before anything is measured.
///
/// The smallest candidate size comes first ([`Next`]): on a busy machine a
/// set-up at the preferred size can spend the budget the smaller buffer's
/// plan needed, and the job then ends with no document although a plan at
/// that buffer would have fitted. Its rate decides whether the preferred
/// size is tried at all, and that try is bounded so that the smaller
/// buffer's plan still fits after it ([`fallback_room`]). A buffer set up
/// at the size the new plan keeps is handed to the latency phase (no
/// set-up is paid twice); otherwise it is dropped and its time is spent.
/// None when there is nothing to learn (no candidate larger than a few
/// probes, no latency cell), the first set-up failed (the run's own set-up
/// then says why) or was interrupted (the run then stops). A failed try
/// at the preferred size falls back to the smaller sizes.
pub(super) fn replan(
    lat: &latency::LatencyPlan,
    request: &plan::Request,
    first: &JobPlan,
    start: Instant,
    budget: Duration,
) -> Option<(JobPlan, plan::Request)> {
    let cells = &first
        .phases
        .iter()
        .find(|p| p.phase == Phase::Latency)?
        .cells;
    let &mem = lat
        .mem_nodes
        .iter()
        .find(|&&m| cells.iter().any(|c| c.1 == m))?;
    let chaser = lat.cells.iter().find(|c| c.2 == mem)?.1;
    let toucher = crate::experiments::node_buffers::toucher_of(&lat.touchers, mem, chaser);
    let left = || budget.saturating_sub(start.elapsed());
    let set_up = |size: u64, costs: &CostModel, allowance: f64| {
        let predicted = costs.setup_s(Phase::Latency, size);
        let deadline = Instant::now() + Duration::from_secs_f64(allowance);
        SetUp::run(lat, mem, toucher, size, predicted, deadline)
    };
    // The first buffer is the smallest candidate large enough to learn
    // from: at 32 MiB (the smallest candidate whenever the last-level cache
    // is 16 MiB or less) the set-up is mostly cache and fixed costs, so
    // its rate says little about a larger buffer's.
    let smallest = first_size(&request.sizes)?;
    let allowance = first_buffer_allowance(request, smallest, left().as_secs_f64());
    let small = set_up(smallest, &request.costs, allowance).ok()?;
    let costs = small.corrected(&request.costs);
    let (preferred, allowance) = match &small {
        SetUp::Done { .. } => match next(request, &costs, smallest, left().as_secs_f64()) {
            Next::Calibrate { size, allowance } => (size, allowance),
            Next::Keep => return Some(settle(lat, request, small, Some(smallest), left())),
        },
        SetUp::Cut { .. } => return Some(settle(lat, request, small, Some(smallest), left())),
    };
    drop(small);
    let at = plan::Request {
        costs,
        ..request.clone()
    };
    let why = match set_up(preferred, &costs, allowance) {
        Ok(tried) => {
            let cut = tried.stopped("the preferred size's buffer");
            if cut.is_none() {
                // Capped at the size tried: a plan that, with this set-up's
                // time given back, picked a larger size would drop the
                // buffer just made and set one up again.
                let (p, r) = settle(lat, &at, tried, Some(preferred), left());
                if !p.is_empty() && p.size_bytes == preferred {
                    return Some((p, r));
                }
            }
            cut
        }
        // Ctrl-C ends the run: the caller's own set-up stops on it.
        Err(Failed::Interrupted) => return None,
        Err(Failed::Other(e)) => Some(format!(
            "the preferred size's buffer could not be set up: {e}"
        )),
    };
    Some(fallback(&at, preferred, left(), why))
}

/// The smallest of `sizes` (largest first) over 4x the probe's buffer,
/// the first one set up; None when there is none.
pub(super) fn first_size(sizes: &[u64]) -> Option<u64> {
    sizes
        .iter()
        .rev()
        .copied()
        .find(|&s| s > 4 * cost::CALIBRATION_BYTES as u64)
}

/// The plan when the preferred size was cut, failed or no longer fits: the
/// sizes below `preferred` at the rate measured on the smallest (a set-up
/// at the preferred size slower than that is the large mapping's, which
/// the smaller buffers do not pay; the keeper corrects from their real
/// set-up anyway), with `left` of the budget and `why` in the statement.
pub(super) fn fallback(
    at: &plan::Request,
    preferred: u64,
    left: Duration,
    why: Option<String>,
) -> (JobPlan, plan::Request) {
    let again = plan::Request {
        budget: left,
        at_most: at.sizes.iter().copied().find(|&s| s < preferred),
        ..at.clone()
    };
    let mut replanned = plan::plan(&again);
    if let (Some(why), Some(statement)) = (why, replanned.statement.as_mut()) {
        statement.push_str(&format!(" ({why})"));
    }
    (replanned, again)
}

/// Why a set-up gave no buffer and was not cut at its deadline.
#[derive(Debug, PartialEq)]
pub(super) enum Failed {
    /// Ctrl-C: the run stops.
    Interrupted,
    /// Allocation, binding or the chain failed, as this says.
    Other(String),
}

impl From<ExperimentError> for Failed {
    fn from(e: ExperimentError) -> Failed {
        match e {
            ExperimentError::Placement(PlacementError::Interrupted) => Failed::Interrupted,
            _ if crate::cancel::requested() => Failed::Interrupted,
            e => Failed::Other(e.to_string()),
        }
    }
}

/// A real buffer's set-up, as far as it got.
enum SetUp {
    Done {
        buffer: latency::Chained,
        predicted: f64,
        measured: f64,
    },
    /// Stopped at its deadline after touching `touched` of `bytes` in
    /// `spent` seconds; `measured` is the whole buffer's time in proportion.
    Cut {
        predicted: f64,
        measured: f64,
        touched: u64,
        bytes: u64,
        spent: f64,
    },
}

impl SetUp {
    fn run(
        lat: &latency::LatencyPlan,
        mem: u32,
        toucher: u32,
        size: u64,
        predicted: f64,
        deadline: Instant,
    ) -> Result<SetUp, Failed> {
        let began = Instant::now();
        match latency::set_up_node_by(lat, mem, toucher, size, Some(deadline)) {
            Ok(buffer) => Ok(SetUp::Done {
                measured: buffer.record.seconds,
                buffer,
                predicted,
            }),
            Err(ExperimentError::Placement(PlacementError::Late { touched, bytes })) => {
                let spent = began.elapsed().as_secs_f64();
                Ok(SetUp::Cut {
                    measured: whole_from_part(spent, touched, bytes, predicted),
                    predicted,
                    touched,
                    bytes,
                    spent,
                })
            }
            Err(e) => Err(e.into()),
        }
    }

    /// How far a stopped set-up got, for the statement; None when it was
    /// not stopped.
    fn stopped(&self, whose: &str) -> Option<String> {
        match self {
            SetUp::Cut {
                touched,
                bytes,
                spent,
                ..
            } => Some(format!(
                "{whose} set-up was stopped after {} of {} in {spent:.1} s",
                format_size(*touched),
                format_size(*bytes)
            )),
            SetUp::Done { .. } => None,
        }
    }

    /// The model with the set-up rates this buffer showed.
    fn corrected(&self, costs: &CostModel) -> CostModel {
        let (SetUp::Done {
            predicted,
            measured,
            ..
        }
        | SetUp::Cut {
            predicted,
            measured,
            ..
        }) = self;
        rescaled(costs, *predicted, *measured)
    }
}

/// The plan made again from a real buffer's set-up, at sizes up to
/// `at_most`, with
/// `left` of the budget: the buffer handed to the latency phase when the
/// plan keeps its size, its time given back as it is paid already;
/// otherwise it is dropped, and a cut set-up is named in the statement.
fn settle(
    lat: &latency::LatencyPlan,
    request: &plan::Request,
    done: SetUp,
    at_most: Option<u64>,
    left: Duration,
) -> (JobPlan, plan::Request) {
    let costs = done.corrected(&request.costs);
    let cut = done.stopped("its first buffer's");
    let mut again = plan::Request {
        budget: left,
        costs,
        at_most,
        ..request.clone()
    };
    if let SetUp::Done {
        buffer, measured, ..
    } = done
    {
        let size = buffer.record.bytes;
        again.budget = left + Duration::from_secs_f64(measured);
        let kept = plan::plan(&again);
        if !kept.is_empty() && kept.size_bytes == size {
            lat.handed.put(buffer);
            return (kept, again);
        }
        again.budget = left;
    }
    let mut replanned = plan::plan(&again);
    if let (Some(cut), Some(statement)) = (cut, replanned.statement.as_mut()) {
        statement.push_str(&format!(
            " ({cut}, {:.2} s/GiB)",
            costs.latency_setup_s_per_gib
        ));
    }
    (replanned, again)
}

/// What follows the smallest buffer's set-up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Next {
    /// Plan at the smallest size, on the buffer set up.
    Keep,
    /// Drop it and set up `size`, stopping after `allowance` seconds.
    Calibrate { size: u64, allowance: f64 },
}

/// Whether the preferred size is tried after the smallest buffer's set-up
/// (`costs` corrected by it, `left_s` of the budget left now): only when
/// the plan at that rate, with `left_s` (a larger buffer cannot reuse the
/// smallest one's set-up, so its time is not given back), takes a larger
/// size and twice its predicted set-up (the bound [`calibration_allowance`]
/// gives it) still leaves a sound plan at the smallest room
/// ([`fallback_room`]). Otherwise the buffer already set up is the one
/// measured on.
pub(super) fn next(request: &plan::Request, costs: &CostModel, smallest: u64, left_s: f64) -> Next {
    let at = plan::Request {
        budget: Duration::from_secs_f64(left_s),
        costs: *costs,
        ..request.clone()
    };
    let p = plan::plan(&at);
    if p.is_empty() || p.size_bytes <= smallest {
        return Next::Keep;
    }
    let predicted = costs.setup_s(Phase::Latency, p.size_bytes);
    let room = fallback_room(request, costs, p.size_bytes, left_s);
    if 2.0 * predicted > room {
        return Next::Keep;
    }
    let allowance = calibration_allowance(predicted, Duration::from_secs_f64(left_s))
        .as_secs_f64()
        .min(room);
    Next::Calibrate {
        size: p.size_bytes,
        allowance,
    }
}

/// The longest a set-up at the preferred size `size` may take (of `left_s`)
/// and still leave the sizes below it a plan as good as they have now: a
/// sound one when they have it, else one that measures at least a cell.
/// `left_s` when no smaller size has any plan to keep.
pub(super) fn fallback_room(
    request: &plan::Request,
    costs: &CostModel,
    size: u64,
    left_s: f64,
) -> f64 {
    let Some(below) = request.sizes.iter().copied().find(|&s| s < size) else {
        return left_s;
    };
    let plan_after = |spent: f64| plan_within(request, *costs, left_s - spent, below);
    let sound = |p: &JobPlan| {
        !p.is_empty()
            && p.phases
                .iter()
                .all(|ph| ph.coverage == plan::Coverage::Full)
    };
    if sound(&plan_after(0.0)) {
        longest(left_s, |t| sound(&plan_after(t)))
    } else if !plan_after(0.0).is_empty() {
        longest(left_s, |t| !plan_after(t).is_empty())
    } else {
        left_s
    }
}

/// How long the first buffer's set-up may take, of `left_s`: the longest
/// after which a plan still measures at least a cell, at the rate the
/// set-up showed. Either the plan keeps this buffer (its set-up, already
/// paid, is part of `left_s`), or a smaller candidate's plan fits in what
/// the set-up left: the time spent on a buffer that is then dropped is
/// not given back. A set-up past that is stopped: the refusal then comes
/// within the budget with how far it got.
pub(super) fn first_buffer_allowance(request: &plan::Request, size: u64, left_s: f64) -> f64 {
    let predicted = request.costs.setup_s(Phase::Latency, size);
    let smaller = request.sizes.iter().copied().find(|&s| s < size);
    let fits = |t: f64| {
        let costs = rescaled(&request.costs, predicted, t);
        let kept = plan_within(request, costs, left_s, size);
        (!kept.is_empty() && kept.size_bytes == size)
            || smaller.is_some_and(|s| !plan_within(request, costs, left_s - t, s).is_empty())
    };
    longest(left_s, fits)
}

/// The request's plan at `costs` within `budget_s` (none below 0) and at
/// sizes up to `at_most`: what the allowances ask of each time they try.
fn plan_within(request: &plan::Request, costs: CostModel, budget_s: f64, at_most: u64) -> JobPlan {
    plan::plan(&plan::Request {
        budget: Duration::from_secs_f64(budget_s.max(0.0)),
        costs,
        at_most: Some(at_most),
        ..request.clone()
    })
}

/// The largest `t` in [0, `limit`] with `ok(t)`, for an `ok` true up to
/// some point and false after it; 0 when not even 0 is.
fn longest(limit: f64, ok: impl Fn(f64) -> bool) -> f64 {
    if ok(limit) {
        return limit;
    }
    let (mut lo, mut hi) = (0.0, limit);
    if !ok(lo) {
        return 0.0;
    }
    for _ in 0..40 {
        let mid = (lo + hi) / 2.0;
        if ok(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// `costs` with both set-up rates scaled so the latency set-up predicted
/// at `predicted_s` takes `measured_s`; unchanged when either is not
/// positive.
pub(super) fn rescaled(costs: &CostModel, predicted_s: f64, measured_s: f64) -> CostModel {
    let mut c = *costs;
    if predicted_s > 0.0 && measured_s > 0.0 {
        let ratio = measured_s / predicted_s;
        c.latency_setup_s_per_gib *= ratio;
        c.bandwidth_setup_s_per_gib *= ratio;
        c.source = "calibration on a real buffer";
    }
    c
}

/// How long the calibration's buffer at the preferred size may take to set
/// up: twice what the smaller buffer's rate predicted for it, or half of
/// what is `left` of the budget when that is more, never more than `left`
/// (and never past [`fallback_room`]). A set-up past it is stopped (as
/// Ctrl-C stops one), and the plan falls back to the smaller sizes.
pub(super) fn calibration_allowance(predicted_s: f64, left: Duration) -> Duration {
    let left_s = left.as_secs_f64();
    Duration::from_secs_f64((2.0 * predicted_s).max(left_s / 2.0).min(left_s))
}

/// The whole buffer's set-up time implied by a set-up stopped after
/// `touched` of `bytes` in `elapsed_s` seconds: in proportion to what it
/// touched. With nothing touched (the time went to mapping it) nothing is
/// learnt about the rate, and the figure is at least the time spent and at
/// least what was `predicted_s`.
pub(super) fn whole_from_part(elapsed_s: f64, touched: u64, bytes: u64, predicted_s: f64) -> f64 {
    if touched == 0 {
        return elapsed_s.max(predicted_s);
    }
    elapsed_s * bytes as f64 / touched as f64
}
