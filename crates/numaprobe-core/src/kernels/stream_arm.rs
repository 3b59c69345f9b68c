//! The arm64 streaming kernels: NEON (128-bit, every arm64 CPU) and SVE
//! (the CPU's vector length: A64FX, Graviton3/4, Grace), each with a
//! non-temporal store for `write-nt` and `copy-nt`.
//!
//! NEON's non-temporal store is STNP (store pair of registers with a
//! non-temporal hint), SVE's STNT1D; both are hints the core may ignore, which
//! the kernel spec says ([`super::StreamOp::spec_for`]). They are written in
//! inline assembly because Rust has no intrinsic for STNP and no stable SVE
//! intrinsics at all; the loops are otherwise those of the x86 kernels: the
//! read kernel XORs every loaded vector into accumulators, a `dmb ishst`
//! after non-temporal stores orders them before the clock is read again.
//!
//! SVE loops are predicated (`whilelo`), so any length that is a multiple of
//! 8 bytes runs without remainder code; qemu-user with `-cpu max` runs them
//! for correctness on x86 hosts (scripts/vm-test-arm64).

/// The SVE vector length in bits, 0 where the CPU has no SVE.
pub fn sve_bits() -> u32 {
    #[cfg(target_arch = "aarch64")]
    {
        if std::arch::is_aarch64_feature_detected!("sve") {
            // SAFETY: SVE is present (checked above).
            return unsafe { sve::vector_bytes() } as u32 * 8;
        }
    }
    0
}

#[cfg(target_arch = "aarch64")]
pub(super) mod neon {
    use super::super::StreamOp;
    use std::arch::aarch64::*;
    use std::arch::asm;

    /// Run `op` over `n` bytes (a multiple of 64).
    ///
    /// # Safety
    /// As [`super::super::stream::run`].
    #[target_feature(enable = "neon")]
    pub unsafe fn run(op: StreamOp, d: *mut u8, s: *const u8, s2: *const u8, n: usize) -> u64 {
        let mut i = 0;
        match op {
            StreamOp::Read => {
                let (mut a0, mut a1, mut a2, mut a3) = (
                    vdupq_n_u64(0),
                    vdupq_n_u64(0),
                    vdupq_n_u64(0),
                    vdupq_n_u64(0),
                );
                while i < n {
                    a0 = veorq_u64(a0, vld1q_u64(s.add(i) as *const u64));
                    a1 = veorq_u64(a1, vld1q_u64(s.add(i + 16) as *const u64));
                    a2 = veorq_u64(a2, vld1q_u64(s.add(i + 32) as *const u64));
                    a3 = veorq_u64(a3, vld1q_u64(s.add(i + 48) as *const u64));
                    i += 64;
                }
                let a = veorq_u64(veorq_u64(a0, a1), veorq_u64(a2, a3));
                vgetq_lane_u64::<0>(a) ^ vgetq_lane_u64::<1>(a)
            }
            StreamOp::Write => {
                let v = vdupq_n_u64(0x5a5a_5a5a_5a5a_5a5a);
                while i < n {
                    vst1q_u64(d.add(i) as *mut u64, v);
                    vst1q_u64(d.add(i + 16) as *mut u64, v);
                    vst1q_u64(d.add(i + 32) as *mut u64, v);
                    vst1q_u64(d.add(i + 48) as *mut u64, v);
                    i += 64;
                }
                0
            }
            StreamOp::WriteNt => {
                if n > 0 {
                    // SAFETY: [d, d+n) is writable (caller); n % 64 == 0.
                    asm!(
                        "dup v0.2d, {pat}",
                        "mov v1.16b, v0.16b",
                        "2:",
                        "stnp q0, q1, [{d}]",
                        "stnp q0, q1, [{d}, #32]",
                        "add {d}, {d}, #64",
                        "cmp {d}, {end}",
                        "b.lo 2b",
                        "dmb ishst",
                        pat = in(reg) 0x5a5a_5a5a_5a5a_5a5au64,
                        d = inout(reg) d => _,
                        end = in(reg) d.add(n),
                        out("v0") _, out("v1") _,
                        options(nostack),
                    );
                }
                0
            }
            StreamOp::Copy => {
                while i < n {
                    let x0 = vld1q_u64(s.add(i) as *const u64);
                    let x1 = vld1q_u64(s.add(i + 16) as *const u64);
                    let x2 = vld1q_u64(s.add(i + 32) as *const u64);
                    let x3 = vld1q_u64(s.add(i + 48) as *const u64);
                    vst1q_u64(d.add(i) as *mut u64, x0);
                    vst1q_u64(d.add(i + 16) as *mut u64, x1);
                    vst1q_u64(d.add(i + 32) as *mut u64, x2);
                    vst1q_u64(d.add(i + 48) as *mut u64, x3);
                    i += 64;
                }
                0
            }
            StreamOp::CopyNt => {
                if n > 0 {
                    // SAFETY: both ranges valid for n bytes (caller); n % 64 == 0.
                    asm!(
                        "2:",
                        "ldp q0, q1, [{s}]",
                        "ldp q2, q3, [{s}, #32]",
                        "stnp q0, q1, [{d}]",
                        "stnp q2, q3, [{d}, #32]",
                        "add {s}, {s}, #64",
                        "add {d}, {d}, #64",
                        "cmp {d}, {end}",
                        "b.lo 2b",
                        "dmb ishst",
                        s = inout(reg) s => _,
                        d = inout(reg) d => _,
                        end = in(reg) d.add(n),
                        out("v0") _, out("v1") _, out("v2") _, out("v3") _,
                        options(nostack),
                    );
                }
                0
            }
            StreamOp::Triad => {
                let k = vdupq_n_f64(3.0);
                while i < n {
                    let x = vld1q_f64(s.add(i) as *const f64);
                    let y = vld1q_f64(s2.add(i) as *const f64);
                    vst1q_f64(d.add(i) as *mut f64, vaddq_f64(x, vmulq_f64(k, y)));
                    i += 16;
                }
                0
            }
        }
    }
}

#[cfg(target_arch = "aarch64")]
pub(super) mod sve {
    use super::super::StreamOp;
    use std::arch::asm;

    /// Bytes per SVE vector.
    ///
    /// # Safety
    /// The CPU must have SVE.
    #[target_feature(enable = "sve")]
    pub unsafe fn vector_bytes() -> u64 {
        let b: u64;
        asm!("rdvl {}, #1", out(reg) b, options(nomem, nostack, pure));
        b
    }

    /// Run `op` over `n` bytes (a multiple of 8), one predicated vector of
    /// 64-bit lanes per step.
    ///
    /// # Safety
    /// As [`super::super::stream::run`], and the CPU must have SVE.
    #[target_feature(enable = "sve")]
    pub unsafe fn run(op: StreamOp, d: *mut u8, s: *const u8, s2: *const u8, n: usize) -> u64 {
        let words = (n / 8) as u64;
        if words == 0 {
            return 0;
        }
        match op {
            StreamOp::Read => {
                let out: u64;
                // SAFETY: [s, s+n) readable (caller).
                asm!(
                    "mov z0.d, #0",
                    "mov {i}, #0",
                    "whilelo p0.d, {i}, {w}",
                    "2:",
                    "ld1d {{z1.d}}, p0/z, [{s}, {i}, lsl #3]",
                    "eor z0.d, z0.d, z1.d",
                    "incd {i}",
                    "whilelo p0.d, {i}, {w}",
                    "b.first 2b",
                    "ptrue p1.d",
                    "eorv d2, p1, z0.d",
                    "fmov {out}, d2",
                    s = in(reg) s,
                    w = in(reg) words,
                    i = out(reg) _,
                    out = out(reg) out,
                    out("v0") _, out("v1") _, out("v2") _, out("p0") _, out("p1") _,
                    options(nostack, readonly),
                );
                out
            }
            StreamOp::Write | StreamOp::WriteNt => {
                // One loop, two store instructions: ordinary or non-temporal.
                if op == StreamOp::Write {
                    asm!(
                        "mov z0.d, {pat}",
                        "mov {i}, #0",
                        "whilelo p0.d, {i}, {w}",
                        "2:",
                        "st1d {{z0.d}}, p0, [{d}, {i}, lsl #3]",
                        "incd {i}",
                        "whilelo p0.d, {i}, {w}",
                        "b.first 2b",
                        pat = in(reg) 0x5a5a_5a5a_5a5a_5a5au64,
                        d = in(reg) d,
                        w = in(reg) words,
                        i = out(reg) _,
                        out("v0") _, out("p0") _,
                        options(nostack),
                    );
                } else {
                    asm!(
                        "mov z0.d, {pat}",
                        "mov {i}, #0",
                        "whilelo p0.d, {i}, {w}",
                        "2:",
                        "stnt1d {{z0.d}}, p0, [{d}, {i}, lsl #3]",
                        "incd {i}",
                        "whilelo p0.d, {i}, {w}",
                        "b.first 2b",
                        "dmb ishst",
                        pat = in(reg) 0x5a5a_5a5a_5a5a_5a5au64,
                        d = in(reg) d,
                        w = in(reg) words,
                        i = out(reg) _,
                        out("v0") _, out("p0") _,
                        options(nostack),
                    );
                }
                0
            }
            StreamOp::Copy => {
                asm!(
                    "mov {i}, #0",
                    "whilelo p0.d, {i}, {w}",
                    "2:",
                    "ld1d {{z1.d}}, p0/z, [{s}, {i}, lsl #3]",
                    "st1d {{z1.d}}, p0, [{d}, {i}, lsl #3]",
                    "incd {i}",
                    "whilelo p0.d, {i}, {w}",
                    "b.first 2b",
                    s = in(reg) s,
                    d = in(reg) d,
                    w = in(reg) words,
                    i = out(reg) _,
                    out("v1") _, out("p0") _,
                    options(nostack),
                );
                0
            }
            StreamOp::CopyNt => {
                asm!(
                    "mov {i}, #0",
                    "whilelo p0.d, {i}, {w}",
                    "2:",
                    "ld1d {{z1.d}}, p0/z, [{s}, {i}, lsl #3]",
                    "stnt1d {{z1.d}}, p0, [{d}, {i}, lsl #3]",
                    "incd {i}",
                    "whilelo p0.d, {i}, {w}",
                    "b.first 2b",
                    "dmb ishst",
                    s = in(reg) s,
                    d = in(reg) d,
                    w = in(reg) words,
                    i = out(reg) _,
                    out("v1") _, out("p0") _,
                    options(nostack),
                );
                0
            }
            StreamOp::Triad => {
                asm!(
                    "fmov z3.d, #3.0",
                    "mov {i}, #0",
                    "whilelo p0.d, {i}, {w}",
                    "2:",
                    "ld1d {{z1.d}}, p0/z, [{b}, {i}, lsl #3]",
                    "ld1d {{z2.d}}, p0/z, [{c}, {i}, lsl #3]",
                    "fmla z1.d, p0/m, z2.d, z3.d",
                    "st1d {{z1.d}}, p0, [{a}, {i}, lsl #3]",
                    "incd {i}",
                    "whilelo p0.d, {i}, {w}",
                    "b.first 2b",
                    a = in(reg) d,
                    b = in(reg) s,
                    c = in(reg) s2,
                    w = in(reg) words,
                    i = out(reg) _,
                    out("v1") _, out("v2") _, out("v3") _, out("p0") _,
                    options(nostack),
                );
                0
            }
        }
    }
}
