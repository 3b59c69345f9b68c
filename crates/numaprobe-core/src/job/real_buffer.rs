//! The calibration on a real buffer, before anything is measured: the
//! first memory node's latency buffer set up at the planned size, within a
//! bound of its own, and the plan made again from what it cost.

use super::{cost, plan, plan::JobPlan, Phase};
use crate::experiments::{latency, ExperimentError};
use crate::placement::PlacementError;
use crate::units::format_size;
use std::time::{Duration, Instant};

/// The calibration on a real buffer: the small probe misjudges a large
/// buffer's set-up (past the caches the chain is written at memory's pace,
/// a large mapping meets reclaim and huge-page availability the probe
/// does not), by 2.5 to 5x at 256 MiB on the 2-CPU development machine. So
/// the first memory node's latency buffer is set up now, at the planned
/// size, and the plan is made again from what it cost, before anything is
/// measured: a budget too short for that buffer gets a smaller one or the
/// statement, up front. The buffer is handed to the latency phase when the
/// new plan keeps its size (no set-up is paid twice); otherwise it is
/// dropped and its time is spent. None when there is nothing to learn (a
/// buffer no larger than a few probes, no latency cell) or the set-up
/// failed (the run's own set-up then says why).
pub(super) fn replan(
    lat: &latency::LatencyPlan,
    request: &plan::Request,
    first: &JobPlan,
    start: Instant,
    budget: Duration,
) -> Option<(JobPlan, plan::Request)> {
    let size = first.size_bytes;
    if size <= 4 * cost::CALIBRATION_BYTES as u64 {
        return None;
    }
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
    let predicted = request.costs.setup_s(Phase::Latency, size);
    let began = Instant::now();
    let deadline = began + calibration_allowance(predicted, budget.saturating_sub(start.elapsed()));
    let mut cut = None;
    let (buffer, measured) = match latency::set_up_node_by(lat, mem, toucher, size, Some(deadline))
    {
        Ok(buffer) => {
            let s = buffer.record.seconds;
            (Some(buffer), s)
        }
        Err(ExperimentError::Placement(PlacementError::Late { touched, bytes })) => {
            let spent = began.elapsed().as_secs_f64();
            cut = Some(format!(
                "its first buffer's set-up was stopped after {} of {} in {spent:.1} s",
                format_size(touched),
                format_size(bytes)
            ));
            (None, whole_from_part(spent, touched, bytes, predicted))
        }
        Err(_) => return None,
    };
    let mut costs = request.costs;
    if predicted > 0.0 && measured > 0.0 {
        let ratio = measured / predicted;
        costs.latency_setup_s_per_gib *= ratio;
        costs.bandwidth_setup_s_per_gib *= ratio;
        costs.source = "calibration on a real buffer";
    }
    // The plan counts the first buffer's set-up; it is paid already, so its
    // time goes back into what the plan may spend.
    let left = budget.saturating_sub(start.elapsed());
    let mut again = plan::Request {
        budget: left + Duration::from_secs_f64(measured),
        costs,
        ..request.clone()
    };
    if let Some(buffer) = buffer {
        let kept = plan::plan(&again);
        if !kept.is_empty() && kept.size_bytes == size {
            lat.handed.put(buffer);
            return Some((kept, again));
        }
    }
    again.budget = left;
    let mut replanned = plan::plan(&again);
    if let (Some(cut), Some(statement)) = (cut, replanned.statement.as_mut()) {
        statement.push_str(&format!(
            " ({cut}, {:.2} s/GiB)",
            costs.latency_setup_s_per_gib
        ));
    }
    Some((replanned, again))
}

/// How long the calibration's buffer may take to set up: twice what the
/// probe predicted for it, or half of what is `left` of the budget when
/// that is more, never more than `left`. A set-up past it is stopped (as
/// Ctrl-C stops one), and what was touched by then gives the rate the plan
/// is made again with: the refusal or the smaller buffer then comes within
/// the budget, not after a set-up the budget could never afford.
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
