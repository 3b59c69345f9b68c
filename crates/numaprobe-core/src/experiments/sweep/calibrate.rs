//! Timing the sweep's costs on this machine before it runs, so the total it
//! announces is this machine's and not a constant's: a buffer of a size the
//! sweep uses is mapped and touched by the pinned CPU on the memory node (the
//! buffer rate), and points of the plan's own sizes are set up and sampled
//! under its rule there (the sampling of each; the set-up of the largest,
//! timed three times). It costs about a second: a few points of a sweep of
//! a hundred, and a buffer of at most [`super::CALIBRATION_MAX_BYTES`].

use super::plan::{SweepPlan, SweepRates};
use super::point;
use crate::experiments::ExperimentError;
use crate::placement::{pin_current_thread, BufferSpec, MemPolicy, NodeBuffer};
use crate::timer::Timer;
use std::time::Instant;

const GIB: f64 = (1u64 << 30) as f64;
/// How many set-ups of the largest size are timed (their median is kept).
const SETUPS: usize = 3;

/// Time the plan's first page kind at [`SweepPlan::calibration_sizes`] on
/// its CPU and memory node. An error (the buffer cannot be had, the thread
/// cannot be pinned, an interruption) leaves the caller the fallback rates.
pub fn calibrate(plan: &SweepPlan) -> Result<SweepRates, ExperimentError> {
    let sizes = plan.calibration_sizes();
    if sizes.is_empty() || plan.pages.is_empty() {
        return Ok(SweepRates::fallback());
    }
    crate::experiments::workers::on_a_thread(|| on_this_thread(plan, &sizes))
}

fn on_this_thread(plan: &SweepPlan, sizes: &[u64]) -> Result<SweepRates, ExperimentError> {
    let largest = *sizes.last().unwrap_or(&0);
    // Pinned before the first touch, as the sweep's own thread is.
    pin_current_thread(&[plan.cpu])?;
    let timer = *Timer::get();
    let began = Instant::now();
    let spec = BufferSpec::new(
        largest as usize,
        MemPolicy::Bind(plan.mem_node),
        plan.pages[0],
    );
    let mut buf = NodeBuffer::alloc(&spec)?;
    buf.touch_or_stop()?;
    let buffer_s = began.elapsed().as_secs_f64();
    let interrupted = || -> Result<(), ExperimentError> {
        match crate::cancel::requested() {
            true => Err(crate::placement::PlacementError::Interrupted.into()),
            false => Ok(()),
        }
    };
    let mut sampling = Vec::with_capacity(sizes.len());
    let mut largest_setup_s = 0.0;
    for &size in sizes {
        interrupted()?;
        let p = point::measure(&mut buf, size, plan.seed, &plan.rule, &timer)?;
        sampling.push((size, p.sampling_s));
        largest_setup_s = p.setup_s;
    }
    let mut setups = Vec::with_capacity(SETUPS);
    setups.push(largest_setup_s);
    // The largest point's rate is kept (the points past the caches hold
    // most of a sweep's set-up), as the median of a few: on a shared
    // machine one set-up can lose its CPU for a good part of its time.
    while setups.len() < SETUPS {
        interrupted()?;
        setups.push(point::set_up(&mut buf, largest, plan.seed)?.2);
    }
    setups.sort_by(f64::total_cmp);
    Ok(SweepRates {
        setup_s_per_gib: setups[setups.len() / 2] / (largest as f64 / GIB),
        buffer_s_per_gib: buffer_s / (largest as f64 / GIB),
        sampling,
        measured: true,
    })
}
