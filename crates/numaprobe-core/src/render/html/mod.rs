//! The self-contained HTML report (`report.html`): one file, inline CSS and
//! SVG, no script and no network, readable with JavaScript off.
//!
//! The caller (the binary's `report` command and `run`) gathers the folder's
//! documents into a [`ReportInput`]; [`render`] turns it into the page. The
//! page is XHTML-compatible (every element closed, no named entities) so a
//! test can parse it as XML. Files here: `page` (skeleton, CSS, escaping),
//! `topology` (the lstopo-like picture), `heatmap` (matrices as coloured
//! tables), `c2c` (the cache-line transfer matrices and domain summary,
//! shown with the matrices), `peak` (the system peak and the DIMMs),
//! `locks` (lock and atomic contention), `sections` (everything else, one
//! function per section), `loaded` (loaded-latency curves), `sweep` (the
//! cache-size sweep).

mod c2c;
mod heat_table;
mod heatmap;
mod loaded;
pub(crate) mod locks;
mod page;
mod peak;
mod sections;
mod sweep;
mod topology;

use crate::model::c2c::C2cResult;
use crate::model::infer::Inference;
use crate::model::loaded::LoadedResult;
use crate::model::locks::LocksResult;
use crate::model::matrix::MatrixResult;
use crate::model::peak::PeakResult;
use crate::model::pin::PinReport;
use crate::model::provenance::Provenance;
use crate::model::ranking::Ranking;
use crate::model::study::StudyReport;
use crate::model::sweep::SweepResult;
use crate::topology::Topology;

pub use page::{escape, CSP};

/// One value read from a file of the folder, with the file's name so the
/// page can say where each figure comes from.
#[derive(Debug, Clone)]
pub struct Doc<T> {
    pub file: String,
    pub value: T,
}

impl<T> Doc<T> {
    pub fn new(file: impl Into<String>, value: T) -> Doc<T> {
        Doc {
            file: file.into(),
            value,
        }
    }
}

/// Everything a report folder holds, as model values.
#[derive(Debug, Clone, Default)]
pub struct ReportInput {
    /// What the page is called (usually the folder's name).
    pub title: String,
    /// Each document's provenance; the first one is the run's.
    pub provenance: Vec<Doc<Provenance>>,
    pub topology: Option<Doc<Topology>>,
    pub matrices: Vec<Doc<MatrixResult>>,
    pub inferences: Vec<Doc<Inference>>,
    pub studies: Vec<Doc<StudyReport>>,
    /// Lock and atomic contention (`c2c --locks`).
    pub locks: Vec<Doc<LocksResult>>,
    /// `numaprobe loaded-latency` results.
    pub loaded: Vec<Doc<LoadedResult>>,
    /// `numaprobe latency --sweep` results.
    pub sweeps: Vec<Doc<SweepResult>>,
    pub rankings: Vec<Doc<Ranking>>,
    pub bindings: Vec<Doc<PinReport>>,
    /// Cache-line transfer results (`numaprobe c2c`), shown with the matrices.
    pub c2c: Vec<Doc<C2cResult>>,
    /// `numaprobe peak` documents.
    pub peaks: Vec<Doc<PeakResult>>,
    /// Remarks on the run as a whole (run.json's `notes`).
    pub notes: Vec<String>,
    /// False when a document says its result is partial; with a run.json,
    /// its `status` decides.
    pub complete: bool,
    /// run.json's `status`: complete or not, and the phases partial by
    /// budget, interrupted or failed.
    pub run_status: Option<crate::model::run_status::RunStatus>,
    /// Other files of the folder (pictures, summary.md, the JSON documents)
    /// to link to, by name.
    pub files: Vec<String>,
}

impl ReportInput {
    /// The dump's name when the topology was read from a saved description
    /// of another machine (`--sysfs-root`), not from this host.
    pub fn dump_name(&self) -> Option<String> {
        let root = &self.topology.as_ref()?.value.root;
        (root != std::path::Path::new("/")).then(|| {
            root.file_name().map_or_else(
                || root.display().to_string(),
                |n| n.to_string_lossy().into(),
            )
        })
    }

    /// Whether any document holds a measurement (a run's status, a matrix,
    /// a phase): a page with none states no completeness.
    pub fn measured(&self) -> bool {
        self.run_status.is_some()
            || !(self.matrices.is_empty()
                && self.studies.is_empty()
                && self.locks.is_empty()
                && self.loaded.is_empty()
                && self.sweeps.is_empty()
                && self.rankings.is_empty()
                && self.c2c.is_empty()
                && self.peaks.is_empty())
    }
}

/// The sections of the page, in order: (id, heading, what adds one). A
/// section with data is drawn in full; the ones a folder has nothing for
/// are named together on one line (each name keeps its id, so a link to
/// `#study` still lands), with the command that adds each folded below it:
/// on a one-node machine or a fixture dump, five empty boxes would push the
/// figures off the first screen.
pub const SECTIONS: [(&str, &str, &str); 12] = [
    ("machine", "Machine and provenance", "any numaprobe document carries its provenance"),
    ("topology", "Topology", "`numaprobe topo --format json --output DIR/topo.json` (run.json carries one)"),
    ("matrices", "Matrices", "`numaprobe latency` and `numaprobe bandwidth` measure one; a SLIT in the topology is shown too"),
    ("peak", "Peak bandwidth and memory", "`numaprobe peak --output DIR/peak.json`"),
    ("interconnect", "Levels and interconnect", "needs a matrix or a SLIT of two or more nodes (`numaprobe infer`)"),
    ("findings", "Findings and advice", "come from an inference, a binding or the topology's warnings"),
    ("study", "Study", "`numaprobe study --output DIR/study.json`"),
    ("locks", "Lock and atomic contention", "`numaprobe c2c --locks --output DIR/locks.json`"),
    ("loaded", "Loaded latency", "`numaprobe loaded-latency --output DIR/loaded-latency.json`"),
    ("sweep", "Cache-size sweep", "`numaprobe latency --sweep --format json --output DIR/sweep.json`"),
    ("rankings", "Rankings", "`numaprobe policy` and `numaprobe tune` results carry them"),
    ("binding", "Binding and files", "`numaprobe pin --format json --output DIR/pin.json`"),
];

/// The whole page. A section body is empty when the folder has nothing
/// for it.
pub fn render(input: &ReportInput) -> String {
    let bodies = [
        sections::machine(input),
        topology::section(input),
        heatmap::section(input),
        peak::section(input),
        sections::interconnect(input),
        sections::findings(input),
        sections::study(input),
        locks::section(input),
        loaded::section(input),
        sweep::section(input),
        sections::rankings(input),
        sections::binding(input),
    ];
    page::page(input, &bodies)
}

#[cfg(test)]
mod tests;
