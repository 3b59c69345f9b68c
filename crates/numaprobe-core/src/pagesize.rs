//! The running kernel's page sizes: the base page (`sysconf(_SC_PAGESIZE)`)
//! and the transparent huge page (`hpage_pmd_size`).
//!
//! Never a 4096 constant: arm64 servers run 16 KiB and 64 KiB kernels (RHEL on
//! NVIDIA Grace uses 64 KiB pages, where a THP is 512 MiB), and placement
//! checks (one `move_pages` entry per page), footprints, TLB windows and the
//! sizes in a report all change with it. The pure functions take a
//! [`PageSizes`] so that tests cover every size; the live one is read once
//! per process.

use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// The page sizes a buffer's pages come in on this kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageSizes {
    /// Base page, bytes.
    pub base: u64,
    /// Transparent huge page (one PMD), bytes.
    pub thp: u64,
}

impl PageSizes {
    /// The sizes a kernel with `base`-byte pages has: one page table page
    /// holds base/8 entries, so a PMD maps base/8 base pages (4 KiB: 2 MiB,
    /// 16 KiB: 32 MiB, 64 KiB: 512 MiB).
    pub fn for_base(base: u64) -> PageSizes {
        PageSizes {
            base,
            thp: base / 8 * base,
        }
    }

    /// This kernel's: sysconf for the base page, sysfs for the THP size
    /// (derived from the base page where THP is not built in).
    pub fn live() -> &'static PageSizes {
        static P: OnceLock<PageSizes> = OnceLock::new();
        P.get_or_init(|| {
            // SAFETY: sysconf has no preconditions.
            let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
            // A kernel always has a page size; -1 cannot happen on Linux, and
            // 4096 is then the least wrong guess.
            let base = if p > 0 { p as u64 } else { 4096 };
            let mut s = PageSizes::for_base(base);
            if let Some(thp) =
                std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")
                    .ok()
                    .and_then(|t| parse_thp_size(&t))
            {
                s.thp = thp;
            }
            s
        })
    }

    /// `len` rounded up to whole base pages.
    pub fn round_up(&self, len: u64) -> u64 {
        len.div_ceil(self.base).saturating_mul(self.base)
    }
}

/// The base page size of the running kernel, in bytes.
pub fn base() -> u64 {
    PageSizes::live().base
}

/// `hpage_pmd_size`'s text: a power of two in bytes.
pub fn parse_thp_size(text: &str) -> Option<u64> {
    text.trim()
        .parse::<u64>()
        .ok()
        .filter(|v| v.is_power_of_two())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thp_follows_the_base_page() {
        assert_eq!(PageSizes::for_base(4096).thp, 2 << 20);
        assert_eq!(PageSizes::for_base(16 << 10).thp, 32 << 20);
        assert_eq!(PageSizes::for_base(64 << 10).thp, 512 << 20);
    }

    #[test]
    fn rounding_and_sysfs_text() {
        for base in [4096u64, 16 << 10, 64 << 10] {
            let p = PageSizes::for_base(base);
            assert_eq!(p.round_up(1), base);
            assert_eq!(p.round_up(base), base);
            assert_eq!(p.round_up(base + 1), 2 * base);
        }
        assert_eq!(parse_thp_size("2097152\n"), Some(2 << 20));
        assert_eq!(parse_thp_size("536870912\n"), Some(512 << 20));
        assert_eq!(parse_thp_size("3000\n"), None);
        assert_eq!(parse_thp_size(""), None);
    }

    #[test]
    fn live_page_is_a_power_of_two_the_kernel_uses() {
        let p = PageSizes::live();
        assert!(p.base.is_power_of_two() && p.base >= 4096);
        assert!(p.thp > p.base);
        assert_eq!(base(), p.base);
    }
}
