//! The grids of a matrix document (`matrix`, `slit`, `distances.matrix`)
//! read row by row and cell by cell, each array refused at its first
//! element past its declared dimension ([`Limit`]), before the rest of it
//! is read.

use super::stash::{refuse, Stash};
use crate::analysis::matrix::{MatrixError, MAX_NODES};
use crate::model::lax::{AnyValue, OneShape};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::fmt;

/// A grid's rows of cells, a cell none where it is null.
pub(super) type Grid = Vec<Vec<Option<f64>>>;

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
pub(super) struct GridSeed<'s> {
    what: &'static str,
    rows: Limit,
    cols: Limit,
    stash: &'s Stash,
}

impl<'s> GridSeed<'s> {
    /// A SLIT `what`, square over its `n` named nodes.
    pub fn slit(what: &'static str, n: Option<usize>, stash: &'s Stash) -> Self {
        let limit = n.map_or(Limit::Nodes, Limit::Slit);
        GridSeed {
            what,
            rows: limit,
            cols: limit,
            stash,
        }
    }

    /// A measured `matrix`, a row per named CPU node and a value per named
    /// memory node.
    pub fn matrix(rows: Option<usize>, cols: Option<usize>, stash: &'s Stash) -> Self {
        GridSeed {
            what: "matrix",
            rows: rows.map_or(Limit::Nodes, Limit::Rows),
            cols: cols.map_or(Limit::Nodes, Limit::Cols),
            stash,
        }
    }
}

impl<'de> OneShape<'de> for GridSeed<'_> {
    type Value = Option<Grid>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "`{}` as an array of rows", self.what)
    }
    fn null<E: de::Error>(self) -> Result<Option<Grid>, E> {
        Ok(None)
    }
    fn other<E: de::Error>(self) -> Result<Option<Grid>, E> {
        Err(refuse(
            self.stash,
            MatrixError::Shape(format!("`{}` must be an array of rows", self.what)),
        ))
    }
    fn array<A: SeqAccess<'de>>(self, seq: A) -> Result<Option<Grid>, A::Error> {
        let row = |r| {
            AnyValue(RowSeed {
                what: self.what,
                r,
                cols: self.cols,
                stash: self.stash,
            })
        };
        let too_many = || refuse(self.stash, self.rows.refusal(self.what, None));
        up_to(seq, self.rows.max(), row, too_many).map(Some)
    }
}

/// One row of a grid.
struct RowSeed<'s> {
    what: &'static str,
    r: usize,
    cols: Limit,
    stash: &'s Stash,
}

impl<'de> OneShape<'de> for RowSeed<'_> {
    type Value = Vec<Option<f64>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "`{}` row {} as an array", self.what, self.r)
    }
    fn other<E: de::Error>(self) -> Result<Self::Value, E> {
        Err(refuse(
            self.stash,
            MatrixError::Shape(format!("`{}` row {} is not an array", self.what, self.r)),
        ))
    }
    fn array<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        let cell = |c| CellSeed {
            r: self.r,
            c,
            stash: self.stash,
        };
        let too_many = || refuse(self.stash, self.cols.refusal(self.what, Some(self.r)));
        up_to(seq, self.cols.max(), cell, too_many)
    }
}

/// The elements of an array, the `i`th read by `seed(i)`: refused with
/// `too_many()` once an element past the first `max` has been read, before
/// the rest of the array is.
fn up_to<'de, A, S>(
    mut seq: A,
    max: usize,
    seed: impl Fn(usize) -> S,
    too_many: impl FnOnce() -> A::Error,
) -> Result<Vec<S::Value>, A::Error>
where
    A: SeqAccess<'de>,
    S: DeserializeSeed<'de>,
{
    let mut out = Vec::new();
    while let Some(v) = seq.next_element_seed(seed(out.len()))? {
        if out.len() == max {
            return Err(too_many());
        }
        out.push(v);
    }
    Ok(out)
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
            for key in FIGURE_KEYS {
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
