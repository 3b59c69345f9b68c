//! The measured matrices in hwloc's terms: memory attributes (`Latency`,
//! `Bandwidth`, each value with its initiator's cpuset) and user distance
//! matrices over the nodes measured both ways.

use super::text::{bitmap, Set};
use super::writer::Writer;
use crate::model::matrix::MatrixResult;
use std::collections::BTreeMap;
use std::fmt::Write;

/// How a matrix goes into hwloc: its memory attribute (name, flags:
/// HIGHER_FIRST 1, LOWER_FIRST 2, NEED_INITIATOR 4), its distance matrix
/// (name, kind: FROM_USER 2, MEANS_LATENCY 4, MEANS_BANDWIDTH 8) and the
/// conversion from numaprobe's unit to hwloc's.
pub(super) struct Kind {
    attr: &'static str,
    flags: u32,
    distances: &'static str,
    kind: u32,
    unit: fn(f64) -> f64,
}

/// Latency: ns, hwloc's unit too.
pub(super) const LATENCY: Kind = Kind {
    attr: "Latency",
    flags: 2 | 4,
    distances: "NumaprobeLatency",
    kind: 2 | 4,
    unit: |ns| ns,
};

/// Bandwidth: GB/s (10^9 B/s) to hwloc's MiB/s.
pub(super) const BANDWIDTH: Kind = Kind {
    attr: "Bandwidth",
    flags: 1 | 4,
    distances: "NumaprobeBandwidth",
    kind: 2 | 8,
    unit: |gbs| gbs * 1e9 / 1_048_576.0,
};

/// The measured values of `m` as rounded integers in hwloc's unit, by
/// (CPU node, memory node); not finite or not measured: absent.
fn cells(m: &MatrixResult, unit: fn(f64) -> f64) -> BTreeMap<(u32, u32), u64> {
    let mut out = BTreeMap::new();
    for (r, row) in m.matrix.iter().enumerate() {
        for (c, v) in row.iter().enumerate() {
            if let (Some(v), Some(&cpu), Some(&mem)) = (v, m.cpu_nodes.get(r), m.mem_nodes.get(c)) {
                let x = unit(*v);
                if x.is_finite() && x >= 0.0 {
                    out.insert((cpu, mem), x.round() as u64);
                }
            }
        }
    }
    out
}

pub(super) fn memattr(
    w: &mut Writer,
    m: &MatrixResult,
    k: &Kind,
    node_cpus: &BTreeMap<u32, Set>,
    notes: &mut Vec<String>,
) {
    let (name, flags) = (k.attr, k.flags);
    let values = cells(m, k.unit);
    if values.is_empty() {
        return;
    }
    let _ = writeln!(w.out, "  <memattr name=\"{name}\" flags=\"{flags}\">");
    for ((cpu, mem), v) in values {
        let Some(gp) = w.node_gp.get(&mem) else {
            notes.push(format!(
                "{name} {cpu}->{mem}: memory node {mem} is not in the topology; left out"
            ));
            continue;
        };
        let Some(init) = node_cpus.get(&cpu).filter(|s| !s.is_empty()) else {
            notes.push(format!(
                "{name} {cpu}->{mem}: CPU node {cpu} has no CPUs in the topology; left out"
            ));
            continue;
        };
        let _ = writeln!(
            w.out,
            "    <memattr_value target_obj_type=\"NUMANode\" target_obj_gp_index=\"{gp}\" value=\"{v}\" initiator_cpuset=\"{}\"/>",
            bitmap(init)
        );
    }
    w.out.push_str("  </memattr>\n");
}

/// A user distance matrix over the nodes that are both a row and a
/// column; hwloc takes only a full square of two nodes or more.
pub(super) fn distances(out: &mut String, m: &MatrixResult, k: &Kind, notes: &mut Vec<String>) {
    let (name, kind) = (k.distances, k.kind);
    let values = cells(m, k.unit);
    let both: Vec<u32> = m
        .mem_nodes
        .iter()
        .copied()
        .filter(|n| m.cpu_nodes.contains(n))
        .collect();
    if both.len() < 2 {
        notes.push(format!(
            "{name}: fewer than two nodes measured both ways; hwloc takes no distance matrix of one node, the memory attributes hold the value"
        ));
        return;
    }
    let mut row_major = Vec::with_capacity(both.len() * both.len());
    for a in &both {
        for b in &both {
            match values.get(&(*a, *b)) {
                Some(v) => row_major.push(*v),
                None => {
                    notes.push(format!(
                        "{name}: cell {a}->{b} was not measured; hwloc takes only a full matrix, so the distances are left out (the memory attributes hold every measured cell)"
                    ));
                    return;
                }
            }
        }
    }
    let idx: String = both.iter().map(|n| format!("{n} ")).collect();
    let vals: String = row_major.iter().map(|v| format!("{v} ")).collect();
    let _ = writeln!(
        out,
        "  <distances2 type=\"NUMANode\" nbobjs=\"{}\" kind=\"{kind}\" name=\"{name}\" indexing=\"os\">",
        both.len()
    );
    let _ = writeln!(out, "    <indexes length=\"{}\">{idx}</indexes>", idx.len());
    let _ = writeln!(
        out,
        "    <u64values length=\"{}\">{vals}</u64values>",
        vals.len()
    );
    out.push_str("  </distances2>\n");
}
