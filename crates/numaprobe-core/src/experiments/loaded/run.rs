//! Running a loaded-latency plan: per pair one rig of threads that lives for
//! all its mixes and points, so buffers are allocated, touched and chained
//! once per pair.
//!
//! The chase thread (`chase.rs`; pinned, checked) maps its buffer bound to
//! the memory node, writes a random chain through every 64-byte line (the
//! `latency` kernel and layout), and measures on command. Each load thread
//! (`load.rs`; pinned, checked) maps its own buffer bound to the memory node and, on command,
//! runs the mix kernel over it in chunks of about 64 KiB at the point's
//! delay until told to stop, adding the bytes of every chunk to its own
//! counter.
//!
//! A point: the load threads start (none at idle), the chase discards one
//! sample as warm-up, then samples under the stop rule. A sample is a run
//! of short windows of dependent loads, each timed: the sample's figure,
//! loads over time, drives the stop rule; the point's latency figures
//! (median, p90, p99) are all quantiles of the windows' ns per load, one
//! distribution (see [`window_quantiles`]). The
//! bandwidth is the median over the samples of every thread's bytes over
//! the sample's span: the load counters' growth plus the chase's lines x
//! 64 B (the median, as `bandwidth` takes it). A sample counts only when
//! the chase and every load thread held their CPUs through it
//! (`loads_held.rs`); the others are set aside and counted by reason. The
//! buffers' placement is checked with move_pages after each curve.

use super::chase::chase_thread;
use super::load::load_thread;
use super::rig::{ChaseCmd, Counter, LoadCmd, Reply, Shared};
use super::{LoadedPlan, PairCpus};
use crate::experiments::{ExperimentError, StepProgress};
use crate::kernels::mix::Mix;
use crate::kernels::VectorWidth;
use crate::model::loaded::{Curve, LoadPoint, LoadedResult};
use crate::model::matrix::CellPlacement;
use crate::placement::{BufferSpec, MemPolicy};
use crate::stats::StopRule;
use crate::timer::Timer;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Mutex;
use std::time::Duration;

/// How long the load threads may take to start generating.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// Measure the plan: [`run_with`] without partial results.
pub fn run(
    plan: &LoadedPlan,
    progress: &mut dyn StepProgress,
) -> Result<LoadedResult, ExperimentError> {
    run_with(plan, progress, &mut |_| {})
}

/// Measure the plan; `partial` sees the result after every point (what an
/// `--output` file is rewritten with).
pub fn run_with(
    plan: &LoadedPlan,
    progress: &mut dyn StepProgress,
    partial: &mut dyn FnMut(&LoadedResult),
) -> Result<LoadedResult, ExperimentError> {
    let timer = *Timer::get();
    let mut result = LoadedResult {
        schema: "numaprobe/1".into(),
        curves: Vec::new(),
        timer: timer.info(),
        rule: Some(plan.rule),
        vector: plan.width.name().into(),
        notes: plan.notes.clone(),
        failed: Vec::new(),
        complete: false,
        interrupted: false,
    };
    result.notes.extend(mix_notes(&plan.mixes));
    let total = plan.steps();
    let mut stopped = false;
    let phase = crate::beside::Watch::start();
    for (k, (&(cn, mn), cpus)) in plan.pairs.iter().zip(&plan.cpus).enumerate() {
        if stopped || stop_now(progress, &mut result) {
            stopped = true;
            break;
        }
        let mut ctx = PairRun {
            plan,
            timer: &timer,
            cpu_node: cn,
            mem_node: mn,
            first_step: (0..k).map(|j| plan.pair_steps(j)).sum(),
            total,
            stopped: false,
            phase,
        };
        if let Err(e) = ctx.measure_pair(cpus, progress, &mut result, partial) {
            result
                .failed
                .push(format!("CPU node {cn} -> memory node {mn}: {e}"));
            // The pair's steps are over: the progress moves past them.
            let last = (0..=k).map(|j| plan.pair_steps(j)).sum::<usize>();
            progress.step_finished(last.saturating_sub(1), total);
        }
        stopped |= ctx.stopped;
    }
    crate::analysis::loaded::finish(&mut result);
    settle(&mut result, stopped, crate::cancel::requested());
    Ok(result)
}

/// The run's end: interrupted when a stop was asked for at any time (`cancel`
/// read at the end too: a request during the last point), complete only
/// when nothing stopped it, nothing interrupted it and no pair failed.
fn settle(result: &mut LoadedResult, stopped: bool, cancel: bool) {
    result.interrupted |= cancel;
    result.complete = !stopped && !result.interrupted && result.failed.is_empty();
}

/// A point's load threads: all of the pair's at a loaded point, none at
/// idle; and whether their hold on their CPUs is judged (only when some
/// run through the point: at idle they wait, off their CPUs by design).
fn point_loads(delay: Option<u32>, pair_loads: usize) -> (usize, bool) {
    let n = if delay.is_some() { pair_loads } else { 0 };
    (n, n > 0)
}

/// Checked between points: a cancel (interrupted) or a spent budget ends
/// the run with what it has.
fn stop_now(progress: &dyn StepProgress, result: &mut LoadedResult) -> bool {
    if crate::cancel::requested() {
        result.interrupted = true;
        return true;
    }
    progress.out_of_time()
}

/// Write-allocate: the bytes counted are the bytes asked for.
fn mix_notes(mixes: &[String]) -> Option<String> {
    mixes
        .iter()
        .filter_map(|m| Mix::parse(m))
        .any(|m| matches!(m, Mix::ReadWrite { .. }))
        .then(|| {
            "R:W mixes use ordinary stores: each stored line is also read from memory first \
             (write-allocate), which the bandwidth column does not count; nt-write avoids it"
                .to_string()
        })
}

struct PairRun<'a> {
    plan: &'a LoadedPlan,
    timer: &'a Timer,
    cpu_node: u32,
    mem_node: u32,
    first_step: usize,
    total: usize,
    stopped: bool,
    /// The run's watch, for a point too short for its own.
    phase: Option<crate::beside::Watch>,
}

impl PairRun<'_> {
    fn measure_pair(
        &mut self,
        cpus: &PairCpus,
        progress: &mut dyn StepProgress,
        result: &mut LoadedResult,
        partial: &mut dyn FnMut(&LoadedResult),
    ) -> Result<(), String> {
        let n = cpus.load.len();
        let shared = Shared {
            running: AtomicBool::new(false),
            active: AtomicUsize::new(0),
            bytes: (0..n).map(|_| Counter::default()).collect(),
            ids: Mutex::new(vec![None; n]),
        };
        let spec = BufferSpec::new(
            self.plan.size as usize,
            MemPolicy::Bind(self.mem_node),
            self.plan.pages,
        );
        std::thread::scope(|s| {
            let (chase_tx, chase_rx) = channel::<ChaseCmd>();
            let (chase_reply_tx, chase_reply) = channel::<Reply>();
            {
                let (spec, shared, timer) = (&spec, &shared, self.timer);
                let cpu = cpus.chase;
                s.spawn(move || chase_thread(cpu, spec, timer, shared, chase_rx, chase_reply_tx));
            }
            let mut loads: Vec<(Sender<LoadCmd>, Receiver<Reply>)> = Vec::new();
            for (i, &cpu) in cpus.load.iter().enumerate() {
                let (tx, rx) = channel::<LoadCmd>();
                let (rtx, rrx) = channel::<Reply>();
                let (spec, shared) = (&spec, &shared);
                s.spawn(move || load_thread(i, cpu, spec, shared, rx, rtx));
                loads.push((tx, rrx));
            }
            let rig = Rig {
                chase: (chase_tx, chase_reply),
                loads,
                shared: &shared,
                width: self.plan.width,
            };
            let outcome = self.drive(&rig, progress, result, partial);
            rig.quit();
            outcome
        })
    }

    /// Every mix and point on a ready rig.
    fn drive(
        &mut self,
        rig: &Rig,
        progress: &mut dyn StepProgress,
        result: &mut LoadedResult,
        partial: &mut dyn FnMut(&LoadedResult),
    ) -> Result<(), String> {
        let chase_cpu = match recv(&rig.chase.1)? {
            Reply::Ready(r) => r?,
            _ => return Err("the chase thread answered out of turn".into()),
        };
        let mut load_cpus = Vec::new();
        for (_, rx) in &rig.loads {
            match recv(rx)? {
                Reply::Ready(r) => load_cpus.push(r?),
                _ => return Err("a load thread answered out of turn".into()),
            }
        }
        let points = if rig.loads.is_empty() {
            1
        } else {
            self.plan.delays.len() + 1
        };
        for (mi, name) in self.plan.mixes.iter().enumerate() {
            let mix = Mix::parse(name).ok_or_else(|| format!("mix '{name}' does not parse"))?;
            result.curves.push(Curve {
                cpu_node: self.cpu_node,
                mem_node: self.mem_node,
                mix: mix.name(),
                chase_cpu,
                load_cpus: load_cpus.clone(),
                points: Vec::new(),
                knee: None,
                peak_gbs: 0.0,
                placement: 0.0,
                size_bytes: self.plan.size,
                pages: self.plan.pages.name().into(),
            });
            for pi in 0..points {
                let step = self.first_step + mi * points + pi;
                if stop_now(progress, result) {
                    self.stopped = true;
                    break;
                }
                let delay = (pi > 0).then(|| self.plan.delays[pi - 1]);
                progress.step_started(step, self.total, &self.label(&mix, delay));
                let rule = progress.rule_for_step(step, self.plan.rule);
                let point = rig.point(mix, delay, rule, self.phase)?;
                let curve = result.curves.last_mut().expect("pushed above");
                curve.points.push(point);
                crate::analysis::loaded::finish_curve(curve);
                partial(result);
                progress.step_finished(step, self.total);
            }
            let placement = rig.verify(self.mem_node)?;
            if let Some(c) = result.curves.last_mut() {
                c.placement = placement;
            }
            partial(result);
            if self.stopped {
                break;
            }
        }
        Ok(())
    }

    fn label(&self, mix: &Mix, delay: Option<u32>) -> String {
        let what = match delay {
            None => "idle".to_string(),
            Some(d) => format!("{} delay {d}", mix.name()),
        };
        format!(
            "node {} -> memory node {}, {what}",
            self.cpu_node, self.mem_node
        )
    }
}

fn recv(rx: &Receiver<Reply>) -> Result<Reply, String> {
    rx.recv()
        .map_err(|_| "a measuring thread stopped (panicked)".to_string())
}

/// The coordinator's handles on one pair's threads.
struct Rig<'a> {
    chase: (Sender<ChaseCmd>, Receiver<Reply>),
    loads: Vec<(Sender<LoadCmd>, Receiver<Reply>)>,
    shared: &'a Shared,
    width: VectorWidth,
}

impl Rig<'_> {
    /// One point: load threads on (unless idle), the chase measures, load
    /// threads off and every one back before the next point.
    fn point(
        &self,
        mix: Mix,
        delay: Option<u32>,
        rule: StopRule,
        phase: Option<crate::beside::Watch>,
    ) -> Result<LoadPoint, String> {
        let (load_threads, judged) = point_loads(delay, self.loads.len());
        if let Some(delay) = delay {
            self.shared.running.store(true, Ordering::SeqCst);
            for (tx, _) in &self.loads {
                tx.send(LoadCmd::Run {
                    mix,
                    delay,
                    width: self.width,
                })
                .map_err(|_| "a load thread stopped".to_string())?;
            }
            // Every load thread generating before the chase starts (a thread
            // that died never arrives: give up rather than wait forever).
            let began = std::time::Instant::now();
            while self.shared.active.load(Ordering::SeqCst) < load_threads {
                if began.elapsed() > START_TIMEOUT {
                    self.shared.running.store(false, Ordering::SeqCst);
                    return Err(format!(
                        "the load threads did not all start within {} s",
                        START_TIMEOUT.as_secs()
                    ));
                }
                std::thread::sleep(Duration::from_micros(100));
            }
        }
        let beside = crate::beside::Watch::start();
        let sent = self.chase.0.send(ChaseCmd::Measure(rule, judged));
        let measured = match sent {
            Ok(()) => recv(&self.chase.1),
            Err(_) => Err("the chase thread stopped".into()),
        };
        self.shared.running.store(false, Ordering::SeqCst);
        if delay.is_some() {
            for (_, rx) in &self.loads {
                match recv(rx)? {
                    Reply::Ran => {}
                    _ => return Err("a load thread answered out of turn".into()),
                }
            }
        }
        let p = match measured? {
            Reply::Point(p) => (*p)?,
            _ => return Err("the chase thread answered out of turn".into()),
        };
        let mut flags = p.measured.flags("ns");
        let others_busy_cpus = crate::beside::mark_step(&mut flags, beside, phase);
        let [median, p90, p99] = window_quantiles(&p.windows);
        Ok(LoadPoint {
            delay,
            bandwidth_gbs: p.bandwidth_gbs,
            latency_ns: median,
            p90_ns: p90,
            p99_ns: p99,
            load_threads: load_threads as u32,
            windows: p.windows.len(),
            stop: Some(p.measured.stop),
            set_aside: p.measured.set_aside,
            others_busy_cpus,
            flags,
        })
    }

    /// The fraction of every buffer's pages on `mem_node`, now.
    fn verify(&self, mem_node: u32) -> Result<f64, String> {
        let mut checks = Vec::new();
        self.chase
            .0
            .send(ChaseCmd::Verify)
            .map_err(|_| "the chase thread stopped".to_string())?;
        for (tx, _) in &self.loads {
            tx.send(LoadCmd::Verify)
                .map_err(|_| "a load thread stopped".to_string())?;
        }
        for rx in std::iter::once(&self.chase.1).chain(self.loads.iter().map(|l| &l.1)) {
            match recv(rx)? {
                Reply::Checked(c) => checks.push(c.map_err(|e| format!("node {mem_node}: {e}"))?),
                _ => return Err("a thread answered out of turn".into()),
            }
        }
        Ok(CellPlacement::combine(&checks).fraction_on_intended)
    }

    fn quit(&self) {
        self.shared.running.store(false, Ordering::SeqCst);
        let _ = self.chase.0.send(ChaseCmd::Quit);
        for (tx, _) in &self.loads {
            let _ = tx.send(LoadCmd::Quit);
        }
    }
}

/// A point's median, p90 and p99 latency, all of the windows' ns per load.
///
/// Not the median of the samples beside the windows' p90: a sample's
/// figure is the mean of its windows, and one window stretched by a
/// descheduling (milliseconds against 20 µs) lifts its whole sample; on a
/// busy machine most samples hold one such window, so the samples' median
/// lies above the windows' p90 and a table read "median 540 ns, p90
/// 170 ns". Quantiles of one distribution are ordered by construction.
pub(crate) fn window_quantiles(windows: &[f64]) -> [f64; 3] {
    [0.5, 0.9, 0.99].map(|q| percentile(windows, q))
}

/// The `q` quantile of `v` (nearest rank); NaN for none.
pub(crate) fn percentile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let rank = ((q * s.len() as f64).ceil() as usize).clamp(1, s.len());
    s[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(interrupted: bool, failed: &[&str]) -> LoadedResult {
        LoadedResult {
            schema: "numaprobe/1".into(),
            curves: Vec::new(),
            timer: Timer::get().info(),
            rule: None,
            vector: "scalar".into(),
            notes: Vec::new(),
            failed: failed.iter().map(|f| f.to_string()).collect(),
            complete: false,
            interrupted,
        }
    }

    #[test]
    fn a_run_is_complete_only_when_nothing_stopped_interrupted_or_failed_it() {
        let settled = |interrupted, failed: &[&str], stopped, cancel| {
            let mut r = result(interrupted, failed);
            settle(&mut r, stopped, cancel);
            (r.complete, r.interrupted)
        };
        assert_eq!(settled(false, &[], false, false), (true, false));
        // Out of time: stopped, not interrupted.
        assert_eq!(settled(false, &[], true, false), (false, false));
        // A stop asked for during the last point, after the last check.
        assert_eq!(settled(false, &[], false, true), (false, true));
        // One asked for between points stays said.
        assert_eq!(settled(true, &[], true, false), (false, true));
        assert_eq!(
            settled(false, &["CPU node 0 -> memory node 1: x"], false, false),
            (false, false)
        );
    }

    #[test]
    fn load_threads_run_and_are_judged_at_a_loaded_point_only() {
        assert_eq!(point_loads(None, 3), (0, false));
        assert_eq!(point_loads(Some(64), 3), (3, true));
        // Delay 0 is the heaviest load, not idle.
        assert_eq!(point_loads(Some(0), 1), (1, true));
        // A pair without a CPU to spare for a load thread: nothing to judge.
        assert_eq!(point_loads(Some(64), 0), (0, false));
    }

    #[test]
    fn a_mix_with_ordinary_stores_says_they_are_read_first() {
        let mixes = |m: &[&str]| mix_notes(&m.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let note = mixes(&["read", "2:1"]).expect("2:1 stores");
        assert!(
            note.contains("write-allocate") && note.contains("nt-write"),
            "{note}"
        );
        assert_eq!(mixes(&["read", "nt-write", "4:0"]), None);
        assert_eq!(mixes(&[]), None);
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.5), 50.0);
        assert_eq!(percentile(&v, 0.9), 90.0);
        assert_eq!(percentile(&v, 0.99), 99.0);
        assert_eq!(percentile(&[7.0], 0.99), 7.0);
        assert!(percentile(&[], 0.5).is_nan());
    }

    /// The case a busy machine makes: 20 samples of 100 windows at 150 ns
    /// per load, each sample with one window stretched to 150 µs by a
    /// descheduling. The samples' means (about 1.65 µs) have a median far
    /// above the windows' p90; the point's figures are the windows' own.
    #[test]
    fn the_median_is_of_the_windows_the_tail_is_taken_from() {
        let mut windows = Vec::new();
        let mut sample_means = Vec::new();
        for _ in 0..20 {
            let mut w = vec![150.0; 100];
            w[37] = 150_000.0;
            sample_means.push(w.iter().sum::<f64>() / w.len() as f64);
            windows.extend(w);
        }
        let [median, p90, p99] = window_quantiles(&windows);
        assert!(percentile(&sample_means, 0.5) > 10.0 * p90);
        assert_eq!((median, p90, p99), (150.0, 150.0, 150.0));
        // And the tail is still seen where the windows have one.
        let mut tail: Vec<f64> = (1..=1000).map(f64::from).collect();
        tail[999] = 1e6;
        let [m, p90, p99] = window_quantiles(&tail);
        assert!(m <= p90 && p90 <= p99, "{m} {p90} {p99}");
        assert_eq!((m, p90, p99), (500.0, 900.0, 990.0));
    }
}
