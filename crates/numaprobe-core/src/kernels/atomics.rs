//! The read-modify-write loops of lock and atomic contention (AMD 40555
//! §3.5): an atomic add on a counter, and a test-and-test-and-set spin lock
//! protecting a plain counter increment.
//!
//! How the read-modify-write executes is chosen at run time and is the
//! point of the measurement: on arm64 a contended LSE instruction (`ldadd`,
//! `swp`) is executed near the line's home by big interconnects, while a
//! load/store-exclusive loop (`ldaxr`/`stlxr`) must hold the line in its own
//! cache from the load to the store and retries when another core takes it,
//! so the two scale very differently. Both are written out in inline asm
//! here so the choice is ours (not the compiler's outline atomics) and a
//! result can say which ran. On x86-64 there is one way: `lock xadd` and
//! `xchg`, which Rust's atomics compile to.
//!
//! A loop runs until `stop` is set, checking it every [`BATCH`] operations,
//! and returns how many operations it did: the caller checks the counters
//! against those counts, so a lost update (a broken lock or atomic) is
//! caught, never averaged into a figure.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// Operations between two looks at the stop flag: few enough that a thread
/// stops within a microsecond or so of the flag, many enough that the flag's
/// line (read-shared, written once) is not part of the measurement.
pub const BATCH: u64 = 32;

/// How the read-modify-writes run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rmw {
    /// arm64 Large System Extensions: `ldaddal`, `swpa`.
    Lse,
    /// arm64 load-acquire/store-release exclusive retry loops.
    LoadStoreExclusive,
    /// x86-64 `lock xadd` and `xchg`.
    X86Lock,
    /// Whatever the compiler makes of Rust's atomics (other architectures).
    Compiler,
}

impl Rmw {
    /// What results call it: "lse", "load/store exclusive", "x86 lock".
    pub fn name(self) -> &'static str {
        match self {
            Rmw::Lse => "lse",
            Rmw::LoadStoreExclusive => "load/store exclusive",
            Rmw::X86Lock => "x86 lock",
            Rmw::Compiler => "compiler atomics",
        }
    }

    /// The best this CPU has, from the platform's LSE answer (arm64's hwcap):
    /// LSE where present, exclusive loops otherwise; `lock` on x86-64.
    pub fn best(lse: bool) -> Rmw {
        if cfg!(target_arch = "aarch64") {
            if lse {
                Rmw::Lse
            } else {
                Rmw::LoadStoreExclusive
            }
        } else if cfg!(target_arch = "x86_64") {
            Rmw::X86Lock
        } else {
            Rmw::Compiler
        }
    }

    /// Whether this build can run it on a CPU with (`lse`) or without LSE.
    /// LSE instructions on a CPU without them are an illegal instruction.
    pub fn runs_here(self, lse: bool) -> bool {
        match self {
            Rmw::Lse => cfg!(target_arch = "aarch64") && lse,
            Rmw::LoadStoreExclusive => cfg!(target_arch = "aarch64"),
            Rmw::X86Lock => cfg!(target_arch = "x86_64"),
            Rmw::Compiler => !cfg!(any(target_arch = "aarch64", target_arch = "x86_64")),
        }
    }
}

/// One atomic add of 1 to `c`, ordered like a C `seq_cst` fetch-add.
#[inline(always)]
fn add(rmw: Rmw, c: &AtomicU64) {
    match rmw {
        #[cfg(target_arch = "aarch64")]
        Rmw::Lse => arm::ldadd(c),
        #[cfg(target_arch = "aarch64")]
        Rmw::LoadStoreExclusive => arm::add_exclusive(c),
        _ => {
            c.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// One attempt to take the lock word (0 free, 1 held): its old value.
#[inline(always)]
fn swap_acquire(rmw: Rmw, l: &AtomicU32) -> u32 {
    match rmw {
        #[cfg(target_arch = "aarch64")]
        Rmw::Lse => arm::swpa(l),
        #[cfg(target_arch = "aarch64")]
        Rmw::LoadStoreExclusive => arm::swap_exclusive(l),
        _ => l.swap(1, Ordering::Acquire),
    }
}

/// Atomic adds of 1 to `counter` until `stop` (at least one batch);
/// returns how many.
pub fn atomic_add_loop(rmw: Rmw, counter: &AtomicU64, stop: &AtomicBool) -> u64 {
    let mut done = 0u64;
    loop {
        for _ in 0..BATCH {
            add(rmw, counter);
        }
        done += BATCH;
        if stop.load(Ordering::Relaxed) {
            return done;
        }
    }
}

/// Take `lock` (test-and-test-and-set: spin reading until it looks free,
/// then one atomic swap), add 1 to `counter` with a plain load and store,
/// release with a store-release; until `stop` (at least one batch).
/// Returns how many increments.
pub fn spin_lock_loop(rmw: Rmw, lock: &AtomicU32, counter: &AtomicU64, stop: &AtomicBool) -> u64 {
    let mut done = 0u64;
    loop {
        for _ in 0..BATCH {
            loop {
                while lock.load(Ordering::Relaxed) != 0 {
                    std::hint::spin_loop();
                }
                if swap_acquire(rmw, lock) == 0 {
                    break;
                }
            }
            // Not atomic on purpose: only the lock keeps two increments
            // apart, so a lock that fails loses updates and the caller's
            // count check catches it. (Relaxed load and store are plain
            // `ldr`/`str`, `mov` on x86-64.)
            let v = counter.load(Ordering::Relaxed);
            counter.store(v + 1, Ordering::Relaxed);
            lock.store(0, Ordering::Release);
        }
        done += BATCH;
        if stop.load(Ordering::Relaxed) {
            return done;
        }
    }
}

#[cfg(target_arch = "aarch64")]
mod arm {
    //! The arm64 instructions, spelled out. `.arch_extension lse` lets the
    //! assembler accept LSE in a build for baseline Armv8.0; the caller
    //! runs them only where the CPU has LSE.
    use std::arch::asm;
    use std::sync::atomic::{AtomicU32, AtomicU64};

    #[inline(always)]
    pub fn ldadd(c: &AtomicU64) {
        // SAFETY: `c` is a valid, aligned u64 for the duration; LSE is
        // present (Rmw::Lse is only chosen where the hwcap says so).
        unsafe {
            asm!(
                ".arch_extension lse",
                "ldaddal {inc}, {old}, [{p}]",
                inc = in(reg) 1u64,
                old = out(reg) _,
                p = in(reg) c.as_ptr(),
                options(nostack),
            );
        }
    }

    #[inline(always)]
    pub fn add_exclusive(c: &AtomicU64) {
        // SAFETY: `c` is a valid, aligned u64; the loop retries until the
        // store-exclusive succeeds.
        unsafe {
            asm!(
                "2:",
                "ldaxr {v}, [{p}]",
                "add {v}, {v}, #1",
                "stlxr {s:w}, {v}, [{p}]",
                "cbnz {s:w}, 2b",
                v = out(reg) _,
                s = out(reg) _,
                p = in(reg) c.as_ptr(),
                options(nostack),
            );
        }
    }

    #[inline(always)]
    pub fn swpa(l: &AtomicU32) -> u32 {
        let old: u32;
        // SAFETY: `l` is a valid, aligned u32; LSE is present.
        unsafe {
            asm!(
                ".arch_extension lse",
                "swpa {one:w}, {old:w}, [{p}]",
                one = in(reg) 1u32,
                old = out(reg) old,
                p = in(reg) l.as_ptr(),
                options(nostack),
            );
        }
        old
    }

    #[inline(always)]
    pub fn swap_exclusive(l: &AtomicU32) -> u32 {
        let old: u32;
        // SAFETY: `l` is a valid, aligned u32; the loop retries until the
        // store-exclusive succeeds.
        unsafe {
            asm!(
                "2:",
                "ldaxr {old:w}, [{p}]",
                "stxr {s:w}, {one:w}, [{p}]",
                "cbnz {s:w}, 2b",
                old = out(reg) old,
                s = out(reg) _,
                one = in(reg) 1u32,
                p = in(reg) l.as_ptr(),
                options(nostack),
            );
        }
        old
    }
}

/// Whether this CPU has LSE atomics (arm64's hwcap), read through the
/// platform's own detection; false elsewhere.
pub fn cpu_has_lse() -> bool {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    crate::platform::live_atomics(&cpuinfo) == Some(crate::platform::Atomics::Lse)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Every way this CPU can run.
    fn kinds() -> Vec<Rmw> {
        let lse = cpu_has_lse();
        [
            Rmw::Lse,
            Rmw::LoadStoreExclusive,
            Rmw::X86Lock,
            Rmw::Compiler,
        ]
        .into_iter()
        .filter(|k| k.runs_here(lse))
        .collect()
    }

    fn contend(rmw: Rmw, lock: bool) {
        let stop = Arc::new(AtomicBool::new(false));
        let l = Arc::new(AtomicU32::new(0));
        let c = Arc::new(AtomicU64::new(0));
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let (stop, l, c) = (stop.clone(), l.clone(), c.clone());
                std::thread::spawn(move || {
                    if lock {
                        spin_lock_loop(rmw, &l, &c, &stop)
                    } else {
                        atomic_add_loop(rmw, &c, &stop)
                    }
                })
            })
            .collect();
        // Until each thread has done some work (no timing assumption).
        while c.load(Ordering::Relaxed) < 20_000 {
            std::hint::spin_loop();
        }
        stop.store(true, Ordering::Relaxed);
        let done: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
        assert_eq!(
            c.load(Ordering::SeqCst),
            done,
            "{} lost updates",
            rmw.name()
        );
        assert_eq!(l.load(Ordering::SeqCst), 0, "lock left held");
    }

    #[test]
    fn every_way_this_cpu_has_adds_up_under_contention() {
        let ks = kinds();
        assert!(!ks.is_empty());
        for k in ks {
            contend(k, false);
            contend(k, true);
        }
    }

    #[test]
    fn the_best_is_what_the_platform_says() {
        let best = Rmw::best(cpu_has_lse());
        assert!(best.runs_here(cpu_has_lse()));
        if cfg!(target_arch = "x86_64") {
            assert_eq!(best.name(), "x86 lock");
        }
        if cfg!(target_arch = "aarch64") {
            // Exclusive loops run on every arm64 CPU; LSE only with the hwcap.
            assert!(Rmw::LoadStoreExclusive.runs_here(false));
            assert!(!Rmw::Lse.runs_here(false));
        }
    }
}
