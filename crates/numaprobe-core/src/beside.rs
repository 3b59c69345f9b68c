//! What other tasks did on this machine while a figure was measured.
//!
//! Setting aside the samples in which a measuring thread lost its CPU
//! ([`crate::held`]) keeps the scheduler's share out of a figure, but not
//! what other tasks do to the memory system while ours runs: their traffic
//! queues at the same memory controllers, and their data evicts our page
//! tables from the shared caches, so a chase reads slower and a stream
//! moves less. Without uncore counters (none in most VMs) that traffic
//! cannot be seen from here; what can is how much CPU other tasks used
//! beside the measurement: every CPU's busy time in `/proc/stat` less this
//! process's own (`getrusage(RUSAGE_SELF)`). A figure measured while other
//! tasks kept [`BESIDE_WARN_CPUS`] or more busy says so (a busy loop takes
//! no memory bandwidth, a build or a stream much: from here they look the
//! same, so the figure is starred rather than trusted).

use std::time::Instant;

/// Other tasks' CPUs kept busy, on average over a figure's measurement, at
/// which the figure is flagged.
pub const BESIDE_WARN_CPUS: f64 = 0.5;

/// The readings taken when a measurement starts.
#[derive(Debug, Clone, Copy)]
pub struct Watch {
    /// Signed, so that a test's watch may start before boot.
    busy_ticks: i128,
    own_ns: u64,
    at: Instant,
}

/// Busy ticks of all CPUs together, from `/proc/stat`'s first line (`cpu
/// user nice system idle iowait irq softirq steal ...`): user, nice,
/// system, irq and softirq. Idle, iowait and steal are not work done here.
pub fn busy_ticks(stat: &str) -> Option<u64> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(7)
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    // Ticks that add past u64 are no reading (None), never a wrapped one.
    if v.len() != 7 {
        return None;
    }
    [v[0], v[1], v[2], v[5], v[6]]
        .into_iter()
        .try_fold(0u64, u64::checked_add)
}

/// CPUs kept busy by others over `wall_s`: busy CPU time less ours.
pub fn others_busy(busy_s: f64, own_s: f64, wall_s: f64) -> Option<f64> {
    (wall_s > 0.0).then(|| ((busy_s - own_s) / wall_s).max(0.0))
}

/// The flag of a figure measured beside `others` busy CPUs (None below
/// [`BESIDE_WARN_CPUS`]).
pub fn flag(others: f64) -> Option<String> {
    (others >= BESIDE_WARN_CPUS).then(|| {
        format!(
            "memory traffic from other tasks: they kept {others:.1} CPUs busy beside it, and what they do to memory and the shared caches moves this figure (a busy loop takes no memory bandwidth, a build or a stream much; from here they look the same); measure on a quieter machine, or compare with a quieter run"
        )
    })
}

/// Other tasks' busy CPUs beside one step of a longer phase: the step's
/// own reading where it lasted long enough for the tick counters, else the
/// phase's so far (a step that reaches its spread target in five samples
/// takes milliseconds).
pub fn beside_step(step: Option<Watch>, phase: Option<Watch>) -> Option<f64> {
    step.and_then(|w| w.others_busy_cpus())
        .or_else(|| phase.and_then(|w| w.others_busy_cpus()))
}

/// Add the star of a figure measured beside `others` busy CPUs ([`flag`])
/// to its `flags`, unless one is there; true when it was added.
pub fn mark(flags: &mut Vec<String>, others: Option<f64>) -> bool {
    let before = flags.len();
    crate::stats::flags::merge(flags, others.and_then(flag).into_iter().collect());
    flags.len() > before
}

/// Judge one step by its own watch or, too short for the ticks, the
/// phase's ([`beside_step`]) and star its `flags` ([`mark`]); the busy
/// CPUs judged, for a figure that records them beside its flags.
pub fn mark_step(
    flags: &mut Vec<String>,
    step: Option<Watch>,
    phase: Option<Watch>,
) -> Option<f64> {
    let others = beside_step(step, phase);
    mark(flags, others);
    others
}

/// CPU time of this process and of the children it has waited for (a
/// program `tune` runs is ours, not another task), ns.
fn own_cpu_ns() -> Option<u64> {
    let of = |who: libc::c_int| -> Option<u64> {
        // SAFETY: an all-zero rusage is a valid value for the call to fill.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: ru is a valid rusage.
        if unsafe { libc::getrusage(who, &mut ru) } != 0 {
            return None;
        }
        let us = |t: libc::timeval| t.tv_sec.max(0) as u64 * 1_000_000 + t.tv_usec.max(0) as u64;
        Some((us(ru.ru_utime) + us(ru.ru_stime)) * 1000)
    };
    Some(of(libc::RUSAGE_SELF)? + of(libc::RUSAGE_CHILDREN).unwrap_or(0))
}

/// The rate of `/proc/stat`'s ticks (the kernel's `USER_HZ`).
fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions. For the tick rate it cannot
    // fail: glibc answers with the kernel's AT_CLKTCK, musl with 100.
    unsafe { libc::sysconf(libc::_SC_CLK_TCK) as f64 }
}

impl Watch {
    /// Read the live machine's counters (always `/proc` of this machine:
    /// the measurement is this machine's, whatever `--sysfs-root` says).
    /// None where they cannot be read.
    pub fn start() -> Option<Watch> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        Some(Watch {
            busy_ticks: busy_ticks(&stat)?.into(),
            own_ns: own_cpu_ns()?,
            at: Instant::now(),
        })
    }

    /// Other tasks' busy CPUs on average since [`Watch::start`]; None
    /// where the counters cannot be read again, or over an interval too
    /// short for the kernel's tick counters to say anything (a tenth of a
    /// second: ten ticks at the usual 100 Hz).
    pub fn others_busy_cpus(&self) -> Option<f64> {
        let wall_s = self.at.elapsed().as_secs_f64();
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        self.others_until(busy_ticks(&stat)?, own_cpu_ns()?, wall_s)
    }

    /// Other tasks' busy CPUs from this watch's readings to `busy_ticks`
    /// and `own_ns` read `wall_s` later, to two decimals; None below a
    /// tenth of a second.
    fn others_until(&self, busy_ticks: u64, own_ns: u64, wall_s: f64) -> Option<f64> {
        if wall_s < 0.1 {
            return None;
        }
        let busy = (i128::from(busy_ticks) - self.busy_ticks).max(0);
        let own = own_ns.saturating_sub(self.own_ns);
        others_busy(busy as f64 / ticks_per_second(), own as f64 / 1e9, wall_s)
            .map(|x| (x * 100.0).round() / 100.0)
    }
}

/// Watches with a past of their own, for the tests of every figure
/// judged beside other tasks.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// A watch as if started `ago` seconds back, the machine having been
    /// busy for `ticks` more ticks since than now (this process's own time
    /// as now, so they read as others').
    pub(crate) fn started_before(ago: f64, ticks: u64) -> Watch {
        let now = Watch::start().expect("/proc/stat and getrusage on Linux");
        Watch {
            // A machine booted a minute ago has not counted `ticks` yet:
            // the start may lie before its boot.
            busy_ticks: now.busy_ticks - i128::from(ticks),
            own_ns: now.own_ns,
            at: now.at - std::time::Duration::from_secs_f64(ago),
        }
    }

    /// A watch that has seen no time yet however slowly the test runs
    /// (started an hour ahead): a step too short for the tick counters.
    pub(crate) fn just_started() -> Watch {
        let now = Watch::start().expect("/proc/stat and getrusage on Linux");
        Watch {
            at: now.at + std::time::Duration::from_secs(3600),
            ..now
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_ticks_are_user_nice_system_irq_softirq() {
        let stat = "cpu  100 20 30 4000 50 6 7 80 0 0\ncpu0 50 10 15 2000 25 3 3 40 0 0\n";
        assert_eq!(busy_ticks(stat), Some(100 + 20 + 30 + 6 + 7));
        assert_eq!(busy_ticks("cpu0 1 2 3 4 5 6 7 8\n"), None);
        assert_eq!(busy_ticks("cpu  1 2 3\n"), None);
        assert_eq!(busy_ticks("cpu  1 2 x 4 5 6 7 8\n"), None);
        let max = u64::MAX;
        assert_eq!(busy_ticks(&format!("cpu  {max} 1 0 0 0 0 0 0\n")), None);
        assert_eq!(
            busy_ticks(&format!("cpu  {max} 0 0 9 9 0 0 0\n")),
            Some(max)
        );
    }

    #[test]
    fn others_are_the_busy_time_less_ours_per_second() {
        assert_eq!(others_busy(6.0, 2.0, 2.0), Some(2.0));
        // Ours counted in full, theirs nothing: never below zero.
        assert_eq!(others_busy(1.0, 1.5, 1.0), Some(0.0));
        assert_eq!(others_busy(1.0, 0.0, 0.0), None);
    }

    #[test]
    fn a_figure_beside_half_a_busy_cpu_or_more_is_flagged() {
        assert_eq!(flag(0.49), None);
        let f = flag(0.5).unwrap();
        assert!(
            f.starts_with("memory traffic from other tasks: they kept 0.5 CPUs busy"),
            "{f}"
        );
        assert!(flag(3.86).unwrap().contains("kept 3.9 CPUs"));
    }

    #[test]
    fn a_star_is_added_once_and_only_beside_busy_cpus() {
        let mut flags = vec!["unstable: CV 12 %".to_string()];
        assert!(!mark(&mut flags, None));
        assert!(!mark(&mut flags, Some(0.2)));
        assert_eq!(flags.len(), 1);
        assert!(mark(&mut flags, Some(1.7)));
        assert_eq!(flags.len(), 2);
        assert!(flags[1].contains("kept 1.7 CPUs busy"), "{flags:?}");
        // A figure judged twice is starred once.
        assert!(!mark(&mut flags, Some(3.0)));
        assert_eq!(flags.len(), 2);
    }

    use super::testing::{just_started, started_before};

    #[test]
    fn a_step_is_judged_by_its_own_reading_else_by_the_phase_so_far() {
        let hz = ticks_per_second();
        let phase = started_before(2.0, (4.0 * hz) as u64);
        let long_step = started_before(1.0, hz as u64);
        let short_step = Watch::start().unwrap();
        // The step's own reading wins where it lasted long enough: about
        // one CPU (busy only grows, so at least that less our own).
        let own = beside_step(Some(long_step), Some(phase)).unwrap();
        assert!((0.8..1.9).contains(&own), "{own}");
        // Too short for the ticks: the phase's two CPUs stand in.
        let phase_only = beside_step(Some(short_step), Some(phase)).unwrap();
        assert!(phase_only >= 1.8, "{phase_only}");
        assert_eq!(beside_step(Some(short_step), None), None);
        assert_eq!(beside_step(None, None), None);
    }

    /// A watch started `ago` seconds back, other tasks having kept `cpus`
    /// busy since. Reaching back 100 s or more, a test thread that waits a
    /// second for its CPU, every CPU busy meanwhile, moves the reading by a
    /// hundredth per CPU at most.
    fn busy_for(ago: f64, cpus: f64) -> Watch {
        started_before(ago, (cpus * ago * ticks_per_second()) as u64)
    }

    /// A step's flags of its own, before it is judged beside other tasks.
    fn unstable() -> Vec<String> {
        vec!["unstable: CV 12.0 %".to_string()]
    }

    #[test]
    fn a_long_step_is_judged_by_its_own_watch_whatever_the_phase_says() {
        // A quiet step beside a busy phase: the step's near nothing, no star.
        let mut flags = unstable();
        let quiet = busy_for(100.0, 0.0);
        let others = mark_step(&mut flags, Some(quiet), Some(busy_for(200.0, 4.0)));
        assert!(others.unwrap() < 0.1, "{others:?}");
        assert_eq!(flags, unstable());
        // A step beside one and a half busy CPUs: that figure, and its star.
        let others = mark_step(&mut flags, Some(busy_for(100.0, 1.5)), None).unwrap();
        assert!((1.45..1.6).contains(&others), "{others}");
        assert_eq!(flags, [unstable()[0].clone(), flag(others).unwrap()]);
    }

    #[test]
    fn a_step_too_short_for_the_ticks_is_judged_and_starred_by_the_phase() {
        let phase = Some(busy_for(100.0, 3.0));
        let mut flags = unstable();
        let others = mark_step(&mut flags, Some(just_started()), phase).unwrap();
        assert!((2.95..3.1).contains(&others), "{others}");
        // The step's own flags stay, the star with its reason beside them.
        assert_eq!(flags, [unstable()[0].clone(), flag(others).unwrap()]);
        assert!(
            flags[1].starts_with("memory traffic from other tasks"),
            "{flags:?}"
        );
        // Judged again, it is starred once.
        let again = mark_step(&mut flags, Some(just_started()), phase);
        assert!((2.95..3.1).contains(&again.unwrap()), "{again:?}");
        assert_eq!(flags.len(), 2, "{flags:?}");
    }

    #[test]
    fn a_step_no_watch_can_judge_returns_none_and_leaves_its_flags() {
        let mut flags = unstable();
        let short = || Some(just_started());
        assert_eq!(mark_step(&mut flags, short(), None), None);
        assert_eq!(mark_step(&mut flags, None, short()), None);
        assert_eq!(mark_step(&mut flags, short(), short()), None);
        assert_eq!(mark_step(&mut flags, None, None), None);
        assert_eq!(flags, unstable());
    }

    #[test]
    fn our_own_cpu_time_counts_what_this_thread_spent() {
        let thread_ns = || {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: ts is a valid timespec for the call to fill.
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
            ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
        };
        let before = own_cpu_ns().unwrap();
        let t0 = thread_ns();
        let mut x = 0u64;
        while thread_ns() - t0 < 50_000_000 {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let spent = own_cpu_ns().unwrap() - before;
        // getrusage counts in microseconds, a tick's rounding at most.
        assert!(spent >= 40_000_000, "{spent} ns");
    }

    #[test]
    fn the_counters_read_again_give_others_cpus_to_two_decimals() {
        let hz = ticks_per_second();
        let w = Watch {
            busy_ticks: 1_000,
            own_ns: 5_000_000_000,
            at: Instant::now(),
        };
        // Two CPU-seconds busy in one second, 0.766 of them ours (whole
        // seconds of our own time count as well as their fractions).
        let busy = 1_000 + (2.0 * hz) as u64;
        assert_eq!(w.others_until(busy, 5_766_000_000, 1.0), Some(1.23));
        assert_eq!(
            w.others_until(busy + hz as u64, 6_500_000_000, 1.0),
            Some(1.5)
        );
        // Over two seconds, half as many.
        assert_eq!(w.others_until(busy, 5_000_000_000, 2.0), Some(1.0));
        // A tenth of a second is the least the ticks say anything of.
        assert_eq!(w.others_until(busy, 5_000_000_000, 0.1), Some(20.0));
        assert_eq!(w.others_until(busy, 5_000_000_000, 0.0999), None);
    }

    /// /proc/stat's total ticks over all CPUs since boot, and how many CPUs.
    fn ticks_since_boot() -> (f64, usize) {
        let stat = std::fs::read_to_string("/proc/stat").unwrap();
        let total = stat
            .lines()
            .next()
            .unwrap()
            .split_whitespace()
            .skip(1)
            .take(8)
            .map(|x| x.parse::<f64>().unwrap())
            .sum();
        (
            total,
            stat.lines()
                .filter(|l| l.starts_with("cpu") && !l.starts_with("cpu "))
                .count(),
        )
    }

    #[test]
    fn the_tick_rate_is_the_one_proc_stat_counts_in() {
        // Every CPU counts a tick of some kind (busy, idle, waiting or
        // stolen) at the kernel's rate since boot: the rate read from
        // those counters and the uptime is the one busy ticks are divided
        // by, within a factor of two (CPUs brought online late count less).
        let uptime: f64 = std::fs::read_to_string("/proc/uptime")
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let (total, cpus) = ticks_since_boot();
        let rate = total / (uptime * cpus as f64);
        let hz = ticks_per_second();
        assert!(
            (hz / 2.0..hz * 2.0).contains(&rate),
            "{rate} ticks a second, {hz} read"
        );
    }

    /// This process's own CPU time (`who`: itself or its waited-for
    /// children) in ns, read apart from `own_cpu_ns`.
    fn rusage_ns(who: libc::c_int) -> u128 {
        // SAFETY: an all-zero rusage is a valid value for the call to fill.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: ru is a valid rusage.
        assert_eq!(unsafe { libc::getrusage(who, &mut ru) }, 0);
        let d = |t: libc::timeval| {
            std::time::Duration::from_secs(t.tv_sec as u64)
                + std::time::Duration::from_micros(t.tv_usec as u64)
        };
        (d(ru.ru_utime) + d(ru.ru_stime)).as_nanos()
    }

    #[test]
    fn our_own_cpu_time_is_ours_and_our_childrens_user_and_system_time() {
        // Children that spun past a second of CPU time: theirs is ours
        // once waited for (a program `tune` runs is no other task), whole
        // seconds and all.
        for _ in 0..1000 {
            if rusage_ns(libc::RUSAGE_CHILDREN) >= 1_100_000_000 {
                break;
            }
            let spin = "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done";
            let ok = std::process::Command::new("sh").args(["-c", spin]).status();
            assert!(ok.unwrap().success());
        }
        let children = rusage_ns(libc::RUSAGE_CHILDREN);
        assert!(children >= 1_100_000_000, "{children} ns");
        // Both only grow: ours read between two readings of both lies
        // between their sums.
        let before = rusage_ns(libc::RUSAGE_SELF) + rusage_ns(libc::RUSAGE_CHILDREN);
        let own = own_cpu_ns().unwrap() as u128;
        let after = rusage_ns(libc::RUSAGE_SELF) + rusage_ns(libc::RUSAGE_CHILDREN);
        assert!(
            (before..=after).contains(&own),
            "{before} <= {own} <= {after}"
        );
    }

    #[test]
    fn the_live_counters_read_and_a_short_interval_says_nothing() {
        let w = Watch::start().expect("/proc/stat and getrusage on Linux");
        assert_eq!(w.others_busy_cpus(), None);
    }
}
