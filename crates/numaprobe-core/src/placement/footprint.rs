//! How many bytes this run may hold at once: the one answer every measuring
//! command sizes its default buffers from.
//!
//! numaprobe runs on shared nodes, beside other people's jobs and inside
//! their limits. A run's resident memory, every buffer alive at the same
//! time together, stays within [`NODE_SHARE_PERCENT`] of what the allowed
//! memory nodes can give now (their allocatable figure, above the kernel's
//! watermarks: see [`super::memory`]) and within [`CGROUP_SHARE_PERCENT`] of
//! the room left under the memory cgroup's limit (Slurm's
//! ConstrainRAMSpace, a container's limit), since past that limit the
//! kernel reclaims the group's own cache and then kills it. The other half
//! of the cgroup's room is for the process itself (code, page tables, the
//! report's files in the page cache, which the group is charged for).
//! The ceiling holds the whole run: its buffers get what is left of it once
//! the program's own memory ([`PROGRAM_BYTES`]) and the buffers' page
//! tables are set aside, so the run's peak resident memory stays under it.
//!
//! A command asks [`FootprintLimit::per_buffer`] with how many buffers it
//! keeps alive at once; an explicit `--size` is the user's word and is not
//! shrunk here (the node checks still refuse what cannot fit).

use super::LiveSystem;
use crate::topology::CgroupMemory;
use crate::units::format_size;
use serde::{Deserialize, Serialize};
use std::sync::Mutex;

/// Share of the allowed nodes' allocatable memory a run may hold at once.
pub const NODE_SHARE_PERCENT: u64 = 12;

/// Share of the room left under the memory cgroup's limit.
pub const CGROUP_SHARE_PERCENT: u64 = 50;

/// Buffers are sized in whole 2 MiB steps (a transparent huge page), and
/// never below one: smaller, a chase would measure the cache.
const STEP: u64 = 2 << 20;

/// What limited the run's footprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limiter {
    /// The share of the allowed nodes' memory.
    NodeMemory,
    /// The share of the memory cgroup's room.
    Cgroup,
}

impl Limiter {
    /// What held the buffers down, in a few words: the full figures are in
    /// [`FootprintLimit::statement`], said once per run.
    pub fn words(self) -> &'static str {
        match self {
            Limiter::NodeMemory => "the share of the allowed nodes' free memory a run may hold",
            Limiter::Cgroup => "the share of the memory cgroup's room a run may hold",
        }
    }
}

/// The ceiling on all the buffers of a run alive at once, and where it
/// comes from; the `footprint` object of every document's provenance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FootprintLimit {
    /// Bytes the run may hold at once: its buffers together, the program
    /// itself and the buffers' page tables ([`FootprintLimit::buffers_bytes`]).
    pub limit_bytes: u64,
    pub limited_by: Limiter,
    /// What the allowed memory nodes can give now, summed.
    pub nodes_allocatable_bytes: u64,
    pub node_share_percent: u64,
    /// The memory cgroup's limit, when one applies.
    pub cgroup: Option<CgroupMemory>,
    pub cgroup_share_percent: u64,
}

impl FootprintLimit {
    /// The limit from the allowed nodes' allocatable total and the cgroup.
    pub fn from_parts(nodes_allocatable: u64, cgroup: Option<CgroupMemory>) -> Self {
        let by_nodes = percent_of(nodes_allocatable, NODE_SHARE_PERCENT);
        let by_cgroup = cgroup
            .as_ref()
            .map(|c| percent_of(c.headroom(), CGROUP_SHARE_PERCENT));
        let (limit_bytes, limited_by) = match by_cgroup {
            Some(c) if c < by_nodes => (c, Limiter::Cgroup),
            _ => (by_nodes, Limiter::NodeMemory),
        };
        FootprintLimit {
            limit_bytes,
            limited_by,
            nodes_allocatable_bytes: nodes_allocatable,
            node_share_percent: NODE_SHARE_PERCENT,
            cgroup,
            cgroup_share_percent: CGROUP_SHARE_PERCENT,
        }
    }

    /// The live machine's limit now: the allowed memory nodes of `live` and
    /// the process's memory cgroup, both read below `live`'s root.
    /// Remembered for the documents' provenance ([`last`]).
    pub fn live(live: &LiveSystem) -> Self {
        // Each node's figure is checked as it is read, the sum saturates:
        // two nodes claiming near 2^64 bytes each are "more than any
        // buffer needs", never a wrapped-round few bytes.
        let nodes = live
            .mems_allowed
            .iter()
            .filter_map(|&n| live.allocatable_bytes(n).ok())
            .fold(0u64, u64::saturating_add);
        // An unreadable cgroup is no limit we can keep (`cgroup_memory`
        // gives none); the node share still bounds the run.
        let limit = Self::from_parts(nodes, live.cgroup_memory());
        if let Ok(mut slot) = LAST.lock() {
            *slot = Some(limit.clone());
        }
        limit
    }

    /// Bytes all buffers alive at once may take together: the limit less
    /// the program's own memory and the buffers' page tables.
    pub fn buffers_bytes(&self) -> u64 {
        buffers_within(self.limit_bytes, PROGRAM_BYTES)
    }

    /// The size of each of `count` buffers alive at once that would like
    /// `want` bytes: `want`, or the buffers' share for one buffer when that
    /// is smaller, in 2 MiB steps and never below 2 MiB.
    pub fn per_buffer(&self, want: u64, count: usize) -> u64 {
        let share = self.buffers_bytes() / count.max(1) as u64 / STEP * STEP;
        want.min(share.max(STEP))
    }

    /// True when `want` bytes for each of `count` buffers do not fit.
    pub fn limits(&self, want: u64, count: usize) -> bool {
        self.per_buffer(want, count) < want
    }

    /// One sentence for a person: the ceiling and what set it.
    pub fn statement(&self) -> String {
        let nodes = format!(
            "{} % of the {} the allowed memory nodes can give",
            self.node_share_percent,
            format_size(self.nodes_allocatable_bytes)
        );
        match (&self.cgroup, self.limited_by) {
            (Some(c), Limiter::Cgroup) => format!(
                "buffers held at once: at most {}, {} % of the {} left under the memory cgroup's limit ({}, {}); {nodes} would allow more",
                format_size(self.limit_bytes),
                self.cgroup_share_percent,
                format_size(c.headroom()),
                c.usage_text(),
                c.path
            ),
            (cg, _) => format!(
                "buffers held at once: at most {}, {nodes}{}",
                format_size(self.limit_bytes),
                match cg {
                    Some(c) => format!(
                        " (the memory cgroup leaves {}, {})",
                        format_size(c.headroom()),
                        c.path
                    ),
                    None => "; no memory cgroup limit".into(),
                }
            ),
        }
    }
}

/// Bytes the process keeps beside its buffers under the cgroup's limit:
/// code, stacks, results and the report's files in the page cache, which
/// the group is charged for.
pub const CGROUP_SLACK: u64 = 32 << 20;

/// Resident bytes of the program itself beside its buffers, at its peak:
/// code, heap, thread stacks, samples and results. `c2c`, which holds no
/// buffer, peaks at 9-10 MiB, and `latency` 10-11 MiB above its buffer
/// (`bench/rss`, /usr/bin/time's maximum resident set size); the rest is
/// room for a larger machine's results.
pub const PROGRAM_BYTES: u64 = 16 << 20;

/// The most bytes of buffers that fit in `bytes` beside `beside` bytes of
/// the process's own and the buffers' page tables (8 bytes per 4 KiB page,
/// 1/512; 1/256 leaves room for the upper levels).
pub fn buffers_within(bytes: u64, beside: u64) -> u64 {
    let room = bytes.saturating_sub(beside);
    room - room / 257
}

/// The most bytes of new buffers the cgroup `c` takes without reaching its
/// limit: its room less [`CGROUP_SLACK`] and the buffers' page tables.
pub fn cgroup_fits(c: &CgroupMemory) -> u64 {
    buffers_within(c.headroom(), CGROUP_SLACK)
}

/// Error when `bytes` of new buffers (the user's `--size`, or what a plan
/// holds at once) would take the process past its memory cgroup's limit,
/// where the kernel reclaims the group's memory and then kills it: a run
/// refused with the figures is worth more than one killed half-way. The
/// defaults never come near it (they take [`CGROUP_SHARE_PERCENT`]).
pub fn check_cgroup(live: &LiveSystem, bytes: u64) -> Result<(), super::PlacementError> {
    match live.cgroup_memory() {
        Some(c) if bytes > cgroup_fits(&c) => Err(super::PlacementError::OverCgroup {
            requested: bytes,
            fits: cgroup_fits(&c),
            cgroup: Box::new(c),
        }),
        _ => Ok(()),
    }
}

/// `pct` % of `bytes`, rounded down, without overflow.
fn percent_of(bytes: u64, pct: u64) -> u64 {
    (u128::from(bytes) * u128::from(pct) / 100) as u64
}

static LAST: Mutex<Option<FootprintLimit>> = Mutex::new(None);

/// The limit the run's buffers were last sized by, if any was read.
pub fn last() -> Option<FootprintLimit> {
    LAST.lock().ok().and_then(|s| s.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn each_limiter_is_named_for_what_it_is() {
        assert!(Limiter::Cgroup.words().contains("memory cgroup"));
        assert!(Limiter::NodeMemory.words().contains("nodes' free memory"));
    }
    const GIB: u64 = 1 << 30;

    fn cgroup(limit: u64, usage: u64) -> CgroupMemory {
        CgroupMemory {
            version: 2,
            path: "/sys/fs/cgroup/job/memory.max".into(),
            limit_bytes: limit,
            usage_bytes: usage,
            inactive_file_bytes: 0,
        }
    }

    /// A machine below a root whose process sits in a cgroup v2 group with
    /// `limit` and `current` bytes.
    fn in_group(limit: u64, current: u64) -> crate::topology::testing::Root {
        let (limit, current) = (format!("{limit}\n"), format!("{current}\n"));
        crate::topology::testing::root_with(&[
            ("proc/mounts", "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n"),
            ("proc/self/cgroup", "0::/job\n"),
            ("sys/fs/cgroup/cgroup.controllers", "memory\n"),
            ("sys/fs/cgroup/job/memory.max", &limit),
            ("sys/fs/cgroup/job/memory.current", &current),
        ])
    }

    #[test]
    fn buffers_past_the_cgroups_room_are_refused_with_the_figures() {
        // 1 GiB limit, 256 MiB used: 768 MiB of room, less the slack and
        // the page tables.
        let root = in_group(GIB, 256 * MIB);
        let live = LiveSystem::read_below(root.path()).unwrap();
        let fits = 736 * MIB - 736 * MIB / 257;
        assert_eq!(cgroup_fits(&live.cgroup_memory().unwrap()), fits);
        check_cgroup(&live, fits).unwrap();
        let e = check_cgroup(&live, fits + 1).unwrap_err().to_string();
        assert!(
            e.contains("does not fit under the memory cgroup's limit (256 MiB of 1 GiB used, /sys/fs/cgroup/job/memory.max)"),
            "{e}"
        );
        assert!(e.contains("kills the run"), "{e}");
        // No room at all: even one byte is refused, without underflow.
        let full = in_group(GIB, 2 * GIB);
        let live = LiveSystem::read_below(full.path()).unwrap();
        assert_eq!(cgroup_fits(&live.cgroup_memory().unwrap()), 0);
        assert!(check_cgroup(&live, 1).is_err());
        // Without a cgroup nothing is refused here (the nodes are checked
        // elsewhere).
        let none = crate::topology::testing::root_with(&[]);
        let live = LiveSystem::read_below(none.path()).unwrap();
        check_cgroup(&live, u64::MAX).unwrap();
    }

    #[test]
    fn an_explicit_buffer_past_the_cgroup_fails_its_check_before_mapping() {
        use crate::placement::{BufferSpec, MemPolicy, PageKind};
        let root = in_group(512 * MIB, 0);
        let live = LiveSystem::read_below(root.path()).unwrap();
        let node = live.mems_allowed[0];
        let big = BufferSpec::new(1 << 30, MemPolicy::Bind(node), PageKind::Small);
        for e in [
            big.check(&live, None).unwrap_err(),
            big.check_capacity(&live, None).unwrap_err(),
        ] {
            assert!(
                matches!(e, crate::placement::PlacementError::OverCgroup { requested, .. } if requested == GIB),
                "{e}"
            );
        }
        // hugetlbfs pages are not charged to the memory limit: the pool's
        // own check answers (no pool here).
        let huge = BufferSpec::new(1 << 30, MemPolicy::Bind(node), PageKind::Huge2M);
        assert!(!matches!(
            huge.check(&live, None),
            Err(crate::placement::PlacementError::OverCgroup { .. })
        ));
    }

    #[test]
    fn the_node_share_limits_without_a_cgroup() {
        let l = FootprintLimit::from_parts(100 * GIB, None);
        assert_eq!(l.limit_bytes, 12 * GIB);
        assert_eq!(l.limited_by, Limiter::NodeMemory);
        assert!(l.statement().contains("no memory cgroup limit"));
        assert!(l.statement().contains("12 % of the 100 GiB"));
    }

    #[test]
    fn a_tight_cgroup_wins_over_the_nodes() {
        // Slurm's --mem=2G with 512 MiB already used, on a 100 GiB node.
        let l = FootprintLimit::from_parts(100 * GIB, Some(cgroup(2 * GIB, 512 * MIB)));
        assert_eq!(l.limited_by, Limiter::Cgroup);
        assert_eq!(l.limit_bytes, 768 * MIB);
        let s = l.statement();
        assert!(s.contains("memory cgroup's limit"), "{s}");
        assert!(s.contains("/sys/fs/cgroup/job/memory.max"), "{s}");
        // A loose cgroup is stated but does not limit.
        let loose = FootprintLimit::from_parts(GIB, Some(cgroup(64 * GIB, 0)));
        assert_eq!(loose.limited_by, Limiter::NodeMemory);
        assert!(loose
            .statement()
            .contains("the memory cgroup leaves 64 GiB"));
    }

    #[test]
    fn a_cgroup_that_allows_exactly_the_node_share_is_not_the_limiter() {
        // 12 % of 100 GiB and 50 % of a 24 GiB room are both 12 GiB: the
        // nodes are named, the cgroup only stated.
        let l = FootprintLimit::from_parts(100 * GIB, Some(cgroup(24 * GIB, 0)));
        assert_eq!(l.limit_bytes, 12 * GIB);
        assert_eq!(l.limited_by, Limiter::NodeMemory);
        let under = FootprintLimit::from_parts(100 * GIB, Some(cgroup(24 * GIB - 2 * MIB, 0)));
        assert_eq!(under.limited_by, Limiter::Cgroup);
    }

    #[test]
    fn buffers_alive_at_once_share_the_limit_in_2mib_steps() {
        let l = FootprintLimit::from_parts(100 * GIB, Some(cgroup(GIB, 0)));
        assert_eq!(l.limit_bytes, 512 * MIB);
        // 512 MiB less the program's 16 MiB and 1/257 of the rest for page
        // tables: 494.07 MiB of buffers.
        assert_eq!(l.buffers_bytes(), 496 * MIB - 496 * MIB / 257);
        assert_eq!(l.per_buffer(128 * MIB, 1), 128 * MIB);
        assert!(!l.limits(128 * MIB, 3));
        assert_eq!(l.per_buffer(256 * MIB, 1), 256 * MIB);
        assert_eq!(l.per_buffer(256 * MIB, 2), 246 * MIB);
        assert!(l.limits(256 * MIB, 2));
        assert_eq!(l.per_buffer(256 * MIB, 3), 164 * MIB);
        // Count 0 is read as one buffer, not a division by zero.
        assert_eq!(l.per_buffer(GIB, 0), 494 * MIB);
        // Never below one 2 MiB step, even with no room at all.
        let none = FootprintLimit::from_parts(0, Some(cgroup(GIB, 2 * GIB)));
        assert_eq!(none.limit_bytes, 0);
        assert_eq!(none.per_buffer(256 * MIB, 4), 2 * MIB);
        assert_eq!(none.per_buffer(MIB, 4), MIB);
    }

    /// The ceiling holds the whole run: a buffer sized to all of it, with
    /// the program's own memory and the buffer's page tables beside it,
    /// stays under it, at every ceiling above what the program needs.
    #[test]
    fn the_buffers_leave_room_for_the_program_under_the_ceiling() {
        for limit in [
            64 * MIB,
            100 * MIB + 12345,
            GIB,
            2692 * MIB,
            (2692 * MIB) / 3,
            48 * GIB + 7,
        ] {
            let l = FootprintLimit::from_parts(u64::MAX, Some(cgroup(2 * limit, 0)));
            assert_eq!(l.limit_bytes, limit);
            let buffer = l.per_buffer(u64::MAX, 1);
            let page_tables = buffer / 512;
            assert!(
                buffer + PROGRAM_BYTES + page_tables <= limit,
                "{buffer} B of buffer at a ceiling of {limit} B"
            );
            // Not more than one 2 MiB step and the page tables' margin
            // below what fits.
            assert!(
                buffer + PROGRAM_BYTES + 2 * STEP + limit / 256 > limit,
                "{limit}"
            );
        }
        // A ceiling the program alone fills still gives the smallest buffer.
        let tiny = FootprintLimit::from_parts(u64::MAX, Some(cgroup(2 * PROGRAM_BYTES, 0)));
        assert_eq!(tiny.buffers_bytes(), 0);
        assert_eq!(tiny.per_buffer(GIB, 1), STEP);
    }

    /// Two nodes whose meminfo each claims the most bytes a kB figure can
    /// hold: the nodes' total saturates rather than wrapping to a tiny
    /// limit (or stopping a build with overflow checks on).
    #[test]
    fn hostile_node_totals_saturate_instead_of_wrapping() {
        let huge = format!(
            "Node 0 MemTotal: {0} kB\nNode 0 MemFree: {0} kB\n",
            u64::MAX / 1024
        );
        let root = crate::topology::testing::root_with(&[
            ("sys/devices/system/node/online", "0-1\n"),
            ("sys/devices/system/node/node0/meminfo", &huge),
            (
                "sys/devices/system/node/node1/meminfo",
                &huge.replace("Node 0", "Node 1"),
            ),
        ]);
        let mut live = LiveSystem::read_below(root.path()).unwrap();
        live.mems_allowed = vec![0, 1];
        let one = live.allocatable_bytes(0).unwrap();
        assert!(one > u64::MAX / 2, "{one}");
        let l = FootprintLimit::live(&live);
        assert_eq!(l.nodes_allocatable_bytes, u64::MAX);
        assert_eq!(l.limit_bytes, percent_of(u64::MAX, NODE_SHARE_PERCENT));
    }

    #[test]
    fn the_live_limit_is_remembered_and_within_the_nodes() {
        let live = LiveSystem::read().unwrap();
        let l = FootprintLimit::live(&live);
        assert!(l.limit_bytes <= l.nodes_allocatable_bytes);
        assert!(last().is_some());
    }
}
