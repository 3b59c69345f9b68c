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
        self.free
            .saturating_add(self.clean_inactive_file())
            .saturating_sub(self.high.saturating_add(self.user_reserve()))
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
        self.managed
            .saturating_sub(self.high.saturating_add(self.user_reserve()))
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
        // Each figure was counted without overflow; their sum can only pass
        // 16 EiB on a document that is not a machine's, kept at the top.
        cpus.iter()
            .map(|c| self.own_pcp.get(c).copied().unwrap_or(0))
            .fold(self.allocatable, u64::saturating_add)
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
                    let e = z.pcp.entry(c).or_default();
                    *e = e.saturating_add(v);
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
                "nr_dirty" | "nr_writeback" => z.write_pending = z.write_pending.saturating_add(v),
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

/// A node's figure from outside that does not fit a 64-bit byte count: its
/// pages times the page size, or its kB times 1024, past 16 EiB. No machine
/// has that much, so the file is damaged or forged; the figure is refused,
/// never wrapped or cut to a plausible-looking number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("node {node}'s {what} overflows a 64-bit byte count (a damaged or forged file)")]
pub struct Overflow {
    pub node: u32,
    pub what: &'static str,
}

/// `pages` summed and times `page_size`, checked.
fn checked_bytes(mut pages: impl Iterator<Item = u64>, page_size: u64) -> Option<u64> {
    pages
        .try_fold(0u64, u64::checked_add)?
        .checked_mul(page_size)
}

/// The figure for `node` from parsed zones (`page_size`: bytes per page),
/// `Ok(None)` when zoneinfo lists no zone of that node, an [`Overflow`]
/// when its page counts do not fit in bytes.
pub fn node_memory(
    zones: &[ZoneInfo],
    node: u32,
    page_size: u64,
) -> Result<Option<NodeMemory>, Overflow> {
    let mine: Vec<&ZoneInfo> = zones.iter().filter(|z| z.node == node).collect();
    if mine.is_empty() {
        return Ok(None);
    }
    let sum = |what: &'static str, f: &dyn Fn(&ZoneInfo) -> u64| {
        checked_bytes(mine.iter().map(|z| f(z)), page_size).ok_or(Overflow { node, what })
    };
    let pcp_of = |z: &ZoneInfo| z.pcp.values().try_fold(0u64, |a, &b| a.checked_add(b));
    if mine.iter().any(|z| pcp_of(z).is_none()) {
        return Err(Overflow {
            node,
            what: "per-CPU free pages",
        });
    }
    let mut own_pcp: BTreeMap<u32, u64> = BTreeMap::new();
    for z in &mine {
        for &c in z.pcp.keys() {
            let e = own_pcp.entry(c).or_default();
            *e = z
                .own_pcp_pages(c)
                .checked_mul(page_size)
                .and_then(|b| e.checked_add(b))
                .ok_or(Overflow {
                    node,
                    what: "per-CPU free pages",
                })?;
        }
    }
    Ok(Some(NodeMemory {
        node,
        allocatable: sum("allocatable pages", &|z| z.allocatable_pages())?,
        capacity: sum("managed pages", &|z| z.capacity_pages())?,
        free: sum("free pages", &|z| z.free)?,
        pcp: sum("per-CPU free pages", &|z| pcp_of(z).unwrap_or(0))?,
        own_pcp,
    }))
}

/// A fallback from a node's `meminfo` alone, for a kernel whose zoneinfo
/// does not list the node: `MemFree` plus `Inactive(file)` less `Dirty` and
/// `Writeback`, less a reserve of 1/32 of `MemTotal` standing in for the
/// watermarks and lowmem reserves it cannot see (they are about that share
/// of a small node, much less of a large one). A field whose kB do not fit
/// in bytes is an [`Overflow`].
pub fn node_memory_from_meminfo(text: &str, node: u32) -> Result<NodeMemory, Overflow> {
    let field = |name: &'static str| -> Result<u64, Overflow> {
        let kb = text.lines().find_map(|l| {
            let rest = l.split_once(name)?.1;
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        });
        kb.unwrap_or(0).checked_mul(1024).ok_or(Overflow {
            node,
            what: name.trim().trim_end_matches(':'),
        })
    };
    let total = field(" MemTotal:")?;
    let free = field(" MemFree:")?;
    let pending = field(" Dirty:")?.saturating_add(field(" Writeback:")?);
    let clean = field(" Inactive(file):")?.saturating_sub(pending);
    let reserve = total / 32;
    Ok(NodeMemory {
        node,
        allocatable: free.saturating_add(clean).saturating_sub(reserve),
        capacity: total.saturating_sub(reserve),
        free,
        pcp: 0,
        own_pcp: BTreeMap::new(),
    })
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
