//! One cache line's load latency, timed alone: the line is flushed from
//! every cache, its page's translation is warmed by a load of another line
//! of the same page, and the one load is timed between two fenced reads of
//! the clock. A chase's average would blend near and far lines into one
//! figure; this keeps each line's own answer, which is what tells memory
//! interleaved across sockets (two modes) from uniform memory (one).
//!
//! The clock read waits for the load: on x86-64 [`Timer::now`] is
//! `lfence; rdtsc; lfence` and `lfence` completes only once every earlier
//! load has its data; on arm64 a `dsb ish` after the load waits for it
//! before the counter is read behind an `isb`.

use crate::timer::{Stamp, Timer};

/// Wait until every earlier load has its data.
#[inline(always)]
fn loads_done() {
    #[cfg(target_arch = "aarch64")]
    // SAFETY: a barrier, no operands.
    unsafe {
        std::arch::asm!("dsb ish", options(nostack, preserves_flags))
    };
}

/// Whether this architecture can flush a line from user space; without it
/// a "memory" latency would be a cache's.
pub fn can_flush() -> bool {
    cfg!(any(target_arch = "x86_64", target_arch = "aarch64"))
}

/// Nanoseconds of one load of `line` from memory (the clock's own cost
/// subtracted). `warm` is another line of the same page: loading it first
/// puts the page's translation in the TLB, so the figure is the memory's,
/// not a page walk's.
///
/// # Safety
/// `line` and `warm` must be mapped, readable addresses.
#[inline(never)]
pub unsafe fn time_load(line: *const u8, warm: *const u8, timer: &Timer) -> f64 {
    std::ptr::read_volatile(warm);
    super::flush_line(line);
    super::flush_fence();
    let a: Stamp = timer.now();
    std::hint::black_box(std::ptr::read_volatile(line));
    loads_done();
    let b = timer.now();
    timer.elapsed_ns(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timed_load_reads_the_line_and_gives_a_duration() {
        // What a load costs is reported by the main job, not asserted here
        // (timing varies); this checks the call is sound on both lines.
        let timer = Timer::get();
        let buf = vec![7u8; 1 << 13];
        let ns = unsafe { time_load(buf.as_ptr(), buf[4096..].as_ptr(), timer) };
        assert!(ns.is_finite() && ns >= 0.0, "{ns}");
        assert_eq!(buf[0], 7);
    }
}
