//! The JSON forms of a matrix (the fixture form `{unit, matrix, slit?}`,
//! numaprobe's latency/bandwidth results, a topology's `distances`, and the
//! matrix of a `run.json`) read straight from the text into their parts:
//! the fields a matrix is made of, every other one skipped unbuilt, and
//! each array refused as soon as it is longer than its declared dimension
//! (the named row and column nodes, else the most nodes a matrix may
//! name), before the rest of it is read.

use super::matrix::{Matrix, MatrixError, Slit, Unit, MAX_NODES};
use crate::model::lax::{Items, Lax, Node};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use std::cell::RefCell;
use std::fmt;

type Grid = Vec<Vec<Option<f64>>>;

/// A matrix document's parts as read.
#[derive(Debug, Default)]
pub(crate) struct RawDoc {
    pub kind: Option<String>,
    machine: Option<String>,
    /// The `unit`: its text, or what else it is, written out.
    unit: Option<Result<String, String>>,
    node_ids: Option<Vec<u32>>,
    slit: Option<Grid>,
    pub distances: Option<Distances>,
    matrix: Option<Grid>,
    cpu_nodes: Option<Vec<u32>>,
    mem_nodes: Option<Vec<u32>>,
    /// The cells marked `flagged`, with their flags; the others are not kept.
    flagged: Vec<([u32; 2], Vec<String>)>,
}

impl RawDoc {
    /// The SLIT a run's topology gives a matrix that names none.
    pub fn ride_along(&mut self, d: Distances) {
        if self.slit.is_none() {
            self.distances = Some(d);
        }
    }
}

/// A topology's `distances`: `{node_ids, matrix}`.
#[derive(Debug, Default)]
pub(crate) struct Distances {
    node_ids: Option<Vec<u32>>,
    matrix: Option<Grid>,
}

/// A refusal found inside the text, kept whole beside serde's error (which
/// would add a position to it).
pub(crate) type Stash = RefCell<Option<MatrixError>>;

fn refuse<E: de::Error>(stash: &Stash, e: MatrixError) -> E {
    let msg = e.to_string();
    *stash.borrow_mut() = Some(e);
    E::custom(msg)
}

/// The matrix error for a text that did not read: a refusal found while
/// reading as it is, a document past its memory budget as a shape (it is
/// valid JSON), anything else as invalid JSON.
pub(crate) fn error_of(stash: &Stash, e: serde_json::Error) -> MatrixError {
    if let Some(m) = stash.borrow_mut().take() {
        return m;
    }
    match e.classify() {
        serde_json::error::Category::Data => MatrixError::Shape(e.to_string()),
        _ => MatrixError::Json(e.to_string()),
    }
}

/// Reads a matrix document (an object) into a [`RawDoc`].
pub(crate) struct DocSeed<'s> {
    pub stash: &'s Stash,
}

impl<'de> DeserializeSeed<'de> for DocSeed<'_> {
    type Value = RawDoc;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<RawDoc, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for DocSeed<'_> {
    type Value = RawDoc;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawDoc, A::Error> {
        let stash = self.stash;
        let mut raw = RawDoc::default();
        let node_list = |map: &mut A, what: &str| -> Result<Option<Vec<u32>>, A::Error> {
            let v = map.next_value::<Value>()?;
            ids(Some(&v), what).map_err(|e| refuse(stash, e))
        };
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "kind" => raw.kind = map.next_value::<Lax<String>>()?.cloned(),
                "machine" => raw.machine = map.next_value::<Lax<String>>()?.cloned(),
                "unit" => {
                    raw.unit = match map.next_value::<Value>()? {
                        Value::Null => None,
                        Value::String(s) => Some(Ok(s)),
                        other => Some(Err(other.to_string())),
                    }
                }
                "node_ids" => raw.node_ids = node_list(&mut map, "node_ids")?,
                "cpu_nodes" => raw.cpu_nodes = node_list(&mut map, "cpu_nodes")?,
                "mem_nodes" => raw.mem_nodes = node_list(&mut map, "mem_nodes")?,
                "slit" => {
                    let n = raw.node_ids.as_ref().map(Vec::len);
                    raw.slit = map.next_value_seed(GridSeed {
                        what: "slit",
                        rows: n.map_or(Limit::Nodes, Limit::Slit),
                        cols: n.map_or(Limit::Nodes, Limit::Slit),
                        stash,
                    })?;
                }
                "distances" => raw.distances = map.next_value_seed(DistancesSeed { stash })?,
                "matrix" => {
                    raw.matrix = map.next_value_seed(GridSeed {
                        what: "matrix",
                        rows: raw
                            .cpu_nodes
                            .as_ref()
                            .map_or(Limit::Nodes, |n| Limit::Rows(n.len())),
                        cols: raw
                            .mem_nodes
                            .as_ref()
                            .map_or(Limit::Nodes, |n| Limit::Cols(n.len())),
                        stash,
                    })?;
                }
                "cells" => raw.flagged = map.next_value_seed(FlaggedSeed)?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(raw)
    }
}

/// Reads a run document: the matrix `part` (`latency` or `bandwidth`)
/// when there is one to read, and its topology (for its SLIT); every other
/// field skipped unbuilt. A part or topology that is no object reads as
/// none.
pub(crate) struct RunSeed<'s> {
    pub part: Option<&'static str>,
    pub stash: &'s Stash,
}

impl<'de> DeserializeSeed<'de> for RunSeed<'_> {
    type Value = (Option<RawDoc>, Option<RawDoc>);
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for RunSeed<'_> {
    type Value = (Option<RawDoc>, Option<RawDoc>);
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut part, mut topology) = (None, None);
        let doc = || ObjSeed(DocSeed { stash: self.stash });
        while let Some(key) = map.next_key::<String>()? {
            if Some(key.as_str()) == self.part {
                part = map.next_value_seed(doc())?;
            } else if key == "topology" {
                topology = map.next_value_seed(doc())?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok((part, topology))
    }
}

/// A document read by its seed when it is an object; null or any other
/// value is none (skipped unbuilt).
struct ObjSeed<'s>(DocSeed<'s>);

impl<'de> DeserializeSeed<'de> for ObjSeed<'_> {
    type Value = Option<RawDoc>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<RawDoc>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ObjSeed<'_> {
    type Value = Option<RawDoc>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.0.visit_map(map).map(Some)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    crate::model::lax::scalars_answer!(None);
}

/// A topology's `distances`, when it is an object; anything else is
/// skipped (as a lookup in it finds nothing).
struct DistancesSeed<'s> {
    stash: &'s Stash,
}

impl<'de> DeserializeSeed<'de> for DistancesSeed<'_> {
    type Value = Option<Distances>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<Distances>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for DistancesSeed<'_> {
    type Value = Option<Distances>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut d = Distances::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "node_ids" => {
                    let v = map.next_value::<Value>()?;
                    d.node_ids =
                        ids(Some(&v), "distances.node_ids").map_err(|e| refuse(self.stash, e))?;
                }
                "matrix" => {
                    let n = d.node_ids.as_ref().map(Vec::len);
                    d.matrix = map.next_value_seed(GridSeed {
                        what: "distances.matrix",
                        rows: n.map_or(Limit::Nodes, Limit::Slit),
                        cols: n.map_or(Limit::Nodes, Limit::Slit),
                        stash: self.stash,
                    })?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Some(d))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    crate::model::lax::scalars_answer!(None);
}

/// How long an array of a grid may be: as many as the nodes named for it,
/// else the most nodes a matrix may name.
#[derive(Clone, Copy)]
enum Limit {
    /// Rows of a matrix, one per named CPU node.
    Rows(usize),
    /// Values of a row, one per named memory node.
    Cols(usize),
    /// Rows or values of a SLIT over its named nodes.
    Slit(usize),
    /// Nothing named: [`MAX_NODES`].
    Nodes,
}

impl Limit {
    fn max(self) -> usize {
        match self {
            Limit::Rows(n) | Limit::Cols(n) | Limit::Slit(n) => n,
            Limit::Nodes => MAX_NODES,
        }
    }

    /// The refusal of a grid `what` with more than the limit, at row `row`
    /// when it is a row's values that are too many.
    fn refusal(self, what: &str, row: Option<usize>) -> MatrixError {
        let n = self.max();
        MatrixError::Shape(match (self, row) {
            (Limit::Rows(_), _) => {
                format!("the matrix has more than {n} rows but {n} row nodes are named")
            }
            (Limit::Cols(_), _) => format!(
                "row {} has more than {n} values, expected {n} (one per memory node)",
                row.unwrap_or(0)
            ),
            (Limit::Slit(_), _) => format!("the SLIT must be square over its {n} nodes"),
            (Limit::Nodes, None) => format!(
                "`{what}` has more than {n} rows; at most {MAX_NODES} nodes can be analysed \
                 (Linux has at most 1024 NUMA nodes)"
            ),
            (Limit::Nodes, Some(r)) => format!(
                "`{what}` row {r} has more than {n} values; at most {MAX_NODES} nodes can be \
                 analysed (Linux has at most 1024 NUMA nodes)"
            ),
        })
    }
}

/// A grid of cells (`matrix`, `slit`, `distances.matrix`): null is none.
struct GridSeed<'s> {
    what: &'static str,
    rows: Limit,
    cols: Limit,
    stash: &'s Stash,
}

impl<'de> DeserializeSeed<'de> for GridSeed<'_> {
    type Value = Option<Grid>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<Grid>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for GridSeed<'_> {
    type Value = Option<Grid>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "`{}` as an array of rows", self.what)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Option<Grid>, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<Grid>, A::Error> {
        let mut out = Vec::new();
        loop {
            let row = RowSeed {
                what: self.what,
                r: out.len(),
                cols: self.cols,
                stash: self.stash,
            };
            let Some(row) = seq.next_element_seed(row)? else {
                break;
            };
            if out.len() == self.rows.max() {
                return Err(refuse(self.stash, self.rows.refusal(self.what, None)));
            }
            out.push(row);
        }
        Ok(Some(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Option<Grid>, A::Error> {
        Err(self.not_rows())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Option<Grid>, E> {
        Err(self.not_rows())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Option<Grid>, E> {
        Err(self.not_rows())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Option<Grid>, E> {
        Err(self.not_rows())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Option<Grid>, E> {
        Err(self.not_rows())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Option<Grid>, E> {
        Err(self.not_rows())
    }
}

impl GridSeed<'_> {
    fn not_rows<E: de::Error>(&self) -> E {
        refuse(
            self.stash,
            MatrixError::Shape(format!("`{}` must be an array of rows", self.what)),
        )
    }
}

/// One row of a grid.
struct RowSeed<'s> {
    what: &'static str,
    r: usize,
    cols: Limit,
    stash: &'s Stash,
}

impl<'de> DeserializeSeed<'de> for RowSeed<'_> {
    type Value = Vec<Option<f64>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for RowSeed<'_> {
    type Value = Vec<Option<f64>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "`{}` row {} as an array", self.what, self.r)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        loop {
            let cell = CellSeed {
                r: self.r,
                c: out.len(),
                stash: self.stash,
            };
            let Some(v) = seq.next_element_seed(cell)? else {
                break;
            };
            if out.len() == self.cols.max() {
                return Err(refuse(
                    self.stash,
                    self.cols.refusal(self.what, Some(self.r)),
                ));
            }
            out.push(v);
        }
        Ok(out)
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Err(self.not_array())
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Err(self.not_array())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Err(self.not_array())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Err(self.not_array())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Err(self.not_array())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Err(self.not_array())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Err(self.not_array())
    }
}

impl RowSeed<'_> {
    fn not_array<E: de::Error>(&self) -> E {
        refuse(
            self.stash,
            MatrixError::Shape(format!("`{}` row {} is not an array", self.what, self.r)),
        )
    }
}

/// One cell: a number, null, or an object with its statistics.
struct CellSeed<'s> {
    r: usize,
    c: usize,
    stash: &'s Stash,
}

/// The keys of a cell written as an object that hold its figure, in the
/// order they are looked for.
const FIGURE_KEYS: [&str; 5] = ["median", "value", "ns", "mbps", "mean"];

impl<'de> DeserializeSeed<'de> for CellSeed<'_> {
    type Value = Option<f64>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<f64>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for CellSeed<'_> {
    type Value = Option<f64>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a number or null")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Option<f64>, E> {
        Ok(None)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Option<f64>, E> {
        Ok(Some(v as f64))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Option<f64>, E> {
        Ok(Some(v as f64))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Option<f64>, E> {
        Ok(Some(v))
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Option<f64>, E> {
        self.judge(&Value::Bool(b))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Option<f64>, E> {
        self.judge(&Value::String(s.to_string()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Option<f64>, A::Error> {
        Err(refuse(
            self.stash,
            MatrixError::Value(format!(
                "cell [{}][{}] is an array: expected a number or null",
                self.r, self.c
            )),
        ))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<f64>, A::Error> {
        // numaprobe's own results may carry a cell as an object with its
        // statistics; the median is the figure the analysis uses.
        let mut found: [Option<Value>; FIGURE_KEYS.len()] = Default::default();
        while let Some(key) = map.next_key::<String>()? {
            match FIGURE_KEYS.iter().position(|k| *k == key) {
                Some(i) => found[i] = Some(map.next_value()?),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let mut obj = serde_json::Map::new();
        if let Some((i, v)) = found
            .into_iter()
            .enumerate()
            .find_map(|(i, v)| Some((i, v?)))
        {
            obj.insert(FIGURE_KEYS[i].to_string(), v);
        }
        self.judge(&Value::Object(obj))
    }
}

impl CellSeed<'_> {
    fn judge<E: de::Error>(&self, v: &Value) -> Result<Option<f64>, E> {
        cell(v, self.r, self.c).map_err(|e| refuse(self.stash, e))
    }
}

/// The cells marked `flagged` of a result's `cells`, with their flags,
/// each cell dropped once read; anything but an array holds none.
struct FlaggedSeed;

impl<'de> DeserializeSeed<'de> for FlaggedSeed {
    type Value = Vec<([u32; 2], Vec<String>)>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

#[derive(Default, Deserialize)]
struct FlagCell {
    #[serde(default)]
    cpu_node: Lax<u64>,
    #[serde(default)]
    mem_node: Lax<u64>,
    #[serde(default)]
    flagged: Lax<bool>,
    #[serde(default)]
    flags: Items<Lax<String>>,
}

impl<'de> Visitor<'de> for FlaggedSeed {
    type Value = Vec<([u32; 2], Vec<String>)>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(c) = seq.next_element::<Node<FlagCell>>()? {
            let Some(c) = c.get() else { continue };
            let node = |n: &Lax<u64>| n.copied().and_then(|n| u32::try_from(n).ok());
            if c.flagged.copied() == Some(true) {
                if let (Some(a), Some(b)) = (node(&c.cpu_node), node(&c.mem_node)) {
                    let why = c.flags.0.iter().filter_map(Lax::cloned).collect();
                    out.push(([a, b], why));
                }
            }
        }
        Ok(out)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Vec::new())
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    crate::model::lax::scalars_answer!(Vec::new());
}

fn cell(v: &Value, r: usize, c: usize) -> Result<Option<f64>, MatrixError> {
    match v {
        Value::Null => Ok(None),
        Value::Number(n) => n
            .as_f64()
            .map(Some)
            .ok_or_else(|| MatrixError::Value(format!("cell [{r}][{c}] is not a usable number"))),
        // numaprobe's own results may carry a cell as an object with its
        // statistics; the median is the figure the analysis uses.
        Value::Object(o) => {
            for key in ["median", "value", "ns", "mbps", "mean"] {
                if let Some(x) = o.get(key) {
                    return cell(x, r, c);
                }
            }
            Err(MatrixError::Value(format!(
                "cell [{r}][{c}] is an object without `median` or `value`"
            )))
        }
        other => Err(MatrixError::Value(format!(
            "cell [{r}][{c}] is {other}: expected a number or null"
        ))),
    }
}

fn ids(v: Option<&Value>, what: &str) -> Result<Option<Vec<u32>>, MatrixError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| {
                x.as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| {
                        MatrixError::Shape(format!("`{what}` must hold node numbers, found {x}"))
                    })
            })
            .collect::<Result<Vec<u32>, _>>()
            .map(Some),
        Some(other) => Err(MatrixError::Shape(format!(
            "`{what}` must be an array of node numbers, found {other}"
        ))),
    }
}

/// The matrix a document's parts make, checked as a whole: what cannot be
/// checked while reading (a square matrix, positive values, unique ids).
pub(crate) fn build(raw: RawDoc, unit_override: Option<Unit>) -> Result<Matrix, MatrixError> {
    // A SLIT may come as a plain square array (fixture form) or as the
    // topology's `distances` object ({node_ids, matrix}).
    let mut slit_nodes = raw.node_ids;
    let slit_grid = match (raw.slit, raw.distances) {
        (Some(g), _) => Some(g),
        (None, Some(d)) => {
            if let Some(n) = d.node_ids {
                slit_nodes = Some(n);
            }
            d.matrix
        }
        _ => None,
    };
    let slit = match slit_grid {
        None => None,
        Some(g) => {
            let n = g.len();
            let nodes = slit_nodes
                .clone()
                .unwrap_or_else(|| (0..n as u32).collect());
            if nodes.len() != n || g.iter().any(|r| r.len() != n) {
                return Err(MatrixError::Shape(format!(
                    "the SLIT must be square over its {} nodes",
                    nodes.len()
                )));
            }
            let mut m = Vec::with_capacity(n);
            for (r, row) in g.into_iter().enumerate() {
                let mut out = Vec::with_capacity(n);
                for (c, v) in row.into_iter().enumerate() {
                    match v {
                        Some(x) if x.is_finite() && x > 0.0 => out.push(x),
                        _ => {
                            return Err(MatrixError::Value(format!(
                                "SLIT cell [{r}][{c}] must be a positive number"
                            )))
                        }
                    }
                }
                m.push(out);
            }
            Some(Slit { nodes, matrix: m })
        }
    };

    let label = raw.machine;
    let unit_field = match raw.unit {
        None => None,
        Some(Ok(s)) => Some(Unit::parse(&s).ok_or(MatrixError::UnknownUnit(s))?),
        Some(Err(other)) => return Err(MatrixError::UnknownUnit(other)),
    };
    let measured = raw.matrix;

    let Some(values) = measured else {
        // No measurement: analyse the firmware's table as if it were one.
        let Some(s) = slit else {
            return Err(MatrixError::Empty);
        };
        let cpu = raw.cpu_nodes;
        let mut m = Matrix::of_slit(s, cpu.as_deref())?;
        m.label = label;
        return Ok(m);
    };

    let unit = unit_override.or(unit_field).ok_or(MatrixError::NoUnit)?;
    let cpu_nodes = raw.cpu_nodes;
    let mem_nodes = raw.mem_nodes;
    let rows = values.len();
    let cols = values.first().map_or(0, Vec::len);
    let (row_nodes, col_nodes) = match (cpu_nodes, mem_nodes) {
        (Some(r), Some(c)) => (r, c),
        (r, c) => {
            // Without separate names the matrix must be square: row i and
            // column i are the same node.
            if values.iter().any(|row| row.len() != rows) {
                let bad = values.iter().position(|row| row.len() != rows).unwrap_or(0);
                return Err(MatrixError::Shape(format!(
                    "the matrix has {rows} rows but row {bad} has {} values: it must be square \
                     (or name its rows and columns with `cpu_nodes` and `mem_nodes`)",
                    values[bad].len()
                )));
            }
            let n = r
                .or(c)
                .or_else(|| slit_nodes.clone().filter(|s| s.len() == rows))
                .unwrap_or_else(|| (0..rows as u32).collect());
            (n.clone(), n)
        }
    };
    if cols == 0 {
        return Err(MatrixError::Shape("the matrix has no columns".into()));
    }
    let mut m = Matrix::new(unit, row_nodes, col_nodes, values)?;
    m.label = label;
    m.slit = slit;
    m.flagged = raw.flagged;
    Ok(m)
}

#[cfg(test)]
mod tests {
    use crate::analysis::{parse, MatrixError};

    /// A row or a matrix longer than the nodes it names is refused as it is
    /// read, at the first value too many (so "more than"): the values after
    /// it are never built.
    #[test]
    fn arrays_longer_than_their_declared_nodes_are_refused_while_read() {
        let cases = [
            (
                r#"{"unit":"ns","cpu_nodes":[0,1],"mem_nodes":[0,1],"matrix":[[1,2,3,4,5],[1,2]]}"#,
                "row 0 has more than 2 values, expected 2 (one per memory node)",
            ),
            (
                r#"{"unit":"ns","cpu_nodes":[0],"mem_nodes":[0,1],"matrix":[[1,2],[3,4],[5,6]]}"#,
                "the matrix has more than 1 rows but 1 row nodes are named",
            ),
            (
                r#"{"node_ids":[0,1],"slit":[[10,20],[20,10],[1]]}"#,
                "the SLIT must be square over its 2 nodes",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(
                parse(text, None),
                Err(MatrixError::Shape(want.into())),
                "{text}"
            );
        }
        // Nothing named: no more rows than a matrix may name nodes.
        let long = format!(r#"{{"unit":"ns","matrix":[{}[1]]}}"#, "[1],".repeat(2049));
        let e = parse(&long, None).unwrap_err().to_string();
        assert!(e.starts_with("`matrix` has more than 2048 rows"), "{e}");
    }

    /// Fields a matrix is not made of are skipped unbuilt: one that would
    /// take many times its size as a JSON tree (300,000 empty arrays, past
    /// what a document of its size may build) costs nothing.
    #[test]
    fn a_huge_field_a_matrix_does_not_use_is_skipped_unbuilt() {
        let empties = format!("[{}[]]", "[],".repeat(300_000));
        let text = format!(r#"{{"unit":"ns","trace":{empties},"matrix":[[10,20],[21,11]]}}"#);
        let whole = crate::model::bounded::from_slice::<serde_json::Value>(text.as_bytes());
        assert!(whole.is_err());
        let m = parse(&text, None).unwrap();
        assert_eq!(m.get(1, 0), Some(21.0));
        // A run's other matrix and fields are skipped alike.
        let run = format!(
            r#"{{"topology":{{"distances":{{"node_ids":[0,1],"matrix":[[10,20],[20,10]]}},"pci_devices":{empties}}},
                "bandwidth":{{"unit":"GB/s","matrix":{empties}}},
                "latency":{{"unit":"ns","cpu_nodes":[0,1],"mem_nodes":[0,1],"matrix":[[90,130],[131,91]],
                  "cells":[{{"cpu_node":1,"mem_node":0,"flagged":true,"flags":["spread",3]}},{{"cpu_node":0,"mem_node":0,"trace":{empties}}}]}}}}"#
        );
        let m = parse(&run, None).unwrap();
        assert_eq!(m.get(1, 0), Some(131.0));
        assert_eq!(m.slit.as_ref().and_then(|s| s.get(0, 1)), Some(20.0));
        assert_eq!(m.flagged, vec![([1, 0], vec!["spread".to_string()])]);
    }
}
