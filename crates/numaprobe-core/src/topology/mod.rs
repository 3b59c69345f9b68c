//! The typed model of a machine's topology and the queries everyone else uses.
//!
//! The model is filled by `sysfs::read` from a root path (a live `/` or an
//! unpacked dump), never from absolute system paths, so every machine in
//! `tests/fixtures/sysfs` reads exactly like the one we run on. The serde form of
//! these types is the `cpus` / `numa_nodes` / `distances` part of the JSON
//! contract documented in doc/json.md: rename nothing without bumping `SCHEMA`.

mod caches;
mod cgroup;
pub mod clusters;
pub mod cpulist;
mod extras;
mod fs;
pub mod midr;
mod nodes;
pub mod numbering;
mod overlaps;
mod packages;
pub mod sysfs;
#[cfg(test)]
pub(crate) mod testing;

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::PathBuf;

pub use cgroup::{memory_limit, CgroupMemory};
pub use fs::TopologyError;
pub use sysfs::read;

/// One logical processor (a "PU" in hwloc's words).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cpu {
    /// The kernel's CPU number (`cpuN`).
    pub os_index: u32,
    pub online: bool,
    /// Online and inside this process's affinity mask and cpuset.
    pub allowed: bool,
    /// The package this CPU belongs to, a key unique per package. Packages
    /// are the kernel's package masks (`package_cpus` / `core_siblings`), as
    /// hwloc builds them; the key is their `physical_package_id` where those
    /// ids are distinct and known (>= 0) for every package, else the
    /// package's position (0, 1, ... in order of its lowest online CPU) for
    /// every package. None for an offline CPU, or a CPU no package mask
    /// claims (contradictory masks; see `warnings`).
    pub package: Option<i64>,
    /// `physical_package_id` as sysfs gives it (may be -1, sparse, e.g. 36,
    /// or repeated across packages): a label only.
    #[serde(default)]
    pub package_id: Option<i64>,
    pub die: Option<i64>,
    /// `cluster_id` where the kernel has a real one (arm64: the PPTT's
    /// cluster, a group of cores sharing an L2/L3 slice or a DSU).
    #[serde(default)]
    pub cluster: Option<i64>,
    /// Online CPUs of this CPU's cluster (`cluster_cpus_list`), itself
    /// included, ascending; empty where the kernel has no cluster files.
    #[serde(default)]
    pub cluster_cpus: Vec<u32>,
    /// `cpu_capacity` (arm64, and x86 hybrids on recent kernels): the
    /// CPU's relative compute capacity, 1024 for the biggest core; None
    /// where the kernel does not say.
    #[serde(default)]
    pub capacity: Option<u32>,
    /// `core_id` as sysfs gives it: unique only within a package (and die).
    pub core: Option<i64>,
    pub node: Option<u32>,
    /// Online CPUs sharing this CPU's core, itself included, ascending.
    pub smt_siblings: Vec<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HugePages {
    pub size_bytes: u64,
    pub total: u64,
    pub free: u64,
}

/// A NUMA node: a memory node, possibly with CPUs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NumaNode {
    pub os_index: u32,
    /// Online CPUs of this node, ascending; empty for a memory-only node.
    pub cpus: Vec<u32>,
    pub memory_bytes: u64,
    pub free_bytes: u64,
    /// Inside the process's allowed memory nodes (cgroup cpuset `mems`).
    pub allowed: bool,
    pub hugepages: Vec<HugePages>,
}

/// The firmware's distance table (ACPI SLIT as the kernel shows it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Distances {
    pub node_ids: Vec<u32>,
    /// `matrix[a][b]`: distance from `node_ids[a]` to `node_ids[b]`.
    pub matrix: Vec<Vec<u32>>,
}

impl Distances {
    pub fn get(&self, from: u32, to: u32) -> Option<u32> {
        let a = self.node_ids.iter().position(|&n| n == from)?;
        let b = self.node_ids.iter().position(|&n| n == to)?;
        self.matrix.get(a)?.get(b).copied()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cache {
    pub level: u32,
    /// `Data`, `Instruction` or `Unified`.
    #[serde(rename = "type")]
    pub kind: String,
    pub size_bytes: Option<u64>,
    pub line_size: Option<u32>,
    /// Online CPUs sharing this cache instance, ascending.
    pub cpus: Vec<u32>,
}

/// A memory-side cache in front of a node's memory (Optane memory mode,
/// `nodeN/memory_side_cache/indexK`): DRAM caching slower memory, so a
/// latency or bandwidth measured on that node is the cache's while the
/// buffer fits in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemorySideCache {
    /// The memory node it caches.
    pub node: u32,
    /// `K` of `indexK`: 1 is the cache nearest to the CPUs.
    pub level: u32,
    pub size_bytes: Option<u64>,
    pub line_size: Option<u64>,
    /// `direct-mapped`, `indexed`, `other` (the kernel's 0, 1, 2), or
    /// `unknown` when the file is missing or empty.
    pub indexing: String,
    /// `write-back`, `write-through`, `other` (the kernel's 0, 1, 2), or
    /// `unknown`.
    pub write_policy: String,
}

/// HMAT access attributes of one memory node (`nodeN/accessK/initiators`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HmatAccess {
    pub node: u32,
    /// Access class: 0 = any initiator, 1 = CPU initiators only.
    pub access_class: u32,
    /// Nodes listed as initiators for this class.
    pub initiators: Vec<u32>,
    pub read_latency_ns: Option<u64>,
    pub write_latency_ns: Option<u64>,
    /// MB/s as the kernel reports it.
    pub read_bandwidth_mbps: Option<u64>,
    pub write_bandwidth_mbps: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryTier {
    pub id: u32,
    pub nodes: Vec<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PciDevice {
    /// `domain:bus:device.function`.
    pub address: String,
    /// `gpu`, `network`, `nvme`, `storage`, `accelerator` or `other`, from the
    /// PCI class.
    pub kind: String,
    pub class: String,
    pub vendor: Option<String>,
    pub device: Option<String>,
    /// None where the kernel says -1 (no locality known).
    pub numa_node: Option<u32>,
}

/// What this process may use, and where that was learnt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Allowed {
    pub cpus: Vec<u32>,
    pub nodes: Vec<u32>,
    /// e.g. `sched_getaffinity`, `cgroup2:/sys/fs/cgroup/x/cpuset.cpus.effective`.
    pub sources: Vec<String>,
}

/// How the kernel numbered the CPUs: the RWTH Aachen blog shows two 2-socket machines where
/// CPU 0 and CPU 1 share a package on one and not on the other.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Numbering {
    /// `consecutive` (a package's CPUs are numbered together), `round-robin`
    /// (consecutive numbers alternate packages), `mixed`, or `single-package`.
    pub packages: String,
    /// `adjacent` (siblings have neighbouring numbers), `far` (siblings are
    /// `stride` apart), `none` (no SMT) or `mixed`.
    pub smt: String,
    pub smt_stride: Option<u32>,
    /// One sentence a person can read.
    pub summary: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topology {
    /// The root the description was read from (`/` on the live machine).
    pub root: PathBuf,
    /// Every possible CPU, ascending by `os_index`.
    pub cpus: Vec<Cpu>,
    /// Every online node, ascending by `os_index`.
    pub nodes: Vec<NumaNode>,
    pub distances: Option<Distances>,
    pub caches: Vec<Cache>,
    /// Memory-side caches, by node then level.
    #[serde(default)]
    pub memory_side_caches: Vec<MemorySideCache>,
    /// `model name` from `/proc/cpuinfo` below the root (distinct names
    /// joined by ` / `); on Arm, which has no model name, the cores named
    /// from their MIDR ([`midr`]); None where neither is readable.
    #[serde(default)]
    pub cpu_model: Option<String>,
    pub hmat: Vec<HmatAccess>,
    pub memory_tiers: Vec<MemoryTier>,
    pub pci_devices: Vec<PciDevice>,
    /// `always`, `madvise`, `never`, or None where the kernel has no THP.
    pub thp_mode: Option<String>,
    pub allowed: Allowed,
    pub numbering: Numbering,
    /// Things that were odd but readable (with the fallback used).
    pub warnings: Vec<String>,
}

impl Topology {
    /// The nodes' memory added up; `None` when the figures pass a 64-bit
    /// byte count (a forged document: the reader refuses such a figure), so
    /// no total is ever a wrapped number.
    pub fn total_memory(&self) -> Option<u64> {
        self.nodes
            .iter()
            .try_fold(0u64, |a, n| a.checked_add(n.memory_bytes))
    }

    pub fn cpu(&self, os_index: u32) -> Option<&Cpu> {
        self.cpus.iter().find(|c| c.os_index == os_index)
    }

    pub fn node(&self, os_index: u32) -> Option<&NumaNode> {
        self.nodes.iter().find(|n| n.os_index == os_index)
    }

    pub fn node_ids(&self) -> Vec<u32> {
        self.nodes.iter().map(|n| n.os_index).collect()
    }

    /// Nodes with at least one allowed CPU: the ones a thread can run on.
    pub fn allowed_cpu_nodes(&self) -> Vec<u32> {
        self.nodes
            .iter()
            .filter(|n| !self.allowed_cpus_of_node(n.os_index).is_empty())
            .map(|n| n.os_index)
            .collect()
    }

    /// Allowed memory nodes (CPU-less ones included).
    pub fn allowed_mem_nodes(&self) -> Vec<u32> {
        self.nodes
            .iter()
            .filter(|n| n.allowed)
            .map(|n| n.os_index)
            .collect()
    }

    /// Allowed, online CPUs of node `node`, ascending.
    pub fn allowed_cpus_of_node(&self, node: u32) -> Vec<u32> {
        self.cpus
            .iter()
            .filter(|c| c.allowed && c.node == Some(node))
            .map(|c| c.os_index)
            .collect()
    }

    /// One allowed CPU per physical core of `node` (the lowest-numbered allowed
    /// sibling), ascending: what "one thread per core" means on this node.
    pub fn allowed_core_cpus_of_node(&self, node: u32) -> Vec<u32> {
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for c in self
            .cpus
            .iter()
            .filter(|c| c.allowed && c.node == Some(node))
        {
            if seen.insert(self.core_key(c)) {
                out.push(c.os_index);
            }
        }
        out
    }

    /// A key unique per physical core on the machine: core ids repeat across
    /// packages (and dies), some kernels leave them unset, and some repeat
    /// them within a package; the SMT sibling set (read from the kernel's
    /// per-core masks) identifies the core in every case, the ids only order.
    pub fn core_key(&self, cpu: &Cpu) -> (Option<i64>, Option<i64>, Option<i64>, u32) {
        (
            cpu.package,
            cpu.die,
            cpu.core,
            cpu.smt_siblings.first().copied().unwrap_or(cpu.os_index),
        )
    }

    /// Largest cache size seen at the highest cache level (the LLC), if known.
    pub fn llc_bytes(&self) -> Option<u64> {
        let top = self.caches.iter().map(|c| c.level).max()?;
        self.caches
            .iter()
            .filter(|c| c.level == top)
            .filter_map(|c| c.size_bytes)
            .max()
    }

    /// The memory-side caches in front of `node`'s memory, nearest first;
    /// empty when there is none. A latency or bandwidth cell whose memory is
    /// on such a node measures the cache while the buffer fits in it (and
    /// the far memory beyond), so a matrix can say so next to the cell.
    pub fn memory_side_cache(&self, node: u32) -> Vec<&MemorySideCache> {
        let mut v: Vec<&MemorySideCache> = self
            .memory_side_caches
            .iter()
            .filter(|c| c.node == node)
            .collect();
        v.sort_by_key(|c| c.level);
        v
    }

    pub fn distance(&self, from: u32, to: u32) -> Option<u32> {
        self.distances.as_ref()?.get(from, to)
    }
}
