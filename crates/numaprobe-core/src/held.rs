//! Whether a measuring thread held its CPU through a sample.
//!
//! A sample is timed with the wall clock, so every nanosecond the thread
//! spent off its CPU (another task ran, or the hypervisor ran another
//! guest's vCPU) is counted as if the memory had been that slow: on a busy
//! machine a latency figure grows with the load, uniformly enough that its
//! spread stays small. The kernel knows better: it counts the thread's own
//! CPU time (`CLOCK_THREAD_CPUTIME_ID`, which leaves out the steal time of a
//! VM whose kernel accounts it) and the times the scheduler took the CPU
//! away (`ru_nivcsw` of `getrusage(RUSAGE_THREAD)`). Read around a sample,
//! they tell a sample that held its CPU from one that did not; the latter is
//! set aside ([`crate::stats::repeat_held`]), never averaged in.
//!
//! What a lost CPU does to a sample is the time it adds: wall time less
//! the thread's CPU time. A switch is judged by that time, not counted as
//! a loss of its own: a kernel worker, a timer's task or the coordinating
//! thread of a team runs for microseconds, which moves a sample of
//! milliseconds by far less than [`OFF_CPU_SHARE`]; on a machine whose
//! every CPU runs a measuring thread, every such wake-up switches one of
//! them out, so counting each switch would set aside nearly every sample
//! of a quiet machine.
//!
//! Both readings are system calls of well under a microsecond, taken once
//! before and once after a sample of a millisecond or more.

use serde::{Deserialize, Serialize};

/// Why a sample was set aside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lost {
    /// The scheduler switched the thread out, and the time it spent off
    /// its CPU is more than [`OFF_CPU_SHARE`] of the sample.
    Preempted,
    /// No switch was counted, but the wall time exceeds the thread's CPU
    /// time by more than [`OFF_CPU_SHARE`] (and [`OFF_CPU_FLOOR_NS`]): the
    /// vCPU was stolen, or interrupts took the CPU.
    OffCpu,
}

impl Lost {
    /// The reason in a few words, for notes and flags.
    pub fn words(self) -> &'static str {
        match self {
            Lost::Preempted => "preempted",
            Lost::OffCpu => "off its CPU (stolen or interrupted)",
        }
    }
}

/// The share of a sample's wall time the thread may spend off its CPU
/// (switched out for another task, timer ticks, a device interrupt or two)
/// before the sample is set aside. A kept sample then reads at most 2 %
/// slow for the time it lost: a fifth of the spread at which a figure is
/// starred ([`crate::stats::UNSTABLE_CV`]), so what is kept cannot make a
/// figure look unstable, nor a steady one shift past its own noise.
pub const OFF_CPU_SHARE: f64 = 0.02;

/// ... and, for a sample in which no switch was counted, the least
/// absolute time off the CPU that counts, so that the readings' own cost
/// never sets a short sample aside. A switch means another task ran on
/// the CPU: its time is judged on the share alone, so that a switch in a
/// sample of a few microseconds (a cache-line round trip) is never kept.
pub const OFF_CPU_FLOOR_NS: u64 = 50_000;

/// What the kernel said of one sample: its wall time, the thread's CPU time
/// over it, and the involuntary switches in it (all zero: nothing read, an
/// empty sample that lost nothing).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hold {
    pub wall_ns: u64,
    pub cpu_ns: u64,
    pub switches: u64,
}

impl Hold {
    /// None when the thread held its CPU through the sample, or was off
    /// it for no more than [`OFF_CPU_SHARE`] of it (and, without a switch,
    /// [`OFF_CPU_FLOOR_NS`]); else why not.
    pub fn lost(&self) -> Option<Lost> {
        let off = self.wall_ns.saturating_sub(self.cpu_ns);
        let share = (self.wall_ns as f64 * OFF_CPU_SHARE) as u64;
        if self.switches > 0 {
            return (off > share).then_some(Lost::Preempted);
        }
        (off > share.max(OFF_CPU_FLOOR_NS)).then_some(Lost::OffCpu)
    }
}

/// The readings taken when a sample starts; [`Probe::stop`] ends it.
#[derive(Debug, Clone, Copy)]
pub struct Probe {
    wall_ns: u64,
    cpu_ns: Option<u64>,
    switches: Option<u64>,
}

impl Probe {
    /// Read the thread's clocks before a sample (on the measuring thread).
    #[inline]
    pub fn start() -> Probe {
        let switches = involuntary_switches();
        let cpu_ns = thread_cpu_ns();
        Probe {
            wall_ns: crate::timer::monotonic_raw_ns(),
            cpu_ns,
            switches,
        }
    }

    /// Read them again after it (on the same thread). A reading the kernel
    /// refused counts as held: nothing is set aside on a guess.
    #[inline]
    pub fn stop(&self) -> Hold {
        let wall_ns = crate::timer::monotonic_raw_ns().saturating_sub(self.wall_ns);
        let cpu_ns = match (self.cpu_ns, thread_cpu_ns()) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => wall_ns,
        };
        let switches = match (self.switches, involuntary_switches()) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => 0,
        };
        Hold {
            wall_ns,
            cpu_ns,
            switches,
        }
    }

    /// [`Probe::stop`]'s verdict.
    #[inline]
    pub fn lost(&self) -> Option<Lost> {
        self.stop().lost()
    }
}

/// How long a measurement refills what another task evicted, once its
/// thread gets the CPU back: on the development VM, a 1 GiB chase's first
/// samples after a busy loop's slice read up to 26 % slow, and the excess
/// was gone after about 4,000 steps (1 ms) of chasing. The page-table
/// lines, the TLB and the caches a chase relies on are what the other task
/// took; the memory's own latency did not change.
pub const REWARM_NS: f64 = 1e6;

/// At most this many refills before one sample: a thread switched out
/// again during every refill is on a CPU it will not keep, and the sample
/// that follows is judged as any other.
pub const MOST_REWARMS: u32 = 4;

/// Notices when the thread got its CPU back after the scheduler ran
/// another task on it, so a measurement can refill what that task evicted
/// before it times again ([`rewarm`]).
#[derive(Debug, Clone, Copy)]
pub struct Comeback {
    switches: Option<u64>,
    read: fn() -> Option<u64>,
}

impl Comeback {
    /// Start watching (on the measuring thread).
    pub fn new() -> Comeback {
        Comeback::reading(involuntary_switches)
    }

    /// Watching the count `read` gives.
    fn reading(read: fn() -> Option<u64>) -> Comeback {
        Comeback {
            switches: read(),
            read,
        }
    }

    /// Whether the thread was switched out since the last call (or since
    /// [`Comeback::new`]). A reading the kernel refused says no: nothing
    /// is refilled on a guess.
    pub fn switched_out(&mut self) -> bool {
        let now = (self.read)();
        let out = moved(self.switches, now);
        self.switches = now;
        out
    }
}

/// A switch count that moved between two readings the kernel gave.
fn moved(before: Option<u64>, now: Option<u64>) -> bool {
    matches!((before, now), (Some(a), Some(b)) if a != b)
}

impl Default for Comeback {
    fn default() -> Self {
        Comeback::new()
    }
}

/// Before a timed sample: while the thread was switched out since it last
/// looked, `warm` (an untimed stretch of the same work) runs again, at most
/// [`MOST_REWARMS`] times. Returns how many times it ran.
pub fn rewarm(mut switched_out: impl FnMut() -> bool, mut warm: impl FnMut()) -> u32 {
    let mut n = 0;
    while n < MOST_REWARMS && switched_out() {
        warm();
        n += 1;
    }
    n
}

/// The calling thread's CPU time in ns.
pub fn thread_cpu_ns() -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec for the call to fill.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// The calling thread's involuntary context switches so far.
pub fn involuntary_switches() -> Option<u64> {
    // SAFETY: an all-zero rusage is a valid value for the call to fill.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: ru is a valid rusage; RUSAGE_THREAD exists since Linux 2.6.26.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    (rc == 0).then_some(ru.ru_nivcsw.max(0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hold(wall_ns: u64, cpu_ns: u64, switches: u64) -> Hold {
        Hold {
            wall_ns,
            cpu_ns,
            switches,
        }
    }

    #[test]
    fn a_switch_sets_a_sample_aside_by_the_time_it_cost() {
        // 10 ms sample switched out: 200 us off (2 %) is kept, a
        // microsecond more is not.
        assert_eq!(hold(10_000_000, 9_800_000, 1).lost(), None);
        assert_eq!(hold(10_000_000, 9_799_999, 1).lost(), Some(Lost::Preempted));
        // A kernel worker's few microseconds in a 100 ms sample: kept,
        // however many times.
        assert_eq!(hold(100_000_000, 99_990_000, 3).lost(), None);
        // A scheduler slice lost in it: set aside.
        assert_eq!(
            hold(100_000_000, 97_000_000, 1).lost(),
            Some(Lost::Preempted)
        );
        // A switch counts past the share alone, without the floor: 20 us
        // off in a 100 us sample (a cache-line round trip's) is lost,
        // where without a switch the floor keeps it.
        assert_eq!(hold(100_000, 80_000, 1).lost(), Some(Lost::Preempted));
        assert_eq!(hold(100_000, 80_000, 0).lost(), None);
        assert_eq!(hold(100_000, 97_999, 1).lost(), Some(Lost::Preempted));
        assert_eq!(hold(100_000, 98_000, 1).lost(), None);
        assert_eq!(hold(1_000_000, 1_000_000, 1).lost(), None);
        assert_eq!(hold(1_000_000, 1_000_000, 0).lost(), None);
    }

    #[test]
    fn time_off_the_cpu_counts_past_its_share_and_floor() {
        // 10 ms sample: 2 % is 200 us.
        assert_eq!(hold(10_000_000, 9_800_000, 0).lost(), None);
        assert_eq!(hold(10_000_000, 9_799_999, 0).lost(), Some(Lost::OffCpu));
        // 1 ms sample: the 50 us floor is above 2 % (20 us).
        assert_eq!(hold(1_000_000, 950_000, 0).lost(), None);
        assert_eq!(hold(1_000_000, 949_999, 0).lost(), Some(Lost::OffCpu));
        // CPU time above wall time (clock granularity) is no loss.
        assert_eq!(hold(1_000_000, 1_000_100, 0).lost(), None);
    }

    #[test]
    fn work_is_refilled_while_the_thread_was_switched_out_and_no_longer() {
        // Not switched out: no refill.
        let mut warmed = 0;
        assert_eq!(rewarm(|| false, || warmed += 1), 0);
        assert_eq!(warmed, 0);
        // Switched out once before the sample: one refill, then it looks
        // again and finds none.
        let mut answers = vec![true, false].into_iter();
        let mut asked = 0;
        let n = rewarm(
            || {
                asked += 1;
                answers.next().unwrap()
            },
            || warmed += 1,
        );
        assert_eq!((n, warmed, asked), (1, 1, 2));
        // Switched out during every refill: it stops after the most.
        warmed = 0;
        assert_eq!(rewarm(|| true, || warmed += 1), MOST_REWARMS);
        assert_eq!(warmed, MOST_REWARMS);
    }

    #[test]
    fn a_comeback_is_a_count_that_moved_and_never_a_refused_reading() {
        assert!(moved(Some(3), Some(4)));
        assert!(!moved(Some(4), Some(4)));
        assert!(!moved(None, Some(4)));
        assert!(!moved(Some(4), None));
        assert!(!moved(None, None));
        // A count that moves between looks is seen once; a refused
        // reading is never a switch, nor is the first one after it.
        thread_local!(static COUNT: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(Some(7)) });
        fn count() -> Option<u64> {
            COUNT.with(|c| c.get())
        }
        let set = |v| COUNT.with(|c| c.set(v));
        let mut c = Comeback::reading(count);
        assert!(!c.switched_out());
        set(Some(9));
        assert!(c.switched_out());
        assert!(!c.switched_out());
        set(None);
        assert!(!c.switched_out());
        set(Some(10));
        assert!(!c.switched_out());
        set(Some(11));
        assert!(c.switched_out());
        // The live reader exists on Linux.
        assert!(Comeback::new().switches.is_some());
    }

    #[test]
    fn a_busy_thread_on_an_idle_cpu_holds_it() {
        // Spin for 2 ms of CPU: no I/O, no sleep. The test cannot demand
        // "held" on a busy host, so it checks what must hold anywhere: the
        // readings exist and CPU time never exceeds wall time by more than
        // a tick.
        let p = Probe::start();
        let t = std::time::Instant::now();
        let mut x = 0u64;
        while t.elapsed() < std::time::Duration::from_millis(2) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let h = p.stop();
        assert!(thread_cpu_ns().is_some() && involuntary_switches().is_some());
        assert!(h.wall_ns >= 2_000_000, "{h:?}");
        assert!(h.cpu_ns <= h.wall_ns + 4_000_000, "{h:?}");
        // A thread that spun for 2 ms ran for some of them.
        assert!(h.cpu_ns > 0, "{h:?}");
    }

    #[test]
    fn a_sleeping_thread_is_off_its_cpu() {
        // A sleep is the one loss a test can cause on any host.
        let p = Probe::start();
        std::thread::sleep(std::time::Duration::from_millis(5));
        let h = p.stop();
        assert!(h.lost().is_some(), "{h:?}");
        assert!(p.lost().is_some(), "{h:?}");
        // The thread's CPU time leaves the sleep out: at least one of its
        // 5 ms is wall time alone.
        assert!(h.cpu_ns + 1_000_000 <= h.wall_ns, "{h:?}");
        assert_eq!(Lost::Preempted.words(), "preempted");
        assert!(Lost::OffCpu.words().starts_with("off its CPU"));
    }

    /// The thread's CPU time in µs as `getrusage` reports it: a reading
    /// apart from the probe's clock, to know when a second has passed.
    fn rusage_cpu_us() -> u64 {
        // SAFETY: an all-zero rusage is a valid value for the call to fill.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: ru is a valid rusage.
        assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) }, 0);
        let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
        us(ru.ru_utime) + us(ru.ru_stime)
    }

    #[test]
    fn a_thread_past_a_second_of_cpu_time_counts_the_whole_seconds() {
        // A measuring thread of a long run has used seconds of CPU: its
        // readings carry whole seconds, which a sample's CPU time must
        // count. Spin until getrusage says 1.1 s more were used.
        let a = thread_cpu_ns().unwrap();
        let start = rusage_cpu_us();
        let mut x = 0u64;
        while rusage_cpu_us() < start + 1_100_000 {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let b = thread_cpu_ns().unwrap();
        assert!(b >= a + 1_000_000_000, "{a} ns, then {b} ns");
    }

    /// The involuntary switches of the calling thread as procfs reports
    /// them: a reading apart from the probe's.
    fn nonvoluntary_switches() -> u64 {
        let status = std::fs::read_to_string("/proc/thread-self/status").unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("nonvoluntary_ctxt_switches:"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    #[test]
    fn a_thread_sharing_its_cpu_with_a_busy_one_is_preempted() {
        // Two busy threads on one CPU: the scheduler takes it from this one
        // at the end of a time slice, an involuntary switch. The sample
        // ends once the rival has run on that CPU since it began, which it
        // can only do while this thread is off it: a switch that merely
        // counted (the kernel's migration thread moving the rival here, a
        // worker of a few microseconds) is not yet the preemption this
        // test is about.
        use crate::placement::{current_affinity, set_current_affinity};
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        use std::sync::Arc;
        let cpu = current_affinity().unwrap()[0];
        set_current_affinity(&[cpu]).unwrap();
        let done = Arc::new(AtomicBool::new(false));
        let turns = Arc::new(AtomicU64::new(0));
        let rival = {
            let (done, turns) = (done.clone(), turns.clone());
            std::thread::spawn(move || {
                set_current_affinity(&[cpu]).unwrap();
                while !done.load(Ordering::Relaxed) {
                    turns.fetch_add(1, Ordering::Relaxed);
                    std::hint::spin_loop();
                }
            })
        };
        // The rival is on this CPU once it counts.
        while turns.load(Ordering::Relaxed) == 0 {
            std::hint::spin_loop();
        }
        let before = nonvoluntary_switches();
        let p = Probe::start();
        let seen = turns.load(Ordering::Relaxed);
        while turns.load(Ordering::Relaxed) == seen {
            std::hint::spin_loop();
        }
        let h = p.stop();
        let lost = p.lost();
        let after = nonvoluntary_switches();
        done.store(true, Ordering::Relaxed);
        rival.join().unwrap();
        assert!(h.switches >= 1, "{h:?}");
        assert!(after > before, "procfs counted no switch: {h:?}");
        assert_eq!(h.lost(), Some(Lost::Preempted), "{h:?}");
        assert_eq!(lost, Some(Lost::Preempted), "{h:?}");
    }
}
