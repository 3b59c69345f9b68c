//! Reading one document: the [`Document`] it becomes, the errors of
//! reading (all bad input), [`parse`] that checks a JSON value as a given
//! kind (run.json part by part), and [`read_file`].

use super::identify::identify;
use super::kind::{Kind, Typed};
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
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
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

/// run.json with its topology read as the topology document it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub report: RunReport,
    pub topology: Option<TopoReport>,
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
    #[error("{}: cannot read the folder: {message}", path.display())]
    Folder { path: PathBuf, message: String },
}

/// Read one JSON value as a document of `kind` (see [`identify`]); `path`
/// names it in errors.
pub fn parse(v: &Value, kind: Kind, path: &Path) -> Result<Document, DocumentError> {
    if let Some(s) = v.get("schema").and_then(Value::as_str) {
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
    fn typed<T: DeserializeOwned>(v: &Value) -> Result<T, String> {
        T::deserialize(v).map_err(|e| e.to_string())
    }
    fn shaped<T: DeserializeOwned + Shape>(v: &Value) -> Result<Box<T>, String> {
        let t: T = typed(v)?;
        t.check_shape().map_err(|e| e.to_string())?;
        Ok(Box::new(t))
    }
    let doc = match kind {
        Kind::Run => Document::Run(Box::new(run(v).map_err(bad)?)),
        Kind::Topo => Document::Topo(shaped(v).map_err(bad)?),
        Kind::Latency | Kind::Bandwidth => {
            let m: Box<MatrixResult> = shaped(v).map_err(bad)?;
            if m.kind() != kind {
                return Err(bad(format!(
                    "it says {kind} but holds a {} matrix",
                    m.kind()
                )));
            }
            Document::Matrix(m)
        }
        Kind::Infer => Document::Infer(shaped(v).map_err(bad)?),
        Kind::Pin => Document::Pin(shaped(v).map_err(bad)?),
        Kind::Study => Document::Study(shaped(v).map_err(bad)?),
        Kind::StudyPlan => Document::StudyPlan(Box::new(typed(v).map_err(bad)?)),
        Kind::Policy => Document::Policy(Box::new(typed(v).map_err(bad)?)),
        Kind::Tune => Document::Tune(Box::new(typed(v).map_err(bad)?)),
        Kind::Fleet => Document::Fleet(Box::new(typed(v).map_err(bad)?)),
        Kind::Sweep => Document::Sweep(shaped(v).map_err(bad)?),
        Kind::Peak => Document::Peak(shaped(v).map_err(bad)?),
        Kind::Loaded => Document::Loaded(shaped(v).map_err(bad)?),
        Kind::Locks => Document::Locks(shaped(v).map_err(bad)?),
        Kind::C2c => Document::C2c(shaped(v).map_err(bad)?),
        Kind::Diff => Document::Diff(Box::new(typed(v).map_err(bad)?)),
        Kind::Check => Document::Check(Box::new(typed(v).map_err(bad)?)),
    };
    Ok(doc)
}

/// run.json, every part checked as its own document would be.
fn run(v: &Value) -> Result<Run, String> {
    let report: RunReport = RunReport::deserialize(v).map_err(|e| e.to_string())?;
    let topology = match report.topology.as_object() {
        None => None,
        Some(_) => {
            let t = TopoReport::deserialize(&report.topology)
                .map_err(|e| format!("its topology: {e}"))?;
            t.check_shape().map_err(|e| format!("its topology: {e}"))?;
            Some(t)
        }
    };
    let check = |what: &str, s: &dyn Shape| s.check_shape().map_err(|e| format!("its {what}: {e}"));
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
    Ok(Run { report, topology })
}

/// Read one file as a numaprobe document: bounded in size, JSON, a kind
/// numaprobe writes, valid for that kind.
pub fn read_file(path: &Path) -> Result<Document, DocumentError> {
    let text = read_text(path)?;
    let v: Value = serde_json::from_str(&text).map_err(|e| DocumentError::NotJson {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let kind = identify(&v).ok_or_else(|| DocumentError::Unknown {
        path: path.to_path_buf(),
    })?;
    parse(&v, kind, path)
}
