//! Sampling a pointer chain under a stop rule, the way every chase figure
//! is made: a short probe times one step, each sample then chases enough
//! steps to last about a twentieth of the budget (`target_sample_ns`), and
//! samples are taken until the rule stops them. A sample during which the
//! thread lost its CPU is set aside, and samples shorten when that happens
//! often ([`stats::repeat_held`]). After the thread was switched out, the
//! chase runs untimed for a while first ([`held::rewarm`]): what the other
//! task evicted is refilled before the next sample is timed. The latency
//! matrix's cells and the
//! sweep's points share it, so their figures mean the same thing.

use crate::experiments::{target_sample_ns, ExperimentError};
use crate::held::{self, Comeback, Probe};
use crate::kernels::chase;
use crate::stats::{self, Measured, StopRule, Taken};
use crate::timer::Timer;

/// Probe the chain from `at` (of `lines` lines), then sample it under
/// `rule`; returns the samples and where the walk stopped, for the next
/// walk on the same chain to go on from there.
///
/// # Safety
/// `at` is on a chain written by [`chase::build`] into memory that outlives
/// the call.
pub(crate) unsafe fn sample_chain(
    at: *const usize,
    lines: usize,
    rule: &StopRule,
    timer: &Timer,
) -> Result<(Measured, *const usize), ExperimentError> {
    let mut p = at;
    let probe = (lines as u64).clamp(1 << 10, 1 << 14);
    let a = timer.now();
    // SAFETY: p is on the chain (the caller's promise).
    p = unsafe { chase::run(p, probe) };
    let b = timer.now();
    let per_step = (timer.elapsed_ns(a, b) / probe as f64).max(0.1);
    let steps = (target_sample_ns(rule.budget) / per_step).clamp(1024.0, 1e9) as u64;
    let warm = ((held::REWARM_NS / per_step) as u64).clamp(1024, steps);
    let mut comeback = Comeback::new();
    let measured = stats::repeat_held(rule, |shorten| {
        // Back on the CPU after another task ran: refill what it evicted
        // before timing, or the first samples read slow for it.
        held::rewarm(
            || comeback.switched_out(),
            // SAFETY: p stays on the chain.
            || p = unsafe { chase::run(p, warm) },
        );
        // A shortened sample still chases far more steps than a cache holds
        // lines of the probe (1024 at the least): it stays a memory figure.
        let steps = (steps / shorten as u64).max(1024);
        let held = Probe::start();
        let a = timer.now();
        // SAFETY: p stays on the chain.
        p = unsafe { chase::run(p, steps) };
        let b = timer.now();
        Ok::<_, ExperimentError>(Taken {
            value: timer.elapsed_ns(a, b) / steps as f64,
            lost: held.lost(),
        })
    })?;
    Ok((measured, std::hint::black_box(p)))
}
