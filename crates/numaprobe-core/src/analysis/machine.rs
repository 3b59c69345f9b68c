//! An inference checked against the machine the matrix describes: its
//! firmware SLIT where the input carries none, its memory-only nodes, and
//! its HMAT compared with the measurement (`numaprobe infer --sysfs-root`).

use super::matrix::{Matrix, Slit};
use crate::model::infer::Inference;
use crate::topology::Topology;

/// Infer levels, hops, links and advice from `matrix`; with the machine's
/// topology, its SLIT fills in for a missing one, its CPU-less nodes are
/// named as memory-only and a measurement is compared with its HMAT.
pub fn infer_on(mut matrix: Matrix, topo: Option<&Topology>) -> Inference {
    let Some(t) = topo else {
        return super::analyse_with_advice(&matrix);
    };
    if let (None, Some(d)) = (&matrix.slit, &t.distances) {
        matrix.slit = Some(Slit::from_distances(d));
    }
    // The machine knows which of its nodes have no CPUs.
    matrix.cpuless = t
        .nodes
        .iter()
        .filter(|n| n.cpus.is_empty())
        .map(|n| n.os_index)
        .collect();
    let mut inf = super::analyse_with_advice(&matrix);
    if !matrix.slit_only {
        inf.findings.extend(super::hmat::compare(&matrix, &t.hmat));
    }
    inf
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::Unit;
    use crate::topology::testing::{build, CpuSpec, NodeSpec};

    #[test]
    fn the_machines_slit_and_memory_only_nodes_join_a_bare_matrix() {
        // Two nodes with CPUs and a third, memory only.
        let cpus = [CpuSpec::new(0, 0, 0, 0), CpuSpec::new(1, 1, 0, 1)];
        let nodes = [0, 1, 2].map(NodeSpec::gib);
        let slit = vec![vec![10, 21, 31], vec![21, 10, 31], vec![31, 31, 10]];
        let t = build("/", &cpus, &nodes, Some(slit));
        let v = |x: f64| Some(x);
        // Measured from all three, as a matrix read from a file would say.
        let m = Matrix::new(
            Unit::Ns,
            vec![0, 1, 2],
            vec![0, 1, 2],
            vec![
                vec![v(80.), v(140.), v(200.)],
                vec![v(140.), v(80.), v(200.)],
                vec![v(200.), v(200.), v(80.)],
            ],
        )
        .unwrap();
        let bare = infer_on(m.clone(), None);
        assert!(bare.cpuless_nodes.is_empty());
        let on = infer_on(m, Some(&t));
        assert_eq!(on.cpuless_nodes, vec![2]);
        assert_ne!(bare.findings, on.findings, "the SLIT is compared");
    }
}
