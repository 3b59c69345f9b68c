//! What became of the main job as a whole: `status` in `run.json`, the one
//! reading of "complete" that run.json's `complete`, summary.md's status
//! line and report.html's banner all show.
//!
//! A run is complete when nothing in it was interrupted and nothing failed.
//! A phase that stopped because its share of the budget was spent, or that
//! the budget did not reach, is *partial by budget*: the run is still
//! complete, and the status names the phase and why.

use serde::{Deserialize, Serialize};

/// How one phase (matrix or extra) fell short of its whole plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Shortfall {
    /// Its share of the budget was spent, or the budget did not reach it.
    Budget,
    /// A Ctrl-C or SIGTERM stopped it, or came before it started.
    Interrupted,
    /// A cell or the phase's experiment failed.
    Failed,
    /// The machine cannot run it (one CPU for c2c, no node of two CPUs for
    /// loaded latency), or its own notes say why it measured less.
    Other,
}

impl Shortfall {
    pub fn name(self) -> &'static str {
        match self {
            Shortfall::Budget => "cut short by the budget",
            Shortfall::Interrupted => "stopped by an interruption",
            Shortfall::Failed => "failed",
            Shortfall::Other => "not run in full",
        }
    }
}

/// One phase that did not run its whole plan, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseShortfall {
    /// `latency`, `bandwidth`, `c2c`, `loaded latency`, `system peak`,
    /// `cache sweep`.
    pub phase: String,
    pub shortfall: Shortfall,
    pub reason: String,
}

/// The run as a whole.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunStatus {
    /// Nothing interrupted, nothing failed (phases partial by budget allowed).
    pub complete: bool,
    /// Every phase that did not run its whole plan, in run order.
    pub phases: Vec<PhaseShortfall>,
}

impl RunStatus {
    /// A status from the phases' shortfalls: complete unless one of them is
    /// an interruption or a failure.
    pub fn of(phases: Vec<PhaseShortfall>) -> RunStatus {
        RunStatus {
            complete: !phases
                .iter()
                .any(|p| matches!(p.shortfall, Shortfall::Interrupted | Shortfall::Failed)),
            phases,
        }
    }

    /// The phases that fell short in this way.
    pub fn with(&self, s: Shortfall) -> impl Iterator<Item = &PhaseShortfall> {
        self.phases.iter().filter(move |p| p.shortfall == s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn short(phase: &str, shortfall: Shortfall) -> PhaseShortfall {
        PhaseShortfall {
            phase: phase.into(),
            shortfall,
            reason: "why".into(),
        }
    }

    #[test]
    fn only_an_interruption_or_a_failure_makes_a_run_incomplete() {
        assert!(RunStatus::of(vec![]).complete);
        let budget = RunStatus::of(vec![
            short("cache sweep", Shortfall::Budget),
            short("c2c", Shortfall::Other),
        ]);
        assert!(budget.complete);
        assert_eq!(budget.with(Shortfall::Budget).count(), 1);
        for s in [Shortfall::Interrupted, Shortfall::Failed] {
            let r = RunStatus::of(vec![short("cache sweep", Shortfall::Budget), short("x", s)]);
            assert!(!r.complete, "{s:?}");
        }
    }
}
