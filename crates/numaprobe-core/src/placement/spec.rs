//! What a buffer is to be: its memory policy, its page kind, and the
//! `BufferSpec` that checks a request against the live machine before
//! anything is mapped (nodes, allowed memory, what a node can give, huge
//! page pools).

use super::live::LiveSystem;
use super::PlacementError;
use crate::pagesize::PageSizes;
use crate::units::format_list;
use serde::{Deserialize, Serialize};
use std::fmt;

pub(super) const HUGE_2M: u64 = 2 << 20;
pub(super) const HUGE_1G: u64 = 1 << 30;

/// Where the pages of a buffer should live.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemPolicy {
    /// `MPOL_BIND` to one node, strict: allocation fails rather than spill.
    Bind(u32),
    /// `MPOL_INTERLEAVE`: pages round-robin over the nodes.
    Interleave(Vec<u32>),
    /// `MPOL_WEIGHTED_INTERLEAVE` (Linux 6.9+): pages over the nodes in
    /// proportion to the weights in `/sys/kernel/mm/mempolicy/weighted_interleave/`.
    WeightedInterleave(Vec<u32>),
    /// `MPOL_PREFERRED`: the node if it has room, elsewhere otherwise.
    Preferred(u32),
    /// No policy: each page lands where the thread that first writes it runs
    /// (Linux's default, what a non-NUMA-aware program gets).
    FirstTouch,
}

impl fmt::Display for MemPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemPolicy::Bind(n) => write!(f, "bind:{n}"),
            MemPolicy::Interleave(ns) => write!(f, "interleave:{}", format_list(ns)),
            MemPolicy::WeightedInterleave(ns) => {
                write!(f, "weighted-interleave:{}", format_list(ns))
            }
            MemPolicy::Preferred(n) => write!(f, "preferred:{n}"),
            MemPolicy::FirstTouch => f.write_str("first-touch"),
        }
    }
}

/// The page size backing a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PageKind {
    /// The kernel's base pages (4 KiB on x86-64; 16 or 64 KiB on some arm64
    /// kernels: the name stays `4k` for the command line, the size is the
    /// kernel's, see [`crate::pagesize`]); THP is switched off for the range
    /// (`MADV_NOHUGEPAGE`) so these are base pages even when THP is `always`.
    #[serde(rename = "4k")]
    Small,
    /// Transparent huge pages (`MADV_HUGEPAGE` on a 2 MiB-aligned range); the
    /// kernel may still fall back to 4 KiB pages, which `verify` reports.
    #[serde(rename = "thp")]
    Thp,
    /// hugetlbfs 2 MiB pages (`MAP_HUGETLB | MAP_HUGE_2MB`), from the node's pool.
    #[serde(rename = "2m")]
    Huge2M,
    /// hugetlbfs 1 GiB pages (`MAP_HUGETLB | MAP_HUGE_1GB`), from the node's pool.
    #[serde(rename = "1g")]
    Huge1G,
}

impl PageKind {
    /// The names used on the command line and in results.
    pub const NAMES: [&'static str; 4] = ["4k", "thp", "2m", "1g"];

    pub fn name(self) -> &'static str {
        match self {
            PageKind::Small => "4k",
            PageKind::Thp => "thp",
            PageKind::Huge2M => "2m",
            PageKind::Huge1G => "1g",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "4k" | "small" | "base" => Some(PageKind::Small),
            "thp" => Some(PageKind::Thp),
            "2m" => Some(PageKind::Huge2M),
            "1g" => Some(PageKind::Huge1G),
            _ => None,
        }
    }

    /// Parse a page kind as a user writes it (`--pages`): `4k` (also
    /// `small`), `thp`, `2m`, `1g`, case and surrounding blanks ignored.
    pub fn parse_arg(s: &str) -> Result<Self, crate::units::ParseError> {
        Self::parse(s.trim()).ok_or_else(|| crate::units::ParseError::Pages(s.to_string()))
    }

    /// The size a mapping of this kind is rounded up to and the granularity
    /// at which pages are touched and queried, on the running kernel (THP is
    /// touched at the base page so a partial fallback is still fully faulted
    /// and fully counted).
    pub fn page_size(self) -> u64 {
        self.page_size_in(PageSizes::live())
    }

    /// [`page_size`](Self::page_size) on a kernel with the page sizes `p`.
    pub fn page_size_in(self, p: &PageSizes) -> u64 {
        match self {
            PageKind::Small | PageKind::Thp => p.base,
            PageKind::Huge2M => HUGE_2M,
            PageKind::Huge1G => HUGE_1G,
        }
    }

    /// hugetlbfs pages: they come from the node's reserved pool, not from
    /// its free memory.
    pub fn hugetlb(self) -> bool {
        matches!(self, PageKind::Huge2M | PageKind::Huge1G)
    }
}

impl fmt::Display for PageKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What to allocate: size, policy, page kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufferSpec {
    /// Bytes wanted; rounded up to the page size of `pages`.
    pub len: usize,
    pub policy: MemPolicy,
    pub pages: PageKind,
}

impl BufferSpec {
    pub fn new(len: usize, policy: MemPolicy, pages: PageKind) -> Self {
        BufferSpec { len, policy, pages }
    }

    pub(super) fn rounded_len(&self) -> usize {
        self.rounded_len_in(PageSizes::live())
    }

    fn rounded_len_in(&self, ps: &PageSizes) -> usize {
        let p = self.pages.page_size_in(ps) as usize;
        self.len.div_ceil(p).saturating_mul(p)
    }

    /// Bytes the kernel will allocate on each node for this buffer: whole
    /// pages (whole 2 MiB pages for THP, see [`super::footprint`]), split
    /// over the nodes of an interleave. `touch_node` is the node a
    /// first-touch buffer is expected on (none: nothing is known).
    pub fn node_shares(&self, touch_node: Option<u32>) -> Result<Vec<(u32, u64)>, PlacementError> {
        self.node_shares_in(touch_node, PageSizes::live())
    }

    /// [`node_shares`](Self::node_shares) on a kernel with the page sizes `ps`.
    pub fn node_shares_in(
        &self,
        touch_node: Option<u32>,
        ps: &PageSizes,
    ) -> Result<Vec<(u32, u64)>, PlacementError> {
        if self.len == 0 {
            return Err(PlacementError::ZeroSize);
        }
        let len = self.rounded_len_in(ps) as u64;
        let whole = |n: u32| vec![(n, super::memory::footprint_in(len, self.pages, ps))];
        Ok(match &self.policy {
            MemPolicy::Bind(n) | MemPolicy::Preferred(n) => whole(*n),
            // The weights live in the kernel: plan each node's share as a
            // plain interleave's (approximate for weighted interleave).
            MemPolicy::Interleave(ns) | MemPolicy::WeightedInterleave(ns) => {
                if ns.is_empty() {
                    return Err(PlacementError::EmptyNodeSet);
                }
                let per_page = self.pages.page_size_in(ps);
                let pages = len / per_page;
                let k = ns.len() as u64;
                ns.iter()
                    .map(|&n| {
                        let share = pages.div_ceil(k) * per_page;
                        (n, super::memory::footprint_in(share, self.pages, ps))
                    })
                    .collect()
            }
            MemPolicy::FirstTouch => touch_node.map(whole).unwrap_or_default(),
        })
    }

    /// True for hugetlbfs pages, which come from a node's reserved pool and
    /// not from its free memory.
    pub fn from_pool(&self) -> bool {
        self.pages.hugetlb()
    }

    /// Check the spec against the live machine without mapping anything:
    /// nodes exist and are allowed, the size fits what the node can give now
    /// ([`LiveSystem::allocatable_bytes`]: above the kernel's watermarks, so
    /// never into reclaim storms or the OOM killer) or its free huge pages.
    /// This is the "clear error before allocating" of the design.
    pub fn check(&self, live: &LiveSystem, touch_node: Option<u32>) -> Result<(), PlacementError> {
        self.check_on(live, touch_node, &[])
    }

    /// [`check`](Self::check) for a buffer the threads pinned to `cpus`
    /// will fault in: they also get their own CPUs' per-CPU free lists
    /// ([`LiveSystem::allocatable_bytes_on`]).
    pub fn check_on(
        &self,
        live: &LiveSystem,
        touch_node: Option<u32>,
        cpus: &[u32],
    ) -> Result<(), PlacementError> {
        if self.len == 0 {
            return Err(PlacementError::ZeroSize);
        }
        if self.pages == PageKind::Thp && live.thp_mode.as_deref().is_none_or(|m| m == "never") {
            return Err(PlacementError::ThpUnavailable);
        }
        let shares = self.node_shares(touch_node)?;
        for &(node, _) in &shares {
            live.check_mem_node(node)?;
        }
        self.check_cgroup(live, &shares)?;
        for (node, bytes) in shares {
            if self.pages.hugetlb() {
                let ps = self.pages.page_size();
                let needed = bytes.div_ceil(ps);
                let free = live.free_huge_pages(node, ps);
                if free < needed {
                    return Err(PlacementError::NotEnoughHugePages {
                        node,
                        page_size: ps,
                        free,
                        needed,
                        requested: bytes,
                    });
                }
            } else {
                let available = live.allocatable_bytes_on(node, cpus)?;
                if bytes > available {
                    return Err(PlacementError::TooLarge {
                        node,
                        requested: bytes,
                        available,
                    });
                }
            }
        }
        Ok(())
    }

    /// Error when the buffer's pages would take the process past its memory
    /// cgroup's limit ([`super::footprint::check_cgroup`]). Huge page pools
    /// are charged to the hugetlb controller, not to the memory limit.
    fn check_cgroup(&self, live: &LiveSystem, shares: &[(u32, u64)]) -> Result<(), PlacementError> {
        if self.pages.hugetlb() {
            return Ok(());
        }
        super::footprint::check_cgroup(live, shares.iter().map(|s| s.1).sum())
    }

    /// Error when the buffer could not fit its node(s) even if nothing else
    /// used them ([`NodeMemory::capacity`](super::NodeMemory)): a request no
    /// amount of waiting makes possible. Huge page pools are checked as in
    /// [`check`](Self::check), since a pool does not grow by itself.
    pub fn check_capacity(
        &self,
        live: &LiveSystem,
        touch_node: Option<u32>,
    ) -> Result<(), PlacementError> {
        if self.pages.hugetlb() {
            return self.check(live, touch_node);
        }
        if self.pages == PageKind::Thp && live.thp_mode.as_deref().is_none_or(|m| m == "never") {
            return Err(PlacementError::ThpUnavailable);
        }
        let shares = self.node_shares(touch_node)?;
        self.check_cgroup(live, &shares)?;
        for (node, bytes) in shares {
            live.check_mem_node(node)?;
            let capacity = live.memory(node)?.capacity;
            if bytes > capacity {
                return Err(PlacementError::NeverFits {
                    node,
                    requested: bytes,
                    capacity,
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::{MemPolicy, PageKind};

    const MIB: usize = 1 << 20;

    #[test]
    fn huge_pages_without_a_pool_are_refused_with_advice() {
        let live = LiveSystem::read().unwrap();
        if live.free_huge_pages(0, HUGE_1G) > 0 {
            return;
        }
        let spec = BufferSpec::new(1 << 30, MemPolicy::Bind(0), PageKind::Huge1G);
        let e = spec.check(&live, None).unwrap_err().to_string();
        assert!(e.contains("huge pages"), "{e}");
        assert!(e.contains("nr_hugepages"), "{e}");
    }

    #[test]
    fn zero_size_and_empty_interleave_are_errors() {
        let live = LiveSystem::read().unwrap();
        let z = BufferSpec::new(0, MemPolicy::Bind(0), PageKind::Small);
        assert!(matches!(
            z.check(&live, None),
            Err(PlacementError::ZeroSize)
        ));
        let e = BufferSpec::new(MIB, MemPolicy::Interleave(vec![]), PageKind::Small);
        assert!(matches!(
            e.check(&live, None),
            Err(PlacementError::EmptyNodeSet)
        ));
    }

    #[test]
    fn shares_count_whole_pages_per_node_at_every_page_size() {
        for base in [4096u64, 16 << 10, 64 << 10] {
            let ps = PageSizes::for_base(base);
            // 1.5 THPs: two whole huge pages (2, 32 or 512 MiB each).
            let thp = BufferSpec::new(
                (ps.thp + ps.thp / 2) as usize,
                MemPolicy::Bind(1),
                PageKind::Thp,
            );
            assert_eq!(thp.node_shares_in(None, &ps).unwrap(), [(1, 2 * ps.thp)]);
            let il = BufferSpec::new(
                (10 * base) as usize,
                MemPolicy::Interleave(vec![0, 2]),
                PageKind::Small,
            );
            assert_eq!(
                il.node_shares_in(None, &ps).unwrap(),
                [(0, 5 * base), (2, 5 * base)]
            );
            // One byte is one whole base page wherever it lands.
            let ft = BufferSpec::new(1, MemPolicy::FirstTouch, PageKind::Small);
            assert!(ft.node_shares_in(None, &ps).unwrap().is_empty());
            assert_eq!(ft.node_shares_in(Some(3), &ps).unwrap(), [(3, base)]);
            // hugetlbfs pages are their own size whatever the base page.
            assert_eq!(PageKind::Huge2M.page_size_in(&ps), 2 << 20);
            assert_eq!(PageKind::Small.page_size_in(&ps), base);
            assert_eq!(PageKind::Thp.page_size_in(&ps), base);
        }
        // The live kernel's: what its sysconf says.
        assert_eq!(PageKind::Small.page_size(), crate::pagesize::base());
    }

    #[test]
    fn page_kind_names_round_trip() {
        for n in PageKind::NAMES {
            assert_eq!(PageKind::parse(n).unwrap().name(), n);
        }
        assert!(PageKind::parse("3m").is_none());
    }
}
