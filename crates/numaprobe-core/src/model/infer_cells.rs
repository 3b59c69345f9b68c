//! An inference's cells, held flat: one vector per field, a cell's level
//! as an index into the few level names and its nodes as places in the
//! list of the few node numbers, about 21 bytes a cell where a record of
//! its own with its name took 56. A 1500-node matrix has 2.25
//! million cells, so this is the largest part of the result. The analysis
//! holds them as a grid over its matrix instead (`infer_grid`: the values
//! shared with the matrix, 8 bytes a cell more); a list read back is held
//! as this list. Either serializes as the list of `CellInfo` records the
//! JSON contract names, one record made at a time, and this list is what
//! a document is read back into.

pub use super::infer_data::CellInfo;
use super::infer_data::LevelName;
use super::infer_grid::Grid;
use super::node_table::{pack, unpack, MOST};
use serde::de::{Error as _, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// No level (a stray cell).
const NONE: u32 = u32::MAX;
const STRAY: u8 = 1;
const FLAGGED: u8 = 2;

/// Every cell of the input with what the analysis made of it.
#[derive(Debug, Clone, Default)]
pub struct Cells {
    /// The analysis's form; when set, the list below is empty.
    grid: Option<Arc<Grid>>,
    /// The cell's two nodes as places in `node_ids`.
    nodes: Vec<[u16; 2]>,
    values: Vec<f64>,
    /// Index into `names`, or `NONE`.
    levels: Vec<u32>,
    hops: Vec<u16>,
    distances: Vec<u16>,
    marks: Vec<u8>,
    names: Vec<LevelName>,
    /// Where each name sits in `names`, while cells are added.
    index: HashMap<LevelName, u32>,
    /// The node numbers the cells name, each once.
    node_ids: Vec<u32>,
    /// Where each node number sits in `node_ids`.
    node_index: HashMap<u32, u16>,
}

impl Cells {
    pub fn with_capacity(n: usize) -> Cells {
        Cells {
            nodes: Vec::with_capacity(n),
            values: Vec::with_capacity(n),
            levels: Vec::with_capacity(n),
            hops: Vec::with_capacity(n),
            distances: Vec::with_capacity(n),
            marks: Vec::with_capacity(n),
            ..Cells::default()
        }
    }

    /// The cells of a grid the analysis filled.
    pub(crate) fn from_grid(grid: Arc<Grid>) -> Cells {
        Cells {
            grid: Some(grid),
            ..Cells::default()
        }
    }

    pub fn len(&self) -> usize {
        self.grid.as_ref().map_or(self.nodes.len(), |g| g.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Add a cell. Hop counts and distances are held in 16 bits, and the
    /// cells name at most 65,535 nodes (a matrix has at most 2048; the
    /// kernel numbers nodes below 1024): a cell past either is refused
    /// with what was wrong, and nothing of it is kept.
    pub fn push(&mut self, c: CellInfo) -> Result<(), String> {
        if self.grid.is_some() {
            return Err(format!(
                "cell {}>{}: the cells of an analysed matrix are its grid's",
                c.cpu_node, c.mem_node
            ));
        }
        let held = |what: &str, x: Option<u32>| {
            pack(x).map_err(|x| {
                format!(
                    "cell {}>{}: {what} {x} is out of range (at most {MOST})",
                    c.cpu_node, c.mem_node
                )
            })
        };
        let hops = held("hops", c.hops)?;
        let distance = held("distance", c.distance)?;
        let fresh = |n: u32| !self.node_index.contains_key(&n);
        let new_nodes = usize::from(fresh(c.cpu_node))
            + usize::from(c.mem_node != c.cpu_node && fresh(c.mem_node));
        if self.node_ids.len() + new_nodes > usize::from(u16::MAX) {
            return Err(format!(
                "cell {}>{}: the cells name more than {} nodes",
                c.cpu_node,
                c.mem_node,
                u16::MAX
            ));
        }
        let level = match c.level {
            None => NONE,
            Some(name) => match self.index.get(&name) {
                Some(&i) => i,
                None => {
                    let i = u32::try_from(self.names.len())
                        .ok()
                        .filter(|&i| i != NONE)
                        .ok_or("too many level names")?;
                    self.names.push(name.clone());
                    self.index.insert(name, i);
                    i
                }
            },
        };
        let from = self.place(c.cpu_node);
        let to = self.place(c.mem_node);
        self.nodes.push([from, to]);
        self.values.push(c.value);
        self.levels.push(level);
        self.hops.push(hops);
        self.distances.push(distance);
        self.marks
            .push((u8::from(c.stray) * STRAY) | (u8::from(c.flagged) * FLAGGED));
        Ok(())
    }

    /// Node `n`'s place in `node_ids`, given it one if it has none (`push`
    /// has checked that there is room).
    fn place(&mut self, n: u32) -> u16 {
        if let Some(&i) = self.node_index.get(&n) {
            return i;
        }
        let i = self.node_ids.len() as u16;
        self.node_ids.push(n);
        self.node_index.insert(n, i);
        i
    }

    /// Cell `i` as a record, when there is one.
    pub fn get(&self, i: usize) -> Option<CellInfo> {
        if self.grid.is_some() {
            return self.iter().nth(i);
        }
        let [from, to] = *self.nodes.get(i)?;
        Some(CellInfo {
            cpu_node: self.node_ids[usize::from(from)],
            mem_node: self.node_ids[usize::from(to)],
            value: self.values[i],
            level: (self.levels[i] != NONE).then(|| self.names[self.levels[i] as usize].clone()),
            hops: unpack(self.hops[i]),
            distance: unpack(self.distances[i]),
            stray: self.marks[i] & STRAY != 0,
            flagged: self.marks[i] & FLAGGED != 0,
        })
    }

    /// The cells in order, each made as it is asked for.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            cells: self,
            at: 0,
            done: 0,
        }
    }
}

/// Two sets of cells are equal when they list the same cells, whichever
/// form holds them.
impl PartialEq for Cells {
    fn eq(&self, o: &Cells) -> bool {
        self.len() == o.len() && self.iter().eq(o.iter())
    }
}

/// The cells of a `Cells`, as records.
pub struct Iter<'a> {
    cells: &'a Cells,
    /// The next cell's index in the list, or place in the grid.
    at: usize,
    /// How many cells were given.
    done: usize,
}

impl Iterator for Iter<'_> {
    type Item = CellInfo;
    fn next(&mut self) -> Option<CellInfo> {
        let c = match &self.cells.grid {
            Some(g) => {
                let at = g.next_cell(self.at)?;
                self.at = at;
                g.get(at)?
            }
            None => self.cells.get(self.at)?,
        };
        self.at += 1;
        self.done += 1;
        Some(c)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.cells.len() - self.done;
        (left, Some(left))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a Cells {
    type Item = CellInfo;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl Serialize for Cells {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for Cells {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Seq;
        impl<'de> Visitor<'de> for Seq {
            type Value = Cells;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of cells")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Cells, A::Error> {
                // The hint is the reader's guess; capped so that a forged
                // one reserves nothing large.
                let mut out = Cells::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
                while let Some(c) = seq.next_element::<CellInfo>()? {
                    out.push(c).map_err(A::Error::custom)?;
                }
                Ok(out)
            }
        }
        d.deserialize_seq(Seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(from: u32, to: u32, level: Option<&str>, hops: Option<u32>) -> CellInfo {
        CellInfo {
            cpu_node: from,
            mem_node: to,
            value: 100.0 + f64::from(from * 10 + to),
            level: level.map(LevelName::from),
            hops,
            distance: hops.map(|h| h.saturating_add(1)),
            stray: level.is_none(),
            flagged: from == 1,
        }
    }

    #[test]
    fn cells_come_back_as_they_went_in_and_serialize_as_records() {
        let given = vec![
            cell(0, 0, Some("L"), Some(0)),
            cell(0, 1, Some("A"), Some(1)),
            cell(1, 0, None, None),
            cell(1, 1, Some("L"), Some(0)),
        ];
        let mut cells = Cells::default();
        for c in given.clone() {
            cells.push(c).unwrap();
        }
        assert_eq!(cells.len(), 4);
        assert_eq!(cells.iter().collect::<Vec<_>>(), given);
        assert_eq!(cells.get(4), None);
        // Two cells of level L share one name.
        assert_eq!(cells.names.len(), 2);
        let json = serde_json::to_string(&cells).unwrap();
        assert_eq!(json, serde_json::to_string(&given).unwrap());
        let back: Cells = serde_json::from_str(&json).unwrap();
        assert_eq!(back, cells);
    }

    #[test]
    fn a_count_that_marks_none_is_refused_with_the_cell() {
        let mut cells = Cells::default();
        let e = cells
            .push(cell(2, 3, Some("A"), Some(u32::MAX)))
            .unwrap_err();
        assert!(e.contains("2>3") && e.contains("hops 4294967295"), "{e}");
        assert!(cells.is_empty(), "nothing half-added");
        let json = r#"[{"cpu_node":0,"mem_node":1,"value":1.0,"level":"A","hops":1,"distance":4294967295,"stray":false,"flagged":false}]"#;
        let e = serde_json::from_str::<Cells>(json).unwrap_err().to_string();
        assert!(e.contains("distance 4294967295"), "{e}");
        // The largest count held, and the first one past it.
        let mut top = cell(0, 1, Some("A"), Some(65_534));
        top.distance = Some(65_534);
        cells.push(top).unwrap();
        assert_eq!(cells.get(0).unwrap().hops, Some(65_534));
        assert_eq!(cells.get(0).unwrap().distance, Some(65_534));
        let e = cells.push(cell(0, 1, Some("A"), Some(65_535))).unwrap_err();
        assert!(
            e.contains("hops 65535") && e.contains("at most 65534"),
            "{e}"
        );
        assert_eq!(cells.len(), 1, "nothing half-added");
        assert_eq!(cells.names.len(), 1, "no name of a refused cell");
    }

    #[test]
    fn the_cells_name_at_most_65535_nodes() {
        let mut cells = Cells::default();
        // Nodes 0..=65533 in pairs, then one cell to itself: 65,535 nodes.
        for n in (0..65_534u32).step_by(2) {
            cells.push(cell(n * 3, n * 3 + 3, None, None)).unwrap();
        }
        cells.push(cell(1_000_000, 1_000_000, None, None)).unwrap();
        assert_eq!(cells.node_ids.len(), 65_535);
        // Known nodes still go in; a new one is refused whole.
        cells.push(cell(3, 0, None, None)).unwrap();
        let n = cells.len();
        let e = cells.push(cell(0, 7, None, None)).unwrap_err();
        assert!(
            e.contains("0>7") && e.contains("more than 65535 nodes"),
            "{e}"
        );
        let e = cells.push(cell(8, 8, None, None)).unwrap_err();
        assert!(e.contains("8>8"), "{e}");
        assert_eq!(cells.len(), n);
        assert_eq!(cells.node_ids.len(), 65_535);
        let last = cells.get(n - 1).unwrap();
        assert_eq!((last.cpu_node, last.mem_node), (3, 0));
        let one = cells.get(n - 2).unwrap();
        assert_eq!((one.cpu_node, one.mem_node), (1_000_000, 1_000_000));
    }
}
