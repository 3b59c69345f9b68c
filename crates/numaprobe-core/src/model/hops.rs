//! Hop counts between nodes, derived from distance levels.
//!
//! The note counts hops on the interconnect (0 local, 1 directly linked, 2 one
//! node in between). No machine tells us its links, so the planner ranks the
//! distinct remote distance levels: the nearest remote level is 1 hop, the
//! next 2 hops, and so on. The distances come from the firmware (SLIT) or from
//! a measured latency matrix; values within `LEVEL_TOLERANCE` of a level's
//! first value belong to that level, so measured noise (85 ns vs 88 ns) does
//! not invent a hop. Nothing here knows a particular machine.

use crate::topology::Topology;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Relative gap below which two distances are the same level.
pub const LEVEL_TOLERANCE: f64 = 0.05;

/// Where the distances behind the hop counts came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DistanceSource {
    /// The firmware's table (`/sys/devices/system/node/nodeN/distance`).
    Slit,
    /// A measured matrix (latency, lower is nearer).
    Measured,
    /// No table: every remote node is taken as 1 hop away.
    Assumed,
}

/// Hop counts between every pair of nodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HopMap {
    pub source: DistanceSource,
    pub node_ids: Vec<u32>,
    /// `hops[a][b]` from `node_ids[a]` to `node_ids[b]`.
    pub hops: Vec<Vec<u32>>,
    /// The distance that defines each remote level: `levels[0]` is 1 hop.
    pub levels: Vec<f64>,
}

impl HopMap {
    /// From the topology's SLIT, or the "everything remote is 1 hop" fallback
    /// when the kernel gives no table (or a table that misses a node).
    pub fn from_topology(topo: &Topology) -> HopMap {
        let ids = topo.node_ids();
        let matrix: Option<Vec<Vec<f64>>> = ids
            .iter()
            .map(|&a| {
                ids.iter()
                    .map(|&b| topo.distance(a, b).map(f64::from))
                    .collect::<Option<Vec<f64>>>()
            })
            .collect();
        match matrix {
            Some(m) if ids.len() > 1 => HopMap::from_matrix(ids, &m, DistanceSource::Slit),
            Some(_) => HopMap::from_matrix(ids, &[vec![10.0]], DistanceSource::Slit),
            None => HopMap::assumed(ids),
        }
    }

    /// Every remote node 1 hop away: what we can say without distances.
    pub fn assumed(node_ids: Vec<u32>) -> HopMap {
        let n = node_ids.len();
        let hops = (0..n)
            .map(|a| (0..n).map(|b| u32::from(a != b)).collect())
            .collect();
        HopMap {
            source: DistanceSource::Assumed,
            node_ids,
            hops,
            levels: if n > 1 { vec![1.0] } else { Vec::new() },
        }
    }

    /// Rank the distinct off-diagonal distances of `matrix` (rows: from,
    /// columns: to, in `node_ids` order) into hop levels. A non-finite or
    /// missing entry is treated as the farthest level seen.
    pub fn from_matrix(node_ids: Vec<u32>, matrix: &[Vec<f64>], source: DistanceSource) -> HopMap {
        let n = node_ids.len();
        let at = |a: usize, b: usize| -> Option<f64> {
            matrix
                .get(a)
                .and_then(|r| r.get(b))
                .copied()
                .filter(|v| v.is_finite())
        };
        let mut remote: Vec<f64> = (0..n)
            .flat_map(|a| (0..n).filter(move |&b| b != a).map(move |b| (a, b)))
            .filter_map(|(a, b)| at(a, b))
            .collect();
        remote.sort_by(f64::total_cmp);
        let mut levels: Vec<f64> = Vec::new();
        for v in remote {
            match levels.last() {
                Some(&l) if v <= l * (1.0 + LEVEL_TOLERANCE) => {}
                _ => levels.push(v),
            }
        }
        let level_of = |v: Option<f64>| -> u32 {
            match v {
                // Levels were built from the sorted values, so a value belongs
                // to the last level whose first value is not above it; a
                // binary search keeps a table of many levels linear in cells.
                Some(v) => levels.partition_point(|&l| l <= v).max(1) as u32,
                None => levels.len().max(1) as u32,
            }
        };
        let hops = (0..n)
            .map(|a| {
                (0..n)
                    .map(|b| if a == b { 0 } else { level_of(at(a, b)) })
                    .collect()
            })
            .collect();
        HopMap {
            source,
            node_ids,
            hops,
            levels,
        }
    }

    /// From a measured latency matrix (rows: CPU nodes, columns: memory
    /// nodes, None where not measured). Nodes that are only a column
    /// (memory-only) have no row; their missing entries count as the
    /// farthest level, which never matters since no thread runs there.
    pub fn from_latency(rows: &[u32], cols: &[u32], matrix: &[Vec<Option<f64>>]) -> HopMap {
        let mut ids: Vec<u32> = rows.iter().chain(cols).copied().collect();
        ids.sort_unstable();
        ids.dedup();
        // Each id's row and column looked up once, not searched per cell:
        // the square is then linear in its cells (the first of a repeated id
        // counts, as a search would find it).
        let first = |list: &[u32]| -> BTreeMap<u32, usize> {
            let mut at = BTreeMap::new();
            for (i, &id) in list.iter().enumerate() {
                at.entry(id).or_insert(i);
            }
            at
        };
        let (row_of, col_of) = (first(rows), first(cols));
        let square: Vec<Vec<f64>> = ids
            .iter()
            .map(|a| {
                let row = row_of.get(a).and_then(|&r| matrix.get(r));
                ids.iter()
                    .map(|b| {
                        col_of
                            .get(b)
                            .and_then(|&c| row.and_then(|row| row.get(c)))
                            .copied()
                            .flatten()
                            .unwrap_or(f64::NAN)
                    })
                    .collect()
            })
            .collect();
        HopMap::from_matrix(ids, &square, DistanceSource::Measured)
    }

    /// Hops from node `from` to node `to`; None for a node not in the map.
    pub fn hops(&self, from: u32, to: u32) -> Option<u32> {
        let a = self.node_ids.iter().position(|&n| n == from)?;
        let b = self.node_ids.iter().position(|&n| n == to)?;
        self.hops.get(a)?.get(b).copied()
    }

    /// The largest hop count in the map (0 on a one-node machine).
    pub fn max_hops(&self) -> u32 {
        self.hops.iter().flatten().copied().max().unwrap_or(0)
    }
}

/// "0 Hop", "1 Hop", "2 Hops": the note's bar-segment wording.
pub fn hop_words(h: u32) -> String {
    if h == 1 {
        "1 Hop".to_string()
    } else {
        format!("{h} Hops")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(rows: &[&[f64]]) -> Vec<Vec<f64>> {
        rows.iter().map(|r| r.to_vec()).collect()
    }

    #[test]
    fn quartet_slit_gives_one_and_two_hops() {
        // The note's Quartet: N0-N1, N0-N2, N1-N3, N2-N3 linked; 0-3 and 1-2 two hops.
        let slit = m(&[
            &[10., 16., 16., 22.],
            &[16., 10., 22., 16.],
            &[16., 22., 10., 16.],
            &[22., 16., 16., 10.],
        ]);
        let h = HopMap::from_matrix(vec![0, 1, 2, 3], &slit, DistanceSource::Slit);
        assert_eq!(h.levels, vec![16.0, 22.0]);
        assert_eq!(h.hops(0, 0), Some(0));
        assert_eq!(h.hops(0, 1), Some(1));
        assert_eq!(h.hops(0, 3), Some(2));
        assert_eq!(h.hops(1, 2), Some(2));
        assert_eq!(h.max_hops(), 2);
        assert_eq!(h.hops(0, 9), None);
    }

    #[test]
    fn measured_noise_does_not_invent_levels() {
        let lat = m(&[&[80., 120., 125.], &[121., 82., 180.], &[124., 178., 81.]]);
        let h = HopMap::from_matrix(vec![0, 1, 2], &lat, DistanceSource::Measured);
        assert_eq!(h.levels.len(), 2);
        assert_eq!(h.hops(0, 1), Some(1));
        assert_eq!(h.hops(0, 2), Some(1));
        assert_eq!(h.hops(1, 2), Some(2));
    }

    #[test]
    fn a_measured_latency_matrix_with_a_memory_only_node() {
        // Rows 0, 1; columns 0, 1, 2 (node 2 has memory only).
        let m = vec![
            vec![Some(90.0), Some(140.0), Some(200.0)],
            vec![Some(141.0), Some(91.0), None],
        ];
        let h = HopMap::from_latency(&[0, 1], &[0, 1, 2], &m);
        assert_eq!(h.source, DistanceSource::Measured);
        assert_eq!(h.hops(0, 1), Some(1));
        assert_eq!(h.hops(0, 2), Some(2));
        assert_eq!(h.hops(1, 2), Some(2), "unmeasured: farthest level");
    }

    #[test]
    fn flat_and_single_node_tables() {
        let flat = m(&[&[10., 20.], &[20., 10.]]);
        let h = HopMap::from_matrix(vec![0, 1], &flat, DistanceSource::Slit);
        assert_eq!(h.max_hops(), 1);
        let one = HopMap::from_matrix(vec![0], &m(&[&[10.]]), DistanceSource::Slit);
        assert_eq!(one.max_hops(), 0);
        assert!(one.levels.is_empty());
        let a = HopMap::assumed(vec![0, 4]);
        assert_eq!(a.hops(4, 0), Some(1));
        assert_eq!(hop_words(1), "1 Hop");
        assert_eq!(hop_words(2), "2 Hops");
    }
}
