//! Clusters and core capacities: the arm64 levels between a core and its
//! package (the PPTT's clusters, `cluster_cpus_list`) and heterogeneous
//! cores (`cpu_capacity`: big.LITTLE, DynamIQ, x86 hybrids). Queries only;
//! `sysfs` fills the per-CPU fields these read.

use super::{Cpu, Topology};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// One cluster: the online CPUs the kernel groups under one `cluster_id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cluster {
    /// `cluster_id` as sysfs gives it (unique only within a package).
    pub id: i64,
    pub package: Option<i64>,
    /// Online CPUs, ascending.
    pub cpus: Vec<u32>,
    /// Physical cores with a CPU in the cluster.
    pub cores: usize,
    /// Distinct `cpu_capacity` values of its CPUs, ascending.
    pub capacities: Vec<u32>,
}

/// The online CPUs of `c`'s cluster: the kernel's list where it gave one,
/// else the CPUs with the same cluster id in the same package. Empty when
/// the CPU has no cluster.
pub fn cluster_members(t: &Topology, c: &Cpu) -> Vec<u32> {
    if !c.cluster_cpus.is_empty() {
        return c.cluster_cpus.clone();
    }
    if c.cluster.is_none() {
        return Vec::new();
    }
    t.cpus
        .iter()
        .filter(|o| o.online && o.cluster == c.cluster && o.package == c.package)
        .map(|o| o.os_index)
        .collect()
}

/// Every cluster, in order of its lowest CPU; empty unless some cluster
/// holds more than one core (a cluster per core, as x86 kernels and
/// arm64 machines without PPTT clusters report, says nothing new) and
/// some cluster is smaller than its package.
pub fn clusters(t: &Topology) -> Vec<Cluster> {
    let mut by_set: BTreeMap<Vec<u32>, (i64, Option<i64>)> = BTreeMap::new();
    for c in t.cpus.iter().filter(|c| c.online) {
        let Some(id) = c.cluster else { continue };
        let m = cluster_members(t, c);
        if !m.is_empty() {
            by_set.entry(m).or_insert((id, c.package));
        }
    }
    let out: Vec<Cluster> = by_set
        .into_iter()
        .map(|(cpus, (id, package))| {
            let members: Vec<&Cpu> = cpus.iter().filter_map(|&x| t.cpu(x)).collect();
            let cores: BTreeSet<_> = members.iter().map(|c| t.core_key(c)).collect();
            let capacities: BTreeSet<u32> = members.iter().filter_map(|c| c.capacity).collect();
            Cluster {
                id,
                package,
                cpus,
                cores: cores.len(),
                capacities: capacities.into_iter().collect(),
            }
        })
        .collect();
    // A cluster as large as its package (QEMU's devicetree, firmware that
    // puts every core of a socket in one cluster) says nothing new either.
    let pkg_size = |p: Option<i64>| t.cpus.iter().filter(|c| c.online && c.package == p).count();
    if out.iter().any(|c| c.cores > 1) && out.iter().any(|c| c.cpus.len() < pkg_size(c.package)) {
        out
    } else {
        Vec::new()
    }
}

/// The online CPUs per `cpu_capacity`, biggest first; empty when every CPU
/// has the same capacity or none is known (a homogeneous machine).
pub fn capacity_classes(t: &Topology) -> Vec<(u32, Vec<u32>)> {
    let mut by: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for c in t.cpus.iter().filter(|c| c.online) {
        if let Some(cap) = c.capacity {
            by.entry(cap).or_default().push(c.os_index);
        }
    }
    if by.len() < 2 {
        return Vec::new();
    }
    by.into_iter().rev().collect()
}

/// `big.LITTLE / heterogeneous: capacities 1024 (cpus 4-7), 446 (cpus
/// 0-3)`, or None on a homogeneous machine.
pub fn heterogeneity(t: &Topology) -> Option<String> {
    let classes = capacity_classes(t);
    if classes.is_empty() {
        return None;
    }
    let parts: Vec<String> = classes
        .iter()
        .map(|(cap, cpus)| format!("{cap} (cpus {})", super::cpulist::format_list(cpus)))
        .collect();
    Some(format!(
        "big.LITTLE / heterogeneous: capacities {} (1024 = the fastest core; threads on smaller cores run slower, so bind measurements and latency-critical work to one class)",
        parts.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::testing::{build, CpuSpec};

    /// 8 CPUs in one package: clusters {0,2,4,6} (LITTLE) and {1,3,5,7}.
    fn dynamiq() -> Topology {
        let specs: Vec<CpuSpec> = (0..8).map(|i| CpuSpec::new(i, 0, i as i64, 0)).collect();
        let mut t = build("/", &specs, &[], None);
        for c in &mut t.cpus {
            c.cluster = Some(i64::from(c.os_index % 2));
            c.capacity = Some(if c.os_index % 2 == 0 { 446 } else { 1024 });
        }
        t
    }

    #[test]
    fn clusters_by_id_within_a_package_and_capacities_big_first() {
        let t = dynamiq();
        let cl = clusters(&t);
        assert_eq!(cl.len(), 2);
        assert_eq!(cl[0].cpus, [0, 2, 4, 6]);
        assert_eq!(cl[0].cores, 4);
        assert_eq!(cl[0].capacities, [446]);
        assert_eq!(cl[1].cpus, [1, 3, 5, 7]);
        assert_eq!(
            capacity_classes(&t),
            vec![(1024, vec![1, 3, 5, 7]), (446, vec![0, 2, 4, 6])]
        );
        assert!(heterogeneity(&t).unwrap().starts_with(
            "big.LITTLE / heterogeneous: capacities 1024 (cpus 1,3,5,7), 446 (cpus 0,2,4,6)"
        ));
    }

    #[test]
    fn one_core_clusters_and_equal_capacities_say_nothing() {
        let mut t = dynamiq();
        for c in &mut t.cpus {
            c.cluster = Some(i64::from(c.os_index));
            c.capacity = Some(1024);
        }
        assert!(clusters(&t).is_empty());
        assert!(capacity_classes(&t).is_empty());
        for c in &mut t.cpus {
            c.cluster = Some(0);
        }
        assert!(
            clusters(&t).is_empty(),
            "one cluster as large as the package"
        );
        assert!(heterogeneity(&t).is_none());
    }
}
