//! A team of pinned workers that a coordinating thread releases together,
//! one sample at a time (bandwidth's cells, peak's steps): every worker
//! sets up (pins itself, maps its memory) and says so at a first barrier;
//! the coordinator measures only when all of them could, then each sample
//! is a pair of barriers (start, done) around every worker's passes, and a
//! stop flag plus one more barrier ends them; every worker is joined and the
//! first failure returned. Each worker reads its own thread's clocks around
//! its passes ([`crate::held`]): a sample counts only when every worker held
//! its CPU through it and started with the others. A sample may be a part of a pass (the `k`-th of
//! `parts` equal parts of each worker's arrays), so that samples can be
//! made shorter than a scheduler's time slice on a busy machine. The barrier is the breakable one
//! ([`super::barrier`]): a panic on either side releases the others instead
//! of leaving them waiting.

use super::barrier::Barrier;
use super::workers::join_all;
use super::ExperimentError;
use crate::held::{Hold, Lost, Probe};
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

/// One sample as the coordinator sees it: every worker's stamps, and what
/// the kernel said of each worker's hold on its CPU over its passes.
pub(crate) struct TeamSample {
    pub stamps: Vec<Stamps>,
    pub holds: Vec<Hold>,
}

impl TeamSample {
    /// Whether the sample was lost, judged for each worker by the rule of
    /// [`Hold::lost`] over the team's whole sample (first start to last
    /// end, the span its figure is timed over): the time the worker spent
    /// off its CPU during its passes, plus the time it started after the
    /// first. A worker that was not running when the barrier released the
    /// team starts late, outside its own probe, and the sample's span grows
    /// by as much as if it had been switched out inside it; so a late start
    /// is judged as time off the CPU, by the same share (and, without a
    /// switch, the same floor, which leaves a barrier's wake-up of a few
    /// microseconds alone). A late start that pushed it over is
    /// `Preempted`: another task had the worker's CPU when it was released.
    pub(crate) fn lost(&self, timer: &Timer) -> Option<Lost> {
        let first = self.stamps.iter().map(|s| s.0).min()?;
        let end = self.stamps.iter().map(|s| s.1).max()?;
        let whole = timer.elapsed_ns(first, end).max(1.0) as u64;
        self.stamps.iter().enumerate().find_map(|(i, s)| {
            let late = timer.elapsed_ns(first, s.0).max(0.0) as u64;
            let hold = self.holds.get(i).copied().unwrap_or_default();
            let own = hold.wall_ns.saturating_sub(hold.cpu_ns);
            let judged = Hold {
                wall_ns: whole,
                cpu_ns: whole.saturating_sub(late.saturating_add(own)),
                switches: hold.switches,
            };
            judged
                .lost()
                .map(|why| if late > own { Lost::Preempted } else { why })
        })
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
    /// Per worker: its hold on its CPU over its last sample.
    holds: Mutex<Vec<Hold>>,
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
            holds: Mutex::new(vec![Hold::default(); threads]),
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
    /// runs of one `part` of a pass; their stamps, with each worker's hold
    /// on its CPU ([`TeamSample::lost`] judges them). A broken barrier (a worker panicked) is
    /// `Panicked`: the sample never completes.
    pub(crate) fn sample_part(&self, reps: u64, part: Part) -> Result<TeamSample, ExperimentError> {
        self.reps.store(reps, Ordering::SeqCst);
        self.part_k.store(part.k, Ordering::SeqCst);
        self.parts.store(part.parts.max(1), Ordering::SeqCst);
        if !(self.barrier.wait() && self.barrier.wait()) {
            return Err(ExperimentError::Panicked);
        }
        Ok(TeamSample {
            stamps: self.stamps.lock().map(|v| v.clone()).unwrap_or_default(),
            holds: self.holds.lock().map(|v| v.clone()).unwrap_or_default(),
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
            let hold = held.stop();
            if let Ok(mut v) = self.stamps.lock() {
                v[index] = (a, b, bytes);
            }
            if let Ok(mut v) = self.holds.lock() {
                v[index] = hold;
            }
            self.barrier.wait(); // done
        }
        Ok(state)
    }
}

#[cfg(test)]
mod tests {
    use super::{Lost, Part, TeamSample};
    use crate::held::{Hold, OFF_CPU_FLOOR_NS};
    use crate::stats::flags::star;
    use crate::stats::{repeat_held_with, Measured, StopRule, Taken, MAX_SHORTEN};
    use crate::timer::{Stamp, Timer};
    use std::cell::Cell;
    use std::convert::Infallible;
    use std::time::Duration;

    #[test]
    fn a_late_start_counts_as_time_off_the_cpu_by_the_same_rule() {
        let t = Timer::monotonic_raw();
        let s = |stamps: Vec<(u64, u64)>, holds: Vec<Hold>| TeamSample {
            stamps: stamps
                .into_iter()
                .map(|(a, b)| (Stamp(a), Stamp(b), 0))
                .collect(),
            holds,
        };
        let held = |wall| vec![hold(wall, 0, 0); 2];
        // A 10 ms sample: 2 % is 200 us. Both start together: held.
        let m = 10_000_000;
        assert_eq!(s(vec![(0, m), (10, m)], held(m)).lost(&t), None);
        // The second starts 1.5 % late: kept; 3 % late: lost, as a worker
        // switched out for as long inside its passes would be.
        let late = |d: u64| s(vec![(0, m - d), (d, m)], held(m - d)).lost(&t);
        assert_eq!(late(m * 15 / 1000), None);
        assert_eq!(late(m * 3 / 100), Some(Lost::Preempted));
        assert_eq!(
            hold(m, m * 3 / 100, 1).lost(),
            Some(Lost::Preempted),
            "the rule a late start is judged by"
        );
        // A late start and time off inside the passes add up: 1.2 % late
        // and 1.2 % off in its passes, after one switch, is 2.4 % lost.
        let d = m * 12 / 1000;
        let off = s(
            vec![(0, m - d), (d, m)],
            vec![hold(m, 0, 0), hold(m - d, d, 1)],
        );
        assert_eq!(off.lost(&t), Some(Lost::Preempted));
        // ... reported for what pushed it over: the worker's own time off
        // without a switch (a stolen vCPU) when it is the larger share.
        let off = s(
            vec![(0, m), (m / 200, m)],
            vec![hold(m, 0, 0), hold(m - m / 200, m / 50, 0)],
        );
        assert_eq!(off.lost(&t), Some(Lost::OffCpu));
        // A short sample: without a switch, a late start within the floor
        // (a barrier's wake-up) is kept, as time off without a switch is
        // in a worker's own probe; past it, lost.
        let short = 500_000;
        let wake = |d: u64| s(vec![(0, short), (d, short + d)], held(short)).lost(&t);
        assert_eq!(wake(OFF_CPU_FLOOR_NS / 2), None);
        assert_eq!(wake(OFF_CPU_FLOOR_NS + 20_000), Some(Lost::Preempted));
        // A worker's own loss stands, whatever the starts.
        assert_eq!(
            s(
                vec![(0, m), (0, m)],
                vec![hold(m, 0, 0), hold(m, m / 10, 0)]
            )
            .lost(&t),
            Some(Lost::OffCpu)
        );
        // A worker whose hold was never read lost nothing of its own.
        assert_eq!(s(vec![(0, m), (0, m)], vec![]).lost(&t), None);
        assert_eq!(s(vec![], vec![]).lost(&t), None);
    }

    #[test]
    fn a_late_start_as_long_as_the_workers_own_time_off_leaves_its_own_reason() {
        // 1.5 % late and as long off its CPU in its passes without a
        // switch: 3 % lost, neither share the larger, so the worker's own
        // reason stands; with a nanosecond less of its own, the late start
        // is what pushed it over.
        let t = Timer::monotonic_raw();
        let m = 10_000_000;
        let d = m * 15 / 1000;
        // The late start as this timer reads it.
        let late = t.elapsed_ns(Stamp(0), Stamp(d)) as u64;
        let s = |own: u64| TeamSample {
            stamps: vec![(Stamp(0), Stamp(m), 0), (Stamp(d), Stamp(m), 0)],
            holds: vec![hold(m, 0, 0), hold(m - d, own, 0)],
        };
        assert_eq!(s(late).lost(&t), Some(Lost::OffCpu));
        assert_eq!(s(late - 1).lost(&t), Some(Lost::Preempted));
    }

    /// A cell of two workers as the coordinator judges it, from what the
    /// kernel said of each worker's hold over each sample and when each
    /// started: `sample(now_ns, k, shorten)` gives the k-th sample's
    /// figure, both workers' start offsets and both holds; each sample's
    /// span passes on the cell's clock, so `budget` ends it. Returns the
    /// measurement, how many samples had a switch in some worker, and each
    /// sample's start on the clock, divisor, and whether it was lost.
    fn team_run(
        budget: Duration,
        mut sample: impl FnMut(u64, u64, u32) -> (f64, [u64; 2], [Hold; 2]),
    ) -> (Measured, usize, Vec<(u64, u32, bool)>) {
        let t = Timer::monotonic_raw();
        let rule = StopRule {
            warmup: 0,
            min_samples: 5,
            max_samples: 1_000_000,
            cv_target: 0.0,
            budget,
        };
        let (mut k, mut switched) = (0u64, 0usize);
        let mut trace = Vec::new();
        let clock = Cell::new(0u64);
        let m = repeat_held_with(
            &rule,
            |shorten| {
                let start = clock.get();
                let (value, starts, holds) = sample(start, k, shorten);
                k += 1;
                let stamps: Vec<_> = (0..2)
                    .map(|i| (Stamp(starts[i]), Stamp(starts[i] + holds[i].wall_ns), 0))
                    .collect();
                clock.set(clock.get() + stamps.iter().map(|s| s.1 .0).max().unwrap_or(0));
                switched += holds.iter().any(|h| h.switches > 0) as usize;
                let lost = TeamSample {
                    stamps,
                    holds: holds.to_vec(),
                }
                .lost(&t);
                trace.push((start, shorten, lost.is_some()));
                Ok::<_, Infallible>(Taken { value, lost })
            },
            || Duration::from_nanos(clock.get()),
            || false,
        )
        .unwrap();
        (m, switched, trace)
    }

    /// [`team_run`] over 2 s, both workers starting together.
    fn team_cell(sample: impl Fn(u64, u32) -> (f64, [Hold; 2])) -> (Measured, usize) {
        let (m, switched, _) = team_run(Duration::from_secs(2), |_, k, shorten| {
            let (value, holds) = sample(k, shorten);
            (value, [0, 0], holds)
        });
        (m, switched)
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

    /// The k-th sample of `shorten`'s length beside a neighbour that takes
    /// worker 1's CPU for 3 ms slices: a sample that spans the start of a
    /// slice (`hit(length)`) loses it, and its figure reads slow by as
    /// much; any other holds at 27-27.02 GB/s.
    fn neighbour(k: u64, shorten: u32, hit: impl Fn(u64) -> bool) -> (f64, [u64; 2], [Hold; 2]) {
        let len = SAMPLE_NS / shorten as u64;
        let hit = hit(len);
        let off = if hit { 3_000_000 } else { 0 };
        let figure = (27.0 + 0.01 * (k % 3) as f64) * len as f64 / (len + off) as f64;
        (
            figure,
            [0, 0],
            [hold(len, 0, 0), hold(len + off, off, hit as u64)],
        )
    }

    #[test]
    fn samples_shorten_in_a_busy_phase_and_lengthen_back_after_it() {
        // Quiet for 1 s, a neighbour every 10 ms until 4 s, quiet to 9 s.
        let (busy_from, busy_to) = (1_000_000_000, 4_000_000_000);
        let (m, _, trace) = team_run(Duration::from_secs(9), |now, k, shorten| {
            let busy = (busy_from..busy_to).contains(&now);
            let p = 10_000_000;
            neighbour(k, shorten, |len| busy && (now / p + 1) * p < now + len)
        });
        let before: Vec<_> = trace.iter().filter(|t| t.0 < busy_from).collect();
        let during: Vec<_> = trace
            .iter()
            .filter(|t| (busy_from..busy_to).contains(&t.0))
            .collect();
        let after: Vec<_> = trace.iter().filter(|t| t.0 >= busy_to).collect();
        // Whole samples while quiet, none lost.
        assert_eq!(before.len(), 10);
        assert!(before.iter().all(|t| t.1 == 1 && !t.2), "{before:?}");
        // Shortened in the busy phase, below the neighbour's period (an
        // eighth of 100 ms always spans a slice's start).
        let most = during.iter().map(|t| t.1).max().unwrap();
        assert!(most >= 16, "{during:?}");
        assert_eq!(m.set_aside.shortened, most);
        assert!(during.iter().any(|t| t.2));
        // After it: nothing lost, the length only grows, back to whole
        // samples, and never past them.
        assert!(after.iter().all(|t| !t.2), "{after:?}");
        assert!(after.windows(2).all(|w| w[1].1 <= w[0].1), "{after:?}");
        assert!(trace.iter().all(|t| t.1 >= 1));
        let whole = after.iter().filter(|t| t.1 == 1).count();
        assert!(whole >= 10, "{whole} whole samples after the busy phase");
        assert_eq!(trace.last().unwrap().1, 1);
        // The figure is the held samples', unstarred.
        assert_eq!(m.set_aside.total(), trace.iter().filter(|t| t.2).count());
        assert!(m.samples.iter().all(|&v| v >= 27.0), "{:?}", m.samples);
        assert_eq!(m.flags("GB/s"), Vec::<String>::new());
    }

    #[test]
    fn a_steady_neighbour_settles_the_length_instead_of_trying_again_and_again() {
        // A neighbour's slices at random (a fixed seed), 25 ms apart on
        // average, for 3 s: a sample of length L spans one's start with
        // chance about L / 25 ms. Runs of held samples come at every
        // length, so the samples try to lengthen; each failed trial makes
        // the next wait longer, and the length settles where few are lost.
        // With a fixed wait of 16 the samples would keep trying lengths
        // that lose 6-25 % of them.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = 0u64;
        let (m, _, trace) = team_run(Duration::from_secs(3), |now, k, shorten| {
            while next <= now {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                next += 1 + (x % 50_000_000);
            }
            neighbour(k, shorten, |len| next < now + len)
        });
        let lengthened = trace.windows(2).filter(|w| w[1].1 < w[0].1).count();
        let lost = trace.iter().filter(|t| t.2).count();
        let n = trace.len();
        assert!(n > 1000, "{n} samples");
        assert!(m.set_aside.shortened >= 16, "{:?}", m.set_aside);
        assert!(
            lengthened * 100 < n,
            "{lengthened} lengthenings in {n} samples"
        );
        assert!(lost * 20 < n, "{lost} lost of {n} samples");
        assert!(m.samples.iter().all(|&v| v >= 27.0));
        assert_eq!(m.flags("GB/s"), Vec::<String>::new());
    }
}
