//! Comparing two runs (`numaprobe diff`) and checking a machine against a
//! saved description (`numaprobe check`).
//!
//! Flow: [`load`] reads each side by the one input rule
//! (`model::document::pick`: a report folder, or one document of a kind
//! the reader takes: [`DIFF`], [`EXPECT`], [`MEASURED`]) into a [`Side`]; [`diff`] compares two sides of the same kind
//! into a `model::diff::DiffReport`: topology and firmware differences
//! ([`topo`]), the kernel, the measurement parameters, and every measured
//! cell with a noise-aware verdict ([`cells`], statistics in [`stats`];
//! a c2c result's CPU pairs in [`c2c`]).
//! [`check::check`] compares this machine with a saved topology, run,
//! binding or a fleet's group baseline ([`baseline`]), on the terms of
//! [`judge`]. Nothing here prints;
//! errors are [`CompareError`]s, all of them bad input but a file that is
//! there and could not be read (`InputError::Io`).

pub mod baseline;
pub mod c2c;
pub mod cells;
pub mod check;
pub mod judge;
pub mod pool;
pub mod stats;
pub mod topo;
pub mod trust;

use crate::model::c2c::C2cResult;
use crate::model::diff::{Criteria, DiffReport, Difference, Origin, Section};
use crate::model::document::{self, Accepts, Document, DocumentError, Kind};
use crate::model::fleet::FleetReport;
use crate::model::matrix::MatrixKind;
use crate::model::matrix::MatrixResult;
use crate::model::pin::PinReport;
use crate::topology::Topology;
use std::path::{Path, PathBuf};

/// Why a side could not be read: all bad input (exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error("{0}: no such file or folder")]
    Missing(PathBuf),
    #[error(transparent)]
    Input(#[from] crate::model::input::InputError),
    #[error(transparent)]
    Document(#[from] crate::model::document::DocumentError),
    #[error("{path}: not JSON ({message}); give a report folder or a numaprobe JSON document")]
    NotJson { path: PathBuf, message: String },
    #[error("{path}: {what}")]
    Unsupported { path: PathBuf, what: String },
    #[error("cannot compare a {a} with a {b}: give two report folders or two documents of the same kind")]
    Mismatch { a: String, b: String },
}

/// What one side holds.
#[derive(Debug, Clone)]
pub struct Side {
    pub origin: Origin,
    pub topology: Option<Topology>,
    pub latency: Option<MatrixResult>,
    pub bandwidth: Option<MatrixResult>,
    /// A c2c result: its CPU pairs' transfer latencies.
    pub c2c: Option<C2cResult>,
    pub pin: Option<PinReport>,
    /// A fleet's comparison (`fleet.json`): an expectation for `check`.
    pub fleet: Option<Box<FleetReport>>,
    /// numaprobe's version from the provenance, when known.
    pub version: Option<String>,
    /// The system check made before measuring (load, steal, warnings), from
    /// the provenance; None when the documents do not carry one.
    pub system: Option<crate::system_check::SystemCheck>,
    /// The noise of each figure measured in several runs, when the side
    /// pools them ([`pool::pool`]); None for one run.
    pub spread: Option<trust::Spread>,
}

impl Side {
    /// A side from `origin` that holds nothing yet: its documents are added
    /// as they are read.
    pub fn of(origin: Origin) -> Side {
        Side {
            origin,
            topology: None,
            latency: None,
            bandwidth: None,
            c2c: None,
            pin: None,
            fleet: None,
            version: None,
            system: None,
            spread: None,
        }
    }

    /// Did these documents describe the machine they ran on (so that the
    /// provenance's kernel is this machine's)? A topology read from a dump
    /// (`--sysfs-root`) did not.
    fn live(&self) -> bool {
        match &self.topology {
            Some(t) => t.root == Path::new("/"),
            None => self.latency.is_some() || self.bandwidth.is_some() || self.c2c.is_some(),
        }
    }
}

/// What `diff` compares: two of one kind, or two report folders.
pub const DIFF: Accepts = Accepts {
    reader: "diff",
    kinds: &[
        Kind::Run,
        Kind::Topo,
        Kind::Latency,
        Kind::Bandwidth,
        Kind::C2c,
    ],
};

/// What `check --expect` checks this machine against.
pub const EXPECT: Accepts = Accepts {
    reader: "check --expect",
    kinds: &[
        Kind::Run,
        Kind::Topo,
        Kind::Latency,
        Kind::Bandwidth,
        Kind::Pin,
        Kind::Fleet,
    ],
};

/// What `check --measured` takes as this node's own measurements.
pub const MEASURED: Accepts = Accepts {
    reader: "check --measured",
    kinds: &[Kind::Run, Kind::Latency, Kind::Bandwidth],
};

/// Which of a folder's documents make a side: its single documents (topo,
/// latency, bandwidth, c2c) when it has any, else its run.json, else a
/// binding, else a fleet's comparison; one file per kind.
const FOLDER_ORDER: [&[Kind]; 4] = [
    &[Kind::Topo, Kind::Latency, Kind::Bandwidth, Kind::C2c],
    &[Kind::Run],
    &[Kind::Pin],
    &[Kind::Fleet],
];

/// Read one side for `accepts`: a folder (the documents [`FOLDER_ORDER`]
/// chooses among those it takes) or one JSON document of a kind it takes.
pub fn load(path: &Path, accepts: &Accepts) -> Result<Side, CompareError> {
    let picked = document::pick(path, accepts).map_err(|e| match e {
        DocumentError::NotJson { path, message } => CompareError::NotJson { path, message },
        DocumentError::Missing { path } => CompareError::Missing(path),
        e => e.into(),
    })?;
    let mut side = Side::of(Origin {
        path: path.display().to_string(),
        kind: String::new(),
        documents: Vec::new(),
        hostname: None,
        kernel: None,
        start: None,
        complete: true,
        runs: Vec::new(),
    });
    if !picked.folder {
        side.origin.kind = add(&mut side, path)?.to_string();
        return Ok(side);
    }
    side.origin.kind = "report".into();
    let family = FOLDER_ORDER
        .iter()
        .find(|f| f.iter().any(|&k| picked.first(k).is_some()))
        .copied()
        .unwrap_or_default();
    for &k in family {
        if let Some(p) = picked.first(k) {
            add(&mut side, p)?;
        }
    }
    Ok(side)
}

/// Read one document (of a kind [`load`]'s reader takes) with the one
/// document reader and add it to a side. The kind the comparison names it
/// by (`report` for a run.json) is returned.
fn add(side: &mut Side, path: &Path) -> Result<&'static str, CompareError> {
    let text = crate::model::input::read_text(path)?;
    let head = document::head(text.as_bytes(), path)?;
    let Some(k) = head.kind() else {
        return Err(DocumentError::Unknown {
            path: path.to_path_buf(),
        }
        .into());
    };
    let name = match k {
        Kind::Run => "report",
        k => k.name(),
    };
    let doc = document::parse(text.as_bytes(), &head, k, path)?;
    side.origin.documents.push(path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    ));
    let p = head.stamps;
    let o = &mut side.origin;
    o.hostname = o.hostname.take().or(p.hostname);
    o.kernel = o.kernel.take().or(p.kernel);
    o.start = o.start.take().or(p.start);
    side.version = side.version.take().or(p.version);
    // A system check this numaprobe cannot read is one it does not
    // compare: the conditions are then not known, not different.
    side.system = side.system.take().or(p.system_check);
    if p.complete == Some(false) || head.complete == Some(false) {
        side.origin.complete = false;
    }
    match doc {
        Document::Run(r) => {
            let r = r.report;
            if let Some(t) = r.topology {
                side.topology = Some(t.into_topology());
            }
            side.latency = r.latency;
            side.bandwidth = r.bandwidth;
            side.c2c = r.c2c.and_then(|o| o.result);
        }
        Document::Topo(t) => side.topology = Some(t.into_topology()),
        Document::Matrix(m) => match m.kind {
            MatrixKind::Latency => side.latency = Some(*m),
            MatrixKind::Bandwidth => side.bandwidth = Some(*m),
        },
        Document::C2c(c) => side.c2c = Some(*c),
        Document::Pin(p) => side.pin = Some(*p),
        Document::Fleet(f) => side.fleet = Some(f),
        _ => {}
    }
    Ok(name)
}

/// Compare two sides of the same kind.
pub fn diff(a: &Side, b: &Side, criteria: &Criteria) -> Result<DiffReport, CompareError> {
    if a.origin.kind != b.origin.kind {
        return Err(CompareError::Mismatch {
            a: describe(&a.origin.kind),
            b: describe(&b.origin.kind),
        });
    }
    let mut differences = Vec::new();
    let mut notes = Vec::new();
    let mut cells = Vec::new();
    if a.live() && b.live() {
        if let (Some(x), Some(y)) = (&a.origin.kernel, &b.origin.kernel) {
            if x != y {
                differences.push(Difference::new(Section::Kernel, "kernel release", x, y));
            }
        }
    }
    match (&a.topology, &b.topology) {
        (Some(x), Some(y)) => differences.extend(topo::topology(x, y, topo::ALL)),
        (None, None) => {}
        (x, y) => differences.push(present("topology", x.is_some(), y.is_some())),
    }
    let conditions = trust::conditions_differ(a.system.as_ref(), b.system.as_ref());
    for (name, x, y) in [
        ("latency matrix", &a.latency, &b.latency),
        ("bandwidth matrix", &a.bandwidth, &b.bandwidth),
    ] {
        match (x, y) {
            (Some(x), Some(y)) => {
                let spreads = [a.spread.as_ref(), b.spread.as_ref()];
                let (d, c) = cells::matrices(x, y, criteria, conditions.as_deref(), spreads);
                differences.extend(d);
                cells.extend(c);
            }
            (None, None) => {}
            (x, y) => differences.push(present(name, x.is_some(), y.is_some())),
        }
    }
    match (&a.c2c, &b.c2c) {
        (Some(x), Some(y)) => {
            let spreads = [a.spread.as_ref(), b.spread.as_ref()];
            let (d, c) = c2c::pairs(x, y, criteria, conditions.as_deref(), spreads);
            differences.extend(d);
            cells.extend(c);
            notes.push("c2c cells: cpu and mem are the pair's two CPUs (the first starts the round trip, the second answers)".into());
        }
        (None, None) => {}
        (x, _) => notes.push(format!(
            "c2c not compared: only {} holds a c2c result",
            if x.is_some() { "A" } else { "B" }
        )),
    }
    let note = |what: &str, x: &Option<String>, y: &Option<String>, notes: &mut Vec<String>| {
        if let (Some(x), Some(y)) = (x, y) {
            if x != y {
                notes.push(format!(
                    "{what}: {x} in A, {y} in B (not counted as a difference)"
                ));
            }
        }
    };
    note(
        "host name",
        &a.origin.hostname,
        &b.origin.hostname,
        &mut notes,
    );
    note("numaprobe version", &a.version, &b.version, &mut notes);
    if let Some(why) = &conditions {
        notes.push(format!(
            "{why}: a cell that changed beyond the noise is inconclusive (measure both on a quiet machine)"
        ));
    } else if (a.system.is_none() || b.system.is_none())
        && (a.latency.is_some() || a.bandwidth.is_some())
    {
        notes.push(
            "the runs' conditions are not compared: a side's documents carry no system check"
                .into(),
        );
    }
    for (name, s) in [("A", a), ("B", b)] {
        if let Some(sp) = &s.spread {
            notes.push(format!("{name} pools {}", sp.describe()));
        }
        if !s.origin.complete {
            notes.push(format!("{name} is a partial run (complete: false): cells it lacks show as only in the other"));
        }
    }
    if !(a.live() && b.live()) && a.origin.kernel != b.origin.kernel {
        notes.push("the kernel is not compared: a topology read from a dump (--sysfs-root) does not say its machine's kernel".into());
    }
    let mut report = DiffReport {
        schema: crate::SCHEMA.into(),
        a: a.origin.clone(),
        b: b.origin.clone(),
        criteria: criteria.clone(),
        differences,
        cells,
        notes,
        summary: Default::default(),
    };
    report.summarise();
    Ok(report)
}

fn describe(kind: &str) -> String {
    match kind {
        "report" => "report folder (or run.json)".into(),
        k => format!("{k} document"),
    }
}

fn present(what: &str, a: bool, b: bool) -> Difference {
    let s = |x: bool| if x { "present" } else { "absent" };
    Difference::new(Section::Documents, what, s(a), s(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::testing::{build, CpuSpec};

    fn side(root: &str, kernel: &str, host: &str) -> Side {
        let cpus = [CpuSpec::new(0, 0, 0, 0), CpuSpec::new(1, 0, 1, 0)];
        Side {
            topology: Some(build(root, &cpus, &[], None)),
            version: Some("0.1.0".into()),
            ..Side::of(Origin {
                path: format!("{host}.json"),
                kind: "topo".into(),
                documents: vec![format!("{host}.json")],
                hostname: Some(host.into()),
                kernel: Some(kernel.into()),
                start: None,
                complete: true,
                runs: Vec::new(),
            })
        }
    }

    #[test]
    fn the_kernel_counts_only_for_live_machines_and_the_host_never() {
        let c = cells::default_criteria();
        let r = diff(
            &side("/", "6.1.0-27-cloud-amd64", "n1"),
            &side("/", "6.12.9-cloud-amd64", "n2"),
            &c,
        )
        .unwrap();
        assert_eq!(r.differences.len(), 1, "{:#?}", r.differences);
        assert_eq!(r.differences[0].section, Section::Kernel);
        assert!(!r.summary.equal);
        assert!(
            r.notes
                .iter()
                .any(|n| n.starts_with("host name: n1 in A, n2 in B")),
            "{:?}",
            r.notes
        );
        // Two dumps read on one machine: the provenance's kernel is the
        // reader's, not the dumps' machines'.
        let r = diff(
            &side("/tmp/a", "6.1", "n1"),
            &side("/tmp/b", "6.12", "n1"),
            &c,
        )
        .unwrap();
        assert!(r.summary.equal, "{:#?}", r.differences);
        assert!(
            r.notes.iter().any(|n| n.contains("kernel is not compared")),
            "{:?}",
            r.notes
        );
    }

    #[test]
    fn sides_of_different_kinds_are_refused() {
        let a = side("/", "6.1", "n1");
        let mut b = a.clone();
        b.origin.kind = "latency".into();
        let e = diff(&a, &b, &cells::default_criteria()).unwrap_err();
        assert!(
            e.to_string()
                .contains("cannot compare a topo document with a latency document"),
            "{e}"
        );
    }
}
