//! Placement advice from an inference: the penalty of each remote level, where
//! to keep threads and data together, where memory-only nodes are best used
//! from, whether interleaving pays, and which pairs risk crossfire. Every
//! line carries the numbers it rests on.
//!
//! Three rules keep the advice honest. The direction of "better" comes from
//! the unit (bandwidth: higher; latency and distance: lower). Advice that
//! rests on the firmware's table (no measurement) says so and speaks of
//! firmware distances, never of time. A node without CPUs never gets
//! threads. And cells of one level are equal: a "slowest" link is a level,
//! never one link picked by a difference inside the noise.

use super::levels::{GAP_SIGMAS, NOISE_FLOOR};
use super::matrix::{Matrix, Unit};
use super::pair_table::PairTable;
use super::work::{compute, cost_of, first_links, Work};
use crate::model::infer::{
    fmt_value, groups_text, Finding, FindingData, Inference, Level, LevelLinks, PairPath,
};
use serde_json::json;
use std::collections::BTreeMap;

/// How `value` compares with `local`, in words that fit the unit: "2.1x
/// local (firmware distance)", "38 % less bandwidth than local", "73 %
/// slower than local", or "as fast as local (within noise)".
pub fn relative_words(unit: Unit, value: f64, local: f64) -> String {
    let r = value / local;
    if unit == Unit::Distance {
        return format!("firmware distance {r:.1}x local");
    }
    let within = r.ln().abs() <= GAP_SIGMAS * NOISE_FLOOR;
    if unit.higher_is_better() {
        if within {
            "as much bandwidth as local (within noise)".into()
        } else if r < 1.0 {
            format!("{:.0} % less bandwidth than local", (1.0 - r) * 100.0)
        } else {
            format!("{:.0} % more bandwidth than local", (r - 1.0) * 100.0)
        }
    } else if within {
        "as fast as local (within noise)".into()
    } else if r > 1.0 {
        format!("{:.0} % slower than local", (r - 1.0) * 100.0)
    } else {
        format!("{:.0} % faster than local", (1.0 - r) * 100.0)
    }
}

/// `pairs 1 hop apart`, `pairs 1 or 2 hops apart`.
fn hops_phrase(l: &Level) -> String {
    match l.hops.as_slice() {
        [] => "hops unknown".into(),
        [1] => "pairs 1 hop apart".into(),
        [h] => format!("pairs {h} hops apart"),
        hs => format!(
            "pairs {} hops apart",
            hs.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(" or ")
        ),
    }
}

/// Advice lines for `inf`, which must come from `analyse(m)`.
pub fn advise(m: &Matrix, inf: &Inference) -> Vec<Finding> {
    advise_from(m, inf, &compute(m))
}

/// `advise` on the matrix's work already computed (see `infer::analyse_from`).
pub(crate) fn advise_from(m: &Matrix, inf: &Inference, w: &Work) -> Vec<Finding> {
    let unit = m.unit.as_str();
    let v = |x: f64| format!("{} {unit}", fmt_value(x));
    let bw = m.unit.is_bandwidth();
    let mut out = Vec::new();
    if m.slit_only {
        out.push(Finding {
            kind: "firmware-only".into(),
            text: "nothing was measured: this advice rests on the firmware's distance table (SLIT), \
                   which gives relative distances, not times or bandwidths; measure (numaprobe latency, \
                   numaprobe bandwidth) before relying on it"
                .into(),
            data: json!({}).into(),
        });
    }
    let Some(local) = inf.levels.iter().find(|l| l.kind == "local") else {
        out.push(Finding {
            kind: "no-local".into(),
            text: "no local cell was measured: penalties cannot be given".into(),
            data: json!({}).into(),
        });
        return out;
    };

    // Penalty per remote level.
    for l in inf.levels.iter().filter(|l| l.kind == "remote") {
        out.push(Finding {
            kind: "penalty".into(),
            text: format!(
                "level {} ({}): {} instead of {} local, {}",
                l.name,
                hops_phrase(l),
                v(l.value),
                v(local.value),
                relative_words(m.unit, l.value, local.value)
            ),
            data: json!({"level": l.name, "value": l.value, "local": local.value,
                "ratio": l.value / local.value, "hops": l.hops, "source": inf.source})
            .into(),
        });
    }

    // Where to keep threads and data together: the smallest group that
    // holds the job, tier by tier.
    let cpu_tiers: Vec<(usize, &crate::model::infer::Tier)> = inf
        .hierarchy
        .iter()
        .enumerate()
        .filter(|(_, t)| super::work::proper_tier(m, &t.groups))
        .collect();
    if !cpu_tiers.is_empty() {
        let worst = |within: bool, d: u32| -> Option<f64> {
            let vals = inf.cells.iter().filter(|c| {
                c.cpu_node != c.mem_node
                    && !c.stray
                    && c.distance
                        .is_some_and(|x| if within { x <= d } else { x > d })
            });
            let it = vals.map(|c| c.value);
            if bw {
                it.min_by(f64::total_cmp)
            } else {
                it.max_by(f64::total_cmp)
            }
        };
        let parts: Vec<String> = cpu_tiers
            .iter()
            .map(|(i, t)| {
                let d = *i as u32 + 1;
                format!(
                    "{} (level {}: inside {} {}, across {} {})",
                    groups_text(&t.groups, true),
                    t.level,
                    if bw { "at least" } else { "at most" },
                    worst(true, d).map_or("-".into(), v),
                    if bw { "down to" } else { "up to" },
                    worst(false, d).map_or("-".into(), v)
                )
            })
            .collect();
        out.push(Finding {
            kind: "keep-together".into(),
            text: format!(
                "keep a job's threads and its data inside the smallest group that holds it{}: {}",
                if m.slit_only { " (by firmware distance)" } else { "" },
                parts.join("; then ")
            ),
            data: json!({"tiers": cpu_tiers.iter().map(|(i, t)| json!({"tier": i + 1, "level": t.level, "groups": t.groups})).collect::<Vec<_>>()}).into(),
        });
    } else if !w.rank.is_empty() {
        out.push(Finding {
            kind: "keep-local".into(),
            text: format!(
                "keep each thread's data on its own node (first touch by the thread that uses it, or numactl --localalloc); local is {}",
                v(local.value)
            ),
            data: json!({"local": local.value}).into(),
        });
    }

    // Nearest memory of each CPU node (where its memory should spill over),
    // and the best CPU nodes of each memory-only node. Ties are listed.
    let spill = nearest(w, m, |n| m.has_cpus(n), true);
    if !spill.is_empty() && w.nodes.len() > 2 {
        out.push(Finding {
            kind: "nearest".into(),
            text: format!(
                "when a node's memory is full, spill to its nearest node{}: {}",
                if m.slit_only {
                    " by firmware distance"
                } else {
                    ""
                },
                spill
                    .iter()
                    .map(|(n, os, x)| format!("{n}->{} ({})", set_text(os), v(*x)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            data: json!(spill
                .iter()
                .map(|(n, os, x)| json!({"node": n, "nearest": os, "value": x}))
                .collect::<Vec<_>>())
            .into(),
        });
    }
    let cpuless = m.cpuless_nodes();
    if !cpuless.is_empty() {
        let users = nearest(w, m, |n| cpuless.contains(&n), false);
        out.push(Finding {
            kind: "memory-only".into(),
            text: format!(
                "node(s) {} have no CPUs (memory only: HBM, CXL or device memory): never run threads there; \
                 put data on them (numactl --membind or --preferred) from threads on their nearest CPU node{}{}",
                cpuless.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
                if m.slit_only { " by firmware distance" } else { "" },
                if users.is_empty() {
                    String::new()
                } else {
                    format!(
                        ": {}",
                        users
                            .iter()
                            .map(|(n, os, x)| format!("{n}<-{} ({})", set_text(os), v(*x)))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }
            ),
            data: json!({"nodes": cpuless, "users": users.iter().map(|(n, os, x)| json!({"node": n, "cpu_nodes": os, "value": x})).collect::<Vec<_>>()}).into(),
        });
    }

    out.push(interleave(m, bw));
    if !m.slit_only {
        // Crossfire is about load on links the measurement revealed; a
        // firmware table says nothing about load.
        out.extend(crossfire(m, w, inf));
    }
    out
}

fn set_text(ns: &[u32]) -> String {
    if ns.len() == 1 {
        ns[0].to_string()
    } else {
        format!(
            "{{{}}}",
            ns.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
        )
    }
}

/// For each node `n` with `pick(n)`: the other nodes of the best level
/// reachable from it (all of them when several tie) and that level's best
/// value. `outward`: n's threads reach other nodes' memory (row n);
/// otherwise CPU nodes reach n's memory (column n).
fn nearest(
    w: &Work,
    m: &Matrix,
    pick: impl Fn(u32) -> bool,
    outward: bool,
) -> Vec<(u32, Vec<u32>, f64)> {
    let mut out = Vec::new();
    for &n in w.nodes.iter().filter(|&&n| pick(n)) {
        // Candidate pairs with a measured cell in the wanted direction.
        let cands: Vec<(u32, usize)> = w
            .nodes
            .iter()
            .copied()
            .filter(|&o| o != n)
            .filter(|&o| if outward { true } else { m.has_cpus(o) })
            .filter(|&o| {
                let (a, b) = if outward { (n, o) } else { (o, n) };
                m.get(a, b).is_some()
            })
            .filter_map(|o| w.rank.get((n.min(o), n.max(o))).map(|&r| (o, r as usize)))
            .collect();
        let Some(best) = cands.iter().map(|c| c.1).min() else {
            continue;
        };
        let os: Vec<u32> = cands.iter().filter(|c| c.1 == best).map(|c| c.0).collect();
        // The best cell in the direction asked, over the tied nodes.
        let val = os
            .iter()
            .filter_map(|&o| if outward { m.get(n, o) } else { m.get(o, n) })
            .min_by(|a, b| cost_of(m, *a).total_cmp(&cost_of(m, *b)))
            .unwrap_or(f64::NAN);
        out.push((n, os, val));
    }
    out
}

/// Interleaving spreads pages evenly over the memory nodes. For threads on
/// node i that is a harmonic mean of row i for bandwidth (equal bytes from
/// each node, time adds up) and a plain mean for latency and distance.
fn interleave(m: &Matrix, bw: bool) -> Finding {
    let unit = m.unit.as_str();
    let mut rows = Vec::new();
    for (r, &node) in m.row_nodes.iter().enumerate() {
        if !m.has_cpus(node) {
            continue;
        }
        let vals: Vec<f64> = m.row(r).flatten().collect();
        let Some(loc) = m.get(node, node) else {
            continue;
        };
        if vals.len() < 2 {
            continue;
        }
        let k = vals.len() as f64;
        let inter = if bw {
            k / vals.iter().map(|x| 1.0 / x).sum::<f64>()
        } else {
            vals.iter().sum::<f64>() / k
        };
        rows.push((node, loc, inter));
    }
    if rows.is_empty() {
        return Finding {
            kind: "interleave".into(),
            text: "interleaving: no CPU node's row has a local and a remote cell to judge it"
                .into(),
            data: json!({}).into(),
        };
    }
    // The worst node speaks for all ("up to"); the data carry every node.
    let worse = |r: &(u32, f64, f64)| if bw { r.1 / r.2 } else { r.2 / r.1 };
    let (wn, wl, wi) = rows
        .iter()
        .copied()
        .max_by(|a, b| worse(a).total_cmp(&worse(b)))
        .unwrap_or(rows[0]);
    let ex = format!(
        "node {wn}: {} local vs {} interleaved {unit}",
        fmt_value(wl),
        fmt_value(wi)
    );
    let text = if m.unit == Unit::Distance {
        format!(
            "interleaving over all nodes puts memory at a firmware distance of up to {:.1}x local on average ({ex}); \
             by the firmware's table, use it only for data every node reads equally",
            wi / wl
        )
    } else if bw {
        let total_local: f64 = rows.iter().map(|r| r.1).sum();
        let max_single = rows.iter().map(|r| r.1).fold(0.0, f64::max);
        format!(
            "interleaving does not pay for bandwidth-bound work whose threads read their own data: {} ({ex}). \
             It pays for data every thread shares or one thread initialised: on one node all threads share one controller (at most {} {unit}), \
             spread over all nodes they can reach together up to {} {unit}",
            relative_words(m.unit, wi, wl).replace("than local", "than local at worst"),
            fmt_value(max_single),
            fmt_value(total_local)
        )
    } else {
        format!(
            "interleaving makes latency-bound work {} ({ex}); use it only for data every node reads equally, \
             keep the rest local",
            relative_words(m.unit, wi, wl).replace("than local", "than local at worst")
        )
    };
    Finding {
        kind: "interleave".into(),
        text,
        data: json!(rows
            .iter()
            .map(|(n, l, i)| json!({"node": n, "local": l, "interleaved": i}))
            .collect::<Vec<_>>())
        .into(),
    }
}

/// The links as their nodes' places in `w.nodes`. A matrix names at most
/// `MAX_NODES` (2048) nodes, so a place fits 16 bits.
fn link_places(w: &Work) -> Vec<[u16; 2]> {
    let place = |n: u32| u16::try_from(w.idx(n)).unwrap_or(u16::MAX);
    w.links.iter().map(|&(x, y)| [place(x), place(y)]).collect()
}

/// Crossfire: threads on a using memory on b while threads on b use memory
/// on a load the links between them in both directions. Multi-hop pairs put
/// that load on links that other pairs need too.
fn crossfire(m: &Matrix, w: &Work, inf: &Inference) -> Vec<Finding> {
    let unit = m.unit.as_str();
    let v = |x: f64| format!("{} {unit}", fmt_value(x));
    let mut out = Vec::new();
    // How many pairs' shortest paths use each link, and the links of each
    // pair two or more hops apart. A pair one hop apart loads its own link
    // and nothing else, so no list is kept for it: where every pair is a
    // link (a million of them at 1500 nodes), such lists were most of the
    // analysis's memory.
    // Counted in a flat table over the pairs: a map held some 40 bytes a
    // link, and every pair can be a link.
    let mut load: PairTable<u32> = PairTable::new(&w.nodes);
    let mut via: BTreeMap<(u32, u32), Vec<(u32, u32)>> = BTreeMap::new();
    // The links by their nodes' places, 4 bytes a link (a matrix names at
    // most 2048 nodes), made only when a pair two or more hops apart needs
    // them: a full matrix, where every pair is a link and none is two hops
    // apart, never makes them, and a list of the links' numbers beside
    // their places took 24 bytes a link (12 a cell) at the peak.
    let mut places: Option<Vec<[u16; 2]>> = None;
    for ((a, b), _) in w.ranks() {
        // Only pairs with threads on both ends make crossfire.
        if !(m.has_cpus(a) && m.has_cpus(b)) {
            continue;
        }
        let Some(h) = w.hops(a, b) else { continue };
        if h == 1 {
            if let Some(n) = load.slot_mut((a, b)) {
                *n += 1;
            }
            continue;
        }
        let (ia, ib) = (w.idx(a), w.idx(b));
        let links = places.get_or_insert_with(|| link_places(w));
        for &[ix, iy] in links.iter() {
            let (ix, iy) = (usize::from(ix), usize::from(iy));
            let (x, y) = (w.nodes[ix], w.nodes[iy]);
            // Link x-y is on a shortest a..b path if it closes the distance.
            let on = |p: usize, q: usize| matches!((w.hops.get(ia, p), w.hops.get(q, ib)), (Some(d1), Some(d2)) if d1 + 1 + d2 == h);
            if on(ix, iy) || on(iy, ix) {
                if let Some(n) = load.slot_mut((x, y)) {
                    *n += 1;
                }
                via.entry((a, b)).or_default().push((x, y));
            }
        }
    }
    // Every pair can be a link: held on, this list would sit beside the
    // lists below.
    drop(places);
    if !via.is_empty() {
        let mut parts: Vec<String> = via
            .iter()
            .take(6)
            .map(|(&(a, b), ls)| {
                let links: Vec<String> = ls.iter().map(|(x, y)| format!("{x}-{y}")).collect();
                format!("{a}<->{b} over links {}", links.join(", "))
            })
            .collect();
        if via.len() > parts.len() {
            parts.push(format!("and {} more pair(s)", via.len() - parts.len()));
        }
        out.push(Finding {
            kind: "crossfire".into(),
            text: format!(
                "pairs at risk of crossfire: threads on one node using the other's memory in both directions load every link on the way both ways, \
                 and share those links with the direct pairs: {}",
                parts.join("; ")
            ),
            data: FindingData::PairPaths(
                via.into_iter()
                    .map(|((a, b), links)| PairPath {
                        pair: [a, b],
                        links,
                    })
                    .collect(),
            ),
        });
    }
    // The most shared links (every link with the top count is named).
    if let Some(max) = load.iter().map(|(_, &n)| n).max().filter(|&n| n > 1) {
        let busiest: Vec<String> = load
            .iter()
            .filter(|(_, &n)| n == max)
            .map(|((x, y), _)| format!("{x}-{y}"))
            .collect();
        let shown = if busiest.len() > 8 {
            format!(
                "{} (and {} more)",
                busiest[..8].join(", "),
                busiest.len() - 8
            )
        } else {
            busiest.join(", ")
        };
        out.push(Finding {
            kind: "shared-links".into(),
            text: format!(
                "the most shared link(s) {shown} carry the traffic of {max} node pairs each; do not run two memory-heavy jobs whose data sit across them"
            ),
            data: json!({"links": busiest, "pairs_per_link": max}).into(),
        });
    }
    drop(load);
    // The slowest links between CPU nodes, as a level: links of one level
    // are equal within the noise, so none of them is singled out.
    // The links between CPU nodes with their ranks, read from the links
    // each time rather than listed (16 bytes a link, and every pair can be
    // a link); the lists of links below are sized once (counted first): a
    // list collected from a filter grows by doubling, up to twice its links.
    let cpu_links = || {
        w.links
            .iter()
            .filter(|&&(a, b)| m.has_cpus(a) && m.has_cpus(b))
            .map(|&(a, b)| (a, b, w.rank_of((a, b))))
    };
    let local = inf.levels.iter().find(|l| l.kind == "local");
    if let (Some(worst), Some(local)) = (cpu_links().map(|l| l.2).max(), local) {
        let lv = inf
            .levels
            .iter()
            .filter(|l| l.kind == "remote")
            .nth(worst - 1);
        let (members, all) =
            first_links(cpu_links().filter(|l| l.2 == worst).map(|l| (l.0, l.1)), 8);
        let shown = if all > members.len() {
            format!("{} (and {} more)", members.join(", "), all - members.len())
        } else {
            members.join(", ")
        };
        let (name, value) = lv.map_or(("?".to_string(), f64::NAN), |l| (l.name.clone(), l.value));
        let links_at = |rank: usize| -> Vec<[u32; 2]> {
            let mut out = Vec::with_capacity(cpu_links().filter(|l| l.2 == rank).count());
            out.extend(cpu_links().filter(|l| l.2 == rank).map(|l| [l.0, l.1]));
            out
        };
        let first = cpu_links().next();
        if let (Some((a, b, _)), None) = (first, cpu_links().nth(1)) {
            out.push(Finding {
                kind: "crossfire-link".into(),
                text: format!(
                    "the only direct link between CPU nodes, {a}-{b} (level {name}, {}, {}), carries all their remote traffic: \
                     threads on {a} using memory on {b} while threads on {b} use memory on {a} load it both ways",
                    v(value),
                    relative_words(m.unit, value, local.value)
                ),
                data: FindingData::Links(LevelLinks {
                    level: name,
                    links: vec![[a, b]],
                    local: Some(local.value),
                    value: Some(value),
                }),
            });
        } else if cpu_links().all(|l| l.2 == worst) {
            out.push(Finding {
                kind: "links-equal".into(),
                text: format!(
                    "all {all} direct link(s) between CPU nodes are equal within noise (level {name}, {}, {}): no link is slower than another, \
                     so no pair of nodes is worse to share than another",
                    v(value),
                    relative_words(m.unit, value, local.value)
                ),
                data: FindingData::Links(LevelLinks {
                    level: name,
                    links: links_at(worst),
                    local: None,
                    value: None,
                }),
            });
        } else {
            let best = cpu_links().map(|l| l.2).min().unwrap_or(worst);
            let best_name = inf
                .levels
                .iter()
                .filter(|l| l.kind == "remote")
                .nth(best - 1)
                .map_or("?".to_string(), |l| l.name.clone());
            out.push(Finding {
                kind: "crossfire-link".into(),
                text: format!(
                    "the slowest direct links are level {name} ({}, {}): {shown}; threads on one end using memory on the other \
                     while threads there use memory here load them both ways; place such pairs of jobs on one node or on nodes \
                     joined by a faster link (level {best_name})",
                    v(value),
                    relative_words(m.unit, value, local.value)
                ),
                data: FindingData::Links(LevelLinks {
                    level: name,
                    links: links_at(worst),
                    local: Some(local.value),
                    value: Some(value),
                }),
            });
        }
    }
    out
}
