//! Per-cell comparison of two latency or bandwidth matrices: every
//! (CPU node, memory node) cell of either side, its change of the median
//! with a 95 % bootstrap interval, the Mann–Whitney p-value of both runs'
//! samples and the verdict; plus the measurement parameters that differ
//! (two buffer sizes measure two different things).

use super::stats;
use super::trust::Spread;
use super::trust::{self, CellEvidence};
use crate::model::diff::{CellDiff, CellSide, Criteria, Difference, Section, Verdict};
use crate::model::matrix::Cell;
use crate::model::matrix::MatrixKind;
use crate::model::matrix::MatrixResult;
use crate::stats::sketch;
use crate::units::format_size;
use std::collections::{BTreeMap, BTreeSet};

/// The default criteria: significant at p < 0.05, practically different from 2 %.
pub fn default_criteria() -> Criteria {
    Criteria {
        alpha: 0.05,
        threshold_pct: 2.0,
        resamples: stats::RESAMPLES,
        seed: stats::SEED,
    }
}

/// A matrix kind as the comparison names it (a figure's `kind`).
pub(super) fn kind_name(k: MatrixKind) -> &'static str {
    match k {
        MatrixKind::Latency => "latency",
        MatrixKind::Bandwidth => "bandwidth",
    }
}

/// Compare the cells of two matrices of the same kind.
/// `conditions` is why the two runs' conditions differ
/// ([`trust::conditions_differ`]), when they do: a change beyond the noise
/// is then inconclusive. `spreads` are the two sides' noises across runs,
/// where a side pools several ([`super::pool`]).
pub fn matrices(
    a: &MatrixResult,
    b: &MatrixResult,
    c: &Criteria,
    conditions: Option<&str>,
    spreads: [Option<&Spread>; 2],
) -> (Vec<Difference>, Vec<CellDiff>) {
    let kind = kind_name(a.kind);
    let mut diffs = parameters(kind, a, b);
    if a.unit != b.unit {
        diffs.push(Difference::new(
            Section::Parameters,
            format!("{kind}: unit"),
            &a.unit,
            &b.unit,
        ));
    }
    fn by<'m>(
        m: &'m MatrixResult,
        kind: &str,
        spread: Option<&Spread>,
    ) -> BTreeMap<(u32, u32), Side<'m>> {
        let mut out: BTreeMap<(u32, u32), Side> = BTreeMap::new();
        for cell in &m.cells {
            let mut evidence = CellEvidence::from(cell);
            evidence.across_runs = spread.and_then(|s| s.noise(kind, cell.cpu_node, cell.mem_node));
            out.insert(
                (cell.cpu_node, cell.mem_node),
                Side::Measured(Figure {
                    median: cell.median,
                    samples: &cell.samples,
                    sketch: cell.sketch.as_ref(),
                    evidence,
                }),
            );
        }
        for f in &m.failed {
            out.entry((f.cpu_node, f.mem_node))
                .or_insert_with(|| Side::Failed(&f.reason));
        }
        out
    }
    let (ma, mb) = (by(a, kind, spreads[0]), by(b, kind, spreads[1]));
    let keys: BTreeSet<&(u32, u32)> = ma.keys().chain(mb.keys()).collect();
    let cells = keys
        .into_iter()
        .filter_map(|&(cpu, mem)| {
            cell(
                kind,
                &a.unit,
                cpu,
                mem,
                ma.get(&(cpu, mem)),
                mb.get(&(cpu, mem)),
                c,
                conditions,
            )
        })
        .collect();
    (diffs, cells)
}

/// One side of a cell: measured, or failed with its reason.
pub(super) enum Side<'a> {
    Measured(Figure<'a>),
    Failed(&'a str),
}

/// A measured figure as the comparison reads it: a matrix cell's, or a
/// c2c pair's.
pub(super) struct Figure<'a> {
    pub median: f64,
    pub samples: &'a [f64],
    /// What stands for the samples in a document that leaves them out.
    pub sketch: Option<&'a crate::stats::sketch::Sketch>,
    pub evidence: CellEvidence,
}

#[allow(clippy::too_many_arguments)]
pub(super) fn cell<'a>(
    kind: &str,
    unit: &str,
    cpu_node: u32,
    mem_node: u32,
    a: Option<&'a Side<'a>>,
    b: Option<&'a Side<'a>>,
    c: &Criteria,
    conditions: Option<&str>,
) -> Option<CellDiff> {
    let mut notes = Vec::new();
    let mut distrust = Vec::new();
    let mut measured = |s: Option<&'a Side<'a>>, name: &str| -> Option<&'a Figure<'a>> {
        match s {
            Some(Side::Measured(cell)) => {
                if let Some(why) = trust::cell_trust(&cell.evidence) {
                    distrust.push(format!("{name} not trusted: {why}"));
                }
                Some(cell)
            }
            Some(Side::Failed(reason)) => {
                notes.push(format!("{name}: failed: {reason}"));
                None
            }
            None => None,
        }
    };
    let (ca, cb) = (measured(a, "A"), measured(b, "B"));
    let side = |x: &Figure| CellSide {
        median: x.median,
        min: x.evidence.min,
        max: x.evidence.max,
        samples: x.evidence.kept,
    };
    let mut d = CellDiff {
        kind: kind.into(),
        cpu_node,
        mem_node,
        unit: unit.into(),
        a: ca.map(side),
        b: cb.map(side),
        change: None,
        change_pct: None,
        ci_low_pct: None,
        ci_high_pct: None,
        p_value: None,
        verdict: Verdict::Unchanged,
        reason: None,
        notes,
    };
    let (x, y) = match (ca, cb) {
        (Some(x), Some(y)) => (x, y),
        (Some(_), None) => {
            d.verdict = Verdict::OnlyA;
            d.notes.extend(distrust);
            return Some(d);
        }
        (None, Some(_)) => {
            d.verdict = Verdict::OnlyB;
            d.notes.extend(distrust);
            return Some(d);
        }
        // Failed on both sides: nothing measured to compare; the notes say why.
        (None, None) => {
            d.verdict = Verdict::Unchanged;
            return Some(d).filter(|d| !d.notes.is_empty());
        }
    };
    // A document may leave the samples out: the test runs on its sketch
    // (the samples themselves up to a sketch's size, else its quantiles),
    // and on an older summary-only one on the median; a note says when it
    // stands for more samples than it holds.
    let (sa, approx_a) = sketch::test_values(x.samples, x.sketch, x.median);
    let (sb, approx_b) = sketch::test_values(y.samples, y.sketch, y.median);
    for (name, approx, cell, vals) in [("A", approx_a, x, &sa), ("B", approx_b, y, &sb)] {
        if approx {
            d.notes.push(format!(
                "{name}: tested on {} quantiles of its {} samples (its document leaves the samples out; `run --keep-samples` keeps them)",
                vals.len(),
                cell.evidence.kept
            ));
        }
    }
    let (ma, mb) = (stats::median(&sa), stats::median(&sb));
    let change = mb - ma;
    let pct = |v: f64| {
        if ma != 0.0 {
            Some(v / ma * 100.0)
        } else {
            None
        }
    };
    d.change = Some(change);
    d.change_pct = pct(change);
    if let Some((lo, hi)) = stats::bootstrap_median_diff(
        &sa,
        &sb,
        c.resamples,
        stats::cell_seed(c.seed, cpu_node, mem_node, kind),
    ) {
        d.ci_low_pct = pct(lo);
        d.ci_high_pct = pct(hi);
    }
    let test = stats::mann_whitney(&sa, &sb);
    d.p_value = test.map(|t| t.p);
    let noises = [x.evidence.noise(), y.evidence.noise()];
    let big = d.change_pct.is_some_and(|p| p.abs() > c.threshold_pct);
    let (verdict, reason) = match test {
        None => (Verdict::Inconclusive, Some("no samples to test".into())),
        Some(t) if t.p_min >= c.alpha => {
            let few = format!(
                "{} and {} samples cannot reach p < {} (at best p = {:.3})",
                sa.len(),
                sb.len(),
                c.alpha,
                t.p_min
            );
            if big {
                (Verdict::Inconclusive, Some(few))
            } else {
                d.notes.push(few);
                (Verdict::Unchanged, None)
            }
        }
        Some(t) if t.p >= c.alpha => {
            // Not significant is not the same as equal: say when the noise
            // leaves room for a change the threshold would count.
            if let (Some(lo), Some(hi)) = (d.ci_low_pct, d.ci_high_pct) {
                let far = if lo.abs() > hi.abs() { lo } else { hi };
                if far.abs() >= c.threshold_pct {
                    d.notes
                        .push(format!("noisy: a change of {far:+.1} % is not ruled out"));
                }
            }
            (Verdict::Unchanged, None)
        }
        Some(_) if !big => (Verdict::Negligible, None),
        Some(_) if !trust::stands_out(change, ma, c.threshold_pct, &noises) => (
            Verdict::WithinNoise,
            Some(format!(
                "the change is within the runs' noise (twice {} in quadrature: {:.1} % of A's median)",
                if x.evidence.across_runs.is_some() || y.evidence.across_runs.is_some() {
                    "the sides' noises, across runs where a side has several,"
                } else {
                    "their standard deviations"
                },
                trust::noise_pct(ma, &noises)
            )),
        ),
        Some(_) => {
            // Only bandwidth is better higher: latency and c2c times lower.
            let lower_is_better = kind != "bandwidth";
            if (change < 0.0) == lower_is_better {
                (Verdict::Better, None)
            } else {
                (Verdict::Worse, None)
            }
        }
    };
    (d.verdict, d.reason) = (verdict, reason);
    // A figure that does not hold carries no verdict at all; runs measured
    // under different conditions may differ for the load's sake, so a
    // change between them is not the machine's.
    if !distrust.is_empty() {
        d.verdict = Verdict::Inconclusive;
        d.reason = Some(distrust.join("; "));
    } else if let Some(why) = conditions.filter(|_| d.verdict.differs()) {
        d.verdict = Verdict::Inconclusive;
        d.reason = Some(why.to_string());
    }
    Some(d)
}

/// Measurement parameters whose values differ between the two matrices:
/// each parameter's set of values over all cells, side by side, its item
/// led by the matrix's kind (`bandwidth: threads`).
pub(super) fn parameters(kind: &str, a: &MatrixResult, b: &MatrixResult) -> Vec<Difference> {
    differing(a, b)
        .into_iter()
        .map(|(name, x, y)| Difference::new(Section::Parameters, format!("{kind}: {name}"), x, y))
        .collect()
}

/// The buffer-size parameter's name, as the notes and differences say it.
pub(super) const BUFFER_SIZE: &str = "buffer size";

/// Each parameter whose set of values differs: its name, A's values, B's.
/// Empty when a side has no cells (it says nothing about its parameters).
pub(super) fn differing(a: &MatrixResult, b: &MatrixResult) -> Vec<(&'static str, String, String)> {
    type Getter = fn(&Cell) -> String;
    let fields: [(&str, Getter); 7] = [
        (BUFFER_SIZE, |c| format_size(c.params.size_bytes)),
        ("stride", |c| {
            c.params.stride_bytes.map_or("-".into(), format_size)
        }),
        ("pattern", |c| {
            c.params.pattern.clone().unwrap_or_else(|| "-".into())
        }),
        ("TLB window (pages)", |c| {
            c.params.window_pages.map_or("-".into(), |w| w.to_string())
        }),
        ("pages", |c| {
            serde_json::to_value(c.params.pages)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default()
        }),
        ("threads", |c| c.params.threads.to_string()),
        ("op", |c| c.params.op.clone().unwrap_or_else(|| "-".into())),
    ];
    let mut out = Vec::new();
    if a.cells.is_empty() || b.cells.is_empty() {
        return out;
    }
    for (name, get) in fields {
        let set = |m: &MatrixResult| {
            let s: BTreeSet<String> = m.cells.iter().map(get).collect();
            s.into_iter().collect::<Vec<_>>().join(", ")
        };
        let (x, y) = (set(a), set(b));
        if x != y {
            out.push((name, x, y));
        }
    }
    out
}

#[cfg(test)]
#[path = "cells_tests.rs"]
mod tests;
