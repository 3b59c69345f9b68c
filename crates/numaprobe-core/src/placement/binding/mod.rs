//! Portable thread binding: compact, scatter and balanced placements computed
//! from the topology (packages, nodes, cores, SMT siblings), never from CPU
//! numbers, so one strategy gives equivalent placements on machines that
//! number their CPUs differently (the Sun and HP boxes of the RWTH Aachen blog on an 8-socket
//! Nehalem-EX).
//!
//! The machine is a tree: the larger of {package, node} domains on top (a
//! package holding two nodes, or a node holding several packages), the
//! smaller below it, then the cache domains inside them (an L3 instance,
//! then a cluster where the kernel lists one (arm64's PPTT clusters, whose
//! cores often keep private L2s), then an L2 instance: a Bulldozer compute
//! unit's two cores share an L2 and an FPU, a Skylake-SP tile shares an L2
//! too), then cores, then hardware threads. A level where every domain
//! holds one core changes nothing. Only allowed CPUs (online, in the
//! affinity mask and cpuset, on `--nodes`) are in the tree.
//!
//! * scatter: every domain at every level gets a thread before any gets a
//!   second one: threads are ordered by (SMT rank, then the position of
//!   their core in its L2 domain, of that domain in its L3, of the L3 in
//!   its node or package, ..., the top domain), the reverse-lexicographic
//!   order of the tree, which is round-robin at every level on a regular
//!   machine and still never doubles up in one domain while a domain of
//!   the same kind is unused on an irregular one (hwloc-distrib spreads the
//!   same way);
//! * compact: depth first, filling an L2 domain, then its L3, then a
//!   package's cores before the next;
//! * balanced: threads split as evenly as capacity allows over the top
//!   domains, then the next level, each share placed compactly, so thread
//!   numbers that are close sit close.
//!
//! Hardware threads: first every core's first thread (layer 0), then the
//! second threads, and so on, so no two threads share a core while a free
//! core remains. `Smt::Use` lets compact put a core's threads next to each
//! other instead (KMP_AFFINITY=compact style); past the number of cores
//! `Smt::Avoid` falls back to sharing cores, with a warning.
//!
//! This file holds the request and its answer and the `bind` entry points
//! (re-exported from `bind.rs`); `tree.rs` builds the tree of domains,
//! `naive.rs` says what `taskset -c 0-(N-1)` would get wrong.

mod bind;
mod naive;
mod tree;

pub use bind::{bind, core_order};

use crate::topology::Topology;
use std::collections::BTreeSet;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    Compact,
    Scatter,
    Balanced,
}

impl Strategy {
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Compact => "compact",
            Strategy::Scatter => "scatter",
            Strategy::Balanced => "balanced",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Smt {
    Use,
    Avoid,
}

impl Smt {
    pub fn as_str(self) -> &'static str {
        match self {
            Smt::Use => "use",
            Smt::Avoid => "avoid",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub threads: usize,
    pub strategy: Strategy,
    pub smt: Smt,
    /// Restrict to these nodes' CPUs (None: every allowed CPU).
    pub nodes: Option<Vec<u32>>,
}

impl Request {
    /// The main job's binding: one thread per allowed core (of `nodes`,
    /// else of every node), scattered over packages and nodes first, the
    /// placement a bandwidth-bound parallel job wants (at least one
    /// thread). `threads` and
    /// `strategy` replace its own when given.
    pub fn main_job(
        topo: &Topology,
        nodes: Option<Vec<u32>>,
        threads: Option<usize>,
        strategy: Option<Strategy>,
    ) -> Request {
        let threads = threads.unwrap_or_else(|| {
            topo.allowed_cpu_nodes()
                .iter()
                .filter(|n| nodes.as_ref().is_none_or(|l| l.contains(n)))
                .map(|&n| topo.allowed_core_cpus_of_node(n).len())
                .sum::<usize>()
                // None: one thread, so that binding says why (a node that
                // does not exist or has no allowed CPU).
                .max(1)
        });
        Request {
            threads,
            strategy: strategy.unwrap_or(Strategy::Scatter),
            smt: Smt::Avoid,
            nodes,
        }
    }
}

/// Where one thread goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub thread: usize,
    pub cpu: u32,
    pub package: Option<i64>,
    pub node: Option<u32>,
    /// `core_id` as sysfs gives it (unique within a package).
    pub core: Option<i64>,
    /// 0 for a core's first allowed hardware thread, 1 for the second, ...
    pub smt_rank: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    pub places: Vec<Place>,
    /// What the naive "first N CPU numbers" would have been.
    pub naive_cpus: Vec<u32>,
    /// Why the naive choice is worse, one line each (empty when it is the
    /// same set of CPUs).
    pub naive_problems: Vec<String>,
    pub warnings: Vec<String>,
    /// Nodes for `--membind`: the threads' nodes whose memory this process
    /// may use (cgroup `mems`).
    pub mem_nodes: Vec<u32>,
}

impl Binding {
    pub fn cpus(&self) -> Vec<u32> {
        self.places.iter().map(|p| p.cpu).collect()
    }
    pub fn nodes(&self) -> Vec<u32> {
        let s: BTreeSet<u32> = self.places.iter().filter_map(|p| p.node).collect();
        s.into_iter().collect()
    }
    pub fn packages(&self) -> Vec<i64> {
        let s: BTreeSet<i64> = self.places.iter().filter_map(|p| p.package).collect();
        s.into_iter().collect()
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BindError {
    #[error("--threads 0: at least one thread is needed")]
    ZeroThreads,
    #[error("node {node} does not exist (nodes: {known})")]
    UnknownNode { node: u32, known: String },
    #[error(
        "node {node} has no CPU this process may use (a memory-only node, or outside the cpuset)"
    )]
    NodeWithoutCpus { node: u32 },
    #[error("no CPU this process may use{scope}")]
    NoCpus { scope: String },
    #[error("--threads {threads}: only {cpus} CPUs are allowed{scope} (online, in the affinity mask and cpuset)")]
    TooManyThreads {
        threads: usize,
        cpus: usize,
        scope: String,
    },
}

/// `0-3,8,10-11`: the kernel's cpulist form, sorted; empty is empty (see
/// `topology::cpulist::format_ranges`).
pub fn cpulist(cpus: &[u32]) -> String {
    crate::topology::cpulist::format_ranges(cpus, "")
}

#[cfg(test)]
mod tests;
