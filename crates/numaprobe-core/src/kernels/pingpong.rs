//! Cache-line transfer between two pinned threads (`numaprobe c2c`): the
//! one-way latency of a line moving from one CPU's cache to another's, in
//! two states of the line.
//!
//! **HITM (modified)**: ping-pong on one line. The initiator `a` writes an
//! odd number n, the responder `b` spins until it sees n and writes n + 1,
//! `a` spins until it sees n + 1, and so on. Every leg is a load that misses
//! and is served by the other CPU's cache holding the line modified (Intel's
//! "HITM": hit in another core, modified), after the store's invalidation.
//! A sample times [`ROUND_TRIPS`] round trips between two clock reads and
//! reports round trip / 2, the one-way figure core-to-core-latency and MLC
//! report.
//!
//! [`HitmLines::Two`] runs the same round trips on two lines, each written
//! by one side only: `a` writes n on its line, `b` spins on that line until
//! it sees n and writes n on its own, `a` spins on `b`'s line until it sees
//! n. That is core-to-core-latency's read-write benchmark ("2"), so the
//! two tools can be compared at equal settings; one line is the default
//! (bench/pingpong.c and Intel's HITM figure).
//!
//! **Read-shared (clean)**: a ping-pong's signal is a store, which always
//! leaves the line modified, so a clean transfer cannot be a ping-pong. It
//! is measured the way MLC measures its "HIT" latency, with the same line
//! discipline: before each sample the holder `a` flushes [`SHARED_LINES`]
//! lines from every cache of the machine (`clflush`, `dc civac`: coherent,
//! so no stale copy stays in `b` or a shared cache above it in modified
//! state) and reads them, so they sit clean (exclusive or shared) in `a`'s
//! cache and modified nowhere. The reader `b` then chases them in a random
//! cycle (each load's address is the previous load's value, so loads do not
//! overlap) and the sample is the time per load: one transfer of a line `a`
//! holds clean. The handshake that tells `b` the lines are ready runs on a
//! control line outside the timed chase.
//!
//! Layout: every line used is 128-byte aligned with nothing else in its
//! 128-byte pair (Intel's spatial prefetcher fetches lines in 128-byte
//! pairs), the control lines sit on their own page away from the chased
//! lines, and the chase order is random (no stride for a prefetcher).
//!
//! The ping-pong uses plain loads and stores (`Relaxed` atomics: `mov` on
//! x86-64, `ldr`/`str` on arm64), no read-modify-write and no `pause`
//! (which costs up to 140 cycles on recent Intel cores and would be timed).
//!
//! Each thread reads its own CPU hold ([`crate::held`]) around every
//! sample: the timing thread around its timed region, the other from the
//! end of one sample to the end of the next (for HITM, every
//! [`ROUND_TRIPS`] answers; read-shared, from "ready" to the reader's
//! "done"). The other side hands its verdict over on a control line after
//! the clock is read, and a sample counts only when both threads held their
//! CPU ([`pair_taken`]); a lost one is set aside by
//! [`crate::stats::repeat_held`]. A sample is tens of microseconds, far
//! below a scheduler's time slice, so it is never shortened further.
//!
//! A thread that waits longer than its timeout for the other (de-scheduled,
//! its CPU taken away) gives up: both threads end and the pair fails with a
//! reason instead of hanging. Waits also watch an abort flag the other side
//! raises when it fails first.

use crate::held::{Lost, Probe};
use crate::placement::{current_cpu, pin_current_thread, PlacementError};
use crate::stats::{self, Measured, StopRule, Taken};
use crate::timer::Timer;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Round trips timed between two clock reads in a HITM sample.
pub const ROUND_TRIPS: u64 = 64;
/// Lines chased per read-shared sample (8 KiB of 128-byte slots: fits every
/// L1).
pub const SHARED_LINES: usize = 64;
/// How long a thread waits for the other before the pair fails.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);

/// The ping-pong's "stop" value: never a count.
const STOP: u64 = u64::MAX;
/// Spins between two looks at the clock and the abort flag.
const CHECK_EVERY: u32 = 1 << 10;

/// The state of the line that moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineState {
    /// Last written by the other CPU (modified in its cache).
    Hitm,
    /// Held clean by the other CPU (read, not written).
    Shared,
}

/// How many lines the HITM round trips run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HitmLines {
    /// Both sides write the one line.
    #[default]
    One,
    /// Each side writes its own line and reads the other's.
    Two,
}

impl HitmLines {
    /// `one line`, `two lines`: as outputs name it.
    pub fn name(self) -> &'static str {
        match self {
            HitmLines::One => "one line",
            HitmLines::Two => "two lines",
        }
    }

    /// `1`, `one`, `2`, `two`; None for anything else.
    pub fn parse(s: &str) -> Option<HitmLines> {
        match s.trim().to_ascii_lowercase().as_str() {
            "1" | "one" => Some(HitmLines::One),
            "2" | "two" => Some(HitmLines::Two),
            _ => None,
        }
    }
}

/// One 64-bit word alone in a 128-byte aligned block.
#[repr(C, align(128))]
struct Slot {
    v: AtomicU64,
    _pad: [u64; 15],
}

impl Slot {
    fn new(v: u64) -> Slot {
        Slot {
            v: AtomicU64::new(v),
            _pad: [0; 15],
        }
    }
}

/// The lines the two threads signal on, on a page of their own.
#[repr(C, align(4096))]
struct Control {
    /// The HITM ping-pong line (the initiator's with two lines).
    ping: Slot,
    /// The responder's line with [`HitmLines::Two`].
    pong: Slot,
    /// Read-shared handshake: the reader writes odd k ("prepare"), the
    /// holder answers k + 1 ("ready").
    turn: Slot,
    /// Raised by a side that gives up (timeout, pin failure, error).
    abort: Slot,
    /// The non-timing side's hold over sample `seq` ([`verdict`]).
    verdict: Slot,
    /// Read-shared: the reader's "sample `seq` is timed".
    done: Slot,
}

impl Control {
    fn new() -> Control {
        Control {
            ping: Slot::new(0),
            pong: Slot::new(0),
            turn: Slot::new(0),
            abort: Slot::new(0),
            verdict: Slot::new(0),
            done: Slot::new(0),
        }
    }
}

/// Sample `seq`'s hold on the other side as one word for the control
/// line: the sequence above two bits of reason (1 held, 2 preempted, 3
/// off its CPU), so a verdict is never 0, the line's first value.
fn verdict(seq: u64, lost: Option<Lost>) -> u64 {
    let code = match lost {
        None => 1,
        Some(Lost::Preempted) => 2,
        Some(Lost::OffCpu) => 3,
    };
    seq << 2 | code
}

/// [`verdict`]'s sequence and hold.
fn read_verdict(v: u64) -> (u64, Option<Lost>) {
    let lost = match v & 3 {
        2 => Some(Lost::Preempted),
        3 => Some(Lost::OffCpu),
        _ => None,
    };
    (v >> 2, lost)
}

/// One sample of a pair: it held only when both threads held their CPU
/// (the timing thread's own reason first).
pub fn pair_taken(value: f64, own: Option<Lost>, other: Option<Lost>) -> Taken {
    Taken {
        value,
        lost: own.or(other),
    }
}

/// The chased lines of the read-shared variant, page-aligned.
#[repr(C, align(4096))]
struct Chased([Slot; SHARED_LINES]);

#[derive(Debug, thiserror::Error)]
pub enum PingPongError {
    #[error("CPU {waiting} waited {timeout:?} for CPU {other} without an answer (the thread on CPU {other} was not running: de-scheduled, or its CPU taken away)")]
    Timeout {
        waiting: u32,
        other: u32,
        timeout: Duration,
    },
    #[error("CPU {0}'s partner gave up")]
    Aborted(u32),
    #[error(transparent)]
    Placement(#[from] PlacementError),
    #[error("a ping-pong thread panicked")]
    Panicked,
    #[error("a sample ({ops} {what}, median {sample_ns:.0} ns) is not longer than reading the clock ({overhead_ns:.0} ns) on this machine: the figure would be the clock's noise, not a transfer")]
    BelowClock {
        ops: u64,
        what: &'static str,
        sample_ns: f64,
        overhead_ns: f64,
    },
}

/// A sample must outlast the clock's own cost: `elapsed_ns` subtracts that
/// cost, so where a sample is no longer than it (emulated CPUs, where both
/// the loads and the clock read are slow and noisy) the figure is noise
/// clamped at zero, and is refused rather than reported.
fn outlasts_clock(m: &Measured, state: LineState, overhead_ns: f64) -> Result<(), PingPongError> {
    let (ops, what, per_op) = match state {
        // One-way figures: a round trip is two transfers.
        LineState::Hitm => (ROUND_TRIPS, "round trips", 2.0),
        LineState::Shared => (SHARED_LINES as u64, "line reads", 1.0),
    };
    let sample_ns = m.summary.median * per_op * ops as f64;
    if m.summary.median > 0.0 && sample_ns > overhead_ns {
        Ok(())
    } else {
        Err(PingPongError::BelowClock {
            ops,
            what,
            sample_ns,
            overhead_ns,
        })
    }
}

/// A measured pair: the samples (ns one way) and the CPUs the two threads
/// were seen on (`sched_getcpu` after pinning, and again at the end).
#[derive(Debug, Clone)]
pub struct PairMeasure {
    pub measured: Measured,
    pub observed: (u32, u32),
}

/// Spin until `ok(value)`; give up after `timeout` or when `abort` rises.
#[inline(always)]
fn wait_for(
    slot: &Slot,
    abort: &Slot,
    timeout: Duration,
    me: u32,
    other: u32,
    ok: impl Fn(u64) -> bool,
) -> Result<u64, PingPongError> {
    let mut spins = 0u32;
    let mut since: Option<Instant> = None;
    loop {
        let v = slot.v.load(Ordering::Relaxed);
        if ok(v) {
            return Ok(v);
        }
        spins += 1;
        if spins == CHECK_EVERY {
            spins = 0;
            if abort.v.load(Ordering::Relaxed) != 0 {
                return Err(PingPongError::Aborted(me));
            }
            let start = *since.get_or_insert_with(Instant::now);
            if start.elapsed() > timeout {
                abort.v.store(1, Ordering::Relaxed);
                return Err(PingPongError::Timeout {
                    waiting: me,
                    other,
                    timeout,
                });
            }
        }
    }
}

/// A random cycle over the chased lines (Sattolo), as "next index" values.
fn chain(seed: u64) -> Box<Chased> {
    let mut order: Vec<usize> = (0..SHARED_LINES).collect();
    let mut rng = crate::rng::SplitMix64::new(seed);
    for i in (1..SHARED_LINES).rev() {
        let j = rng.index(i);
        order.swap(i, j);
    }
    let mut next = [0u64; SHARED_LINES];
    for w in 0..SHARED_LINES {
        next[order[w]] = order[(w + 1) % SHARED_LINES] as u64;
    }
    Box::new(Chased(std::array::from_fn(|i| Slot::new(next[i]))))
}

/// Measure the pair: `a` starts the round trips (HITM) or holds the lines
/// (read-shared), `b` answers or reads. Both threads are pinned and checked
/// before the first sample; samples follow `rule` (taken by the timing
/// thread: `a` for HITM, `b` for read-shared).
pub fn measure_pair(
    a: u32,
    b: u32,
    state: LineState,
    lines_hitm: HitmLines,
    rule: &StopRule,
    timeout: Duration,
) -> Result<PairMeasure, PingPongError> {
    let ctl = Box::new(Control::new());
    let lines = chain(0x6332_6300 ^ (a as u64) << 32 ^ b as u64);
    let ctl = &*ctl;
    let lines = &*lines;
    let timer = Timer::get();
    let abort = move || ctl.abort.v.store(1, Ordering::Relaxed);
    // Pinned and checked before the first sample; checked again after the
    // last, so a thread moved while it measured fails the pair.
    let pin = move |cpu: u32| -> Result<u32, PingPongError> {
        pin_current_thread(&[cpu]).map_err(|e| {
            abort();
            PingPongError::from(e)
        })
    };
    let still_on = move |cpu: u32| -> Result<(), PingPongError> {
        let now = current_cpu()?;
        if now != cpu {
            return Err(PlacementError::PinNotHonoured {
                wanted: vec![cpu],
                observed: now,
            }
            .into());
        }
        Ok(())
    };
    // The side that takes the time: the initiator of the round trips, or
    // the reader of the clean lines.
    let (timing_cpu, other_cpu) = match state {
        LineState::Hitm => (a, b),
        LineState::Shared => (b, a),
    };
    std::thread::scope(|s| {
        let other = s.spawn(move || -> Result<u32, PingPongError> {
            let seen = pin(other_cpu)?;
            match state {
                LineState::Hitm => respond(ctl, lines_hitm, timeout, other_cpu, timing_cpu)?,
                LineState::Shared => hold(ctl, lines, timeout, other_cpu, timing_cpu)?,
            }
            still_on(other_cpu)?;
            Ok(seen)
        });
        let timing = s.spawn(move || -> Result<(u32, Measured), PingPongError> {
            let seen = pin(timing_cpu)?;
            let m = match state {
                LineState::Hitm => {
                    initiate(ctl, lines_hitm, timer, rule, timeout, timing_cpu, other_cpu)
                }
                LineState::Shared => read(ctl, lines, timer, rule, timeout, timing_cpu, other_cpu),
            };
            // The other side stops whatever happened here.
            if m.is_err() {
                abort();
            }
            let stop = match state {
                LineState::Hitm => &ctl.ping,
                LineState::Shared => &ctl.turn,
            };
            stop.v.store(STOP, Ordering::Relaxed);
            let m = m?;
            still_on(timing_cpu)?;
            Ok((seen, m))
        });
        let rt = timing.join().map_err(|_| PingPongError::Panicked)?;
        let ro = other.join().map_err(|_| PingPongError::Panicked)?;
        let (seen_t, m, seen_o) = match (rt, ro) {
            (Ok((st, m)), Ok(so)) => (st, m, so),
            // The side that failed first says why; "my partner gave up" is
            // only the echo.
            (Err(PingPongError::Aborted(_)), Err(e)) | (Err(e), _) | (_, Err(e)) => return Err(e),
        };
        let observed = match state {
            LineState::Hitm => (seen_t, seen_o),
            LineState::Shared => (seen_o, seen_t),
        };
        outlasts_clock(&m, state, timer.info().overhead_ns)?;
        Ok(PairMeasure {
            measured: m,
            observed,
        })
    })
}

/// HITM, initiator side: samples of [`ROUND_TRIPS`] round trips.
fn initiate(
    ctl: &Control,
    lines: HitmLines,
    timer: &Timer,
    rule: &StopRule,
    timeout: Duration,
    me: u32,
    other: u32,
) -> Result<Measured, PingPongError> {
    let (mut n, mut seq) = (0u64, 0u64);
    stats::repeat_held(rule, |_| {
        seq += 1;
        let held = Probe::start();
        let t0 = timer.now();
        match lines {
            HitmLines::One => {
                for _ in 0..ROUND_TRIPS {
                    n += 1;
                    ctl.ping.v.store(n, Ordering::Relaxed);
                    let want = n + 1;
                    wait_for(&ctl.ping, &ctl.abort, timeout, me, other, |v| v == want)?;
                    n = want;
                }
            }
            HitmLines::Two => {
                for _ in 0..ROUND_TRIPS {
                    n += 1;
                    ctl.ping.v.store(n, Ordering::Relaxed);
                    wait_for(&ctl.pong, &ctl.abort, timeout, me, other, |v| v == n)?;
                }
            }
        }
        let t1 = timer.now();
        let own = held.lost();
        let v = wait_for(&ctl.verdict, &ctl.abort, timeout, me, other, |v| {
            read_verdict(v).0 == seq
        })?;
        Ok(pair_taken(
            timer.elapsed_ns(t0, t1) / (2 * ROUND_TRIPS) as f64,
            own,
            read_verdict(v).1,
        ))
    })
}

/// HITM, responder side, until STOP: one line, answer every odd n with
/// n + 1 on it; two lines, echo n on its own line.
fn respond(
    ctl: &Control,
    lines: HitmLines,
    timeout: Duration,
    me: u32,
    other: u32,
) -> Result<(), PingPongError> {
    // One line: answer odd n with n + 1 on it. Two lines: echo n on our own.
    let (answer, step) = match lines {
        HitmLines::One => (&ctl.ping, 2),
        HitmLines::Two => (&ctl.pong, 1),
    };
    let (mut expect, mut answered, mut seq) = (1u64, 0u64, 0u64);
    let mut held = Probe::start();
    loop {
        let v = wait_for(&ctl.ping, &ctl.abort, timeout, me, other, |v| {
            v == expect || v == STOP
        })?;
        if v == STOP {
            return Ok(());
        }
        answer.v.store(expect + step - 1, Ordering::Relaxed);
        expect += step;
        answered += 1;
        // The sample's last answer: say whether this thread held its CPU.
        if answered % ROUND_TRIPS == 0 {
            seq += 1;
            ctl.verdict
                .v
                .store(verdict(seq, held.lost()), Ordering::Relaxed);
            held = Probe::start();
        }
    }
}

/// Read-shared, holder side: on every "prepare" flush the lines everywhere,
/// read them into this CPU's cache (clean), answer "ready".
fn hold(
    ctl: &Control,
    lines: &Chased,
    timeout: Duration,
    me: u32,
    other: u32,
) -> Result<(), PingPongError> {
    let (mut expect, mut seq) = (1u64, 0u64);
    loop {
        let v = wait_for(&ctl.turn, &ctl.abort, timeout, me, other, |v| {
            v == expect || v == STOP
        })?;
        if v == STOP {
            return Ok(());
        }
        seq += 1;
        for l in &lines.0 {
            super::flush_line(l as *const Slot as *const u8);
        }
        super::flush_fence();
        let mut acc = 0u64;
        for l in &lines.0 {
            acc ^= l.v.load(Ordering::Relaxed);
        }
        std::hint::black_box(acc);
        // Loads done before "ready" is visible: the reader must not find a
        // line still on its way to this cache.
        std::sync::atomic::fence(Ordering::SeqCst);
        let held = Probe::start();
        ctl.turn.v.store(expect + 1, Ordering::Relaxed);
        expect += 2;
        // Held through the reader's chase, until it says the sample is timed?
        wait_for(&ctl.done, &ctl.abort, timeout, me, other, |v| v == seq)?;
        ctl.verdict
            .v
            .store(verdict(seq, held.lost()), Ordering::Relaxed);
    }
}

/// Read-shared, reader side: per sample ask for fresh lines, then chase
/// them once and time it.
fn read(
    ctl: &Control,
    lines: &Chased,
    timer: &Timer,
    rule: &StopRule,
    timeout: Duration,
    me: u32,
    other: u32,
) -> Result<Measured, PingPongError> {
    let (mut k, mut seq) = (1u64, 0u64);
    let mut i = 0usize;
    stats::repeat_held(rule, |_| {
        seq += 1;
        ctl.turn.v.store(k, Ordering::Relaxed);
        let want = k + 1;
        wait_for(&ctl.turn, &ctl.abort, timeout, me, other, |v| v == want)?;
        k += 2;
        std::sync::atomic::fence(Ordering::SeqCst);
        let held = Probe::start();
        let t0 = timer.now();
        for _ in 0..SHARED_LINES {
            // The next index is the loaded value: dependent loads.
            i = lines.0[i].v.load(Ordering::Relaxed) as usize % SHARED_LINES;
        }
        let t1 = timer.now();
        let own = held.lost();
        std::hint::black_box(i);
        ctl.done.v.store(seq, Ordering::Relaxed);
        let v = wait_for(&ctl.verdict, &ctl.abort, timeout, me, other, |v| {
            read_verdict(v).0 == seq
        })?;
        Ok(pair_taken(
            timer.elapsed_ns(t0, t1) / SHARED_LINES as f64,
            own,
            read_verdict(v).1,
        ))
    })
}

#[cfg(test)]
#[path = "pingpong_tests.rs"]
mod tests;
