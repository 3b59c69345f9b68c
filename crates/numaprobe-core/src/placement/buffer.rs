//! `NodeBuffer`: anonymous memory mapped with `mmap`, placed with `mbind` (or
//! by first touch), faulted in page by page, and verified with `move_pages`.
//!
//! Raw syscalls through `libc`, no libnuma: one dependency less on the
//! machines people measure, and the exact flags we pass are visible here.

use super::live::{LiveSystem, MAX_NODES};
use super::{pin_current_thread, PlacementError};
use crate::units::format_list;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

// The memory-policy modes and flags of <linux/mempolicy.h>; libc does not
// export them.
const MPOL_PREFERRED: libc::c_int = 1;
const MPOL_BIND: libc::c_int = 2;
const MPOL_INTERLEAVE: libc::c_int = 3;
/// With MPOL_BIND: fail rather than silently keep pages that are elsewhere.
const MPOL_MF_STRICT: libc::c_uint = 1;

const SMALL_PAGE: u64 = 4096;
const HUGE_2M: u64 = 2 << 20;
const HUGE_1G: u64 = 1 << 30;

/// Where the pages of a buffer should live.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemPolicy {
    /// `MPOL_BIND` to one node, strict: allocation fails rather than spill.
    Bind(u32),
    /// `MPOL_INTERLEAVE`: pages round-robin over the nodes.
    Interleave(Vec<u32>),
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
            MemPolicy::Preferred(n) => write!(f, "preferred:{n}"),
            MemPolicy::FirstTouch => f.write_str("first-touch"),
        }
    }
}

/// The page size backing a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PageKind {
    /// 4 KiB base pages; THP is switched off for the range (`MADV_NOHUGEPAGE`)
    /// so `4k` means 4 KiB even when THP is `always`.
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
            "4k" | "small" => Some(PageKind::Small),
            "thp" => Some(PageKind::Thp),
            "2m" => Some(PageKind::Huge2M),
            "1g" => Some(PageKind::Huge1G),
            _ => None,
        }
    }

    /// The size a mapping of this kind is rounded up to and the granularity
    /// at which pages are touched and queried (THP is touched at 4 KiB so a
    /// partial fallback is still fully faulted and fully counted).
    pub fn page_size(self) -> u64 {
        match self {
            PageKind::Small | PageKind::Thp => SMALL_PAGE,
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

    fn rounded_len(&self) -> usize {
        let p = self.pages.page_size() as usize;
        self.len.div_ceil(p).saturating_mul(p)
    }

    /// Bytes the kernel will allocate on each node for this buffer: whole
    /// pages (whole 2 MiB pages for THP, see [`super::footprint`]), split
    /// over the nodes of an interleave. `touch_node` is the node a
    /// first-touch buffer is expected on (none: nothing is known).
    pub fn node_shares(&self, touch_node: Option<u32>) -> Result<Vec<(u32, u64)>, PlacementError> {
        if self.len == 0 {
            return Err(PlacementError::ZeroSize);
        }
        let len = self.rounded_len() as u64;
        let whole = |n: u32| vec![(n, super::footprint(len, self.pages))];
        Ok(match &self.policy {
            MemPolicy::Bind(n) | MemPolicy::Preferred(n) => whole(*n),
            MemPolicy::Interleave(ns) => {
                if ns.is_empty() {
                    return Err(PlacementError::EmptyNodeSet);
                }
                let per_page = self.pages.page_size();
                let pages = len / per_page;
                let k = ns.len() as u64;
                ns.iter()
                    .map(|&n| {
                        (
                            n,
                            super::footprint(pages.div_ceil(k) * per_page, self.pages),
                        )
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
        for (node, bytes) in self.node_shares(touch_node)? {
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

/// Where a buffer's pages are, as `move_pages` reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlacementCheck {
    /// Pages queried (the buffer's length divided by `page_size`).
    pub pages: u64,
    /// Query granularity in bytes: 4096 for 4k and THP, the huge page size
    /// for hugetlbfs pages.
    pub page_size: u64,
    /// Pages found on each node.
    pub per_node: BTreeMap<u32, u64>,
    /// Pages the kernel reports as not present (never touched, or swapped).
    pub not_present: u64,
    /// The node(s) the policy meant the pages to be on.
    pub intended_nodes: Vec<u32>,
    /// Share of all queried pages that are on one of `intended_nodes`;
    /// a measurement below 0.99 is flagged.
    pub fraction_on_intended: f64,
    /// THP only: share of the buffer backed by huge pages (from
    /// `/proc/self/smaps` `AnonHugePages`), so a silent fallback to 4 KiB
    /// pages is visible.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thp_fraction: Option<f64>,
}

/// The fraction below which a measurement's placement is flagged.
pub const PLACEMENT_THRESHOLD: f64 = 0.99;

/// An anonymous memory buffer with a NUMA placement. Unmapped on drop.
#[derive(Debug)]
pub struct NodeBuffer {
    /// Start and length of the whole mapping (for `munmap`).
    map_ptr: *mut u8,
    map_len: usize,
    /// The usable, suitably aligned part.
    ptr: *mut u8,
    len: usize,
    spec: BufferSpec,
    touched_on: Option<(u32, u32)>,
}

// SAFETY: the buffer owns its mapping exclusively; moving it to another thread
// moves that ownership. Shared references only hand out `*const` access.
unsafe impl Send for NodeBuffer {}
unsafe impl Sync for NodeBuffer {}

impl NodeBuffer {
    /// Check `spec` against the live machine, then map and place the buffer.
    /// No page is touched yet: call [`touch`](Self::touch) from the thread
    /// (pinned) that should fault the pages in. A first-touch buffer is
    /// checked against the node of the CPU calling `alloc`.
    pub fn alloc(spec: &BufferSpec) -> Result<Self, PlacementError> {
        let live = LiveSystem::read()?;
        let here = super::current_cpu_and_node().ok();
        // A thread pinned to one CPU faults the pages in from that CPU's
        // per-CPU lists first; an unpinned one may move, so it gets none.
        let pinned: Vec<u32> = match (super::current_affinity(), here) {
            (Ok(mask), Some((cpu, _))) if mask == [cpu] => vec![cpu],
            _ => Vec::new(),
        };
        spec.check_on(&live, here.map(|(_, n)| n), &pinned)?;
        Self::map(spec)
    }

    /// Pin a new thread to `cpu`, allocate and touch the buffer from it, and
    /// return the buffer. For `FirstTouch` this is what places the pages on
    /// `cpu`'s node; for the other policies it makes sure the page tables and
    /// the first write come from the measuring side. The calling thread's own
    /// affinity is not changed.
    pub fn alloc_on_cpu(cpu: u32, spec: &BufferSpec) -> Result<Self, PlacementError> {
        let live = LiveSystem::read()?;
        if !live.cpus_allowed.contains(&cpu) {
            return Err(PlacementError::CpuNotAllowed {
                cpu,
                allowed: live.cpus_allowed.clone(),
            });
        }
        spec.check_on(&live, live.node_of_cpu(cpu), &[cpu])?;
        let spec = spec.clone();
        std::thread::spawn(move || -> Result<NodeBuffer, PlacementError> {
            pin_current_thread(&[cpu])?;
            let mut b = NodeBuffer::map(&spec)?;
            b.touch();
            Ok(b)
        })
        .join()
        .map_err(|_| PlacementError::PlacerPanicked)?
    }

    fn map(spec: &BufferSpec) -> Result<Self, PlacementError> {
        let len = spec.rounded_len();
        let mut flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        // THP needs a 2 MiB-aligned range to use huge pages from the first
        // byte: over-map by 2 MiB and start at the first aligned address.
        let (map_len, align) = match spec.pages {
            PageKind::Thp => (len + HUGE_2M as usize, HUGE_2M as usize),
            PageKind::Huge2M => {
                flags |= libc::MAP_HUGETLB | libc::MAP_HUGE_2MB;
                (len, HUGE_2M as usize)
            }
            PageKind::Huge1G => {
                flags |= libc::MAP_HUGETLB | libc::MAP_HUGE_1GB;
                (len, HUGE_1G as usize)
            }
            PageKind::Small => (len, SMALL_PAGE as usize),
        };
        // SAFETY: a fresh anonymous mapping; no existing memory is affected.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(PlacementError::last_os("mmap"));
        }
        let map_ptr = p as *mut u8;
        let offset = (align - (map_ptr as usize % align)) % align;
        let buf = NodeBuffer {
            map_ptr,
            map_len,
            // SAFETY: offset < align <= map_len - len for THP, 0 otherwise.
            ptr: unsafe { map_ptr.add(offset) },
            len,
            spec: spec.clone(),
            touched_on: None,
        };
        let advice = match spec.pages {
            PageKind::Thp => Some(libc::MADV_HUGEPAGE),
            PageKind::Small => Some(libc::MADV_NOHUGEPAGE),
            _ => None,
        };
        if let Some(a) = advice {
            // SAFETY: the range is inside our mapping.
            if unsafe { libc::madvise(buf.ptr as *mut libc::c_void, len, a) } != 0 {
                return Err(PlacementError::last_os("madvise"));
            }
        }
        let (mode, nodes, mflags) = match &spec.policy {
            MemPolicy::Bind(n) => (MPOL_BIND, vec![*n], MPOL_MF_STRICT),
            MemPolicy::Interleave(ns) => (MPOL_INTERLEAVE, ns.clone(), 0),
            MemPolicy::Preferred(n) => (MPOL_PREFERRED, vec![*n], 0),
            MemPolicy::FirstTouch => return Ok(buf),
        };
        let mut mask = [0u64; (MAX_NODES / 64) as usize];
        for n in nodes {
            if n >= MAX_NODES {
                return Err(PlacementError::NodeTooLarge {
                    node: n,
                    limit: MAX_NODES - 1,
                });
            }
            mask[(n / 64) as usize] |= 1 << (n % 64);
        }
        // SAFETY: mbind reads `maxnode - 1` bits of `mask` (the kernel
        // decrements maxnode first, hence the + 1) and only changes the
        // policy of our own range.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_mbind,
                buf.ptr as *mut libc::c_void,
                len as libc::c_ulong,
                mode,
                mask.as_ptr(),
                (MAX_NODES + 1) as libc::c_ulong,
                mflags,
            )
        };
        if rc != 0 {
            return Err(PlacementError::last_os("mbind"));
        }
        Ok(buf)
    }

    /// Write one word in every page (every 4 KiB for 4k and THP, every huge
    /// page for hugetlbfs) from the calling thread, so every page is
    /// allocated before anything is timed. Records the CPU and node it ran on
    /// (the node a first-touch buffer is meant to be on).
    pub fn touch(&mut self) {
        self.touched_on = super::current_cpu_and_node().ok();
        let step = self.spec.pages.page_size() as usize;
        let mut off = 0;
        while off < self.len {
            // SAFETY: off < len, inside our mapping. Volatile so the write is
            // not merged away: a read would map the shared zero page instead
            // of allocating one on the intended node.
            unsafe { std::ptr::write_volatile(self.ptr.add(off), 0) };
            off += step;
        }
    }

    /// (CPU, node) of the thread that last called [`touch`](Self::touch).
    pub fn touched_on(&self) -> Option<(u32, u32)> {
        self.touched_on
    }

    /// The nodes the policy intends the pages for (first touch: the node of
    /// the CPU that touched, or of the caller if not touched yet).
    pub fn intended_nodes(&self) -> Vec<u32> {
        match &self.spec.policy {
            MemPolicy::Bind(n) | MemPolicy::Preferred(n) => vec![*n],
            MemPolicy::Interleave(ns) => {
                let mut v = ns.clone();
                v.sort_unstable();
                v.dedup();
                v
            }
            MemPolicy::FirstTouch => self
                .touched_on
                .or_else(|| super::current_cpu_and_node().ok())
                .map(|(_, n)| vec![n])
                .unwrap_or_default(),
        }
    }

    /// Ask the kernel where every page is (`move_pages` with no target nodes,
    /// which only reports) and compute the share on the intended node(s).
    pub fn verify(&self) -> Result<PlacementCheck, PlacementError> {
        let ps = self.spec.pages.page_size() as usize;
        let n = self.len / ps;
        let intended = self.intended_nodes();
        let mut per_node: BTreeMap<u32, u64> = BTreeMap::new();
        let mut not_present = 0u64;
        const CHUNK: usize = 1 << 16;
        let mut addrs: Vec<*mut libc::c_void> = Vec::with_capacity(CHUNK.min(n));
        let mut status: Vec<libc::c_int> = vec![0; CHUNK.min(n)];
        let mut first = 0;
        while first < n {
            let count = CHUNK.min(n - first);
            addrs.clear();
            // SAFETY (add): every address is inside the buffer.
            addrs.extend(
                (first..first + count)
                    .map(|i| unsafe { self.ptr.add(i * ps) } as *mut libc::c_void),
            );
            // SAFETY: `addrs` and `status` hold `count` entries; with a NULL
            // node array move_pages moves nothing and fills `status`.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_move_pages,
                    0 as libc::pid_t,
                    count as libc::c_ulong,
                    addrs.as_ptr(),
                    std::ptr::null::<libc::c_int>(),
                    status.as_mut_ptr(),
                    0 as libc::c_int,
                )
            };
            if rc < 0 {
                return Err(PlacementError::last_os("move_pages"));
            }
            for &s in &status[..count] {
                if s >= 0 {
                    *per_node.entry(s as u32).or_default() += 1;
                } else {
                    not_present += 1;
                }
            }
            first += count;
        }
        let on: u64 = intended
            .iter()
            .map(|k| per_node.get(k).copied().unwrap_or(0))
            .sum();
        let fraction = if n == 0 { 0.0 } else { on as f64 / n as f64 };
        let thp_fraction = if self.spec.pages == PageKind::Thp {
            thp_bytes(self.ptr as usize, self.len).map(|b| (b as f64 / self.len as f64).min(1.0))
        } else {
            None
        };
        Ok(PlacementCheck {
            pages: n as u64,
            page_size: ps as u64,
            per_node,
            not_present,
            intended_nodes: intended,
            fraction_on_intended: fraction,
            thp_fraction,
        })
    }

    pub fn as_ptr(&self) -> *const u8 {
        self.ptr
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }

    /// Usable length in bytes (the requested size rounded up to whole pages).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The buffer as bytes. Reading pages that were never touched maps the
    /// shared zero page, not memory on the intended node: touch first.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: the mapping is readable and writable for `len` bytes,
        // zero-initialised by the kernel, and exclusively ours through &mut.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    pub fn spec(&self) -> &BufferSpec {
        &self.spec
    }

    pub fn page_kind(&self) -> PageKind {
        self.spec.pages
    }

    pub fn policy(&self) -> &MemPolicy {
        &self.spec.policy
    }
}

impl Drop for NodeBuffer {
    fn drop(&mut self) {
        // SAFETY: exactly the range mmap returned.
        unsafe { libc::munmap(self.map_ptr as *mut libc::c_void, self.map_len) };
    }
}

/// `AnonHugePages` of the mapping that contains `[start, start+len)`, from the
/// live `/proc/self/smaps`. Adjacent mappings with equal flags may have been
/// merged into one VMA, so this can over-count; callers cap at the length.
fn thp_bytes(start: usize, len: usize) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let mut inside = false;
    for line in text.lines() {
        if let Some((range, _)) = line.split_once(' ') {
            if let Some((a, b)) = range.split_once('-') {
                if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
                {
                    inside = a <= start && start + len <= b;
                    continue;
                }
            }
        }
        if inside {
            if let Some(rest) = line.strip_prefix("AnonHugePages:") {
                let kb: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
                return Some(kb * 1024);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1 << 20;

    #[test]
    fn bind_to_node_zero_is_verified_whole() {
        let spec = BufferSpec::new(4 * MIB, MemPolicy::Bind(0), PageKind::Small);
        let mut b = NodeBuffer::alloc(&spec).unwrap();
        assert_eq!(b.len(), 4 * MIB);
        b.touch();
        let c = b.verify().unwrap();
        assert_eq!(c.pages, 1024);
        assert_eq!(c.per_node.get(&0), Some(&1024));
        assert_eq!(c.not_present, 0);
        assert_eq!(c.fraction_on_intended, 1.0);
    }

    #[test]
    fn untouched_pages_are_not_counted_as_placed() {
        let spec = BufferSpec::new(MIB, MemPolicy::Bind(0), PageKind::Small);
        let b = NodeBuffer::alloc(&spec).unwrap();
        let c = b.verify().unwrap();
        assert_eq!(c.not_present, 256);
        assert_eq!(c.fraction_on_intended, 0.0);
    }

    #[test]
    fn every_policy_places_on_the_only_node() {
        let cpu = super::super::allowed_cpus().unwrap()[0];
        for policy in [
            MemPolicy::Interleave(vec![0]),
            MemPolicy::Preferred(0),
            MemPolicy::FirstTouch,
        ] {
            let spec = BufferSpec::new(2 * MIB, policy.clone(), PageKind::Small);
            let b = NodeBuffer::alloc_on_cpu(cpu, &spec).unwrap();
            assert_eq!(b.touched_on().map(|t| t.0), Some(cpu));
            let c = b.verify().unwrap();
            assert_eq!(c.fraction_on_intended, 1.0, "{policy}");
        }
    }

    #[test]
    fn thp_buffer_is_aligned_and_placed() {
        let live = LiveSystem::read().unwrap();
        if live.thp_mode.as_deref().is_none_or(|m| m == "never") {
            return;
        }
        let spec = BufferSpec::new(4 * MIB, MemPolicy::Bind(0), PageKind::Thp);
        let mut b = NodeBuffer::alloc(&spec).unwrap();
        assert_eq!(b.as_ptr() as usize % (2 * MIB), 0);
        b.touch();
        let c = b.verify().unwrap();
        assert_eq!(c.fraction_on_intended, 1.0);
        assert!(c.thp_fraction.is_some());
    }

    #[test]
    fn missing_node_fails_before_mapping() {
        let spec = BufferSpec::new(MIB, MemPolicy::Bind(99), PageKind::Small);
        let e = NodeBuffer::alloc(&spec).unwrap_err().to_string();
        assert!(e.contains("node 99 does not exist"), "{e}");
        let spec = BufferSpec::new(MIB, MemPolicy::Interleave(vec![0, 99]), PageKind::Small);
        assert!(NodeBuffer::alloc(&spec).is_err());
    }

    #[test]
    fn oversize_fails_before_mapping() {
        // 1 PiB: never fits, and must be refused by the check, not by mmap or
        // the OOM killer.
        let spec = BufferSpec::new(1 << 50, MemPolicy::Bind(0), PageKind::Small);
        let live = LiveSystem::read().unwrap();
        let e = spec.check(&live, None).unwrap_err();
        assert!(matches!(e, PlacementError::TooLarge { node: 0, .. }), "{e}");
        assert!(e
            .to_string()
            .contains("does not fit in node 0's allocatable memory"));
        assert!(NodeBuffer::alloc(&spec).is_err());
        let e = spec.check_capacity(&live, None).unwrap_err();
        assert!(
            matches!(e, PlacementError::NeverFits { node: 0, .. }),
            "{e}"
        );
        // Small enough for the node, whatever it holds now.
        let small = BufferSpec::new(MIB, MemPolicy::Bind(0), PageKind::Small);
        small.check_capacity(&live, None).unwrap();
    }

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
    fn shares_count_whole_pages_per_node() {
        let thp = BufferSpec::new(3 * MIB, MemPolicy::Bind(1), PageKind::Thp);
        assert_eq!(thp.node_shares(None).unwrap(), [(1, 4 * MIB as u64)]);
        let il = BufferSpec::new(
            10 * 4096,
            MemPolicy::Interleave(vec![0, 2]),
            PageKind::Small,
        );
        assert_eq!(
            il.node_shares(None).unwrap(),
            [(0, 5 * 4096), (2, 5 * 4096)]
        );
        let ft = BufferSpec::new(4096, MemPolicy::FirstTouch, PageKind::Small);
        assert!(ft.node_shares(None).unwrap().is_empty());
        assert_eq!(ft.node_shares(Some(3)).unwrap(), [(3, 4096)]);
    }

    #[test]
    fn page_kind_names_round_trip() {
        for n in PageKind::NAMES {
            assert_eq!(PageKind::parse(n).unwrap().name(), n);
        }
        assert!(PageKind::parse("3m").is_none());
    }
}
