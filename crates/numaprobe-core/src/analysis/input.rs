//! Which reader a text goes to: the format is told from the content, never
//! from a file name. JSON objects are numaprobe's `run.json` (a `latency`
//! and a `bandwidth` result and the topology), numaprobe's `latency.json` /
//! `bandwidth.json` (which document is which: `model::document`), or the
//! `{unit, matrix, slit?}` form; text with MLC's
//! banner or matrix blocks is MLC output; other text with numbers is CSV.
//! Anything else is one error that says what would have been read.
//! [`read_matrix`] reads a path the same way, and a report folder by the
//! one input rule (`model::document::pick`): its matrix document, or its
//! run.json.

use super::csv::parse_csv;
use super::matrix::{Matrix, MatrixError, Unit};
use super::matrix_json::{build, error_of, DocSeed, RunSeed, Stash};
use super::mlc::{self, Select};
use crate::model::document::{pick, refuse_other_kind, Accepts, DocumentError, Head, Kind};
use crate::model::input::{read_text, InputError};
use crate::model::lax::{Has, Node};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The numaprobe documents that hold a matrix: what a matrix reader takes
/// of a report folder (its own formats, MLC output and CSV, are files).
/// A topology holds the firmware's SLIT, which is analysed when nothing
/// was measured.
pub const MATRIX_KINDS: &[Kind] = &[Kind::Run, Kind::Latency, Kind::Bandwidth, Kind::Topo];

/// Why no matrix was read from a path: one line naming it.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Document(#[from] DocumentError),
    #[error("{}: {source}", path.display())]
    Matrix {
        path: PathBuf,
        #[source]
        source: MatrixError,
    },
}

/// Read a matrix from a file (any format [`parse_with`] reads) or from a
/// report folder: the file of the matrix `opts.select` asks for (latency
/// first), else the folder's run.json, else its topology's SLIT. `reader`
/// names the command in a refusal, `kinds` what it takes of a folder and
/// of a numaprobe document given as a file.
/// Returns the matrix and the file it came from.
pub fn read_matrix(
    path: &Path,
    opts: ParseOptions,
    reader: &'static str,
    kinds: &'static [Kind],
) -> Result<(Matrix, PathBuf), ReadError> {
    let file = if path.is_dir() {
        let picked = pick(path, &Accepts { reader, kinds })?;
        let order: &[Kind] = match opts.select {
            Some(Select::Bandwidth) => &[Kind::Bandwidth, Kind::Run],
            Some(Select::Latency) => &[Kind::Latency, Kind::Run],
            None => &[Kind::Latency, Kind::Bandwidth, Kind::Run, Kind::Topo],
        };
        let Some(found) = order.iter().find_map(|&k| picked.first(k)) else {
            return Err(crate::model::document::refusal(
                path,
                &format!(
                    "{}, none with a {} matrix",
                    picked.named(),
                    opts.select.map_or("", |s| s.as_str())
                ),
                &Accepts { reader, kinds },
            )
            .into());
        };
        found.to_path_buf()
    } else {
        path.to_path_buf()
    };
    let text = read_text(&file)?;
    refuse_other_kind(&text, &file, &Accepts { reader, kinds })?;
    let m = parse_with(&text, opts).map_err(|source| ReadError::Matrix {
        path: file.clone(),
        source,
    })?;
    Ok((m, file))
}

/// How to read an input: a unit that overrides (or supplies) the file's, and
/// which matrix to take from a file that holds several (run.json, MLC's
/// default run).
#[derive(Debug, Clone, Copy, Default)]
pub struct ParseOptions {
    pub unit: Option<Unit>,
    pub select: Option<Select>,
}

/// Read a matrix from text (any supported format); `unit` overrides (or
/// supplies) the unit. Same as [`parse_with`] without a selector.
pub fn parse(text: &str, unit: Option<Unit>) -> Result<Matrix, MatrixError> {
    parse_with(text, ParseOptions { unit, select: None })
}

/// Read a matrix from text, detecting the format from the content.
pub fn parse_with(text: &str, opts: ParseOptions) -> Result<Matrix, MatrixError> {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if t.is_empty() {
        return Err(MatrixError::Empty);
    }
    if t.starts_with('{') {
        // Any JSON form of a matrix is read straight into its parts, its
        // memory bounded by the text's size as every document's is.
        return json(t.as_bytes(), opts);
    }
    // Before the JSON array test: a pasted MLC table can start with a shell
    // prompt such as `[root@host ~]#`.
    if mlc::looks_like(t) {
        return mlc::parse(t, opts.select, opts.unit);
    }
    if t.starts_with('[') {
        return Err(MatrixError::Unrecognised);
    }
    if opts.select.is_some() {
        return Err(MatrixError::Shape(
            "a CSV file holds one matrix: choose a latency or bandwidth matrix only in run.json or MLC output"
                .into(),
        ));
    }
    // CSV needs numbers: prose, HTML or a log without a table is not one.
    // A `# unit:` line says the author meant a CSV matrix.
    let unit_line = t.lines().any(|l| {
        l.trim_start()
            .strip_prefix('#')
            .is_some_and(|c| c.trim_start().to_ascii_lowercase().starts_with("unit"))
    });
    let numeric = unit_line
        || t.lines()
            .filter(|l| !l.trim_start().starts_with('#'))
            .any(|l| {
                l.split([',', ';', '\t', ' '])
                    .any(|f| f.trim().trim_matches('"').parse::<f64>().is_ok())
            });
    if !numeric {
        return Err(MatrixError::Unrecognised);
    }
    parse_csv(t, opts.unit)
}

/// Which keys a JSON document has at its top level, and its topology's
/// `distances`: what decides how it is read, before it is.
#[derive(Default, Deserialize)]
struct Keys {
    #[serde(default)]
    matrix: Has,
    #[serde(default)]
    slit: Has,
    #[serde(default)]
    distances: Has,
    #[serde(default)]
    latency: Has,
    #[serde(default)]
    bandwidth: Has,
    #[serde(default)]
    topology: Node<TopoKeys>,
}

#[derive(Default, Deserialize)]
struct TopoKeys {
    #[serde(default)]
    distances: Has,
}

fn json(bytes: &[u8], opts: ParseOptions) -> Result<Matrix, MatrixError> {
    let stash = Stash::default();
    let fail = |e| error_of(&stash, e);
    // What a numaprobe document is comes from the one reader of documents.
    let head = Head::read(bytes).map_err(fail)?;
    if !head.object {
        return Err(MatrixError::Unrecognised);
    }
    let kind = head.kind();
    let keys: Keys = crate::model::bounded::from_slice(bytes).map_err(fail)?;
    if kind == Some(Kind::Run) {
        return run_json(bytes, &keys, opts);
    }
    if !(keys.matrix.here() || keys.slit.here() || keys.distances.here()) {
        return Err(match kind {
            Some(k) => MatrixError::Shape(format!(
                "a {k} document holds no matrix; give a latency, bandwidth, run or topo document (or a report folder holding one), MLC output or a CSV matrix"
            )),
            None => MatrixError::Unrecognised,
        });
    }
    // latency.json / bandwidth.json name their kind; a selector that asks
    // for the other one is a mistake worth saying.
    if let (Some(want), Some(have)) = (opts.select, head.kind.as_deref().and_then(Select::parse)) {
        if want != have {
            return Err(MatrixError::Shape(format!(
                "this file holds a {} matrix, not a {} one",
                have.as_str(),
                want.as_str()
            )));
        }
    }
    let raw =
        crate::model::bounded::from_slice_seed(bytes, DocSeed { stash: &stash }).map_err(fail)?;
    build(raw, opts.unit)
}

fn run_json(bytes: &[u8], keys: &Keys, opts: ParseOptions) -> Result<Matrix, MatrixError> {
    let want = match opts.select {
        Some(s) => s,
        None if keys.latency.value() => Select::Latency,
        None => Select::Bandwidth,
    };
    let has = match want {
        Select::Latency => keys.latency,
        Select::Bandwidth => keys.bandwidth,
    };
    let stash = Stash::default();
    let read = |part: Option<&'static str>| {
        crate::model::bounded::from_slice_seed(
            bytes,
            RunSeed {
                part,
                stash: &stash,
            },
        )
        .map_err(|e| error_of(&stash, e))
    };
    if !has.value() {
        // A run that measured nothing still holds its machine's SLIT.
        let slit = keys.topology.get().is_some_and(|t| t.distances.value());
        if opts.select.is_none() && slit {
            if let (_, Some(topology)) = read(None)? {
                return build(topology, opts.unit);
            }
        }
        return Err(MatrixError::Shape(format!(
            "this run.json has no {} matrix (its {} is null: not measured)",
            want.as_str(),
            want.as_str()
        )));
    }
    let (part, topology) = read(Some(want.as_str()))?;
    let Some(mut part) = part else {
        return Err(MatrixError::Unrecognised);
    };
    // The machine's SLIT rides along, for the comparison.
    if let Some(d) = topology.and_then(|t| t.distances) {
        part.ride_along(d);
    }
    build(part, opts.unit)
}
