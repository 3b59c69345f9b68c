//! From a matrix to an `Inference`: levels, hops, links, groups and the
//! findings where the data do not fit a simple hop model or the firmware's
//! table (SLIT) disagrees with the measurement.
//!
//! The method, in order:
//! 1. Every value becomes a log-scale *cost* (log latency, or minus log
//!    bandwidth), so "x % worse" means the same for every unit.
//! 2. Local cells (a node's own memory) form the local level by definition:
//!    they are zero hops whatever their value. How much they differ between
//!    nodes is reported, not hidden.
//! 3. Stray cells: the directed remote cells are grouped (`levels::cluster`);
//!    a cell alone in its group whose mirror cell sits in a populated group is
//!    a disturbed measurement, set aside and reported.
//! 4. Each node pair gets the cost of its better direction: disturbances
//!    (interrupts, other load, a slow page) only ever make an access slower,
//!    never faster, so the better direction is the closer estimate of what
//!    the path can do; the two directions' difference is reported as
//!    asymmetry. Pair costs are grouped into the remote levels.
//! 5. Links: a pair is a direct link unless some third node reaches both of
//!    its ends at strictly better levels (the relative-neighbourhood rule): a
//!    path through such a node is then the better explanation of the pair's
//!    worse level. Hops are shortest paths over the links.
//!    Sub-NUMA clustering (Intel SNC, AMD NPS) splits one package into two
//!    or more memory domains: the on-package pair is a tier apart from local
//!    (a few percent to ~20 % on the package's own mesh) with no
//!    interconnect link between them, and a pair across packages is one
//!    link farther. So the nearest remote levels are on-package, not links,
//!    when the nearest is mesh-near and all of them stay closer to local
//!    than the step to the next level (the link hop) is long
//!    (`on_package_ranks`). Their pairs are 0 hops, and hops count
//!    interconnect links only: the RWTH Aachen blog's architectural plot, levels -> hops, with
//!    the package's domains as one point. `distance` (step 7) orders costs.
//! 6. Groups: the connected parts of the graph of the best remote level(s),
//!    taken at the first level where every node has a partner (sub-NUMA
//!    clusters, sockets of a group joined by slower links); one group when
//!    that leaves everything connected.
//! 7. Hierarchy: the same connected parts at every level, one tier each time
//!    they change, so groups nest (SNC halves inside sockets inside the
//!    machine). A pair's *distance* is the tier whose groups first hold both
//!    ends, which puts every pair across a group after every pair inside
//!    it. Hops describe a network; distance describes a hierarchy. A
//!    "more hops, yet faster" finding is only made between pairs of one
//!    tier, since across tiers the hierarchy, not the hop count, orders them.

use super::levels::median;
use super::matrix::Matrix;
use super::work::{compute, distances, groups, key, level_name, packages, tiers, Work};
use crate::model::infer::{
    Cells, Grid, Inference, Level, LevelName, LinkDetails, Members, NodeTable, Place, Tier,
};
use crate::stats::median_of_sorted;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

/// Analyse a matrix: levels, hops, links, groups and findings. Advice is left
/// empty; `advise` fills it.
pub fn analyse(m: &Matrix) -> Inference {
    let mut w = compute(m);
    let mut inf = analyse_from(m, &mut w);
    finish(&mut inf, w);
    inf
}

/// `analyse` on the matrix's work already computed, so that analysing and
/// advising a large matrix clusters its cells once, not twice. The hop
/// table and the links are left empty for `finish` to move in from `w`
/// once nothing reads them there: one copy of a table of every pair, not
/// two.
///
/// The findings run first, before the records that grow with the cells
/// (each cell's record, each link's details) exist, and the directed cells
/// (24 bytes a cell), which only the findings and the levels read, go
/// before those records are made: of a full matrix's largest parts, only
/// one set is held at a time.
pub(crate) fn analyse_from(m: &Matrix, w: &mut Work) -> Inference {
    let unit = m.unit.as_str();
    let local_value = if w.local.is_empty() {
        None
    } else {
        Some(median(&w.local.iter().map(|c| c.value).collect::<Vec<_>>()))
    };
    // A plain ratio of values, so "x local" reads the same way as the
    // numbers: 1.7x local latency, 0.4x local bandwidth.
    let ratio = |value: f64| local_value.map(|l| value / l);

    // Levels.
    let mut levels = Vec::new();
    if !w.local.is_empty() {
        let vals: Vec<f64> = w.local.iter().map(|c| c.value).collect();
        levels.push(Level {
            kind: "local".into(),
            name: "L".into(),
            value: median(&vals),
            min: vals.iter().copied().fold(f64::INFINITY, f64::min),
            max: vals.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            members: w
                .local
                .iter()
                .map(|c| [c.from, c.to])
                .collect::<Vec<_>>()
                .into(),
            hops: vec![0],
            ratio_to_local: Some(1.0),
        });
    }
    let max_rank = w.max_rank();
    let mut level_names = BTreeMap::new();
    // Each rank's pairs in a list sized once (counted first), where lists
    // grown by doubling held up to twice every pair.
    let mut counts = vec![0usize; max_rank + 1];
    for (_, r) in w.ranks() {
        counts[r] += 1;
    }
    let mut by_rank: Vec<Vec<(u32, u32)>> = counts.into_iter().map(Vec::with_capacity).collect();
    for (k, r) in w.ranks() {
        by_rank[r].push(k);
    }
    for (r, ps) in by_rank.iter().enumerate().skip(1) {
        // A level of a full matrix can hold nearly every cell: its cells
        // are counted first and listed once, sized once, as remote cell
        // numbers (4 bytes a cell, where their values took 8), sorted by
        // value in place for the median, where a list of the cells, grown
        // by doubling, and a sorted copy of the values each stood beside
        // them. Its members are read from the cells' grid once it is made
        // (`Members::of_grid`), not listed.
        let cells = || {
            ps.iter()
                .flat_map(|&k| w.pairs.get(k).into_iter().flat_map(|e| e.1.iter()))
        };
        let n = cells().count();
        // Remote cell numbers fit 32 bits (`PairCells` holds them so).
        let mut ids: Vec<u32> = Vec::with_capacity(n);
        ids.extend(cells().filter_map(|i| u32::try_from(i).ok()));
        ids.sort_unstable_by(|&a, &b| {
            let (a, b) = (w.remote(a as usize).value, w.remote(b as usize).value);
            a.total_cmp(&b)
        });
        let at = |k: usize| w.remote(ids[k] as usize).value;
        // The sorted values' middle one or two: `median_of_sorted` of them
        // is that of all.
        let mid: Vec<f64> = match ids.len() {
            0 => Vec::new(),
            k if k % 2 == 1 => vec![at(k / 2)],
            k => vec![at(k / 2 - 1), at(k / 2)],
        };
        let value = median_of_sorted(&mid).unwrap_or(f64::NAN);
        let (min, max) = match ids.len() {
            0 => (f64::INFINITY, f64::NEG_INFINITY),
            k => (at(0), at(k - 1)),
        };
        drop(ids);
        // Inserted one by one: collected, a set lists every item first.
        let mut hops = BTreeSet::new();
        for &(a, b) in ps {
            if let Some(h) = w.hops(a, b) {
                hops.insert(h);
            }
        }
        let name = level_name(r - 1);
        level_names.insert(r, LevelName::from(name.as_str()));
        levels.push(Level {
            kind: "remote".into(),
            name,
            value,
            min,
            max,
            members: Members::default(),
            hops: hops.into_iter().collect(),
            ratio_to_local: ratio(value),
        });
    }
    // A pair each: held to the end it would sit beside the cells and the
    // findings' lists.
    drop(by_rank);

    let tiers = tiers(w);
    let dist = distances(w, &tiers);
    let hierarchy = tiers
        .iter()
        .map(|(r, gs)| Tier {
            level: level_names
                .get(r)
                .map(|n| n.to_string())
                .unwrap_or_default(),
            value: levels_value(&levels, level_names.get(r)),
            groups: gs.clone(),
        })
        .collect();
    let mut inf = Inference {
        schema: crate::SCHEMA.into(),
        machine: m.label.clone(),
        source: if m.slit_only { "slit" } else { "measurement" }.into(),
        unit: unit.into(),
        better: if m.unit.higher_is_better() {
            "higher"
        } else {
            "lower"
        }
        .into(),
        nodes: w.nodes.clone(),
        levels,
        hops: NodeTable::default(),
        links: Vec::new(),
        link_details: LinkDetails::default(),
        groups: groups(w),
        on_package: packages(w),
        hierarchy,
        cells: Cells::default(),
        distance: dist,
        cpuless_nodes: m.cpuless_nodes(),
        stray_cells: w
            .stray
            .iter()
            .map(|&i| w.remote(i))
            .map(|c| [c.from, c.to])
            .collect(),
        findings: Vec::new(),
        advice: Vec::new(),
    };
    inf.findings = super::findings::findings(m, w, &inf);
    // The few stray cells by their nodes, then the directed cells go.
    let stray: HashSet<(u32, u32)> = w
        .stray
        .iter()
        .map(|&i| w.remote(i))
        .map(|c| (c.from, c.to))
        .collect();
    w.release_cells();
    let grid = Arc::new(cells_grid(m, w, &level_names, &inf.distance, &stray));
    // The remote levels follow the local one, rank by rank, as the grid's
    // names do.
    let first = usize::from(inf.levels.first().is_some_and(|l| l.kind == "local"));
    for (r, l) in inf.levels.iter_mut().enumerate().skip(first) {
        if let Ok(at) = u32::try_from(r + 1 - first) {
            l.members = Members::of_grid(&grid, at);
        }
    }
    // A link's level and value are its pair's, read from the grid when
    // written, where a record each took 24 bytes.
    let higher = m.unit.higher_is_better();
    let links = w.links.iter().map(|&(a, b)| [a, b]).collect();
    inf.link_details = LinkDetails::of_grid(links, grid.clone(), higher);
    inf.cells = Cells::from_grid(grid);
    inf
}

/// The parts of `w` the inference keeps, moved in once nothing reads them
/// there: the hop table and the links (a copy of either held beside the
/// advice's reading of `w` would be one more table of every pair).
pub(crate) fn finish(inf: &mut Inference, w: Work) {
    inf.hops = w.hops;
    // (u32, u32) and [u32; 2] are laid out alike: collected in place.
    inf.links = w.links.into_iter().map(|(a, b)| [a, b]).collect();
}

fn levels_value(levels: &[Level], name: Option<&LevelName>) -> f64 {
    name.and_then(|n| levels.iter().find(|l| *n == l.name))
        .map_or(f64::NAN, |l| l.value)
}

/// The cells as a grid over the matrix: its values shared, each place's
/// level, hops and distance set, row by row. Its names are "L" and then
/// the remote levels by rank, so that rank r is name r.
fn cells_grid(
    m: &Matrix,
    w: &Work,
    level_names: &BTreeMap<usize, LevelName>,
    dist: &NodeTable,
    stray: &HashSet<(u32, u32)>,
) -> Grid {
    // Local first, then the remote levels by rank: `level_names`' ranks
    // are 1, 2, ... in order.
    let mut names = vec![LevelName::from("L")];
    names.extend(level_names.values().cloned());
    let place_of = |r: usize| u32::try_from(r).ok();
    let grid = Grid::new(
        m.row_nodes.clone(),
        m.col_nodes.clone(),
        m.shared_values(),
        names,
    );
    // The values are the matrix's own, one a place: a grid is made.
    let Ok(mut grid) = grid else {
        return Grid::default();
    };
    let flagged: HashSet<[u32; 2]> = m.flagged.iter().map(|(k, _)| *k).collect();
    for (r, &from) in m.row_nodes.iter().enumerate() {
        for (c, &to) in m.col_nodes.iter().enumerate() {
            if m.value(r, c).is_none() {
                continue;
            }
            let stray = stray.contains(&(from, to));
            let level = if from == to {
                Some(0)
            } else if stray {
                None
            } else {
                w.rank
                    .get(key(from, to))
                    .filter(|&&r| level_names.contains_key(&(r as usize)))
                    .and_then(|&r| place_of(r as usize))
            };
            // Hop counts and distances stay below the node count, and
            // every level named is in `names`, so every place is held
            // (`Grid::set` refuses only counts past 16 bits).
            let _ = grid.set(
                grid.place(r, c),
                Place {
                    level,
                    hops: w.hops(from, to),
                    distance: dist.get(w.idx(from), w.idx(to)),
                    stray,
                    flagged: flagged.contains(&[from, to]),
                },
            );
        }
    }
    grid
}
