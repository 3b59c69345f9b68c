//! What a numaprobe document is, and the one reader that says what a file or
//! folder holds. Every JSON document numaprobe writes names its `kind`
//! (stamped by `render::to_json` from [`Typed::kind`]); a document written
//! without one is told by its keys, so documents from before the stamp still
//! read. `report`, `diff`, `check`, `infer` and `fleet --from` all ask here.

use super::c2c::C2cResult;
use super::diff::{CheckReport, DiffReport};
use super::fleet::FleetReport;
use super::infer::Inference;
use super::loaded::LoadedResult;
use super::locks::LocksResult;
use super::matrix::{MatrixKind, MatrixResult};
use super::peak::PeakResult;
use super::pin::PinReport;
use super::policy::PolicyReport;
use super::provenance::Provenance;
use super::run::RunReport;
use super::shape::Shape;
use super::study::{StudyPlanDocument, StudyReport};
use super::sweep::SweepResult;
use super::topo::TopoReport;
use super::tune::TuneReport;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

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

impl<P, C> Typed for RunReport<P, C> {
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
    let top = |l: &str, key: &str| l.starts_with(&format!("  \"{key}\": "));
    if !pretty.starts_with('{') || pretty.lines().any(|l| top(l, "kind")) {
        return pretty.to_string();
    }
    let Some(at) = pretty.lines().position(|l| top(l, "schema")) else {
        return pretty.to_string();
    };
    let mut out = String::with_capacity(pretty.len() + 32);
    for (i, l) in pretty.lines().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(l);
        if i == at {
            // The schema line may be the last key (no comma after it).
            if l.ends_with(',') {
                out.push_str(&format!("\n  \"kind\": \"{kind}\","));
            } else {
                out.push_str(&format!(",\n  \"kind\": \"{kind}\""));
            }
        }
    }
    if pretty.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// Is this JSON one of numaprobe's documents (`"schema": "numaprobe/…"`)?
pub fn is_numaprobe(v: &Value) -> bool {
    v.get("schema")
        .and_then(Value::as_str)
        .is_some_and(|s| s.starts_with("numaprobe/"))
}

/// The kind of a JSON document: its declared `kind`, or for a document
/// without one, its keys. None when it is no numaprobe document.
pub fn identify(v: &Value) -> Option<Kind> {
    let obj = v.as_object()?;
    if let Some(k) = obj
        .get("kind")
        .and_then(Value::as_str)
        .and_then(Kind::parse)
    {
        return Some(k);
    }
    by_keys(obj)
}

/// The kind of a document written without `kind`, from the keys only its
/// kind has.
fn by_keys(obj: &Map<String, Value>) -> Option<Kind> {
    let has = |k: &str| obj.contains_key(k);
    let command = obj.get("command").and_then(Value::as_str);
    // run.json: the topology with the matrices beside it; its parts never
    // carry a topology of their own.
    if has("topology") && (has("latency") || has("bandwidth") || has("notes")) {
        return Some(Kind::Run);
    }
    let k = match command {
        Some("study") => Kind::Study,
        Some("study-plan") => Kind::StudyPlan,
        Some("policy") => Kind::Policy,
        Some("latency-sweep") => Kind::Sweep,
        _ if has("cpus") && has("numa_nodes") => Kind::Topo,
        _ if has("levels") && has("hops") => Kind::Infer,
        _ if has("strategy") && (has("placement") || has("commands")) => Kind::Pin,
        _ if has("hitm") && has("pairs") => Kind::C2c,
        _ if has("system") && has("memory") && has("achieved_fraction") => Kind::Peak,
        _ if has("atomics") && has("runs") => Kind::Locks,
        _ if has("curves") && has("timer") => Kind::Loaded,
        _ if has("runs_requested") && has("threads") => Kind::Tune,
        _ if has("outliers") && has("metrics") && has("nodes") => Kind::Fleet,
        _ if has("a") && has("b") && has("criteria") => Kind::Diff,
        _ if has("expect") && has("expect_kind") => Kind::Check,
        _ => return None,
    };
    Some(k)
}

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
    Input(#[from] super::input::InputError),
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
    let text = super::input::read_text(path)?;
    let v: Value = serde_json::from_str(&text).map_err(|e| DocumentError::NotJson {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let kind = identify(&v).ok_or_else(|| DocumentError::Unknown {
        path: path.to_path_buf(),
    })?;
    parse(&v, kind, path)
}

/// A document found in a folder, with its file name and the stamps every
/// document carries.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub file: String,
    pub document: Document,
    /// Its provenance, when it has a readable one.
    pub provenance: Option<Provenance>,
    /// False when the document says `"complete": false`.
    pub complete: bool,
}

/// What a folder holds: its numaprobe documents in file-name order, and
/// the names of all its files (pictures, summary, other tools' JSON, the
/// documents too), hidden files left out.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Folder {
    pub documents: Vec<Found>,
    /// numaprobe documents of no kind this numaprobe knows (a newer
    /// version's, or one written by hand such as a bare `rankings` list),
    /// as JSON with their file name: a folder is still read, and the
    /// caller takes what it can use.
    pub unknown: Vec<(String, Value)>,
    pub files: Vec<String>,
}

impl Folder {
    /// The first document of `kind`.
    pub fn first(&self, kind: Kind) -> Option<&Found> {
        self.documents.iter().find(|d| d.document.kind() == kind)
    }
}

/// Read a folder's documents. A JSON file that is not numaprobe's (no
/// `numaprobe/` schema) is another tool's and only listed; a document of a
/// kind this numaprobe knows that does not read is an error naming it.
pub fn read_folder(dir: &Path) -> Result<Folder, DocumentError> {
    let folder_err = |e: std::io::Error| DocumentError::Folder {
        path: dir.to_path_buf(),
        message: e.to_string(),
    };
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(folder_err)?
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    let mut out = Folder::default();
    for name in names {
        out.files.push(name.clone());
        if !name.ends_with(".json") {
            continue;
        }
        let path = dir.join(&name);
        let text = super::input::read_text(&path)?;
        let Ok(v) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        if !is_numaprobe(&v) {
            continue;
        }
        let Some(kind) = identify(&v) else {
            out.unknown.push((name, v));
            continue;
        };
        out.documents.push(Found {
            document: parse(&v, kind, &path)?,
            provenance: v
                .get("provenance")
                .and_then(|p| Provenance::deserialize(p).ok()),
            complete: v.get("complete").and_then(Value::as_bool) != Some(false),
            file: name,
        });
    }
    Ok(out)
}

/// What a path holds: one document, or a folder of them.
#[derive(Debug, Clone, PartialEq)]
pub enum Holding {
    File(Document),
    Folder(Folder),
}

/// Read a file or a folder (see [`read_file`] and [`read_folder`]).
pub fn read(path: &Path) -> Result<Holding, DocumentError> {
    if !path.exists() {
        return Err(DocumentError::Missing {
            path: path.to_path_buf(),
        });
    }
    if path.is_dir() {
        return read_folder(path).map(Holding::Folder);
    }
    read_file(path).map(Holding::File)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A folder of its own under the system's temporary folder.
    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("numaprobe-doc-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// As the JSON writer stamps it: pretty, then the kind.
    fn written<T: serde::Serialize + Typed>(v: &T) -> String {
        stamp_kind(&serde_json::to_string_pretty(v).unwrap(), v.kind())
    }

    #[test]
    fn every_kind_has_its_own_name() {
        let mut names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
        for k in Kind::ALL {
            assert_eq!(Kind::parse(k.name()), Some(k));
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Kind::ALL.len());
        assert_eq!(Kind::parse("report"), None);
    }

    #[test]
    fn documents_without_a_kind_are_told_by_their_keys() {
        let cases = [
            (
                json!({"topology": {}, "latency": null, "bandwidth": null, "notes": []}),
                Kind::Run,
            ),
            (json!({"topology": {}, "notes": []}), Kind::Run),
            (json!({"cpus": [], "numa_nodes": []}), Kind::Topo),
            (json!({"kind": "latency", "matrix": [[1]]}), Kind::Latency),
            (
                json!({"kind": "bandwidth", "matrix": [[1]]}),
                Kind::Bandwidth,
            ),
            (json!({"levels": [], "hops": []}), Kind::Infer),
            (json!({"strategy": "scatter", "placement": []}), Kind::Pin),
            (json!({"strategy": "compact", "commands": []}), Kind::Pin),
            (json!({"command": "study", "experiments": []}), Kind::Study),
            (
                json!({"command": "study-plan", "plan": {}}),
                Kind::StudyPlan,
            ),
            (json!({"command": "policy"}), Kind::Policy),
            (
                json!({"runs_requested": 3, "threads": 4, "command": ["./app"]}),
                Kind::Tune,
            ),
            (
                json!({"nodes": [], "outliers": [], "metrics": []}),
                Kind::Fleet,
            ),
            (json!({"command": "latency-sweep"}), Kind::Sweep),
            (
                json!({"system": [], "memory": {}, "achieved_fraction": null}),
                Kind::Peak,
            ),
            (json!({"curves": [], "timer": {}}), Kind::Loaded),
            (json!({"atomics": "x86 lock", "runs": []}), Kind::Locks),
            (json!({"hitm": [], "pairs": [], "domains": []}), Kind::C2c),
            (json!({"a": {}, "b": {}, "criteria": {}}), Kind::Diff),
            (
                json!({"expect": "t.json", "expect_kind": "topo", "matches": true}),
                Kind::Check,
            ),
        ];
        let mut seen: Vec<Kind> = cases.iter().map(|(_, k)| *k).collect();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), Kind::ALL.len(), "every kind has a case");
        for (v, k) in cases {
            assert_eq!(identify(&v), Some(k), "{v}");
        }
        for v in [
            json!({"unit": "ns", "matrix": [[1]]}),
            json!([1, 2]),
            json!({"x": 1}),
        ] {
            assert_eq!(identify(&v), None, "{v}");
        }
    }

    #[test]
    fn a_declared_kind_wins_over_the_keys() {
        // Keys of a topology, declared a peak: the declaration is the contract.
        let v = json!({"kind": "peak", "cpus": [], "numa_nodes": []});
        assert_eq!(identify(&v), Some(Kind::Peak));
        // An unknown declared kind falls back to the keys.
        let v = json!({"kind": "levels", "cpus": [], "numa_nodes": []});
        assert_eq!(identify(&v), Some(Kind::Topo));
    }

    #[test]
    fn the_kind_follows_the_schema_and_a_documents_own_kind_stays() {
        let out = stamp_kind(
            "{\n  \"schema\": \"numaprobe/1\",\n  \"x\": 1\n}",
            Kind::Topo,
        );
        assert_eq!(
            out,
            "{\n  \"schema\": \"numaprobe/1\",\n  \"kind\": \"topo\",\n  \"x\": 1\n}"
        );
        let last = stamp_kind("{\n  \"schema\": \"numaprobe/1\"\n}\n", Kind::Pin);
        let v: Value = serde_json::from_str(&last).unwrap();
        assert_eq!(v["kind"], "pin");
        assert!(last.ends_with("}\n"));
        let own = "{\n  \"schema\": \"numaprobe/1\",\n  \"kind\": \"bandwidth\"\n}";
        assert_eq!(stamp_kind(own, Kind::Latency), own);
        // A nested `kind` is no top-level one.
        let nested = "{\n  \"schema\": \"numaprobe/1\",\n  \"levels\": [\n    {\n      \"kind\": \"local\"\n    }\n  ]\n}";
        let v: Value = serde_json::from_str(&stamp_kind(nested, Kind::Infer)).unwrap();
        assert_eq!(v["kind"], "infer");
        assert_eq!(stamp_kind("[1]", Kind::Run), "[1]");
    }

    #[test]
    fn a_folder_says_what_it_holds_and_leaves_other_files_listed() {
        let d = temp_dir("folder");
        let lat = crate::model::matrix::tests::sample();
        let run = crate::model::run::tests::sample(crate::model::extra::ExtraStatus::Partial);
        std::fs::write(d.join("latency.json"), written(&lat)).unwrap();
        std::fs::write(d.join("run.json"), written(&run)).unwrap();
        std::fs::write(d.join("other.json"), "{\"name\": \"another tool\"}").unwrap();
        let newer = json!({"schema": "numaprobe/1", "kind": "from-a-newer-numaprobe"});
        std::fs::write(d.join("newer.json"), newer.to_string()).unwrap();
        std::fs::write(d.join("summary.md"), "# numaprobe report\n").unwrap();
        std::fs::write(d.join(".numaprobe-manifest"), "run.json\n").unwrap();
        let f = match read(&d).unwrap() {
            Holding::Folder(f) => f,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            f.files,
            [
                "latency.json",
                "newer.json",
                "other.json",
                "run.json",
                "summary.md"
            ]
        );
        assert_eq!(f.unknown, [("newer.json".to_string(), newer)]);
        let kinds: Vec<(&str, Kind)> = f
            .documents
            .iter()
            .map(|x| (x.file.as_str(), x.document.kind()))
            .collect();
        assert_eq!(
            kinds,
            [("latency.json", Kind::Latency), ("run.json", Kind::Run)]
        );
        assert_eq!(
            f.first(Kind::Latency).unwrap().document,
            Document::Matrix(Box::new(lat))
        );
        match &f.first(Kind::Run).unwrap().document {
            Document::Run(r) => assert_eq!(r.report, run),
            other => panic!("{other:?}"),
        }
        assert!(f.first(Kind::Topo).is_none());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_run_json_written_without_kind_reads_as_a_run() {
        // Built into the test so it runs where the source tree is not (the
        // arm64 rig runs the unit tests inside its guest).
        let text = include_str!("../../../../tests/fixtures/fleet/taskset-one-cpu/node1/run.json");
        let d = temp_dir("legacy-run");
        let p = d.join("run.json");
        std::fs::write(&p, text).unwrap();
        match read_file(&p).unwrap() {
            Document::Run(r) => {
                assert!(r.topology.is_some());
                assert!(r.report.latency.is_some());
            }
            other => panic!("{:?}", other.kind()),
        }
    }

    #[test]
    fn an_unknown_or_broken_document_is_one_line_naming_the_file_and_what_is_read() {
        let d = temp_dir("bad");
        let unknown = d.join("mystery.json");
        std::fs::write(&unknown, "{\"schema\": \"numaprobe/1\", \"x\": 1}").unwrap();
        let e = read_file(&unknown).unwrap_err().to_string();
        assert!(e.starts_with(&unknown.display().to_string()), "{e}");
        assert!(e.contains("run, topo, latency, bandwidth"), "{e}");
        assert!(!e.contains('\n'), "{e}");
        // A numaprobe document that does not read stops a folder's reading.
        std::fs::write(
            &unknown,
            "{\"schema\": \"numaprobe/1\", \"kind\": \"topo\", \"cpus\": 3}",
        )
        .unwrap();
        let e = read(&d).unwrap_err().to_string();
        assert!(
            e.contains("mystery.json: not a valid topology document"),
            "{e}"
        );
        std::fs::write(
            &unknown,
            "{\"schema\": \"numaprobe/9\", \"kind\": \"topo\"}",
        )
        .unwrap();
        let e = read_file(&unknown).unwrap_err().to_string();
        assert!(
            e.contains("schema numaprobe/9; this numaprobe reads numaprobe/1"),
            "{e}"
        );
        std::fs::write(&unknown, "not json").unwrap();
        let e = read_file(&unknown).unwrap_err().to_string();
        assert!(e.contains("not JSON"), "{e}");
        let e = read(&d.join("nowhere")).unwrap_err().to_string();
        assert!(e.ends_with("nowhere: no such file or folder"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_matrix_whose_kind_disagrees_with_its_content_is_refused() {
        let lat = crate::model::matrix::tests::sample();
        let v: Value = serde_json::from_str(&written(&lat)).unwrap();
        let e = parse(&v, Kind::Bandwidth, Path::new("b.json")).unwrap_err();
        assert!(
            e.to_string()
                .contains("it says bandwidth but holds a latency matrix"),
            "{e}"
        );
        assert!(parse(&v, Kind::Latency, Path::new("l.json")).is_ok());
    }

    #[test]
    fn every_kind_is_in_the_manual() {
        let doc = include_str!("../../../../doc/json.md");
        for k in Kind::ALL {
            assert!(doc.contains(&format!("| `{}` |", k.name())), "{k}");
        }
    }
}
