//! The main job's document: `run.json` in a report folder and `numaprobe run
//! --format json`. Everything the job found in one document, each part
//! typed as its own document is; the planner's record and the interleave
//! checks are written by `job` and read back as plain JSON (the model sits
//! below `job` and `analysis`, whose types they are).

use super::c2c::C2cResult;
use super::extra::{ExtraOutcome, ExtraStatus};
use super::infer::Inference;
use super::loaded::LoadedResult;
use super::matrix::{MatrixKind, MatrixResult};
use super::peak::PeakResult;
use super::pin::PinReport;
use super::run_status::RunStatus;
use super::sweep::SweepResult;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Everything the main job found. `Plan` is the planner's record
/// (`job::Record` when written), `Check` one node's interleave check
/// (`job::interleave::InterleaveCheck`), `Topo` the topology document
/// (JSON when written); a reader takes what it needs of them
/// (`document::RunRead`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunReport<Plan = Value, Check = Value, Topo = Value> {
    pub schema: String,
    /// The topology document as `numaprobe topo --format json` writes it
    /// (its own schema and provenance inside).
    pub topology: Topo,
    pub latency: Option<MatrixResult>,
    pub bandwidth: Option<MatrixResult>,
    /// Inference on the latency matrix, or on the SLIT when nothing was measured.
    pub inference: Option<Inference>,
    pub inference_bandwidth: Option<Inference>,
    pub binding: Option<PinReport>,
    /// Why a part is missing, and other remarks on the run as a whole.
    #[serde(default)]
    pub notes: Vec<String>,
    /// False when a measurement was interrupted or failed; a phase cut by
    /// the budget leaves it true (`status` names such phases and why).
    #[serde(default = "yes")]
    pub complete: bool,
    /// What fell short of the plan: each phase partial by budget,
    /// interrupted or failed, and why (null when nothing was measured).
    #[serde(default)]
    pub status: Option<RunStatus>,
    /// The measurements' budget and wall time (null when nothing was measured).
    #[serde(default)]
    pub budget_s: Option<f64>,
    #[serde(default)]
    pub elapsed_s: Option<f64>,
    /// What the planner measured, reduced or skipped, and why.
    #[serde(default = "none")]
    pub plan: Option<Plan>,
    /// The extra phases after the matrices: status, reason, share of the
    /// budget and the result (null when nothing was measured).
    #[serde(default = "none")]
    pub c2c: Option<ExtraOutcome<C2cResult>>,
    #[serde(default = "none")]
    pub loaded_latency: Option<ExtraOutcome<LoadedResult>>,
    #[serde(default = "none")]
    pub peak: Option<ExtraOutcome<PeakResult>>,
    #[serde(default = "none")]
    pub sweep: Option<ExtraOutcome<SweepResult>>,
    /// Each node holding CPUs of several packages: uniform memory, or memory
    /// the firmware interleaves across the sockets (empty on a machine of one
    /// package per node, and when nothing was measured).
    #[serde(default = "Vec::new")]
    pub interleave: Vec<Check>,
    /// The figures a busy machine touched, named; null when none was
    /// (and when nothing was measured).
    #[serde(default)]
    pub busy_figures: Option<BusyFigures>,
}

/// The figures of a run that other tasks touched, each named as its
/// document names it (`latency 0->1`, `system peak read`, `c2c CPUs 0-1
/// hitm`, ...), and the sentence on them, also among the notes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BusyFigures {
    /// Starred for memory traffic from other tasks (`crate::beside`).
    pub memory_traffic: Vec<String>,
    /// With samples set aside: their measuring thread lost its CPU
    /// (preempted, or off its CPU), so those samples are not in the figure.
    pub set_aside: Vec<String>,
    pub statement: String,
}

fn yes() -> bool {
    true
}

fn none<T>() -> Option<T> {
    None
}

impl<P, C, T> RunReport<P, C, T> {
    /// Every figure's samples replaced by their sketch
    /// ([`crate::stats::sketch`]): the matrices' cells and c2c's figures,
    /// the only figures of the report that carry their samples.
    pub fn leave_out_samples(&mut self) {
        for m in [&mut self.latency, &mut self.bandwidth]
            .into_iter()
            .flatten()
        {
            m.leave_out_samples();
        }
        if let Some(r) = self.c2c.as_mut().and_then(|c| c.result.as_mut()) {
            r.leave_out_samples();
        }
    }

    /// Both matrices that were measured, latency first.
    pub fn matrices(&self) -> impl Iterator<Item = &MatrixResult> {
        [&self.latency, &self.bandwidth].into_iter().flatten()
    }

    /// Both inferences that were made, latency first.
    pub fn inferences(&self) -> impl Iterator<Item = &Inference> {
        [&self.inference, &self.inference_bandwidth]
            .into_iter()
            .flatten()
    }

    /// "N of M cells failed (latency: first ...; bandwidth: ...)" over both
    /// matrices, or None when every planned cell was measured or skipped.
    pub fn cell_failures(&self) -> Option<String> {
        let mut failed = 0;
        let mut planned = 0;
        let mut parts = Vec::new();
        for m in self.matrices() {
            planned += m.cells.len() + m.failed.len();
            if let Some(first) = m.failed.first() {
                failed += m.failed.len();
                let kind = match m.kind {
                    MatrixKind::Latency => "latency",
                    MatrixKind::Bandwidth => "bandwidth",
                };
                parts.push(format!("{kind}: first {first}"));
            }
        }
        (failed > 0).then(|| {
            let rest = if failed == planned {
                "each failure is listed in the output and the report"
            } else {
                "the other cells are in the output and the report"
            };
            format!(
                "{failed} of {planned} planned cells failed ({}); {rest}",
                parts.join("; ")
            )
        })
    }
    /// The closing line when something failed: the matrices' cells and the
    /// extra phases that returned an error; None when nothing failed
    /// (skipped and budget-cut phases are not failures).
    pub fn failures(&self) -> Option<String> {
        let extras: Vec<String> = [
            self.c2c.as_ref().map(|o| &o.record),
            self.loaded_latency.as_ref().map(|o| &o.record),
            self.peak.as_ref().map(|o| &o.record),
            self.sweep.as_ref().map(|o| &o.record),
        ]
        .into_iter()
        .flatten()
        .filter(|r| r.status == ExtraStatus::Failed)
        .map(|r| {
            format!(
                "{} failed: {}",
                r.phase.name(),
                r.reason.as_deref().unwrap_or("no reason recorded")
            )
        })
        .collect();
        let cells = self.cell_failures();
        if extras.is_empty() {
            return cells;
        }
        let mut line = cells.map(|c| format!("{c}; ")).unwrap_or_default();
        line.push_str(&format!(
            "{}; everything else is in the output and the report",
            extras.join("; ")
        ));
        Some(line)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::extra::{Extra, ExtraRecord};

    fn outcome<T>(phase: Extra, status: ExtraStatus, reason: Option<&str>) -> ExtraOutcome<T> {
        ExtraOutcome {
            record: ExtraRecord {
                phase,
                status,
                reason: reason.map(String::from),
                share_s: 1.0,
                elapsed_s: 0.5,
                steps_planned: 2,
                steps_done: 1,
            },
            result: None,
        }
    }

    /// A run whose loaded-latency phase ended as `loaded`; the other extra
    /// phases were skipped or cut by the budget.
    pub(crate) fn sample(loaded: ExtraStatus) -> RunReport {
        RunReport {
            schema: crate::SCHEMA.into(),
            topology: Value::Null,
            latency: None,
            bandwidth: None,
            inference: None,
            inference_bandwidth: None,
            binding: None,
            notes: vec![],
            complete: true,
            status: None,
            budget_s: Some(5.0),
            elapsed_s: Some(4.0),
            plan: None,
            c2c: Some(outcome(
                Extra::C2c,
                ExtraStatus::Skipped,
                Some("1 allowed CPU"),
            )),
            loaded_latency: Some(outcome(
                Extra::LoadedLatency,
                loaded,
                Some("the kernel refused the load threads' buffers"),
            )),
            peak: Some(outcome(
                Extra::Peak,
                ExtraStatus::Partial,
                Some("share spent"),
            )),
            sweep: Some(outcome(
                Extra::Sweep,
                ExtraStatus::Skipped,
                Some("the budget does not reach it"),
            )),
            interleave: vec![],
            busy_figures: None,
        }
    }

    #[test]
    fn a_failed_extra_phase_fails_the_run_and_a_skipped_or_cut_one_does_not() {
        assert_eq!(sample(ExtraStatus::Partial).failures(), None);
        let line = sample(ExtraStatus::Failed).failures().unwrap();
        assert_eq!(
            line,
            "loaded latency failed: the kernel refused the load threads' buffers; everything else is in the output and the report"
        );
    }
}
