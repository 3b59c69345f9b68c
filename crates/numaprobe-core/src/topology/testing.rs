//! Synthetic `Topology` values for unit tests: the one place that fills the
//! whole model by hand. Tests describe CPUs (os index, package, core, node,
//! allowed) and nodes (memory, allowed) plus an optional SLIT; this module
//! derives SMT siblings (CPUs sharing a package and core), node CPU lists, the
//! `allowed` summary and `numbering` (through the real
//! [`numbering::classify`](super::numbering::classify)), so no test repeats
//! the `Topology { .. }` literal. Also: a throw-away root folder of files
//! ([`root_with`]) for readers of `/proc` and `/sys` below a root.

use super::{numbering, Allowed, Cpu, Distances, NumaNode, Topology};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One online CPU; its SMT siblings are the CPUs with the same package and core.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CpuSpec {
    pub os_index: u32,
    pub package: i64,
    pub core: i64,
    pub node: u32,
    pub allowed: bool,
}

impl NodeSpec {
    /// An allowed node of 1 GiB, all of it free: what most tests' machines
    /// need of a node's memory.
    pub(crate) fn gib(os_index: u32) -> Self {
        NodeSpec {
            os_index,
            memory_bytes: 1 << 30,
            free_bytes: 1 << 30,
            allowed: true,
        }
    }
}

impl CpuSpec {
    pub(crate) fn new(os_index: u32, package: i64, core: i64, node: u32) -> Self {
        CpuSpec {
            os_index,
            package,
            core,
            node,
            allowed: true,
        }
    }
}

/// One NUMA node's memory; a node named only by a CPU gets no memory and is
/// allowed, a node named only here is memory-only.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NodeSpec {
    pub os_index: u32,
    pub memory_bytes: u64,
    pub free_bytes: u64,
    pub allowed: bool,
}

/// Two packages, one node each, two cores each (CPUs 0,1 on node 0; 2,3 on
/// node 1), 1 GiB free on each node, with `slit` as its distance table.
pub(crate) fn two_packages(slit: Option<Vec<Vec<u32>>>) -> Topology {
    let cpus = [
        CpuSpec::new(0, 0, 0, 0),
        CpuSpec::new(1, 0, 1, 0),
        CpuSpec::new(2, 1, 0, 1),
        CpuSpec::new(3, 1, 1, 1),
    ];
    let nodes = [0, 1].map(NodeSpec::gib);
    build("/", &cpus, &nodes, slit)
}

/// The model of a machine made of `cpus` and `nodes`, with `slit` (rows and
/// columns in ascending node order) as its distance table.
pub(crate) fn build(
    root: &str,
    cpus: &[CpuSpec],
    nodes: &[NodeSpec],
    slit: Option<Vec<Vec<u32>>>,
) -> Topology {
    let mut model: Vec<Cpu> = cpus
        .iter()
        .map(|s| Cpu {
            os_index: s.os_index,
            online: true,
            allowed: s.allowed,
            package: Some(s.package),
            package_id: Some(s.package),
            die: None,
            cluster: None,
            cluster_cpus: Vec::new(),
            capacity: None,
            core: Some(s.core),
            node: Some(s.node),
            smt_siblings: {
                let mut sib: Vec<u32> = cpus
                    .iter()
                    .filter(|o| o.package == s.package && o.core == s.core)
                    .map(|o| o.os_index)
                    .collect();
                sib.sort_unstable();
                sib
            },
        })
        .collect();
    model.sort_by_key(|c| c.os_index);

    let mut by_id: BTreeMap<u32, NodeSpec> = BTreeMap::new();
    for s in cpus {
        by_id.entry(s.node).or_insert(NodeSpec {
            os_index: s.node,
            memory_bytes: 0,
            free_bytes: 0,
            allowed: true,
        });
    }
    for n in nodes {
        by_id.insert(n.os_index, *n);
    }
    let numa: Vec<NumaNode> = by_id
        .values()
        .map(|n| NumaNode {
            os_index: n.os_index,
            cpus: model
                .iter()
                .filter(|c| c.node == Some(n.os_index))
                .map(|c| c.os_index)
                .collect(),
            memory_bytes: n.memory_bytes,
            free_bytes: n.free_bytes,
            allowed: n.allowed,
            hugepages: Vec::new(),
        })
        .collect();
    let node_ids: Vec<u32> = numa.iter().map(|n| n.os_index).collect();

    Topology {
        root: PathBuf::from(root),
        allowed: Allowed {
            cpus: model
                .iter()
                .filter(|c| c.allowed)
                .map(|c| c.os_index)
                .collect(),
            nodes: numa
                .iter()
                .filter(|n| n.allowed)
                .map(|n| n.os_index)
                .collect(),
            sources: Vec::new(),
        },
        numbering: numbering::classify(&model),
        cpus: model,
        nodes: numa,
        distances: slit.map(|matrix| Distances { node_ids, matrix }),
        caches: Vec::new(),
        memory_side_caches: Vec::new(),
        cpu_model: None,
        hmat: Vec::new(),
        memory_tiers: Vec::new(),
        pci_devices: Vec::new(),
        thp_mode: None,
        warnings: Vec::new(),
    }
}

/// A root folder removed when dropped.
pub(crate) struct Root(PathBuf);

impl Root {
    pub(crate) fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A root holding `files` (relative path, text), unique per call.
pub(crate) fn root_with(files: &[(&str, &str)]) -> Root {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("numaprobe-root-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    for (rel, text) in files {
        let p = d.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    Root(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn siblings_nodes_and_allowed_are_derived() {
        let mut cpus = vec![
            CpuSpec::new(0, 0, 0, 0),
            CpuSpec::new(2, 0, 0, 0),
            CpuSpec::new(1, 1, 0, 1),
        ];
        cpus[2].allowed = false;
        let mem_only = NodeSpec {
            os_index: 3,
            memory_bytes: 1 << 30,
            free_bytes: 1 << 29,
            allowed: true,
        };
        let t = build("/x", &cpus, &[mem_only], None);
        assert_eq!(
            t.cpus.iter().map(|c| c.os_index).collect::<Vec<_>>(),
            [0, 1, 2]
        );
        assert_eq!(t.cpu(2).unwrap().smt_siblings, [0, 2]);
        assert_eq!(t.cpu(1).unwrap().smt_siblings, [1]);
        assert_eq!(t.node_ids(), [0, 1, 3]);
        assert_eq!(t.node(0).unwrap().cpus, [0, 2]);
        assert!(t.node(3).unwrap().cpus.is_empty());
        assert_eq!(t.allowed.cpus, [0, 2]);
        assert_eq!(t.allowed.nodes, [0, 1, 3]);
        assert_eq!(t.numbering.packages, "consecutive");
        assert_eq!(t.numbering.smt, "far");
        assert_eq!(t.numbering.smt_stride, Some(2));
    }
}
