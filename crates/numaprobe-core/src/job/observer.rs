//! What the main job tells its caller as it runs: the [`Observer`] trait and
//! the two progress reports it receives, the matrices' [`Status`] and an
//! extra phase's [`StepStatus`]. The budget keepers of both kinds of phase
//! speak to it, so it sits apart from both.

use super::Phase;
use crate::experiments::Progress;
use crate::model::extra::{Extra, ExtraRecord};
use crate::model::matrix::MatrixResult;

/// Where a run stands, for a progress line: the main job's (its
/// [`Observer`] receives it) and every step-by-step command's, whose
/// progress the binary draws from this one type.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    /// The phase's name (`latency`, `bandwidth`, `latency sweep`); empty
    /// while unknown.
    pub phase: String,
    /// Cells of this phase finished (measured or failed).
    pub phase_done: usize,
    pub phase_total: usize,
    /// Cells of all phases finished and planned.
    pub done: usize,
    pub total: usize,
    pub elapsed_s: f64,
    /// Seconds still to go (the main job's: from the plan corrected by the
    /// measured costs); None while unknown.
    pub eta_s: Option<f64>,
}

impl Status {
    /// Nothing known yet.
    pub fn unknown() -> Self {
        Status {
            phase: String::new(),
            phase_done: 0,
            phase_total: 0,
            done: 0,
            total: 0,
            elapsed_s: 0.0,
            eta_s: None,
        }
    }

    /// A run of one phase: `done` of `total` steps.
    pub fn single(
        phase: &str,
        done: usize,
        total: usize,
        elapsed_s: f64,
        eta_s: Option<f64>,
    ) -> Self {
        Status {
            phase: phase.into(),
            phase_done: done,
            phase_total: total,
            done,
            total,
            elapsed_s,
            eta_s,
        }
    }
}

/// The caller's side of the main job: a [`Progress`] observer per cell, plus
/// where the job stands and when a phase starts.
pub trait Observer: Progress {
    fn phase_started(&mut self, _phase: Phase, _cells: usize) {}
    fn status(&mut self, _status: &Status) {}
    /// A phase ended (completely, or interrupted); `result` is final.
    fn phase_finished(&mut self, _phase: Phase, _result: &MatrixResult) {}
    /// A phase was reduced when it began, because the phases before it cost
    /// more than planned; `plan.reason` says how.
    fn replanned(&mut self, _plan: &super::plan::PhasePlan) {}
    /// An extra phase (c2c, loaded latency, peak) begins with `share_s`
    /// seconds of the budget.
    fn extra_started(&mut self, _phase: Extra, _share_s: f64) {}
    /// Where the running extra phase stands (after every step).
    fn extra_status(&mut self, _status: &StepStatus) {}
    /// An extra phase ended: measured, partial, skipped or failed.
    fn extra_finished(&mut self, _record: &ExtraRecord) {}
}

/// Where an extra phase stands, for a progress line.
#[derive(Debug, Clone, PartialEq)]
pub struct StepStatus {
    pub phase: Extra,
    pub steps_done: usize,
    pub steps: usize,
    /// What the step running now is (a CPU pair, a curve point).
    pub label: String,
    /// Seconds since the phase began, and of its share still left.
    pub elapsed_s: f64,
    pub left_s: f64,
    /// Seconds since the job began, and the whole job's ETA (the phases
    /// after this one included): what a progress line of the run shows.
    pub job_elapsed_s: f64,
    pub job_eta_s: f64,
}
