//! A team of pinned workers that a coordinating thread releases together,
//! one sample at a time (bandwidth's cells, peak's steps): every worker
//! sets up (pins itself, maps its memory) and says so at a first barrier;
//! the coordinator measures only when all of them could, then each sample
//! is a pair of barriers (start, done) around every worker's passes, and a
//! stop flag plus one more barrier ends them; every worker is joined and the
//! first failure returned. Each worker reads its own thread's clocks around
//! its passes ([`crate::held`]): a sample counts only when every worker held
//! its CPU through it. A sample may be a part of a pass (the `k`-th of
//! `parts` equal parts of each worker's arrays), so that samples can be
//! made shorter than a scheduler's time slice on a busy machine. The barrier is the breakable one
//! ([`super::barrier`]): a panic on either side releases the others instead
//! of leaving them waiting.

use super::barrier::Barrier;
use super::workers::join_all;
use super::ExperimentError;
use crate::held::{Lost, Probe};
use crate::timer::{Stamp, Timer};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// What a worker reports of its last sample: (start, end, bytes it moved).
pub(crate) type Stamps = (Stamp, Stamp, u64);

/// Which part of a pass a sample runs: the `k`-th of `parts` (1: the whole).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Part {
    pub k: u64,
    pub parts: u64,
}

impl Part {
    pub(crate) const WHOLE: Part = Part { k: 0, parts: 1 };

    /// The byte range `[start, start + len)` of this part of `len` bytes,
    /// in whole `align`-byte blocks (the last part takes no remainder, so
    /// every part is the same size); None when a part would be empty.
    pub(crate) fn range(&self, len: usize, align: usize) -> Option<(usize, usize)> {
        let parts = self.parts.max(1) as usize;
        let size = len / parts / align * align;
        (size > 0).then(|| ((self.k as usize % parts) * size, size))
    }
}

/// The least each array's part of a pass may be: far above a page, so a
/// part still streams (prefetchers ramp up within a few KiB).
pub(crate) const MIN_PART_BYTES: u64 = 1 << 20;

/// `reps` passes shortened `shorten` times: fewer whole passes while there
/// are passes to drop, then one part of a pass out of up to `most_parts`
/// (the `k`-th, so that successive samples walk the whole buffer).
pub(crate) fn shortened(reps: u64, shorten: u64, most_parts: u64, k: u64) -> (u64, Part) {
    let shorten = shorten.max(1);
    if shorten <= reps {
        return (reps / shorten, Part::WHOLE);
    }
    let parts = (shorten / reps.max(1)).clamp(1, most_parts.max(1));
    (
        1,
        Part {
            k: k % parts,
            parts,
        },
    )
}

/// One sample as the coordinator sees it: every worker's stamps, and
/// whether any of them lost its CPU during it.
pub(crate) struct TeamSample {
    pub stamps: Vec<Stamps>,
    pub lost: Option<Lost>,
}

/// The share of a sample by which the last worker may start after the
/// first before the sample counts as lost: a worker released by the
/// barrier starts within microseconds when it holds its CPU.
pub(crate) const LATE_START_SHARE: f64 = 0.05;

impl TeamSample {
    /// Whether the sample was lost: a worker lost its CPU during its
    /// passes, or one was not running when the barrier released the team
    /// and started late, outside its own probe (the sample then times the
    /// workers one after the other, and is lost all the same).
    pub(crate) fn lost_or_late(&self, timer: &Timer) -> Option<Lost> {
        let first = self.stamps.iter().map(|s| s.0).min()?;
        let last_start = self.stamps.iter().map(|s| s.0).max()?;
        let end = self.stamps.iter().map(|s| s.1).max()?;
        let whole = timer.elapsed_ns(first, end).max(1.0);
        let late = timer.elapsed_ns(first, last_start) > LATE_START_SHARE * whole;
        self.lost.or(late.then_some(Lost::Preempted))
    }
}

/// What the workers share with the coordinating thread.
pub(crate) struct Team {
    barrier: Barrier,
    stop: AtomicBool,
    reps: AtomicU64,
    /// The part of a pass the next sample runs (`k`, `parts`).
    part_k: AtomicU64,
    parts: AtomicU64,
    /// Per worker: its last sample; a start of `Stamp(1)` before the first
    /// sample means "set up".
    stamps: Mutex<Vec<Stamps>>,
    /// Per worker: whether it lost its CPU in its last sample.
    lost: Mutex<Vec<Option<Lost>>>,
}

impl Team {
    /// Spawn `threads` workers, `work(index, team)` each (which calls
    /// [`Team::serve`]), run `coordinate` once every one of them is set up,
    /// then stop and join them all: their reports in order and the
    /// coordinator's outcome, or the first failure.
    pub(crate) fn run<T: Send, R>(
        threads: usize,
        work: impl Fn(usize, &Team) -> Result<T, ExperimentError> + Sync,
        coordinate: impl FnOnce(&Team) -> Result<R, ExperimentError>,
    ) -> Result<(Vec<T>, R), ExperimentError> {
        let team = Team {
            barrier: Barrier::new(threads + 1),
            stop: AtomicBool::new(false),
            reps: AtomicU64::new(1),
            part_k: AtomicU64::new(0),
            parts: AtomicU64::new(1),
            stamps: Mutex::new(vec![(Stamp(0), Stamp(0), 0); threads]),
            lost: Mutex::new(vec![None; threads]),
        };
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|i| {
                    let (team, work) = (&team, &work);
                    s.spawn(move || work(i, team))
                })
                .collect();
            // A panic on this side breaks the barrier too: no worker waits
            // for a coordinator that is gone.
            let _guard = team.barrier.guard();
            // Every worker reaches this barrier once it is set up (or its
            // set-up failed); then the coordinator knows whether to measure.
            let ready = team.barrier.wait()
                && team
                    .stamps
                    .lock()
                    .map(|v| v.iter().all(|&(a, _, _)| a == Stamp(1)))
                    .unwrap_or(false);
            let outcome = if ready {
                coordinate(&team)
            } else {
                // Never returned: the failing worker's own error is (below).
                Err(ExperimentError::Invalid("a worker could not set up".into()))
            };
            team.stop.store(true, Ordering::SeqCst);
            team.barrier.wait();
            let reports = join_all(handles)?;
            Ok((reports, outcome?))
        })
    }

    /// The coordinator's side of one sample: every worker runs `reps`
    /// runs of one `part` of a pass; their stamps, with whether any worker
    /// lost its CPU during it. A broken barrier (a worker panicked) is
    /// `Panicked`: the sample never completes.
    pub(crate) fn sample_part(&self, reps: u64, part: Part) -> Result<TeamSample, ExperimentError> {
        self.reps.store(reps, Ordering::SeqCst);
        self.part_k.store(part.k, Ordering::SeqCst);
        self.parts.store(part.parts.max(1), Ordering::SeqCst);
        if !(self.barrier.wait() && self.barrier.wait()) {
            return Err(ExperimentError::Panicked);
        }
        let lost = self
            .lost
            .lock()
            .map(|v| v.iter().flatten().copied().next())
            .unwrap_or(None);
        Ok(TeamSample {
            stamps: self.stamps.lock().map(|v| v.clone()).unwrap_or_default(),
            lost,
        })
    }

    /// Worker `index`'s side: `setup` (pinning first, then its memory),
    /// then, at every sample, `pass(state, reps, part)` timed (it returns
    /// the bytes it moved), until the coordinator stops the team. `fault` is
    /// the fault-injection stage between two samples. Returns the state
    /// for the worker's report.
    pub(crate) fn serve<S>(
        &self,
        index: usize,
        setup: impl FnOnce() -> Result<S, ExperimentError>,
        timer: &Timer,
        fault: &str,
        mut pass: impl FnMut(&mut S, u64, Part) -> u64,
    ) -> Result<S, ExperimentError> {
        // A panic anywhere below breaks the barrier: nobody waits for us forever.
        let _guard = self.barrier.guard();
        // A panic in the set-up must still reach the barrier, or every
        // other thread waits.
        let setup = std::panic::catch_unwind(std::panic::AssertUnwindSafe(setup))
            .unwrap_or(Err(ExperimentError::Panicked));
        if setup.is_ok() {
            if let Ok(mut v) = self.stamps.lock() {
                v[index] = (Stamp(1), Stamp(0), 0);
            }
        }
        self.barrier.wait();
        let mut state = match setup {
            Ok(s) => s,
            Err(e) => {
                // Keep the barrier protocol: wait for the coordinator's stop.
                self.barrier.wait();
                return Err(e);
            }
        };
        loop {
            // start (or stop); a broken barrier (a thread panicked) stops too
            if !self.barrier.wait() || self.stop.load(Ordering::SeqCst) {
                break;
            }
            crate::fault::panic_at(fault);
            let reps = self.reps.load(Ordering::SeqCst);
            let part = Part {
                k: self.part_k.load(Ordering::SeqCst),
                parts: self.parts.load(Ordering::SeqCst),
            };
            let held = Probe::start();
            let a = timer.now();
            let bytes = pass(&mut state, reps, part);
            let b = timer.now();
            let lost = held.lost();
            if let Ok(mut v) = self.stamps.lock() {
                v[index] = (a, b, bytes);
            }
            if let Ok(mut v) = self.lost.lock() {
                v[index] = lost;
            }
            self.barrier.wait(); // done
        }
        Ok(state)
    }
}

#[cfg(test)]
mod tests {
    use super::{Lost, Part, TeamSample, LATE_START_SHARE};
    use crate::held::Hold;
    use crate::stats::flags::star;
    use crate::stats::{repeat_held_with, Measured, StopRule, Taken, MAX_SHORTEN};
    use crate::timer::{Stamp, Timer};
    use std::cell::Cell;
    use std::convert::Infallible;
    use std::time::Duration;

    #[test]
    fn a_worker_that_starts_late_loses_the_sample() {
        let t = Timer::monotonic_raw();
        let s = |stamps: Vec<(u64, u64)>, lost| TeamSample {
            stamps: stamps
                .into_iter()
                .map(|(a, b)| (Stamp(a), Stamp(b), 0))
                .collect(),
            lost,
        };
        // Both start together: held.
        let m = 1_000_000;
        assert_eq!(s(vec![(0, m), (10, m)], None).lost_or_late(&t), None);
        // The second starts at 5 % of the sample: still held; at 6 %, lost
        // (the timer's overhead, a few ticks, is far below the step).
        let edge = (LATE_START_SHARE * m as f64) as u64;
        assert_eq!(s(vec![(0, m), (edge, m)], None).lost_or_late(&t), None);
        assert_eq!(
            s(vec![(0, m / 2), (edge + m / 100, m)], None).lost_or_late(&t),
            Some(Lost::Preempted)
        );
        // A worker's own loss stands, whatever the starts.
        assert_eq!(
            s(vec![(0, m), (0, m)], Some(Lost::OffCpu)).lost_or_late(&t),
            Some(Lost::OffCpu)
        );
        assert_eq!(s(vec![], None).lost_or_late(&t), None);
    }

    /// A cell of two workers as the coordinator judges it, from what the
    /// kernel said of each worker's hold over each sample: `sample(k,
    /// shorten)` gives the k-th sample's figure and both holds; each
    /// sample's wall time passes on the cell's clock, so a 2 s budget ends
    /// it. Returns the measurement and how many samples had a switch in
    /// some worker.
    fn team_cell(sample: impl Fn(u64, u32) -> (f64, [Hold; 2])) -> (Measured, usize) {
        let t = Timer::monotonic_raw();
        let rule = StopRule {
            warmup: 0,
            min_samples: 5,
            max_samples: 1000,
            cv_target: 0.0,
            budget: Duration::from_secs(2),
        };
        let (clock, k, switched) = (Cell::new(0u64), Cell::new(0u64), Cell::new(0usize));
        let m = repeat_held_with(
            &rule,
            |shorten| {
                let (value, holds) = sample(k.get(), shorten);
                k.set(k.get() + 1);
                let wall = holds.iter().map(|h| h.wall_ns).max().unwrap_or(0);
                clock.set(clock.get() + wall);
                switched.set(switched.get() + holds.iter().any(|h| h.switches > 0) as usize);
                let s = TeamSample {
                    stamps: holds
                        .iter()
                        .map(|h| (Stamp(0), Stamp(h.wall_ns), 0))
                        .collect(),
                    lost: holds.iter().find_map(Hold::lost),
                };
                Ok::<_, Infallible>(Taken {
                    value,
                    lost: s.lost_or_late(&t),
                })
            },
            || Duration::from_nanos(clock.get()),
            || false,
        )
        .unwrap();
        (m, switched.get())
    }

    /// A hold of `wall_ns` with `switches` that together took `off_ns`.
    fn hold(wall_ns: u64, off_ns: u64, switches: u64) -> Hold {
        Hold {
            wall_ns,
            cpu_ns: wall_ns - off_ns,
            switches,
        }
    }

    const SAMPLE_NS: u64 = 100_000_000;

    #[test]
    fn a_steady_team_switched_out_briefly_in_every_sample_keeps_them_all_unstarred() {
        // Both CPUs run a worker, so every wake-up of another task (a
        // kernel worker, the coordinator on its way to the barrier) takes
        // one of them for some microseconds: every sample has a switch.
        let (m, switched) = team_cell(|k, shorten| {
            let wall = SAMPLE_NS / shorten as u64;
            let figure = 27.0 * (1.0 + 0.005 * ((k % 5) as f64 - 2.0));
            let w0 = hold(wall, 20_000 * (1 + k % 3), 1 + k % 3);
            let w1 = hold(wall, 10_000 * (k % 2), k % 2);
            (figure, [w0, w1])
        });
        assert_eq!(switched, m.samples.len());
        assert_eq!(m.samples.len(), 20, "{m:?}");
        assert_eq!(m.set_aside.total(), 0, "{:?}", m.set_aside);
        assert_eq!(m.set_aside.shortened, 1);
        assert_eq!(m.summary.median, 27.0);
        assert_eq!(m.flags("GB/s"), Vec::<String>::new());
        assert_eq!(star(!m.flags("GB/s").is_empty()), "");
    }

    #[test]
    fn a_team_whose_thread_loses_a_slice_in_every_sample_is_starred() {
        // A busy neighbour on worker 1's CPU takes 3 ms slices: a sample
        // of any length loses half of it (a slice, or as much of one as
        // fits), and reads slow by as much.
        let (m, switched) = team_cell(|_, shorten| {
            let wall = SAMPLE_NS / shorten as u64;
            let off = (3_000_000).min(wall / 2);
            let figure = 27.0 * (1.0 - off as f64 / wall as f64);
            (figure, [hold(wall, 0, 0), hold(wall, off, 1)])
        });
        assert!(switched >= 3, "{m:?}");
        assert_eq!(m.set_aside.preempted, switched, "{:?}", m.set_aside);
        assert!(m.set_aside.used_anyway);
        assert_eq!(m.set_aside.shortened, MAX_SHORTEN);
        let flags = m.flags("GB/s");
        assert!(
            flags.iter().any(|f| f.starts_with("preempted: the measuring thread lost its CPU in every one")),
            "{flags:?}"
        );
        assert_eq!(star(!flags.is_empty()), "*");
    }

    #[test]
    fn a_team_that_loses_a_slice_now_and_then_sets_those_samples_aside() {
        // Every fourth sample a slice of 3 ms is lost: those are set aside
        // (and the samples shorten, a quarter being lost), the figure is
        // the held samples' and holds.
        let (m, _) = team_cell(|k, shorten| {
            let wall = SAMPLE_NS / shorten as u64;
            if k % 4 == 3 {
                let off = (3_000_000).min(wall / 2);
                (13.5, [hold(wall, off, 1), hold(wall, 0, 0)])
            } else {
                let figure = 27.0 + 0.1 * (k % 3) as f64;
                (figure, [hold(wall, 5_000, 1), hold(wall, 0, 0)])
            }
        });
        assert!(m.set_aside.preempted >= 2, "{:?}", m.set_aside);
        assert!(m.set_aside.shortened > 1, "{:?}", m.set_aside);
        assert!(!m.set_aside.used_anyway);
        assert!(m.samples.iter().all(|&v| v >= 27.0), "{:?}", m.samples);
        assert_eq!(m.summary.median, 27.1);
        assert_eq!(m.flags("GB/s"), Vec::<String>::new());
    }

    #[test]
    fn a_part_is_an_equal_aligned_slice_and_k_wraps() {
        assert_eq!(Part::WHOLE.range(1000, 256), Some((0, 768)));
        let p = |k, parts| Part { k, parts };
        assert_eq!(p(0, 4).range(4096, 256), Some((0, 1024)));
        assert_eq!(p(3, 4).range(4096, 256), Some((3072, 1024)));
        assert_eq!(p(5, 4).range(4096, 256), Some((1024, 1024)));
        // 4100 / 4 = 1025, down to whole blocks: 1024; no part overlaps.
        assert_eq!(p(3, 4).range(4100, 256), Some((3072, 1024)));
        assert_eq!(p(0, 32).range(4096, 256), None);
        assert_eq!(p(0, 0).range(512, 256), Some((0, 512)));
    }
}
