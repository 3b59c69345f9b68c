//! Synthetic topologies for the study's tests: N nodes of C single-threaded
//! cores, CPUs numbered node by node, with an optional SLIT. Built here rather
//! than read from a dump so the planner can be tested before (and apart from)
//! the sysfs reader.

use crate::topology::testing::{build, CpuSpec, NodeSpec};
use crate::topology::Topology;

pub fn synthetic(nodes: u32, cores_per_node: u32, slit: Option<Vec<Vec<u32>>>) -> Topology {
    let cpus: Vec<CpuSpec> = (0..nodes)
        .flat_map(|n| {
            (0..cores_per_node)
                .map(move |c| CpuSpec::new(n * cores_per_node + c, i64::from(n), i64::from(c), n))
        })
        .collect();
    let mem: Vec<NodeSpec> = (0..nodes).map(NodeSpec::gib).collect();
    let mut t = build("/synthetic", &cpus, &mem, slit);
    t.allowed.sources = vec!["synthetic".into()];
    t
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
