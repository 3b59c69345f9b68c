//! The clock: `CLOCK_MONOTONIC_RAW`, the invariant TSC calibrated against it, and
//! the timer's own overhead.
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

/// Which clock a [`Timer`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockSource {
    /// `rdtsc`, calibrated against `CLOCK_MONOTONIC_RAW`.
    Tsc,
    /// `clock_gettime(CLOCK_MONOTONIC_RAW)`.
    MonotonicRaw,
}

/// What a result records about the clock that produced it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimerInfo {
    pub source: ClockSource,
    /// Measured TSC rate (Hz) when the source is the TSC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tsc_hz: Option<f64>,
    /// Cost of one start/stop pair, subtracted from every interval.
    pub overhead_ns: f64,
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
    /// (about 30 ms), the raw clock otherwise.
    pub fn get() -> &'static Timer {
        static T: OnceLock<Timer> = OnceLock::new();
        T.get_or_init(|| {
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
                ClockSource::Tsc => Some(1e9 / self.ns_per_tick),
                ClockSource::MonotonicRaw => None,
            },
            overhead_ns: self.overhead_ticks * self.ns_per_tick,
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
        assert_eq!(t.elapsed_ns(b, a), 0.0);
    }
}
