//! The topology as a result document: `TopoReport` (the `numaprobe topo
//! --format json` contract, documented in doc/json.md's `json-topo` section;
//! change its keys only together with `SCHEMA`) and the per-package summary
//! both it and the renderers use. Derived from the `Topology`; nothing here
//! reads the machine.

use crate::topology::clusters::{capacity_classes, clusters, Cluster};
use crate::topology::{
    Allowed, Cache, Cpu, Distances, HmatAccess, MemorySideCache, MemoryTier, NumaNode, Numbering,
    PciDevice, Topology,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// A package as the kernel's package masks group the CPUs: the "placement
/// on packages" view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageSummary {
    /// The package's key, unique per package (`cpus[].package`): the
    /// firmware id where those are known and distinct, else the package's
    /// position in order of its lowest CPU.
    pub id: Option<i64>,
    /// `physical_package_id` of its first CPU as the firmware gives it (hwloc's
    /// `P#`): None where it is -1 or missing; may repeat across packages.
    #[serde(default)]
    pub os_index: Option<i64>,
    /// Online CPUs, ascending.
    pub cpus: Vec<u32>,
    /// Number of physical cores with an online CPU.
    pub cores: u32,
    /// Nodes holding these CPUs, ascending.
    pub nodes: Vec<u32>,
}

/// CPUs of one `cpu_capacity` (1024 = the biggest core).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapacityClass {
    pub capacity: u32,
    pub cpus: Vec<u32>,
}

/// The `numaprobe topo --format json` document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopoReport {
    pub schema: String,
    pub root: PathBuf,
    pub cpus: Vec<Cpu>,
    pub packages: Vec<PackageSummary>,
    /// Derived: clusters of several cores (arm64 PPTT), empty where every
    /// cluster is one core or the kernel lists none.
    #[serde(default)]
    pub clusters: Vec<Cluster>,
    /// Derived: online CPUs per `cpu_capacity`, biggest first; empty on a
    /// homogeneous machine (the heterogeneous-core finding).
    #[serde(default)]
    pub capacities: Vec<CapacityClass>,
    /// The model's `nodes`, under the contract's name.
    pub numa_nodes: Vec<NumaNode>,
    pub distances: Option<Distances>,
    pub caches: Vec<Cache>,
    #[serde(default)]
    pub memory_side_caches: Vec<MemorySideCache>,
    #[serde(default)]
    pub cpu_model: Option<String>,
    pub hmat: Vec<HmatAccess>,
    pub memory_tiers: Vec<MemoryTier>,
    pub pci_devices: Vec<PciDevice>,
    pub thp_mode: Option<String>,
    pub allowed: Allowed,
    pub numbering: Numbering,
    pub warnings: Vec<String>,
}

impl TopoReport {
    pub fn new(t: &Topology) -> Self {
        TopoReport {
            schema: crate::SCHEMA.to_string(),
            root: t.root.clone(),
            cpus: t.cpus.clone(),
            packages: packages(t),
            clusters: clusters(t),
            capacities: capacity_classes(t)
                .into_iter()
                .map(|(capacity, cpus)| CapacityClass { capacity, cpus })
                .collect(),
            numa_nodes: t.nodes.clone(),
            distances: t.distances.clone(),
            caches: t.caches.clone(),
            memory_side_caches: t.memory_side_caches.clone(),
            cpu_model: t.cpu_model.clone(),
            hmat: t.hmat.clone(),
            memory_tiers: t.memory_tiers.clone(),
            pci_devices: t.pci_devices.clone(),
            thp_mode: t.thp_mode.clone(),
            allowed: t.allowed.clone(),
            numbering: t.numbering.clone(),
            warnings: t.warnings.clone(),
        }
    }

    /// Back to the model, e.g. to analyse a topology saved on another machine.
    pub fn into_topology(self) -> Topology {
        Topology {
            root: self.root,
            cpus: self.cpus,
            nodes: self.numa_nodes,
            distances: self.distances,
            caches: self.caches,
            memory_side_caches: self.memory_side_caches,
            cpu_model: self.cpu_model,
            hmat: self.hmat,
            memory_tiers: self.memory_tiers,
            pci_devices: self.pci_devices,
            thp_mode: self.thp_mode,
            allowed: self.allowed,
            numbering: self.numbering,
            warnings: self.warnings,
        }
    }
}

/// CPUs, core keys, nodes and the first CPU's firmware id gathered per
/// package key.
type PackageAcc = (
    Vec<u32>,
    BTreeSet<(Option<i64>, Option<i64>, Option<i64>, u32)>,
    BTreeSet<u32>,
    Option<i64>,
);

/// Packages in order of their lowest online CPU.
pub fn packages(t: &Topology) -> Vec<PackageSummary> {
    let mut order: Vec<Option<i64>> = Vec::new();
    let mut by: BTreeMap<Option<i64>, PackageAcc> = BTreeMap::new();
    for c in t.cpus.iter().filter(|c| c.online) {
        let e = by.entry(c.package).or_insert_with(|| {
            order.push(c.package);
            (
                Vec::new(),
                BTreeSet::new(),
                BTreeSet::new(),
                c.package_id.filter(|&v| v >= 0),
            )
        });
        e.0.push(c.os_index);
        e.1.insert(t.core_key(c));
        if let Some(n) = c.node {
            e.2.insert(n);
        }
    }
    order
        .into_iter()
        .filter_map(|p| {
            by.remove(&p)
                .map(|(cpus, cores, nodes, os_index)| PackageSummary {
                    id: p,
                    os_index,
                    cpus,
                    cores: cores.len() as u32,
                    nodes: nodes.into_iter().collect(),
                })
        })
        .collect()
}
