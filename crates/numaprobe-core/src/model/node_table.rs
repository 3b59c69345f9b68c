//! A node-by-node table of small counts (an inference's hops and
//! distances), held flat in 16 bits a cell, where rows of `Option<u32>`
//! took 8 bytes a cell and a heap block a row: a 1500-node matrix's two
//! tables are 2.25 million cells each. It serializes as the rows of
//! numbers and nulls the JSON contract (doc/json.md) names, one row made
//! at a time, and reads them back.

use serde::de::Error as _;
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// No count (a pair never measured, or never joined).
const NONE: u16 = u16::MAX;
/// The largest count 16 bits hold beside the mark for none.
pub(crate) const MOST: u16 = NONE - 1;

/// A count as held in 16 bits, or the count that does not fit (65,535 or
/// more); the one rule of this table and of an inference's cells.
pub(crate) fn pack(x: Option<u32>) -> Result<u16, u32> {
    match x {
        None => Ok(NONE),
        Some(x) => u16::try_from(x).ok().filter(|&x| x != NONE).ok_or(x),
    }
}

/// A held count back.
pub(crate) fn unpack(x: u16) -> Option<u32> {
    (x != NONE).then_some(u32::from(x))
}

/// Rows of counts, each a number below 65,535 or none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeTable {
    rows: usize,
    cols: usize,
    cells: Vec<u16>,
}

impl NodeTable {
    /// A table of `rows` x `cols` cells, every one none.
    pub fn new(rows: usize, cols: usize) -> NodeTable {
        NodeTable {
            rows,
            cols,
            cells: vec![NONE; rows * cols],
        }
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The count at row `i`, column `j`; none outside the table.
    pub fn get(&self, i: usize, j: usize) -> Option<u32> {
        if i >= self.rows || j >= self.cols {
            return None;
        }
        unpack(self.cells[i * self.cols + j])
    }

    /// Set the count at row `i`, column `j`. A count is held in 16 bits:
    /// 65,535 or more is refused with what was wrong, as is a place outside
    /// the table, and nothing changes.
    pub fn set(&mut self, i: usize, j: usize, x: Option<u32>) -> Result<(), String> {
        if i >= self.rows || j >= self.cols {
            return Err(format!(
                "cell [{i}][{j}] is outside a table of {} x {}",
                self.rows, self.cols
            ));
        }
        let held = pack(x)
            .map_err(|x| format!("cell [{i}][{j}]: {x} is out of range (at most {MOST})"))?;
        self.cells[i * self.cols + j] = held;
        Ok(())
    }

    /// Row `i`'s counts, in column order (none for a row past the end).
    pub fn row(&self, i: usize) -> impl Iterator<Item = Option<u32>> + '_ {
        let cols = if i < self.rows { self.cols } else { 0 };
        (0..cols).map(move |j| self.get(i, j))
    }

    /// Every count, row after row.
    pub fn iter(&self) -> impl Iterator<Item = Option<u32>> + '_ {
        self.cells.iter().map(|&x| unpack(x))
    }

    /// What is wrong when a table named `what` has not one row and one
    /// column per node of `n` (its rows are all of one length, as it reads).
    pub fn not_square(&self, what: &str, n: usize) -> Option<String> {
        if self.rows != n {
            return Some(format!("{what} has {} rows but nodes names {n}", self.rows));
        }
        (n > 0 && self.cols != n)
            .then(|| format!("{what} row 0 has {} values but nodes names {n}", self.cols))
    }

    /// The table as rows of `Option`s, a copy.
    pub fn rows(&self) -> Vec<Vec<Option<u32>>> {
        (0..self.rows).map(|i| self.row(i).collect()).collect()
    }

    /// A table of `rows`; they must all be as long as the first, and every
    /// count below 65,535.
    pub fn from_rows(rows: Vec<Vec<Option<u32>>>) -> Result<NodeTable, String> {
        let cols = rows.first().map_or(0, Vec::len);
        let mut t = NodeTable::new(rows.len(), cols);
        for (i, row) in rows.iter().enumerate() {
            if row.len() != cols {
                return Err(format!(
                    "row {i} has {} values where row 0 has {cols}",
                    row.len()
                ));
            }
            for (j, &x) in row.iter().enumerate() {
                t.set(i, j, x)?;
            }
        }
        Ok(t)
    }
}

/// One row, serialized as it is walked.
struct Row<'a>(&'a NodeTable, usize);

impl Serialize for Row<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.row(self.1))
    }
}

impl Serialize for NodeTable {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.rows))?;
        for i in 0..self.rows {
            seq.serialize_element(&Row(self, i))?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for NodeTable {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let rows = Vec::<Vec<Option<u32>>>::deserialize(d)?;
        NodeTable::from_rows(rows).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_come_back_and_serialize_as_rows() {
        let rows = vec![
            vec![Some(0), Some(1), None],
            vec![Some(1), Some(0), Some(65_534)],
        ];
        let t = NodeTable::from_rows(rows.clone()).unwrap();
        assert_eq!((t.len(), t.cols()), (2, 3));
        assert_eq!(t.rows(), rows);
        assert_eq!(t.get(1, 2), Some(65_534));
        assert_eq!(t.get(0, 2), None);
        assert_eq!(t.get(2, 0), None, "outside");
        assert_eq!(t.get(0, 3), None, "outside");
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(json, serde_json::to_string(&rows).unwrap());
        assert_eq!(serde_json::from_str::<NodeTable>(&json).unwrap(), t);
        assert_eq!(serde_json::to_string(&NodeTable::default()).unwrap(), "[]");
    }

    #[test]
    fn a_count_past_16_bits_or_a_ragged_row_is_refused() {
        let mut t = NodeTable::new(2, 2);
        let e = t.set(0, 1, Some(65_535)).unwrap_err();
        assert!(
            e.contains("[0][1]") && e.contains("65535") && e.contains("at most 65534"),
            "{e}"
        );
        assert_eq!(t.get(0, 1), None, "nothing changed");
        assert!(t.set(2, 0, Some(1)).unwrap_err().contains("outside"));
        let e = serde_json::from_str::<NodeTable>("[[0,1],[1]]")
            .unwrap_err()
            .to_string();
        assert!(e.contains("row 1 has 1 values where row 0 has 2"), "{e}");
        let e = serde_json::from_str::<NodeTable>("[[0,4294967295]]")
            .unwrap_err()
            .to_string();
        assert!(e.contains("4294967295 is out of range"), "{e}");
        let t = NodeTable::new(2, 3);
        assert_eq!(
            t.not_square("hops", 3).unwrap(),
            "hops has 2 rows but nodes names 3"
        );
        assert_eq!(
            t.not_square("hops", 2).unwrap(),
            "hops row 0 has 3 values but nodes names 2"
        );
        assert_eq!(NodeTable::new(3, 3).not_square("hops", 3), None);
        assert_eq!(NodeTable::default().not_square("hops", 0), None);
        assert_eq!(
            NodeTable::new(0, 3).not_square("hops", 0),
            None,
            "no rows: no row 0 whose length could be wrong"
        );
    }

    /// A column past the end is refused, not taken as the next row's first.
    #[test]
    fn places_outside_the_table_are_refused_and_rows_walk_in_order() {
        let mut t = NodeTable::new(2, 2);
        assert!(!t.is_empty());
        assert!(NodeTable::new(0, 0).is_empty());
        let e = t.set(0, 2, Some(7)).unwrap_err();
        assert_eq!(e, "cell [0][2] is outside a table of 2 x 2");
        assert_eq!(t.get(1, 0), None, "the next row's first cell untouched");
        t.set(0, 1, Some(3)).unwrap();
        t.set(1, 0, Some(4)).unwrap();
        t.set(1, 1, Some(0)).unwrap();
        assert_eq!(
            t.iter().collect::<Vec<_>>(),
            [None, Some(3), Some(4), Some(0)]
        );
        assert_eq!(t.row(1).collect::<Vec<_>>(), [Some(4), Some(0)]);
        assert_eq!(t.row(2).count(), 0, "a row past the end is empty");
        t.set(0, 1, None).unwrap();
        assert_eq!(t.get(0, 1), None, "set to none clears the count");
    }
}
