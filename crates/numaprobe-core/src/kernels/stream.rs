//! Streaming kernels: read, write, non-temporal write, copy, non-temporal
//! copy, triad (`a = b + s*c`), one implementation per vector width.
//!
//! The x86 widths share one macro so that the loops are identical except for
//! the intrinsics: 4 vectors per iteration (enough independent loads and
//! stores in flight to saturate a memory channel), aligned accesses, `sfence`
//! after non-temporal stores so they are globally visible before the clock
//! stops. The read kernel folds every loaded vector into four XOR
//! accumulators: XOR is one cheap uop, keeps the loads live (the result goes
//! through `black_box`), and has no long dependency chain.
//!
//! Lengths are rounded down to [`BLOCK`] bytes per stream; the experiments
//! size buffers in whole pages, so nothing is lost in practice.

use super::{KernelSpec, VectorWidth};
use serde::{Deserialize, Serialize};

/// Granularity of every streaming loop: 4 vectors of the widest width (AVX-512).
pub const BLOCK: usize = 256;

/// A streaming operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StreamOp {
    Read,
    Write,
    WriteNt,
    Copy,
    CopyNt,
    Triad,
}

impl StreamOp {
    pub const NAMES: [&'static str; 6] = ["read", "write", "write-nt", "copy", "copy-nt", "triad"];

    pub fn name(self) -> &'static str {
        match self {
            StreamOp::Read => "read",
            StreamOp::Write => "write",
            StreamOp::WriteNt => "write-nt",
            StreamOp::Copy => "copy",
            StreamOp::CopyNt => "copy-nt",
            StreamOp::Triad => "triad",
        }
    }

    pub fn parse(s: &str) -> Option<StreamOp> {
        StreamOp::NAMES
            .iter()
            .position(|n| n.eq_ignore_ascii_case(s))
            .map(|i| {
                [
                    StreamOp::Read,
                    StreamOp::Write,
                    StreamOp::WriteNt,
                    StreamOp::Copy,
                    StreamOp::CopyNt,
                    StreamOp::Triad,
                ][i]
            })
    }

    /// How many equal arrays the op works on (read/write: 1, copy: 2 —
    /// source and destination, triad: 3). A buffer is split into this many.
    pub fn streams(self) -> usize {
        match self {
            StreamOp::Read | StreamOp::Write | StreamOp::WriteNt => 1,
            StreamOp::Copy | StreamOp::CopyNt => 2,
            StreamOp::Triad => 3,
        }
    }

    /// The kernel spec, per 8-byte element (the unit likwid-bench uses, so
    /// the two can be compared line by line). The scalar kernel has no
    /// non-temporal store and uses ordinary ones; NEON's is a non-temporal
    /// pair store (STNP) and SVE's STNT1D, both hints the core may ignore;
    /// [`StreamOp::spec_for`] says so.
    pub fn spec(self) -> KernelSpec {
        let (iteration, loads, stores, nt) = match self {
            StreamOp::Read => ("load one element", 1, 0, false),
            StreamOp::Write => ("store one element", 0, 1, false),
            StreamOp::WriteNt => ("store one element, bypassing the caches", 0, 1, true),
            StreamOp::Copy => ("a[i] = b[i]", 1, 1, false),
            StreamOp::CopyNt => ("a[i] = b[i], the store bypassing the caches", 1, 1, true),
            StreamOp::Triad => ("a[i] = b[i] + s * c[i] (f64)", 2, 1, false),
        };
        KernelSpec {
            name: self.name().replace('-', "_"),
            iteration: iteration.into(),
            bytes_per_iter: 8 * (loads + stores),
            loads_per_iter: loads,
            stores_per_iter: stores,
            write_allocate_bytes_per_iter: if nt { 0 } else { 8 * stores },
            nontemporal: nt,
        }
    }

    /// The spec as actually run at `width`: which store instruction ran and
    /// whether it was non-temporal.
    pub fn spec_for(self, width: VectorWidth) -> KernelSpec {
        let mut s = self.spec();
        if !s.nontemporal {
            return s;
        }
        match width {
            VectorWidth::Scalar => {
                s.nontemporal = false;
                s.write_allocate_bytes_per_iter = 8 * s.stores_per_iter;
                s.iteration
                    .push_str(" (no non-temporal store at this width: ordinary store)");
            }
            VectorWidth::Neon => s
                .iteration
                .push_str(" (STNP non-temporal pair store: a hint, no write-allocate expected)"),
            VectorWidth::Sve => s
                .iteration
                .push_str(" (SVE STNT1D non-temporal store: a hint, no write-allocate expected)"),
            _ => {}
        }
        s
    }
}

/// The arrays one thread streams. Unused pointers may be null.
#[derive(Debug, Clone, Copy)]
pub struct Streams {
    /// Destination (write, copy, triad `a`).
    pub dst: *mut u8,
    /// First source (read, copy, triad `b`).
    pub src: *const u8,
    /// Second source (triad `c`).
    pub src2: *const u8,
    /// Bytes per array.
    pub len: usize,
}

// SAFETY: addresses only; the buffers are owned by the caller.
unsafe impl Send for Streams {}

impl Streams {
    /// Split one buffer of `len` bytes at `base` into the arrays `op` needs,
    /// each a multiple of [`BLOCK`] and page-aligned relative to `base` (the
    /// running kernel's base page).
    pub fn split(op: StreamOp, base: *mut u8, len: usize) -> Streams {
        Streams::split_at_pages(op, base, len, crate::pagesize::base() as usize)
    }

    /// [`split`](Self::split) with arrays aligned to `page` bytes.
    pub fn split_at_pages(op: StreamOp, base: *mut u8, len: usize, page: usize) -> Streams {
        let k = op.streams();
        let per = (len / k) / page * page;
        let per = if per == 0 {
            (len / k) / BLOCK * BLOCK
        } else {
            per
        };
        // Address arithmetic only; nothing is dereferenced here.
        let at = |i: usize| base.wrapping_add(i * per);
        match op {
            StreamOp::Read => Streams {
                dst: std::ptr::null_mut(),
                src: base,
                src2: std::ptr::null(),
                len: per,
            },
            StreamOp::Write | StreamOp::WriteNt => Streams {
                dst: base,
                src: std::ptr::null(),
                src2: std::ptr::null(),
                len: per,
            },
            StreamOp::Copy | StreamOp::CopyNt => Streams {
                dst: at(1),
                src: at(0),
                src2: std::ptr::null(),
                len: per,
            },
            StreamOp::Triad => Streams {
                dst: at(0),
                src: at(1),
                src2: at(2),
                len: per,
            },
        }
    }

    /// The arrays' bytes `[start, start + len)`, each array cut the same
    /// way (a part of a pass). `start` and `len` are multiples of
    /// [`BLOCK`] within `self.len`; the caller's promise, as for `split`.
    pub fn slice(&self, start: usize, len: usize) -> Streams {
        let at = |p: *const u8| {
            if p.is_null() {
                p
            } else {
                p.wrapping_add(start)
            }
        };
        Streams {
            dst: at(self.dst).cast_mut(),
            src: at(self.src),
            src2: at(self.src2),
            len: len.min(self.len.saturating_sub(start)),
        }
    }

    /// Bytes one pass asks for (every array read or written once).
    pub fn bytes_per_pass(&self, op: StreamOp) -> u64 {
        let n = self.len / BLOCK * BLOCK;
        (n * op.streams()) as u64
    }
}

/// Run `op` once over `s` at `width` and return a value derived from the
/// loaded data (pass it to `black_box`).
///
/// # Safety
/// The pointers `op` uses must be valid for `s.len` bytes, 64-byte aligned,
/// and `width` must be available on this CPU ([`VectorWidth::available`]).
pub unsafe fn run(op: StreamOp, width: VectorWidth, s: &Streams) -> u64 {
    let n = s.len / BLOCK * BLOCK;
    let r = match width {
        #[cfg(target_arch = "x86_64")]
        VectorWidth::Avx512 => x86_avx512::run(op, s.dst, s.src, s.src2, n),
        #[cfg(target_arch = "x86_64")]
        VectorWidth::Avx2 => x86_avx2::run(op, s.dst, s.src, s.src2, n),
        #[cfg(target_arch = "x86_64")]
        VectorWidth::Sse2 => x86_sse2::run(op, s.dst, s.src, s.src2, n),
        #[cfg(target_arch = "aarch64")]
        VectorWidth::Neon => super::stream_arm::neon::run(op, s.dst, s.src, s.src2, n),
        #[cfg(target_arch = "aarch64")]
        VectorWidth::Sve => super::stream_arm::sve::run(op, s.dst, s.src, s.src2, n),
        _ => scalar::run(op, s.dst, s.src, s.src2, n),
    };
    std::hint::black_box(r)
}

macro_rules! x86_kernels {
    ($m:ident, $feat:literal, $vi:ty, $vd:ty, $vb:expr,
     zero = $zero:path, load = $load:path, store = $store:path, stream = $stream:path,
     xor = $xor:path, set1 = $set1:path, loadpd = $loadpd:path, storepd = $storepd:path,
     addpd = $addpd:path, mulpd = $mulpd:path, set1pd = $set1pd:path) => {
        #[cfg(target_arch = "x86_64")]
        mod $m {
            use super::{StreamOp, BLOCK};
            #[allow(unused_imports)]
            use std::arch::x86_64::*;
            const VB: usize = $vb;

            #[target_feature(enable = $feat)]
            pub unsafe fn run(
                op: StreamOp,
                d: *mut u8,
                s: *const u8,
                s2: *const u8,
                n: usize,
            ) -> u64 {
                match op {
                    StreamOp::Read => read(s, n),
                    StreamOp::Write => {
                        write(d, n);
                        0
                    }
                    StreamOp::WriteNt => {
                        write_nt(d, n);
                        0
                    }
                    StreamOp::Copy => {
                        copy(d, s, n);
                        0
                    }
                    StreamOp::CopyNt => {
                        copy_nt(d, s, n);
                        0
                    }
                    StreamOp::Triad => {
                        triad(d, s, s2, n);
                        0
                    }
                }
            }

            #[target_feature(enable = $feat)]
            unsafe fn read(s: *const u8, n: usize) -> u64 {
                let (mut a0, mut a1, mut a2, mut a3) = ($zero(), $zero(), $zero(), $zero());
                let mut i = 0;
                // A whole BLOCK per iteration at every width (16 SSE2 loads,
                // 8 AVX2, 4 AVX-512): narrow widths get as many lines per
                // loop turn as the widest.
                while i < n {
                    let mut k = 0;
                    while k < BLOCK {
                        a0 = $xor(a0, $load(s.add(i + k) as *const _));
                        a1 = $xor(a1, $load(s.add(i + k + VB) as *const _));
                        a2 = $xor(a2, $load(s.add(i + k + 2 * VB) as *const _));
                        a3 = $xor(a3, $load(s.add(i + k + 3 * VB) as *const _));
                        k += 4 * VB;
                    }
                    i += BLOCK;
                }
                let a = $xor($xor(a0, a1), $xor(a2, a3));
                // Not an aligned store to a stack array (u64-aligned only):
                // reinterpret the register's lanes instead.
                let out: [u64; VB / 8] = std::mem::transmute::<$vi, [u64; VB / 8]>(a);
                out.iter().fold(0, |x, y| x ^ y)
            }

            #[target_feature(enable = $feat)]
            unsafe fn write(d: *mut u8, n: usize) {
                let v: $vi = $set1(0x5a5a_5a5a);
                let mut i = 0;
                while i < n {
                    $store(d.add(i) as *mut _, v);
                    $store(d.add(i + VB) as *mut _, v);
                    $store(d.add(i + 2 * VB) as *mut _, v);
                    $store(d.add(i + 3 * VB) as *mut _, v);
                    i += 4 * VB;
                }
            }

            #[target_feature(enable = $feat)]
            unsafe fn write_nt(d: *mut u8, n: usize) {
                let v: $vi = $set1(0x5a5a_5a5a);
                let mut i = 0;
                while i < n {
                    $stream(d.add(i) as *mut _, v);
                    $stream(d.add(i + VB) as *mut _, v);
                    $stream(d.add(i + 2 * VB) as *mut _, v);
                    $stream(d.add(i + 3 * VB) as *mut _, v);
                    i += 4 * VB;
                }
                _mm_sfence();
            }

            #[target_feature(enable = $feat)]
            unsafe fn copy(d: *mut u8, s: *const u8, n: usize) {
                let mut i = 0;
                while i < n {
                    let x0: $vi = $load(s.add(i) as *const _);
                    let x1: $vi = $load(s.add(i + VB) as *const _);
                    let x2: $vi = $load(s.add(i + 2 * VB) as *const _);
                    let x3: $vi = $load(s.add(i + 3 * VB) as *const _);
                    $store(d.add(i) as *mut _, x0);
                    $store(d.add(i + VB) as *mut _, x1);
                    $store(d.add(i + 2 * VB) as *mut _, x2);
                    $store(d.add(i + 3 * VB) as *mut _, x3);
                    i += 4 * VB;
                }
            }

            #[target_feature(enable = $feat)]
            unsafe fn copy_nt(d: *mut u8, s: *const u8, n: usize) {
                let mut i = 0;
                while i < n {
                    let x0: $vi = $load(s.add(i) as *const _);
                    let x1: $vi = $load(s.add(i + VB) as *const _);
                    let x2: $vi = $load(s.add(i + 2 * VB) as *const _);
                    let x3: $vi = $load(s.add(i + 3 * VB) as *const _);
                    $stream(d.add(i) as *mut _, x0);
                    $stream(d.add(i + VB) as *mut _, x1);
                    $stream(d.add(i + 2 * VB) as *mut _, x2);
                    $stream(d.add(i + 3 * VB) as *mut _, x3);
                    i += 4 * VB;
                }
                _mm_sfence();
            }

            #[target_feature(enable = $feat)]
            unsafe fn triad(a: *mut u8, b: *const u8, c: *const u8, n: usize) {
                let k: $vd = $set1pd(3.0);
                let mut i = 0;
                while i < n {
                    for j in 0..4 {
                        let o = i + j * VB;
                        let x: $vd = $loadpd(b.add(o) as *const f64);
                        let y: $vd = $loadpd(c.add(o) as *const f64);
                        $storepd(a.add(o) as *mut f64, $addpd(x, $mulpd(k, y)));
                    }
                    i += 4 * VB;
                }
            }
        }
    };
}

x86_kernels!(
    x86_sse2,
    "sse2",
    __m128i,
    __m128d,
    16,
    zero = _mm_setzero_si128,
    load = _mm_load_si128,
    store = _mm_store_si128,
    stream = _mm_stream_si128,
    xor = _mm_xor_si128,
    set1 = _mm_set1_epi32,
    loadpd = _mm_load_pd,
    storepd = _mm_store_pd,
    addpd = _mm_add_pd,
    mulpd = _mm_mul_pd,
    set1pd = _mm_set1_pd
);

x86_kernels!(
    x86_avx2,
    "avx2",
    __m256i,
    __m256d,
    32,
    zero = _mm256_setzero_si256,
    load = _mm256_load_si256,
    store = _mm256_store_si256,
    stream = _mm256_stream_si256,
    xor = _mm256_xor_si256,
    set1 = _mm256_set1_epi32,
    loadpd = _mm256_load_pd,
    storepd = _mm256_store_pd,
    addpd = _mm256_add_pd,
    mulpd = _mm256_mul_pd,
    set1pd = _mm256_set1_pd
);

x86_kernels!(
    x86_avx512,
    "avx512f",
    __m512i,
    __m512d,
    64,
    zero = _mm512_setzero_si512,
    load = _mm512_load_si512,
    store = _mm512_store_si512,
    stream = _mm512_stream_si512,
    xor = _mm512_xor_si512,
    set1 = _mm512_set1_epi32,
    loadpd = _mm512_load_pd,
    storepd = _mm512_store_pd,
    addpd = _mm512_add_pd,
    mulpd = _mm512_mul_pd,
    set1pd = _mm512_set1_pd
);

/// Portable fallback: 64-bit words, eight at a time. The compiler may
/// vectorise these loops; the result still reads and writes every byte.
mod scalar {
    use super::StreamOp;

    pub unsafe fn run(op: StreamOp, d: *mut u8, s: *const u8, s2: *const u8, n: usize) -> u64 {
        let words = n / 8;
        let d = d as *mut u64;
        let s = s as *const u64;
        match op {
            StreamOp::Read => {
                let mut acc = [0u64; 8];
                let mut i = 0;
                while i < words {
                    for (j, a) in acc.iter_mut().enumerate() {
                        *a ^= *s.add(i + j);
                    }
                    i += 8;
                }
                acc.iter().fold(0, |x, y| x ^ y)
            }
            StreamOp::Write | StreamOp::WriteNt => {
                for i in 0..words {
                    *d.add(i) = 0x5a5a_5a5a_5a5a_5a5a;
                }
                0
            }
            StreamOp::Copy | StreamOp::CopyNt => {
                std::ptr::copy_nonoverlapping(s, d, words);
                0
            }
            StreamOp::Triad => {
                let (a, b, c) = (d as *mut f64, s as *const f64, s2 as *const f64);
                for i in 0..words {
                    *a.add(i) = *b.add(i) + 3.0 * *c.add(i);
                }
                0
            }
        }
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
