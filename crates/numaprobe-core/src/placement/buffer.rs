//! `NodeBuffer`: anonymous memory mapped with `mmap`, placed with `mbind` (or
//! by first touch), faulted in page by page, and verified with `move_pages`.
//!
//! Raw syscalls through `libc`, no libnuma: one dependency less on the
//! machines people measure, and the exact flags we pass are visible here.

use super::live::LiveSystem;
use super::mempolicy::{mode_and_nodes, node_mask, MAXNODE};
use super::spec::{HUGE_1G, HUGE_2M};
use super::{pin_current_thread, BufferSpec, MemPolicy, PageKind, PlacementError};
use crate::pagesize::PageSizes;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where a buffer's pages are, as `move_pages` reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlacementCheck {
    /// Pages queried (the buffer's length divided by `page_size`).
    pub pages: u64,
    /// Query granularity in bytes: the kernel's base page for 4k and THP
    /// (4 KiB, or 16/64 KiB on some arm64 kernels), the huge page size for
    /// hugetlbfs pages.
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

/// Bytes touched or flushed between two reads of the cancel flag: 4 MiB
/// take about 0.1 s to fault in under software emulation (28 s/GiB), a few
/// milliseconds on hardware.
pub const TOUCH_CHUNK: usize = 4 << 20;

/// Flush `[p, p + len)` line by line; false on an architecture without a
/// user-level flush.
///
/// # Safety
/// The range must be mapped.
#[allow(unused_variables)]
unsafe fn flush_range(p: *const u8, len: usize, line: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        let mut off = 0;
        while off < len {
            core::arch::x86_64::_mm_clflush(p.add(off));
            off += line;
        }
        core::arch::x86_64::_mm_mfence();
        true
    }
    #[cfg(target_arch = "aarch64")]
    {
        let mut off = 0;
        while off < len {
            core::arch::asm!("dc civac, {0}", in(reg) p.add(off), options(nostack, preserves_flags));
            off += line;
        }
        core::arch::asm!("dsb ish", options(nostack, preserves_flags));
        true
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        false
    }
}

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
            b.touch_or_stop()?;
            Ok(b)
        })
        .join()
        .map_err(|_| PlacementError::PlacerPanicked)?
    }

    fn map(spec: &BufferSpec) -> Result<Self, PlacementError> {
        let len = spec.rounded_len();
        let mut flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        // THP needs a range aligned to its size (2 MiB with 4 KiB pages,
        // 512 MiB with 64 KiB ones) to use huge pages from the first byte:
        // over-map by one THP and start at the first aligned address.
        let ps = PageSizes::live();
        let (map_len, align) = match spec.pages {
            PageKind::Thp => (len + ps.thp as usize, ps.thp as usize),
            PageKind::Huge2M => {
                flags |= libc::MAP_HUGETLB | libc::MAP_HUGE_2MB;
                (len, HUGE_2M as usize)
            }
            PageKind::Huge1G => {
                flags |= libc::MAP_HUGETLB | libc::MAP_HUGE_1GB;
                (len, HUGE_1G as usize)
            }
            PageKind::Small => (len, ps.base as usize),
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
        if matches!(spec.policy, MemPolicy::FirstTouch) {
            return Ok(buf);
        }
        let (mode, nodes) = mode_and_nodes(&spec.policy);
        // No MPOL_MF_STRICT: the range is fresh, so there are no pages for it
        // to judge, yet the arm64 rig saw it fail with EIO now and then
        // (1 run in 3 of quartet-dual's study). MPOL_BIND alone already
        // confines every page faulted from now on, and verify() checks
        // where each one landed.
        let mflags: libc::c_uint = 0;
        let mask = node_mask(&nodes)?;
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
                MAXNODE,
                mflags,
            )
        };
        if rc != 0 {
            return Err(PlacementError::last_os("mbind"));
        }
        Ok(buf)
    }

    /// Write one word in every page (every base page for 4k and THP, every huge
    /// page for hugetlbfs) from the calling thread, so every page is
    /// allocated before anything is timed. Records the CPU and node it ran on
    /// (the node a first-touch buffer is meant to be on).
    ///
    /// Pages are touched in chunks of [`TOUCH_CHUNK`] bytes with the cancel
    /// flag ([`crate::cancel`]) read between them: under emulation a GiB
    /// takes tens of seconds to fault in, and Ctrl-C must not wait for it.
    /// Returns false when a stop was requested before every page was
    /// touched (the rest stay untouched; [`verify`](Self::verify) shows
    /// them as not present).
    pub fn touch(&mut self) -> bool {
        self.touch_by(None).is_ok()
    }

    /// [`touch`](Self::touch), also stopping between chunks once `deadline`
    /// has passed: a set-up the budget cannot afford ends at the budget, as
    /// it ends on Ctrl-C, and says how far it got
    /// ([`PlacementError::Late`]).
    pub fn touch_by(&mut self, deadline: Option<std::time::Instant>) -> Result<(), PlacementError> {
        self.touched_on = super::current_cpu_and_node().ok();
        let step = self.spec.pages.page_size() as usize;
        let mut off = 0;
        while off < self.len {
            if crate::cancel::requested() {
                return Err(PlacementError::Interrupted);
            }
            if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                return Err(PlacementError::Late {
                    touched: off as u64,
                    bytes: self.len as u64,
                });
            }
            let end = (off + TOUCH_CHUNK.max(step)).min(self.len);
            while off < end {
                // SAFETY: off < len, inside our mapping. Volatile so the write
                // is not merged away: a read would map the shared zero page
                // instead of allocating one on the intended node.
                unsafe { std::ptr::write_volatile(self.ptr.add(off), 0) };
                off += step;
            }
        }
        Ok(())
    }

    /// [`touch`](Self::touch), with an interruption as an error.
    pub fn touch_or_stop(&mut self) -> Result<(), PlacementError> {
        self.touch_by(None)
    }

    /// Write back and evict every line of the buffer from every cache of
    /// the machine (`clflush` on x86-64, `dc civac` on arm64: both act on
    /// the whole coherence domain, whichever CPU issues them), so a
    /// measurement that follows starts from memory, not from lines another
    /// CPU's cache kept from the measurement before. Checks the cancel flag
    /// between chunks; returns false when the flush stopped early or the
    /// architecture has no such instruction.
    pub fn flush_caches(&self) -> bool {
        const LINE: usize = 64;
        let mut off = 0;
        while off < self.len {
            if crate::cancel::requested() {
                return false;
            }
            let end = (off + TOUCH_CHUNK).min(self.len);
            // SAFETY: every address is inside our mapping.
            if !unsafe { flush_range(self.ptr.add(off), end - off, LINE) } {
                return false;
            }
            off = end;
        }
        true
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
            MemPolicy::Interleave(ns) | MemPolicy::WeightedInterleave(ns) => {
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
    fn a_flushed_buffer_keeps_its_data_and_its_pages() {
        let spec = BufferSpec::new(4 * MIB, MemPolicy::Bind(0), PageKind::Small);
        let mut b = NodeBuffer::alloc(&spec).unwrap();
        assert!(b.touch());
        b.as_mut_slice()[12345] = 7;
        assert!(b.flush_caches());
        assert_eq!(b.as_mut_slice()[12345], 7);
        assert_eq!(b.verify().unwrap().fraction_on_intended, 1.0);
    }

    #[test]
    fn a_touch_past_its_deadline_stops_and_says_how_far_it_got() {
        let spec = BufferSpec::new(3 * TOUCH_CHUNK, MemPolicy::Bind(0), PageKind::Small);
        let mut b = NodeBuffer::alloc(&spec).unwrap();
        let past = std::time::Instant::now();
        match b.touch_by(Some(past)) {
            Err(PlacementError::Late { touched, bytes }) => {
                assert_eq!((touched, bytes), (0, 3 * TOUCH_CHUNK as u64));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(b.verify().unwrap().fraction_on_intended, 0.0);
        let later = std::time::Instant::now() + std::time::Duration::from_secs(3600);
        b.touch_by(Some(later)).unwrap();
        assert_eq!(b.verify().unwrap().fraction_on_intended, 1.0);
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
}
