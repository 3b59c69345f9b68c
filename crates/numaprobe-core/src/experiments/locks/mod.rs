//! Lock and atomic contention (AMD 40555 §3.5): threads on chosen CPUs update a shared
//! counter by atomic add and under a spin lock, or their own counters on one
//! line or on their own lines. `plan.rs` decides which CPUs and thread
//! counts each placement takes, `run.rs` runs them.

mod plan;
mod run;

pub use plan::*;

use crate::experiments::{ExperimentError, StepProgress};
use crate::model::locks::LocksResult;

pub fn run(
    plan: &LocksPlan,
    progress: &mut dyn StepProgress,
) -> Result<LocksResult, ExperimentError> {
    run::run(plan, progress, &mut |_| {})
}

/// [`run`], handing the result so far to `partial` after every run (the
/// command rewrites `--output` with it, so a killed run keeps its runs).
pub fn run_with(
    plan: &LocksPlan,
    progress: &mut dyn StepProgress,
    partial: &mut dyn FnMut(&LocksResult),
) -> Result<LocksResult, ExperimentError> {
    run::run(plan, progress, partial)
}

#[cfg(test)]
mod tests;
