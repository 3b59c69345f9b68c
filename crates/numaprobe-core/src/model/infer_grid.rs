//! An inference's cells as a grid over the analysed matrix: the values are
//! the matrix's own (shared, not copied), and beside them each place of the
//! grid holds its level, hops and distance, 8 bytes, where a list of
//! cells held 21 (the value again, both nodes and a byte of marks). The
//! few stray and flagged cells are listed by place. A place of the matrix
//! not measured (NaN) is no cell. `Cells` holds this form for an inference
//! it was analysed into, and the list form for one read back.

use super::infer_data::{CellInfo, LevelName};
use super::node_table::{pack, unpack, MOST};
use std::sync::Arc;

/// No level (a stray cell, or a place not measured).
const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Grid {
    rows: Vec<u32>,
    cols: Vec<u32>,
    /// Row after row, NaN where nothing was measured.
    values: Arc<Vec<f64>>,
    /// Per place: an index into `names`, or `NONE`.
    levels: Vec<u32>,
    hops: Vec<u16>,
    distances: Vec<u16>,
    /// Places of the stray and the flagged cells, ascending.
    stray: Vec<usize>,
    flagged: Vec<usize>,
    names: Vec<LevelName>,
    /// How many places hold a value.
    measured: usize,
}

/// What the analysis made of one place of the grid.
pub(crate) struct Place {
    /// An index into the grid's names.
    pub level: Option<u32>,
    pub hops: Option<u32>,
    pub distance: Option<u32>,
    pub stray: bool,
    pub flagged: bool,
}

impl Grid {
    /// A grid over `rows` x `cols` places whose values, row after row, are
    /// `values`, every place yet without level, hops or distance. The
    /// values must be one a place.
    pub fn new(
        rows: Vec<u32>,
        cols: Vec<u32>,
        values: Arc<Vec<f64>>,
        names: Vec<LevelName>,
    ) -> Result<Grid, String> {
        let n = rows.len() * cols.len();
        if values.len() != n {
            return Err(format!(
                "{} values for a grid of {} x {} places",
                values.len(),
                rows.len(),
                cols.len()
            ));
        }
        let measured = values.iter().filter(|v| !v.is_nan()).count();
        Ok(Grid {
            rows,
            cols,
            values,
            levels: vec![NONE; n],
            hops: vec![pack(None).unwrap_or(u16::MAX); n],
            distances: vec![pack(None).unwrap_or(u16::MAX); n],
            stray: Vec::new(),
            flagged: Vec::new(),
            names,
            measured,
        })
    }

    /// The place of row `r`, column `c`.
    pub fn place(&self, r: usize, c: usize) -> usize {
        r * self.cols.len() + c
    }

    /// Set what the analysis made of place `at`. Places are set in
    /// ascending order, each once. A count past 16 bits, a level not named
    /// or a place outside the grid or out of order is refused with what
    /// was wrong, and nothing of it is kept.
    pub fn set(&mut self, at: usize, p: Place) -> Result<(), String> {
        if at >= self.levels.len() {
            return Err(format!(
                "place {at} is outside a grid of {} places",
                self.levels.len()
            ));
        }
        let after = |list: &[usize]| list.last().is_none_or(|&l| l < at);
        if !(after(&self.stray) && after(&self.flagged)) {
            return Err(format!("place {at} is set after a later one"));
        }
        let held = |what: &str, x: Option<u32>| {
            pack(x).map_err(|x| format!("place {at}: {what} {x} is out of range (at most {MOST})"))
        };
        let hops = held("hops", p.hops)?;
        let distance = held("distance", p.distance)?;
        let level = match p.level {
            None => NONE,
            Some(i) if (i as usize) < self.names.len() => i,
            Some(i) => return Err(format!("place {at}: level {i} has no name")),
        };
        self.levels[at] = level;
        self.hops[at] = hops;
        self.distances[at] = distance;
        if p.stray {
            self.stray.push(at);
        }
        if p.flagged {
            self.flagged.push(at);
        }
        Ok(())
    }

    /// How many cells: the places that hold a value.
    pub fn len(&self) -> usize {
        self.measured
    }

    /// The first place at or after `at` that holds a value.
    pub fn next_cell(&self, at: usize) -> Option<usize> {
        (at..self.values.len()).find(|&i| !self.values[i].is_nan())
    }

    /// True when rows and columns are in ascending node order, so that the
    /// places, row after row, are the cells in node order.
    pub fn in_node_order(&self) -> bool {
        let up = |ids: &[u32]| ids.windows(2).all(|w| w[0] < w[1]);
        up(&self.rows) && up(&self.cols)
    }

    /// The cells of level `level` (an index into the names), place by
    /// place, as their nodes.
    pub fn cells_of(&self, level: u32) -> impl Iterator<Item = [u32; 2]> + '_ {
        let cols = self.cols.len();
        self.levels
            .iter()
            .enumerate()
            .filter(move |&(_, &l)| l == level && level != NONE)
            .map(move |(at, _)| [self.rows[at / cols], self.cols[at % cols]])
    }

    /// The place of the cell from node `from` to node `to`, when both are
    /// named.
    fn place_of(&self, from: u32, to: u32) -> Option<usize> {
        Some(self.place(index_of(&self.rows, from)?, index_of(&self.cols, to)?))
    }

    /// The level (an index into the names) of the cell from node `from`
    /// to node `to`, if it has one.
    pub fn level_of(&self, from: u32, to: u32) -> Option<u32> {
        let l = self.levels[self.place_of(from, to)?];
        (l != NONE).then_some(l)
    }

    /// The level's name and the value of pair `[a, b]`'s better direction
    /// (the larger value when `higher`, else the smaller, on the log scale
    /// the analysis compares), its stray and unmeasured directions aside;
    /// the first in the grid's order when both are as good. No level and
    /// NaN when neither direction is left.
    pub fn pair_best(&self, [a, b]: [u32; 2], higher: bool) -> (Option<LevelName>, f64) {
        let cost = |v: f64| if higher { -v.ln() } else { v.ln() };
        let mut both = [self.place_of(a, b), self.place_of(b, a)];
        both.sort_unstable();
        let best = both
            .into_iter()
            .flatten()
            .filter(|&at| !self.values[at].is_nan() && self.stray.binary_search(&at).is_err())
            .fold(None::<usize>, |best, at| match best {
                Some(b) if cost(self.values[b]) <= cost(self.values[at]) => Some(b),
                _ => Some(at),
            });
        match best {
            None => (None, f64::NAN),
            Some(at) => {
                let l = self.levels[at];
                (
                    (l != NONE).then(|| self.names[l as usize].clone()),
                    self.values[at],
                )
            }
        }
    }

    /// The cell at place `at`, if it holds a value.
    pub fn get(&self, at: usize) -> Option<CellInfo> {
        let value = *self.values.get(at)?;
        if value.is_nan() {
            return None;
        }
        let cols = self.cols.len();
        let level = self.levels[at];
        Some(CellInfo {
            cpu_node: self.rows[at / cols],
            mem_node: self.cols[at % cols],
            value,
            level: (level != NONE).then(|| self.names[level as usize].clone()),
            hops: unpack(self.hops[at]),
            distance: unpack(self.distances[at]),
            stray: self.stray.binary_search(&at).is_ok(),
            flagged: self.flagged.binary_search(&at).is_ok(),
        })
    }
}

/// Where node `n` sits among `ids` (unique, as `Matrix::new` checks). The
/// analysis asks this once per cell pair, so on a 1500-node matrix a linear
/// search made it cubic: ids are nearly always 0..n in order (an O(1) hit)
/// or at least ascending (a binary search); any other order is searched.
/// The grid and the analysis's matrix both look their nodes up with it.
pub(crate) fn index_of(ids: &[u32], n: u32) -> Option<usize> {
    if ids.get(n as usize) == Some(&n) {
        return Some(n as usize);
    }
    // A hit is always right; a miss on unsorted ids proves nothing.
    if let Ok(i) = ids.binary_search(&n) {
        return Some(i);
    }
    ids.iter().position(|&x| x == n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(level: Option<u32>, hops: Option<u32>) -> Place {
        Place {
            level,
            hops,
            distance: hops.map(|h| h + 1),
            stray: false,
            flagged: false,
        }
    }

    fn grid() -> Grid {
        let values = Arc::new(vec![90.0, 130.0, f64::NAN, 91.0, 140.0, 92.0]);
        let names = vec![LevelName::from("L"), LevelName::from("A")];
        Grid::new(vec![0, 1], vec![0, 1, 2], values, names).unwrap()
    }

    #[test]
    fn node_order_is_rows_and_columns_strictly_ascending() {
        let g = |rows: Vec<u32>, cols: Vec<u32>| {
            let values = Arc::new(vec![1.0; rows.len() * cols.len()]);
            Grid::new(rows, cols, values, vec![LevelName::from("L")]).unwrap()
        };
        assert!(g(vec![0, 1, 5], vec![0, 1, 2]).in_node_order());
        assert!(!g(vec![1, 0], vec![0, 1]).in_node_order());
        assert!(!g(vec![0, 1], vec![1, 0]).in_node_order());
        // A node given twice is not in order: its places would not come
        // in the sorted order of distinct cells.
        assert!(!g(vec![3, 3], vec![0, 1]).in_node_order());
        assert!(!g(vec![0, 1], vec![2, 2]).in_node_order());
    }

    #[test]
    fn a_grid_gives_its_measured_places_as_cells() {
        let mut g = grid();
        assert_eq!(g.len(), 5);
        assert_eq!(g.place(1, 2), 5);
        g.set(0, place(Some(0), Some(0))).unwrap();
        g.set(
            1,
            Place {
                stray: true,
                ..place(None, Some(1))
            },
        )
        .unwrap();
        g.set(
            4,
            Place {
                flagged: true,
                ..place(Some(1), Some(2))
            },
        )
        .unwrap();
        let c = g.get(0).unwrap();
        assert_eq!((c.cpu_node, c.mem_node, c.value), (0, 0, 90.0));
        assert_eq!(c.level.as_deref(), Some("L"));
        assert_eq!(
            (c.hops, c.distance, c.stray, c.flagged),
            (Some(0), Some(1), false, false)
        );
        let c = g.get(1).unwrap();
        assert_eq!((c.level, c.stray, c.flagged), (None, true, false));
        let c = g.get(4).unwrap();
        assert_eq!((c.cpu_node, c.mem_node, c.value), (1, 1, 140.0));
        assert_eq!(c.level.as_deref(), Some("A"));
        assert_eq!(
            (c.hops, c.distance, c.stray, c.flagged),
            (Some(2), Some(3), false, true)
        );
        // A place never set has a value and nothing else.
        let c = g.get(3).unwrap();
        assert_eq!((c.cpu_node, c.mem_node, c.value), (1, 0, 91.0));
        assert_eq!((c.level, c.hops, c.distance), (None, None, None));
        // The place not measured is no cell, and is walked past.
        assert_eq!(g.get(2), None);
        assert_eq!(g.get(6), None);
        assert_eq!(g.next_cell(2), Some(3));
        assert_eq!(g.next_cell(5), Some(5));
        assert_eq!(g.next_cell(6), None);
    }

    #[test]
    fn what_a_grid_cannot_hold_is_refused_and_nothing_kept() {
        let e = Grid::new(vec![0], vec![0, 1], Arc::new(vec![1.0]), Vec::new()).unwrap_err();
        assert!(e.contains("1 values") && e.contains("1 x 2"), "{e}");
        let mut g = grid();
        let e = g.set(6, place(None, None)).unwrap_err();
        assert!(e.contains("place 6") && e.contains("6 places"), "{e}");
        let e = g.set(0, place(Some(2), None)).unwrap_err();
        assert!(e.contains("level 2"), "{e}");
        let e = g.set(0, place(Some(0), Some(65_535))).unwrap_err();
        assert!(
            e.contains("hops 65535") && e.contains("at most 65534"),
            "{e}"
        );
        let mut far = place(Some(0), Some(1));
        far.distance = Some(70_000);
        let e = g.set(0, far).unwrap_err();
        assert!(e.contains("distance 70000"), "{e}");
        assert_eq!(g.get(0).unwrap().level, None, "nothing kept");
        // The largest count held.
        g.set(0, place(Some(0), Some(65_533))).unwrap();
        assert_eq!(g.get(0).unwrap().distance, Some(65_534));
        g.set(
            3,
            Place {
                stray: true,
                ..place(None, None)
            },
        )
        .unwrap();
        let e = g
            .set(
                1,
                Place {
                    flagged: true,
                    ..place(None, None)
                },
            )
            .unwrap_err();
        assert!(e.contains("place 1") && e.contains("later"), "{e}");
        assert!(!g.get(1).unwrap().flagged, "nothing kept");
        let e = g.set(3, place(None, None)).unwrap_err();
        assert!(e.contains("later"), "{e}");
    }
}
