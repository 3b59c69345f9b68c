//! The main job's extra phases as documents: after the two matrices, the
//! c2c summary, the loaded-latency curves, the system peak and a short
//! cache-size sweep each run in a share of what is left of the budget, and
//! each ends measured, partial, skipped or failed with a reason. `run.json`
//! holds one [`ExtraOutcome`] per phase (keys `c2c`, `loaded_latency`,
//! `peak`, `sweep`) and its `plan` one
//! [`ExtraRecord`] each; the renderers read them from here, never from the
//! job that fills them.

use serde::{Deserialize, Serialize};

/// An extra phase of the main job, in run order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Extra {
    C2c,
    LoadedLatency,
    Peak,
    /// `latency --sweep`, short: one page kind, two points per octave.
    Sweep,
}

impl Extra {
    pub const ALL: [Extra; 4] = [Extra::C2c, Extra::LoadedLatency, Extra::Peak, Extra::Sweep];

    /// The name in progress lines, notes and the summary.
    pub fn name(self) -> &'static str {
        match self {
            Extra::C2c => "c2c",
            Extra::LoadedLatency => "loaded latency",
            Extra::Peak => "system peak",
            Extra::Sweep => "cache sweep",
        }
    }
}

/// How an extra phase ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExtraStatus {
    /// Every step of the experiment's plan.
    Measured,
    /// Some steps: its share of the budget was spent, or it was interrupted.
    Partial,
    /// Not run: the machine cannot do it or the budget does not reach it.
    Skipped,
    /// The experiment returned an error.
    Failed,
}

impl ExtraStatus {
    pub fn name(self) -> &'static str {
        match self {
            ExtraStatus::Measured => "measured",
            ExtraStatus::Partial => "partial",
            ExtraStatus::Skipped => "skipped",
            ExtraStatus::Failed => "failed",
        }
    }
}

/// One extra phase as it ran (without its result): `plan.extras` in
/// `run.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtraRecord {
    pub phase: Extra,
    pub status: ExtraStatus,
    /// Why it is not `measured`: the error, the skip, the budget cut.
    pub reason: Option<String>,
    /// Seconds of the budget this phase was given when it began.
    pub share_s: f64,
    pub elapsed_s: f64,
    /// Steps of the experiment's plan (CPU pairs, curve points, mixes) and
    /// how many ran; 0 and 0 when it never started.
    pub steps_planned: usize,
    pub steps_done: usize,
}

/// One extra phase and its result (null unless measured or partial).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtraOutcome<T> {
    #[serde(flatten)]
    pub record: ExtraRecord,
    pub result: Option<T>,
}

impl<T> ExtraOutcome<T> {
    /// A phase that did not run, and why.
    pub fn without(phase: Extra, status: ExtraStatus, reason: String, share_s: f64) -> Self {
        ExtraOutcome {
            record: ExtraRecord {
                phase,
                status,
                reason: Some(reason),
                share_s,
                elapsed_s: 0.0,
                steps_planned: 0,
                steps_done: 0,
            },
            result: None,
        }
    }
}
