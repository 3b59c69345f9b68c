//! The dependent pointer chase: every load's address is the previous load's
//! value, so the CPU cannot overlap them and the time per step is the load
//! latency.
//!
//! Layouts (each line's first word holds the address of the next line):
//! - random: one cycle through *every* line of the buffer in a random order,
//!   built with Sattolo's algorithm (a plain shuffle would leave several short
//!   cycles, and a chase stuck in a short cycle measures a cache, not memory)
//!   in the lines themselves, with no index of the lines beside the buffer.
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

/// Where a chain's "next line" entries are written while it is built: each
/// line's own first word in the buffer, or a plain slice in the tests. The
/// chain is built in the lines themselves so that building it takes no
/// memory beside the buffer: an index of the lines (4 bytes a line, 1/16 of
/// the buffer at 64-byte lines) held at the same time would raise the
/// command's peak above the buffer it sized to the footprint limit.
trait Slots {
    fn get(&self, i: u32) -> u32;
    fn set(&mut self, i: u32, v: u32);
    fn swap(&mut self, i: u32, j: u32) {
        let (a, b) = (self.get(i), self.get(j));
        self.set(i, b);
        self.set(j, a);
    }
}

impl Slots for [u32] {
    fn get(&self, i: u32) -> u32 {
        self[i as usize]
    }
    fn set(&mut self, i: u32, v: u32) {
        self[i as usize] = v;
    }
}

/// The first word of each of a buffer's lines.
struct LineWords {
    base: *mut u8,
    stride: usize,
}

impl LineWords {
    fn word(&self, i: u32) -> *mut usize {
        // SAFETY (of every use): `build`'s caller guarantees the buffer
        // holds every line below `lines`, the only indices passed here.
        unsafe { self.base.add(i as usize * self.stride) as *mut usize }
    }
}

impl Slots for LineWords {
    fn get(&self, i: u32) -> u32 {
        // SAFETY: see `word`; the word was written by `set` before.
        unsafe { *self.word(i) as u32 }
    }
    fn set(&mut self, i: u32, v: u32) {
        // SAFETY: see `word`.
        unsafe { *self.word(i) = v as usize }
    }
}

/// Sattolo's algorithm on slots `from..from + m`: afterwards slot `i` holds
/// the line after `i` on one uniformly random cycle through all `m` lines.
fn sattolo_in<S: Slots + ?Sized>(s: &mut S, from: u32, m: u32, rng: &mut SplitMix64) {
    for k in 0..m {
        s.set(from + k, from + k);
    }
    let mut i = m;
    while i > 1 {
        i -= 1;
        // j < i strictly: that is what makes a single cycle.
        let j = rng.below(i);
        s.swap(from + i, from + j);
    }
}

/// One uniformly random cycle through lines `0..n`: slot `i` holds the line
/// after `i`.
fn link_random<S: Slots + ?Sized>(s: &mut S, n: u32, rng: &mut SplitMix64) {
    sattolo_in(s, 0, n, rng);
}

/// One cycle through lines `0..n` that visits windows of `per_window` lines
/// whole, the windows in a random order and each window's lines in a random
/// order. A window is a Sattolo cycle cut after a random line of it: the
/// path from that line's successor round to it is a uniformly random order
/// of the window (a cycle and a cut point are one of the m! orders each),
/// and its last line leads to the next window's first.
fn link_windowed<S: Slots + ?Sized>(s: &mut S, n: u32, per_window: u32, rng: &mut SplitMix64) {
    let per_window = per_window.max(1);
    // One entry per window, at most 1/512 of the lines (a window is at
    // least one page): small beside the buffer.
    let mut wins: Vec<u32> = (0..n.div_ceil(per_window)).collect();
    shuffle(&mut wins, rng);
    let mut first_and_last: Option<(u32, u32)> = None;
    for w in wins {
        let start = w * per_window;
        let m = per_window.min(n - start);
        sattolo_in(s, start, m, rng);
        let last = start + rng.below(m);
        let entry = s.get(last);
        first_and_last = Some(match first_and_last {
            None => (entry, last),
            Some((first, before)) => {
                s.set(before, entry);
                (first, last)
            }
        });
    }
    if let Some((first, last)) = first_and_last {
        s.set(last, first);
    }
}

fn shuffle(v: &mut [u32], rng: &mut SplitMix64) {
    let mut i = v.len();
    while i > 1 {
        let j = rng.below(i as u32) as usize;
        i -= 1;
        v.swap(i, j);
    }
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
    let mut words = LineWords { base, stride };
    match pattern {
        ChasePattern::Stride => {
            for i in 0..n {
                *addr(i) = addr((i + 1) % n) as usize;
            }
            return Ok(ChaseSetup {
                start: addr(0),
                lines,
                stride,
            });
        }
        ChasePattern::Random { window_pages: None } => link_random(&mut words, n, &mut rng),
        ChasePattern::Random {
            window_pages: Some(w),
        } => {
            let per_window = lines_per_window(w, crate::pagesize::base() as usize, stride);
            link_windowed(&mut words, n, per_window, &mut rng);
        }
    }
    // Each line holds the index of the next; make it its address, in address
    // order (sequential stores).
    for i in 0..n {
        *addr(i) = addr(words.get(i)) as usize;
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

    /// The lines in the order the chain of `next` visits them from line 0,
    /// asserting it comes back to line 0 after exactly every line once: one
    /// cycle through all of them.
    fn cycle(next: &[u32]) -> Vec<u32> {
        let mut order = vec![0u32];
        let mut i = next[0];
        while i != 0 {
            assert!(order.len() < next.len(), "a cycle that misses line 0");
            order.push(i);
            i = next[i as usize];
        }
        let mut seen = order.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..next.len() as u32).collect::<Vec<_>>());
        order
    }

    fn random(n: u32, seed: u64) -> Vec<u32> {
        let mut next = vec![u32::MAX; n as usize];
        link_random(next.as_mut_slice(), n, &mut SplitMix64::new(seed));
        next
    }

    fn windowed(n: u32, per_window: u32, seed: u64) -> Vec<u32> {
        let mut next = vec![u32::MAX; n as usize];
        link_windowed(
            next.as_mut_slice(),
            n,
            per_window,
            &mut SplitMix64::new(seed),
        );
        next
    }

    #[test]
    fn random_chain_is_one_cycle_over_every_line() {
        for n in [2u32, 3, 7, 64, 1000, 4097] {
            let next = random(n, 42);
            assert_eq!(cycle(&next).len(), n as usize, "n={n}");
            assert!(
                next.iter().enumerate().all(|(i, &v)| i as u32 != v),
                "no line leads to itself"
            );
        }
    }

    /// How often each cycle comes out of `seeds` seeds of `link`: every one
    /// of `expect` cycles, each about equally often.
    fn counts(link: impl Fn(u64) -> Vec<u32>, seeds: u64, expect: usize) {
        let mut seen: std::collections::BTreeMap<Vec<u32>, u64> = Default::default();
        for seed in 0..seeds {
            *seen.entry(cycle(&link(seed))).or_default() += 1;
        }
        assert_eq!(seen.len(), expect, "{seen:?}");
        let mean = seeds as f64 / expect as f64;
        for (c, &k) in &seen {
            // 6000 draws over 6 outcomes: a standard deviation of 29 around
            // 1000; 15 % is more than five of them.
            assert!(
                (k as f64 - mean).abs() < 0.15 * mean,
                "{c:?} came {k} times of {seeds}"
            );
        }
    }

    #[test]
    fn random_chain_is_uniform_over_the_cycles() {
        // 4 lines make (4-1)! = 6 cycles.
        counts(|seed| random(4, seed), 6000, 6);
    }

    #[test]
    fn windowed_chain_is_uniform_over_its_orders() {
        // Two windows of 2 lines: from line 0, the rest of its window, then
        // the other window in either order, then the first of line 0's
        // window if line 0 was not first: 2 x 2 cycles.
        counts(|seed| windowed(4, 2, seed), 4000, 4);
        // Three windows of 2 lines, the last of 1: the two other windows in
        // either order (2), each of the two full windows in either order (4).
        counts(|seed| windowed(5, 2, seed), 8000, 8);
    }

    #[test]
    fn windowed_chain_enters_every_window_once() {
        for (n, w) in [
            (1000u32, 64u32),
            (1000, 1000),
            (1000, 2000),
            (1000, 1),
            (4097, 512),
        ] {
            let order = cycle(&windowed(n, w, 7));
            let windows = n.div_ceil(w);
            // Round the cycle, back to line 0: the window changes once per
            // window when there are two or more.
            let changes = (0..order.len())
                .filter(|&k| order[k] / w != order[(k + 1) % order.len()] / w)
                .count() as u32;
            assert_eq!(
                changes,
                if windows > 1 { windows } else { 0 },
                "n={n} w={w}"
            );
            if w > 1 {
                assert!(
                    order.windows(2).any(|p| p[1] != p[0] + 1),
                    "shuffled within a window, not address order"
                );
            }
        }
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
            (
                ChasePattern::Random {
                    window_pages: Some(1),
                },
                192,
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
