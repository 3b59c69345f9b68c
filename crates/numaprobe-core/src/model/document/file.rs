//! Reading one document: the [`Document`] it becomes, the errors of
//! reading (all bad input), [`parse`] that reads a text as a given kind
//! (run.json part by part), [`from_bytes`] and [`read_file`].

use super::identify::Head;
use super::kind::{Kind, Typed};
use crate::model::bounded;
use crate::model::c2c::C2cResult;
use crate::model::diff::{CheckReport, DiffReport};
use crate::model::fleet::FleetReport;
use crate::model::infer::Inference;
use crate::model::input::{read_text, InputError};
use crate::model::loaded::LoadedResult;
use crate::model::locks::LocksResult;
use crate::model::matrix::MatrixResult;
use crate::model::peak::PeakResult;
use crate::model::pin::PinReport;
use crate::model::policy::PolicyReport;
use crate::model::run::RunReport;
use crate::model::shape::Shape;
use crate::model::study::{StudyPlanDocument, StudyReport};
use crate::model::sweep::SweepResult;
use crate::model::topo::TopoReport;
use crate::model::tune::TuneReport;
use serde::de::{DeserializeOwned, IgnoredAny};
use std::path::{Path, PathBuf};

/// One document, read and checked against its declared dimensions.
#[derive(Debug, Clone, PartialEq)]
pub enum Document {
    Run(Box<Run>),
    Topo(Box<TopoReport>),
    /// A latency or bandwidth matrix (its `kind` says which).
    Matrix(Box<MatrixResult>),
    Infer(Box<Inference>),
    Pin(Box<PinReport>),
    Study(Box<StudyReport>),
    StudyPlan(Box<StudyPlanDocument>),
    Policy(Box<PolicyReport>),
    Tune(Box<TuneReport>),
    Fleet(Box<FleetReport>),
    Sweep(Box<SweepResult>),
    Peak(Box<PeakResult>),
    Loaded(Box<LoadedResult>),
    Locks(Box<LocksResult>),
    C2c(Box<C2cResult>),
    Diff(Box<DiffReport>),
    Check(Box<CheckReport>),
}

/// run.json as a reader takes it: its topology read as the topology
/// document it holds (None when the run has none); the planner's record and
/// the interleave checks, which only the run itself uses, skipped unbuilt.
pub type RunRead = RunReport<IgnoredAny, IgnoredAny, Option<TopoReport>>;

/// run.json, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub report: RunRead,
}

impl Document {
    pub fn kind(&self) -> Kind {
        match self {
            Document::Run(_) => Kind::Run,
            Document::Topo(_) => Kind::Topo,
            Document::Matrix(m) => m.kind(),
            Document::Infer(_) => Kind::Infer,
            Document::Pin(_) => Kind::Pin,
            Document::Study(_) => Kind::Study,
            Document::StudyPlan(_) => Kind::StudyPlan,
            Document::Policy(_) => Kind::Policy,
            Document::Tune(_) => Kind::Tune,
            Document::Fleet(_) => Kind::Fleet,
            Document::Sweep(_) => Kind::Sweep,
            Document::Peak(_) => Kind::Peak,
            Document::Loaded(_) => Kind::Loaded,
            Document::Locks(_) => Kind::Locks,
            Document::C2c(_) => Kind::C2c,
            Document::Diff(_) => Kind::Diff,
            Document::Check(_) => Kind::Check,
        }
    }
}

/// Why a document could not be read: all bad input.
#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("{}: not JSON ({message}); give a numaprobe JSON document ({})", path.display(), Kind::names())]
    NotJson { path: PathBuf, message: String },
    #[error("{}: not a numaprobe document; numaprobe reads these kinds: {}", path.display(), Kind::names())]
    Unknown { path: PathBuf },
    #[error("{}: schema {schema}; this numaprobe reads {}", path.display(), crate::SCHEMA)]
    Schema { path: PathBuf, schema: String },
    #[error("{}: not a valid {} document: {message}", path.display(), kind.noun())]
    Invalid {
        path: PathBuf,
        kind: Kind,
        message: String,
    },
    #[error("{}: no such file or folder", path.display())]
    Missing { path: PathBuf },
    #[error("{}: {found}; {reader} takes {takes}", path.display())]
    NotTaken {
        path: PathBuf,
        found: String,
        reader: &'static str,
        takes: String,
    },
    #[error("{}: cannot read the folder: {message}", path.display())]
    Folder { path: PathBuf, message: String },
}

/// Read a document's text as a document of `kind` (told by its [`Head`],
/// whose schema must be this numaprobe's): straight into its typed shape,
/// its memory bounded by its size (`model::bounded`), then its declared
/// dimensions checked against its data. `path` names it in errors.
pub fn parse(
    bytes: &[u8],
    head: &Head,
    kind: Kind,
    path: &Path,
) -> Result<Document, DocumentError> {
    if let Some(s) = &head.schema {
        if s != crate::SCHEMA {
            return Err(DocumentError::Schema {
                path: path.to_path_buf(),
                schema: s.chars().take(80).collect(),
            });
        }
    }
    let bad = |message: String| DocumentError::Invalid {
        path: path.to_path_buf(),
        kind,
        message,
    };
    let doc = match kind {
        Kind::Run => Document::Run(Box::new(run(bytes).map_err(bad)?)),
        Kind::Topo => Document::Topo(shaped(bytes).map_err(bad)?),
        Kind::Latency | Kind::Bandwidth => {
            let m: Box<MatrixResult> = shaped(bytes).map_err(bad)?;
            if m.kind() != kind {
                return Err(bad(format!(
                    "it says {kind} but holds a {} matrix",
                    m.kind()
                )));
            }
            Document::Matrix(m)
        }
        Kind::Infer => Document::Infer(shaped(bytes).map_err(bad)?),
        Kind::Pin => Document::Pin(shaped(bytes).map_err(bad)?),
        Kind::Study => Document::Study(shaped(bytes).map_err(bad)?),
        Kind::StudyPlan => Document::StudyPlan(boxed(bytes).map_err(bad)?),
        Kind::Policy => Document::Policy(boxed(bytes).map_err(bad)?),
        Kind::Tune => Document::Tune(boxed(bytes).map_err(bad)?),
        Kind::Fleet => Document::Fleet(boxed(bytes).map_err(bad)?),
        Kind::Sweep => Document::Sweep(shaped(bytes).map_err(bad)?),
        Kind::Peak => Document::Peak(shaped(bytes).map_err(bad)?),
        Kind::Loaded => Document::Loaded(shaped(bytes).map_err(bad)?),
        Kind::Locks => Document::Locks(shaped(bytes).map_err(bad)?),
        Kind::C2c => Document::C2c(shaped(bytes).map_err(bad)?),
        Kind::Diff => Document::Diff(boxed(bytes).map_err(bad)?),
        Kind::Check => Document::Check(boxed(bytes).map_err(bad)?),
    };
    Ok(doc)
}

/// The text as a `T`, its memory bounded by its size.
fn typed<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    bounded::from_slice(bytes).map_err(|e| e.to_string())
}

/// [`typed`], in a box.
fn boxed<T: DeserializeOwned>(bytes: &[u8]) -> Result<Box<T>, String> {
    typed(bytes).map(Box::new)
}

/// [`typed`], then its declared dimensions checked against its data.
fn shaped<T: DeserializeOwned + Shape>(bytes: &[u8]) -> Result<Box<T>, String> {
    let t: T = typed(bytes)?;
    t.check_shape().map_err(|e| e.to_string())?;
    Ok(Box::new(t))
}

/// run.json, every part checked as its own document would be.
fn run(bytes: &[u8]) -> Result<Run, String> {
    let report: RunRead = typed(bytes)?;
    let check = |what: &str, s: &dyn Shape| s.check_shape().map_err(|e| format!("its {what}: {e}"));
    if let Some(t) = &report.topology {
        check("topology", t)?;
    }
    for m in report.matrices() {
        check(m.kind().name(), m)?;
    }
    for i in report.inferences() {
        check("inference", i)?;
    }
    if let Some(b) = &report.binding {
        check("binding", b)?;
    }
    if let Some(p) = report.peak.as_ref().and_then(|o| o.result.as_ref()) {
        check("peak", p)?;
    }
    if let Some(s) = report.sweep.as_ref().and_then(|o| o.result.as_ref()) {
        check("latency sweep", s)?;
    }
    if let Some(c) = report.c2c.as_ref().and_then(|o| o.result.as_ref()) {
        check("c2c", c)?;
    }
    if let Some(l) = report
        .loaded_latency
        .as_ref()
        .and_then(|o| o.result.as_ref())
    {
        check("loaded latency", l)?;
    }
    Ok(Run { report })
}

/// The [`Head`] of a document's text; text that is not JSON is an error
/// naming `path`.
pub fn head(bytes: &[u8], path: &Path) -> Result<Head, DocumentError> {
    Head::read(bytes).map_err(|e| DocumentError::NotJson {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// A document's text as its [`Head`] and the document: JSON, a kind
/// numaprobe writes, valid for that kind. `path` names it in errors.
pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<(Head, Document), DocumentError> {
    let head = head(bytes, path)?;
    let kind = head.kind().ok_or_else(|| DocumentError::Unknown {
        path: path.to_path_buf(),
    })?;
    let doc = parse(bytes, &head, kind, path)?;
    Ok((head, doc))
}

/// Read one file as a numaprobe document: bounded in size, JSON, a kind
/// numaprobe writes, valid for that kind.
pub fn read_file(path: &Path) -> Result<Document, DocumentError> {
    let text = read_text(path)?;
    from_bytes(text.as_bytes(), path).map(|(_, doc)| doc)
}
