//! Measurement against the firmware's HMAT (as the kernel shows it under
//! `nodeN/accessK`): which nodes are a memory node's best initiators, and
//! how its read latency or bandwidth compares with the other memory nodes'.
//! The HMAT gives one figure per memory node (for its best initiators), not
//! a matrix, so the comparison is per memory node: initiators, order and
//! ratios. `infer` has no topology; the main job calls this with the
//! machine's `Topology::hmat`.

use super::levels::{GAP_SIGMAS, NOISE_FLOOR};
use super::matrix::Matrix;
use super::work::{cost_of, pct_worse};
use crate::model::infer::{fmt_value, Finding};
use crate::topology::HmatAccess;
use serde_json::json;

/// Same tolerance as for SLIT ratios (see `slit::RATIO_TOLERANCE`).
pub const RATIO_TOLERANCE: f64 = super::slit::RATIO_TOLERANCE;

/// Findings where the HMAT disagrees with the measured matrix `m`.
pub fn compare(m: &Matrix, hmat: &[HmatAccess]) -> Vec<Finding> {
    let unit = m.unit.as_str();
    let bw = m.unit.is_bandwidth();
    let to_unit = |mbps: u64| match m.unit {
        super::matrix::Unit::GBps => mbps as f64 / 1000.0,
        _ => mbps as f64,
    };
    // Per memory node: CPU-initiator class when present, else class 0.
    let mut per_node: Vec<&HmatAccess> = Vec::new();
    for h in hmat {
        let better = per_node
            .iter()
            .position(|x| x.node == h.node)
            .map(|i| (i, per_node[i].access_class < h.access_class));
        match better {
            None => per_node.push(h),
            Some((i, true)) => per_node[i] = h,
            Some((_, false)) => {}
        }
    }
    let sig = GAP_SIGMAS * NOISE_FLOOR;
    let mut out = Vec::new();
    // (node, hmat value in the matrix unit, measured best value from the
    // HMAT's initiators, measured best initiators)
    let mut rows = Vec::new();
    for h in per_node {
        let hv = if bw {
            h.read_bandwidth_mbps.map(to_unit)
        } else if m.unit == super::matrix::Unit::Ns {
            h.read_latency_ns.map(|x| x as f64)
        } else {
            None // cycles or distances cannot be compared with ns
        };
        // Measured column of this memory node.
        let col: Vec<(u32, f64)> = m
            .row_nodes
            .iter()
            .filter_map(|&r| m.get(r, h.node).map(|v| (r, v)))
            .collect();
        let Some(best) = col
            .iter()
            .map(|&(_, v)| cost_of(m, v))
            .min_by(f64::total_cmp)
        else {
            continue;
        };
        let best_rows: Vec<u32> = col
            .iter()
            .filter(|&&(_, v)| cost_of(m, v) - best <= sig)
            .map(|&(r, _)| r)
            .collect();
        let measured_rows: Vec<u32> = h
            .initiators
            .iter()
            .copied()
            .filter(|i| m.row_nodes.contains(i))
            .collect();
        if !measured_rows.is_empty() && !measured_rows.iter().all(|i| best_rows.contains(i)) {
            out.push(Finding {
                kind: "hmat-initiators".into(),
                text: format!(
                    "the HMAT names node(s) {:?} as the best initiators of memory node {}, but the measurement's best are {:?}",
                    h.initiators, h.node, best_rows
                ),
                data: json!({"node": h.node, "hmat_initiators": h.initiators, "measured_best": best_rows}).into(),
            });
        }
        let from_init = measured_rows
            .iter()
            .filter_map(|&i| m.get(i, h.node))
            .min_by(|a, b| cost_of(m, *a).total_cmp(&cost_of(m, *b)));
        if let (Some(hv), Some(mv)) = (hv, from_init) {
            if hv > 0.0 {
                rows.push((h.node, hv, mv));
            }
        }
    }
    // Order and ratios between memory nodes.
    let mut inverted = Vec::new();
    for a in &rows {
        for b in &rows {
            let (ha, hb) = (cost_of(m, a.1), cost_of(m, b.1));
            let (ma, mb) = (cost_of(m, a.2), cost_of(m, b.2));
            if ha < hb && ma - mb > sig {
                inverted.push((a, b));
            }
        }
    }
    if !inverted.is_empty() {
        out.push(Finding {
            kind: "hmat-order".into(),
            text: inverted
                .iter()
                .map(|(a, b)| {
                    format!(
                        "the HMAT says memory node {} ({} {unit}) is better than node {} ({} {unit}), the measurement says the opposite ({} vs {} {unit})",
                        a.0,
                        fmt_value(a.1),
                        b.0,
                        fmt_value(b.1),
                        fmt_value(a.2),
                        fmt_value(b.2)
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
            data: json!(inverted.iter().map(|(a, b)| json!({"hmat_better": a.0, "hmat_worse": b.0,
                "hmat": [a.1, b.1], "measured": [a.2, b.2]})).collect::<Vec<_>>()).into(),
        });
    }
    if let Some(reference) = rows
        .iter()
        .min_by(|a, b| cost_of(m, a.1).total_cmp(&cost_of(m, b.1)))
    {
        let mut far = Vec::new();
        for r in &rows {
            if r.0 == reference.0 {
                continue;
            }
            let hr = (cost_of(m, r.1) - cost_of(m, reference.1)).exp();
            let mr = (cost_of(m, r.2) - cost_of(m, reference.2)).exp();
            if !(1.0 / RATIO_TOLERANCE..=RATIO_TOLERANCE).contains(&(hr / mr)) {
                far.push((r.0, hr, mr));
            }
        }
        if !far.is_empty() {
            out.push(Finding {
                kind: "hmat-ratio".into(),
                text: format!(
                    "relative to memory node {}, the HMAT's figures are far from the measured ones: {}",
                    reference.0,
                    far.iter()
                        .map(|(n, hr, mr)| format!(
                            "node {n} HMAT {hr:.2}x, measured {mr:.2}x ({:+.0} %)",
                            pct_worse(mr.ln(), hr.ln())
                        ))
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
                data: json!(far.iter().map(|(n, hr, mr)| json!({"node": n, "hmat_ratio": hr, "measured_ratio": mr})).collect::<Vec<_>>()).into(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::matrix::{Matrix, Unit};

    fn acc(node: u32, init: &[u32], lat: u64) -> HmatAccess {
        HmatAccess {
            node,
            access_class: 0,
            initiators: init.to_vec(),
            read_latency_ns: Some(lat),
            write_latency_ns: None,
            read_bandwidth_mbps: None,
            write_bandwidth_mbps: None,
        }
    }

    /// Two CPU nodes, memory nodes 0-1 DDR and 2 (CPU-less) HBM near node 0.
    fn measured() -> Matrix {
        Matrix::new(
            Unit::Ns,
            vec![0, 1],
            vec![0, 1, 2],
            vec![
                vec![Some(100.0), Some(150.0), Some(130.0)],
                vec![Some(150.0), Some(100.0), Some(180.0)],
            ],
        )
        .unwrap()
    }

    #[test]
    fn agreeing_hmat_gives_no_finding() {
        let h = [acc(0, &[0], 100), acc(1, &[1], 100), acc(2, &[0], 125)];
        assert!(compare(&measured(), &h).is_empty());
    }

    fn bw(node: u32, init: &[u32], mbps: u64) -> HmatAccess {
        HmatAccess {
            read_latency_ns: None,
            read_bandwidth_mbps: Some(mbps),
            ..acc(node, init, 0)
        }
    }

    /// The same machine measured as bandwidth (GB/s, higher is better):
    /// DDR 100, remote 40, HBM node 2 near node 0 at 200.
    fn measured_bw() -> Matrix {
        Matrix::new(
            Unit::GBps,
            vec![0, 1],
            vec![0, 1, 2],
            vec![
                vec![Some(100.0), Some(40.0), Some(200.0)],
                vec![Some(40.0), Some(100.0), Some(60.0)],
            ],
        )
        .unwrap()
    }

    #[test]
    fn bandwidth_is_compared_the_right_way_round() {
        // Agreeing: HBM faster than DDR, node 0 its initiator.
        let h = [
            bw(0, &[0], 100_000),
            bw(1, &[1], 100_000),
            bw(2, &[0], 190_000),
        ];
        assert!(compare(&measured_bw(), &h).is_empty());
        // The HMAT claims HBM is slower than DDR: an order finding (a
        // latency reading of the numbers would call this agreement).
        let h = [
            bw(0, &[0], 100_000),
            bw(1, &[1], 100_000),
            bw(2, &[0], 50_000),
        ];
        let f = compare(&measured_bw(), &h);
        let kinds: Vec<&str> = f.iter().map(|x| x.kind.as_str()).collect();
        assert!(kinds.contains(&"hmat-order"), "{kinds:?}");
        assert!(kinds.contains(&"hmat-ratio"), "{kinds:?}");
        assert!(!kinds.contains(&"hmat-initiators"), "{kinds:?}");
        // The measured best initiator of node 2 is node 0, not node 1.
        let h = [bw(2, &[1], 190_000)];
        let kinds: Vec<String> = compare(&measured_bw(), &h)
            .into_iter()
            .map(|x| x.kind)
            .collect();
        assert!(kinds.contains(&"hmat-initiators".to_string()), "{kinds:?}");
    }

    #[test]
    fn wrong_initiator_order_and_ratio_are_findings() {
        // Claims node 1 is node 2's initiator and that HBM is faster than DDR.
        let h = [acc(0, &[0], 100), acc(1, &[1], 100), acc(2, &[1], 80)];
        let f = compare(&measured(), &h);
        let kinds: Vec<&str> = f.iter().map(|x| x.kind.as_str()).collect();
        assert!(kinds.contains(&"hmat-initiators"), "{kinds:?}");
        assert!(kinds.contains(&"hmat-order"), "{kinds:?}");
        assert!(kinds.contains(&"hmat-ratio"), "{kinds:?}");
    }
}
