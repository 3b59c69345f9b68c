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
mod heatmap;
mod loaded;
mod locks;
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

/// The sections of the page, in order: (id, heading). Every one is always
/// present (with a line saying why it is empty), so a reader and a test
/// find the same structure in every report.
pub const SECTIONS: [(&str, &str); 12] = [
    ("machine", "Machine and provenance"),
    ("topology", "Topology"),
    ("matrices", "Matrices"),
    ("peak", "Peak bandwidth and memory"),
    ("interconnect", "Levels and interconnect"),
    ("findings", "Findings and advice"),
    ("study", "Study"),
    ("locks", "Lock and atomic contention"),
    ("loaded", "Loaded latency"),
    ("sweep", "Cache-size sweep"),
    ("rankings", "Rankings"),
    ("binding", "Binding and files"),
];

/// The whole page.
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
