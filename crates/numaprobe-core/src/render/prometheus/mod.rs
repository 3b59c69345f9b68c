//! The Prometheus exporter: an [`Exported`] as node_exporter's
//! textfile-collector format (the Prometheus text exposition format,
//! version 0.0.4). Every family has HELP and TYPE lines; names and units
//! follow Prometheus' naming rules (base units: seconds, bytes, bytes per
//! second); a cell that was not measured is left out, never written as 0,
//! and a value that is not finite is never written.
//!
//! The run's, the check's and the fleet's files share one textfile
//! directory, so no two of them may write a series with the same name and
//! labels (node_exporter refuses the second). Each family has one owner:
//! `numaprobe_run_*`, the topology and the figures (a run's, and the rows
//! of `c2c --locks`, `policy` and `tune`) belong to the run,
//! `numaprobe_check_*` to the check, `numaprobe_fleet_*` to the fleet, each
//! with its own timestamps; `numaprobe_info`, which all three write, tells
//! them apart by its `source` label. No sample carries a timestamp (the
//! textfile collector refuses them): when a document was written is a
//! metric of its own.
//!
//! Every figure has its trust beside it: a `..._flagged` gauge and the
//! reason in a `..._flag_info` family ([`trust`] says why so).

mod check;
mod extras;
mod fleet;
mod rows;
mod run;
mod text;
mod trust;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod trust_tests;

use crate::model::export::Exported;
use crate::model::provenance::Provenance;

/// One metric family: its samples as (labels, value), in the order given.
struct Family {
    name: &'static str,
    help: &'static str,
    samples: Vec<(Vec<(&'static str, String)>, f64)>,
}

impl Family {
    fn new(name: &'static str, help: &'static str) -> Family {
        Family {
            name,
            help,
            samples: Vec::new(),
        }
    }

    fn push(&mut self, labels: Vec<(&'static str, String)>, value: f64) {
        self.samples.push((labels, value));
    }
}

/// 1 for true, 0 for false.
fn gauge(b: bool) -> f64 {
    f64::from(u8::from(b))
}

/// The textfile for `e`. Families without a sample are left out.
pub fn prometheus(e: &Exported) -> String {
    let mut info = Family::new(
        "numaprobe_info",
        "The numaprobe that wrote the exported document and the machine it ran on (value always 1); source is run, check or fleet.",
    );
    let mut families = Vec::new();
    if e.has_run() {
        info_sample(&mut info, "run", e.provenance.as_ref());
        families.extend(run::families(e));
        families.extend(extras::families(e));
        families.extend(rows::families(e));
    }
    if let Some(c) = &e.check {
        info_sample(&mut info, "check", e.check_provenance.as_ref());
        families.extend(check::families(c, e.check_provenance.as_ref()));
    }
    if let Some(f) = &e.fleet {
        info_sample(&mut info, "fleet", e.fleet_provenance.as_ref());
        families.extend(fleet::families(f, e.fleet_provenance.as_ref()));
    }
    families.insert(0, info);
    let mut out = String::new();
    for f in families {
        text::write_family(&mut out, &f);
    }
    out
}

/// One `numaprobe_info` sample. Every source writes the same label names
/// (empty where the document has no provenance), so the three files' series
/// stay one family with one set of labels.
fn info_sample(f: &mut Family, source: &str, p: Option<&Provenance>) {
    let version = p
        .map(|p| p.version.clone())
        .unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_string());
    let of = |get: fn(&Provenance) -> &String| p.map(get).cloned().unwrap_or_default();
    f.push(
        vec![
            ("source", source.to_string()),
            ("version", version),
            ("exporter_version", env!("CARGO_PKG_VERSION").to_string()),
            ("hostname", of(|p| &p.hostname)),
            ("kernel", of(|p| &p.kernel)),
            ("cpu_model", of(|p| &p.cpu_model)),
        ],
        1.0,
    );
}

/// A document's start and end as seconds since the epoch (None where the
/// provenance is missing or its time unreadable).
fn times(p: Option<&Provenance>) -> (Option<i64>, Option<i64>) {
    match p {
        None => (None, None),
        Some(p) => (
            crate::model::provenance::unix_seconds(&p.start),
            crate::model::provenance::unix_seconds(&p.end),
        ),
    }
}

/// A family of one unlabelled sample, left out when there is no value.
fn single(name: &'static str, help: &'static str, v: Option<f64>) -> Family {
    let mut f = Family::new(name, help);
    if let Some(v) = v {
        f.push(vec![], v);
    }
    f
}
