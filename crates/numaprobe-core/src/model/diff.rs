//! The result model of `numaprobe diff` (two report folders or documents
//! compared) and of `numaprobe check` (this machine against a saved topology
//! or binding): differences as (section, item, A, B) and per measured cell
//! the change with its noise-aware verdict. Part of the `numaprobe/1` JSON
//! contract (doc/commands/diff-check.md).

use serde::{Deserialize, Serialize};

/// What part of the machine or the run a difference is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    /// CPU model, numaprobe version: what was compared.
    Machine,
    /// The kernel release (from the documents' provenance).
    Kernel,
    Packages,
    Nodes,
    /// How CPU numbers map to packages, cores and SMT threads.
    Numbering,
    /// One CPU's place (online, package, core, node, SMT siblings).
    Cpus,
    /// CPUs and memory nodes the process may use (affinity, cgroup cpuset).
    Allowed,
    /// Memory per node, huge pages configured.
    Memory,
    /// The firmware's distance table.
    Slit,
    /// The firmware's HMAT access attributes, memory tiers and memory-side caches.
    Hmat,
    Caches,
    /// Transparent huge pages setting.
    Thp,
    /// PCI devices and their nodes.
    Pci,
    /// A document or matrix present in one run only.
    Documents,
    /// How the matrices were measured (buffer size, stride, pattern, threads, ...).
    Parameters,
    /// A thread of a saved binding (`check` against a `pin` result).
    Binding,
    /// Latency cells against a saved run or a fleet's medians (`check`).
    Latency,
    /// Bandwidth cells against a saved run or a fleet's medians (`check`).
    Bandwidth,
}

impl Section {
    pub fn name(self) -> &'static str {
        match self {
            Section::Machine => "machine",
            Section::Kernel => "kernel",
            Section::Packages => "packages",
            Section::Nodes => "nodes",
            Section::Numbering => "numbering",
            Section::Cpus => "cpus",
            Section::Allowed => "allowed",
            Section::Memory => "memory",
            Section::Slit => "slit",
            Section::Hmat => "hmat",
            Section::Caches => "caches",
            Section::Thp => "thp",
            Section::Pci => "pci",
            Section::Documents => "documents",
            Section::Parameters => "parameters",
            Section::Binding => "binding",
            Section::Latency => "latency",
            Section::Bandwidth => "bandwidth",
        }
    }

    /// The section of this name (as [`Section::name`] writes it).
    pub fn parse(name: &str) -> Option<Section> {
        ALL_SECTIONS.iter().copied().find(|s| s.name() == name)
    }
}

/// Every section, in report order.
pub const ALL_SECTIONS: &[Section] = &[
    Section::Machine,
    Section::Kernel,
    Section::Packages,
    Section::Nodes,
    Section::Numbering,
    Section::Cpus,
    Section::Allowed,
    Section::Memory,
    Section::Slit,
    Section::Hmat,
    Section::Caches,
    Section::Thp,
    Section::Pci,
    Section::Documents,
    Section::Parameters,
    Section::Binding,
    Section::Latency,
    Section::Bandwidth,
];

/// One thing that differs: `item` in `section` reads `a` in A and `b` in B
/// (for `check`: the saved file, and this machine).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Difference {
    pub section: Section,
    pub item: String,
    pub a: String,
    pub b: String,
}

impl Difference {
    pub fn new(
        section: Section,
        item: impl Into<String>,
        a: impl ToString,
        b: impl ToString,
    ) -> Self {
        Difference {
            section,
            item: item.into(),
            a: a.to_string(),
            b: b.to_string(),
        }
    }
}

/// A cell's verdict. `better`/`worse` follow the kind: lower latency, higher
/// bandwidth is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// No statistically significant change (p >= alpha), or too few samples
    /// to test and the medians within the threshold.
    Unchanged,
    /// Significant, but the medians differ by less than the threshold (the
    /// minimum effect).
    Negligible,
    /// Significant and at least the minimum effect, but no larger than the
    /// spread of one of the runs (a sample's standard deviation).
    WithinNoise,
    Better,
    Worse,
    /// No verdict can be given, and `reason` says why: a side's cell is
    /// flagged (spread, placement), the runs' conditions differ (load) and
    /// the change could be theirs, or the samples are too few for the test
    /// to ever reach alpha (e.g. three a side): measure again.
    Inconclusive,
    /// Measured in A only (missing or failed in B).
    OnlyA,
    /// Measured in B only.
    OnlyB,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Unchanged => "unchanged",
            Verdict::Negligible => "negligible",
            Verdict::WithinNoise => "within_noise",
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Inconclusive => "inconclusive",
            Verdict::OnlyA => "only_a",
            Verdict::OnlyB => "only_b",
        }
    }
    /// Does this verdict make A and B different (exit status 1)?
    pub fn differs(self) -> bool {
        matches!(
            self,
            Verdict::Better | Verdict::Worse | Verdict::OnlyA | Verdict::OnlyB
        )
    }
}

/// One side of a compared cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellSide {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub samples: usize,
}

/// One measured cell compared: (CPU node, memory node, kind).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellDiff {
    /// `latency` or `bandwidth`.
    pub kind: String,
    pub cpu_node: u32,
    pub mem_node: u32,
    pub unit: String,
    pub a: Option<CellSide>,
    pub b: Option<CellSide>,
    /// median(B) - median(A), in `unit`.
    pub change: Option<f64>,
    /// The same relative to median(A), in percent.
    pub change_pct: Option<f64>,
    /// 95 % bootstrap interval of median(B) - median(A), in percent of median(A).
    pub ci_low_pct: Option<f64>,
    pub ci_high_pct: Option<f64>,
    /// Two-sided Mann–Whitney U p-value.
    pub p_value: Option<f64>,
    pub verdict: Verdict,
    /// Why the verdict is `inconclusive` or `within_noise`, in words.
    #[serde(default)]
    pub reason: Option<String>,
    /// Why a side is missing (the failed cell's reason), flags, remarks.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// Where one side came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Origin {
    /// The path given on the command line.
    pub path: String,
    /// `report` (a folder or run.json), `topo`, `latency` or `bandwidth`.
    pub kind: String,
    /// The documents read (for a folder: the file names found).
    pub documents: Vec<String>,
    /// From the provenance, where the documents carry one.
    pub hostname: Option<String>,
    pub kernel: Option<String>,
    pub start: Option<String>,
    /// False when a document says it is partial (interrupted, still running).
    pub complete: bool,
    /// The runs this side pools, when it is several (`diff A1 A2 --vs B1
    /// B2`): their paths, in order; `path` is then them joined by ` + `.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<String>,
}

/// How cells were judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Criteria {
    /// A cell is significant when p < alpha.
    pub alpha: f64,
    /// ... and practically different when |change| >= this many percent.
    pub threshold_pct: f64,
    /// The bootstrap's resamples and base seed (each cell mixes in its coordinates).
    pub resamples: usize,
    pub seed: u64,
}

/// Counts of the result, and the one-word answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DiffSummary {
    /// True when nothing differs (exit status 0).
    pub equal: bool,
    pub differences: usize,
    pub cells: usize,
    pub unchanged: usize,
    pub negligible: usize,
    #[serde(default)]
    pub within_noise: usize,
    pub better: usize,
    pub worse: usize,
    pub inconclusive: usize,
    pub only_a: usize,
    pub only_b: usize,
}

/// The `numaprobe diff --format json` document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiffReport {
    pub schema: String,
    pub a: Origin,
    pub b: Origin,
    pub criteria: Criteria,
    /// Topology, firmware, kernel and measurement-parameter differences.
    pub differences: Vec<Difference>,
    /// Every measured cell of either side, by kind, CPU node, memory node.
    pub cells: Vec<CellDiff>,
    /// Things that differ but do not count (host name, numaprobe version, a
    /// partial run).
    pub notes: Vec<String>,
    pub summary: DiffSummary,
}

impl DiffReport {
    /// Fill `summary` from the differences and cells.
    pub fn summarise(&mut self) {
        let mut s = DiffSummary {
            differences: self.differences.len(),
            cells: self.cells.len(),
            ..DiffSummary::default()
        };
        for c in &self.cells {
            *match c.verdict {
                Verdict::Unchanged => &mut s.unchanged,
                Verdict::Negligible => &mut s.negligible,
                Verdict::WithinNoise => &mut s.within_noise,
                Verdict::Better => &mut s.better,
                Verdict::Worse => &mut s.worse,
                Verdict::Inconclusive => &mut s.inconclusive,
                Verdict::OnlyA => &mut s.only_a,
                Verdict::OnlyB => &mut s.only_b,
            } += 1;
        }
        s.equal = s.differences == 0 && !self.cells.iter().any(|c| c.verdict.differs());
        self.summary = s;
    }
}

/// The `numaprobe check --format json` document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckReport {
    pub schema: String,
    /// The saved file checked against.
    pub expect: String,
    /// `topo`, `report` (a run.json or report folder), `fleet` or `pin`.
    pub expect_kind: String,
    /// The machine checked (`/` is this one).
    pub root: String,
    /// This node's own measurements the cells were judged against
    /// (`--measured`), the path as given; absent without them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<String>,
    /// What was compared, in words (one entry per aspect).
    pub checked: Vec<String>,
    /// True when nothing differs (exit status 0).
    pub matches: bool,
    /// `a` is the saved file's, `b` this machine's.
    pub differences: Vec<Difference>,
    /// The sections compared (`--only` / `--skip` choose them).
    #[serde(default)]
    pub sections: Vec<Section>,
    /// What was not compared, and why (a section the expectation or this
    /// machine cannot say).
    #[serde(default)]
    pub notes: Vec<String>,
}
