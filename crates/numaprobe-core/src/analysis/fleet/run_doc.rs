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
pub struct RunDoc {
    #[serde(default)]
    pub complete: Lax<bool>,
    #[serde(default)]
    pub latency: Node<Part>,
    #[serde(default)]
    pub bandwidth: Node<Part>,
    #[serde(default)]
    pub status: Node<Phases>,
    #[serde(default)]
    pub plan: Node<Phases>,
    #[serde(default)]
    pub topology: Node<SigTopology>,
    #[serde(default)]
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
pub struct SigDoc {
    #[serde(default)]
    pub topology: Node<SigTopology>,
    #[serde(default)]
    pub provenance: Node<Provenance>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Provenance {
    #[serde(default)]
    pub kernel: Lax<String>,
}

/// One matrix of a run: its unit, measured cells and failed cells.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Part {
    #[serde(default)]
    pub unit: Lax<String>,
    #[serde(default)]
    pub cells: Items<Node<Cell>>,
    #[serde(default)]
    pub failed: Items<Node<Failed>>,
}

/// A measured cell: where, its median, and what its trust is judged from
/// (the fields of [`CellEvidence`], each as the document has it).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Cell {
    #[serde(default)]
    pub cpu_node: Lax<u64>,
    #[serde(default)]
    pub mem_node: Lax<u64>,
    #[serde(default)]
    pub median: Lax<f64>,
    #[serde(default)]
    min: Lax<f64>,
    #[serde(default)]
    max: Lax<f64>,
    #[serde(default)]
    cv: Lax<f64>,
    #[serde(default)]
    samples: Count,
    #[serde(default)]
    flagged: Lax<bool>,
    #[serde(default)]
    flags: Lax<Vec<String>>,
    #[serde(default)]
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
        }
    }
}

/// A cell the run could not measure.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Failed {
    #[serde(default)]
    pub cpu_node: Lax<u64>,
    #[serde(default)]
    pub mem_node: Lax<u64>,
    #[serde(default)]
    pub reason: Lax<String>,
}

/// A `status` or `plan`: its phases.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Phases {
    #[serde(default)]
    pub phases: Items<Node<Phase>>,
}

/// One phase as the status (`shortfall`) or the plan (`coverage`) says it.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Phase {
    #[serde(default)]
    pub phase: Lax<String>,
    #[serde(default)]
    pub shortfall: Lax<String>,
    #[serde(default)]
    pub coverage: Lax<String>,
    #[serde(default)]
    pub reason: Lax<String>,
}

/// The topology fields of a signature.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct SigTopology {
    #[serde(default)]
    pub cpu_model: Lax<String>,
    #[serde(default)]
    pub packages: Count,
    #[serde(default)]
    pub numa_nodes: Items<Node<SigNode>>,
    #[serde(default)]
    pub cpus: Count,
    #[serde(default)]
    pub allowed: Node<Allowed>,
    #[serde(default)]
    pub numbering: Node<Numbering>,
    #[serde(default)]
    pub distances: Node<Distances>,
    #[serde(default)]
    pub caches: Items<Node<Cache>>,
    #[serde(default)]
    pub thp_mode: Lax<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct SigNode {
    #[serde(default)]
    pub cpus: Count,
    #[serde(default)]
    pub memory_bytes: Lax<f64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Allowed {
    #[serde(default)]
    pub cpus: Count,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Numbering {
    #[serde(default)]
    pub packages: Lax<String>,
    #[serde(default)]
    pub smt: Lax<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Distances {
    #[serde(default)]
    pub matrix: Items<Items<Lax<u64>>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Cache {
    #[serde(default, rename = "type")]
    pub kind: Lax<String>,
    #[serde(default)]
    pub level: Lax<u64>,
    #[serde(default)]
    pub size_bytes: Lax<u64>,
}
