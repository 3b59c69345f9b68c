//! Sets of nodes for the inference: a union-find that groups nodes joined
//! by pairs, the components a set of edges makes, and bit rows that make
//! "does some node reach both" and a breadth-first step word-wise. Kept
//! apart from `work`, which owns what the inference derives with them.

use std::collections::BTreeMap;

/// Union-find over node indices: the root of a set is its lowest index.
pub(crate) struct Sets(Vec<usize>);

impl Sets {
    pub(crate) fn new(n: usize) -> Self {
        Sets((0..n).collect())
    }
    pub(crate) fn find(&mut self, x: usize) -> usize {
        let p = &mut self.0;
        let mut r = x;
        while p[r] != r {
            r = p[r];
        }
        let mut y = x;
        while p[y] != r {
            let nx = p[y];
            p[y] = r;
            y = nx;
        }
        r
    }
    pub(crate) fn join(&mut self, i: usize, j: usize) {
        let (ri, rj) = (self.find(i), self.find(j));
        if ri != rj {
            self.0[ri.max(rj)] = ri.min(rj);
        }
    }
    /// The sets as node lists, ordered by their lowest member.
    pub(crate) fn groups(&mut self, nodes: &[u32]) -> Vec<Vec<u32>> {
        let mut by_root: BTreeMap<usize, Vec<u32>> = BTreeMap::new();
        for (i, &n) in nodes.iter().enumerate() {
            let r = self.find(i);
            by_root.entry(r).or_default().push(n);
        }
        by_root.into_values().collect()
    }
}

/// Node sets as bit rows, 64 nodes a word: "does some node reach both"
/// and a breadth-first step are word-wise, so the link rule and the hops
/// of n nodes cost n^3/64 word operations, not n^3 lookups.
pub(crate) struct Bits {
    words: usize,
    rows: Vec<u64>,
}

impl Bits {
    pub(crate) fn new(n: usize) -> Self {
        let words = n.div_ceil(64);
        Bits {
            words,
            rows: vec![0; n * words],
        }
    }
    pub(crate) fn set(&mut self, r: usize, c: usize) {
        self.rows[r * self.words + c / 64] |= 1 << (c % 64);
    }
    pub(crate) fn row(&self, r: usize) -> &[u64] {
        &self.rows[r * self.words..(r + 1) * self.words]
    }
    pub(crate) fn meet(&self, a: usize, b: usize) -> bool {
        self.row(a).iter().zip(self.row(b)).any(|(x, y)| x & y != 0)
    }
    /// Steps from `s` to every row's node along the set bits; None where
    /// unreachable.
    pub(crate) fn bfs(&self, s: usize) -> Vec<Option<u32>> {
        let n = self.rows.len().checked_div(self.words).unwrap_or(0);
        let mut dist = vec![None; n];
        let mut seen = vec![0u64; self.words];
        seen[s / 64] |= 1 << (s % 64);
        dist[s] = Some(0);
        let mut frontier = vec![s];
        let mut d = 0;
        while !frontier.is_empty() {
            d += 1;
            let mut next = Vec::new();
            for &u in &frontier {
                for (w, (&bits, seen_w)) in self.row(u).iter().zip(seen.iter_mut()).enumerate() {
                    let mut fresh = bits & !*seen_w;
                    *seen_w |= fresh;
                    while fresh != 0 {
                        let v = w * 64 + fresh.trailing_zeros() as usize;
                        fresh &= fresh - 1;
                        dist[v] = Some(d);
                        next.push(v);
                    }
                }
            }
            frontier = next;
        }
        dist
    }
}

/// Each node's set (numbered from 0 by lowest member) when `edges` join
/// them; `nodes` ascending.
pub(crate) fn components_index(
    nodes: &[u32],
    edges: impl Iterator<Item = (u32, u32)>,
) -> Vec<usize> {
    let mut sets = Sets::new(nodes.len());
    for (a, b) in edges {
        if let (Ok(i), Ok(j)) = (nodes.binary_search(&a), nodes.binary_search(&b)) {
            sets.join(i, j);
        }
    }
    let mut number: BTreeMap<usize, usize> = BTreeMap::new();
    (0..nodes.len())
        .map(|i| {
            let r = sets.find(i);
            let k = number.len();
            *number.entry(r).or_insert(k)
        })
        .collect()
}

pub(crate) fn components(nodes: &[u32], edges: impl Iterator<Item = (u32, u32)>) -> Vec<Vec<u32>> {
    let mut sets = Sets::new(nodes.len());
    for (a, b) in edges {
        if let (Ok(i), Ok(j)) = (nodes.binary_search(&a), nodes.binary_search(&b)) {
            sets.join(i, j);
        }
    }
    sets.groups(nodes)
}
