//! The direct links with their level and value. Every pair of a full
//! matrix can be a link, a million at 1500 nodes, and a record each (nodes,
//! a shared level name, the value) took 24 bytes; the analysis's links are
//! their node pairs alone, 8 bytes, each link's level and value read when
//! it is written from the grid of the inference's cells (`infer_grid`),
//! which holds both directions' values and levels. Links read back from a
//! document hold their records. Either serializes as the list of `Link`
//! records the JSON contract names, one made at a time.

use super::infer_data::Link;
use super::infer_grid::Grid;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::sync::Arc;

#[derive(Debug, Clone, Default)]
pub struct LinkDetails(Form);

#[derive(Debug, Clone)]
enum Form {
    List(Vec<Link>),
    /// Links as node pairs, their level and value in `grid`; `higher`:
    /// more is better, so a pair's value is its larger direction.
    Grid {
        links: Vec<[u32; 2]>,
        grid: Arc<Grid>,
        higher: bool,
    },
}

impl Default for Form {
    fn default() -> Self {
        Form::List(Vec::new())
    }
}

impl LinkDetails {
    /// Links whose level and value are read from `grid`: each link's
    /// better direction that is not stray (the first in the grid's order
    /// when both are as good), with that cell's level.
    pub(crate) fn of_grid(links: Vec<[u32; 2]>, grid: Arc<Grid>, higher: bool) -> LinkDetails {
        LinkDetails(Form::Grid {
            links,
            grid,
            higher,
        })
    }

    pub fn len(&self) -> usize {
        match &self.0 {
            Form::List(l) => l.len(),
            Form::Grid { links, .. } => links.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The links in order, each made as it is asked for.
    pub fn iter(&self) -> Box<dyn Iterator<Item = Link> + '_> {
        match &self.0 {
            Form::List(l) => Box::new(l.iter().cloned()),
            Form::Grid {
                links,
                grid,
                higher,
            } => Box::new(links.iter().map(|&nodes| {
                let (level, value) = grid.pair_best(nodes, *higher);
                Link {
                    nodes,
                    level: level.unwrap_or_default(),
                    value,
                }
            })),
        }
    }
}

impl<'a> IntoIterator for &'a LinkDetails {
    type Item = Link;
    type IntoIter = Box<dyn Iterator<Item = Link> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl From<Vec<Link>> for LinkDetails {
    fn from(list: Vec<Link>) -> Self {
        LinkDetails(Form::List(list))
    }
}

/// Equal when they list the same links, whichever form holds them.
impl PartialEq for LinkDetails {
    fn eq(&self, o: &LinkDetails) -> bool {
        self.len() == o.len() && self.iter().eq(o.iter())
    }
}

impl Serialize for LinkDetails {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for LinkDetails {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<Link>::deserialize(d).map(LinkDetails::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::infer::LevelName;
    use crate::model::infer_grid::Place;

    /// The three nodes' values and level names, no place set yet.
    fn bare() -> Grid {
        let v = vec![
            90.0,
            130.0,
            200.0,
            120.0,
            91.0,
            140.0,
            150.0,
            140.0,
            f64::NAN,
        ];
        let names = ["L", "A", "B"].map(LevelName::from).to_vec();
        Grid::new(vec![0, 1, 2], vec![0, 1, 2], Arc::new(v), names).unwrap()
    }

    /// Nodes 0, 1, 2: 0>1 130 (A), 1>0 120 (A), 0>2 200 (B), 2>0 150
    /// stray, 1>2 and 2>1 both 140 (A); 2>2 not measured.
    fn grid() -> Arc<Grid> {
        let mut g = bare();
        let at = |level: Option<u32>, stray: bool| Place {
            level,
            hops: None,
            distance: None,
            stray,
            flagged: false,
        };
        for (p, level, stray) in [
            (0, Some(0), false),
            (1, Some(1), false),
            (2, Some(2), false),
            (3, Some(1), false),
            (4, Some(0), false),
            (5, Some(1), false),
            (6, None, true),
            (7, Some(1), false),
        ] {
            g.set(p, at(level, stray)).unwrap();
        }
        Arc::new(g)
    }

    fn link(a: u32, b: u32, level: &str, value: f64) -> Link {
        Link {
            nodes: [a, b],
            level: LevelName::from(level),
            value,
        }
    }

    #[test]
    fn a_links_level_and_value_are_its_better_direction_not_stray() {
        let links = vec![[0, 1], [0, 2], [1, 2]];
        let lower = LinkDetails::of_grid(links.clone(), grid(), false);
        let want = vec![
            link(0, 1, "A", 120.0),
            // 2>0 is stray: 0>2 stands alone, though it is worse.
            link(0, 2, "B", 200.0),
            link(1, 2, "A", 140.0),
        ];
        assert_eq!(lower.iter().collect::<Vec<_>>(), want);
        assert_eq!(lower.len(), 3);
        assert!(!lower.is_empty());
        let higher = LinkDetails::of_grid(links, grid(), true);
        let got: Vec<Link> = (&higher).into_iter().collect();
        assert_eq!(got[0], link(0, 1, "A", 130.0));
        assert_eq!(got[1], link(0, 2, "B", 200.0));
        // A link of no measured direction has no level and no value.
        let none = LinkDetails::of_grid(vec![[2, 2], [0, 7]], grid(), false);
        for l in none.iter() {
            assert_eq!(&*l.level, "");
            assert!(l.value.is_nan());
        }
        let json = serde_json::to_string(&lower).unwrap();
        assert_eq!(json, serde_json::to_string(&want).unwrap());
        let back: LinkDetails = serde_json::from_str(&json).unwrap();
        assert!(matches!(back.0, Form::List(_)));
        assert_eq!(back, lower);
        assert_ne!(back, higher);
        assert!(LinkDetails::default().is_empty());
        assert_eq!(LinkDetails::from(want.clone()).len(), 3);
    }

    #[test]
    fn equal_directions_give_the_first_in_the_grids_order() {
        // 1>2 and 2>1 are both 140, at places 5 and 7, of levels B and A.
        let mut g = bare();
        let p = |level| Place {
            level: Some(level),
            hops: None,
            distance: None,
            stray: false,
            flagged: false,
        };
        g.set(5, p(2)).unwrap();
        g.set(7, p(1)).unwrap();
        let d = LinkDetails::of_grid(vec![[2, 1], [1, 2]], Arc::new(g), false);
        let got: Vec<Link> = d.iter().collect();
        assert_eq!(got, vec![link(2, 1, "B", 140.0), link(1, 2, "B", 140.0)]);
    }
}
