//! The main job's conclusions from what it found: the inference on each
//! measured matrix (or on the firmware's SLIT when nothing could be
//! measured) with the SLIT and HMAT compared, and the portable binding it
//! suggests, and the sentence on its buffer set-ups. `numaprobe run`
//! renders them; nothing here prints.

use crate::analysis::{self, binding, Matrix, MatrixError};
use crate::model::infer::Inference;
use crate::model::matrix::MatrixResult;
use crate::model::pin::PinReport;
use crate::topology::Topology;

/// Inference on a matrix numaprobe measured, with the machine's SLIT and
/// HMAT for comparison; None when it has fewer than two nodes, or when an
/// interrupted or budget-cut matrix holds too little to analyse (the run
/// still writes everything it measured). A complete matrix that cannot be
/// analysed is an error.
pub fn infer_measured(m: &MatrixResult, topo: &Topology) -> Result<Option<Inference>, MatrixError> {
    if (m.cpu_nodes.len() < 2 && m.mem_nodes.len() < 2) || m.cells.len() < 2 {
        return Ok(None);
    }
    let mut matrix = match Matrix::from_result(m) {
        Ok(x) => x,
        Err(_) if !m.complete => return Ok(None),
        Err(e) => return Err(e),
    };
    if let Some(d) = &topo.distances {
        matrix.slit = Some(analysis::Slit::from_distances(d));
    }
    let mut inf = analysis::analyse_with_advice(&matrix);
    inf.findings
        .extend(analysis::hmat::compare(&matrix, &topo.hmat));
    Ok(Some(inf))
}

/// With nothing measured, the firmware's table is the only matrix there is;
/// None without a SLIT of two or more nodes.
pub fn infer_slit(topo: &Topology) -> Result<Option<Inference>, MatrixError> {
    let Some(d) = &topo.distances else {
        return Ok(None);
    };
    if d.node_ids.len() < 2 {
        return Ok(None);
    }
    // The nodes with CPUs, so memory-only nodes (HBM, CXL, GPU memory) get no
    // thread advice from the firmware table either.
    let cpu_nodes: Vec<u32> = topo
        .nodes
        .iter()
        .filter(|n| !n.cpus.is_empty())
        .map(|n| n.os_index)
        .collect();
    let matrix = Matrix::from_slit(d, &cpu_nodes)?;
    Ok(Some(analysis::analyse_with_advice(&matrix)))
}

/// One thread per core, spread over packages and nodes first: the placement a
/// bandwidth-bound parallel job wants, written out for the usual tools.
/// None on a machine without an allowed core.
pub fn suggest_binding(topo: &Topology) -> Option<PinReport> {
    let cores: usize = topo
        .allowed_cpu_nodes()
        .iter()
        .map(|&n| topo.allowed_core_cpus_of_node(n).len())
        .sum();
    if cores == 0 {
        return None;
    }
    let req = binding::Request {
        threads: cores,
        strategy: binding::Strategy::Scatter,
        smt: binding::Smt::Avoid,
        nodes: None,
    };
    let b = binding::bind(topo, &req).ok()?;
    Some(PinReport::new(&req, &b))
}

/// The buffer set-ups of the matrices in one sentence, per phase and in
/// all ("latency 2 x 256 MiB in 0.41 s, ...; 0.80 s of 9.5 s measuring");
/// None when no buffer was set up.
pub fn setup_line(rec: &super::Record) -> Option<String> {
    let per_phase: Vec<String> = rec
        .phases
        .iter()
        .filter(|p| !p.setups.is_empty())
        .map(|p| {
            let bytes: u64 = p.setups.iter().map(|b| b.bytes).sum();
            format!(
                "{} {} x {} in {:.2} s",
                p.plan.phase.name(),
                p.setups.len(),
                crate::units::format_size(bytes / p.setups.len() as u64),
                p.setup_s
            )
        })
        .collect();
    (!per_phase.is_empty()).then(|| {
        format!(
            "{}; {:.2} s of {:.2} s measuring (one buffer per memory node and matrix)",
            per_phase.join(", "),
            rec.setup_s,
            rec.elapsed_s
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::testing::{build, CpuSpec, NodeSpec};

    /// Two packages, one node each, two cores each, with a SLIT.
    fn two_nodes(slit: Option<Vec<Vec<u32>>>) -> Topology {
        let cpus = [
            CpuSpec::new(0, 0, 0, 0),
            CpuSpec::new(1, 0, 1, 0),
            CpuSpec::new(2, 1, 0, 1),
            CpuSpec::new(3, 1, 1, 1),
        ];
        let nodes = [0, 1].map(|n| NodeSpec {
            os_index: n,
            memory_bytes: 1 << 30,
            free_bytes: 1 << 30,
            allowed: true,
        });
        build("/", &cpus, &nodes, slit)
    }

    #[test]
    fn the_slit_is_analysed_in_place_of_a_measurement() {
        let t = two_nodes(Some(vec![vec![10, 21], vec![21, 10]]));
        let inf = infer_slit(&t).unwrap().expect("a SLIT of two nodes");
        assert_eq!(inf.source, "slit");
        assert_eq!(inf.nodes, vec![0, 1]);
        assert_eq!(inf.links, vec![[0, 1]]);
        assert!(infer_slit(&two_nodes(None)).unwrap().is_none());
    }

    #[test]
    fn the_binding_has_one_thread_per_allowed_core_spread_over_packages() {
        let p = suggest_binding(&two_nodes(None)).unwrap();
        assert_eq!(p.strategy, "scatter");
        let mut cpus = p.cpus.clone();
        cpus.sort_unstable();
        assert_eq!(cpus, vec![0, 1, 2, 3]);
        // Scatter: the first two threads on different packages.
        assert_ne!(p.cpus[0] / 2, p.cpus[1] / 2);
    }
}
