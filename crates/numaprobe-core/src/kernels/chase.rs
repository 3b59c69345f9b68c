//! The dependent pointer chase: every load's address is the previous load's
//! value, so the CPU cannot overlap them and the time per step is the load
//! latency.
//!
//! Layouts (each line's first word holds the address of the next line):
//! - random: one cycle through *every* line of the buffer in a random order,
//!   built with Sattolo's algorithm (a plain shuffle would leave several short
//!   cycles, and a chase stuck in a short cycle measures a cache, not memory).
//!   Hardware prefetchers cannot guess the next address.
//! - random with a TLB window (multichase's `-T`): lines are shuffled within
//!   windows of N pages and the windows are chained in a random order, so the
//!   chase stays inside a few pages for a while. Separates DRAM latency from
//!   TLB-miss cost on base pages (the running kernel's: 4 KiB, or 16/64 KiB
//!   on some arm64 kernels, so a window of N pages covers N of them).
//! - stride: line i points to line i+1 (`stride` bytes apart), wrapping; the
//!   lmbench-style method of McCalpin's remote-latency measurements (128 B to keep adjacent-line prefetch out).

use super::KernelSpec;
use serde::{Deserialize, Serialize};

/// How the chain visits the buffer's lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChasePattern {
    /// One random cycle over all lines; `window_pages` keeps the chase within
    /// groups of that many base pages before it moves on.
    Random { window_pages: Option<usize> },
    /// Fixed stride, in address order.
    Stride,
}

impl ChasePattern {
    pub fn name(self) -> &'static str {
        match self {
            ChasePattern::Random { .. } => "random",
            ChasePattern::Stride => "stride",
        }
    }
}

/// The spec of the chase kernel.
pub fn spec(pattern: ChasePattern) -> KernelSpec {
    KernelSpec {
        name: format!("chase_{}", pattern.name()),
        iteration: "one dependent 8-byte load (the address of the next one)".into(),
        bytes_per_iter: 8,
        loads_per_iter: 1,
        stores_per_iter: 0,
        write_allocate_bytes_per_iter: 0,
        nontemporal: false,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChaseError {
    #[error("stride {stride} B is not a multiple of 8 B or is smaller than 8 B")]
    BadStride { stride: usize },
    #[error("a chase needs at least 2 lines; {len} B with stride {stride} B has {lines}")]
    TooFewLines {
        len: usize,
        stride: usize,
        lines: usize,
    },
    #[error("{lines} lines do not fit the chase's 32-bit line index")]
    TooManyLines { lines: usize },
}

pub use crate::rng::SplitMix64;

/// Sattolo's algorithm: a uniformly random permutation `p` of `0..n` that is a
/// single cycle when read as `i -> p[i]`.
pub fn sattolo(n: u32, rng: &mut SplitMix64) -> Vec<u32> {
    let mut p: Vec<u32> = (0..n).collect();
    let mut i = n as usize;
    while i > 1 {
        i -= 1;
        // j < i strictly: that is what makes a single cycle.
        let j = rng.below(i as u32) as usize;
        p.swap(i, j);
    }
    p
}

fn shuffle(v: &mut [u32], rng: &mut SplitMix64) {
    let mut i = v.len();
    while i > 1 {
        let j = rng.below(i as u32) as usize;
        i -= 1;
        v.swap(i, j);
    }
}

/// The visiting order of a windowed random chase: windows of `per_window`
/// lines in a random order, and within each window its lines in a random
/// order. Every line appears exactly once; the chase links the order into
/// one cycle.
pub fn windowed_order(n: u32, per_window: u32, rng: &mut SplitMix64) -> Vec<u32> {
    let per_window = per_window.max(1);
    let windows = n.div_ceil(per_window);
    let mut wins: Vec<u32> = (0..windows).collect();
    shuffle(&mut wins, rng);
    let mut order = Vec::with_capacity(n as usize);
    for w in wins {
        let start = w * per_window;
        let end = (start + per_window).min(n);
        let from = order.len();
        order.extend(start..end);
        shuffle(&mut order[from..], rng);
    }
    order
}

/// A chase laid out in a buffer, ready to run.
#[derive(Debug, Clone, Copy)]
pub struct ChaseSetup {
    /// Address of the first line; the chain returns to it after `lines` steps.
    pub start: *const usize,
    pub lines: usize,
    pub stride: usize,
}

// SAFETY: a plain address; the buffer it points into is owned elsewhere.
unsafe impl Send for ChaseSetup {}

/// Write a chase into `base[..len]` and return where it starts.
///
/// # Safety
/// `base` must be valid for writes of `len` bytes, aligned to 8, and stay
/// alive and unmodified while the chase runs.
pub unsafe fn build(
    base: *mut u8,
    len: usize,
    stride: usize,
    pattern: ChasePattern,
    seed: u64,
) -> Result<ChaseSetup, ChaseError> {
    if stride < 8 || !stride.is_multiple_of(8) {
        return Err(ChaseError::BadStride { stride });
    }
    let lines = len / stride;
    if lines < 2 {
        return Err(ChaseError::TooFewLines { len, stride, lines });
    }
    if lines > u32::MAX as usize {
        return Err(ChaseError::TooManyLines { lines });
    }
    let n = lines as u32;
    let addr = |i: u32| base.add(i as usize * stride) as *mut usize;
    let mut rng = SplitMix64::new(seed);
    match pattern {
        ChasePattern::Stride => {
            for i in 0..n {
                *addr(i) = addr((i + 1) % n) as usize;
            }
        }
        ChasePattern::Random { window_pages: None } => {
            // Written in address order (line i gets the address of p[i]):
            // sequential stores, so building 1 GiB takes a fraction of a second.
            let p = sattolo(n, &mut rng);
            for i in 0..n {
                *addr(i) = addr(p[i as usize]) as usize;
            }
        }
        ChasePattern::Random {
            window_pages: Some(w),
        } => {
            let per_window = lines_per_window(w, crate::pagesize::base() as usize, stride);
            let order = windowed_order(n, per_window, &mut rng);
            for k in 0..order.len() {
                let next = order[(k + 1) % order.len()];
                *addr(order[k]) = addr(next) as usize;
            }
        }
    }
    Ok(ChaseSetup {
        start: addr(0),
        lines,
        stride,
    })
}

/// Lines of `stride` bytes in a TLB window of `window_pages` pages of
/// `page_size` bytes (at least one).
pub fn lines_per_window(window_pages: usize, page_size: usize, stride: usize) -> u32 {
    ((window_pages.max(1).saturating_mul(page_size)) / stride.max(1)).clamp(1, u32::MAX as usize)
        as u32
}

/// Follow the chain for `steps` loads from `p` and return where it ended (the
/// next run continues from there, so successive samples walk on through the
/// cycle instead of re-reading the lines the last one left in cache).
///
/// # Safety
/// `p` must be on a chain built by [`build`] whose buffer is still alive.
#[inline(never)]
pub unsafe fn run(mut p: *const usize, steps: u64) -> *const usize {
    // Volatile: each load must happen, in order, even though the compiler can
    // see nothing else reading the pointers.
    let mut i = steps / 8;
    while i > 0 {
        p = std::ptr::read_volatile(p) as *const usize;
        p = std::ptr::read_volatile(p) as *const usize;
        p = std::ptr::read_volatile(p) as *const usize;
        p = std::ptr::read_volatile(p) as *const usize;
        p = std::ptr::read_volatile(p) as *const usize;
        p = std::ptr::read_volatile(p) as *const usize;
        p = std::ptr::read_volatile(p) as *const usize;
        p = std::ptr::read_volatile(p) as *const usize;
        i -= 1;
    }
    for _ in 0..steps % 8 {
        p = std::ptr::read_volatile(p) as *const usize;
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tlb_windows_cover_whole_pages_of_the_kernels_size() {
        // 8 pages of 64 B lines: 512 lines on 4 KiB pages, 4x and 16x that
        // on 16 and 64 KiB pages (the window is in pages, not bytes).
        assert_eq!(lines_per_window(8, 4096, 64), 512);
        assert_eq!(lines_per_window(8, 16 << 10, 64), 2048);
        assert_eq!(lines_per_window(8, 64 << 10, 64), 8192);
        // A stride wider than the window still gives one line per window.
        assert_eq!(lines_per_window(1, 4096, 8192), 1);
        assert_eq!(lines_per_window(0, 4096, 128), 32);
    }

    fn cycle_len(p: &[u32]) -> usize {
        let mut i = 0usize;
        let mut n = 0;
        loop {
            i = p[i] as usize;
            n += 1;
            if i == 0 {
                return n;
            }
        }
    }

    #[test]
    fn sattolo_is_one_cycle_over_every_line() {
        let mut rng = SplitMix64::new(42);
        for n in [2u32, 3, 7, 64, 1000, 4097] {
            let p = sattolo(n, &mut rng);
            let mut seen = p.clone();
            seen.sort_unstable();
            assert_eq!(seen, (0..n).collect::<Vec<_>>(), "a permutation");
            assert_eq!(cycle_len(&p), n as usize, "a single cycle for n={n}");
            assert!(
                p.iter().enumerate().all(|(i, &v)| i as u32 != v),
                "no fixed point"
            );
        }
    }

    #[test]
    fn window_order_covers_all_lines_and_stays_in_windows() {
        let mut rng = SplitMix64::new(7);
        let (n, w) = (1000u32, 64u32);
        let order = windowed_order(n, w, &mut rng);
        let mut seen = order.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..n).collect::<Vec<_>>());
        // The order is a sequence of whole windows: the window index changes
        // exactly windows-1 times.
        let changes = order.windows(2).filter(|p| p[0] / w != p[1] / w).count();
        assert_eq!(changes as u32, n.div_ceil(w) - 1);
        // And it is shuffled within a window, not address order.
        assert!(order.windows(2).any(|p| p[1] != p[0] + 1));
    }

    fn walk(setup: &ChaseSetup) -> Vec<usize> {
        let mut seen = Vec::new();
        let mut p = setup.start;
        for _ in 0..setup.lines {
            seen.push((p as usize - setup.start as usize) / setup.stride);
            p = unsafe { run(p, 1) };
        }
        assert_eq!(p, setup.start, "back at the start after `lines` steps");
        seen.sort_unstable();
        seen
    }

    #[test]
    fn built_chains_visit_every_line_once() {
        let mut buf = vec![0u64; 64 * 1024 / 8];
        let base = buf.as_mut_ptr() as *mut u8;
        let len = buf.len() * 8;
        for (pattern, stride) in [
            (ChasePattern::Random { window_pages: None }, 64),
            (
                ChasePattern::Random {
                    window_pages: Some(2),
                },
                64,
            ),
            (ChasePattern::Stride, 128),
        ] {
            let s = unsafe { build(base, len, stride, pattern, 1) }.unwrap();
            assert_eq!(s.lines, len / stride);
            assert_eq!(walk(&s), (0..s.lines).collect::<Vec<_>>(), "{pattern:?}");
        }
    }

    #[test]
    fn bad_layouts_are_errors() {
        let mut buf = [0u64; 8];
        let base = buf.as_mut_ptr() as *mut u8;
        let pat = ChasePattern::Stride;
        assert!(matches!(
            unsafe { build(base, 64, 12, pat, 0) },
            Err(ChaseError::BadStride { .. })
        ));
        assert!(matches!(
            unsafe { build(base, 64, 64, pat, 0) },
            Err(ChaseError::TooFewLines { .. })
        ));
    }
}
