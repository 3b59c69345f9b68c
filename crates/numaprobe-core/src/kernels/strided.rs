//! AMD 40555's synthetic kernels: a thread walks its array touching one 8-byte
//! element per 64-byte cache line, either only reading or only writing.
//!
//! The AMD note calls the read-only case latency-sensitive and the write-only
//! case bandwidth-sensitive (each write first fetches the line, then evicts it
//! dirty: two transfers per line). Accesses are volatile so that the loop
//! stays one access per line: the compiler may neither drop nor widen them.

use super::KernelSpec;
use serde::{Deserialize, Serialize};

/// Read-only or write-only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    Read,
    Write,
}

impl Access {
    /// The letter used in the seed's labels (`0.0.w.1`).
    pub fn letter(self) -> char {
        match self {
            Access::Read => 'r',
            Access::Write => 'w',
        }
    }
}

/// The seed's line stride.
pub const LINE: usize = 64;

/// The spec of a strided kernel: per iteration one element of one line; the
/// memory system moves the whole line (and for writes, the write-allocate
/// fetch and the later write-back).
pub fn spec(access: Access, stride: usize) -> KernelSpec {
    let (name, loads, stores, wa) = match access {
        Access::Read => ("strided_read", 1, 0, 0),
        Access::Write => ("strided_write", 0, 1, stride as u32),
    };
    KernelSpec {
        name: name.into(),
        iteration: format!("one 8-byte element per {stride}-byte line"),
        bytes_per_iter: 8,
        loads_per_iter: loads,
        stores_per_iter: stores,
        write_allocate_bytes_per_iter: wa,
        nontemporal: false,
    }
}

/// Touch `len / stride` lines of `p`, one 8-byte element each, and return the
/// XOR of what was read (0 for writes).
///
/// # Safety
/// `p` must be valid for reads and writes of `len` bytes and 8-byte aligned;
/// `stride` must be a non-zero multiple of 8.
#[inline(never)]
pub unsafe fn run(access: Access, p: *mut u8, len: usize, stride: usize) -> u64 {
    let stride = stride.max(8);
    let n = len / stride;
    match access {
        Access::Read => {
            let mut acc = 0u64;
            for i in 0..n {
                acc ^= std::ptr::read_volatile(p.add(i * stride) as *const u64);
            }
            std::hint::black_box(acc)
        }
        Access::Write => {
            for i in 0..n {
                std::ptr::write_volatile(p.add(i * stride) as *mut u64, i as u64);
            }
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_touches_one_word_per_line_and_read_sees_it() {
        let mut v = vec![0u64; 1024];
        let p = v.as_mut_ptr() as *mut u8;
        unsafe { run(Access::Write, p, 8192, LINE) };
        for (i, w) in v.iter().enumerate() {
            let expect = if i % 8 == 0 { (i / 8) as u64 } else { 0 };
            assert_eq!(*w, expect);
        }
        let x = unsafe { run(Access::Read, p, 8192, LINE) };
        assert_eq!(x, (0..128u64).fold(0, |a, b| a ^ b));
        assert_eq!(spec(Access::Write, LINE).write_allocate_bytes_per_iter, 64);
        assert_eq!(Access::Write.letter(), 'w');
    }
}
