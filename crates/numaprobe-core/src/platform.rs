//! The running machine's architecture facts that change how its results
//! read, collected for provenance: the instruction set, the kernel's page
//! sizes, the vector width the streaming kernels run at, and on arm64 the
//! CPU's identity register (MIDR) and whether atomics are LSE instructions
//! or load/store-exclusive loops.
//!
//! Why atomics: on arm64 a contended atomic is either one LSE instruction
//! (`ldadd`, `cas`: Armv8.1+, executed near the cache line's home on big
//! servers) or an `ldxr`/`stxr` retry loop that can livelock under heavy
//! contention. Rust's aarch64 Linux targets pick between them at run time
//! (outline atomics, keyed on the same hwcap), so what is recorded here is
//! what a contention experiment's atomics really were.

use crate::kernels::VectorWidth;
use crate::pagesize::PageSizes;
use serde::{Deserialize, Serialize};

/// How atomic read-modify-write operations execute on arm64.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Atomics {
    /// Large System Extensions: single atomic instructions (hwcap `atomics`).
    Lse,
    /// Load-exclusive/store-exclusive retry loops (no LSE).
    LoadStoreExclusive,
}

/// The `platform` object of provenance (Default: empty, for documents
/// written before it existed).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Platform {
    /// `x86_64`, `aarch64`, ...: the architecture numaprobe was built for.
    pub arch: String,
    /// The kernel's base page, bytes.
    pub page_size: u64,
    /// The transparent huge page size, bytes.
    pub thp_size: u64,
    /// The widest vector width the streaming kernels can use here.
    pub vector: String,
    /// MIDR_EL1 of the first CPU (arm64 only), e.g. `0x413fd0c1`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub midr: Option<String>,
    /// LSE atomics or load/store-exclusive loops (arm64 only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub atomics: Option<Atomics>,
}

impl Platform {
    /// This machine's, read now.
    pub fn live() -> Platform {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let pages = PageSizes::live();
        Platform {
            arch: std::env::consts::ARCH.to_string(),
            page_size: pages.base,
            thp_size: pages.thp,
            vector: VectorWidth::detect().name().to_string(),
            midr: crate::topology::midr::midrs_from_cpuinfo(&cpuinfo)
                .first()
                .map(|m| m.hex()),
            atomics: live_atomics(&cpuinfo),
        }
    }
}

/// `HWCAP_ATOMICS` of arm64's `AT_HWCAP` (arch/arm64/include/uapi/asm/hwcap.h).
pub const HWCAP_ATOMICS: u64 = 1 << 8;

/// From the auxiliary vector's `AT_HWCAP` bits.
pub fn atomics_from_hwcap(hwcap: u64) -> Atomics {
    if hwcap & HWCAP_ATOMICS != 0 {
        Atomics::Lse
    } else {
        Atomics::LoadStoreExclusive
    }
}

/// From arm64 `/proc/cpuinfo` text: `atomics` in the first `Features` line.
/// None where there is no `Features` line (not arm64).
pub fn atomics_from_cpuinfo(text: &str) -> Option<Atomics> {
    let features = text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == "Features").then_some(v)
    })?;
    Some(if features.split_whitespace().any(|f| f == "atomics") {
        Atomics::Lse
    } else {
        Atomics::LoadStoreExclusive
    })
}

/// The kernel's own answer (AT_HWCAP) on arm64, cpuinfo where that is
/// unavailable; None elsewhere.
pub fn live_atomics(cpuinfo: &str) -> Option<Atomics> {
    if !cfg!(target_arch = "aarch64") {
        return None;
    }
    // SAFETY: getauxval has no preconditions; 0 means "not present".
    let hwcap = unsafe { libc::getauxval(libc::AT_HWCAP) };
    if hwcap != 0 {
        return Some(atomics_from_hwcap(hwcap));
    }
    atomics_from_cpuinfo(cpuinfo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lse_from_real_cpuinfo_and_hwcap() {
        // AWS Graviton2 (Neoverse-N1, Armv8.2: LSE).
        let graviton2 = "processor\t: 0\nBogoMIPS\t: 243.75\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n";
        assert_eq!(atomics_from_cpuinfo(graviton2), Some(Atomics::Lse));
        // Raspberry Pi 4 (Cortex-A72, Armv8.0: no LSE).
        let pi4 = "processor\t: 0\nBogoMIPS\t: 108.00\nFeatures\t: fp asimd evtstrm crc32 cpuid\nCPU implementer\t: 0x41\nCPU part\t: 0xd08\n";
        assert_eq!(atomics_from_cpuinfo(pi4), Some(Atomics::LoadStoreExclusive));
        // x86 cpuinfo has `flags`, no `Features`.
        let x86 = "processor\t: 0\nflags\t\t: fpu vme de pse tsc msr\n";
        assert_eq!(atomics_from_cpuinfo(x86), None);
        assert_eq!(atomics_from_hwcap(0xefff), Atomics::Lse);
        assert_eq!(atomics_from_hwcap(0xff), Atomics::LoadStoreExclusive);
        let s = serde_json::to_string(&Atomics::LoadStoreExclusive).unwrap();
        assert_eq!(s, "\"load_store_exclusive\"");
    }

    #[test]
    fn live_platform_matches_the_build() {
        let p = Platform::live();
        assert_eq!(p.arch, std::env::consts::ARCH);
        assert_eq!(p.page_size, crate::pagesize::base());
        assert!(p.thp_size > p.page_size);
        // Atomics and the MIDR are arm64's alone.
        if !cfg!(target_arch = "aarch64") {
            assert_eq!(p.atomics, None);
            assert_eq!(p.midr, None);
        } else {
            assert!(p.atomics.is_some());
        }
    }
}
