//! How much memory a node can give a new allocation without an OOM kill or
//! heavy reclaim: a pure parser of `/proc/zoneinfo` and the figure computed
//! from it. `live.rs` reads the files; everything here works on text, so
//! multi-node layouts are tested with written samples.
//!
//! Why not `MemFree`: the page allocator never lets a zone's free pages fall
//! below its `min` watermark (and reclaims long before, at `low`), and a user
//! allocation may not dip into the `lowmem_reserve` ("protection") that keeps
//! DMA and DMA32 for the allocations that need them. On small nodes those
//! reserves are a large share (12.5 MiB of a 192 MiB node), so a buffer of
//! "MemFree minus a little" reaches the OOM killer. The figure here is what
//! is above those lines, zone by zone.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One zone of `/proc/zoneinfo`, counted in pages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ZoneInfo {
    pub node: u32,
    /// `DMA`, `DMA32`, `Normal`, `Movable`, `Device`, ...
    pub name: String,
    /// `pages free`: pages in the buddy allocator (not those on per-CPU lists).
    pub free: u64,
    /// Watermarks (boost included, as the kernel prints them).
    pub min: u64,
    pub low: u64,
    pub high: u64,
    /// Pages the page allocator manages in this zone.
    pub managed: u64,
    /// `protection`: `lowmem_reserve[]`, the pages this zone keeps back from
    /// an allocation that could have been served by a higher zone, indexed
    /// by that allocation's highest zone.
    pub protection: Vec<u64>,
    /// `nr_zone_inactive_file` (`nr_inactive_file` in a zone before 4.8).
    pub inactive_file: u64,
    /// `nr_zone_write_pending` (dirty plus writeback; `nr_dirty` +
    /// `nr_writeback` before 4.8): file pages that cannot be dropped now.
    pub write_pending: u64,
    /// Free pages parked on the per-CPU lists (`pagesets`, `count` of each
    /// `cpu`); not in `free`.
    pub pcp: BTreeMap<u32, u64>,
}

impl ZoneInfo {
    /// The reserve a user page (`GFP_HIGHUSER_MOVABLE`, whose highest zone
    /// is `Movable`) must leave in this zone. `lowmem_reserve[j]` grows with
    /// j for a given zone and the zones above `Movable` (`Device`) manage no
    /// pages, so the largest entry is the `Movable` one, or errs on the safe
    /// side.
    pub fn user_reserve(&self) -> u64 {
        self.protection.iter().copied().max().unwrap_or(0)
    }

    /// Clean inactive file cache: dropped by reclaim without any I/O. Write
    /// pending pages count against it even when they are active (the zone
    /// count does not split them), which errs on the safe side.
    pub fn clean_inactive_file(&self) -> u64 {
        self.inactive_file.saturating_sub(self.write_pending)
    }

    /// Pages a user allocation can take from this zone now: free pages plus
    /// clean inactive file cache, above the `high` watermark plus the
    /// zone's reserve for user pages.
    ///
    /// `high`, not `low`: an allocation that keeps the zone above `low`
    /// never wakes kswapd, but ending just above `low` would leave the very
    /// next allocation of anyone (our own page tables, other processes) to
    /// start reclaim in the middle of a measurement. Stopping at `high` is
    /// where kswapd itself stops, so the node is left as quiet as kswapd
    /// would leave it; the low..high gap is 0.1 % of a large node
    /// (`watermark_scale_factor`) and a few MiB of a small one.
    ///
    /// Per-CPU list pages are not counted here: the kernel drains other
    /// CPUs' lists only after direct reclaim has failed, the heavy reclaim
    /// this figure promises to avoid. See [`Self::own_pcp_pages`].
    pub fn allocatable_pages(&self) -> u64 {
        (self.free + self.clean_inactive_file()).saturating_sub(self.high + self.user_reserve())
    }

    /// Pages on the per-CPU list of `cpu` that a thread running there gets
    /// on top of [`Self::allocatable_pages`]: an order-0 allocation takes
    /// its own CPU's list first, and taking them does not lower `free`, so
    /// the watermark check (made on `free`) still passes. Only while the
    /// zone is above its line: below it the allocation goes to reclaim
    /// before it looks at the list. This is where a freed buffer's pages
    /// wait when the same CPU allocates again (a run after a run).
    pub fn own_pcp_pages(&self, cpu: u32) -> u64 {
        if self.allocatable_pages() == 0 {
            return 0;
        }
        self.pcp.get(&cpu).copied().unwrap_or(0)
    }

    /// The most this zone could ever give a user allocation: every managed
    /// page above the same lines.
    pub fn capacity_pages(&self) -> u64 {
        self.managed.saturating_sub(self.high + self.user_reserve())
    }
}

/// A node's memory as a new allocation sees it, in bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeMemory {
    pub node: u32,
    /// What an allocation can get now without an OOM kill or heavy
    /// reclaim (see [`ZoneInfo::allocatable_pages`]), summed over zones.
    pub allocatable: u64,
    /// What it could get if nothing else used the node: managed pages above
    /// the same watermarks and reserves. A request above this can never fit.
    pub capacity: u64,
    /// `pages free` of all zones (what `MemFree` says).
    pub free: u64,
    /// Free pages on per-CPU lists, not counted in `allocatable`.
    pub pcp: u64,
    /// Per CPU: what a thread on that CPU gets on top of `allocatable`
    /// from its own per-CPU lists ([`ZoneInfo::own_pcp_pages`]).
    pub own_pcp: BTreeMap<u32, u64>,
}

impl NodeMemory {
    /// What threads on `cpus`, together, can allocate on this node now:
    /// `allocatable` plus their own per-CPU lists.
    pub fn allocatable_on(&self, cpus: &[u32]) -> u64 {
        let mut cpus = cpus.to_vec();
        cpus.sort_unstable();
        cpus.dedup();
        self.allocatable
            + cpus
                .iter()
                .map(|c| self.own_pcp.get(c).copied().unwrap_or(0))
                .sum::<u64>()
    }
}

/// Parse `/proc/zoneinfo`. Unknown lines are skipped; a zone without a
/// `pages free` line is dropped (it cannot be counted on).
pub fn parse_zoneinfo(text: &str) -> Vec<ZoneInfo> {
    #[derive(PartialEq)]
    enum Part {
        NodeStats,
        Zone,
        Pagesets,
    }
    let mut zones: Vec<ZoneInfo> = Vec::new();
    let mut seen_free = Vec::new();
    let mut part = Part::Zone;
    let mut cpu: Option<u32> = None;
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("Node ") {
            // `Node 0, zone      DMA`
            if let Some((n, z)) = rest.split_once(',') {
                if let (Ok(node), Some(name)) = (
                    n.trim().parse::<u32>(),
                    z.trim().strip_prefix("zone").map(str::trim),
                ) {
                    zones.push(ZoneInfo {
                        node,
                        name: name.to_string(),
                        ..ZoneInfo::default()
                    });
                    seen_free.push(false);
                    part = Part::Zone;
                    continue;
                }
            }
        }
        let Some(z) = zones.last_mut() else { continue };
        if t == "per-node stats" {
            part = Part::NodeStats;
            continue;
        }
        if t == "pagesets" {
            part = Part::Pagesets;
            cpu = None;
            continue;
        }
        if part == Part::Pagesets {
            if let Some(c) = t.strip_prefix("cpu:") {
                cpu = c.trim().parse().ok();
                continue;
            }
        }
        if let Some(v) = t.strip_prefix("protection:") {
            z.protection = v
                .trim()
                .trim_start_matches('(')
                .trim_end_matches(')')
                .split(',')
                .filter_map(|x| x.trim().parse().ok())
                .collect();
            continue;
        }
        let mut words = t.split_whitespace();
        let (Some(key), Some(val)) = (words.next(), words.next()) else {
            continue;
        };
        if key == "pages" && val == "free" {
            if let Some(v) = words.next().and_then(|v| v.parse().ok()) {
                z.free = v;
                if let Some(s) = seen_free.last_mut() {
                    *s = true;
                }
            }
            part = Part::Zone;
            continue;
        }
        let Ok(v) = val.parse::<u64>() else { continue };
        match part {
            // Node-wide counters printed inside the first zone: never zone values.
            Part::NodeStats => {}
            Part::Pagesets => {
                if let (true, Some(c)) = (key == "count:", cpu) {
                    *z.pcp.entry(c).or_default() += v;
                }
            }
            Part::Zone => match key {
                "min" => z.min = v,
                "low" => z.low = v,
                "high" => z.high = v,
                "managed" => z.managed = v,
                "nr_zone_inactive_file" | "nr_inactive_file" => z.inactive_file = v,
                "nr_zone_write_pending" => z.write_pending = v,
                // Before 4.8 the zone printed its dirty and writeback pages.
                "nr_dirty" | "nr_writeback" => z.write_pending += v,
                _ => {}
            },
        }
    }
    zones
        .into_iter()
        .zip(seen_free)
        .filter_map(|(z, ok)| ok.then_some(z))
        .collect()
}

/// The figure for `node` from parsed zones (`page_size`: bytes per page),
/// or None when zoneinfo lists no zone of that node.
pub fn node_memory(zones: &[ZoneInfo], node: u32, page_size: u64) -> Option<NodeMemory> {
    let mine: Vec<&ZoneInfo> = zones.iter().filter(|z| z.node == node).collect();
    if mine.is_empty() {
        return None;
    }
    let sum = |f: &dyn Fn(&ZoneInfo) -> u64| mine.iter().map(|z| f(z)).sum::<u64>() * page_size;
    Some(NodeMemory {
        node,
        allocatable: sum(&|z| z.allocatable_pages()),
        capacity: sum(&|z| z.capacity_pages()),
        free: sum(&|z| z.free),
        pcp: sum(&|z| z.pcp.values().sum()),
        own_pcp: {
            let mut per_cpu: BTreeMap<u32, u64> = BTreeMap::new();
            for z in &mine {
                for &c in z.pcp.keys() {
                    *per_cpu.entry(c).or_default() += z.own_pcp_pages(c) * page_size;
                }
            }
            per_cpu
        },
    })
}

/// A fallback from a node's `meminfo` alone, for a kernel whose zoneinfo
/// does not list the node: `MemFree` plus `Inactive(file)` less `Dirty` and
/// `Writeback`, less a reserve of 1/32 of `MemTotal` standing in for the
/// watermarks and lowmem reserves it cannot see (they are about that share
/// of a small node, much less of a large one).
pub fn node_memory_from_meminfo(text: &str, node: u32) -> NodeMemory {
    let field = |name: &str| -> u64 {
        text.lines()
            .find_map(|l| {
                let rest = l.split_once(name)?.1;
                let kb: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
                Some(kb * 1024)
            })
            .unwrap_or(0)
    };
    let total = field(" MemTotal:");
    let free = field(" MemFree:");
    let clean = field(" Inactive(file):").saturating_sub(field(" Dirty:") + field(" Writeback:"));
    let reserve = total / 32;
    NodeMemory {
        node,
        allocatable: (free + clean).saturating_sub(reserve),
        capacity: total.saturating_sub(reserve),
        free,
        pcp: 0,
        own_pcp: BTreeMap::new(),
    }
}

/// Bytes the kernel will really allocate for a buffer of `len` bytes: whole
/// pages, and for transparent huge pages whole huge pages (a THP buffer grows
/// in THP steps, 2 MiB on 4 KiB kernels and 512 MiB on 64 KiB ones: the last,
/// partly used huge page is allocated whole). On the running kernel.
pub fn footprint(len: u64, pages: super::PageKind) -> u64 {
    footprint_in(len, pages, crate::pagesize::PageSizes::live())
}

/// [`footprint`] on a kernel with the page sizes `ps`.
pub fn footprint_in(len: u64, pages: super::PageKind, ps: &crate::pagesize::PageSizes) -> u64 {
    let step = match pages {
        super::PageKind::Thp => ps.thp,
        other => other.page_size_in(ps),
    };
    len.div_ceil(step).saturating_mul(step)
}

#[cfg(test)]
#[path = "memory_tests.rs"]
mod tests;
