//! The inference's working state and its shared vocabulary: a matrix's cells
//! as log-scale costs, its levels, links, hops and groups as `compute`
//! derives them (steps 1-7 of `infer.rs`), and the words and numbers the
//! findings and the SLIT comparison quote. `infer`, `findings`, `slit`,
//! `advice` and `hmat` all read it, so it sits below all of them.

use super::levels::{cluster, cluster_with, median, pooled_sd_by, NOISE_FLOOR};
use super::matrix::Matrix;
use super::node_sets::{components, components_index, Bits, Sets};
use super::pair_table::{PairTable, Slot};
use crate::model::infer::NodeTable;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// A directed cell of the matrix, 16 bytes: its cost is worked out from
/// its value when asked (`Work::cost`), where a field of its own made 24
/// bytes a cell of the largest list of the analysis.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cell {
    pub from: u32,
    pub to: u32,
    pub value: f64,
}

/// Everything the analysis derives, before it becomes the result model.
pub(crate) struct Work {
    pub nodes: Vec<u32>,
    pub local: Vec<Cell>,
    /// The remote cells as their places in the matrix's values (row by
    /// row), 4 bytes a cell where a cell of its own took 16: `remote(i)`
    /// makes cell i from the matrix's values, shared in `values`.
    remote: Vec<u32>,
    values: Arc<Vec<f64>>,
    rows: Vec<u32>,
    cols: Vec<u32>,
    pub stray: Vec<usize>,
    /// (a, b) with a < b -> pair cost and the remote cell indices it uses.
    pub pairs: PairTable<(f64, PairCells)>,
    /// Pair -> remote level rank (1 = best remote level).
    pub rank: PairTable<u32>,
    /// Direct links (a, b), a < b, sorted: a list, not a set, since every
    /// pair can be a link and a set's nodes held some 20 bytes each.
    pub links: Vec<(u32, u32)>,
    pub hops: NodeTable,
    pub floor: f64,
    /// Level ranks 1..=on_package are sub-NUMA (on-package) pairs, not
    /// links; 0 when there are none.
    pub on_package: usize,
    /// More is better (bandwidth): costs are minus the log.
    pub higher: bool,
}

impl Work {
    /// Remote cell `i`, made from the matrix.
    pub fn remote(&self, i: usize) -> Cell {
        cell_at(&self.rows, &self.cols, &self.values, self.remote[i])
    }
    /// How many remote cells there are.
    pub fn remote_len(&self) -> usize {
        self.remote.len()
    }
    /// Cell `c`'s log-scale cost, as `cost_of` gives it.
    pub fn cost(&self, c: &Cell) -> f64 {
        cost_by(self.higher, c.value)
    }
    /// Index of node `n` in `nodes` (sorted ascending, so a binary search).
    pub fn idx(&self, n: u32) -> usize {
        self.nodes.binary_search(&n).unwrap_or(0)
    }
    pub fn hops(&self, a: u32, b: u32) -> Option<u32> {
        self.hops.get(self.idx(a), self.idx(b))
    }
    /// Every measured pair with its remote level rank, in key order.
    pub fn ranks(&self) -> impl Iterator<Item = ((u32, u32), usize)> + '_ {
        self.rank.iter().map(|(k, &r)| (k, r as usize))
    }
    /// The rank of pair `k`; 0 (no remote level) for a pair not measured.
    pub fn rank_of(&self, k: (u32, u32)) -> usize {
        self.rank.get(k).map_or(0, |&r| r as usize)
    }
    /// Drop the directed cells (local, remote, stray) and the pairs' costs
    /// and cells (16 bytes a pair), which only the inference itself and
    /// its findings read: ranks, links and hops stay for the advice.
    pub fn release_cells(&mut self) {
        self.local = Vec::new();
        self.remote = Vec::new();
        self.stray = Vec::new();
        self.pairs = PairTable::new(&[]);
    }
    /// The highest rank, 0 without pairs.
    pub fn max_rank(&self) -> usize {
        self.ranks().map(|(_, r)| r).max().unwrap_or(0)
    }
}

/// A pair's slot is set once a cell of it is in.
impl Slot for (f64, PairCells) {
    fn is_set(&self) -> bool {
        self.1.ids[0] != EMPTY
    }
}

/// An unused place in `PairCells`: no cell has this index, since a matrix
/// has at most `MAX_NODES` squared cells.
const EMPTY: u32 = u32::MAX;

/// The remote cells of one pair, held inline: a pair has its two
/// directions at most (a matrix's rows and columns name each node once,
/// `Matrix::new` checks), and a vector each cost a heap block per pair,
/// half a million of them in a 1000-node matrix. Indices fit 32 bits, and
/// an empty place is marked in it, not counted beside it: a pair's entry
/// (its cost and cells) takes 16 bytes, where a count padded it to 24.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PairCells {
    ids: [u32; 2],
}

impl Default for PairCells {
    fn default() -> Self {
        PairCells { ids: [EMPTY; 2] }
    }
}

impl PairCells {
    /// Add remote cell `i`; a third direction cannot exist and is not kept.
    pub fn push(&mut self, i: usize) {
        let free = self.ids.iter_mut().find(|x| **x == EMPTY);
        if let (Some(slot), Some(i)) = (free, u32::try_from(i).ok().filter(|&i| i != EMPTY)) {
            *slot = i;
        }
    }

    /// Both directions' cells, when the pair has both.
    pub fn both(&self) -> Option<(usize, usize)> {
        (self.ids[1] != EMPTY).then(|| (self.ids[0] as usize, self.ids[1] as usize))
    }

    /// The remote cell indices, in the order they were added.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.ids
            .iter()
            .take_while(|&&i| i != EMPTY)
            .map(|&i| i as usize)
    }
}

/// The cell at `place` of a matrix of `rows` x `cols` values.
fn cell_at(rows: &[u32], cols: &[u32], values: &[f64], place: u32) -> Cell {
    let at = place as usize;
    Cell {
        from: rows[at / cols.len()],
        to: cols[at % cols.len()],
        value: values[at],
    }
}

pub(crate) fn key(a: u32, b: u32) -> (u32, u32) {
    (a.min(b), a.max(b))
}

pub fn cost_of(m: &Matrix, v: f64) -> f64 {
    cost_by(m.unit.higher_is_better(), v)
}

/// A value's log-scale cost: its log, or minus it when `higher` is better.
fn cost_by(higher: bool, v: f64) -> f64 {
    if higher {
        -v.ln()
    } else {
        v.ln()
    }
}

/// Percent by which cost `b` is worse than cost `a` (log costs).
pub fn pct_worse(a: f64, b: f64) -> f64 {
    ((b - a).exp() - 1.0) * 100.0
}

pub(crate) fn compute(m: &Matrix) -> Work {
    let nodes = m.nodes();
    let floor = if m.unit.is_exact() { 0.0 } else { NOISE_FLOOR };
    let mut local = Vec::new();
    // Sized once: grown by doubling, a matrix of millions of cells would
    // hold up to twice its cells, and both copies while it moves. A
    // matrix has at most `MAX_NODES` squared places, so a place fits 32
    // bits.
    let mut remote: Vec<u32> = Vec::with_capacity(m.measured());
    let cols = m.col_nodes.len();
    for (r, &from) in m.row_nodes.iter().enumerate() {
        for (c, &to) in m.col_nodes.iter().enumerate() {
            if let Some(v) = m.value(r, c) {
                if from == to {
                    local.push(Cell { from, to, value: v });
                } else if let Ok(at) = u32::try_from(r * cols + c) {
                    remote.push(at);
                }
            }
        }
    }
    let values = m.shared_values();
    let (rows, cols) = (m.row_nodes.clone(), m.col_nodes.clone());
    let cell = |i: usize| cell_at(&rows, &cols, &values, remote[i]);

    // Stray cells (step 3).
    let cost = |c: &Cell| cost_of(m, c.value);
    let costs: Vec<f64> = (0..remote.len()).map(|i| cost(&cell(i))).collect();
    let groups = cluster(&costs, floor);
    let mut group_of = vec![0usize; remote.len()];
    for (g, members) in groups.iter().enumerate() {
        for &i in members {
            group_of[i] = g;
        }
    }
    let stray: Vec<usize> = if m.unit.is_exact() {
        Vec::new() // a firmware table has no disturbed measurements
    } else {
        // Remote cell index by matrix position, 4 bytes a cell: a map of
        // cell keys held some 40.
        let cols = cols.len();
        let mut at = vec![u32::MAX; m.row_nodes.len() * cols];
        let mut next = 0u32;
        for (r, &from) in m.row_nodes.iter().enumerate() {
            for (c, &to) in m.col_nodes.iter().enumerate() {
                if from != to && m.value(r, c).is_some() {
                    at[r * cols + c] = next;
                    next += 1;
                }
            }
        }
        let mirror = |i: usize| {
            let c = cell(i);
            let (r, c) = m.position(c.to, c.from)?;
            at.get(r * cols + c)
                .filter(|&&j| j != u32::MAX)
                .map(|&j| j as usize)
        };
        (0..remote.len())
            .filter(|&i| {
                groups[group_of[i]].len() == 1
                    && mirror(i).is_some_and(|j| groups[group_of[j]].len() >= 2)
            })
            .collect()
    };
    // Held to the end of `compute`, they would sit beside the pair tables.
    drop((costs, groups, group_of));

    // Pairs (step 4).
    let mut is_stray = vec![false; remote.len()];
    for &i in &stray {
        is_stray[i] = true;
    }
    let mut pairs: PairTable<(f64, PairCells)> = PairTable::new(&nodes);
    for (i, &stray) in is_stray.iter().enumerate() {
        if stray {
            continue;
        }
        let c = &cell(i);
        // Every remote cell's nodes are in `nodes`, and from != to.
        if let Some(e) = pairs.slot_mut((c.from, c.to)) {
            if !e.is_set() {
                e.0 = f64::INFINITY;
            }
            e.0 = e.0.min(cost(c));
            e.1.push(i);
        }
    }
    drop(is_stray);
    // Sized once: collected from the table's filter they grew by doubling.
    let held = pairs.iter().count();
    let mut pair_keys: Vec<(u32, u32)> = Vec::with_capacity(held);
    pair_keys.extend(pairs.iter().map(|(k, _)| k));
    let mut pair_costs: Vec<f64> = Vec::with_capacity(held);
    pair_costs.extend(pairs.iter().map(|(_, e)| e.0));
    let mut rank: PairTable<u32> = PairTable::new(&nodes);
    // The noise a pair level is judged against is the scatter of all its
    // directed cells: the two directions of a path are two measurements of
    // it, and the pair's summary (its better direction) hides how far apart
    // they are.
    // Read in place: a copy of every directed cell's cost, grouped, took 8
    // bytes a cell at the analysis's peak.
    let pair_groups = cluster_with(&pair_costs, floor, |groups| {
        pooled_sd_by(groups.len(), |g| {
            groups[g].iter().flat_map(|&p| {
                let e = pairs.get(pair_keys[p]).into_iter();
                e.flat_map(|e| e.1.iter().map(|i| cost(&cell(i))))
            })
        })
    });
    for (g, members) in pair_groups.iter().enumerate() {
        for &i in members {
            if let (Some(slot), Ok(r)) = (rank.slot_mut(pair_keys[i]), u32::try_from(g + 1)) {
                *slot = r;
            }
        }
    }

    // Links (step 5): relative-neighbourhood rule on level ranks, the
    // on-package levels aside.
    // A pair's excess over local is judged against its own ends' local
    // cost: on machines where local latency differs by node (McCalpin's
    // Ranger table: 100 to 135 ns) a fast link between two fast nodes is
    // no nearer to *their* local than any link.
    let local_of: BTreeMap<u32, f64> = local.iter().map(|c| (c.from, cost(c))).collect();
    let on_package = if local.is_empty() {
        0
    } else {
        let all_local = median(&local.iter().map(cost).collect::<Vec<_>>());
        let own = |n: u32| local_of.get(&n).copied().unwrap_or(all_local);
        let rank_costs: Vec<f64> = pair_groups
            .iter()
            .map(|g| median(&g.iter().map(|&i| pair_costs[i]).collect::<Vec<_>>()))
            .collect();
        let excess: Vec<f64> = pair_groups
            .iter()
            .map(|g| {
                let e: Vec<f64> = g
                    .iter()
                    .map(|&i| {
                        let (a, b) = pair_keys[i];
                        pair_costs[i] - (own(a) + own(b)) / 2.0
                    })
                    .collect();
                median(&e)
            })
            .collect();
        on_package_ranks(&excess, &rank_costs)
    };
    let n = nodes.len();
    let pos = |x: u32| nodes.binary_search(&x).unwrap_or(0);
    // Pairs rank by rank, as their groups list them (group g is rank g + 1,
    // as `rank` holds it), where a sorted copy of every pair with its rank
    // took 16 bytes a pair; `below` holds, per node, the nodes it reaches
    // at a rank lower than the one being judged, so "some third node
    // reaches both ends at strictly better levels" is one AND of two bit
    // rows. Within a rank the order does not matter: every pair of it is
    // judged before any is added to `below`, and the links are sorted.
    let mut below = Bits::new(n);
    // At most every pair; the room never used is never touched.
    let mut links = Vec::with_capacity(pair_keys.len());
    for (g, members) in pair_groups.iter().enumerate() {
        let r = g + 1;
        for &i in members {
            let (a, b) = pair_keys[i];
            if r > on_package && !below.meet(pos(a), pos(b)) {
                links.push((a, b));
            }
        }
        for &i in members {
            let (a, b) = pair_keys[i];
            below.set(pos(a), pos(b));
            below.set(pos(b), pos(a));
        }
    }
    // A pair each: held to the end of `compute` they would sit beside the
    // hop table.
    drop((pair_keys, pair_costs, pair_groups, below));
    // Each pair is judged once, so the list needs no dedup, only the
    // pairs' order.
    links.sort_unstable();
    links.shrink_to_fit();
    // Hops count links only: on-package pairs join nodes into one place
    // (0 hops), and a breadth-first search over those places, their links
    // as bit rows, gives every pair's count.
    let place = components_index(
        &nodes,
        rank.iter()
            .filter(|(_, &x)| x as usize <= on_package)
            .map(|(k, _)| k),
    );
    let places = place.iter().copied().max().map_or(0, |m| m + 1);
    let mut adj = Bits::new(places);
    for &(a, b) in &links {
        let (pa, pb) = (place[pos(a)], place[pos(b)]);
        if pa != pb {
            adj.set(pa, pb);
            adj.set(pb, pa);
        }
    }
    // A pair never measured in either direction has no known hop count:
    // a path through the graph would only be a guess from other pairs (and
    // two memory-only nodes never access each other at all).
    // Hop counts stay below the node count (at most `MAX_NODES`), so every
    // one is held. One place's search at a time, written into the rows of
    // its nodes: every place's searches held together took 8 bytes a
    // pair of places.
    let mut of_place: Vec<Vec<usize>> = vec![Vec::new(); places];
    for (i, &p) in place.iter().enumerate().take(n) {
        of_place[p].push(i);
    }
    let mut hops = NodeTable::new(n, n);
    for (s, rows) in of_place.iter().enumerate() {
        let between = adj.bfs(s);
        for &i in rows {
            for j in 0..n {
                if i == j || pairs.contains_key(key(nodes[i], nodes[j])) {
                    let _ = hops.set(i, j, between[place[j]]);
                }
            }
        }
    }
    Work {
        nodes,
        local,
        remote,
        values,
        rows,
        cols,
        stray,
        pairs,
        rank,
        links,
        hops,
        floor,
        on_package,
        higher: m.unit.higher_is_better(),
    }
}

/// The most the nearest sub-NUMA (on-package) level costs over local, as a
/// ratio: the package's mesh or fabric adds a few percent to ~30 % (SNC,
/// NPS, on-package HBM at SLIT 13), one interconnect hop between sockets
/// (QPI, UPI, HyperTransport) 50 % and more, as in McCalpin's remote-latency
/// measurements and the RWTH Aachen blog's 8-socket Nehalem-EX.
pub(crate) const ON_PACKAGE_MAX: f64 = 1.35;

/// How many of the nearest remote levels are on-package (sub-NUMA) rather
/// than links. `rank_costs[r-1]` is level r's cost (log scale, ascending),
/// `excess[r-1]` what its pairs cost over their own ends' local. The
/// nearest level must be mesh-near (`ON_PACKAGE_MAX`); with it, every
/// level below the largest step between neighbouring levels is on-package
/// when all of them stay nearer to local than that step (the link hop) is
/// long. Memory-side levels such as on-package HBM (SLIT 13-14 next to
/// DDR's 12) thus stay inside the package. With one remote level there is
/// nothing across packages to tell a package from sockets by (a flat
/// firmware table, 10/12 on an 8-socket Nehalem-EX in the RWTH Aachen
/// blog, looks the same): no on-package level is claimed.
pub(crate) fn on_package_ranks(excess: &[f64], rank_costs: &[f64]) -> usize {
    let Some(&first) = excess.first() else {
        return 0;
    };
    if first > ON_PACKAGE_MAX.ln() {
        return 0;
    }
    let Some((r, step)) = rank_costs
        .windows(2)
        .enumerate()
        .map(|(i, w)| (i + 1, w[1] - w[0]))
        .max_by(|a, b| a.1.total_cmp(&b.1))
    else {
        return 0;
    };
    if excess[..r].iter().all(|&e| e < step) {
        r
    } else {
        0
    }
}

/// The sub-NUMA domains: groups of nodes joined by on-package pairs (the
/// packages, when the machine uses SNC or NPS); empty when there are none.
pub(crate) fn packages(w: &Work) -> Vec<Vec<u32>> {
    if w.on_package == 0 {
        return Vec::new();
    }
    components(
        &w.nodes,
        w.ranks()
            .filter(|&(_, x)| x <= w.on_package)
            .map(|(k, _)| k),
    )
    .into_iter()
    .filter(|g| g.len() > 1)
    .collect()
}

/// Groups (step 6).
pub(crate) fn groups(w: &Work) -> Vec<Vec<u32>> {
    let paired: BTreeSet<u32> = w.ranks().flat_map(|((a, b), _)| [a, b]).collect();
    let mut found = None;
    partitions(w, |_, comps| {
        let comps: Vec<Vec<u32>> = comps
            .into_iter()
            .filter(|c| c.iter().any(|n| paired.contains(n)))
            .collect();
        if !comps.iter().all(|c| c.len() >= 2) {
            return true;
        }
        if comps.len() >= 2 {
            // Nodes with no measured pair at all stay on their own.
            let mut out = comps;
            for &n in &w.nodes {
                if !paired.contains(&n) {
                    out.push(vec![n]);
                }
            }
            found = Some(out);
        }
        false
    });
    found.unwrap_or_else(|| vec![w.nodes.clone()])
}

/// Hierarchy (step 7): (level rank, partition of all nodes), one entry each
/// time the partition changes, innermost first.
pub(crate) fn tiers(w: &Work) -> Vec<(usize, Vec<Vec<u32>>)> {
    let mut prev: Vec<Vec<u32>> = w.nodes.iter().map(|&n| vec![n]).collect();
    let mut out = Vec::new();
    partitions(w, |r, comps| {
        if comps != prev {
            out.push((r, comps.clone()));
            prev = comps;
        }
        true
    });
    out
}

/// A tier that describes where threads belong: more than one group holds
/// CPU nodes, and every CPU node has a partner in its group (a lone node is
/// not a cluster, just a node with no close neighbour).
pub(crate) fn proper_tier(m: &Matrix, groups: &[Vec<u32>]) -> bool {
    let with_cpus: Vec<&Vec<u32>> = groups
        .iter()
        .filter(|g| g.iter().any(|&n| m.has_cpus(n)))
        .collect();
    with_cpus.len() > 1 && with_cpus.iter().all(|g| g.len() > 1)
}

/// Distance (step 7): the 1-based tier whose groups first hold both nodes;
/// 0 on the diagonal; None for pairs never measured or never joined.
pub(crate) fn distances(w: &Work, tiers: &[(usize, Vec<Vec<u32>>)]) -> NodeTable {
    let n = w.nodes.len();
    // Each tier's group of every node; tiers only ever merge groups, so
    // "first tier holding both" is a binary search over them.
    let group_of: Vec<Vec<usize>> = tiers
        .iter()
        .map(|(_, gs)| {
            let mut g = vec![usize::MAX; n];
            for (k, members) in gs.iter().enumerate() {
                for m in members {
                    if let Ok(i) = w.nodes.binary_search(m) {
                        g[i] = k;
                    }
                }
            }
            g
        })
        .collect();
    // Tiers are fewer than the nodes (at most `MAX_NODES`), so every
    // distance is held.
    let mut d = NodeTable::new(n, n);
    for i in 0..n {
        for j in 0..n {
            let (a, b) = (w.nodes[i], w.nodes[j]);
            if i == j {
                let _ = d.set(i, j, Some(0));
                continue;
            }
            if !w.pairs.contains_key(key(a, b)) {
                continue;
            }
            let t = group_of.partition_point(|g| g[i] != g[j]);
            let _ = d.set(i, j, (t < group_of.len()).then_some(t as u32 + 1));
        }
    }
    d
}

/// The partition of the nodes joined by pairs of rank <= r, for r = 1, 2,
/// ... up to the highest rank, handed to `visit` until it says stop: one
/// union-find fed rank by rank, not a new one per rank.
fn partitions(w: &Work, mut visit: impl FnMut(usize, Vec<Vec<u32>>) -> bool) {
    let mut by_rank: Vec<Vec<(u32, u32)>> = vec![Vec::new(); w.max_rank() + 1];
    for (k, r) in w.ranks() {
        by_rank[r].push(k);
    }
    let mut sets = Sets::new(w.nodes.len());
    for (r, pairs) in by_rank.iter().enumerate().skip(1) {
        for &(a, b) in pairs {
            if let (Ok(i), Ok(j)) = (w.nodes.binary_search(&a), w.nodes.binary_search(&b)) {
                sets.join(i, j);
            }
        }
        if !visit(r, sets.groups(&w.nodes)) {
            return;
        }
    }
}

pub(crate) fn level_name(i: usize) -> String {
    // A..Z, then A1.. for very deep machines.
    let letter = (b'A' + (i % 26) as u8) as char;
    if i < 26 {
        letter.to_string()
    } else {
        format!("{letter}{}", i / 26)
    }
}

/// The first `show` of `links` as `a-b` and how many there are in all: a
/// finding names a few of a level's links and counts the rest, without a
/// text of its own for each of a million links.
pub(crate) fn first_links(
    links: impl Iterator<Item = (u32, u32)>,
    show: usize,
) -> (Vec<String>, usize) {
    let mut shown = Vec::new();
    let mut all = 0;
    for (a, b) in links {
        if shown.len() < show {
            shown.push(pair_str(a, b));
        }
        all += 1;
    }
    (shown, all)
}

pub(crate) fn pair_str(a: u32, b: u32) -> String {
    format!("{a}-{b}")
}

pub(crate) fn cell_str(c: &Cell) -> String {
    format!("{}>{}", c.from, c.to)
}

/// The value of a pair's better direction, in the input unit.
pub(crate) fn best_value(w: &Work, k: (u32, u32)) -> f64 {
    let Some((cost, cells)) = w.pairs.get(k) else {
        return f64::NAN;
    };
    cells
        .iter()
        .map(|i| w.remote(i))
        .find(|c| w.cost(c) == *cost)
        .map_or(f64::NAN, |c| c.value)
}

#[cfg(test)]
#[path = "work_tests.rs"]
mod tests;
