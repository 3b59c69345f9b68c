//! Tests of a cell's verdict in `diff`: worse, better, negligible, within
//! noise, inconclusive and why, and the parameters two matrices differ in.

use super::*;
use crate::analysis::compare::stats::SplitMix64;
use crate::model::matrix::tests::cell;
use crate::model::matrix::FailedCell;
use crate::stats::StopRule;
use crate::timer::{ClockSource, TimerInfo};

/// `n` samples around `centre`, each within +-`spread` (relative), from a seed.
fn samples(centre: f64, spread: f64, n: usize, seed: u64) -> Vec<f64> {
    let mut r = SplitMix64::new(seed);
    (0..n)
        .map(|_| centre * (1.0 + spread * ((r.next_u64() % 10_001) as f64 / 5_000.0 - 1.0)))
        .collect()
}

/// A one-row matrix of `kind` whose cells (0, j) hold the given samples.
fn matrix(kind: MatrixKind, cells: &[Vec<f64>]) -> MatrixResult {
    let timer = TimerInfo {
        source: ClockSource::MonotonicRaw,
        tsc_hz: None,
        overhead_ns: 20.0,
        resolution_ns: 1.0,
    };
    let mem: Vec<u32> = (0..cells.len() as u32).collect();
    let mut m = MatrixResult::new(kind, vec![0], mem, StopRule::default(), timer);
    for (j, s) in cells.iter().enumerate() {
        let mut c = cell(0, j as u32, stats::median(s), 1.0);
        // The samples' own spread, as a run records it.
        c.cv = crate::stats::Summary::of(s).map_or(0.0, |x| x.cv);
        c.samples = s.clone();
        m.push(c);
    }
    m
}

fn verdicts(d: &[CellDiff]) -> Vec<Verdict> {
    d.iter().map(|c| c.verdict).collect()
}

/// Documents that leave the samples out (the main job's default) give
/// the verdicts of the samples: a sketch of up to 17 samples is the
/// samples; one of more is tested on its quantiles, and says so.
#[test]
fn documents_without_samples_give_the_same_verdicts_and_say_when_approximate() {
    for n in [12, 60] {
        let a = matrix(
            MatrixKind::Latency,
            &[samples(90.0, 0.02, n, 1), samples(140.0, 0.02, n, 2)],
        );
        let b = matrix(
            MatrixKind::Latency,
            &[samples(90.0, 0.02, n, 5), samples(154.0, 0.02, n, 6)],
        );
        let (_, full) = matrices(&a, &b, &default_criteria(), None, [None, None]);
        let (mut sa, mut sb) = (a.clone(), b.clone());
        sa.leave_out_samples();
        sb.leave_out_samples();
        assert!(sa
            .cells
            .iter()
            .all(|c| c.samples.is_empty() && c.kept() == n));
        let (_, slim) = matrices(&sa, &sb, &default_criteria(), None, [None, None]);
        assert_eq!(verdicts(&slim), verdicts(&full), "n = {n}");
        assert_eq!(verdicts(&slim), [Verdict::Unchanged, Verdict::Worse]);
        assert_eq!(slim[1].a.as_ref().unwrap().samples, n);
        let said = slim[1].notes.iter().any(|x| x.contains("quantiles of its"));
        assert_eq!(said, n > sketch::POINTS, "n = {n}: {:?}", slim[1].notes);
        let pct = slim[1].change_pct.unwrap();
        assert!((pct - full[1].change_pct.unwrap()).abs() < 1.0, "{pct}");
        // One side with its samples, one without: the same again.
        let (_, mixed) = matrices(&a, &sb, &default_criteria(), None, [None, None]);
        assert_eq!(verdicts(&mixed), verdicts(&full), "n = {n}");
    }
}

#[test]
fn the_same_run_is_unchanged() {
    let s = vec![samples(90.0, 0.02, 20, 1), samples(140.0, 0.02, 20, 2)];
    let m = matrix(MatrixKind::Latency, &s);
    let (diffs, cells) = matrices(&m, &m, &default_criteria(), None, [None, None]);
    assert!(diffs.is_empty());
    assert_eq!(verdicts(&cells), [Verdict::Unchanged, Verdict::Unchanged]);
    assert_eq!(cells[0].change_pct, Some(0.0));
    // Two runs drawn from one distribution: never different. (One test
    // in twenty is significant at p < 0.05 by chance, as this seed's
    // first cell is; the 2 % threshold is what keeps it `negligible`.)
    let other = matrix(
        MatrixKind::Latency,
        &[samples(90.0, 0.02, 20, 3), samples(140.0, 0.02, 20, 4)],
    );
    let (_, cells) = matrices(&m, &other, &default_criteria(), None, [None, None]);
    assert!(cells.iter().all(|c| !c.verdict.differs()), "{cells:?}");
    assert!(
        cells.iter().all(|c| c.change_pct.unwrap().abs() < 2.0),
        "{cells:?}"
    );
}

#[test]
fn a_slower_cell_is_worse_by_the_right_amount() {
    let a = matrix(
        MatrixKind::Latency,
        &[samples(90.0, 0.02, 20, 1), samples(140.0, 0.02, 20, 2)],
    );
    let b = matrix(
        MatrixKind::Latency,
        &[samples(90.0, 0.02, 20, 5), samples(154.0, 0.02, 20, 6)],
    );
    let (_, cells) = matrices(&a, &b, &default_criteria(), None, [None, None]);
    assert_eq!(verdicts(&cells), [Verdict::Unchanged, Verdict::Worse]);
    let c = &cells[1];
    let pct = c.change_pct.unwrap();
    assert!((pct - 10.0).abs() < 2.0, "{pct}");
    assert!(c.ci_low_pct.unwrap() <= pct && pct <= c.ci_high_pct.unwrap());
    assert!(
        c.ci_low_pct.unwrap() > 2.0,
        "the interval excludes no change: {c:?}"
    );
    assert!(c.p_value.unwrap() < 1e-4);
    // The same shift in bandwidth is better.
    let a = matrix(MatrixKind::Bandwidth, &[samples(10.0, 0.02, 20, 1)]);
    let b = matrix(MatrixKind::Bandwidth, &[samples(11.0, 0.02, 20, 2)]);
    assert_eq!(
        verdicts(&matrices(&a, &b, &default_criteria(), None, [None, None]).1),
        [Verdict::Better]
    );
}

/// The direction of a change that stands out: lower is better for
/// latency, higher for bandwidth; the opposite way round is worse.
#[test]
fn a_faster_latency_cell_is_better_and_a_slower_bandwidth_cell_worse() {
    let slow = matrix(MatrixKind::Latency, &[samples(154.0, 0.02, 20, 6)]);
    let fast = matrix(MatrixKind::Latency, &[samples(140.0, 0.02, 20, 2)]);
    let (_, cells) = matrices(&slow, &fast, &default_criteria(), None, [None, None]);
    assert_eq!(verdicts(&cells), [Verdict::Better], "{cells:?}");
    assert!(cells[0].change_pct.unwrap() < -2.0, "{cells:?}");
    assert!(cells[0].reason.is_none(), "{cells:?}");
    let high = matrix(MatrixKind::Bandwidth, &[samples(11.0, 0.02, 20, 2)]);
    let low = matrix(MatrixKind::Bandwidth, &[samples(10.0, 0.02, 20, 1)]);
    let (_, cells) = matrices(&high, &low, &default_criteria(), None, [None, None]);
    assert_eq!(verdicts(&cells), [Verdict::Worse], "{cells:?}");
    assert!(cells[0].change_pct.unwrap() < -2.0, "{cells:?}");
}

#[test]
fn a_significant_but_small_change_is_negligible() {
    // 1 % shift with 0.1 % noise: clearly significant, below 2 %.
    let a = matrix(MatrixKind::Latency, &[samples(100.0, 0.001, 30, 1)]);
    let b = matrix(MatrixKind::Latency, &[samples(101.0, 0.001, 30, 2)]);
    let (_, cells) = matrices(&a, &b, &default_criteria(), None, [None, None]);
    assert_eq!(verdicts(&cells), [Verdict::Negligible], "{cells:?}");
    // With a 0.5 % threshold the same change counts.
    let mut c = default_criteria();
    c.threshold_pct = 0.5;
    assert_eq!(
        verdicts(&matrices(&a, &b, &c, None, [None, None]).1),
        [Verdict::Worse]
    );
}

#[test]
fn three_samples_a_side_cannot_decide() {
    let a = matrix(
        MatrixKind::Latency,
        &[vec![100.0, 101.0, 102.0], vec![100.0, 101.0, 102.0]],
    );
    let b = matrix(
        MatrixKind::Latency,
        &[vec![130.0, 131.0, 132.0], vec![100.5, 101.0, 101.5]],
    );
    let (_, cells) = matrices(&a, &b, &default_criteria(), None, [None, None]);
    assert_eq!(
        verdicts(&cells),
        [Verdict::Inconclusive, Verdict::Unchanged]
    );
    assert!(
        cells[0]
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("cannot reach p < 0.05")),
        "{:?}",
        cells[0]
    );
    // Below the minimum effect, the same few samples are unchanged,
    // with the same words as a note.
    assert!(cells[1].reason.is_none());
    assert!(cells[1].notes[0].contains("cannot reach p < 0.05"));
}

#[test]
fn failed_and_missing_cells_are_on_one_side_only() {
    let a = matrix(
        MatrixKind::Latency,
        &[samples(90.0, 0.02, 10, 1), samples(140.0, 0.02, 10, 2)],
    );
    let mut b = matrix(MatrixKind::Latency, &[samples(90.0, 0.02, 10, 1)]);
    b.failed.push(FailedCell {
        cpu_node: 0,
        mem_node: 1,
        cpus: vec![0],
        reason: "node 1 is full".into(),
    });
    let (_, cells) = matrices(&a, &b, &default_criteria(), None, [None, None]);
    assert_eq!(verdicts(&cells), [Verdict::Unchanged, Verdict::OnlyA]);
    assert_eq!(cells[1].notes, ["B: failed: node 1 is full"]);
    let (_, back) = matrices(&b, &a, &default_criteria(), None, [None, None]);
    assert_eq!(back[1].verdict, Verdict::OnlyB);
}

#[test]
fn different_parameters_are_named() {
    let a = matrix(MatrixKind::Latency, &[samples(90.0, 0.02, 10, 1)]);
    let mut b = a.clone();
    b.cells[0].params.size_bytes = 64 << 20;
    let (diffs, _) = matrices(&a, &b, &default_criteria(), None, [None, None]);
    assert_eq!(diffs.len(), 1, "{diffs:?}");
    assert_eq!(diffs[0].item, "latency: buffer size");
    assert_eq!(
        (diffs[0].a.as_str(), diffs[0].b.as_str()),
        ("1 MiB", "64 MiB")
    );
}

/// `samples` spread so that the cell's CV is about `cv`.
fn with_cv(m: &mut MatrixResult, j: usize, cv: f64) {
    let c = &mut m.cells[j];
    c.cv = cv;
}

#[test]
fn a_change_within_either_runs_spread_is_within_noise() {
    // +6 % with tight samples, but B's cell has a 7 % standard deviation.
    let a = matrix(MatrixKind::Latency, &[samples(100.0, 0.01, 30, 1)]);
    let mut b = matrix(MatrixKind::Latency, &[samples(106.0, 0.01, 30, 2)]);
    with_cv(&mut b, 0, 0.07);
    let (_, cells) = matrices(&a, &b, &default_criteria(), None, [None, None]);
    assert_eq!(verdicts(&cells), [Verdict::WithinNoise], "{cells:?}");
    let why = cells[0].reason.as_deref().unwrap();
    assert!(
        why.starts_with(
            "the change is within the runs' noise (twice their standard deviations in quadrature: 14.9 % of A's median)"
        ),
        "{why}"
    );
    assert!(!cells[0].verdict.differs());
    // A's spread counts the same.
    let (_, cells) = matrices(&b, &a, &default_criteria(), None, [None, None]);
    assert_eq!(verdicts(&cells), [Verdict::WithinNoise]);
    // Tight on both sides: worse.
    with_cv(&mut b, 0, 0.01);
    let (_, cells) = matrices(&a, &b, &default_criteria(), None, [None, None]);
    assert_eq!(verdicts(&cells), [Verdict::Worse]);
    assert!(cells[0].reason.is_none());
}

#[test]
fn a_flagged_cell_is_inconclusive_with_its_reason() {
    // The trial's pair: 242.4 ns, then 446.2 ns starred.
    let a = matrix(MatrixKind::Latency, &[samples(242.4, 0.02, 20, 1)]);
    let mut b = matrix(MatrixKind::Latency, &[samples(446.2, 0.02, 20, 2)]);
    b.cells[0].flagged = true;
    b.cells[0].flags = vec!["unstable: CV 12.0 %".into()];
    let (_, cells) = matrices(&a, &b, &default_criteria(), None, [None, None]);
    assert_eq!(verdicts(&cells), [Verdict::Inconclusive]);
    assert_eq!(
        cells[0].reason.as_deref(),
        Some("B not trusted: unstable: CV 12.0 %")
    );
    // The figures are still shown.
    assert!(cells[0].change_pct.unwrap() > 80.0 && cells[0].p_value.unwrap() < 0.001);
    // Flagged and unchanged: no verdict either.
    let (_, cells) = matrices(&b, &b, &default_criteria(), None, [None, None]);
    assert_eq!(verdicts(&cells), [Verdict::Inconclusive]);
    assert_eq!(
        cells[0].reason.as_deref(),
        Some("A not trusted: unstable: CV 12.0 %; B not trusted: unstable: CV 12.0 %")
    );
    // A side measured in one run only keeps its verdict, and its flag as a note.
    let empty = matrix(MatrixKind::Latency, &[]);
    let (_, cells) = matrices(&b, &empty, &default_criteria(), None, [None, None]);
    assert_eq!(verdicts(&cells), [Verdict::OnlyA]);
    assert_eq!(cells[0].notes, ["A not trusted: unstable: CV 12.0 %"]);
    let (_, cells) = matrices(&empty, &b, &default_criteria(), None, [None, None]);
    assert_eq!(verdicts(&cells), [Verdict::OnlyB]);
    assert_eq!(cells[0].notes, ["B not trusted: unstable: CV 12.0 %"]);
}

#[test]
fn different_conditions_make_a_change_inconclusive_not_an_agreement() {
    let why = "the runs' conditions differ: load average 0.40 on 2 CPU(s) in A, 8.30 on 2 in B";
    let a = matrix(
        MatrixKind::Latency,
        &[samples(90.0, 0.02, 20, 1), samples(140.0, 0.02, 20, 2)],
    );
    let b = matrix(
        MatrixKind::Latency,
        &[samples(90.0, 0.02, 20, 5), samples(154.0, 0.02, 20, 6)],
    );
    let (_, cells) = matrices(&a, &b, &default_criteria(), Some(why), [None, None]);
    assert_eq!(
        verdicts(&cells),
        [Verdict::Unchanged, Verdict::Inconclusive]
    );
    assert_eq!(cells[1].reason.as_deref(), Some(why));
    assert!(cells[0].reason.is_none());
    // Better is not claimed either.
    let (_, cells) = matrices(&b, &a, &default_criteria(), Some(why), [None, None]);
    assert_eq!(cells[1].verdict, Verdict::Inconclusive);
}

#[test]
fn a_change_exactly_at_the_threshold_is_negligible() {
    // 1 % shift with 0.1 % noise: significant. With the threshold set at
    // the change itself it is not past it; a hair below, it counts.
    let a = matrix(MatrixKind::Latency, &[samples(100.0, 0.001, 30, 1)]);
    let b = matrix(MatrixKind::Latency, &[samples(101.0, 0.001, 30, 2)]);
    let (_, cells) = matrices(&a, &b, &default_criteria(), None, [None, None]);
    let at = cells[0].change_pct.unwrap();
    let mut c = default_criteria();
    c.threshold_pct = at;
    let (_, cells) = matrices(&a, &b, &c, None, [None, None]);
    assert_eq!(verdicts(&cells), [Verdict::Negligible], "{cells:?}");
    assert!(cells[0].reason.is_none(), "{cells:?}");
    c.threshold_pct = at - 0.01;
    assert_eq!(
        verdicts(&matrices(&a, &b, &c, None, [None, None]).1),
        [Verdict::Worse]
    );
}

#[test]
fn a_change_the_test_cannot_tell_from_noise_is_unchanged_and_names_how_far_it_may_go() {
    // 3 % lower, 12 samples each spread evenly over +-10 %: not
    // significant, but the interval reaches past the 2 % threshold; the
    // note names its end farther from no change (here the lower one).
    let even: Vec<f64> = (0..12).map(|i| 90.0 + 20.0 * f64::from(i) / 11.0).collect();
    let lower: Vec<f64> = even.iter().map(|v| v * 0.97).collect();
    let a = matrix(MatrixKind::Latency, &[even]);
    let b = matrix(MatrixKind::Latency, &[lower]);
    let (_, cells) = matrices(&a, &b, &default_criteria(), None, [None, None]);
    let c = &cells[0];
    assert!(c.p_value.unwrap() >= 0.05, "{c:?}");
    assert!(c.change_pct.unwrap().abs() > 2.0, "{c:?}");
    assert_eq!(c.verdict, Verdict::Unchanged, "{c:?}");
    assert!(c.reason.is_none(), "{c:?}");
    let (lo, hi) = (c.ci_low_pct.unwrap(), c.ci_high_pct.unwrap());
    assert!(lo < 0.0 && lo.abs() > hi.abs(), "{c:?}");
    assert_eq!(
        c.notes,
        [format!("noisy: a change of {lo:+.1} % is not ruled out")]
    );
    // The same runs against a threshold wider than the interval: no note.
    let mut wide = default_criteria();
    wide.threshold_pct = lo.abs().max(hi.abs()) + 1.0;
    let (_, cells) = matrices(&a, &b, &wide, None, [None, None]);
    assert_eq!(verdicts(&cells), [Verdict::Unchanged]);
    assert!(cells[0].notes.is_empty(), "{:?}", cells[0].notes);
}

#[test]
fn a_cell_failed_in_both_runs_is_listed_with_both_reasons() {
    let failed = |why: &str| {
        let mut m = matrix(MatrixKind::Latency, &[samples(90.0, 0.02, 10, 1)]);
        m.failed.push(FailedCell {
            cpu_node: 0,
            mem_node: 1,
            cpus: vec![0],
            reason: why.into(),
        });
        m
    };
    let (a, b) = (failed("node 1 is full"), failed("CPU 0 offline"));
    let (_, cells) = matrices(&a, &b, &default_criteria(), None, [None, None]);
    assert_eq!(cells.len(), 2, "{cells:?}");
    let c = &cells[1];
    assert_eq!((c.cpu_node, c.mem_node), (0, 1));
    assert_eq!(c.verdict, Verdict::Unchanged);
    assert!(c.a.is_none() && c.b.is_none() && c.change.is_none());
    assert_eq!(
        c.notes,
        ["A: failed: node 1 is full", "B: failed: CPU 0 offline"]
    );
}

#[test]
fn a_side_without_cells_names_no_parameter() {
    let a = matrix(MatrixKind::Latency, &[samples(90.0, 0.02, 10, 1)]);
    let empty = matrix(MatrixKind::Latency, &[]);
    for (x, y) in [(&a, &empty), (&empty, &a)] {
        let (diffs, cells) = matrices(x, y, &default_criteria(), None, [None, None]);
        assert!(diffs.is_empty(), "{diffs:?}");
        assert_eq!(cells.len(), 1);
    }
}

#[test]
fn verdicts_are_reproducible() {
    let a = matrix(MatrixKind::Latency, &[samples(90.0, 0.05, 12, 1)]);
    let b = matrix(MatrixKind::Latency, &[samples(93.0, 0.05, 12, 2)]);
    let x = matrices(&a, &b, &default_criteria(), None, [None, None]);
    assert_eq!(x, matrices(&a, &b, &default_criteria(), None, [None, None]));
}

/// Many samples a cell (a document of raw samples) give the verdicts a
/// few samples from the same distributions give, with an interval that
/// holds the change and, for a change, excludes 0: the bootstrap's bounded
/// work does not move a verdict.
#[test]
fn many_samples_a_cell_give_the_verdicts_of_few() {
    for n in [60, 5000] {
        // Cell 0: the same samples in another order; cell 1: 10 % slower.
        let same = samples(90.0, 0.02, n, 1);
        let mut again = same.clone();
        again.reverse();
        let a = matrix(MatrixKind::Latency, &[same, samples(140.0, 0.02, n, 2)]);
        let b = matrix(MatrixKind::Latency, &[again, samples(154.0, 0.02, n, 6)]);
        let (_, d) = matrices(&a, &b, &default_criteria(), None, [None, None]);
        assert_eq!(
            verdicts(&d),
            [Verdict::Unchanged, Verdict::Worse],
            "n = {n}"
        );
        let (lo, hi) = (d[1].ci_low_pct.unwrap(), d[1].ci_high_pct.unwrap());
        let pct = d[1].change_pct.unwrap();
        assert!(
            2.0 < lo && lo <= pct && pct <= hi,
            "n = {n}: {lo} {pct} {hi}"
        );
        let (lo, hi) = (d[0].ci_low_pct.unwrap(), d[0].ci_high_pct.unwrap());
        assert!(lo <= 0.0 && 0.0 <= hi, "n = {n}: {lo} {hi}");
        assert_eq!(d[1].a.as_ref().unwrap().samples, n);
    }
}
