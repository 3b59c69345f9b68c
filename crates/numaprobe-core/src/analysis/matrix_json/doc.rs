//! A matrix document's fields as read ([`RawDoc`]): the object of a
//! fixture, a latency/bandwidth result or a topology, and the matrix part
//! and topology of a run document; the fields a matrix is not made of
//! skipped unbuilt, and the node lists that bound the grids after them.

use super::flagged::FlaggedSeed;
use super::grid::{Grid, GridSeed};
use super::stash::{refuse, Stash};
use crate::analysis::matrix::MatrixError;
use crate::model::lax::{AnyValue, Lax, OneShape};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use std::fmt;

/// A matrix document's parts as read.
#[derive(Debug, Default)]
pub(crate) struct RawDoc {
    pub kind: Option<String>,
    pub(super) machine: Option<String>,
    /// The `unit`: its text, or what else it is, written out.
    pub(super) unit: Option<Result<String, String>>,
    pub(super) node_ids: Option<Vec<u32>>,
    pub(super) slit: Option<Grid>,
    pub distances: Option<Distances>,
    pub(super) matrix: Option<Grid>,
    pub(super) cpu_nodes: Option<Vec<u32>>,
    pub(super) mem_nodes: Option<Vec<u32>>,
    /// The cells marked `flagged`, with their flags; the others are not kept.
    pub(super) flagged: Vec<([u32; 2], Vec<String>)>,
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
    pub(super) node_ids: Option<Vec<u32>>,
    pub(super) matrix: Option<Grid>,
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
                    raw.slit = map.next_value_seed(AnyValue(GridSeed::slit("slit", n, stash)))?;
                }
                "distances" => {
                    raw.distances = map.next_value_seed(AnyValue(DistancesSeed { stash }))?
                }
                "matrix" => {
                    let (rows, cols) = (raw.cpu_nodes.as_ref(), raw.mem_nodes.as_ref());
                    let grid = GridSeed::matrix(rows.map(Vec::len), cols.map(Vec::len), stash);
                    raw.matrix = map.next_value_seed(AnyValue(grid))?;
                }
                "cells" => raw.flagged = map.next_value_seed(AnyValue(FlaggedSeed))?,
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
        let doc = || AnyValue(ObjSeed(DocSeed { stash: self.stash }));
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

impl<'de> OneShape<'de> for ObjSeed<'_> {
    type Value = Option<RawDoc>;
    fn other<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn object<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.0.visit_map(map).map(Some)
    }
}

/// A topology's `distances`, when it is an object; anything else is
/// skipped (as a lookup in it finds nothing).
struct DistancesSeed<'s> {
    stash: &'s Stash,
}

impl<'de> OneShape<'de> for DistancesSeed<'_> {
    type Value = Option<Distances>;
    fn other<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn object<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
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
                    let grid = GridSeed::slit("distances.matrix", n, self.stash);
                    d.matrix = map.next_value_seed(AnyValue(grid))?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Some(d))
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
