//! Tests of the streaming kernels: every op at every width this CPU has
//! does its job, SVE where the runner promises it, the specs' byte counts,
//! and the equal page-aligned split of a buffer over threads.

use super::*;

/// A 64-byte aligned heap buffer for tests.
fn aligned(len: usize) -> Vec<u64> {
    vec![0u64; len / 8 + 8]
}

fn base(v: &mut [u64]) -> *mut u8 {
    let p = v.as_mut_ptr() as *mut u8;
    unsafe { p.add((64 - p as usize % 64) % 64) }
}

#[test]
fn every_op_at_every_available_width_does_its_job() {
    let len = 3 * 4096;
    for w in VectorWidth::ALL {
        if !w.available() {
            continue;
        }
        // write
        let mut v = aligned(len);
        let b = base(&mut v);
        let s = Streams::split(StreamOp::Write, b, 4096);
        unsafe { run(StreamOp::Write, w, &s) };
        let words = unsafe { std::slice::from_raw_parts(b as *const u64, 512) };
        assert!(words.iter().all(|&x| x == 0x5a5a_5a5a_5a5a_5a5a), "{w:?}");
        let s = Streams::split(StreamOp::WriteNt, b, 4096);
        unsafe { run(StreamOp::WriteNt, w, &s) };
        // read: XOR of the words written
        let s = Streams::split(StreamOp::Read, b, 4096);
        let r = unsafe { run(StreamOp::Read, w, &s) };
        assert_eq!(r, 0, "{w:?}: an even number of equal words XORs to 0");
        // read: every word counts (a kernel that skipped some would
        // return another value than their XOR).
        let mut want = 0u64;
        for i in 0..512u64 {
            let x = (i + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            unsafe { *(b as *mut u64).add(i as usize) = x };
            want ^= x;
        }
        assert_eq!(unsafe { run(StreamOp::Read, w, &s) }, want, "{w:?} read");
        // copy: source half to destination half
        let mut v = aligned(2 * 4096);
        let b = base(&mut v);
        for i in 0..512 {
            unsafe { *(b as *mut u64).add(i) = i as u64 };
        }
        for op in [StreamOp::Copy, StreamOp::CopyNt] {
            let s = Streams::split(op, b, 2 * 4096);
            unsafe { run(op, w, &s) };
            let dst = unsafe { std::slice::from_raw_parts(s.dst as *const u64, 512) };
            assert!(
                dst.iter().enumerate().all(|(i, &x)| x == i as u64),
                "{w:?} {op:?}"
            );
        }
        // triad
        let mut v = aligned(len);
        let b = base(&mut v);
        let s = Streams::split(StreamOp::Triad, b, len);
        for i in 0..512 {
            unsafe {
                *(s.src as *mut f64).add(i) = 1.0;
                *(s.src2 as *mut f64).add(i) = 2.0;
            }
        }
        unsafe { run(StreamOp::Triad, w, &s) };
        let a = unsafe { std::slice::from_raw_parts(s.dst as *const f64, 512) };
        assert!(a.iter().all(|&x| x == 7.0), "{w:?} triad");
    }
}

#[test]
fn sve_is_chosen_where_the_runner_promises_it() {
    // scripts/vm-test-arm64 runs the kernel tests under `qemu-aarch64
    // -cpu max` (which has SVE) with NUMAPROBE_EXPECT_SVE=1: there SVE
    // must be detected and chosen, so the loop above cannot skip its
    // kernels unnoticed. Elsewhere the CPU decides and this says nothing.
    if std::env::var_os("NUMAPROBE_EXPECT_SVE").is_none() {
        return;
    }
    assert!(VectorWidth::Sve.available());
    assert_eq!(VectorWidth::detect(), VectorWidth::Sve);
    let bits = VectorWidth::Sve.bits();
    assert!(
        bits >= 128 && bits.is_multiple_of(128),
        "SVE vector length {bits}"
    );
}

#[test]
fn specs_count_bytes_and_write_allocate() {
    let c = StreamOp::Copy.spec();
    assert_eq!(
        (c.bytes_per_iter, c.loads_per_iter, c.stores_per_iter),
        (16, 1, 1)
    );
    assert_eq!(c.write_allocate_bytes_per_iter, 8);
    let nt = StreamOp::CopyNt.spec();
    assert_eq!(nt.write_allocate_bytes_per_iter, 0);
    assert!(nt.nontemporal);
    assert_eq!(StreamOp::Triad.spec().bytes_per_iter, 24);
    assert!(!StreamOp::WriteNt.spec_for(VectorWidth::Scalar).nontemporal);
    // NEON (STNP) and SVE (STNT1D) store non-temporally and say how.
    let neon = StreamOp::CopyNt.spec_for(VectorWidth::Neon);
    assert!(neon.nontemporal && neon.iteration.contains("STNP"));
    assert_eq!(neon.write_allocate_bytes_per_iter, 0);
    assert!(StreamOp::WriteNt
        .spec_for(VectorWidth::Sve)
        .iteration
        .contains("STNT1D"));
    assert!(!StreamOp::Write.spec_for(VectorWidth::Neon).nontemporal);
    for n in StreamOp::NAMES {
        assert_eq!(StreamOp::parse(n).unwrap().name(), n);
    }
    assert!(StreamOp::parse("load").is_none());
}

#[test]
fn split_gives_equal_page_aligned_arrays_at_every_page_size() {
    for page in [4096usize, 16 << 10, 64 << 10] {
        let base = 0x1000_0000 as *mut u8;
        let s = Streams::split_at_pages(StreamOp::Triad, base, 3 * 2 * page + 100, page);
        assert_eq!(s.len, 2 * page);
        assert_eq!(s.bytes_per_pass(StreamOp::Triad), 3 * 2 * page as u64);
        assert_eq!(s.src as usize - s.dst as usize, 2 * page);
        assert_eq!(s.src2 as usize % page, 0);
    }
}
