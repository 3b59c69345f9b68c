//! Pinning threads (checked with `sched_getcpu`) and NUMA-bound buffers
//! (placed with `mbind`, verified with `move_pages`).
//!
//! This is the layer every measurement stands on; its rule (DESIGN.md) is that
//! nothing is assumed: a pin is checked by asking the kernel where the thread
//! runs, and a buffer is checked by asking the kernel where each page lives.
//!
//! The API, in the order a measurement uses it:
//!
//! ```no_run
//! use numaprobe_core::placement::{pin_current_thread, NodeBuffer, BufferSpec, MemPolicy, PageKind};
//! # fn main() -> Result<(), numaprobe_core::placement::PlacementError> {
//! // 1. pin the thread that will touch (and later time) the memory
//! let cpu = pin_current_thread(&[0])?;            // returns the CPU observed
//! // 2. map 64 MiB bound strictly to node 0; nothing is allocated yet
//! let spec = BufferSpec::new(64 << 20, MemPolicy::Bind(0), PageKind::Small);
//! let mut buf = NodeBuffer::alloc(&spec)?;        // checks nodes/size first
//! // 3. fault every page in from this (pinned) thread
//! buf.touch();
//! // 4. ask the kernel where the pages are
//! let check = buf.verify()?;
//! assert!(check.fraction_on_intended >= 0.99);
//! # let _ = cpu; Ok(()) }
//! ```
//!
//! `NodeBuffer::alloc_on_cpu(cpu, &spec)` does 1-3 on a short-lived thread
//! pinned to `cpu` (what first touch "from CPU c" means), and hands the buffer
//! back to the caller.
//!
//! Everything here acts on the live machine (it can only ever place memory on
//! the machine we run on), so the few sysfs files it reads (`live.rs`) are read
//! below `/`, not below a `--sysfs-root` dump.

pub mod binding;
mod buffer;
pub mod footprint;
mod ledger;
mod live;
pub mod memory;
pub mod mempolicy;
pub mod numa_maps;
mod pin;
mod spec;

pub use buffer::{NodeBuffer, PlacementCheck, PLACEMENT_THRESHOLD};
pub use footprint::FootprintLimit;
pub use ledger::MemoryLedger;
pub use live::LiveSystem;
pub use memory::{footprint, NodeMemory};
pub use mempolicy::{weighted_interleave_weights, TaskPolicy};
pub use pin::{
    allowed_cpus, current_affinity, current_cpu, current_cpu_and_node, pin_current_thread,
    set_current_affinity,
};
pub use spec::{BufferSpec, MemPolicy, PageKind};

use crate::units::{format_list, format_size};

/// A placement that could not be made or could not be checked. Every variant
/// that concerns a user choice names the allowed or available alternative.
#[derive(Debug, thiserror::Error)]
pub enum PlacementError {
    #[error("empty CPU set: a thread must be pinned to at least one CPU")]
    EmptyCpuSet,
    #[error("CPU {cpu} is not allowed for this process (allowed CPUs: {})", format_list(.allowed))]
    CpuNotAllowed { cpu: u32, allowed: Vec<u32> },
    #[error("node {node} does not exist (online nodes: {})", format_list(.online))]
    NoSuchNode { node: u32, online: Vec<u32> },
    #[error("memory node {node} is not allowed for this process (allowed memory nodes: {})", format_list(.allowed))]
    NodeNotAllowed { node: u32, allowed: Vec<u32> },
    #[error("node {node} has no allowed CPUs, so no thread can run on it (nodes with allowed CPUs: {})", format_list(.cpu_nodes))]
    CpuLessNode { node: u32, cpu_nodes: Vec<u32> },
    #[error("an interleave policy needs at least one node")]
    EmptyNodeSet,
    #[error("a buffer of 0 bytes cannot be placed")]
    ZeroSize,
    #[error("{} does not fit in node {node}'s allocatable memory ({} now)", format_size(*.requested), format_size(*.available))]
    TooLarge {
        node: u32,
        requested: u64,
        available: u64,
    },
    #[error("{} does not fit in node {node} even when nothing else uses it: at most {} of its memory can be allocated above the kernel's watermarks and reserves", format_size(*.requested), format_size(*.capacity))]
    NeverFits {
        node: u32,
        requested: u64,
        capacity: u64,
    },
    #[error("{} does not fit under the memory cgroup's limit ({}, {}): at most {} of buffers does; past the limit the kernel reclaims the group's memory and then kills the run (ask for less, or run with a higher memory limit)", format_size(*.requested), .cgroup.usage_text(), .cgroup.path, format_size(*.fits))]
    OverCgroup {
        requested: u64,
        fits: u64,
        cgroup: Box<crate::topology::CgroupMemory>,
    },
    #[error("node {node} cannot hold {what}: {} in total, {} allocatable now", format_size(*.requested), format_size(*.available))]
    TooLargeTogether {
        node: u32,
        what: String,
        requested: u64,
        available: u64,
    },
    #[error("node {node} has {free} free {} huge pages, {needed} are needed for {}; reserve them with `echo N > /sys/devices/system/node/node{node}/hugepages/hugepages-{}kB/nr_hugepages`", format_size(*.page_size), format_size(*.requested), .page_size / 1024)]
    NotEnoughHugePages {
        node: u32,
        page_size: u64,
        free: u64,
        needed: u64,
        requested: u64,
    },
    #[error("transparent huge pages are off on this kernel (transparent_hugepage/enabled is `never`); use 4k, 2m or 1g pages")]
    ThpUnavailable,
    #[error("node {node} is too large for the node masks numaprobe passes to the kernel (limit {limit})")]
    NodeTooLarge { node: u32, limit: u32 },
    #[error("asked to run on CPUs {} but the kernel reports CPU {observed}", format_list(.wanted))]
    PinNotHonoured { wanted: Vec<u32>, observed: u32 },
    #[error("{call} failed: {source}")]
    Sys {
        call: &'static str,
        source: std::io::Error,
    },
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Overflow {
        path: String,
        source: memory::Overflow,
    },
    #[error("the thread placing the buffer panicked")]
    PlacerPanicked,
    #[error("interrupted while the buffer was being set up")]
    Interrupted,
    #[error("the buffer's set-up ran out of time after touching {} of {}", format_size(*.touched), format_size(*.bytes))]
    Late { touched: u64, bytes: u64 },
}

impl PlacementError {
    /// A figure of the file at `path` that overflows, as an error naming it
    /// (cleaned: a root path may hold anything).
    fn overflow(path: &std::path::Path, source: memory::Overflow) -> Self {
        PlacementError::Overflow {
            path: crate::clean::line(&path.display().to_string(), crate::clean::SHOWN_MAX),
            source,
        }
    }
    fn last_os(call: &'static str) -> Self {
        PlacementError::Sys {
            call,
            source: std::io::Error::last_os_error(),
        }
    }
}
