//! What `numaprobe export` hands to an exporter: the parts of one numaprobe
//! document or report folder that another tool can take (the topology, the
//! two matrices and the run's extra phases, the rows of `c2c --locks`,
//! `policy` and `tune`, a check's answer, a fleet's outliers, and the
//! provenance that dates them), read with the one document reader
//! ([`super::document`]). Which kinds each target takes is decided here, so
//! the refusal names them; the exporters in `render::prometheus` and
//! `render::hwloc_xml` only render what this holds.

use super::diff::CheckReport;
use super::document::{self, Document, DocumentError, Folder, Kind};
use super::fleet::FleetReport;
use super::matrix::MatrixResult;
use super::provenance::Provenance;
use super::topo::TopoReport;
use std::path::{Path, PathBuf};

/// Where an export goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// node_exporter's textfile-collector format.
    Prometheus,
    /// hwloc's v2 XML, with the matrices as memory attributes and distances.
    Hwloc,
}

impl Target {
    pub fn name(self) -> &'static str {
        match self {
            Target::Prometheus => "prometheus",
            Target::Hwloc => "hwloc",
        }
    }

    /// The document kinds this target exports. hwloc describes a machine,
    /// so it needs one: a run (its topology) or a topology document.
    pub fn kinds(self) -> &'static [Kind] {
        match self {
            Target::Prometheus => &[
                Kind::Run,
                Kind::Topo,
                Kind::Latency,
                Kind::Bandwidth,
                Kind::Locks,
                Kind::Policy,
                Kind::Tune,
                Kind::Check,
                Kind::Fleet,
            ],
            Target::Hwloc => &[Kind::Run, Kind::Topo],
        }
    }

    fn kind_names(self) -> String {
        self.kinds()
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// What an exporter renders; every part is optional, and at least one that
/// the target takes is there (see [`load`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Exported {
    /// The path read, for the exporters' provenance line.
    pub source: String,
    /// The provenance of the document the measurements come from (the
    /// run.json, else the first measuring document read).
    pub provenance: Option<Provenance>,
    /// True unless a measuring document read says it is partial.
    pub complete: bool,
    /// The check result's own provenance: a check is dated by when it ran,
    /// not by the run it may have compared.
    pub check_provenance: Option<Provenance>,
    /// The fleet document's own provenance (the node that gathered it).
    pub fleet_provenance: Option<Provenance>,
    pub topology: Option<TopoReport>,
    pub latency: Option<MatrixResult>,
    pub bandwidth: Option<MatrixResult>,
    pub check: Option<CheckReport>,
    pub fleet: Option<FleetReport>,
    /// The run's extra phases, where it measured them.
    pub c2c: Option<super::c2c::C2cResult>,
    pub loaded: Option<super::loaded::LoadedResult>,
    pub peak: Option<super::peak::PeakResult>,
    pub sweep: Option<super::sweep::SweepResult>,
    /// Documents of this machine measured apart from a run: their rows
    /// carry trust flags as the run's figures do.
    pub locks: Option<super::locks::LocksResult>,
    pub policy: Option<super::policy::PolicyReport>,
    pub tune: Option<super::tune::TuneReport>,
}

/// Why nothing can be exported: bad input, one line each.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Document(#[from] DocumentError),
    #[error("{}: a {kind} document cannot be exported to {}; it takes {}", path.display(), target.name(), target.kind_names())]
    Kind {
        path: PathBuf,
        kind: Kind,
        target: Target,
    },
    #[error("{}: no document that exports to {} in the folder; it takes {}", path.display(), target.name(), target.kind_names())]
    Empty { path: PathBuf, target: Target },
    #[error("{}: the run holds no topology, and hwloc needs one; export a run.json written with its topology, or a topo document", path.display())]
    NoTopology { path: PathBuf },
}

/// Read `path` (a document or a report folder) for `target`.
pub fn load(path: &Path, target: Target) -> Result<Exported, ExportError> {
    let mut out = Exported {
        source: path.display().to_string(),
        complete: true,
        ..Exported::default()
    };
    if path.is_dir() {
        let folder = document::read_folder(path)?;
        from_folder(&folder, &mut out);
    } else {
        if !path.exists() {
            return Err(DocumentError::Missing {
                path: path.to_path_buf(),
            }
            .into());
        }
        // One read: the document and its provenance from the same text.
        let text = super::input::read_text(path).map_err(DocumentError::from)?;
        let head = document::head(text.as_bytes(), path)?;
        let kind = head.kind().ok_or_else(|| DocumentError::Unknown {
            path: path.to_path_buf(),
        })?;
        if !target.kinds().contains(&kind) {
            return Err(ExportError::Kind {
                path: path.to_path_buf(),
                kind,
                target,
            });
        }
        let doc = document::parse(text.as_bytes(), &head, kind, path)?;
        *out.provenance_of(kind) = head.provenance;
        if measures(kind) {
            out.complete = head.complete != Some(false);
        }
        take(doc, &mut out);
    }
    let has_any = out.topology.is_some()
        || out.latency.is_some()
        || out.bandwidth.is_some()
        || out.locks.is_some()
        || out.policy.is_some()
        || out.tune.is_some()
        || out.check.is_some()
        || out.fleet.is_some();
    match target {
        Target::Hwloc if out.topology.is_none() && has_any => Err(ExportError::NoTopology {
            path: path.to_path_buf(),
        }),
        _ if !has_any => Err(ExportError::Empty {
            path: path.to_path_buf(),
            target,
        }),
        _ => Ok(out),
    }
}

impl Exported {
    /// Where a document of `kind` keeps its provenance: a check and a fleet
    /// are dated apart from the measurements they sit beside.
    fn provenance_of(&mut self, kind: Kind) -> &mut Option<Provenance> {
        match kind {
            Kind::Check => &mut self.check_provenance,
            Kind::Fleet => &mut self.fleet_provenance,
            _ => &mut self.provenance,
        }
    }

    /// True when the export holds anything this machine measured or
    /// described (a run's part, not only a check or a fleet).
    pub fn has_run(&self) -> bool {
        self.topology.is_some()
            || self.latency.is_some()
            || self.bandwidth.is_some()
            || self.c2c.is_some()
            || self.loaded.is_some()
            || self.peak.is_some()
            || self.sweep.is_some()
            || self.locks.is_some()
            || self.policy.is_some()
            || self.tune.is_some()
    }
}

/// A document of the machine itself (its topology or measurements), whose
/// completeness is the run's.
fn measures(kind: Kind) -> bool {
    !matches!(kind, Kind::Check | Kind::Fleet)
}

/// A folder: its run.json first (topology and both matrices), then the
/// first document of each other kind for what is still missing.
fn from_folder(folder: &Folder, out: &mut Exported) {
    let mut order: Vec<&document::Found> = folder.documents.iter().collect();
    // The run first: it dates the measurements.
    order.sort_by_key(|f| f.document.kind() != Kind::Run);
    for found in order {
        if !Target::Prometheus.kinds().contains(&found.document.kind()) {
            continue;
        }
        let kind = found.document.kind();
        if take(found.document.clone(), out) {
            let slot = out.provenance_of(kind);
            if slot.is_none() {
                *slot = found.provenance.clone();
            }
            if measures(kind) {
                out.complete &= found.complete;
            }
        }
    }
}

/// Put a document's parts where nothing is yet; true when it gave any.
fn take(doc: Document, out: &mut Exported) -> bool {
    fn fill<T>(slot: &mut Option<T>, v: Option<T>) -> bool {
        if slot.is_none() && v.is_some() {
            *slot = v;
            return true;
        }
        false
    }
    match doc {
        Document::Run(r) => {
            let run = *r;
            let t = fill(&mut out.topology, run.report.topology);
            let l = fill(&mut out.latency, run.report.latency);
            let b = fill(&mut out.bandwidth, run.report.bandwidth);
            fill(&mut out.c2c, run.report.c2c.and_then(|x| x.result));
            fill(
                &mut out.loaded,
                run.report.loaded_latency.and_then(|x| x.result),
            );
            fill(&mut out.peak, run.report.peak.and_then(|x| x.result));
            fill(&mut out.sweep, run.report.sweep.and_then(|x| x.result));
            t || l || b
        }
        Document::Topo(t) => fill(&mut out.topology, Some(*t)),
        Document::Matrix(m) => match m.kind {
            super::matrix::MatrixKind::Latency => fill(&mut out.latency, Some(*m)),
            super::matrix::MatrixKind::Bandwidth => fill(&mut out.bandwidth, Some(*m)),
        },
        Document::Locks(l) => fill(&mut out.locks, Some(*l)),
        Document::Policy(p) => fill(&mut out.policy, Some(*p)),
        Document::Tune(t) => fill(&mut out.tune, Some(*t)),
        Document::Check(c) => fill(&mut out.check, Some(*c)),
        Document::Fleet(f) => fill(&mut out.fleet, Some(*f)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("numaprobe-export-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn written<T: serde::Serialize + document::Typed>(v: &T) -> String {
        document::stamp_kind(&serde_json::to_string_pretty(v).unwrap(), v.kind())
    }

    #[test]
    fn a_document_of_a_kind_the_target_does_not_take_is_refused_naming_those_it_takes() {
        let d = temp_dir("kinds");
        let lat = crate::model::matrix::tests::sample();
        let p = d.join("latency.json");
        std::fs::write(&p, written(&lat)).unwrap();
        let e = load(&p, Target::Hwloc).unwrap_err().to_string();
        assert!(
            e.ends_with("a latency document cannot be exported to hwloc; it takes run, topo"),
            "{e}"
        );
        let got = load(&p, Target::Prometheus).unwrap();
        assert_eq!(got.latency, Some(lat));
        assert!(got.topology.is_none() && got.bandwidth.is_none());
        let pin = d.join("pin.json");
        std::fs::write(
            &pin,
            "{\"schema\": \"numaprobe/1\", \"kind\": \"pin\", \"strategy\": \"x\"}",
        )
        .unwrap();
        let e = load(&pin, Target::Prometheus).unwrap_err().to_string();
        assert!(
            e.contains("a pin document cannot be exported to prometheus; it takes run, topo, latency, bandwidth, locks, policy, tune, check, fleet"),
            "{e}"
        );
        assert!(!e.contains('\n'));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_run_without_topology_cannot_go_to_hwloc_and_a_folder_without_documents_is_empty() {
        let d = temp_dir("empty");
        let run = crate::model::run::tests::sample(crate::model::extra::ExtraStatus::Partial);
        let p = d.join("run.json");
        std::fs::write(&p, written(&run)).unwrap();
        // A run of nothing measured and no topology holds nothing to export.
        let e = load(&p, Target::Prometheus).unwrap_err().to_string();
        assert!(e.contains("no document that exports to prometheus"), "{e}");
        let mut with_matrix = run.clone();
        with_matrix.latency = Some(crate::model::matrix::tests::sample());
        std::fs::write(&p, written(&with_matrix)).unwrap();
        let e = load(&p, Target::Hwloc).unwrap_err().to_string();
        assert!(e.contains("holds no topology, and hwloc needs one"), "{e}");
        assert!(load(&p, Target::Prometheus).unwrap().latency.is_some());
        let empty = temp_dir("empty-folder");
        std::fs::write(empty.join("notes.txt"), "x").unwrap();
        let e = load(&empty, Target::Prometheus).unwrap_err().to_string();
        assert!(
            e.contains("no document that exports to prometheus in the folder"),
            "{e}"
        );
        std::fs::remove_dir_all(&d).unwrap();
        std::fs::remove_dir_all(&empty).unwrap();
    }

    #[test]
    fn a_locks_document_exports_alone_and_beside_a_run_in_its_folder() {
        let d = temp_dir("locks");
        // The shipped example, not a renderer's fixture: the model names
        // nothing above it.
        let mut locks: crate::model::locks::LocksResult = serde_json::from_str(include_str!(
            "../../../../tests/fixtures/documents/locks.json"
        ))
        .unwrap();
        locks.complete = false;
        let p = d.join("locks.json");
        std::fs::write(&p, written(&locks)).unwrap();
        let got = load(&p, Target::Prometheus).unwrap();
        assert_eq!(got.locks, Some(locks.clone()));
        assert!(
            got.has_run() && !got.complete,
            "a partial locks run says so"
        );
        let e = load(&p, Target::Hwloc).unwrap_err().to_string();
        assert!(
            e.contains("a locks document cannot be exported to hwloc"),
            "{e}"
        );
        let mut run = crate::model::run::tests::sample(crate::model::extra::ExtraStatus::Partial);
        run.latency = Some(crate::model::matrix::tests::sample());
        std::fs::write(d.join("run.json"), written(&run)).unwrap();
        let got = load(&d, Target::Prometheus).unwrap();
        assert_eq!(got.locks, Some(locks));
        assert!(got.latency.is_some() && got.policy.is_none() && got.tune.is_none());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_folder_gives_the_runs_matrices_before_a_loose_documents() {
        let d = temp_dir("folder");
        let mut run = crate::model::run::tests::sample(crate::model::extra::ExtraStatus::Partial);
        let lat = crate::model::matrix::tests::sample();
        run.latency = Some(lat.clone());
        let mut other = lat.clone();
        other.notes.push("measured apart from the run".into());
        // "a-latency.json" sorts before run.json; the run still wins.
        std::fs::write(d.join("a-latency.json"), written(&other)).unwrap();
        std::fs::write(d.join("run.json"), written(&run)).unwrap();
        let got = load(&d, Target::Prometheus).unwrap();
        assert_eq!(got.latency, Some(lat));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
