//! The main job's [`RunStatus`]: which phases fell short of their plan and
//! why (the budget, an interruption, a failure), read from the phases as
//! they ran. run.json's `complete` and `status`, summary.md's status line and
//! report.html's banner all come from it.

use super::extra::{Extras, BUDGET_NOT_REACHED, INTERRUPTED_BEFORE, SHARE_SPENT};
use super::plan::Coverage;
use super::{Phase, PhaseRecord};
use crate::model::extra::{ExtraRecord, ExtraStatus};
use crate::model::matrix::MatrixResult;
use crate::model::run_status::{PhaseShortfall, RunStatus, Shortfall};

/// The status of a run: its matrix phases (`phases`, with the matrices they
/// produced) and its extra phases (none when it stopped before them).
pub fn of(
    phases: &[PhaseRecord],
    latency: Option<&MatrixResult>,
    bandwidth: Option<&MatrixResult>,
    extras: Option<&Extras>,
) -> RunStatus {
    let mut out = Vec::new();
    for p in phases {
        let m = match p.plan.phase {
            Phase::Latency => latency,
            Phase::Bandwidth => bandwidth,
        };
        matrix(p, m, &mut out);
    }
    if let Some(x) = extras {
        let interrupted = [
            x.c2c.result.as_ref().map(|r| r.interrupted),
            x.loaded_latency.result.as_ref().map(|r| r.interrupted),
            x.peak.result.as_ref().map(|r| r.interrupted),
            x.sweep.result.as_ref().map(|r| r.interrupted),
        ];
        for (r, i) in x.records().iter().zip(interrupted) {
            if let Some(s) = extra(r, i.unwrap_or(false)) {
                out.push(s);
            }
        }
    }
    RunStatus::of(out)
}

fn short(phase: &str, shortfall: Shortfall, reason: String) -> PhaseShortfall {
    PhaseShortfall {
        phase: phase.into(),
        shortfall,
        reason,
    }
}

fn matrix(p: &PhaseRecord, m: Option<&MatrixResult>, out: &mut Vec<PhaseShortfall>) {
    let name = p.plan.phase.name();
    let reason = p.plan.reason.clone().unwrap_or_default();
    if reason == INTERRUPTED_BEFORE {
        out.push(short(name, Shortfall::Interrupted, reason));
        return;
    }
    // The planner alone reduces a matrix's coverage, and only for the budget.
    if p.plan.coverage != Coverage::Full {
        out.push(short(name, Shortfall::Budget, reason));
    }
    let Some(m) = m else { return };
    if m.interrupted {
        out.push(short(
            name,
            Shortfall::Interrupted,
            if m.cells.len() < p.planned_cells {
                format!(
                    "{} of {} planned cells measured",
                    m.cells.len(),
                    p.planned_cells
                )
            } else {
                // Every cell is there: the interruption came during the
                // last one's sampling.
                format!(
                    "in its last cell, {} of {} measured",
                    m.cells.len(),
                    p.planned_cells
                )
            },
        ));
    }
    if let Some(f) = m.failed.first() {
        out.push(short(
            name,
            Shortfall::Failed,
            format!(
                "{} of {} planned cells failed (the first, CPU node {} on memory node {}: {})",
                m.failed.len(),
                p.planned_cells,
                f.cpu_node,
                f.mem_node,
                f.reason
            ),
        ));
    }
}

fn extra(r: &ExtraRecord, interrupted: bool) -> Option<PhaseShortfall> {
    let reason = r.reason.clone().unwrap_or_default();
    let shortfall = match r.status {
        ExtraStatus::Measured => return None,
        ExtraStatus::Failed => Shortfall::Failed,
        _ if interrupted || reason == INTERRUPTED_BEFORE => Shortfall::Interrupted,
        ExtraStatus::Skipped if reason.starts_with(BUDGET_NOT_REACHED) => Shortfall::Budget,
        ExtraStatus::Partial if reason.starts_with(SHARE_SPENT) => Shortfall::Budget,
        ExtraStatus::Skipped | ExtraStatus::Partial => Shortfall::Other,
    };
    Some(short(r.phase.name(), shortfall, reason))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::extra::Extra;
    use crate::model::matrix::{FailedCell, MatrixKind};
    use crate::stats::StopRule;
    use crate::timer::{ClockSource, TimerInfo};

    fn phase(coverage: Coverage, reason: Option<&str>) -> PhaseRecord {
        PhaseRecord {
            plan: super::super::plan::PhasePlan {
                phase: Phase::Bandwidth,
                coverage,
                cells: vec![(0, 0), (0, 1)],
                skipped: Vec::new(),
                cell_budget_s: 0.1,
                estimated_s: 1.0,
                reason: reason.map(String::from),
            },
            planned_cells: 4,
            measured_cells: 1,
            elapsed_s: 1.0,
            setups: Vec::new(),
            setup_s: 0.0,
        }
    }

    fn matrix_result() -> MatrixResult {
        let timer = TimerInfo {
            source: ClockSource::MonotonicRaw,
            tsc_hz: None,
            overhead_ns: 20.0,
            resolution_ns: 1.0,
        };
        MatrixResult::new(
            MatrixKind::Bandwidth,
            vec![0],
            vec![0, 1],
            StopRule::default(),
            timer,
        )
    }

    #[test]
    fn a_matrix_is_partial_by_budget_interrupted_or_failed_as_it_ran() {
        let whole = phase(Coverage::Full, None);
        let m = matrix_result();
        assert!(of(std::slice::from_ref(&whole), None, Some(&m), None)
            .phases
            .is_empty());
        // The planner cut it: partial by budget, the run still complete.
        let cut = phase(Coverage::Subset, Some("bandwidth on the diagonal"));
        let st = of(&[cut], None, Some(&m), None);
        assert!(st.complete);
        assert_eq!(st.phases.len(), 1);
        assert_eq!(st.phases[0].shortfall, Shortfall::Budget);
        assert_eq!(st.phases[0].reason, "bandwidth on the diagonal");
        assert_eq!(st.phases[0].phase, "bandwidth");
        // A signal before it started.
        let never = phase(Coverage::Skipped, Some(INTERRUPTED_BEFORE));
        let st = of(&[never], None, None, None);
        assert!(!st.complete);
        assert_eq!(st.phases.len(), 1);
        assert_eq!(st.phases[0].shortfall, Shortfall::Interrupted);
        // Cut short by a signal, and a failed cell.
        let mut m2 = matrix_result();
        m2.interrupted = true;
        m2.failed.push(FailedCell {
            cpu_node: 0,
            mem_node: 1,
            cpus: vec![0],
            reason: "no memory".into(),
        });
        let st = of(&[whole], None, Some(&m2), None);
        assert!(!st.complete);
        let kinds: Vec<Shortfall> = st.phases.iter().map(|p| p.shortfall).collect();
        assert_eq!(kinds, vec![Shortfall::Interrupted, Shortfall::Failed]);
        assert_eq!(st.phases[0].reason, "0 of 4 planned cells measured");
        assert!(st.phases[1].reason.starts_with(
            "1 of 4 planned cells failed (the first, CPU node 0 on memory node 1: no memory"
        ));
        // The latency matrix's record reads the latency matrix.
        let mut lat = phase(Coverage::Full, None);
        lat.plan.phase = Phase::Latency;
        assert!(of(&[lat], Some(&m), Some(&m2), None).phases.is_empty());
    }

    fn record(phase: Extra, status: ExtraStatus, reason: &str) -> ExtraRecord {
        ExtraRecord {
            phase,
            status,
            reason: (!reason.is_empty()).then(|| reason.to_string()),
            share_s: 1.0,
            elapsed_s: 1.0,
            steps_planned: 4,
            steps_done: 2,
        }
    }

    #[test]
    fn an_extra_phase_cut_by_its_share_is_partial_by_budget_not_interrupted() {
        let spent =
            format!("{SHARE_SPENT} (0.3 s) was spent after 5 of 21 steps; the rest were skipped");
        let s = extra(&record(Extra::Sweep, ExtraStatus::Partial, &spent), false).unwrap();
        assert_eq!(
            (s.shortfall, s.phase.as_str()),
            (Shortfall::Budget, "cache sweep")
        );
        assert_eq!(s.reason, spent);
        // The same partial result, stopped by a Ctrl-C.
        let s = extra(
            &record(
                Extra::Sweep,
                ExtraStatus::Partial,
                "interrupted after 2 of 4 steps",
            ),
            true,
        )
        .unwrap();
        assert_eq!(s.shortfall, Shortfall::Interrupted);
        let far = format!("{BUDGET_NOT_REACHED}: 0.13 s of it left for this phase");
        let s = extra(&record(Extra::Peak, ExtraStatus::Skipped, &far), false).unwrap();
        assert_eq!(s.shortfall, Shortfall::Budget);
        let s = extra(
            &record(Extra::C2c, ExtraStatus::Skipped, INTERRUPTED_BEFORE),
            false,
        )
        .unwrap();
        assert_eq!(s.shortfall, Shortfall::Interrupted);
        // Fewer steps for a reason of its own (its notes say which): not the
        // budget's doing.
        let s = extra(
            &record(
                Extra::LoadedLatency,
                ExtraStatus::Partial,
                "2 of 4 steps measured (the result's notes say why)",
            ),
            false,
        )
        .unwrap();
        assert_eq!(s.shortfall, Shortfall::Other);
        let s = extra(
            &record(Extra::C2c, ExtraStatus::Skipped, "1 allowed CPU"),
            false,
        )
        .unwrap();
        assert_eq!(s.shortfall, Shortfall::Other);
        let s = extra(
            &record(Extra::LoadedLatency, ExtraStatus::Failed, "no memory"),
            false,
        )
        .unwrap();
        assert_eq!(s.shortfall, Shortfall::Failed);
        assert!(extra(&record(Extra::Peak, ExtraStatus::Measured, ""), false).is_none());
    }
}
