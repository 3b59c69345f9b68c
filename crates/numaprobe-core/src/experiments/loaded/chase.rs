//! The chase thread of a loaded-latency pair: pinned (checked), its buffer
//! bound to the memory node and chained at random through every 64-byte
//! line (the `latency` kernel and layout), then on command one point's
//! samples (`chase_point`), the placement check, or the end. `run.rs`
//! drives it.

use super::loads_held::Loads;
use super::rig::{setup, ChaseCmd, ChasePoint, Reply, Shared};
use crate::experiments::target_sample_ns;
use crate::held::Probe;
use crate::kernels::chase::{self, ChasePattern};
use crate::kernels::mix::LINE;
use crate::placement::BufferSpec;
use crate::stats::{self, StopReason, StopRule, Taken};
use crate::timer::Timer;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, Sender};

/// Seed of the chase chain: `latency`'s, so the idle point walks the same
/// order `numaprobe latency` does at the same size.
const SEED: u64 = crate::experiments::latency::DEFAULT_SEED;

/// Target length of one timed window of the chase: short enough that the
/// windows show the tail a burst of load causes, long enough (hundreds of
/// loads) that the timer's cost is lost in it.
const WINDOW_NS: f64 = 20_000.0;

pub(super) fn chase_thread(
    cpu: u32,
    spec: &BufferSpec,
    timer: &Timer,
    shared: &Shared,
    rx: Receiver<ChaseCmd>,
    tx: Sender<Reply>,
) {
    let ready = setup(cpu, spec).and_then(|(observed, mut buf)| {
        // SAFETY: the buffer is ours, page-aligned, and outlives the chase.
        let chain = unsafe {
            chase::build(
                buf.as_mut_ptr(),
                buf.len().min(spec.len),
                LINE,
                ChasePattern::Random { window_pages: None },
                SEED,
            )
        }
        .map_err(|e| e.to_string())?;
        Ok((observed, buf, chain))
    });
    let (observed, buf, chain) = match ready {
        Ok(x) => x,
        Err(e) => {
            let _ = tx.send(Reply::Ready(Err(e)));
            return;
        }
    };
    let _ = tx.send(Reply::Ready(Ok(observed)));
    let mut p = chain.start;
    while let Ok(cmd) = rx.recv() {
        let reply = match cmd {
            ChaseCmd::Measure(rule, loaded) => {
                let r = chase_point(&mut p, chain.lines, &rule, timer, shared, loaded);
                Reply::Point(Box::new(r))
            }
            ChaseCmd::Verify => Reply::Checked(buf.verify().map_err(|e| e.to_string())),
            ChaseCmd::Quit => break,
        };
        if tx.send(reply).is_err() {
            break;
        }
    }
}

/// The chase's side of a point; `p` walks on from point to point.
fn chase_point(
    p: &mut *const usize,
    lines: usize,
    rule: &StopRule,
    timer: &Timer,
    shared: &Shared,
    loaded: bool,
) -> Result<ChasePoint, String> {
    // Probe: how long is one load now, to size windows and samples.
    let probe = (lines as u64).clamp(1 << 10, 1 << 14);
    let a = timer.now();
    // SAFETY: p stays on the chain built by the chase thread.
    *p = unsafe { chase::run(*p, probe) };
    let per_load = (timer.elapsed_ns(a, timer.now()) / probe as f64).max(0.1);
    let window = (WINDOW_NS / per_load).clamp(64.0, 4096.0) as u64;
    let windows_per_sample =
        ((target_sample_ns(rule.budget) / (per_load * window as f64)) as usize).max(1);
    let mut windows: Vec<f64> = Vec::new();
    let mut loads = 0u64;
    // Samples shorten (fewer windows) when many are set aside, as
    // `repeat_held` asks; the warm-up is full length.
    let shorten = std::cell::Cell::new(1u32);
    let mut sample = |keep: bool, windows: &mut Vec<f64>, loads: &mut u64| -> f64 {
        let (mut ns, mut n) = (0.0, 0u64);
        for _ in 0..windows_per_sample.div_ceil(shorten.get() as usize) {
            let a = timer.now();
            // SAFETY: as above.
            *p = unsafe { chase::run(*p, window) };
            let w = timer.elapsed_ns(a, timer.now());
            ns += w;
            n += window;
            if keep {
                windows.push(w / window as f64);
            }
        }
        if keep {
            *loads += n;
        }
        ns / n as f64
    };
    // Warm-up, discarded: the load threads' traffic settles here.
    sample(false, &mut windows, &mut loads);
    let load_bytes = |shared: &Shared| -> u64 {
        shared
            .bytes
            .iter()
            .map(|c| c.0.load(Ordering::Relaxed))
            .sum()
    };
    // Each sample's bandwidth over its own span, as `bandwidth` takes its
    // samples: a thread descheduled for a while on a busy machine spoils a
    // sample, not the point (the median leaves it out).
    // A sample in which the chase thread lost its CPU is set aside as every
    // chase figure's is (`stats::repeat_held`): its windows hold the time
    // off the CPU and would pass for the load's tail. So is one in which a
    // load thread lost its CPU (`loads_held.rs`): it moved less, and the
    // chase measured under a lighter load than the point's. Its windows and
    // bandwidth are kept apart, used only when no sample held.
    let mut gbs: Vec<f64> = Vec::new();
    let (mut lost_windows, mut lost_gbs) = (Vec::new(), Vec::new());
    let mut threads = Loads::new(if loaded {
        shared
            .ids
            .lock()
            .map(|ids| ids.iter().flatten().copied().collect())
            .unwrap_or_default()
    } else {
        Vec::new()
    });
    let measured = stats::repeat_held(&StopRule { warmup: 0, ..*rule }, |s| {
        shorten.set(s);
        let mut own = Vec::new();
        let before = threads.read();
        let held = Probe::start();
        let (b0, l0, t0) = (load_bytes(shared), loads, timer.now());
        let v = sample(true, &mut own, &mut loads);
        let (b1, t1) = (load_bytes(shared), timer.now());
        let lost = held.lost();
        let after = threads.read();
        let lost = lost.or_else(|| threads.lost(&before, &after));
        let ns = timer.elapsed_ns(t0, t1);
        let bytes = (b1 - b0) as f64 + ((loads - l0) * LINE as u64) as f64;
        let g = if ns > 0.0 { bytes / ns } else { 0.0 };
        if lost.is_some() {
            lost_windows.extend(own);
            lost_gbs.push(g);
        } else {
            windows.extend(own);
            gbs.push(g);
        }
        Ok::<Taken, String>(Taken { value: v, lost })
    })?;
    if measured.stop == StopReason::Interrupted && measured.samples.is_empty() {
        return Err("interrupted before a sample".into());
    }
    if measured.set_aside.used_anyway {
        windows = lost_windows;
        gbs = lost_gbs;
    }
    let bandwidth_gbs = stats::Summary::of(&gbs).map(|s| s.median).unwrap_or(0.0);
    Ok(ChasePoint {
        measured,
        windows,
        bandwidth_gbs,
    })
}

#[cfg(test)]
mod tests {
    use super::super::loads_held::LoadId;
    use super::super::rig::Counter;
    use super::*;
    use crate::placement::{current_affinity, MemPolicy, PageKind};
    use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
    use std::sync::{mpsc, Mutex};
    use std::time::Duration;

    /// One point measured by a real chase thread on a small buffer, with a
    /// "load thread" that sleeps through it in the shared state: `loaded`
    /// says whether the load threads run through the point.
    fn point_beside_a_sleeper(loaded: bool) -> ChasePoint {
        let cpu = current_affinity().unwrap()[0];
        let (wake, sleep) = mpsc::channel::<()>();
        let (id_tx, id_rx) = mpsc::channel();
        let sleeper = std::thread::spawn(move || {
            id_tx.send(LoadId::own()).unwrap();
            let _ = sleep.recv();
        });
        let shared = Shared {
            running: AtomicBool::new(false),
            active: AtomicUsize::new(0),
            // A load thread's counter runs on from point to point: it
            // holds the bytes of points before this one.
            bytes: vec![Counter(AtomicU64::new(1 << 40))],
            ids: Mutex::new(vec![id_rx.recv().unwrap()]),
        };
        let spec = BufferSpec::new(4 << 20, MemPolicy::FirstTouch, PageKind::Small);
        let timer = *Timer::get();
        // A zero budget: three samples, held or not, of 5 ms each.
        let rule = StopRule {
            budget: Duration::ZERO,
            ..StopRule::default()
        };
        let point = std::thread::scope(|s| {
            let (cmd, rx) = mpsc::channel();
            let (tx, reply) = mpsc::channel();
            let (spec, timer, shared) = (&spec, &timer, &shared);
            s.spawn(move || chase_thread(cpu, spec, timer, shared, rx, tx));
            assert!(matches!(reply.recv().unwrap(), Reply::Ready(Ok(c)) if c == cpu));
            cmd.send(ChaseCmd::Measure(rule, loaded)).unwrap();
            let point = match reply.recv().unwrap() {
                Reply::Point(p) => (*p).unwrap(),
                _ => panic!("the chase answered out of turn"),
            };
            cmd.send(ChaseCmd::Quit).unwrap();
            point
        });
        drop(wake);
        sleeper.join().unwrap();
        point
    }

    #[test]
    fn a_sample_is_the_mean_of_its_windows_and_its_bandwidth_the_chase_lines_over_its_span() {
        // Every sample set aside and used (the sleeper): the point's windows
        // are all the samples' windows, and each sample's figure, loads
        // over time, is the mean of its own windows' ns per load.
        let p = point_beside_a_sleeper(true);
        assert!(p.measured.set_aside.used_anyway);
        // The chase's own discarded first sample is the warm-up: the stop
        // rule takes none more.
        assert_eq!(p.measured.warmup_runs, 0);
        let lo = p.windows.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = p.windows.iter().copied().fold(0.0, f64::max);
        assert!(lo > 0.0 && hi.is_finite(), "{lo} {hi}");
        for &v in &p.measured.samples {
            assert!((lo..=hi).contains(&v), "{v} outside {lo}..={hi}");
        }
        // No load thread moved a byte (whatever its counter held before):
        // a sample's bandwidth is the chase's 64-byte lines over the
        // sample's span, which holds its windows and the few timer reads
        // between them. So at most a line per the sample's ns per load,
        // and at least an eighth of one (a preemption between two
        // windows, not in one, would have to last seven times the
        // sample's windows); the point's is the samples' median.
        let median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let most = median(p.measured.samples.iter().map(|v| LINE as f64 / v).collect());
        let g = p.bandwidth_gbs;
        assert!(
            g <= most * (1.0 + 1e-9) && g >= most / 8.0,
            "{} <= {g} <= {most}",
            most / 8.0
        );
    }

    #[test]
    fn a_load_thread_off_its_cpu_sets_every_sample_aside() {
        // A load thread that never runs held its CPU in no sample: every
        // one is set aside, whatever the chase's own hold, and the figure
        // is made of them (flagged). Three taken, no more.
        let p = point_beside_a_sleeper(true);
        let aside = p.measured.set_aside;
        assert_eq!(aside.total(), crate::stats::BUDGET_MIN_SAMPLES, "{aside:?}");
        assert!(aside.used_anyway, "{aside:?}");
        assert_eq!(p.measured.samples.len(), aside.total());
        assert!(!p.windows.is_empty());
        // At idle the load threads are not running, and not judged: kept
        // and set aside are the three taken.
        let idle = point_beside_a_sleeper(false);
        let aside = idle.measured.set_aside;
        let kept = if aside.used_anyway {
            0
        } else {
            idle.measured.samples.len()
        };
        assert_eq!(kept + aside.total(), crate::stats::BUDGET_MIN_SAMPLES);
    }
}
