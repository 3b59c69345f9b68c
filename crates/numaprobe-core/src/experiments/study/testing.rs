//! Synthetic topologies for the study's tests: N nodes of C single-threaded
//! cores, CPUs numbered node by node, with an optional SLIT. Built here rather
//! than read from a dump so the planner can be tested before (and apart from)
//! the sysfs reader.

use crate::topology::{Allowed, Cpu, Distances, NumaNode, Numbering, Topology};
use std::path::PathBuf;

pub fn synthetic(nodes: u32, cores_per_node: u32, slit: Option<Vec<Vec<u32>>>) -> Topology {
    let mut cpus = Vec::new();
    let mut numa = Vec::new();
    for n in 0..nodes {
        let ids: Vec<u32> = (0..cores_per_node)
            .map(|c| n * cores_per_node + c)
            .collect();
        for &id in &ids {
            cpus.push(Cpu {
                os_index: id,
                online: true,
                allowed: true,
                package: Some(i64::from(n)),
                die: None,
                cluster: None,
                core: Some(i64::from(id - n * cores_per_node)),
                node: Some(n),
                smt_siblings: vec![id],
            });
        }
        numa.push(NumaNode {
            os_index: n,
            cpus: ids,
            memory_bytes: 1 << 30,
            free_bytes: 1 << 30,
            allowed: true,
            hugepages: Vec::new(),
        });
    }
    let node_ids: Vec<u32> = (0..nodes).collect();
    Topology {
        root: PathBuf::from("/synthetic"),
        allowed: Allowed {
            cpus: cpus.iter().map(|c| c.os_index).collect(),
            nodes: node_ids.clone(),
            sources: vec!["synthetic".into()],
        },
        cpus,
        nodes: numa,
        distances: slit.map(|matrix| Distances { node_ids, matrix }),
        caches: Vec::new(),
        hmat: Vec::new(),
        memory_tiers: Vec::new(),
        pci_devices: Vec::new(),
        thp_mode: None,
        numbering: Numbering {
            packages: "consecutive".into(),
            smt: "none".into(),
            smt_stride: None,
            summary: "synthetic".into(),
        },
        warnings: Vec::new(),
    }
}

/// The note's Quartet: four nodes in a square, N0-N1, N0-N2, N1-N3, N2-N3
/// linked (1 hop, SLIT 16), the diagonals 2 hops (SLIT 22).
pub fn quartet() -> Topology {
    synthetic(
        4,
        2,
        Some(vec![
            vec![10, 16, 16, 22],
            vec![16, 10, 22, 16],
            vec![16, 22, 10, 16],
            vec![22, 16, 16, 10],
        ]),
    )
}
