//! Traffic mixes (MLC's read:write ratios) and the one kernel that generates
//! them with an injected delay: the load threads of loaded latency and the
//! streams of the system peak run it.
//!
//! A pass walks a read buffer and a write buffer in groups: `reads` lines
//! loaded (by the streaming read kernel at the run's vector width), then
//! `writes` lines stored, then `delay` units of idle work for each such
//! reads-and-writes, before the next group; groups are whole blocks of four lines (see
//! [`run`]). Delay 0 is as fast as the core can go; a larger delay
//! injects less traffic. Bytes counted are the bytes asked for (lines read
//! plus lines written); write-allocate reads of ordinary stores are the
//! caller's to state.

use super::stream::{self, StreamOp, Streams, BLOCK};
use super::VectorWidth;
use serde::{Deserialize, Serialize};

/// Bytes of one cache line as the kernels walk them.
pub const LINE: usize = 64;

/// A traffic mix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mix {
    /// Loads only.
    Read,
    /// `reads` lines loaded for every `writes` lines stored (3:1, 2:1, 1:1).
    ReadWrite { reads: u32, writes: u32 },
    /// Non-temporal stores only (movnti on x86-64, STNP on arm64).
    NtWrite,
}

impl Mix {
    /// The mixes MLC's loaded latency and peak injection bandwidth offer.
    pub const ALL: [Mix; 5] = [
        Mix::Read,
        Mix::ReadWrite {
            reads: 3,
            writes: 1,
        },
        Mix::ReadWrite {
            reads: 2,
            writes: 1,
        },
        Mix::ReadWrite {
            reads: 1,
            writes: 1,
        },
        Mix::NtWrite,
    ];

    /// `read`, `3:1`, `nt-write`, ...
    pub fn name(self) -> String {
        match self {
            Mix::Read => "read".into(),
            Mix::ReadWrite { reads, writes } => format!("{reads}:{writes}"),
            Mix::NtWrite => "nt-write".into(),
        }
    }

    /// `read`, `nt-write`, or `R:W` with R and W from 1 to 16 (so `3:1`,
    /// `2:1`, `1:1`, `1:3` ...); None for anything else.
    pub fn parse(s: &str) -> Option<Mix> {
        let s = s.trim().to_ascii_lowercase();
        match s.as_str() {
            "read" | "reads" | "r" => return Some(Mix::Read),
            "nt-write" | "nt" | "ntw" => return Some(Mix::NtWrite),
            _ => {}
        }
        let (r, w) = s.split_once(':')?;
        let r: u32 = r.trim().parse().ok()?;
        let w: u32 = w.trim().parse().ok()?;
        match (r, w) {
            (1..=16, 0) => Some(Mix::Read),
            (1..=16, 1..=16) => Some(Mix::ReadWrite {
                reads: r,
                writes: w,
            }),
            _ => None,
        }
    }

    /// Lines loaded and stored per group.
    pub fn group(self) -> (u32, u32) {
        match self {
            Mix::Read => (1, 0),
            Mix::ReadWrite { reads, writes } => (reads, writes),
            Mix::NtWrite => (0, 1),
        }
    }

    pub fn nontemporal(self) -> bool {
        matches!(self, Mix::NtWrite)
    }
}

/// The buffers one load thread walks. A mix without reads or without
/// writes leaves the other null with length 0.
#[derive(Debug, Clone, Copy)]
pub struct MixBuffers {
    pub read: *const u8,
    pub read_len: usize,
    pub write: *mut u8,
    pub write_len: usize,
}

// SAFETY: plain addresses; the buffers are owned by the thread's caller.
unsafe impl Send for MixBuffers {}

/// Idle work between groups: `units` iterations the compiler cannot drop
/// and the core cannot skip (about one cycle each), no memory access.
#[inline(always)]
fn idle(units: u64) {
    let mut i = 0u64;
    while i < units {
        i = std::hint::black_box(i) + 1;
    }
}

/// Lines per read or write unit of a group at delay > 0: one [`BLOCK`] of
/// the streaming read kernel, so every width reads whole blocks.
const UNIT: usize = BLOCK / LINE;

/// One pass over the buffers (until the read or the write buffer ends,
/// whichever comes first in groups). Returns the bytes asked for.
///
/// Reads go through the streaming read kernel at `width`, the one
/// `bandwidth --op read` runs, so that a read mix at delay 0 moves what
/// `bandwidth` moves at the same width (its saturated point) instead
/// of what some other load loop happens to reach. A group is therefore
/// `UNIT` x (reads, writes) lines with `UNIT` x `delay` idle units after it:
/// the same traffic per line as one line at a time, in blocks the vector
/// kernel can take. At delay 0 a mix with only reads or only writes is one
/// group over the whole buffer (nothing to interleave, no call per block).
///
/// # Safety
/// The pointers must be valid for `read_len` bytes of reads and
/// `write_len` bytes of writes, aligned to 64, and not overlap; `width`
/// must be available on this CPU ([`VectorWidth::available`]).
pub unsafe fn run(mix: Mix, b: &MixBuffers, delay: u32, width: VectorWidth) -> u64 {
    let (r, w) = mix.group();
    let (r, w) = (r as usize, w as usize);
    let read_lines = if r > 0 { b.read_len / LINE } else { 0 };
    let write_lines = if w > 0 { b.write_len / LINE } else { 0 };
    let unit = match (delay, r, w) {
        (0, 0, _) => (write_lines / w / UNIT).max(1) * UNIT,
        (0, _, 0) => (read_lines / r / UNIT).max(1) * UNIT,
        // Mixed at delay 0: bigger groups, fewer kernel calls, still
        // interleaved every few KiB.
        (0, _, _) => 4 * UNIT,
        _ => UNIT,
    };
    let (gr, gw) = (r * unit, w * unit);
    let groups = match (r, w) {
        (0, _) => write_lines / gw,
        (_, 0) => read_lines / gr,
        _ => (read_lines / gr).min(write_lines / gw),
    };
    let idle_units = (delay as u64).saturating_mul(unit as u64);
    let mut acc = 0u64;
    let (mut ri, mut wi) = (0usize, 0usize);
    for g in 0..groups {
        if gr > 0 {
            let s = Streams {
                dst: std::ptr::null_mut(),
                src: b.read.add(ri * LINE),
                src2: std::ptr::null(),
                len: gr * LINE,
            };
            acc ^= stream::run(StreamOp::Read, width, &s);
            ri += gr;
        }
        for _ in 0..gw {
            let p = b.write.add(wi * LINE) as *mut u64;
            // g + 1: a stored line is never all zeros, whatever the group.
            store_line(p, g as u64 + 1, mix.nontemporal());
            wi += 1;
        }
        if idle_units > 0 {
            idle(idle_units);
        }
    }
    if mix.nontemporal() {
        fence_nt();
    }
    std::hint::black_box(acc);
    (groups * (gr + gw) * LINE) as u64
}

#[inline(always)]
unsafe fn store_line(p: *mut u64, v: u64, nt: bool) {
    #[cfg(target_arch = "x86_64")]
    if nt {
        for k in 0..8 {
            // SAFETY: SSE2 is part of x86-64; p is 8-byte aligned.
            std::arch::x86_64::_mm_stream_si64(p.add(k) as *mut i64, v as i64);
        }
        return;
    }
    #[cfg(target_arch = "aarch64")]
    if nt {
        for k in (0..8).step_by(2) {
            // SAFETY: p + k is 16-byte aligned within the line.
            std::arch::asm!("stnp {v}, {v}, [{p}]", v = in(reg) v, p = in(reg) p.add(k),
                options(nostack, preserves_flags));
        }
        return;
    }
    let _ = nt;
    for k in 0..8 {
        std::ptr::write(p.add(k), v);
    }
}

#[inline(always)]
fn fence_nt() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: sfence has no operands; it orders the non-temporal stores.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
    #[cfg(target_arch = "aarch64")]
    // SAFETY: a store barrier.
    unsafe {
        std::arch::asm!("dmb ishst", options(nostack, preserves_flags))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixes_parse_and_name_round_trip() {
        for m in Mix::ALL {
            assert_eq!(Mix::parse(&m.name()), Some(m));
        }
        assert_eq!(Mix::parse(" 3:1 "), Some(Mix::ALL[1]));
        assert_eq!(Mix::parse("4:0"), Some(Mix::Read));
        for bad in ["", "3", "0:1", "3:x", "17:1", "1:17", "write", "3:1:1"] {
            assert_eq!(Mix::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn only_the_nt_write_mix_bypasses_the_caches() {
        for m in Mix::ALL {
            assert_eq!(m.nontemporal(), m == Mix::NtWrite, "{}", m.name());
        }
    }

    /// One cache line, so a `Vec` of them is 64-byte aligned as the vector
    /// kernels' aligned loads need.
    #[derive(Clone, Copy)]
    #[repr(C, align(64))]
    struct Line([u64; 8]);

    /// Two 64 KiB buffers of lines: the read one numbered, the write one zero.
    fn bufs() -> (Vec<Line>, Vec<Line>) {
        let r = (0..1024u64)
            .map(|i| Line(std::array::from_fn(|k| i * 8 + k as u64)))
            .collect();
        (r, vec![Line([0; 8]); 1024])
    }

    #[test]
    fn a_pass_moves_the_bytes_of_its_groups_and_writes_the_write_buffer() {
        let widths: Vec<VectorWidth> = VectorWidth::ALL
            .into_iter()
            .filter(|w| w.available())
            .collect();
        for width in widths {
            for (mix, delay, expect) in [
                (Mix::Read, 3, 65536u64),
                (Mix::Read, 0, 65536),
                // 3:1 over 1024 read lines in groups of 4 x (3, 1) lines:
                // 85 groups at delay > 0; 16 x (3, 1) at delay 0: 21 groups.
                (Mix::ALL[1], 3, 85 * 16 * 64),
                (Mix::ALL[1], 0, 21 * 64 * 64),
                (Mix::ALL[3], 3, 2 * 65536),
                (Mix::ALL[3], 0, 2 * 65536),
                (Mix::NtWrite, 3, 65536),
                (Mix::NtWrite, 0, 65536),
            ] {
                let (r, mut w) = bufs();
                let b = MixBuffers {
                    read: r.as_ptr() as *const u8,
                    read_len: 65536,
                    write: w.as_mut_ptr() as *mut u8,
                    write_len: 65536,
                };
                // SAFETY: both 64 KiB, 64-byte aligned (bufs), apart; the
                // width is available.
                let bytes = unsafe { run(mix, &b, delay, width) };
                let what = format!("{} delay {delay} {}", mix.name(), width.name());
                assert_eq!(bytes, expect, "{what}");
                let (reads, writes) = mix.group();
                let written = w.iter().filter(|l| l.0 != [0; 8]).count() as u64;
                // Every line the pass says it stored holds the group's mark.
                assert_eq!(
                    written,
                    expect / 64 * u64::from(writes) / u64::from(reads + writes),
                    "{what}"
                );
            }
        }
    }

    #[test]
    fn a_buffer_smaller_than_one_group_moves_nothing() {
        let (r, mut w) = bufs();
        let b = MixBuffers {
            read: r.as_ptr() as *const u8,
            read_len: 3 * LINE,
            write: w.as_mut_ptr() as *mut u8,
            write_len: 3 * LINE,
        };
        // SAFETY: as above, shorter lengths.
        let bytes = unsafe { run(Mix::Read, &b, 1, VectorWidth::Scalar) };
        assert_eq!(bytes, 0);
    }
}
