//! Comparing two c2c results (`numaprobe diff c2c.json c2c.json`): every
//! ordered CPU pair's one-way transfer latency, modified (HITM) and
//! read-shared, judged as a matrix cell is ([`super::cells::cell`]): the
//! change of its median, its bootstrap interval, the Mann–Whitney p-value
//! and a verdict. A pair's `cpu` and `mem` in the diff are its two CPUs (the
//! one that starts the round trip, the one that answers).

use super::cells::{cell, Figure, Side};
use super::trust::CellEvidence;
use super::trust::Spread;
use crate::model::c2c::{C2cResult, Figure as C2cFigure};
use crate::model::diff::{CellDiff, Criteria, Difference, Section};
use std::collections::{BTreeMap, BTreeSet};

impl From<&C2cFigure> for CellEvidence {
    fn from(f: &C2cFigure) -> Self {
        CellEvidence {
            median: f.median,
            min: f.min,
            max: f.max,
            cv: f.cv,
            kept: f.kept(),
            flagged: f.flagged,
            flags: f.flags.clone(),
            set_aside: f.set_aside,
            across_runs: None,
        }
    }
}

/// The two line states a pair is measured in, as the diff names them.
const STATES: [&str; 2] = ["c2c hitm", "c2c shared"];

/// Compare every pair of two c2c results, HITM then read-shared.
pub fn pairs(
    a: &C2cResult,
    b: &C2cResult,
    c: &Criteria,
    conditions: Option<&str>,
    spreads: [Option<&Spread>; 2],
) -> (Vec<Difference>, Vec<CellDiff>) {
    let mut diffs = Vec::new();
    if a.atomics != b.atomics {
        diffs.push(Difference::new(
            Section::Parameters,
            "c2c: memory operations",
            &a.atomics,
            &b.atomics,
        ));
    }
    if a.hitm_lines != b.hitm_lines {
        let s = |x: &Option<String>| x.clone().unwrap_or_else(|| "-".into());
        diffs.push(Difference::new(
            Section::Parameters,
            "c2c: HITM lines",
            s(&a.hitm_lines),
            s(&b.hitm_lines),
        ));
    }
    let mut cells = Vec::new();
    for (i, kind) in STATES.into_iter().enumerate() {
        let (ma, mb) = (by(a, i, spreads[0]), by(b, i, spreads[1]));
        let keys: BTreeSet<&(u32, u32)> = ma.keys().chain(mb.keys()).collect();
        cells.extend(keys.into_iter().filter_map(|&(x, y)| {
            cell(
                kind,
                &a.unit,
                x,
                y,
                ma.get(&(x, y)),
                mb.get(&(x, y)),
                c,
                conditions,
            )
        }));
    }
    (diffs, cells)
}

/// A result's pairs in one line state (0 HITM, 1 read-shared), by (a, b);
/// a failed pair is failed in both.
fn by<'a>(
    r: &'a C2cResult,
    state: usize,
    spread: Option<&Spread>,
) -> BTreeMap<(u32, u32), Side<'a>> {
    let mut out = BTreeMap::new();
    for p in &r.pairs {
        let f = if state == 0 { &p.hitm } else { &p.shared };
        if let Some(f) = f {
            out.insert(
                (p.a, p.b),
                Side::Measured(Figure {
                    median: f.median,
                    samples: &f.samples,
                    sketch: f.sketch.as_ref(),
                    evidence: CellEvidence {
                        across_runs: spread.and_then(|s| s.noise(STATES[state], p.a, p.b)),
                        ..CellEvidence::from(f)
                    },
                }),
            );
        }
    }
    for f in &r.failed {
        out.entry((f.a, f.b))
            .or_insert_with(|| Side::Failed(&f.reason));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::cells::default_criteria;
    use crate::model::c2c::C2cFailed;
    use crate::model::diff::Verdict;

    /// A measured c2c result (the fixture document), every figure made
    /// steady at `ns` (samples `ns` ± 1 %) and trusted.
    fn result(ns: f64) -> C2cResult {
        let text = include_str!("../../../../../tests/fixtures/documents/c2c.json");
        let mut r: C2cResult = serde_json::from_str(text).unwrap();
        for p in &mut r.pairs {
            for f in [&mut p.hitm, &mut p.shared].into_iter().flatten() {
                f.samples = (0..40).map(|i| ns * (0.99 + 0.0005 * i as f64)).collect();
                f.median = ns;
                f.min = ns * 0.99;
                f.max = ns * 1.01;
                f.cv = 0.005;
                f.flagged = false;
                f.flags.clear();
                f.set_aside = Default::default();
            }
        }
        r
    }

    #[test]
    fn every_pair_is_judged_in_both_line_states() {
        let (a, b) = (result(100.0), result(130.0));
        let (diffs, cells) = pairs(&a, &b, &default_criteria(), None, [None, None]);
        assert!(diffs.is_empty(), "{diffs:?}");
        assert_eq!(cells.len(), 2 * a.pairs.len());
        let hitm: Vec<&CellDiff> = cells.iter().filter(|c| c.kind == "c2c hitm").collect();
        assert_eq!(hitm.len(), a.pairs.len());
        for (c, p) in hitm.iter().zip(&a.pairs) {
            assert_eq!((c.cpu_node, c.mem_node), (p.a, p.b));
        }
        // Slower transfers are worse, as latency is.
        assert!(
            cells.iter().all(|c| c.verdict == Verdict::Worse),
            "{cells:?}"
        );
        assert!(cells
            .iter()
            .all(|c| c.change_pct.is_some_and(|p| (p - 30.0).abs() < 1.0)));
        let (_, same) = pairs(&a, &a.clone(), &default_criteria(), None, [None, None]);
        assert!(same.iter().all(|c| c.verdict == Verdict::Unchanged));
        // Different conditions leave a change inconclusive.
        let (_, c) = pairs(
            &a,
            &b,
            &default_criteria(),
            Some("loads differ"),
            [None, None],
        );
        assert!(c.iter().all(|c| c.verdict == Verdict::Inconclusive));
    }

    #[test]
    fn a_pair_measured_on_one_side_only_or_failed_says_so() {
        let a = result(100.0);
        let mut b = result(100.0);
        let gone = b.pairs.remove(0);
        b.failed.push(C2cFailed {
            a: gone.a,
            b: gone.b,
            reason: "CPU went offline".into(),
        });
        b.pairs[0].shared = None;
        let (_, cells) = pairs(&a, &b, &default_criteria(), None, [None, None]);
        let only_a: Vec<&CellDiff> = cells
            .iter()
            .filter(|c| c.verdict == Verdict::OnlyA)
            .collect();
        assert_eq!(only_a.len(), 3, "{cells:?}");
        assert!(only_a
            .iter()
            .filter(|c| (c.cpu_node, c.mem_node) == (gone.a, gone.b))
            .all(|c| c.notes.iter().any(|n| n.contains("CPU went offline"))));
        // The pair left without its read-shared figure lacks that one only.
        let kept = (b.pairs[0].a, b.pairs[0].b);
        let states: Vec<&str> = only_a
            .iter()
            .filter(|c| (c.cpu_node, c.mem_node) == kept)
            .map(|c| c.kind.as_str())
            .collect();
        assert_eq!(states, ["c2c shared"]);
    }

    #[test]
    fn a_flagged_figure_carries_no_verdict() {
        let a = result(100.0);
        let mut b = result(130.0);
        let f = b.pairs[0].hitm.as_mut().unwrap();
        f.flagged = true;
        f.flags = vec!["two modes".into()];
        let (_, cells) = pairs(&a, &b, &default_criteria(), None, [None, None]);
        let (x, y) = (b.pairs[0].a, b.pairs[0].b);
        let c = cells
            .iter()
            .find(|c| c.kind == "c2c hitm" && (c.cpu_node, c.mem_node) == (x, y))
            .unwrap();
        assert_eq!(c.verdict, Verdict::Inconclusive, "{c:?}");
        assert_eq!(c.reason.as_deref(), Some("B not trusted: two modes"));
    }

    #[test]
    fn how_the_lines_moved_is_a_parameter() {
        let a = result(100.0);
        let mut b = result(100.0);
        b.atomics = "x86 lock".into();
        b.hitm_lines = None;
        let (diffs, _) = pairs(&a, &b, &default_criteria(), None, [None, None]);
        let items: Vec<&str> = diffs.iter().map(|d| d.item.as_str()).collect();
        assert_eq!(items, ["c2c: memory operations", "c2c: HITM lines"]);
        assert_eq!(diffs[1].b, "-");
    }
}
