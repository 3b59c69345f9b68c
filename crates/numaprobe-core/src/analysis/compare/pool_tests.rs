//! Tests of pooling several runs a side: the noise measured across runs,
//! the verdicts it gives where one run a side gives one from drift, and
//! the runs a side refuses to pool.

use super::*;
use crate::analysis::compare::cells::default_criteria;
use crate::analysis::compare::stats::SplitMix64;
use crate::analysis::compare::trust::t_975;
use crate::model::diff::{Origin, Verdict};
use crate::model::matrix::tests::cell;
use crate::model::matrix::{FailedCell, MatrixKind};
use crate::stats::StopRule;
use crate::timer::{ClockSource, TimerInfo};

/// `n` samples within +-0.5 % of `centre`: one run's tight samples.
fn tight(centre: f64, n: usize, seed: u64) -> Vec<f64> {
    let mut r = SplitMix64::new(seed);
    (0..n)
        .map(|_| centre * (1.0 + 0.005 * ((r.next_u64() % 10_001) as f64 / 5_000.0 - 1.0)))
        .collect()
}

/// A latency matrix with one cell (0, 0) of the given samples.
fn matrix(samples: Vec<f64>) -> MatrixResult {
    let timer = TimerInfo {
        source: ClockSource::MonotonicRaw,
        tsc_hz: None,
        overhead_ns: 20.0,
        resolution_ns: 1.0,
    };
    let mut m = MatrixResult::new(
        MatrixKind::Latency,
        vec![0],
        vec![0],
        StopRule::default(),
        timer,
    );
    let s = Summary::of(&samples).unwrap();
    let mut c = cell(0, 0, s.median, 1.0);
    (c.cv, c.min, c.max) = (s.cv, s.min, s.max);
    c.samples = samples;
    m.push(c);
    m
}

/// One run: a latency document whose one cell reads about `median`.
fn run(path: &str, median: f64, seed: u64) -> Side {
    Side {
        latency: Some(matrix(tight(median, 40, seed))),
        ..Side::of(Origin {
            path: path.into(),
            kind: "latency".into(),
            documents: vec![path.into()],
            hostname: Some("n1".into()),
            kernel: None,
            start: None,
            complete: true,
            runs: Vec::new(),
        })
    }
}

fn side(prefix: &str, medians: &[f64], seed: u64) -> Side {
    let runs = medians
        .iter()
        .enumerate()
        .map(|(i, &m)| run(&format!("{prefix}{}", i + 1), m, seed + i as u64))
        .collect();
    pool(runs).unwrap()
}

fn verdict(a: &Side, b: &Side) -> (Verdict, Option<String>) {
    let r = super::super::diff(a, b, &default_criteria()).unwrap();
    assert_eq!(r.cells.len(), 1, "{:#?}", r.cells);
    (r.cells[0].verdict, r.cells[0].reason.clone())
}

#[test]
fn students_t_widens_the_noise_of_few_runs() {
    assert_eq!(t_975(0), f64::INFINITY);
    assert_eq!(t_975(1), 12.706);
    assert_eq!(t_975(2), 4.303);
    assert_eq!(t_975(30), 2.042);
    assert_eq!(t_975(31), 1.96);
    assert_eq!(level_noise(&[100.0], &[1.0]), None);
    assert_eq!(level_noise(&[], &[]), None);
    // Medians 100, 110, 120: standard deviation 10, standard error
    // 10 / sqrt 3; t for 2 degrees of freedom over NOISE_SIGMAS.
    let n = level_noise(&[100.0, 110.0, 120.0], &[1.0, 1.0, 1.0]).unwrap();
    assert!((n - 4.303 / 2.0 * 10.0 / 3f64.sqrt()).abs() < 1e-9, "{n}");
    // Runs that happen to agree know their level no better than their
    // own samples say: 3 / sqrt 3.
    let n = level_noise(&[100.0, 100.0, 100.0], &[3.0, 3.0, 3.0]).unwrap();
    assert!((n - 3.0 / 3f64.sqrt()).abs() < 1e-9, "{n}");
    // The mean of the runs' noises, not their sum: 1, 2, 3 -> 2 / sqrt 3.
    let n = level_noise(&[100.0, 100.0, 100.0], &[1.0, 2.0, 3.0]).unwrap();
    assert!((n - 2.0 / 3f64.sqrt()).abs() < 1e-9, "{n}");
}

/// A host whose latency drifts by 10-20 % between runs, each run's samples
/// tight: one run a side calls the drift a change; three a side see it.
#[test]
fn drift_between_runs_is_noise_once_each_side_has_several() {
    let (a1, b1) = (run("a1", 100.0, 1), run("b1", 115.0, 2));
    assert_eq!(verdict(&a1, &b1).0, Verdict::Worse);
    let a = side("a", &[100.0, 115.0, 92.0], 10);
    let b = side("b", &[108.0, 96.0, 118.0], 20);
    let (v, why) = verdict(&a, &b);
    assert!(
        matches!(v, Verdict::WithinNoise | Verdict::Unchanged),
        "{v:?} {why:?}"
    );
    if v == Verdict::WithinNoise {
        assert!(why.unwrap().contains("across runs"));
    }
    // Two runs a side whose pooled samples spread little (A: 100 and 106,
    // B: 115 and 117): the pool's samples alone would call +13 % worse;
    // two runs know their spread too poorly (t = 12.7) for a verdict.
    let (v, why) = verdict(
        &side("a", &[100.0, 106.0], 40),
        &side("b", &[115.0, 117.0], 50),
    );
    assert_eq!(v, Verdict::WithinNoise, "{why:?}");
    assert!(why.unwrap().contains("across runs"));
}

/// A change larger than the runs' drift still counts, either way.
#[test]
fn a_change_beyond_the_runs_spread_still_counts() {
    let a = side("a", &[100.0, 102.0, 98.0], 30);
    let b = side("b", &[130.0, 133.0, 128.0], 40);
    assert_eq!(verdict(&a, &b).0, Verdict::Worse);
    assert_eq!(verdict(&b, &a).0, Verdict::Better);
    // One run against three: the one run's own spread is its noise.
    let one = run("x", 100.0, 50);
    assert_eq!(verdict(&one, &b).0, Verdict::Worse);
}

#[test]
fn the_pool_holds_every_sample_and_names_its_runs() {
    let p = side("a", &[100.0, 110.0], 60);
    let c = &p.latency.as_ref().unwrap().cells[0];
    assert_eq!(c.samples.len(), 80);
    assert!(c.sketch.is_none());
    assert!(c.min < 100.0 && c.max > 110.0, "{} {}", c.min, c.max);
    assert!(c.median > 100.5 && c.median < 109.5, "{}", c.median);
    let sp = p.spread.as_ref().unwrap();
    assert_eq!(sp.runs, 2);
    let n = sp.noise("latency", 0, 0).unwrap();
    assert!(n > 12.706 / 2.0 * 5.0, "{n}");
    assert_eq!(sp.noise("latency", 0, 1), None);
    assert_eq!(sp.noise("bandwidth", 0, 0), None);
    assert_eq!(
        sp.describe(),
        "2 runs: a figure's noise is the standard error of its runs' medians, widened by Student's t (12.71 for 1 degree of freedom), and never below its runs' own spread over the square root of their count"
    );
    assert!(side("c", &[1.0, 2.0, 3.0], 1)
        .spread
        .unwrap()
        .describe()
        .starts_with("3 runs: a figure's noise is the standard error of its runs' medians, widened by Student's t (4.30 for 2 degrees of freedom)"));
    assert_eq!(p.origin.path, "a1 + a2");
    assert_eq!(p.origin.runs, ["a1", "a2"]);
    let r = super::super::diff(&p, &side("b", &[100.0, 101.0], 70), &default_criteria()).unwrap();
    assert!(
        r.notes.iter().any(|n| n.starts_with("A pools 2 runs")),
        "{:?}",
        r.notes
    );
    assert!(
        r.notes.iter().any(|n| n.starts_with("B pools 2 runs")),
        "{:?}",
        r.notes
    );
    // One run is returned as it was read.
    let one = run("x", 100.0, 1);
    let back = pool(vec![one.clone()]).unwrap();
    assert_eq!(back.origin, one.origin);
    assert!(back.spread.is_none());
    assert!(pool(vec![]).is_err());
}

#[test]
fn a_flag_or_a_set_aside_sample_in_any_run_stays_in_the_pool() {
    let mut r2 = run("a2", 101.0, 2);
    {
        let c = &mut r2.latency.as_mut().unwrap().cells[0];
        c.flagged = true;
        c.flags = vec!["placement 80 %".into()];
        c.set_aside.preempted = 3;
        c.set_aside.shortened = 4;
    }
    let mut r1 = run("a1", 100.0, 1);
    r1.latency.as_mut().unwrap().cells[0].set_aside.off_cpu = 2;
    // Made of set-aside samples in one run: so is the pool, in part.
    let mut r3 = run("a3", 100.0, 3);
    r3.latency.as_mut().unwrap().cells[0].set_aside.used_anyway = true;
    let any = pool(vec![run("a0", 100.0, 1), r3]).unwrap();
    assert!(any.latency.as_ref().unwrap().cells[0].set_aside.used_anyway);
    let p = pool(vec![r1, r2]).unwrap();
    let c = &p.latency.as_ref().unwrap().cells[0];
    assert!(c.flagged);
    assert_eq!(c.flags, ["run 2: placement 80 %"]);
    assert_eq!(
        (
            c.set_aside.preempted,
            c.set_aside.off_cpu,
            c.set_aside.shortened
        ),
        (3, 2, 4)
    );
    // Flagged without a reason: still flagged in the pool.
    let mut bare = run("a3", 100.0, 3);
    bare.latency.as_mut().unwrap().cells[0].flagged = true;
    let p2 = pool(vec![run("a1", 100.0, 1), bare]).unwrap();
    assert_eq!(
        p2.latency.as_ref().unwrap().cells[0].flags,
        ["run 2: flagged (no reason given)"]
    );
    // A flagged pool gives no verdict.
    let b = side("b", &[150.0, 151.0], 9);
    let (v, why) = verdict(&p, &b);
    assert_eq!(v, Verdict::Inconclusive);
    assert!(why.unwrap().contains("run 2: placement 80 %"));
}

#[test]
fn a_cell_failed_in_one_run_is_pooled_from_the_others() {
    let mut r1 = run("a1", 100.0, 1);
    let mut r2 = run("a2", 104.0, 2);
    let failed = |mem| FailedCell {
        cpu_node: 0,
        mem_node: mem,
        reason: "no memory".into(),
        cpus: vec![0],
    };
    // (0, 1) failed in run 1 and measured in run 2; (0, 2) failed in both.
    r1.latency.as_mut().unwrap().failed = vec![failed(1), failed(2)];
    {
        let m = r2.latency.as_mut().unwrap();
        let mut c = m.cells[0].clone();
        c.mem_node = 1;
        m.cells.push(c);
        m.failed = vec![failed(2)];
    }
    let p = pool(vec![r1, r2]).unwrap();
    let m = p.latency.as_ref().unwrap();
    let cells: Vec<u32> = m.cells.iter().map(|c| c.mem_node).collect();
    assert_eq!(cells, [0, 1]);
    let failed: Vec<u32> = m.failed.iter().map(|f| f.mem_node).collect();
    assert_eq!(failed, [2]);
    // Measured in one run only: no noise across runs for it.
    let sp = p.spread.unwrap();
    assert!(sp.noise("latency", 0, 0).is_some());
    assert_eq!(sp.noise("latency", 0, 1), None);
    assert_eq!(m.cells[1].samples.len(), 40);
}

#[test]
fn runs_that_measured_different_things_are_refused_naming_the_run() {
    let err = |runs: Vec<Side>| pool(runs).unwrap_err().to_string();
    let mut other = run("a2", 100.0, 2);
    other.origin.kind = "report".into();
    let e = err(vec![run("a1", 100.0, 1), other]);
    assert!(
        e.starts_with("a2: a report among runs that are latency"),
        "{e}"
    );
    let mut none = run("a2", 100.0, 2);
    none.latency = None;
    let e = err(vec![run("a1", 100.0, 1), none]);
    assert!(
        e.starts_with("a2: has no a latency matrix where a1 has one"),
        "{e}"
    );
    let mut some = run("a2", 100.0, 2);
    let mut first = run("a1", 100.0, 1);
    first.latency = None;
    some.bandwidth = None;
    let e = err(vec![first, some]);
    assert!(
        e.starts_with("a2: has a latency matrix where a1 has none"),
        "{e}"
    );
    let mut bigger = run("a2", 100.0, 2);
    bigger.latency.as_mut().unwrap().cells[0].params.size_bytes *= 2;
    let e = err(vec![run("a1", 100.0, 1), bigger]);
    assert!(
        e.starts_with("a2: its latency matrix was measured with buffer size"),
        "{e}"
    );
    let mut unit = run("a2", 100.0, 2);
    unit.latency.as_mut().unwrap().unit = "cycles".into();
    let e = err(vec![run("a1", 100.0, 1), unit]);
    assert!(e.starts_with("a2: its latency matrix is in cycles"), "{e}");
}

#[test]
fn the_side_is_as_loud_as_its_loudest_run() {
    use crate::system_check::SystemCheck;
    let check = |load: f64| SystemCheck {
        allowed_cpus: 2,
        load_1m: Some(load),
        other_running: Some(0),
        steal_percent: Some(0.0),
        interval_s: 0.2,
        governors: Vec::new(),
        thp: None,
        warnings: Vec::new(),
    };
    let mut runs = vec![
        run("a1", 100.0, 1),
        run("a2", 100.0, 2),
        run("a3", 100.0, 3),
    ];
    runs[0].system = Some(check(0.2));
    runs[1].system = Some(check(1.5));
    runs[2].system = Some(check(0.4));
    let p = pool(runs.clone()).unwrap();
    assert_eq!(p.system.unwrap().load_1m, Some(1.5));
    // Per allowed CPU: 1.5 on 8 CPUs is quieter than 0.6 on one.
    let mut wide = runs.clone();
    wide[1].system.as_mut().unwrap().allowed_cpus = 8;
    wide[2].system = Some(SystemCheck {
        allowed_cpus: 1,
        ..check(0.6)
    });
    let p = pool(wide).unwrap();
    assert_eq!(p.system.unwrap().load_1m, Some(0.6));
    runs[2].system.as_mut().unwrap().warnings = vec!["steal 9 %".into()];
    let p = pool(runs.clone()).unwrap();
    assert_eq!(p.system.unwrap().load_1m, Some(0.4));
    // A warning outweighs any load, even a warned run at load 0; between
    // two warned runs, the higher load.
    runs[2].system.as_mut().unwrap().load_1m = Some(0.0);
    let p = pool(runs.clone()).unwrap();
    assert_eq!(p.system.unwrap().load_1m, Some(0.0));
    runs[0].system.as_mut().unwrap().warnings = vec!["load".into()];
    runs[0].system.as_mut().unwrap().load_1m = Some(0.8);
    let p = pool(runs).unwrap();
    assert_eq!(p.system.unwrap().load_1m, Some(0.8));
}

/// The fixture's c2c result, every figure made tight around `ns`.
fn c2c_run(path: &str, ns: f64, seed: u64) -> Side {
    let text = include_str!("../../../../../tests/fixtures/documents/c2c.json");
    let mut r: C2cResult = serde_json::from_str(text).unwrap();
    for (i, p) in r.pairs.iter_mut().enumerate() {
        for f in [&mut p.hitm, &mut p.shared].into_iter().flatten() {
            f.samples = tight(ns, 20, seed * 100 + i as u64);
            let s = Summary::of(&f.samples).unwrap();
            (f.median, f.min, f.max, f.cv) = (s.median, s.min, s.max, s.cv);
            f.sketch = None;
            f.flagged = false;
            f.flags.clear();
            f.set_aside = Default::default();
        }
    }
    let mut side = run(path, 100.0, seed);
    side.origin.kind = "c2c".into();
    side.latency = None;
    side.c2c = Some(r);
    side
}

#[test]
fn c2c_pairs_are_pooled_state_by_state() {
    let runs = vec![c2c_run("a1", 200.0, 1), c2c_run("a2", 230.0, 2)];
    let pairs = runs[0].c2c.as_ref().unwrap().pairs.len();
    assert!(pairs > 0);
    let p = pool(runs.clone()).unwrap();
    let c = p.c2c.as_ref().unwrap();
    assert_eq!(c.pairs.len(), pairs);
    let sp = p.spread.as_ref().unwrap();
    for q in &c.pairs {
        for (f, kind) in [(&q.hitm, "c2c hitm"), (&q.shared, "c2c shared")] {
            if let Some(f) = f {
                assert_eq!(f.samples.len(), 40);
                assert!(f.min < 200.0 && f.max > 230.0);
                assert!(sp.noise(kind, q.a, q.b).is_some(), "{kind} {} {}", q.a, q.b);
            } else {
                assert_eq!(sp.noise(kind, q.a, q.b), None);
            }
        }
    }
    // One run a side calls 15 % between two placements worse; two a side
    // that each saw both do not.
    let one = super::super::diff(&runs[0], &runs[1], &default_criteria()).unwrap();
    assert!(one.cells.iter().any(|c| c.verdict == Verdict::Worse));
    let b = pool(vec![c2c_run("b1", 232.0, 3), c2c_run("b2", 198.0, 4)]).unwrap();
    let both = super::super::diff(&p, &b, &default_criteria()).unwrap();
    assert!(!both.cells.is_empty());
    assert!(
        both.cells.iter().all(|c| !c.verdict.differs()),
        "{:#?}",
        both.cells
    );
    // Two runs a side that spread little when pooled (200 and 206 ns
    // against 230 and 234): noise across runs, no verdict.
    let two = |p: &str, x: f64, y: f64| {
        pool(vec![
            c2c_run(&format!("{p}1"), x, 5),
            c2c_run(&format!("{p}2"), y, 6),
        ])
        .unwrap()
    };
    let r = super::super::diff(
        &two("a", 200.0, 206.0),
        &two("b", 230.0, 234.0),
        &default_criteria(),
    )
    .unwrap();
    assert!(!r.cells.is_empty());
    for c in &r.cells {
        assert_eq!(c.verdict, Verdict::WithinNoise, "{c:#?}");
    }
    // Runs of other memory operations measured something else.
    let mut other = c2c_run("a2", 230.0, 2);
    other.c2c.as_mut().unwrap().atomics = "other".into();
    let e = pool(vec![c2c_run("a1", 200.0, 1), other])
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("a2: its c2c result was measured with other memory operations"),
        "{e}"
    );
}

/// A run whose document left its samples out is pooled from its sketch's
/// quantiles, and the pool says how many samples they stand for.
#[test]
fn a_sketch_pools_as_its_quantiles_counted_as_every_sample() {
    let mut r1 = run("a1", 100.0, 1);
    r1.latency.as_mut().unwrap().cells[0].leave_out_samples();
    let p = pool(vec![r1, run("a2", 104.0, 2)]).unwrap();
    let c = &p.latency.as_ref().unwrap().cells[0];
    assert!(c.samples.is_empty());
    let s = c.sketch.as_ref().unwrap();
    assert_eq!((s.n, s.quantiles.len()), (80, 17 + 40));
    assert!(s.quantiles.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(c.kept(), 80);
    let r = super::super::diff(&p, &side("b", &[100.0, 101.0], 3), &default_criteria()).unwrap();
    assert!(
        r.cells[0]
            .notes
            .iter()
            .any(|n| n.starts_with("A: tested on 57 quantiles of its 80 samples")),
        "{:?}",
        r.cells[0].notes
    );
    // Every run with its samples: the pool keeps samples, no sketch.
    let whole = side("a", &[100.0, 104.0], 1);
    let c = &whole.latency.as_ref().unwrap().cells[0];
    assert_eq!((c.samples.len(), c.sketch.is_none()), (80, true));
}

/// Trust is each run's: two tight runs 60 % apart pool into samples that
/// spread past the instability lines, which is the pool's noise (its
/// verdict comes from that), not a flag; a run's own instability is.
#[test]
fn the_spread_between_trusted_runs_is_noise_not_a_flag() {
    let p = side("a", &[100.0, 160.0], 80);
    let c = &p.latency.as_ref().unwrap().cells[0];
    assert!(!c.flagged);
    assert!(c.max / c.min > 1.5, "{} {}", c.min, c.max);
    let mut e = CellEvidence::from(c);
    assert!(
        trust::cell_trust(&e).is_some(),
        "one run this wide is not trusted"
    );
    e.across_runs = p.spread.as_ref().unwrap().noise("latency", 0, 0);
    assert_eq!(trust::cell_trust(&e), None);
    // A run whose own samples spread past the lines, though its document
    // did not flag it, is named in the pool.
    let mut wide = run("a2", 100.0, 2);
    {
        let c = &mut wide.latency.as_mut().unwrap().cells[0];
        c.cv = 0.2;
        c.max = 200.0;
    }
    let p = pool(vec![run("a1", 100.0, 1), wide]).unwrap();
    let c = &p.latency.as_ref().unwrap().cells[0];
    assert!(c.flagged);
    assert_eq!(c.flags.len(), 1);
    assert!(
        c.flags[0].starts_with("run 2: unstable: CV 20.0 %"),
        "{:?}",
        c.flags
    );
}

/// `check --expect` of several saved runs: a cell is judged against the
/// spread between them, and the note says so.
#[test]
fn a_check_against_pooled_runs_judges_against_their_spread() {
    use crate::analysis::compare::check::{check, Options, This};
    use crate::topology::testing::{build, CpuSpec};
    let t = build("/", &[CpuSpec::new(0, 0, 0, 0)], &[], None);
    let opts = Options {
        band_pct: 5.0,
        ..Options::default()
    };
    let today = run("today", 152.0, 9);
    let judge = |expect: &Side| {
        let this = This {
            topology: &t,
            kernel: None,
            measured: Some(&today),
        };
        check(expect, &this, &opts).unwrap()
    };
    // One saved run at 134.8 ns: +12.8 % past the band and its spread.
    let one = judge(&run("r3", 134.8, 3));
    assert!(!one.matches);
    assert!(!one.notes.iter().any(|n| n.contains("pools")));
    // The three runs it was one of: within the noise between them.
    let three = side("r", &[154.4, 140.3, 134.8], 1);
    let r = judge(&three);
    assert!(r.matches, "{:?}", r.differences);
    assert!(
        r.notes
            .iter()
            .any(|n| n.starts_with("the expectation pools 3 runs")),
        "{:?}",
        r.notes
    );
    assert!(
        r.notes.iter().any(|n| n.contains(
            "is within the cells' noise (twice the cells' noises, the expectation's across its runs, in quadrature"
        )),
        "{:?}",
        r.notes
    );
    // Three runs that agree: the same node fails.
    let tight = side("r", &[135.0, 134.8, 135.2], 1);
    assert!(!judge(&tight).matches);
}

/// Each pair's figures are pooled with the same pair's and state's of the
/// other runs, a flag stays with its figure, and a pair failed in every run
/// is listed once.
#[test]
fn each_c2c_figure_is_pooled_with_its_own_pair_and_state() {
    use crate::model::c2c::C2cFailed;
    // Pair i: HITM at base + 10 i, read-shared at base / 2 + 5 i.
    let varied = |path: &str, base: f64, seed: u64| {
        let mut s = c2c_run(path, base, seed);
        for (i, p) in s.c2c.as_mut().unwrap().pairs.iter_mut().enumerate() {
            for (f, at) in [
                (&mut p.hitm, base + 10.0 * i as f64),
                (&mut p.shared, base / 2.0 + 5.0 * i as f64),
            ] {
                let f = f.as_mut().unwrap();
                f.samples = tight(at, 20, seed * 10 + i as u64);
                let s = Summary::of(&f.samples).unwrap();
                (f.median, f.min, f.max, f.cv) = (s.median, s.min, s.max, s.cv);
            }
        }
        s
    };
    let failed = |a, b| C2cFailed {
        a,
        b,
        reason: "offline".into(),
    };
    let r1 = {
        let mut r = varied("a1", 200.0, 1);
        r.c2c.as_mut().unwrap().failed = vec![failed(9, 9)];
        r
    };
    let r2 = {
        let mut r = varied("a2", 204.0, 2);
        let c = r.c2c.as_mut().unwrap();
        let h = c.pairs[0].hitm.as_mut().unwrap();
        h.flagged = true;
        h.flags = vec!["directions disagree".into()];
        c.failed = vec![failed(9, 9), failed(c.pairs[1].a, c.pairs[1].b)];
        r
    };
    let p = pool(vec![r1, r2]).unwrap();
    let c = p.c2c.as_ref().unwrap();
    for (i, q) in c.pairs.iter().enumerate() {
        let (h, s) = (q.hitm.as_ref().unwrap(), q.shared.as_ref().unwrap());
        let i = i as f64;
        assert!(
            h.median > 199.0 + 10.0 * i && h.median < 205.0 + 10.0 * i,
            "{i} {}",
            h.median
        );
        assert!(
            s.median > 99.0 + 5.0 * i && s.median < 103.0 + 5.0 * i,
            "{i} {}",
            s.median
        );
        assert!(!s.flagged, "{:?}", s.flags);
    }
    let h0 = c.pairs[0].hitm.as_ref().unwrap();
    assert!(h0.flagged);
    assert_eq!(h0.flags, ["run 2: directions disagree"]);
    assert!(!c.pairs[1].hitm.as_ref().unwrap().flagged);
    let failed: Vec<(u32, u32)> = c.failed.iter().map(|f| (f.a, f.b)).collect();
    assert_eq!(failed, [(9, 9)]);
    // Other lines, or another unit, measured something else too.
    for change in [
        |r: &mut C2cResult| r.hitm_lines = Some("two lines".into()),
        |r: &mut C2cResult| r.unit = "cycles".into(),
    ] {
        let mut other = c2c_run("a2", 200.0, 2);
        change(other.c2c.as_mut().unwrap());
        let e = pool(vec![c2c_run("a1", 200.0, 1), other])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("a2: its c2c result was measured with other"),
            "{e}"
        );
    }
}
