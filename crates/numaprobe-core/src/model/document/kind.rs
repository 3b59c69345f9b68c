//! The kinds of document numaprobe writes: each kind's name (the `kind`
//! value in the JSON) and its name in words, the [`Typed`] trait that tells
//! a document type's kind, and [`stamp_kind`], which puts the kind into the
//! JSON the writer makes.

use crate::model::c2c::C2cResult;
use crate::model::diff::{CheckReport, DiffReport};
use crate::model::fleet::FleetReport;
use crate::model::infer::Inference;
use crate::model::loaded::LoadedResult;
use crate::model::locks::LocksResult;
use crate::model::matrix::{MatrixKind, MatrixResult};
use crate::model::peak::PeakResult;
use crate::model::pin::PinReport;
use crate::model::policy::PolicyReport;
use crate::model::run::RunReport;
use crate::model::study::{StudyPlanDocument, StudyReport};
use crate::model::sweep::SweepResult;
use crate::model::topo::TopoReport;
use crate::model::tune::TuneReport;

/// The kinds of document numaprobe writes; [`Kind::name`] is the `kind`
/// value in the JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Run,
    Topo,
    Latency,
    Bandwidth,
    Infer,
    Pin,
    Study,
    StudyPlan,
    Policy,
    Tune,
    Fleet,
    Sweep,
    Peak,
    Loaded,
    Locks,
    C2c,
    Diff,
    Check,
}

impl Kind {
    pub const ALL: [Kind; 18] = [
        Kind::Run,
        Kind::Topo,
        Kind::Latency,
        Kind::Bandwidth,
        Kind::Infer,
        Kind::Pin,
        Kind::Study,
        Kind::StudyPlan,
        Kind::Policy,
        Kind::Tune,
        Kind::Fleet,
        Kind::Sweep,
        Kind::Peak,
        Kind::Loaded,
        Kind::Locks,
        Kind::C2c,
        Kind::Diff,
        Kind::Check,
    ];

    /// The `kind` value in the JSON (the command that writes it, mostly).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Run => "run",
            Kind::Topo => "topo",
            Kind::Latency => "latency",
            Kind::Bandwidth => "bandwidth",
            Kind::Infer => "infer",
            Kind::Pin => "pin",
            Kind::Study => "study",
            Kind::StudyPlan => "study-plan",
            Kind::Policy => "policy",
            Kind::Tune => "tune",
            Kind::Fleet => "fleet",
            Kind::Sweep => "latency-sweep",
            Kind::Peak => "peak",
            Kind::Loaded => "loaded-latency",
            Kind::Locks => "locks",
            Kind::C2c => "c2c",
            Kind::Diff => "diff",
            Kind::Check => "check",
        }
    }

    /// What the document is called in words ("not a valid binding
    /// document").
    pub fn noun(self) -> &'static str {
        match self {
            Kind::Topo => "topology",
            Kind::Latency | Kind::Bandwidth => "matrix",
            Kind::Infer => "inference",
            Kind::Pin => "binding",
            Kind::StudyPlan => "study plan",
            Kind::Sweep => "latency sweep",
            Kind::Locks => "lock contention",
            k => k.name(),
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == s)
    }

    /// Every kind's name, for an error that says what would be read.
    pub fn names() -> String {
        Kind::ALL.map(Kind::name).join(", ")
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A document type that knows its kind, so the JSON writer can stamp it.
pub trait Typed {
    fn kind(&self) -> Kind;
}

macro_rules! typed {
    ($($t:ty => $k:expr),* $(,)?) => {
        $(impl Typed for $t {
            fn kind(&self) -> Kind {
                $k
            }
        })*
    };
}

typed! {
    TopoReport => Kind::Topo,
    Inference => Kind::Infer,
    PinReport => Kind::Pin,
    StudyReport => Kind::Study,
    StudyPlanDocument => Kind::StudyPlan,
    PolicyReport => Kind::Policy,
    TuneReport => Kind::Tune,
    FleetReport => Kind::Fleet,
    SweepResult => Kind::Sweep,
    PeakResult => Kind::Peak,
    LoadedResult => Kind::Loaded,
    LocksResult => Kind::Locks,
    C2cResult => Kind::C2c,
    DiffReport => Kind::Diff,
    CheckReport => Kind::Check,
}

impl Typed for MatrixResult {
    fn kind(&self) -> Kind {
        match self.kind {
            MatrixKind::Latency => Kind::Latency,
            MatrixKind::Bandwidth => Kind::Bandwidth,
        }
    }
}

impl<P, C, T> Typed for RunReport<P, C, T> {
    fn kind(&self) -> Kind {
        Kind::Run
    }
}

/// Insert `"kind"` right after the top-level `"schema"` key of a pretty JSON
/// object (top-level keys indented by two spaces, as serde_json writes
/// them). A document that has a top-level `kind` of its own (a matrix says
/// `latency` or `bandwidth`, which are its document kind) keeps it; text
/// without a top-level `schema` is returned unchanged.
pub fn stamp_kind(pretty: &str, kind: Kind) -> String {
    let mut out = pretty.to_string();
    stamp_kind_into(&mut out, kind);
    out
}

/// [`stamp_kind`] in `text` itself, moved along rather than copied: a
/// fleet's document is some hundred megabytes.
pub fn stamp_kind_into(text: &mut String, kind: Kind) {
    if !text.starts_with('{') || text.lines().any(|l| l.starts_with("  \"kind\": ")) {
        return;
    }
    crate::model::compact::insert_after_schema(text, &format!("  \"kind\": \"{kind}\""));
}
