//! A level's member cells. A remote level of a full matrix holds nearly
//! every cell, and a list of their node pairs took 8 bytes a cell; the
//! analysis's levels read them from the grid of the inference's cells
//! instead (`infer_grid`), which knows each cell's level, and hold no list.
//! A level read back from a document, or one whose grid is not in node
//! order, holds the list. Either serializes as the sorted list of
//! `[requesting node, memory node]` pairs the JSON contract names.

use super::infer_grid::Grid;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::sync::Arc;

/// Directed cells `[requesting node, memory node]` (node numbers), in the
/// order they were given: ascending for the analysis's levels.
#[derive(Debug, Clone, Default)]
pub struct Members(Form);

#[derive(Debug, Clone)]
enum Form {
    List(Vec<[u32; 2]>),
    /// The cells of `level` in `grid`, `len` of them.
    Grid {
        grid: Arc<Grid>,
        level: u32,
        len: usize,
    },
}

impl Default for Form {
    fn default() -> Self {
        Form::List(Vec::new())
    }
}

impl Members {
    /// The cells of level `level` (an index into the grid's names), read
    /// from `grid` when it is in node order (so that its places come in
    /// the sorted order of the members), else listed and sorted.
    pub(crate) fn of_grid(grid: &Arc<Grid>, level: u32) -> Members {
        if !grid.in_node_order() {
            let mut list: Vec<[u32; 2]> = grid.cells_of(level).collect();
            list.sort_unstable();
            return Members(Form::List(list));
        }
        Members(Form::Grid {
            grid: grid.clone(),
            level,
            len: grid.cells_of(level).count(),
        })
    }

    pub fn len(&self) -> usize {
        match &self.0 {
            Form::List(l) => l.len(),
            Form::Grid { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The members in order.
    pub fn iter(&self) -> Box<dyn Iterator<Item = [u32; 2]> + '_> {
        match &self.0 {
            Form::List(l) => Box::new(l.iter().copied()),
            Form::Grid { grid, level, .. } => Box::new(grid.cells_of(*level)),
        }
    }

    pub fn contains(&self, cell: &[u32; 2]) -> bool {
        match &self.0 {
            Form::List(l) => l.contains(cell),
            Form::Grid { grid, level, .. } => grid.level_of(cell[0], cell[1]) == Some(*level),
        }
    }

    /// The members as a list, a copy.
    pub fn to_vec(&self) -> Vec<[u32; 2]> {
        self.iter().collect()
    }
}

impl From<Vec<[u32; 2]>> for Members {
    fn from(list: Vec<[u32; 2]>) -> Self {
        Members(Form::List(list))
    }
}

/// Equal when they list the same cells in the same order, whichever form
/// holds them.
impl PartialEq for Members {
    fn eq(&self, o: &Members) -> bool {
        self.len() == o.len() && self.iter().eq(o.iter())
    }
}

impl PartialEq<Vec<[u32; 2]>> for Members {
    fn eq(&self, o: &Vec<[u32; 2]>) -> bool {
        self.len() == o.len() && self.iter().eq(o.iter().copied())
    }
}

impl Serialize for Members {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<[u32; 2]>::deserialize(d).map(Members::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::infer_data::LevelName;
    use crate::model::infer_grid::Place;

    /// A 2 x 3 grid over `rows`: level 1 at places 1 and 5, level 0 at 0,
    /// place 4 not measured, place 2 stray.
    fn grid(rows: Vec<u32>) -> Arc<Grid> {
        let values = Arc::new(vec![90.0, 130.0, 131.0, 132.0, f64::NAN, 133.0]);
        let names = vec![LevelName::from("L"), LevelName::from("A")];
        let mut g = Grid::new(rows, vec![0, 1, 2], values, names).unwrap();
        let at = |level: Option<u32>, stray: bool| Place {
            level,
            hops: None,
            distance: None,
            stray,
            flagged: false,
        };
        g.set(0, at(Some(0), false)).unwrap();
        g.set(1, at(Some(1), false)).unwrap();
        g.set(2, at(None, true)).unwrap();
        g.set(5, at(Some(1), false)).unwrap();
        Arc::new(g)
    }

    #[test]
    fn members_are_equal_by_their_cells_not_their_count() {
        let a = Members::from(vec![[0, 1], [1, 0]]);
        assert_eq!(a, Members::from(vec![[0, 1], [1, 0]]));
        assert_ne!(a, Members::from(vec![[0, 1], [2, 0]]));
        assert_ne!(a, Members::from(vec![[0, 1]]));
        assert_ne!(a, Members::from(vec![[0, 1], [1, 0], [2, 0]]));
        assert!(a == vec![[0, 1], [1, 0]]);
        assert!(a != vec![[0, 1], [2, 0]]);
        assert!(a != vec![[0, 1]]);
    }

    #[test]
    fn a_levels_members_are_read_from_the_grid_in_node_order() {
        let g = grid(vec![0, 1]);
        let m = Members::of_grid(&g, 1);
        assert!(matches!(m.0, Form::Grid { .. }));
        assert_eq!(m.len(), 2);
        assert!(!m.is_empty());
        assert_eq!(m.to_vec(), vec![[0, 1], [1, 2]]);
        assert_eq!(m, vec![[0, 1], [1, 2]]);
        assert_ne!(m, vec![[0, 1], [1, 1]]);
        assert_ne!(m, vec![[0, 1]]);
        assert!(m.contains(&[1, 2]) && m.contains(&[0, 1]));
        assert!(!m.contains(&[0, 0]) && !m.contains(&[0, 2]) && !m.contains(&[7, 1]));
        assert!(!m.contains(&[1, 7]));
        let local = Members::of_grid(&g, 0);
        assert_eq!(local.to_vec(), vec![[0, 0]]);
        // The stray cell is no member of any level.
        assert!(Members::of_grid(&g, u32::MAX).is_empty());
        let json = serde_json::to_string(&m).unwrap();
        assert_eq!(json, "[[0,1],[1,2]]");
        let back: Members = serde_json::from_str(&json).unwrap();
        assert!(matches!(back.0, Form::List(_)));
        assert_eq!(back, m);
        assert_eq!(back.len(), 2);
        assert!(back.contains(&[1, 2]) && !back.contains(&[2, 1]));
    }

    #[test]
    fn a_grid_out_of_node_order_gives_its_members_sorted() {
        // Rows 5 then 3: place 1 is 5>1, place 5 is 3>2.
        let g = grid(vec![5, 3]);
        let m = Members::of_grid(&g, 1);
        assert!(matches!(m.0, Form::List(_)));
        assert_eq!(m.to_vec(), vec![[3, 2], [5, 1]]);
        assert!(Members::from(Vec::new()).is_empty());
        assert!(Members::default().is_empty());
    }
}
