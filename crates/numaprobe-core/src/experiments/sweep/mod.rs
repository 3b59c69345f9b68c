//! The cache-size sweep (`numaprobe latency --sweep`): latency against
//! working-set size, from one CPU to one memory node, with the random chase
//! of the latency matrix (every 64-byte line of the working set once, in an
//! order no prefetcher can guess), per page kind so TLB misses show apart
//! from cache misses.
//!
//! Sizes are geometric (`points_per_octave` per doubling). Per page kind one
//! buffer of the largest size is bound to the memory node, touched by the
//! pinned chase thread, and each point builds its chain over the first
//! `size` bytes of it: one allocation per page kind instead of one per point,
//! and the placement (move_pages) is checked once over the whole buffer
//! after its points. The calling thread drives the steps (progress,
//! cancellation, the caller's time) and a pinned worker thread measures:
//! a step is started only when the caller says so, so an interruption or a
//! spent budget stops between points and the result keeps every point
//! measured so far (`complete: false`). The plan (range, sizes, CPU, caches,
//! the planned cost of each step) is in `plan.rs`, one point's measurement in
//! `point.rs`, and the timing of the costs before the run in `calibrate.rs`.

mod calibrate;
mod plan;
mod point;

pub use calibrate::calibrate;
pub use plan::{
    caches_of, default_max, default_rule, default_to, parse_range, plan, sizes, SweepConfig,
    SweepPlan, SweepRates, BUFFER_S_PER_GIB, CALIBRATION_MAX_BYTES, DEFAULT_CACHE_FACTOR,
    DEFAULT_FROM, DEFAULT_POINTS_PER_OCTAVE, DEFAULT_TO, DEFAULT_TO_FLOOR, MAX_POINTS,
    POINT_SETUP_S_PER_GIB,
};

use super::{ExperimentError, StepProgress};
use crate::model::sweep::{SweepPlacement, SweepPoint, SweepResult};
use crate::placement::{
    pin_current_thread, BufferSpec, MemPolicy, NodeBuffer, PageKind, PlacementCheck,
};
use crate::stats::{Measured, StopRule};
use crate::timer::Timer;
use crate::units::format_size;
use plan::LINE;
use std::sync::mpsc;

/// What the worker thread tells the driving thread.
enum Msg {
    /// Pinned (to this CPU), buffer mapped and touched; or why not.
    Ready(Result<u32, String>),
    Point(Result<Measured, String>),
    Placement(Result<PlacementCheck, String>),
}

/// Measure the plan without saving partial results.
pub fn run(
    plan: &SweepPlan,
    progress: &mut dyn StepProgress,
) -> Result<SweepResult, ExperimentError> {
    run_with(plan, progress, &mut |_| {})
}

/// Measure every (page kind, size) in order; `partial` sees the result after
/// every point (for the caller to rewrite its output file).
pub fn run_with(
    plan: &SweepPlan,
    progress: &mut dyn StepProgress,
    partial: &mut dyn FnMut(&SweepResult),
) -> Result<SweepResult, ExperimentError> {
    let timer = *Timer::get();
    let mut result = SweepResult {
        schema: crate::SCHEMA.into(),
        command: "latency-sweep".into(),
        cpu_node: plan.cpu_node,
        cpu: plan.cpu,
        mem_node: plan.mem_node,
        pages: plan.pages.clone(),
        sizes: plan.sizes.clone(),
        points_per_octave: plan.points_per_octave,
        stride_bytes: LINE,
        pattern: "random".into(),
        rule: plan.rule,
        timer: timer.info(),
        caches: plan.caches.clone(),
        points: Vec::new(),
        placement: Vec::new(),
        analysis: None,
        notes: plan.notes.clone(),
        failed: Vec::new(),
        complete: false,
        interrupted: false,
    };
    let total = plan.steps();
    let mut index = 0;
    let mut stopped = false;
    for &kind in &plan.pages {
        if stopped {
            break;
        }
        stopped = run_kind(
            plan,
            kind,
            &timer,
            progress,
            partial,
            &mut result,
            &mut index,
            total,
        );
    }
    result.interrupted |= crate::cancel::requested();
    result.complete = !stopped && !result.interrupted && result.failed.is_empty();
    Ok(result)
}

/// One page kind's points. Returns true when the run must stop (cancel or
/// out of time).
#[allow(clippy::too_many_arguments)]
fn run_kind(
    plan: &SweepPlan,
    kind: PageKind,
    timer: &Timer,
    progress: &mut dyn StepProgress,
    partial: &mut dyn FnMut(&SweepResult),
    result: &mut SweepResult,
    index: &mut usize,
    total: usize,
) -> bool {
    let largest = *plan.sizes.last().unwrap_or(&0) as usize;
    let phase = crate::beside::Watch::start();
    std::thread::scope(|s| {
        let (go_tx, go_rx) = mpsc::channel::<(u64, StopRule)>();
        let (msg_tx, msg_rx) = mpsc::channel::<Msg>();
        let (cpu, node, seed) = (plan.cpu, plan.mem_node, plan.seed);
        let worker = s.spawn(move || worker(cpu, node, kind, largest, seed, timer, go_rx, msg_tx));
        let mut stop = false;
        match msg_rx.recv() {
            Ok(Msg::Ready(Ok(observed))) => result.cpu = observed,
            Ok(Msg::Ready(Err(e))) => {
                result.failed.push(format!("{} pages: {e}", kind.name()));
                *index += plan.sizes.len();
                drop(go_tx);
                let _ = worker.join();
                partial(result);
                return false;
            }
            _ => {
                result.failed.push(format!(
                    "{} pages: the measuring thread ended early",
                    kind.name()
                ));
                drop(go_tx);
                let _ = worker.join();
                return false;
            }
        }
        for &size in &plan.sizes {
            if crate::cancel::requested() {
                result.interrupted = true;
                stop = true;
                break;
            }
            if progress.out_of_time() {
                result
                    .notes
                    .push("stopped early: the time given to the sweep was spent".into());
                stop = true;
                break;
            }
            progress.step_started(
                *index,
                total,
                &format!(
                    "{} working set, {} pages, CPU {} -> node {}",
                    format_size(size),
                    kind.name(),
                    plan.cpu,
                    plan.mem_node
                ),
            );
            let rule = progress.rule_for_step(*index, plan.rule);
            let watch = crate::beside::Watch::start();
            if go_tx.send((size, rule)).is_err() {
                break;
            }
            match msg_rx.recv() {
                Ok(Msg::Point(Ok(m))) => {
                    let mut flags = m.flags("ns");
                    // Within the core's own caches other cores' traffic
                    // does not reach the chase; time they took from its
                    // CPU is set aside already.
                    if size > plan.private_bytes {
                        crate::beside::mark_step(&mut flags, watch, phase);
                    }
                    result.points.push(SweepPoint {
                        flagged: !flags.is_empty(),
                        size_bytes: size,
                        pages: kind,
                        ns: m.summary.median,
                        min_ns: m.summary.min,
                        max_ns: m.summary.max,
                        cv: m.summary.cv,
                        samples: m.samples.len(),
                        stop: m.stop,
                        flags,
                        set_aside: m.set_aside,
                    })
                }
                Ok(Msg::Point(Err(e))) => result.failed.push(format!(
                    "{} with {} pages: {e}",
                    format_size(size),
                    kind.name()
                )),
                _ => {
                    result.failed.push(format!(
                        "{} pages: the measuring thread ended early",
                        kind.name()
                    ));
                    break;
                }
            }
            progress.step_finished(*index, total);
            *index += 1;
            partial(result);
        }
        // No more steps: the worker checks placement and ends.
        drop(go_tx);
        for msg in msg_rx.iter() {
            if let Msg::Placement(p) = msg {
                match p {
                    Ok(c) => result.placement.push(SweepPlacement {
                        pages: kind,
                        fraction_on_node: c.fraction_on_intended,
                        thp_fraction: c.thp_fraction,
                    }),
                    Err(e) => result
                        .failed
                        .push(format!("{} pages: placement check: {e}", kind.name())),
                }
            }
        }
        if worker.join().is_err() {
            result.failed.push(format!(
                "{} pages: the measuring thread panicked",
                kind.name()
            ));
        }
        partial(result);
        stop
    })
}

/// The pinned thread of one page kind: map and touch the buffer, then
/// measure each size it is sent until the channel closes, then say where the
/// pages are.
#[allow(clippy::too_many_arguments)]
fn worker(
    cpu: u32,
    node: u32,
    kind: PageKind,
    largest: usize,
    seed: u64,
    timer: &Timer,
    go: mpsc::Receiver<(u64, StopRule)>,
    tell: mpsc::Sender<Msg>,
) {
    // Pinned before the first touch: page tables and pages are made from here.
    let ready = pin_current_thread(&[cpu])
        .map_err(|e| e.to_string())
        .and_then(|observed| {
            let spec = BufferSpec::new(largest, MemPolicy::Bind(node), kind);
            let mut buf = NodeBuffer::alloc(&spec).map_err(|e| e.to_string())?;
            buf.touch();
            Ok((observed, buf))
        });
    let mut buf = match ready {
        Ok((observed, buf)) => {
            let _ = tell.send(Msg::Ready(Ok(observed)));
            buf
        }
        Err(e) => {
            let _ = tell.send(Msg::Ready(Err(e)));
            return;
        }
    };
    for (size, rule) in go.iter() {
        let m = point::measure(&mut buf, size, seed, &rule, timer)
            .map(|p| p.measured)
            .map_err(|e| e.to_string());
        if tell.send(Msg::Point(m)).is_err() {
            return;
        }
    }
    // Checked after the points: this is where the pages were while they ran.
    let _ = tell.send(Msg::Placement(buf.verify().map_err(|e| e.to_string())));
}

#[cfg(test)]
mod tests {
    use super::plan::tests::tiny;
    use super::*;
    use crate::experiments::testing;

    #[test]
    fn a_tiny_sweep_measures_every_point_on_its_cpu_and_node() {
        let topo = testing::live_topology();
        let plan = plan(&topo, &tiny()).unwrap();
        assert_eq!(plan.sizes.len(), 7);
        let mut seen = 0;
        let r = run_with(&plan, &mut crate::experiments::NoProgress, &mut |p| {
            seen = p.points.len()
        })
        .unwrap();
        assert!(r.complete, "{:?}", r.failed);
        assert_eq!(seen, 7);
        assert_eq!(r.points.len(), 7);
        assert_eq!(r.cpu, plan.cpu);
        let curve = r.curve(PageKind::Small);
        assert_eq!(
            curve.iter().map(|p| p.size_bytes).collect::<Vec<_>>(),
            plan.sizes
        );
        // On a busy machine samples that lost the CPU are set aside: a point
        // resting on fewer than three that held is flagged.
        assert!(
            curve
                .iter()
                .all(|p| p.ns > 0.0 && (p.samples >= 3 || p.flagged)),
            "{curve:?}"
        );
        assert_eq!(r.placement.len(), 1);
        assert_eq!(r.placement[0].fraction_on_node, 1.0);
    }

    #[test]
    fn the_calibration_times_the_plans_own_sizes_on_this_machine() {
        let topo = testing::live_topology();
        let plan = plan(&topo, &tiny()).unwrap();
        let r = calibrate(&plan).unwrap();
        assert!(r.measured);
        let sizes: Vec<u64> = r.sampling.iter().map(|p| p.0).collect();
        assert_eq!(sizes, plan.calibration_sizes());
        // Every point sampled at least its minimum, no rate is negative.
        assert!(r.sampling.iter().all(|p| p.1 > 0.0), "{r:?}");
        assert!(r.setup_s_per_gib > 0.0 && r.buffer_s_per_gib > 0.0, "{r:?}");
        let c = plan.step_costs_at(&r);
        assert_eq!(c.len(), plan.steps());
    }

    #[test]
    fn a_sweep_sharing_its_cpu_with_a_busy_thread_sets_its_lost_samples_aside() {
        // As the latency cell's test: a rival on the sweep's CPU, a zero
        // budget (three samples a point, held or not, of 5 ms each).
        let topo = testing::live_topology();
        let mut cfg = tiny();
        cfg.rule = Some(StopRule {
            budget: std::time::Duration::ZERO,
            ..StopRule::default()
        });
        let plan = plan(&topo, &cfg).unwrap();
        let test = "a_sweep_sharing_its_cpu_with_a_busy_thread_sets_its_lost_samples_aside";
        let Some(_rival) = crate::experiments::rival::rival_or_skip(plan.cpu, test) else {
            return;
        };
        let mut preempted = 0;
        for _ in 0..20 {
            let r = run(&plan, &mut crate::experiments::NoProgress).unwrap();
            assert_eq!(r.points.len(), plan.sizes.len(), "{:?}", r.failed);
            for p in &r.points {
                assert_eq!(
                    crate::experiments::rival::taken(p.samples, &p.set_aside),
                    crate::stats::BUDGET_MIN_SAMPLES,
                    "{p:?}"
                );
                preempted += p.set_aside.preempted;
            }
            if preempted > 0 {
                break;
            }
        }
        assert!(preempted > 0, "no sweep sample was set aside as preempted");
    }
}
