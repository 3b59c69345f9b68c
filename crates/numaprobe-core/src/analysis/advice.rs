//! Placement advice from an inference: the penalty of each remote level, where
//! to keep threads and data together, whether interleaving pays, and which
//! pairs risk crossfire. Every line carries the numbers it rests on.

use super::infer::{best_value, compute, pct_worse, Work};
use super::matrix::Matrix;
use crate::report::infer::{fmt_value, Finding, Inference};
use serde_json::json;
use std::collections::BTreeMap;

/// Advice lines for `inf`, which must come from `analyse(m)`.
pub fn advise(m: &Matrix, inf: &Inference) -> Vec<Finding> {
    let w = compute(m);
    let unit = m.unit.as_str();
    let v = |x: f64| format!("{} {unit}", fmt_value(x));
    let bw = m.unit.is_bandwidth();
    let mut out = Vec::new();
    let Some(local) = inf.levels.iter().find(|l| l.kind == "local") else {
        out.push(Finding {
            kind: "no-local".into(),
            text: "no local cell was measured: penalties cannot be given".into(),
            data: json!({}),
        });
        return out;
    };

    // Penalty per remote level.
    for l in inf.levels.iter().filter(|l| l.kind == "remote") {
        let Some(r) = l.ratio_to_local else { continue };
        let hops = l.hops_text("/");
        let text = if bw {
            format!(
                "level {} ({} hop(s)): {} instead of {} local, {:.0} % less bandwidth",
                l.name,
                hops,
                v(l.value),
                v(local.value),
                (1.0 - 1.0 / r) * 100.0
            )
        } else {
            format!(
                "level {} ({} hop(s)): {} instead of {} local, {:.0} % slower",
                l.name,
                hops,
                v(l.value),
                v(local.value),
                (r - 1.0) * 100.0
            )
        };
        out.push(Finding {
            kind: "penalty".into(),
            text,
            data: json!({"level": l.name, "value": l.value, "local": local.value, "ratio": r, "hops": l.hops}),
        });
    }

    // Where to keep threads and data together.
    if inf.groups.len() > 1 && inf.groups.iter().all(|g| g.len() > 1) {
        let worst_in = inf.levels.iter().filter(|l| l.kind == "remote").rfind(|l| {
            l.members
                .iter()
                .any(|[a, b]| inf.groups.iter().any(|g| g.contains(a) && g.contains(b)))
        });
        let cross = inf.levels.iter().rfind(|l| {
            l.kind == "remote"
                && l.members
                    .iter()
                    .any(|[a, b]| !inf.groups.iter().any(|g| g.contains(a) && g.contains(b)))
        });
        out.push(Finding {
            kind: "keep-together".into(),
            text: format!(
                "keep a job's threads and its data inside one group: {}; within a group remote costs up to {}, leaving it up to {}",
                inf.groups_text(),
                worst_in.map_or("-".into(), |l| v(l.max)),
                cross.map_or("-".into(), |l| v(l.max)),
            ),
            data: json!({"groups": inf.groups, "within_max": worst_in.map(|l| l.max), "across_max": cross.map(|l| l.max)}),
        });
    } else if !w.pairs.is_empty() {
        out.push(Finding {
            kind: "keep-local".into(),
            text: format!(
                "keep each thread's data on its own node (first touch by the thread that uses it, or numactl --localalloc); local is {}",
                v(local.value)
            ),
            data: json!({"local": local.value}),
        });
    }
    // Nearest neighbour of each node: where memory should spill over.
    let mut nearest = Vec::new();
    for &n in &w.nodes {
        let best = w
            .pairs
            .iter()
            .filter(|((a, b), _)| *a == n || *b == n)
            .min_by(|x, y| x.1 .0.total_cmp(&y.1 .0));
        if let Some((&(a, b), _)) = best {
            let other = if a == n { b } else { a };
            nearest.push((n, other, best_value(&w, (a, b))));
        }
    }
    if !nearest.is_empty() && w.nodes.len() > 2 {
        out.push(Finding {
            kind: "nearest".into(),
            text: format!(
                "when a node's memory is full, spill to its nearest node: {}",
                nearest
                    .iter()
                    .map(|(n, o, x)| format!("{n}->{o} ({})", v(*x)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            data: json!(nearest
                .iter()
                .map(|(n, o, x)| json!({"node": n, "nearest": o, "value": x}))
                .collect::<Vec<_>>()),
        });
    }

    out.push(interleave(m, &w, bw));
    out.extend(crossfire(m, &w, inf));
    out
}

/// Interleaving spreads pages evenly over the memory nodes. For threads on
/// node i that is a harmonic mean of row i for bandwidth (equal bytes from
/// each node, time adds up) and a plain mean for latency.
fn interleave(m: &Matrix, w: &Work, bw: bool) -> Finding {
    let unit = m.unit.as_str();
    let mut rows = Vec::new();
    for (r, &node) in m.row_nodes.iter().enumerate() {
        let vals: Vec<f64> = m.values[r].iter().flatten().copied().collect();
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
    let _ = w;
    if rows.is_empty() {
        return Finding {
            kind: "interleave".into(),
            text: "interleaving: no row with a local and a remote cell to judge it".into(),
            data: json!({}),
        };
    }
    let worst = rows
        .iter()
        .map(|(_, l, i)| if bw { 1.0 - i / l } else { i / l - 1.0 })
        .fold(f64::NEG_INFINITY, f64::max);
    // The worst node speaks for all; the data carry every node.
    let (wn, wl, wi) = rows
        .iter()
        .copied()
        .max_by(|a, b| {
            let f = |r: &(u32, f64, f64)| if bw { r.1 / r.2 } else { r.2 / r.1 };
            f(a).total_cmp(&f(b))
        })
        .unwrap_or(rows[0]);
    let ex = format!(
        "node {wn}: {} local vs {} interleaved",
        fmt_value(wl),
        fmt_value(wi)
    );
    let text = if bw {
        let total_local: f64 = rows.iter().map(|r| r.1).sum();
        let max_single = rows.iter().map(|r| r.1).fold(0.0, f64::max);
        format!(
            "interleaving does not pay for bandwidth-bound work whose threads read their own data: up to {:.0} % less per node ({ex} {unit}). \
             It pays for data every thread shares or one thread initialised: on one node all threads share one controller (at most {} {unit}), \
             spread over all nodes they can reach together up to {} {unit}",
            worst * 100.0,
            fmt_value(max_single),
            fmt_value(total_local)
        )
    } else {
        format!(
            "interleaving costs latency-bound work up to {:.0} % ({ex} {unit}); use it only for data every node reads equally, \
             keep the rest local",
            worst * 100.0
        )
    };
    Finding {
        kind: "interleave".into(),
        text,
        data: json!(rows
            .iter()
            .map(|(n, l, i)| json!({"node": n, "local": l, "interleaved": i}))
            .collect::<Vec<_>>()),
    }
}

/// Crossfire: threads on a using memory on b while threads on b use memory
/// on a load the links between them in both directions. Multi-hop pairs put
/// that load on links that other pairs need too.
fn crossfire(m: &Matrix, w: &Work, inf: &Inference) -> Vec<Finding> {
    let unit = m.unit.as_str();
    let mut out = Vec::new();
    // For each pair, the links on its shortest paths (all of them).
    let mut load: BTreeMap<(u32, u32), Vec<(u32, u32)>> = BTreeMap::new();
    // And the other way round: pair -> links on its shortest paths.
    let mut via: BTreeMap<(u32, u32), Vec<(u32, u32)>> = BTreeMap::new();
    let links: Vec<(u32, u32, usize, usize)> = w
        .links
        .iter()
        .map(|&(x, y)| (x, y, w.idx(x), w.idx(y)))
        .collect();
    for &(a, b) in w.rank.keys() {
        let Some(h) = w.hops(a, b) else { continue };
        if h == 1 {
            // A direct pair loads its own link (and only that one).
            load.entry((a, b)).or_default().push((a, b));
            via.entry((a, b)).or_default().push((a, b));
            continue;
        }
        let (ia, ib) = (w.idx(a), w.idx(b));
        for &(x, y, ix, iy) in &links {
            // Link x-y is on a shortest a..b path if it closes the distance.
            let on = |p: usize, q: usize| matches!((w.hops[ia][p], w.hops[q][ib]), (Some(d1), Some(d2)) if d1 + 1 + d2 == h);
            if on(ix, iy) || on(iy, ix) {
                load.entry((x, y)).or_default().push((a, b));
                via.entry((a, b)).or_default().push((x, y));
            }
        }
    }
    let multi: Vec<(u32, u32)> = w
        .rank
        .keys()
        .copied()
        .filter(|&(a, b)| w.hops(a, b).is_some_and(|h| h >= 2))
        // Crossfire needs threads on both ends: memory-only nodes have none.
        .filter(|(a, b)| m.row_nodes.contains(a) && m.row_nodes.contains(b))
        .collect();
    if !multi.is_empty() {
        let mut parts: Vec<String> = multi
            .iter()
            .take(6)
            .map(|&(a, b)| {
                let links: Vec<String> = via
                    .get(&(a, b))
                    .map(|ls| ls.iter().map(|(x, y)| format!("{x}-{y}")).collect())
                    .unwrap_or_default();
                format!("{a}<->{b} over links {}", links.join(", "))
            })
            .collect();
        if multi.len() > parts.len() {
            parts.push(format!("and {} more pair(s)", multi.len() - parts.len()));
        }
        out.push(Finding {
            kind: "crossfire".into(),
            text: format!(
                "pairs at risk of crossfire: threads on one node using the other's memory in both directions load every link on the way both ways, \
                 and share those links with the direct pairs: {}",
                parts.join("; ")
            ),
            data: json!(multi
                .iter()
                .map(|&(a, b)| json!({"pair": [a, b], "links": via.get(&(a, b)).cloned().unwrap_or_default()}))
                .collect::<Vec<_>>()),
        });
    }
    // The most shared links, and the slowest direct links.
    if let Some(max) = load.values().map(Vec::len).max().filter(|&n| n > 1) {
        let busiest: Vec<String> = load
            .iter()
            .filter(|(_, ps)| ps.len() == max)
            .map(|(&(x, y), _)| format!("{x}-{y}"))
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
                "the most shared link(s) {} carry the traffic of {} node pairs each; do not run two memory-heavy jobs whose data sit across them",
                shown,
                max
            ),
            data: json!({"links": busiest, "pairs_per_link": max}),
        });
    }
    let slowest = inf
        .link_details
        .iter()
        .filter(|l| l.nodes.iter().all(|n| m.row_nodes.contains(n)))
        .max_by(|a, b| {
            let ca = w.pairs[&(a.nodes[0], a.nodes[1])].0;
            let cb = w.pairs[&(b.nodes[0], b.nodes[1])].0;
            ca.total_cmp(&cb)
        });
    if let (Some(sl), Some(local)) = (slowest, inf.levels.iter().find(|l| l.kind == "local")) {
        let [a, b] = sl.nodes;
        let there = m.get(a, b);
        let back = m.get(b, a);
        let fwd = w.pairs[&(a, b)].0;
        let lc = if m.unit.higher_is_better() {
            -local.value.ln()
        } else {
            local.value.ln()
        };
        let how_bad = if m.unit.higher_is_better() {
            format!("{:.0} % less than local", (1.0 - (lc - fwd).exp()) * 100.0)
        } else {
            format!("{:.0} % worse than local", pct_worse(lc, fwd))
        };
        out.push(Finding {
            kind: "crossfire-link".into(),
            text: format!(
                "the slowest direct link {a}-{b} ({}>{} {}, {}>{} {}, {}): threads on {a} using memory on {b} while threads on {b} use memory on {a} \
                 load it both ways; place such pairs of jobs on the same node or on nodes joined by a faster link",
                a,
                b,
                there.map_or("-".into(), |x| format!("{} {unit}", fmt_value(x))),
                b,
                a,
                back.map_or("-".into(), |x| format!("{} {unit}", fmt_value(x))),
                how_bad
            ),
            data: json!({"link": [a, b], "forward": there, "backward": back, "local": local.value}),
        });
    }
    out
}
