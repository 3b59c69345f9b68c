//! The main job's conclusions from what it found, as one document
//! ([`conclusions`] -> `run.json`): the inference on each measured matrix
//! (or on the firmware's SLIT when nothing could be measured) with the SLIT
//! and HMAT compared, the portable binding it suggests, the notes on what is
//! missing and why, and the sentence on its buffer set-ups. `numaprobe run`
//! renders and writes them; nothing here prints.

use super::interleave::InterleaveCheck;
use super::{Outcome, Record};
use crate::analysis::{self, binding, Matrix, MatrixError};
use crate::model::infer::Inference;
use crate::model::matrix::MatrixResult;
use crate::model::pin::PinReport;
use crate::model::run::BusyFigures;
use crate::model::topo::TopoReport;
use crate::system_check::{self, SystemCheck};
use crate::topology::Topology;

/// run.json as the main job writes it: the planner's record and the
/// interleave checks typed.
pub type RunReport = crate::model::run::RunReport<Record, InterleaveCheck>;

/// What the main job measured, or why it measured nothing.
pub enum Measured {
    /// The job's outcome, and the interleave checks made after it.
    Job(Box<Outcome>, Vec<InterleaveCheck>),
    /// The topology describes another machine (read below `topo.root`):
    /// measurements run only on this one.
    OtherMachine,
    /// Measuring was declined (`--no-measure`).
    Declined,
}

/// A matrix the job holds that cannot be analysed.
#[derive(Debug, thiserror::Error)]
pub enum ConclusionError {
    #[error("cannot analyse the measured matrix: {0}")]
    Measured(MatrixError),
    #[error("cannot analyse the SLIT: {0}")]
    Slit(MatrixError),
}

/// Everything the main job found, in one document: the topology, what was
/// measured, the inferences (the SLIT's in place of a latency matrix too
/// small or missing), the binding, and a note for every part that is
/// missing or cut and why.
pub fn conclusions(topo: &Topology, measured: Measured) -> Result<RunReport, ConclusionError> {
    let mut notes = Vec::new();
    let mut busy_figures = None;
    let (lat, bw, record, extras, status, interleave) = match measured {
        Measured::OtherMachine => {
            notes.push(format!(
                "nothing measured: {} describes another machine; measurements run only on this one",
                topo.root.display()
            ));
            (None, None, None, None, None, Vec::new())
        }
        Measured::Declined => {
            notes.push("nothing measured (--no-measure)".into());
            (None, None, None, None, None, Vec::new())
        }
        Measured::Job(out, interleave) => {
            let out = *out;
            let check = crate::model::provenance::system_check();
            busy_figures = super::busy_figures::of(&figures_of(&out), check.as_ref());
            notes.extend(measured_notes(&out, check.as_ref(), busy_figures.as_ref()));
            notes.extend(interleave.iter().map(|c| c.statement.clone()));
            (
                out.latency,
                out.bandwidth,
                Some(out.record),
                Some(out.extras),
                Some(out.status),
                interleave,
            )
        }
    };
    let (inference, inference_bandwidth) = infer_both(topo, lat.as_ref(), bw.as_ref(), &mut notes)?;
    let (c2c, loaded_latency, peak, sweep) = match extras {
        Some(x) => (
            Some(x.c2c),
            Some(x.loaded_latency),
            Some(x.peak),
            Some(x.sweep),
        ),
        None => (None, None, None, None),
    };
    Ok(RunReport {
        schema: crate::SCHEMA.into(),
        topology: embedded_topology(topo),
        latency: lat,
        bandwidth: bw,
        inference,
        inference_bandwidth,
        binding: suggest_binding(topo),
        notes,
        complete: status.as_ref().is_none_or(|s| s.complete),
        status,
        budget_s: record.as_ref().map(|r| r.budget_s),
        elapsed_s: record.as_ref().map(|r| r.elapsed_s),
        plan: record,
        c2c,
        loaded_latency,
        peak,
        sweep,
        interleave,
        busy_figures,
    })
}

/// The topology document as its own file is, its `kind` stamped, without
/// the provenance: run.json's own provenance is the same one (same process,
/// same machine), and a figure is stored once.
fn embedded_topology(topo: &Topology) -> serde_json::Value {
    let mut v = crate::model::stamped::value(&TopoReport::new(topo));
    if let Some(o) = v.as_object_mut() {
        o.remove("provenance");
    }
    v
}

/// The figures of a measured job, for [`super::busy_figures::of`].
fn figures_of(out: &Outcome) -> super::busy_figures::Figures<'_> {
    let x = &out.extras;
    super::busy_figures::Figures {
        latency: out.latency.as_ref(),
        bandwidth: out.bandwidth.as_ref(),
        c2c: x.c2c.result.as_ref(),
        loaded: x.loaded_latency.result.as_ref(),
        peak: x.peak.result.as_ref(),
        sweep: x.sweep.result.as_ref(),
    }
}

/// The remarks on a measured job: the planner's statement, the memory
/// footprint's limit, unstable cells, the quiet-machine check's warnings
/// (a busy machine's given way to the sentence naming the figures it
/// touched, when some were: `busy`) and why each phase is less than a
/// sound full matrix.
fn measured_notes(
    out: &Outcome,
    check: Option<&SystemCheck>,
    busy: Option<&BusyFigures>,
) -> Vec<String> {
    let mut notes: Vec<String> = out.record.statement.iter().cloned().collect();
    if let Some(f) = crate::placement::footprint::last() {
        notes.push(f.statement());
    }
    for m in [&out.latency, &out.bandwidth].into_iter().flatten() {
        notes.extend(m.trust_summaries());
    }
    let warnings = match (check, busy) {
        (Some(c), Some(_)) => system_check::governor_warning(c).into_iter().collect(),
        (Some(c), None) => c.warnings.clone(),
        (None, _) => Vec::new(),
    };
    notes.extend(warnings.iter().map(|w| format!("system check: {w}")));
    notes.extend(busy.map(|b| b.statement.clone()));
    notes.extend(out.record.phases.iter().filter_map(|p| {
        p.plan
            .reason
            .as_ref()
            .map(|r| format!("{}: {r}", p.plan.phase.name()))
    }));
    notes
}

/// The inference on each matrix; on the SLIT in place of a latency matrix
/// that holds too few cells or was not measured. Says in `notes` why there
/// is none, or why the SLIT stands in.
fn infer_both(
    topo: &Topology,
    lat: Option<&MatrixResult>,
    bw: Option<&MatrixResult>,
    notes: &mut Vec<String>,
) -> Result<(Option<Inference>, Option<Inference>), ConclusionError> {
    let slit = || infer_slit(topo).map_err(ConclusionError::Slit);
    let inference = match lat {
        Some(m) => match infer_measured(m, topo).map_err(ConclusionError::Measured)? {
            Some(i) => Some(i),
            None if m.cpu_nodes.len().max(m.mem_nodes.len()) >= 2 => {
                notes.push(format!(
                    "the latency matrix holds too few cells to infer from ({} measured, complete: {}); the firmware SLIT is analysed in its place",
                    m.cells.len(),
                    m.complete
                ));
                slit()?
            }
            None => None,
        },
        None => slit()?,
    };
    let inference_bw = match bw {
        Some(m) => infer_measured(m, topo).map_err(ConclusionError::Measured)?,
        None => None,
    };
    if inference.is_none() && inference_bw.is_none() {
        notes.push(if topo.nodes.len() < 2 {
            "one NUMA node: there is no remote memory, so no levels, hops or links to infer".into()
        } else {
            "no matrix with two or more nodes and no SLIT: nothing to infer".into()
        });
    }
    Ok((inference, inference_bw))
}

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
    if topo.allowed_cpu_nodes().is_empty() {
        return None;
    }
    let req = binding::Request::main_job(topo, None, None, None);
    let b = binding::bind(topo, &req).ok()?;
    Some(PinReport::new(&req, &b))
}

/// The buffer set-ups of the matrices in one sentence, per phase and in
/// all ("latency 2 x 256 MiB in 0.41 s, ...; 0.80 s of 9.5 s measuring");
/// None when no buffer was set up.
pub fn setup_line(rec: &Record) -> Option<String> {
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
    use crate::model::matrix::tests::{cell, sample};
    use crate::model::matrix::MatrixKind;
    use crate::topology::testing::two_packages as two_nodes;
    use crate::topology::testing::{build, CpuSpec, NodeSpec};

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

    /// A 2x2 latency matrix holding the given (CPU node, memory node, ns).
    fn latency(cells: &[(u32, u32, f64)], complete: bool) -> MatrixResult {
        let mut m = sample();
        m.kind = MatrixKind::Latency;
        m.cpu_nodes = vec![0, 1];
        m.mem_nodes = vec![0, 1];
        m.matrix = vec![vec![None; 2]; 2];
        m.cells.clear();
        for &(c, n, ns) in cells {
            m.push(cell(c, n, ns, 1.0));
        }
        m.complete = complete;
        m
    }

    const SLIT: [[u32; 2]; 2] = [[10, 21], [21, 10]];

    fn slit() -> Option<Vec<Vec<u32>>> {
        Some(SLIT.iter().map(|r| r.to_vec()).collect())
    }

    #[test]
    fn with_nothing_measured_the_report_holds_the_slit_the_binding_and_why() {
        let t = two_nodes(slit());
        let doc = conclusions(&t, Measured::Declined).unwrap();
        assert_eq!(doc.notes, vec!["nothing measured (--no-measure)"]);
        assert_eq!(doc.inference.as_ref().unwrap().source, "slit");
        assert!(doc.inference_bandwidth.is_none());
        assert_eq!(doc.binding, suggest_binding(&t));
        assert!(doc.binding.is_some());
        assert!(doc.complete);
        assert!(doc.plan.is_none() && doc.status.is_none() && doc.budget_s.is_none());
        assert!(doc.c2c.is_none() && doc.sweep.is_none() && doc.interleave.is_empty());
        // The topology as its own file carries it, its kind stamped; its
        // provenance is the run's own, written once.
        assert_eq!(doc.topology["kind"], "topo");
        assert!(doc.topology.get("provenance").is_none());
        assert_eq!(doc.topology["numa_nodes"].as_array().unwrap().len(), 2);

        let mut other = two_nodes(None);
        other.root = "/dumps/big".into();
        let doc = conclusions(&other, Measured::OtherMachine).unwrap();
        assert_eq!(
            doc.notes,
            vec![
                "nothing measured: /dumps/big describes another machine; measurements run only on this one",
                "no matrix with two or more nodes and no SLIT: nothing to infer",
            ]
        );
        assert!(doc.inference.is_none());
    }

    #[test]
    fn a_latency_matrix_too_small_to_infer_from_gives_way_to_the_slit() {
        let t = two_nodes(slit());
        let lat = latency(&[(0, 0, 90.0)], false);
        let mut notes = Vec::new();
        let (inf, bw) = infer_both(&t, Some(&lat), None, &mut notes).unwrap();
        assert_eq!(inf.unwrap().source, "slit");
        assert!(bw.is_none());
        assert_eq!(
            notes,
            vec!["the latency matrix holds too few cells to infer from (1 measured, complete: false); the firmware SLIT is analysed in its place"]
        );
        // Without a SLIT there is nothing to stand in, and the note says so.
        let mut notes = Vec::new();
        let (inf, _) = infer_both(&two_nodes(None), Some(&lat), None, &mut notes).unwrap();
        assert!(inf.is_none());
        assert_eq!(notes.len(), 2);
        assert_eq!(
            notes[1],
            "no matrix with two or more nodes and no SLIT: nothing to infer"
        );
    }

    #[test]
    fn a_measured_matrix_is_inferred_from_with_the_slit_beside_it() {
        let t = two_nodes(slit());
        let lat = latency(
            &[(0, 0, 90.0), (0, 1, 140.0), (1, 0, 141.0), (1, 1, 91.0)],
            true,
        );
        let mut notes = Vec::new();
        let (inf, bw) = infer_both(&t, Some(&lat), None, &mut notes).unwrap();
        let inf = inf.unwrap();
        assert_eq!(inf.source, "measurement");
        assert_eq!(inf.nodes, vec![0, 1]);
        assert_eq!(inf.links, vec![[0, 1]]);
        assert!(bw.is_none());
        assert!(notes.is_empty(), "{notes:?}");
        // The same matrix as bandwidth is inferred from too.
        let mut notes = Vec::new();
        let (_, bw) = infer_both(&t, Some(&lat), Some(&lat), &mut notes).unwrap();
        assert!(bw.is_some());
    }

    #[test]
    fn one_node_has_nothing_to_infer_and_says_why() {
        let cpus = [CpuSpec::new(0, 0, 0, 0), CpuSpec::new(1, 0, 1, 0)];
        let node = [NodeSpec::gib(0)];
        let t = build("/", &cpus, &node, None);
        let doc = conclusions(&t, Measured::Declined).unwrap();
        assert!(doc.inference.is_none());
        assert_eq!(
            doc.notes[1],
            "one NUMA node: there is no remote memory, so no levels, hops or links to infer"
        );
    }

    #[test]
    fn a_matrix_of_one_node_or_one_cell_is_not_inferred_from() {
        let t = two_nodes(slit());
        let mut one = latency(&[(0, 0, 90.0), (0, 0, 91.0)], true);
        one.cpu_nodes = vec![0];
        one.mem_nodes = vec![0];
        one.matrix = vec![vec![Some(90.0)]];
        assert!(infer_measured(&one, &t).unwrap().is_none());
        // One CPU node reading two memory nodes is a matrix to infer from.
        let mut row = latency(&[(0, 0, 90.0), (0, 1, 140.0)], true);
        row.cpu_nodes = vec![0];
        row.matrix = vec![vec![Some(90.0), Some(140.0)]];
        assert!(infer_measured(&row, &t).unwrap().is_some());
        let cell = latency(&[(0, 0, 90.0)], true);
        assert!(infer_measured(&cell, &t).unwrap().is_none());
        // A SLIT of one node says nothing to infer.
        let cpus = [CpuSpec::new(0, 0, 0, 0)];
        let node = [NodeSpec::gib(0)];
        assert!(infer_slit(&build("/", &cpus, &node, Some(vec![vec![10]])))
            .unwrap()
            .is_none());
    }
}
