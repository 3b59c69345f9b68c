//! One point of the sweep on the pinned thread's buffer: the random chain
//! over the point's working set, the lap that settles it, and the samples
//! (the latency matrix's sampling, `latency::sample_chain`). The set-up and
//! the sampling are timed apart: the pre-run calibration plans the rest of
//! the sweep from them.

use super::plan::LINE;
use crate::experiments::ExperimentError;
use crate::kernels::chase::{self, ChasePattern};
use crate::placement::NodeBuffer;
use crate::stats::{Measured, StopRule};
use crate::timer::Timer;
use std::time::Instant;

/// A measured point and where its time went.
pub(super) struct Point {
    pub measured: Measured,
    /// The chain and its settling lap, seconds.
    pub setup_s: f64,
    /// The probe and the samples, seconds.
    pub sampling_s: f64,
}

/// A random chain over the first `size` bytes of `buf`, one lap, then
/// samples under `rule` (as a latency cell does).
pub(super) fn measure(
    buf: &mut NodeBuffer,
    size: u64,
    seed: u64,
    rule: &StopRule,
    timer: &Timer,
) -> Result<Point, ExperimentError> {
    let (p, lines, setup_s) = set_up(buf, size, seed)?;
    let settled = Instant::now();
    // SAFETY: p is on the chain just built in `buf`, which outlives this.
    let (measured, end) =
        unsafe { crate::experiments::latency::sample_chain(p, lines, rule, timer) }?;
    std::hint::black_box(end);
    Ok(Point {
        measured,
        setup_s,
        sampling_s: settled.elapsed().as_secs_f64(),
    })
}

/// The chain over the first `size` bytes of `buf` and its settling lap:
/// where the lap stopped, the chain's lines, and the seconds it took.
pub(super) fn set_up(
    buf: &mut NodeBuffer,
    size: u64,
    seed: u64,
) -> Result<(*const usize, usize, f64), ExperimentError> {
    let len = (size as usize).min(buf.len());
    let began = Instant::now();
    // SAFETY: the buffer is ours, page-aligned, and outlives the chase.
    let setup = unsafe {
        chase::build(
            buf.as_mut_ptr(),
            len,
            LINE as usize,
            ChasePattern::Random { window_pages: None },
            seed,
        )
    }?;
    // One lap first: the lines are where the previous point left them; the
    // warm-up of the rule then samples a settled cache.
    // SAFETY: the start is on the chain just built.
    let p = unsafe { chase::run(setup.start, setup.lines as u64) };
    Ok((p, setup.lines, began.elapsed().as_secs_f64()))
}
