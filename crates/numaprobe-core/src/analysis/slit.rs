//! Measurement against firmware: where the SLIT has fewer levels than the
//! measurement (the RWTH Aachen blog's Nehalem-EX table knows only 10 and 12), orders node pairs
//! differently, or claims a remote/local ratio far from the measured one.

use super::matrix::{Matrix, Slit};
use super::work::{best_value, pct_worse, Work};
use crate::model::infer::{fmt_value, Finding, Inference};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};

/// A SLIT ratio is "far" from the measured one when they differ by more than
/// this factor: SLIT values are integers over a local 10, so rounding alone
/// can be off by half a step (5 %); 15 % is three times that.
pub const RATIO_TOLERANCE: f64 = 1.15;

fn pair_slit(s: &Slit, a: u32, b: u32) -> Option<f64> {
    match (s.get(a, b), s.get(b, a)) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

pub(crate) fn compare(m: &Matrix, w: &Work, inf: &Inference, s: &Slit) -> Vec<Finding> {
    let unit = m.unit.as_str();
    let v = |x: f64| format!("{} {unit}", fmt_value(x));
    let mut out = Vec::new();
    let name = |r: usize| {
        inf.levels
            .iter()
            .filter(|l| l.kind == "remote")
            .nth(r - 1)
            .map_or(String::from("?"), |l| l.name.clone())
    };

    // Pairs with both a measured level and a SLIT distance.
    let mut by_slit: BTreeMap<u64, BTreeSet<usize>> = BTreeMap::new();
    let mut rows = Vec::new();
    for ((a, b), r) in w.ranks() {
        if let Some(d) = pair_slit(s, a, b) {
            by_slit.entry(d.to_bits()).or_default().insert(r);
            rows.push((a, b, r, d));
        }
    }
    if rows.is_empty() {
        out.push(Finding {
            kind: "slit-disjoint".into(),
            text: "the SLIT names none of the measured node pairs: nothing to compare".into(),
            data: json!({"slit_nodes": s.nodes}).into(),
        });
        return out;
    }
    let slit_values: BTreeSet<u64> = rows.iter().map(|r| r.3.to_bits()).collect();
    let measured: BTreeSet<usize> = rows.iter().map(|r| r.2).collect();

    // Fewer levels: one SLIT distance covering pairs of several measured levels.
    let merged: Vec<(f64, Vec<usize>)> = by_slit
        .iter()
        .filter(|(_, rs)| rs.len() > 1)
        .map(|(d, rs)| (f64::from_bits(*d), rs.iter().copied().collect()))
        .collect();
    if slit_values.len() < measured.len() || !merged.is_empty() {
        let mut parts = Vec::new();
        for (d, rs) in &merged {
            let lv: Vec<String> = rs
                .iter()
                .map(|&r| {
                    let all: Vec<String> = rows
                        .iter()
                        .filter(|x| x.2 == r && x.3 == *d)
                        .map(|x| format!("{}-{} {}", x.0, x.1, v(best_value(w, (x.0, x.1)))))
                        .collect();
                    let shown = if all.len() > 3 {
                        format!("{}, ... {} pairs", all[..3].join(", "), all.len())
                    } else {
                        all.join(", ")
                    };
                    format!("level {} ({})", name(r), shown)
                })
                .collect();
            parts.push(format!(
                "SLIT {} covers {}",
                fmt_value(*d),
                lv.join(" and ")
            ));
        }
        out.push(Finding {
            kind: "slit-fewer-levels".into(),
            text: format!(
                "the SLIT under-describes the machine: it has {} remote distance(s) ({}) where the measurement shows {} remote levels; {}",
                slit_values.len(),
                slit_values
                    .iter()
                    .map(|b| fmt_value(f64::from_bits(*b)))
                    .collect::<Vec<_>>()
                    .join(", "),
                measured.len(),
                parts.join("; ")
            ),
            data: json!({
                "slit_values": slit_values.iter().map(|b| f64::from_bits(*b)).collect::<Vec<_>>(),
                "measured_levels": measured.len(),
                "merged": merged.iter().map(|(d, rs)| json!({"slit": d, "levels": rs.iter().map(|&r| name(r)).collect::<Vec<_>>()})).collect::<Vec<_>>(),
            }).into(),
        });
    }

    // Order: SLIT says p is nearer than q, the measurement says p is worse.
    let mut inverted = Vec::new();
    for p in &rows {
        for q in &rows {
            if p.3 < q.3 && p.2 > q.2 {
                inverted.push((p, q));
            }
        }
    }
    if !inverted.is_empty() {
        let ex: Vec<String> = inverted
            .iter()
            .take(4)
            .map(|(p, q)| {
                format!(
                    "{}-{} has SLIT {} < {}-{} SLIT {} but measures {} vs {}",
                    p.0,
                    p.1,
                    fmt_value(p.3),
                    q.0,
                    q.1,
                    fmt_value(q.3),
                    v(best_value(w, (p.0, p.1))),
                    v(best_value(w, (q.0, q.1)))
                )
            })
            .collect();
        out.push(Finding {
            kind: "slit-order".into(),
            text: format!(
                "the SLIT orders {} pair comparison(s) the other way round from the measurement: {}",
                inverted.len(),
                ex.join("; ")
            ),
            data: json!(inverted.iter().take(50).map(|(p, q)| json!({
                "slit_nearer": [p.0, p.1], "slit_nearer_distance": p.3,
                "measured_better": [q.0, q.1], "other_distance": q.3})).collect::<Vec<_>>()).into(),
        });
    }

    // Ratios: SLIT distance / local distance against measured cost / local.
    let local_slit: Vec<f64> = w.local.iter().filter_map(|c| s.get(c.from, c.to)).collect();
    if !w.local.is_empty() && !local_slit.is_empty() {
        let ls = super::levels::median(&local_slit);
        let lc = super::levels::median(&w.local.iter().map(|c| w.cost(c)).collect::<Vec<_>>());
        let mut far = Vec::new();
        for &r in &measured {
            let ds: Vec<f64> = rows.iter().filter(|x| x.2 == r).map(|x| x.3).collect();
            let cs: Vec<f64> = rows
                .iter()
                .filter(|x| x.2 == r)
                .map(|x| w.pairs.get((x.0, x.1)).map_or(f64::NAN, |e| e.0))
                .collect();
            let slit_ratio = super::levels::median(&ds) / ls;
            let meas_ratio = (super::levels::median(&cs) - lc).exp();
            let q = slit_ratio / meas_ratio;
            if !(1.0 / RATIO_TOLERANCE..=RATIO_TOLERANCE).contains(&q) {
                far.push((r, slit_ratio, meas_ratio));
            }
        }
        if !far.is_empty() {
            // The SLIT states a relative cost; for bandwidth the measured
            // cost is local/remote, so both say "how much worse".
            let bw = m.unit.higher_is_better();
            out.push(Finding {
                kind: "slit-ratio".into(),
                text: format!(
                    "the SLIT's distances are far from the measured {}: {}",
                    if bw { "bandwidth" } else { "cost" },
                    far.iter()
                        .map(|(r, sr, mr)| if bw {
                            format!(
                                "level {} SLIT distance {:.2}x local, measured bandwidth {:.2}x local (a cost of {:.2}x, the SLIT {:+.0} % off)",
                                name(*r),
                                sr,
                                1.0 / mr,
                                mr,
                                pct_worse(mr.ln(), sr.ln())
                            )
                        } else {
                            format!(
                                "level {} SLIT distance {:.2}x local, measured {:.2}x local (the SLIT {:+.0} % off)",
                                name(*r),
                                sr,
                                mr,
                                pct_worse(mr.ln(), sr.ln())
                            )
                        })
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
                data: json!(far
                    .iter()
                    .map(|(r, sr, mr)| json!({
                    "level": name(*r), "slit_ratio": sr,
                    "measured_ratio": if bw { 1.0 / mr } else { *mr },
                    "measured_cost_ratio": mr}))
                    .collect::<Vec<_>>()).into(),
            });
        }
    }
    out
}
