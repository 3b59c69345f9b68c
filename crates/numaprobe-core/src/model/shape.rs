//! Declared dimensions checked against the data, for every document read
//! from outside: the node or CPU lists that name a matrix's rows and
//! columns against its rows and columns, and every cell, pair or link
//! against the nodes the document declares.
//!
//! A renderer sizes its tables and pictures by the declared lists; a 1x1
//! matrix that names 3000 nodes would otherwise make `report` draw 9
//! million cells of nothing. The checks run at read time, and a mismatch
//! is one line that says which list and which data disagree.

use crate::model::c2c::C2cResult;
use crate::model::infer::Inference;
use crate::model::loaded::LoadedResult;
use crate::model::locks::LocksResult;
use crate::model::matrix::MatrixResult;
use crate::model::peak::PeakResult;
use crate::model::pin::PinReport;
use crate::model::study::StudyReport;
use crate::model::sweep::SweepResult;
use crate::model::topo::TopoReport;
use crate::topology::Distances;

/// A document whose declared shape does not match its data.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct ShapeError(pub String);

/// A document that declares dimensions its data must have.
pub trait Shape {
    fn check_shape(&self) -> Result<(), ShapeError>;
}

fn bad(msg: String) -> Result<(), ShapeError> {
    Err(ShapeError(msg))
}

/// `list` names each node once.
fn unique(list: &[u32], what: &str) -> Result<(), ShapeError> {
    let mut seen = std::collections::BTreeSet::new();
    match list.iter().find(|&&n| !seen.insert(n)) {
        Some(n) => bad(format!("{what} names {n} twice")),
        None => Ok(()),
    }
}

/// `rows` has one row per `row_ids` entry, each one per `col_ids` entry.
fn grid<T>(
    rows: &[Vec<T>],
    what: &str,
    row_ids: &[u32],
    row_list: &str,
    col_ids: &[u32],
    col_list: &str,
) -> Result<(), ShapeError> {
    if rows.len() != row_ids.len() {
        return bad(format!(
            "{what} has {} rows but {row_list} names {}",
            rows.len(),
            row_ids.len()
        ));
    }
    if let Some((i, r)) = rows
        .iter()
        .enumerate()
        .find(|(_, r)| r.len() != col_ids.len())
    {
        return bad(format!(
            "{what} row {i} has {} values but {col_list} names {}",
            r.len(),
            col_ids.len()
        ));
    }
    Ok(())
}

/// `id` is one of `ids`.
fn member(id: u32, ids: &[u32], what: &str, list: &str) -> Result<(), ShapeError> {
    if ids.contains(&id) {
        Ok(())
    } else {
        bad(format!("{what} names {id}, which {list} does not list"))
    }
}

impl Shape for MatrixResult {
    fn check_shape(&self) -> Result<(), ShapeError> {
        unique(&self.cpu_nodes, "cpu_nodes")?;
        unique(&self.mem_nodes, "mem_nodes")?;
        grid(
            &self.matrix,
            "matrix",
            &self.cpu_nodes,
            "cpu_nodes",
            &self.mem_nodes,
            "mem_nodes",
        )?;
        let cells = self
            .cells
            .iter()
            .map(|c| (c.cpu_node, c.mem_node, "a cell"));
        let scaling = self
            .scaling
            .iter()
            .flatten()
            .map(|c| (c.cpu_node, c.mem_node, "a scaling cell"));
        let failed = self
            .failed
            .iter()
            .map(|c| (c.cpu_node, c.mem_node, "a failed cell"));
        for (cpu, mem, what) in cells.chain(scaling).chain(failed) {
            member(cpu, &self.cpu_nodes, what, "cpu_nodes")?;
            member(mem, &self.mem_nodes, what, "mem_nodes")?;
        }
        let most = self.cpu_nodes.len() * self.mem_nodes.len();
        if self.cells.len() > most {
            return bad(format!(
                "{} cells for a {}x{} matrix",
                self.cells.len(),
                self.cpu_nodes.len(),
                self.mem_nodes.len()
            ));
        }
        Ok(())
    }
}

impl Shape for Inference {
    fn check_shape(&self) -> Result<(), ShapeError> {
        let n = &self.nodes;
        unique(n, "nodes")?;
        if let Some(e) = self.hops.not_square("hops", n.len()) {
            return bad(e);
        }
        // The distance table is empty when there was no SLIT.
        if let Some(e) = (!self.distance.is_empty())
            .then(|| self.distance.not_square("distance", n.len()))
            .flatten()
        {
            return bad(e);
        }
        let pairs = self
            .links
            .iter()
            .map(|l| (l[0], l[1], "a link"))
            .chain(
                self.link_details
                    .iter()
                    .map(|l| (l.nodes[0], l.nodes[1], "a link")),
            )
            .chain(
                self.stray_cells
                    .iter()
                    .map(|c| (c[0], c[1], "a stray cell")),
            )
            .chain(
                self.cells
                    .iter()
                    .map(|c| (c.cpu_node, c.mem_node, "a cell")),
            )
            .chain(
                self.levels
                    .iter()
                    .flat_map(|l| l.members.iter().map(|m| (m[0], m[1], "a level"))),
            );
        for (a, b, what) in pairs {
            member(a, n, what, "nodes")?;
            member(b, n, what, "nodes")?;
        }
        let groups = self
            .groups
            .iter()
            .chain(self.hierarchy.iter().flat_map(|t| t.groups.iter()))
            .flatten()
            .chain(self.cpuless_nodes.iter());
        for &g in groups {
            member(g, n, "a group", "nodes")?;
        }
        if self.cells.len() > n.len() * n.len() {
            return bad(format!("{} cells for {} nodes", self.cells.len(), n.len()));
        }
        Ok(())
    }
}

impl Shape for Distances {
    fn check_shape(&self) -> Result<(), ShapeError> {
        let n = &self.node_ids;
        unique(n, "distances.node_ids")?;
        grid(
            &self.matrix,
            "distances.matrix",
            n,
            "distances.node_ids",
            n,
            "distances.node_ids",
        )
    }
}

impl Shape for TopoReport {
    fn check_shape(&self) -> Result<(), ShapeError> {
        match &self.distances {
            Some(d) => d.check_shape(),
            None => Ok(()),
        }
    }
}

impl Shape for C2cResult {
    fn check_shape(&self) -> Result<(), ShapeError> {
        let c = &self.cpus;
        unique(c, "cpus")?;
        // A matrix not measured at all is empty.
        for (m, what) in [(&self.hitm, "hitm"), (&self.shared, "shared")] {
            if !m.is_empty() {
                grid(m, what, c, "cpus", c, "cpus")?;
            }
        }
        for p in &self.pairs {
            member(p.a, c, "a pair", "cpus")?;
            member(p.b, c, "a pair", "cpus")?;
        }
        Ok(())
    }
}

impl Shape for StudyReport {
    fn check_shape(&self) -> Result<(), ShapeError> {
        for e in &self.experiments {
            for case in &e.cases {
                let threads = case.threads.len();
                if case.hops.len() != threads {
                    return bad(format!(
                        "case {}: {} hops for {threads} threads",
                        case.label,
                        case.hops.len()
                    ));
                }
                if let Some(s) = case.samples.iter().find(|s| s.threads_s.len() != threads) {
                    return bad(format!(
                        "case {}: a sample has {} thread times for {threads} threads",
                        case.label,
                        s.threads_s.len()
                    ));
                }
            }
        }
        Ok(())
    }
}

impl Shape for PinReport {
    fn check_shape(&self) -> Result<(), ShapeError> {
        if self.cpus.len() != self.threads {
            return bad(format!(
                "cpus names {} CPUs for {} threads",
                self.cpus.len(),
                self.threads
            ));
        }
        if self.placement.len() != self.threads {
            return bad(format!(
                "placement has {} threads but threads is {}",
                self.placement.len(),
                self.threads
            ));
        }
        unique(&self.nodes, "nodes")?;
        unique(&self.mem_nodes, "mem_nodes")?;
        for (i, (p, &cpu)) in self.placement.iter().zip(&self.cpus).enumerate() {
            if p.thread != i || p.cpu != cpu {
                return bad(format!(
                    "placement {i} is thread {} on CPU {} but cpus puts thread {i} on CPU {cpu}",
                    p.thread, p.cpu
                ));
            }
            if let Some(n) = p.node {
                member(n, &self.nodes, "a thread's placement", "nodes")?;
            }
        }
        Ok(())
    }
}

impl Shape for PeakResult {
    fn check_shape(&self) -> Result<(), ShapeError> {
        // Documents older than the field have no CPUs; a node's CPUs are
        // otherwise one per thread.
        if let Some(n) = self
            .nodes
            .iter()
            .find(|n| !n.cpus.is_empty() && n.cpus.len() != n.threads)
        {
            return bad(format!(
                "node {}: cpus names {} CPUs for {} threads",
                n.node,
                n.cpus.len(),
                n.threads
            ));
        }
        for s in &self.memory.sockets {
            if s.populated_slots > s.slots || s.populated_channels > s.channels {
                return bad(format!(
                    "memory.sockets: {} of {} slots and {} of {} channels populated",
                    s.populated_slots, s.slots, s.populated_channels, s.channels
                ));
            }
        }
        let Some(slots) = self
            .memory
            .sockets
            .iter()
            .try_fold(0usize, |n, s| n.checked_add(s.slots))
        else {
            return bad(format!(
                "memory.sockets counts more slots than {} together; at most one slot per memory.devices entry ({})",
                usize::MAX,
                self.memory.devices.len()
            ));
        };
        if !self.memory.sockets.is_empty() && slots != self.memory.devices.len() {
            return bad(format!(
                "memory.sockets counts {slots} slots but memory.devices lists {}",
                self.memory.devices.len()
            ));
        }
        Ok(())
    }
}

impl Shape for LoadedResult {
    fn check_shape(&self) -> Result<(), ShapeError> {
        for c in &self.curves {
            if let Some(k) = c.knee.filter(|&k| k >= c.points.len()) {
                return bad(format!(
                    "curve {}->{} {}: knee {k} of {} points",
                    c.cpu_node,
                    c.mem_node,
                    c.mix,
                    c.points.len()
                ));
            }
            if let Some(p) = c
                .points
                .iter()
                .find(|p| p.load_threads as usize > c.load_cpus.len())
            {
                return bad(format!(
                    "curve {}->{} {}: a point has {} load threads but load_cpus names {}",
                    c.cpu_node,
                    c.mem_node,
                    c.mix,
                    p.load_threads,
                    c.load_cpus.len()
                ));
            }
        }
        Ok(())
    }
}

impl Shape for LocksResult {
    fn check_shape(&self) -> Result<(), ShapeError> {
        for r in &self.runs {
            let what = format!("run {} {} {}", r.op, r.sharing, r.placement);
            if r.cpus.len() != r.threads {
                return bad(format!(
                    "{what}: cpus names {} CPUs for {} threads",
                    r.cpus.len(),
                    r.threads
                ));
            }
            // Documents older than the field have no nodes.
            if !r.nodes.is_empty() && r.nodes.len() != r.cpus.len() {
                return bad(format!(
                    "{what}: nodes names {} nodes for {} CPUs",
                    r.nodes.len(),
                    r.cpus.len()
                ));
            }
        }
        Ok(())
    }
}

impl Shape for SweepResult {
    fn check_shape(&self) -> Result<(), ShapeError> {
        if self.placement.len() > self.pages.len() {
            return bad(format!(
                "placement has {} page kinds but pages names {}",
                self.placement.len(),
                self.pages.len()
            ));
        }
        let most = self.pages.len() * self.sizes.len();
        if self.points.len() > most {
            return bad(format!(
                "{} points for {} sizes x {} page kinds",
                self.points.len(),
                self.sizes.len(),
                self.pages.len()
            ));
        }
        let kinds = self
            .points
            .iter()
            .map(|p| (p.pages, "a point"))
            .chain(self.placement.iter().map(|p| (p.pages, "a placement")))
            .chain(
                self.analysis
                    .iter()
                    .flat_map(|a| a.curves.iter().map(|c| (c.pages, "a curve"))),
            );
        for (k, what) in kinds {
            if !self.pages.contains(&k) {
                return bad(format!(
                    "{what} names page kind {}, which pages does not list",
                    k.name()
                ));
            }
        }
        for c in self.analysis.iter().flat_map(|a| &a.curves) {
            if let Some(m) = c
                .matches
                .iter()
                .find(|m| m.plateau.is_some_and(|i| i >= c.plateaus.len()))
            {
                return bad(format!(
                    "a {} match names plateau {} of {}",
                    m.cache.name,
                    m.plateau.unwrap_or_default(),
                    c.plateaus.len()
                ));
            }
        }
        Ok(())
    }
}

/// The one-line message of a document whose shape must be refused (for
/// the tests beside each document's sample).
#[cfg(test)]
pub(crate) fn refusal(doc: &impl Shape) -> String {
    doc.check_shape().unwrap_err().0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(doc: &str) -> MatrixResult {
        serde_json::from_str(doc).unwrap()
    }

    /// A 2x2 latency result with one measured cell, as `latency --format
    /// json` writes it (the fields a reader needs).
    fn two_by_two() -> serde_json::Value {
        serde_json::json!({
            "schema": "numaprobe/1", "kind": "latency", "unit": "ns",
            "cpu_nodes": [0, 1], "mem_nodes": [0, 1],
            "matrix": [[80.0, null], [null, null]],
            "cells": [],
            "placement_threshold": 0.99,
            "stop_rule": serde_json::to_value(crate::stats::StopRule::default()).unwrap(),
            "timer": {"source": "monotonic_raw", "overhead_ns": 0.0, "resolution_ns": 1.0},
            "notes": [], "failed": [], "complete": true
        })
    }

    #[test]
    fn a_matrix_must_have_the_rows_and_columns_it_names() {
        let ok = two_by_two();
        matrix(&ok.to_string()).check_shape().unwrap();
        let mut v = ok.clone();
        v["cpu_nodes"] = serde_json::json!((0..3000).collect::<Vec<u32>>());
        let e = matrix(&v.to_string()).check_shape().unwrap_err();
        assert_eq!(e.0, "matrix has 2 rows but cpu_nodes names 3000");
        let mut v = ok.clone();
        v["matrix"] = serde_json::json!([[1.0, 2.0], [3.0]]);
        let e = matrix(&v.to_string()).check_shape().unwrap_err();
        assert_eq!(e.0, "matrix row 1 has 1 values but mem_nodes names 2");
        let mut v = ok;
        v["mem_nodes"] = serde_json::json!([0, 0]);
        let e = matrix(&v.to_string()).check_shape().unwrap_err();
        assert_eq!(e.0, "mem_nodes names 0 twice");
    }

    #[test]
    fn a_slit_must_be_square_over_its_nodes() {
        let d = Distances {
            node_ids: vec![0, 1],
            matrix: vec![vec![10, 20], vec![20, 10]],
        };
        d.check_shape().unwrap();
        let d = Distances {
            node_ids: (0..3000).collect(),
            matrix: vec![vec![10]],
        };
        let e = d.check_shape().unwrap_err();
        assert_eq!(
            e.0,
            "distances.matrix has 1 rows but distances.node_ids names 3000"
        );
    }

    #[test]
    fn member_and_unique_say_which_list() {
        assert!(member(3, &[0, 1], "a link", "nodes")
            .unwrap_err()
            .0
            .contains("a link names 3, which nodes does not list"));
        member(1, &[0, 1], "a link", "nodes").unwrap();
        unique(&[0, 1, 2], "nodes").unwrap();
    }

    use super::refusal as err;

    fn run_binding() -> PinReport {
        let run: serde_json::Value = serde_json::from_str(include_str!(
            "../../../../tests/fixtures/fleet/taskset-one-cpu/node1/run.json"
        ))
        .unwrap();
        serde_json::from_value(run["binding"].clone()).unwrap()
    }

    #[test]
    fn a_pin_document_places_each_of_its_threads_once() {
        let ok = run_binding();
        ok.check_shape().unwrap();
        let mut p = ok.clone();
        p.threads = 3000;
        assert_eq!(err(&p), "cpus names 2 CPUs for 3000 threads");
        let mut p = ok.clone();
        p.placement.pop();
        assert!(err(&p).contains("placement has 1 threads"));
        let mut p = ok.clone();
        p.placement[1].cpu = 7;
        assert!(
            err(&p).contains("placement 1 is thread 1 on CPU 7 but cpus puts thread 1 on CPU 1")
        );
        let mut p = ok;
        p.placement[0].node = Some(9);
        assert!(err(&p).contains("names 9, which nodes"));
    }

    #[test]
    fn a_peak_document_counts_its_cpus_and_slots() {
        let ok = crate::smbios::fixture_peak();
        ok.check_shape().unwrap();
        let mut p = ok.clone();
        p.memory.sockets[0].slots += 1;
        assert!(err(&p).contains("slots but memory.devices lists"));
        let mut p = ok.clone();
        p.memory.sockets[0].populated_slots = p.memory.sockets[0].slots + 1;
        assert!(err(&p).contains("slots and"));
        // Slots whose sum wraps round to the devices' count: refused, not
        // taken for a match (nor a stop with overflow checks on).
        let mut p = ok.clone();
        let devices = p.memory.devices.len();
        p.memory.sockets[0].slots = usize::MAX;
        p.memory.sockets[1].slots = devices + 1;
        assert_eq!(
            usize::MAX.wrapping_add(devices + 1),
            devices,
            "the hostile sum wraps to the count"
        );
        let e = err(&p);
        assert!(e.contains("memory.sockets counts more slots than"), "{e}");
        assert!(!e.contains('\n'), "{e}");
        let mut p = ok;
        p.nodes.push(crate::model::peak::NodePeak {
            flagged: false,
            set_aside: Default::default(),
            node: 0,
            mix: "read".into(),
            threads: 3000,
            gbs: 1.0,
            concurrent: false,
            cpus: vec![0],
            placement: 1.0,
            cv: 0.0,
            flags: Vec::new(),
        });
        assert_eq!(err(&p), "node 0: cpus names 1 CPUs for 3000 threads");
    }
}
