//! The clock: `CLOCK_MONOTONIC_RAW`, the invariant TSC calibrated against it,
//! the Arm generic counter, and the timer's own overhead and resolution.
//!
//! Why both: `CLOCK_MONOTONIC_RAW` is the reference (not slewed by NTP, so a
//! nanosecond is the hardware's nanosecond), but through the vDSO it still
//! costs tens of nanoseconds and on some virtual machines a full syscall. The
//! TSC costs a few nanoseconds and, where it is invariant (`constant_tsc` and
//! `nonstop_tsc`: same rate in every P- and C-state, synchronised across
//! cores), it is as good a ruler once we know its rate, which we measure
//! against the raw clock instead of trusting the nominal frequency. Without an
//! invariant TSC we use the raw clock directly.
//!
//! On aarch64 the generic timer's virtual counter (`CNTVCT_EL0`) is readable
//! from user space and runs at the fixed rate `CNTFRQ_EL0` states in every
//! power state on every core; the vDSO's clock reads the same counter and adds
//! a conversion. Its rate is set by the platform, though: 1 GHz on Armv8.6+
//! cores, but 25 MHz (40 ns a tick) on Ampere Altra and 100-200 MHz on others.
//! numaprobe times samples of a millisecond and more, so a tick of up to
//! [`MAX_COUNTER_TICK_NS`] is at most 0.01 % of a sample; a coarser counter
//! (none known, but firmware sets the rate) leaves the OS clock in charge.
//!
//! Every interval returned has the cost of reading the clock twice
//! subtracted (the overhead is the median of many back-to-back reads).

use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// `clock_gettime(CLOCK_MONOTONIC_RAW)` in nanoseconds.
#[inline]
pub fn monotonic_raw_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec; CLOCK_MONOTONIC_RAW exists on every
    // Linux since 2.6.28, so the call cannot fail.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// True when `/proc/cpuinfo` text lists both `constant_tsc` and `nonstop_tsc`
/// in its flags.
pub fn tsc_is_invariant(cpuinfo: &str) -> bool {
    let flags = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, f)| f.split_whitespace().collect::<Vec<_>>())
        .unwrap_or_default();
    flags.contains(&"constant_tsc") && flags.contains(&"nonstop_tsc")
}

/// The coarsest Arm generic counter tick (ns) numaprobe times with; see the
/// module documentation.
pub const MAX_COUNTER_TICK_NS: f64 = 100.0;

/// Which clock a [`Timer`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockSource {
    /// `rdtsc`, calibrated against `CLOCK_MONOTONIC_RAW`.
    Tsc,
    /// `clock_gettime(CLOCK_MONOTONIC_RAW)`.
    MonotonicRaw,
    /// The Arm generic timer's virtual counter (`CNTVCT_EL0`) at the rate
    /// `CNTFRQ_EL0` states.
    ArmCounter,
}

impl ClockSource {
    /// How the clock is described to a person.
    pub fn describe(self) -> &'static str {
        match self {
            ClockSource::Tsc => "invariant TSC (rdtsc), calibrated against CLOCK_MONOTONIC_RAW",
            ClockSource::MonotonicRaw => "CLOCK_MONOTONIC_RAW (clock_gettime)",
            ClockSource::ArmCounter => "Arm generic counter (CNTVCT_EL0 at CNTFRQ_EL0)",
        }
    }
}

/// What a result records about the clock that produced it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimerInfo {
    pub source: ClockSource,
    /// Ticks per second of the CPU counter when the source is one: the TSC's
    /// measured rate, or the Arm counter's `CNTFRQ_EL0`. (The name is the
    /// schema's first, from when the TSC was the only counter.)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tsc_hz: Option<f64>,
    /// Cost of one start/stop pair, subtracted from every interval.
    pub overhead_ns: f64,
    /// The smallest step the clock can show, in ns: one counter tick, or
    /// `clock_getres` for the OS clock. 0 when unknown (older documents).
    #[serde(default)]
    pub resolution_ns: f64,
}

/// Whether an Arm generic counter at `hz` ticks per second is fine enough to
/// time with (see [`MAX_COUNTER_TICK_NS`]).
pub fn counter_serves(hz: u64) -> bool {
    hz > 0 && 1e9 / hz as f64 <= MAX_COUNTER_TICK_NS
}

/// `clock_getres(CLOCK_MONOTONIC_RAW)` in ns (1 when the call fails).
pub fn monotonic_raw_resolution_ns() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec.
    let rc = unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
    if rc == 0 {
        (ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64).max(1.0)
    } else {
        1.0
    }
}

/// A point in time in the timer's own ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Stamp(pub u64);

/// A calibrated clock. Cheap to copy; [`Timer::get`] calibrates once per
/// process.
#[derive(Debug, Clone, Copy)]
pub struct Timer {
    source: ClockSource,
    ns_per_tick: f64,
    overhead_ticks: f64,
}

impl Timer {
    /// The process-wide timer: the TSC where it is invariant, calibrated once
    /// (about 30 ms); on aarch64 the generic counter where its tick serves;
    /// the raw clock otherwise.
    pub fn get() -> &'static Timer {
        static T: OnceLock<Timer> = OnceLock::new();
        T.get_or_init(|| {
            if cfg!(target_arch = "aarch64") {
                let hz = arm::frequency();
                return if counter_serves(hz) {
                    Timer::arm_counter(hz)
                } else {
                    Timer::monotonic_raw()
                };
            }
            // Always the live machine's cpuinfo: the clock is this machine's,
            // whatever `--sysfs-root` says.
            let invariant = std::fs::read_to_string("/proc/cpuinfo")
                .map(|s| tsc_is_invariant(&s))
                .unwrap_or(false);
            if invariant && cfg!(target_arch = "x86_64") {
                Timer::tsc()
            } else {
                Timer::monotonic_raw()
            }
        })
    }

    /// A timer on the Arm generic counter at `hz` (its CNTFRQ_EL0). The rate
    /// is the architecture's promise, not an estimate, so nothing is
    /// calibrated.
    pub fn arm_counter(hz: u64) -> Timer {
        let mut t = Timer {
            source: ClockSource::ArmCounter,
            ns_per_tick: 1e9 / hz.max(1) as f64,
            overhead_ticks: 0.0,
        };
        t.overhead_ticks = t.measure_overhead();
        t
    }

    /// A timer on `CLOCK_MONOTONIC_RAW`.
    pub fn monotonic_raw() -> Timer {
        let mut t = Timer {
            source: ClockSource::MonotonicRaw,
            ns_per_tick: 1.0,
            overhead_ticks: 0.0,
        };
        t.overhead_ticks = t.measure_overhead();
        t
    }

    /// A timer on the TSC, its rate measured against `CLOCK_MONOTONIC_RAW`:
    /// three 10 ms windows, the median rate (one window may be stretched by a
    /// preemption between the two reads of its ends).
    fn tsc() -> Timer {
        let mut rates = [0.0f64; 3];
        for r in rates.iter_mut() {
            let (t0, c0) = (monotonic_raw_ns(), read_tsc());
            let mut t1 = t0;
            while t1 < t0 + 10_000_000 {
                t1 = monotonic_raw_ns();
            }
            let c1 = read_tsc();
            *r = (c1.wrapping_sub(c0)) as f64 / (t1 - t0) as f64;
        }
        rates.sort_by(f64::total_cmp);
        let ticks_per_ns = rates[1];
        if !(ticks_per_ns.is_finite() && ticks_per_ns > 0.0) {
            return Timer::monotonic_raw();
        }
        let mut t = Timer {
            source: ClockSource::Tsc,
            ns_per_tick: 1.0 / ticks_per_ns,
            overhead_ticks: 0.0,
        };
        t.overhead_ticks = t.measure_overhead();
        t
    }

    /// Median of 1001 back-to-back start/stop pairs, in ticks.
    fn measure_overhead(&self) -> f64 {
        let mut d: Vec<u64> = (0..1001)
            .map(|_| {
                let a = self.now();
                let b = self.now();
                b.0.saturating_sub(a.0)
            })
            .collect();
        d.sort_unstable();
        d[d.len() / 2] as f64
    }

    #[inline(always)]
    pub fn now(&self) -> Stamp {
        match self.source {
            ClockSource::Tsc => Stamp(read_tsc()),
            ClockSource::MonotonicRaw => Stamp(monotonic_raw_ns()),
            ClockSource::ArmCounter => Stamp(arm::counter()),
        }
    }

    /// Nanoseconds from `start` to `end`, the clock's own cost subtracted
    /// (never below zero).
    #[inline]
    pub fn elapsed_ns(&self, start: Stamp, end: Stamp) -> f64 {
        let ticks = end.0.saturating_sub(start.0) as f64 - self.overhead_ticks;
        ticks.max(0.0) * self.ns_per_tick
    }

    pub fn source(&self) -> ClockSource {
        self.source
    }

    pub fn info(&self) -> TimerInfo {
        TimerInfo {
            source: self.source,
            tsc_hz: match self.source {
                ClockSource::Tsc | ClockSource::ArmCounter => Some(1e9 / self.ns_per_tick),
                ClockSource::MonotonicRaw => None,
            },
            overhead_ns: self.overhead_ticks * self.ns_per_tick,
            resolution_ns: match self.source {
                ClockSource::Tsc | ClockSource::ArmCounter => self.ns_per_tick,
                ClockSource::MonotonicRaw => monotonic_raw_resolution_ns(),
            },
        }
    }
}

/// The Arm generic timer, as user space sees it (Linux enables EL0 access to
/// the virtual counter, and emulates it where an erratum forbids it).
mod arm {
    /// `CNTFRQ_EL0`: the counter's rate in Hz (0 off aarch64).
    pub fn frequency() -> u64 {
        #[cfg(target_arch = "aarch64")]
        {
            let f: u64;
            // SAFETY: reading CNTFRQ_EL0 has no side effects and is allowed
            // at EL0.
            unsafe { std::arch::asm!("mrs {}, cntfrq_el0", out(reg) f, options(nomem, nostack)) };
            f & 0xffff_ffff
        }
        #[cfg(not(target_arch = "aarch64"))]
        {
            0
        }
    }

    /// `CNTVCT_EL0`, after an `isb` so the read is not moved ahead of the
    /// work being timed (the counter read is otherwise speculated freely,
    /// as `rdtsc` is without `lfence`).
    #[inline(always)]
    pub fn counter() -> u64 {
        #[cfg(target_arch = "aarch64")]
        {
            let v: u64;
            // SAFETY: isb and a counter read; no memory is touched.
            unsafe {
                std::arch::asm!("isb", "mrs {}, cntvct_el0", out(reg) v, options(nomem, nostack))
            };
            v
        }
        #[cfg(not(target_arch = "aarch64"))]
        {
            super::monotonic_raw_ns()
        }
    }
}

/// Read the TSC, fenced so the read is not reordered with the work being
/// timed (`lfence` before: earlier loads done; after: later work not started).
#[inline(always)]
fn read_tsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_lfence, _rdtsc};
        // SAFETY: lfence and rdtsc exist on every x86_64 CPU.
        unsafe {
            _mm_lfence();
            let t = _rdtsc();
            _mm_lfence();
            t
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        monotonic_raw_ns()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invariant_tsc_needs_both_flags() {
        let both = "processor\t: 0\nflags\t\t: fpu tsc constant_tsc nonstop_tsc avx2\n";
        let one = "flags\t\t: fpu tsc constant_tsc avx2\n";
        assert!(tsc_is_invariant(both));
        assert!(!tsc_is_invariant(one));
        assert!(!tsc_is_invariant(""));
    }

    #[test]
    fn arm_counter_serves_down_to_a_tenth_of_a_microsecond() {
        // 1 GHz (Armv8.6+), 25 MHz (Ampere Altra: 40 ns), 10 MHz: used.
        assert!(counter_serves(1_000_000_000));
        assert!(counter_serves(25_000_000));
        assert!(counter_serves(10_000_000));
        // Coarser, or no counter at all: the OS clock.
        assert!(!counter_serves(1_000_000));
        assert!(!counter_serves(0));
        let s = serde_json::to_string(&ClockSource::ArmCounter).unwrap();
        assert_eq!(s, "\"arm_counter\"");
    }

    #[test]
    fn the_arm_counter_where_there_is_one_agrees_with_the_raw_clock() {
        let hz = arm::frequency();
        if !counter_serves(hz) {
            // Not aarch64 (or a counter too coarse): nothing to compare.
            return;
        }
        let t = Timer::arm_counter(hz);
        let (a, r0) = (t.now(), monotonic_raw_ns());
        std::thread::sleep(std::time::Duration::from_millis(20));
        let (b, r1) = (t.now(), monotonic_raw_ns());
        let (ours, raw) = (t.elapsed_ns(a, b), (r1 - r0) as f64);
        // A wrong rate or unit would be off by a factor; nothing finer.
        assert!(ours > raw * 0.5 && ours < raw * 2.0, "{ours} vs {raw}");
        let info = t.info();
        assert_eq!(info.source, ClockSource::ArmCounter);
        assert_eq!(info.tsc_hz, Some(hz as f64));
        assert!((info.resolution_ns - 1e9 / hz as f64).abs() < 1e-9);
    }

    #[test]
    fn timer_is_monotonic_and_roughly_agrees_with_raw_clock() {
        let t = Timer::get();
        let a = t.now();
        let r0 = monotonic_raw_ns();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let b = t.now();
        let r1 = monotonic_raw_ns();
        let ours = t.elapsed_ns(a, b);
        let raw = (r1 - r0) as f64;
        // Not a timing assertion: only that the calibration is not off by
        // a factor (a wrong unit or an uncalibrated rate would be).
        assert!(ours > raw * 0.5 && ours < raw * 2.0, "{ours} vs {raw}");
        assert!(t.info().overhead_ns >= 0.0);
        assert!(t.info().resolution_ns > 0.0);
        assert_eq!(t.elapsed_ns(b, a), 0.0);
    }
}
