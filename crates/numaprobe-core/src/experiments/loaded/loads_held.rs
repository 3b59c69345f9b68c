//! Whether the load threads held their CPUs through a chase sample.
//!
//! A load thread's bytes make the point's bandwidth: one switched out for a
//! slice moves less, so the sample's GB/s and the load the chase measured
//! under are both lower than the point says. A sample therefore counts
//! only when the chase and every load thread held their CPUs, as a team's
//! does ([`crate::experiments::team`]).
//!
//! A load thread runs free, with no samples of its own, and asking it to
//! read its own clocks at the chase's sample edges would cost a chunk of
//! its traffic (milliseconds at a light delay) at each edge. So the chase
//! thread reads it from outside, around each sample: the load thread's
//! CPU clock (`pthread_getcpuclockid`; the kernel adds the running slice, so
//! the reading is exact for a thread running on another CPU) beside the
//! wall clock. Time off its CPU past [`crate::held::OFF_CPU_SHARE`] of the
//! sample loses it, by [`Hold::lost`]'s rule. Only then is the reason
//! read: the thread's involuntary switches from procfs (tens of
//! microseconds, so not at every edge), against the count read at the
//! point's start or at its last loss: a switch since means another task
//! had its CPU (`preempted`), none a stolen vCPU or interrupts. A thread
//! switched out for a moment in a sample that held and stolen from in a
//! later one is called preempted there: the loss is counted either way.

use crate::held::{Hold, Lost};

/// What the chase needs to read a load thread from outside: its CPU clock
/// and its thread id (for procfs). A load thread publishes its own at
/// set-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LoadId {
    pub clock: libc::clockid_t,
    pub tid: libc::pid_t,
}

impl LoadId {
    /// The calling thread's; None where the kernel refuses the clock.
    pub(super) fn own() -> Option<LoadId> {
        let mut clock: libc::clockid_t = 0;
        // SAFETY: pthread_self is the calling thread; clock is ours to fill.
        let rc = unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut clock) };
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) } as libc::pid_t;
        (rc == 0).then_some(LoadId { clock, tid })
    }

    /// The thread's CPU time, ns; None where the kernel refuses (the
    /// thread is gone).
    fn cpu_ns(&self) -> Option<u64> {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: ts is a valid timespec for the call to fill.
        let rc = unsafe { libc::clock_gettime(self.clock, &mut ts) };
        (rc == 0).then(|| ns(ts))
    }

    /// The thread's involuntary switches so far, from procfs.
    fn switches(&self) -> Option<u64> {
        let status =
            std::fs::read_to_string(format!("/proc/self/task/{}/status", self.tid)).ok()?;
        nonvoluntary_switches(&status)
    }
}

/// A clock's reading in ns.
fn ns(ts: libc::timespec) -> u64 {
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// `nonvoluntary_ctxt_switches` of a procfs `status`.
fn nonvoluntary_switches(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("nonvoluntary_ctxt_switches:"))?
        .trim()
        .parse()
        .ok()
}

/// One load thread read at a sample's edge: the wall clock, then its CPU
/// clock (None: refused).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Reading {
    wall_ns: u64,
    cpu_ns: Option<u64>,
}

/// One load thread's hold over a sample, from its readings at both ends:
/// None when it held its CPU. `switched` says whether another task had
/// its CPU; asked only when the time off it is past the share a switch
/// may cost. A refused reading counts as held, as [`crate::held::Probe`]'s
/// does: nothing is set aside on a guess.
fn judge(start: Reading, end: Reading, switched: impl FnOnce() -> bool) -> Option<Lost> {
    let wall_ns = end.wall_ns.saturating_sub(start.wall_ns);
    let cpu_ns = match (start.cpu_ns, end.cpu_ns) {
        (Some(a), Some(b)) => b.saturating_sub(a),
        _ => wall_ns,
    };
    // With a switch the rule is the share alone: below it, held whatever
    // the reason, and procfs is not read.
    let hold = Hold {
        wall_ns,
        cpu_ns,
        switches: 1,
    };
    hold.lost()?;
    Hold {
        switches: u64::from(switched()),
        ..hold
    }
    .lost()
}

/// The load threads of one point, as the chase reads them.
pub(super) struct Loads {
    ids: Vec<LoadId>,
    /// Per thread: its involuntary switches when last read (None: not
    /// readable).
    switches: Vec<Option<u64>>,
}

impl Loads {
    /// The threads of `ids`, their switches read now: the point starts.
    pub(super) fn new(ids: Vec<LoadId>) -> Loads {
        let switches = ids.iter().map(LoadId::switches).collect();
        Loads { ids, switches }
    }

    /// Every thread's reading now, in order.
    pub(super) fn read(&self) -> Vec<Reading> {
        self.ids
            .iter()
            .map(|id| Reading {
                wall_ns: crate::timer::monotonic_raw_ns(),
                cpu_ns: id.cpu_ns(),
            })
            .collect()
    }

    /// The first load thread that lost its CPU between the readings
    /// `start` and `end` ([`Self::read`]), and why; None when all held.
    pub(super) fn lost(&mut self, start: &[Reading], end: &[Reading]) -> Option<Lost> {
        let Loads { ids, switches } = self;
        start
            .iter()
            .zip(end)
            .zip(ids.iter().zip(switches.iter_mut()))
            .find_map(|((&a, &b), (id, last))| judge(a, b, || grew(last, id.switches())))
    }
}

/// Whether a thread's involuntary switches grew from `last` to `now`, and
/// `now` kept as the next `last`; an unreadable count says no, and the
/// last known stays.
fn grew(last: &mut Option<u64>, now: Option<u64>) -> bool {
    let more = matches!((*last, now), (Some(x), Some(y)) if y > x);
    *last = now.or(*last);
    more
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::held::OFF_CPU_FLOOR_NS;

    fn r(wall_ns: u64, cpu_ns: u64) -> Reading {
        Reading {
            wall_ns,
            cpu_ns: Some(cpu_ns),
        }
    }

    #[test]
    fn a_load_thread_is_judged_by_the_rule_of_every_measuring_thread() {
        // 10 ms: 2 % is 200 us. Off for less: held, procfs never read.
        let never = || -> bool { panic!("procfs read for a thread that held") };
        assert_eq!(judge(r(0, 0), r(10_000_000, 9_800_000), never), None);
        // Off for more: lost, preempted when another task ran, else off
        // its CPU.
        let (a, b) = (r(0, 0), r(10_000_000, 9_799_999));
        assert_eq!(judge(a, b, || true), Some(Lost::Preempted));
        assert_eq!(judge(a, b, || false), Some(Lost::OffCpu));
        // Without a switch the floor holds as for the chase: 40 us off in
        // 1 ms is kept, with one it is not.
        let (a, b) = (r(5, 1_000), r(1_000_005, 961_000));
        assert_eq!(judge(a, b, || false), None);
        assert_eq!(judge(a, b, || true), Some(Lost::Preempted));
        let (a, b) = (r(0, 0), r(1_000_000, 999_999 - OFF_CPU_FLOOR_NS));
        assert_eq!(judge(a, b, || false), Some(Lost::OffCpu));
        // Refused readings count as held; so does CPU time past the wall
        // (the clocks' granularity).
        let gone = Reading {
            wall_ns: 10_000_000,
            cpu_ns: None,
        };
        assert_eq!(judge(r(0, 0), gone, never), None);
        assert_eq!(judge(gone, r(20_000_000, 0), never), None);
        assert_eq!(judge(r(0, 0), r(1_000_000, 1_000_100), never), None);
    }

    #[test]
    fn a_reading_counts_its_whole_seconds() {
        // A load thread of a long run has used seconds of CPU.
        let ts = libc::timespec {
            tv_sec: 3,
            tv_nsec: 250,
        };
        assert_eq!(ns(ts), 3_000_000_250);
        // The calling thread read by its id is the thread's own CPU clock.
        let me = LoadId::own().unwrap();
        let before = crate::held::thread_cpu_ns().unwrap();
        let mine = me.cpu_ns().unwrap();
        let after = crate::held::thread_cpu_ns().unwrap();
        assert!(before <= mine && mine <= after, "{before} {mine} {after}");
    }

    #[test]
    fn a_switch_is_counted_since_the_last_reading() {
        let mut last = Some(5);
        assert!(grew(&mut last, Some(6)));
        assert_eq!(last, Some(6));
        assert!(!grew(&mut last, Some(6)));
        assert!(!grew(&mut last, Some(2)));
        assert_eq!(last, Some(2));
        // Unreadable now: no switch claimed, the last known kept.
        assert!(!grew(&mut last, None));
        assert_eq!(last, Some(2));
        // Unreadable before: nothing to compare with yet.
        let mut none = None;
        assert!(!grew(&mut none, Some(3)));
        assert_eq!(none, Some(3));
    }

    /// The third field of a thread's procfs `stat`: its state.
    fn state(tid: libc::pid_t) -> char {
        let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap();
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        after.chars().next().unwrap()
    }

    #[test]
    fn a_load_thread_asleep_through_a_sample_is_off_its_cpu_not_preempted() {
        // Asleep, it runs no instruction and no task takes its CPU from
        // it: the time is lost without an involuntary switch.
        let (tx, rx) = std::sync::mpsc::channel();
        let (wake, sleep) = std::sync::mpsc::channel::<()>();
        let sleeper = std::thread::spawn(move || {
            tx.send(LoadId::own()).unwrap();
            let _ = sleep.recv();
        });
        let id = rx.recv().unwrap().unwrap();
        // Blocked in its receive before the point starts.
        while state(id.tid) != 'S' {
            std::thread::yield_now();
        }
        let mut loads = Loads::new(vec![id]);
        let a = loads.read();
        // A sample's worth of wall time, whatever this thread does meanwhile.
        let t = std::time::Instant::now();
        while t.elapsed() < std::time::Duration::from_millis(2) {
            std::hint::spin_loop();
        }
        let b = loads.read();
        assert_eq!(state(id.tid), 'S');
        drop(wake);
        sleeper.join().unwrap();
        assert_eq!(loads.lost(&a, &b), Some(Lost::OffCpu));
    }

    #[test]
    fn procfs_gives_the_involuntary_switches() {
        let s = "Name:\tx\nvoluntary_ctxt_switches:\t7\nnonvoluntary_ctxt_switches:\t42\n";
        assert_eq!(nonvoluntary_switches(s), Some(42));
        assert_eq!(nonvoluntary_switches("Name:\tx\n"), None);
        assert_eq!(
            nonvoluntary_switches("nonvoluntary_ctxt_switches:\tmany\n"),
            None
        );
        let me = LoadId::own().unwrap();
        assert!(me.switches().is_some());
        assert!(me.cpu_ns().is_some());
        let gone = LoadId {
            tid: i32::MAX,
            ..me
        };
        assert_eq!(gone.switches(), None);
    }

    #[test]
    fn a_thread_read_from_outside_counts_its_own_cpu_time() {
        // A thread that spins until told, read from this one: its CPU
        // clock grows with its work, and a thread that held reads as held
        // however the two clocks were read.
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::{mpsc, Arc};
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let spinner = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                tx.send(LoadId::own()).unwrap();
                let mut x = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    x = std::hint::black_box(x.wrapping_add(1));
                }
            })
        };
        let id = rx.recv().unwrap().unwrap();
        let mut loads = Loads::new(vec![id]);
        assert_eq!(loads.switches.len(), 1);
        let a = loads.read();
        let t = std::time::Instant::now();
        // The spinner ran for some of this, wherever it was scheduled.
        while id.cpu_ns().unwrap() < a[0].cpu_ns.unwrap() + 1_000_000 {
            assert!(t.elapsed().as_secs() < 60, "the spinner never ran");
            std::thread::yield_now();
        }
        let b = loads.read();
        stop.store(true, Ordering::Relaxed);
        spinner.join().unwrap();
        assert!(b[0].cpu_ns.unwrap() >= a[0].cpu_ns.unwrap() + 1_000_000);
        assert!(b[0].wall_ns > a[0].wall_ns);
        // Whatever the verdict on a busy host, the readings were taken and
        // the last switch count stays known.
        let _ = loads.lost(&a, &b);
        assert!(loads.switches[0].is_some());
        // A lone reading (a thread added mid-point) judges nothing.
        assert_eq!(loads.lost(&[], &b), None);
    }
}
