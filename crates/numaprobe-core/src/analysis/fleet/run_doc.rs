//! What the fleet reads of a node's `run.json`, as typed shapes read
//! straight from its text: the two matrices' unit, cells and failed cells,
//! the status and plan phases, and the topology fields of the signature.
//! Every other field is skipped unbuilt, and a field of another type reads
//! as not there (`model::lax`), so a report of another version still counts
//! and a huge field the fleet does not use costs no memory.

use crate::analysis::compare::trust::CellEvidence;
use crate::model::lax::{Count, Items, Lax, Node};
use crate::stats::SetAside;
use serde::Deserialize;

/// The parts of a run document the fleet uses.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct RunDoc {
    pub complete: Lax<bool>,
    pub latency: Node<Part>,
    pub bandwidth: Node<Part>,
    pub status: Node<Phases>,
    pub plan: Node<Phases>,
    pub topology: Node<SigTopology>,
    pub provenance: Node<Provenance>,
}

impl RunDoc {
    /// The matrix of `kind` (`latency` or `bandwidth`).
    pub fn part(&self, kind: &str) -> &Node<Part> {
        if kind == "latency" {
            &self.latency
        } else {
            &self.bandwidth
        }
    }
}

/// What a signature is made of: the topology and the provenance's kernel
/// (for a document that is not read whole, such as the machine `check`
/// compares).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SigDoc {
    pub topology: Node<SigTopology>,
    pub provenance: Node<Provenance>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Provenance {
    pub kernel: Lax<String>,
}

/// One matrix of a run: its unit, measured cells and failed cells.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Part {
    pub unit: Lax<String>,
    pub cells: Items<Node<Cell>>,
    pub failed: Items<Node<Failed>>,
}

/// A measured cell: where, its median, and what its trust is judged from
/// (the fields of [`CellEvidence`], each as the document has it).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Cell {
    pub cpu_node: Lax<u64>,
    pub mem_node: Lax<u64>,
    pub median: Lax<f64>,
    min: Lax<f64>,
    max: Lax<f64>,
    cv: Lax<f64>,
    samples: Count,
    flagged: Lax<bool>,
    flags: Lax<Vec<String>>,
    set_aside: Lax<SetAside>,
}

impl Cell {
    /// Its trust evidence; a cell whose evidence fields do not all read is
    /// judged on what it has: no flags, no spread.
    pub fn evidence(&self) -> CellEvidence {
        let wrong = self.median.is_wrong()
            || self.min.is_wrong()
            || self.max.is_wrong()
            || self.cv.is_wrong()
            || self.samples.0.is_wrong()
            || self.flagged.is_wrong()
            || self.flags.is_wrong()
            || self.set_aside.is_wrong();
        if wrong {
            return CellEvidence::default();
        }
        CellEvidence {
            median: self.median.copied().unwrap_or_default(),
            min: self.min.copied().unwrap_or_default(),
            max: self.max.copied().unwrap_or_default(),
            cv: self.cv.copied().unwrap_or_default(),
            kept: self.samples.len(),
            flagged: self.flagged.copied().unwrap_or_default(),
            flags: self.flags.cloned().unwrap_or_default(),
            set_aside: self.set_aside.copied().unwrap_or_default(),
            across_runs: None,
        }
    }
}

/// A cell the run could not measure.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Failed {
    pub cpu_node: Lax<u64>,
    pub mem_node: Lax<u64>,
    pub reason: Lax<String>,
}

/// A `status` or `plan`: its phases.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Phases {
    pub phases: Items<Node<Phase>>,
}

/// One phase as the status (`shortfall`) or the plan (`coverage`) says it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Phase {
    pub phase: Lax<String>,
    pub shortfall: Lax<String>,
    pub coverage: Lax<String>,
    pub reason: Lax<String>,
}

/// The topology fields of a signature.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SigTopology {
    pub cpu_model: Lax<String>,
    pub packages: Count,
    pub numa_nodes: Items<Node<SigNode>>,
    pub cpus: Count,
    pub allowed: Node<Allowed>,
    pub numbering: Node<Numbering>,
    pub distances: Node<Distances>,
    pub caches: Items<Node<Cache>>,
    pub thp_mode: Lax<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SigNode {
    pub cpus: Count,
    pub memory_bytes: Lax<f64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Allowed {
    pub cpus: Count,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Numbering {
    pub packages: Lax<String>,
    pub smt: Lax<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Distances {
    pub matrix: Items<Items<Lax<u64>>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Cache {
    #[serde(rename = "type")]
    pub kind: Lax<String>,
    pub level: Lax<u64>,
    pub size_bytes: Lax<u64>,
}
