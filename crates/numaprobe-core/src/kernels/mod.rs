//! The measurement loops. A kernel does no I/O and is described by data
//! (bytes per iteration, loads, stores), in the spirit of likwid-bench.
//!
//! - `chase`: the dependent pointer chase for latency (one random cycle over
//!   the buffer's lines by Sattolo's algorithm, optionally TLB-local windows
//!   as multichase does, or a fixed stride as in McCalpin's remote-latency measurements).
//! - `stream`: streaming read, write, non-temporal write, copy, non-temporal
//!   copy and triad, at the widest vector width the CPU has (chosen at run
//!   time, recorded in results).
//! - `pingpong`: cache-line transfer between two pinned threads (c2c):
//!   HITM ping-pong on one line, and a chase of lines the other CPU holds
//!   clean.
//! - `line_latency`: one flushed line's load, timed alone (the interleave
//!   probe's per-line samples).
//! - `atomics`: atomic add and a spin lock under contention, as LSE or
//!   load/store-exclusive loops on arm64 (chosen at run time), `lock` on x86-64.
//! - `strided`: AMD 40555's read-only / write-only loops, one 8-byte element
//!   per 64-byte line.
//!
//! Nothing here may be optimised away: the chase and the strided loops use
//! volatile accesses, the streaming loops use explicit vector loads and
//! stores through raw pointers and their results go through `black_box`.

pub mod atomics;
pub mod chase;
pub mod line_latency;
pub mod mix;
pub mod pingpong;
pub mod stream;
mod stream_arm;
pub mod strided;

use serde::{Deserialize, Serialize};

pub use chase::{ChasePattern, ChaseSetup};
pub use stream::StreamOp;

/// A kernel described by data, as likwid-bench describes its benchmarks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelSpec {
    /// Stable name used in results (`chase_random`, `read`, `copy_nt`, ...).
    pub name: String,
    /// What one iteration is, in words.
    pub iteration: String,
    /// Bytes the program asks for per iteration (loads plus stores). This is
    /// what bandwidth figures count.
    pub bytes_per_iter: u32,
    pub loads_per_iter: u32,
    pub stores_per_iter: u32,
    /// Extra bytes the memory system reads per iteration because ordinary
    /// stores to a line not in cache first fetch it (write-allocate). Not
    /// counted in bandwidth figures, stated so nobody mistakes it for free.
    pub write_allocate_bytes_per_iter: u32,
    /// Stores bypass the caches (no write-allocate).
    pub nontemporal: bool,
}

/// The SIMD width a streaming kernel runs at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VectorWidth {
    Avx512,
    Avx2,
    Sse2,
    /// Arm's Scalable Vector Extension, at the CPU's vector length (128 to
    /// 2048 bits: 512 on A64FX, 256 on Graviton3, 128 on Graviton4 and Grace).
    Sve,
    Neon,
    /// Plain 64-bit integer loads and stores (what the compiler makes of them).
    Scalar,
}

impl VectorWidth {
    /// Every width, widest first (per architecture), as `--vector` lists them.
    pub const ALL: [VectorWidth; 6] = [
        VectorWidth::Avx512,
        VectorWidth::Avx2,
        VectorWidth::Sse2,
        VectorWidth::Sve,
        VectorWidth::Neon,
        VectorWidth::Scalar,
    ];

    /// The widest width this CPU supports, detected at run time (so one
    /// binary uses AVX-512 where it exists and still runs where it does not).
    pub fn detect() -> VectorWidth {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return VectorWidth::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return VectorWidth::Avx2;
            }
            VectorWidth::Sse2
        }
        #[cfg(target_arch = "aarch64")]
        {
            // SVE where the CPU has it: at 128 bits it moves what NEON does,
            // wider it moves more per instruction, and its loops are
            // predicated (no remainder code to get wrong).
            if std::arch::is_aarch64_feature_detected!("sve") {
                return VectorWidth::Sve;
            }
            if std::arch::is_aarch64_feature_detected!("neon") {
                return VectorWidth::Neon;
            }
            VectorWidth::Scalar
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            VectorWidth::Scalar
        }
    }

    /// Whether this CPU can run kernels at this width.
    pub fn available(self) -> bool {
        match self {
            VectorWidth::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            VectorWidth::Sse2 => true,
            #[cfg(target_arch = "x86_64")]
            VectorWidth::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            VectorWidth::Avx512 => std::arch::is_x86_feature_detected!("avx512f"),
            #[cfg(target_arch = "aarch64")]
            VectorWidth::Neon => std::arch::is_aarch64_feature_detected!("neon"),
            #[cfg(target_arch = "aarch64")]
            VectorWidth::Sve => std::arch::is_aarch64_feature_detected!("sve"),
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    /// Bits per vector; SVE's is the CPU's vector length (0 where the CPU
    /// has no SVE).
    pub fn bits(self) -> u32 {
        match self {
            VectorWidth::Sve => stream_arm::sve_bits(),
            VectorWidth::Avx512 => 512,
            VectorWidth::Avx2 => 256,
            VectorWidth::Sse2 | VectorWidth::Neon => 128,
            VectorWidth::Scalar => 64,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            VectorWidth::Avx512 => "avx512",
            VectorWidth::Avx2 => "avx2",
            VectorWidth::Sse2 => "sse2",
            VectorWidth::Neon => "neon",
            VectorWidth::Sve => "sve",
            VectorWidth::Scalar => "scalar",
        }
    }
}

/// Flush one line from every cache (coherently) so its next load comes
/// from memory, or from whoever reads it first (c2c's clean lines, the
/// interleave probe's single loads).
#[inline(always)]
pub(crate) fn flush_line(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: clflush of a valid address (SSE2, part of x86-64).
    unsafe {
        std::arch::x86_64::_mm_clflush(p)
    };
    #[cfg(target_arch = "aarch64")]
    // SAFETY: clean and invalidate to the point of coherency; Linux lets user
    // space issue it (SCTLR_EL1.UCI).
    unsafe {
        std::arch::asm!("dc civac, {p}", p = in(reg) p, options(nostack, preserves_flags))
    };
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = p;
}

/// Order the flushes before the loads that follow.
#[inline(always)]
pub(crate) fn flush_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: mfence has no operands.
    unsafe {
        std::arch::x86_64::_mm_mfence()
    };
    #[cfg(target_arch = "aarch64")]
    // SAFETY: a full barrier.
    unsafe {
        std::arch::asm!("dsb ish", options(nostack, preserves_flags))
    };
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detected_width_is_available() {
        let w = VectorWidth::detect();
        assert!(w.available());
        assert!(VectorWidth::Scalar.available());
        assert!(w.bits() >= 64);
    }
}
