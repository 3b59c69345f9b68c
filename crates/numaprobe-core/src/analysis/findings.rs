//! The findings of an inference, in words with the numbers behind them:
//! what the data show beyond levels and links (gaps, flagged and stray
//! cells, asymmetry, requester-dependent cost, link speeds, hop order
//! within a tier, nested groups) and, through `slit`, where the firmware's
//! table disagrees with the measurement.

use super::levels::GAP_SIGMAS;
use super::matrix::Matrix;
use super::work::{
    best_value, cell_str, first_links, level_name, pair_str, pct_worse, proper_tier, Cell, Work,
};
use crate::model::infer::{fmt_value, groups_text, Finding, FindingData, Inference, LevelLinks};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};

pub(crate) fn findings(m: &Matrix, w: &Work, inf: &Inference) -> Vec<Finding> {
    let unit = m.unit.as_str();
    let v = |x: f64| format!("{} {unit}", fmt_value(x));
    let mut out = Vec::new();
    let sig = (GAP_SIGMAS * w.floor).max(if m.unit.is_exact() { 0.0 } else { 1e-9 });

    if m.slit_only {
        out.push(Finding {
            kind: "slit-only".into(),
            text: "no measurement in the input: the firmware distance table (SLIT) is analysed in its place; \
                   its levels are what the firmware claims, not what the machine does"
                .into(),
            data: json!({}).into(),
        });
    }
    if w.nodes.len() < 2 || w.pairs.is_empty() {
        out.push(Finding {
            kind: "nothing-to-compare".into(),
            text: format!(
                "{} node(s) and no remote cell: there is no interconnect to infer",
                w.nodes.len()
            ),
            data: json!({"nodes": w.nodes}).into(),
        });
    }

    // Cells not measured.
    let mut missing = Vec::new();
    for (r, &a) in m.row_nodes.iter().enumerate() {
        for (c, &b) in m.col_nodes.iter().enumerate() {
            if m.value(r, c).is_none() {
                missing.push([a, b]);
            }
        }
    }
    if !missing.is_empty() {
        let unknown: Vec<[u32; 2]> = (0..w.nodes.len())
            .flat_map(|i| (i + 1..w.nodes.len()).map(move |j| (i, j)))
            .filter(|&(i, j)| w.hops.get(i, j).is_none())
            .map(|(i, j)| [w.nodes[i], w.nodes[j]])
            .collect();
        out.push(Finding {
            kind: "partial-matrix".into(),
            text: format!(
                "{} cell(s) not measured ({}); the analysis uses what is there{}",
                missing.len(),
                missing
                    .iter()
                    .take(8)
                    .map(|[a, b]| format!("{a}>{b}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                if unknown.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; hops unknown for {}",
                        unknown
                            .iter()
                            .map(|[a, b]| pair_str(*a, *b))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }
            ),
            data: json!({"missing": missing, "hops_unknown": unknown}).into(),
        });
    }

    // Cells the measurement itself did not trust.
    if !m.flagged.is_empty() {
        out.push(Finding {
            kind: "flagged-cells".into(),
            text: format!(
                "{} cell(s) were flagged by the measurement and may mislead the levels: {}",
                m.flagged.len(),
                m.flagged
                    .iter()
                    .take(6)
                    .map(|([a, b], why)| format!("{a}>{b} ({})", why.join("; ")))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            data: json!(m
                .flagged
                .iter()
                .map(|(c, why)| json!({"cell": c, "flags": why}))
                .collect::<Vec<_>>())
            .into(),
        });
    }

    // Stray cells.
    // The mirror is read from the matrix itself: a map of every remote
    // cell's value, for the few stray cells, held tens of bytes a cell.
    for &i in &w.stray {
        let c = &w.remote(i);
        let mir = m.get(c.to, c.from);
        out.push(Finding {
            kind: "stray-cell".into(),
            text: format!(
                "cell {} = {} stands alone, far from every other value, while its mirror {}>{} = {} fits a level: \
                 a disturbed measurement (repeat it); it is left out and the pair uses the mirror",
                cell_str(c),
                v(c.value),
                c.to,
                c.from,
                mir.map_or("-".into(), v)
            ),
            data: json!({"cell": [c.from, c.to], "value": c.value, "mirror_value": mir}).into(),
        });
    }

    // Asymmetric pairs.
    let mut asym = Vec::new();
    for ((a, b), (_, cells)) in w.pairs.iter() {
        if let Some((x, y)) = cells.both() {
            let (x, y) = (w.remote(x), w.remote(y));
            let d = (w.cost(&x) - w.cost(&y)).abs();
            if d > sig && d > 0.0 {
                let (better, worse) = if w.cost(&x) < w.cost(&y) {
                    (x, y)
                } else {
                    (y, x)
                };
                asym.push((a, b, better, worse, d));
            }
        }
    }
    if !asym.is_empty() {
        let parts: Vec<String> = asym
            .iter()
            .map(|(_, _, bt, wr, _)| {
                format!(
                    "{} {} vs {} {} ({:.1} % worse)",
                    cell_str(bt),
                    v(bt.value),
                    cell_str(wr),
                    v(wr.value),
                    pct_worse(w.cost(bt), w.cost(wr))
                )
            })
            .collect();
        out.push(Finding {
            kind: "asymmetric".into(),
            text: format!(
                "the two directions of {} pair(s) differ by more than noise: {}; the pair is placed by its better direction",
                asym.len(),
                parts.join("; ")
            ),
            data: json!(asym
                .iter()
                .map(|(_, _, bt, wr, _)| json!({"better": [bt.from, bt.to], "better_value": bt.value,
                    "worse": [wr.from, wr.to], "worse_value": wr.value}))
                .collect::<Vec<_>>()).into(),
        });
    }

    // Local cells: differences between nodes, and local worse than remote.
    if w.local.len() >= 2 {
        let best = w
            .local
            .iter()
            .min_by(|a, b| w.cost(a).total_cmp(&w.cost(b)));
        let worst = w
            .local
            .iter()
            .max_by(|a, b| w.cost(a).total_cmp(&w.cost(b)));
        if let (Some(bl), Some(wl)) = (best, worst) {
            if w.cost(wl) - w.cost(bl) > sig && w.cost(wl) > w.cost(bl) {
                out.push(Finding {
                    kind: "local-differs".into(),
                    text: format!(
                        "local memory is not equally fast on every node: node {} {} vs node {} {} ({:.1} % worse)",
                        bl.from,
                        v(bl.value),
                        wl.from,
                        v(wl.value),
                        pct_worse(w.cost(bl), w.cost(wl))
                    ),
                    data: json!({"local": w.local.iter().map(|c| json!({"node": c.from, "value": c.value})).collect::<Vec<_>>()}).into(),
                });
            }
        }
    }
    if let Some(best_remote) = &(0..w.remote_len())
        .filter(|i| w.stray.binary_search(i).is_err())
        .map(|i| w.remote(i))
        .min_by(|a, b| w.cost(a).total_cmp(&w.cost(b)))
    {
        let worse_locals: Vec<&Cell> = w
            .local
            .iter()
            .filter(|l| w.cost(l) - w.cost(best_remote) > sig && w.cost(l) > w.cost(best_remote))
            .collect();
        if !worse_locals.is_empty() {
            let names: Vec<String> = worse_locals
                .iter()
                .map(|l| format!("node {}'s own memory {}", l.from, v(l.value)))
                .collect();
            out.push(Finding {
                kind: "requester-dependent".into(),
                text: format!(
                    "not a hop model: {} {} worse than node {} reaching node {}'s memory ({}); \
                     the cost depends on which node asks (e.g. on how fast its snoops are answered), not only on hops",
                    names.join(" and "),
                    if worse_locals.len() == 1 { "is" } else { "are" },
                    best_remote.from,
                    best_remote.to,
                    v(best_remote.value)
                ),
                data: json!({
                    "remote_cell": [best_remote.from, best_remote.to],
                    "remote_value": best_remote.value,
                    "local": worse_locals.iter().map(|l| json!({"node": l.from, "value": l.value})).collect::<Vec<_>>()
                }).into(),
            });
        }
    }

    // Links of more than one speed.
    // Inserted one by one: collected, a set is first a list of every item
    // (every pair can be a link), sorted, for a handful of ranks.
    let mut link_ranks = BTreeSet::new();
    for &k in &w.links {
        link_ranks.insert(w.rank_of(k));
    }
    if link_ranks.len() > 1 {
        let parts: Vec<String> = link_ranks
            .iter()
            .map(|&r| {
                let (ls, all) =
                    first_links(w.links.iter().copied().filter(|&k| w.rank_of(k) == r), 6);
                let lv = inf.levels.iter().find(|l| l.name == level_name(r - 1));
                let shown = if all > ls.len() {
                    format!("{} (+{} more)", ls.join(", "), all - ls.len())
                } else {
                    ls.join(", ")
                };
                format!(
                    "level {} ({}): {}",
                    level_name(r - 1),
                    lv.map_or("-".into(), |l| v(l.value)),
                    shown
                )
            })
            .collect();
        out.push(Finding {
            kind: "link-speeds".into(),
            text: format!(
                "direct links come in {} speeds: {}",
                link_ranks.len(),
                parts.join("; ")
            ),
            data: FindingData::LinksByLevel(
                link_ranks
                    .iter()
                    .map(|&r| LevelLinks {
                        level: level_name(r - 1),
                        links: links_of_rank(w, r),
                        local: None,
                        value: None,
                    })
                    .collect(),
            ),
        });
    }

    // More hops but a better level than a pair with fewer hops, among the
    // pairs of one tier of the hierarchy (across tiers the hierarchy orders
    // them). Counted from a (distance, hops, level) histogram: big machines
    // have thousands of pairs.
    // Each bucket keeps its count and its first pair, all the finding
    // quotes, not a list of its pairs.
    type Bucket = (usize, (u32, u32));
    let mut hist: BTreeMap<(u32, u32, usize), Bucket> = BTreeMap::new();
    for (p, r) in w.ranks() {
        let d = inf.distance.get(w.idx(p.0), w.idx(p.1)).unwrap_or(0);
        if let Some(h) = w.hops(p.0, p.1) {
            hist.entry((d, h, r)).or_insert((0, p)).0 += 1;
        }
    }
    let mut count = 0usize;
    let mut example = None;
    for (&(d1, h1, r1), &(ps, p0)) in &hist {
        for (&(d2, h2, r2), &(qs, q0)) in &hist {
            if d1 == d2 && h1 < h2 && r1 > r2 {
                count += ps * qs;
                example.get_or_insert((p0, h1, q0, h2));
            }
        }
    }
    if let Some((p, hp, q, hq)) = example {
        out.push(Finding {
            kind: "hop-order".into(),
            text: format!(
                "not a hop model: in {} comparison(s) a pair with more hops is faster than a pair with fewer, e.g. {} ({} hop(s), {}) beats {} ({} hop(s), {})",
                count,
                pair_str(q.0, q.1),
                hq,
                v(best_value(w, q)),
                pair_str(p.0, p.1),
                hp,
                v(best_value(w, p)),
            ),
            data: json!({"comparisons": count, "example": {
                "fewer_hops": [p.0, p.1], "fewer_hops_count": hp,
                "more_hops": [q.0, q.1], "more_hops_count": hq}}).into(),
        });
    }

    // Summary of the hop structure.
    let diameter = w.hops.iter().flatten().max().unwrap_or(0);
    if diameter >= 2 {
        let far: Vec<String> = w
            .ranks()
            .map(|(k, _)| k)
            .filter(|&(a, b)| w.hops(a, b) == Some(diameter))
            .map(|(a, b)| pair_str(a, b))
            .collect();
        let shown = if far.len() > 8 {
            format!("{} and {} more pairs", far[..8].join(", "), far.len() - 8)
        } else {
            far.join(", ")
        };
        out.push(Finding {
            kind: "multi-hop".into(),
            text: format!(
                "not every node pair is linked directly: {} {} {} hops apart",
                shown,
                if far.len() == 1 { "is" } else { "are" },
                diameter
            ),
            data: json!({"diameter": diameter, "pairs": far}).into(),
        });
    }

    // Groups within groups.
    if inf.hierarchy.len() > 1 && inf.hierarchy.iter().any(|t| proper_tier(m, &t.groups)) {
        // Worst and best level rank of the pairs at each distance: the
        // hierarchy explains the levels when every distance's pairs are
        // all worse than every pair of a smaller distance.
        let mut span: BTreeMap<u32, (usize, usize)> = BTreeMap::new();
        for (p, r) in w.ranks() {
            if let Some(d) = inf.distance.get(w.idx(p.0), w.idx(p.1)) {
                let e = span.entry(d).or_insert((r, r));
                e.0 = e.0.min(r);
                e.1 = e.1.max(r);
            }
        }
        let spans: Vec<(u32, (usize, usize))> = span.into_iter().collect();
        let clash = spans
            .windows(2)
            .find(|x| x[0].1 .1 >= x[1].1 .0)
            .map(|x| (x[0].0, x[1].0));
        let tiers: Vec<String> = inf
            .hierarchy
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let gs = if t.groups.len() == 1 {
                    "all nodes".to_string()
                } else {
                    groups_text(&t.groups, true)
                };
                format!("tier {} at level {} ({}): {gs}", i + 1, t.level, v(t.value))
            })
            .collect();
        let verdict = match clash {
            None => "every pair across a group is worse than every pair inside it".to_string(),
            Some((a, b)) => format!(
                "but the levels overlap between distance {a} and {b}: some pairs across a group are no worse than pairs inside one"
            ),
        };
        out.push(Finding {
            kind: "hierarchy".into(),
            text: format!("groups within groups: {}; {verdict}", tiers.join("; ")),
            data: json!({"tiers": inf.hierarchy.len(), "consistent": clash.is_none()}).into(),
        });
    }

    if let Some(f) = sub_numa(w, inf, &v) {
        out.push(f);
    }

    if let (Some(slit), false) = (&m.slit, m.slit_only) {
        out.extend(super::slit::compare(m, w, inf, slit));
    }
    out
}

/// Sub-NUMA clusters: which pairs share a package, what crossing a package
/// costs, and which of hops and distance to read.
fn sub_numa(w: &Work, inf: &Inference, v: &dyn Fn(f64) -> String) -> Option<Finding> {
    if inf.on_package.is_empty() {
        return None;
    }
    let level = |r: usize| inf.levels.iter().find(|l| l.name == level_name(r - 1));
    let near: Vec<String> = (1..=w.on_package)
        .filter_map(level)
        .map(|l| {
            format!(
                "{} ({}{})",
                l.name,
                v(l.value),
                l.ratio_to_local
                    .map_or(String::new(), |r| format!(", {r:.2}x local"))
            )
        })
        .collect();
    let far = inf
        .levels
        .iter()
        .filter(|l| l.kind == "remote" && !l.hops.contains(&0))
        .min_by(|a, b| a.hops.cmp(&b.hops))
        .map(|l| {
            format!(
                "; a pair across packages crosses {} link(s): level {} ({}{})",
                l.hops_text("/"),
                l.name,
                v(l.value),
                l.ratio_to_local
                    .map_or(String::new(), |r| format!(", {r:.2}x local"))
            )
        })
        .unwrap_or_default();
    Some(Finding {
        kind: "sub-numa".into(),
        text: format!(
            "sub-NUMA clusters (SNC/NPS): {} share a package each, their pairs a tier apart from local at level {} with no interconnect link between them (0 hops){far}. \
             Read `distance` for what costs more (every pair inside a package before every pair across); hops count interconnect links only",
            groups_text(&inf.on_package, false),
            near.join(", ")
        ),
        data: json!({"packages": inf.on_package, "levels": (1..=w.on_package).map(|r| level_name(r - 1)).collect::<Vec<_>>()}).into(),
    })
}

/// The links of level rank `r`, as node pairs, in a list sized once (counted
/// first): collected from a filter it grows by doubling, and at a thousand
/// nodes every pair can be a link.
fn links_of_rank(w: &Work, r: usize) -> Vec<[u32; 2]> {
    let of_rank = |&&k: &&(u32, u32)| w.rank_of(k) == r;
    let mut out = Vec::with_capacity(w.links.iter().filter(of_rank).count());
    out.extend(w.links.iter().filter(of_rank).map(|&(a, b)| [a, b]));
    out
}
