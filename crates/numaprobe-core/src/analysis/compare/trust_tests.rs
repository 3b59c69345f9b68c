//! Tests of the rules every verdict asks: a cell's trust, a change against
//! the noise and the minimum effect, two runs' conditions.

use super::*;
use crate::model::matrix::tests::cell;

fn evidence(median: f64, cv: f64, min: f64, max: f64, kept: usize) -> CellEvidence {
    CellEvidence {
        median,
        min,
        max,
        cv,
        kept,
        flagged: false,
        flags: vec![],
        set_aside: SetAside::default(),
        across_runs: None,
    }
}

fn check(cpus: usize, load: f64, running: u64, steal: f64) -> SystemCheck {
    let mut c = SystemCheck {
        allowed_cpus: cpus,
        load_1m: Some(load),
        other_running: Some(running),
        steal_percent: Some(steal),
        interval_s: 0.25,
        governors: vec!["performance".into()],
        thp: Some("madvise".into()),
        warnings: vec![],
    };
    c.warnings = crate::system_check::assess(&c);
    c
}

#[test]
fn a_flagged_cell_is_not_trusted_and_says_why() {
    let mut c = cell(0, 1, 100.0, 0.5);
    assert!(c.flagged);
    let why = cell_trust(&CellEvidence::from(&c)).unwrap();
    assert_eq!(why, "placement 50.0 % < 99 %");
    // Flagged with no words: still not trusted.
    c.flags.clear();
    assert_eq!(
        cell_trust(&CellEvidence::from(&c)).as_deref(),
        Some("flagged (no reason given)")
    );
    // Words without the flag are not a reason (the flag is the contract).
    let mut e = evidence(100.0, 0.01, 99.0, 101.0, 10);
    e.flags = vec!["placement 98 % < 99 %".into()];
    assert_eq!(cell_trust(&e), None);
    // A placed, tight cell holds.
    assert_eq!(
        cell_trust(&CellEvidence::from(&cell(0, 0, 100.0, 1.0))),
        None
    );
}

#[test]
fn a_wide_spread_is_not_trusted_even_unflagged() {
    // CV 12 %: past the 10 % line, though the document did not flag it.
    let why = cell_trust(&evidence(200.0, 0.12, 180.0, 230.0, 20)).unwrap();
    assert!(why.starts_with("unstable: CV 12.0 %"), "{why}");
    // max/min 1.6: a few far samples.
    assert!(cell_trust(&evidence(200.0, 0.03, 150.0, 240.0, 20)).is_some());
    // At the lines: trusted.
    assert_eq!(cell_trust(&evidence(200.0, 0.10, 160.0, 240.0, 20)), None);
    // One sample has no spread to judge.
    assert_eq!(cell_trust(&evidence(200.0, 0.5, 100.0, 300.0, 1)), None);
    // Flagged unstable already: said once.
    let mut e = evidence(200.0, 0.12, 180.0, 230.0, 20);
    e.flagged = true;
    e.flags = vec!["unstable: CV 12.0 %, as measured".into()];
    assert_eq!(
        cell_trust(&e).as_deref(),
        Some("unstable: CV 12.0 %, as measured")
    );
    // Flagged for placement and unstable by its figures: both reasons.
    e.flags = vec!["placement 90.0 % < 99 %".into()];
    let both = cell_trust(&e).unwrap();
    assert!(
        both.starts_with("placement 90.0 % < 99 %; unstable: CV 12.0 %"),
        "{both}"
    );
}

#[test]
fn evidence_reads_a_document_cell_and_counts_its_samples() {
    let v = serde_json::json!({
        "cpu_node": 0, "mem_node": 1, "median": 120.0, "min": 110.0, "max": 130.0,
        "cv": 0.05, "samples": [110.0, 120.0, 130.0, 121.0], "flagged": true,
        "flags": ["unstable: x"], "other": {"ignored": true}
    });
    let e = CellEvidence::deserialize(&v).unwrap();
    assert_eq!(e.kept, 4);
    assert_eq!((e.median, e.min, e.max, e.cv), (120.0, 110.0, 130.0, 0.05));
    assert!(e.flagged);
    assert_eq!(e.flags, ["unstable: x"]);
    assert!((e.noise() - 6.0).abs() < 1e-12);
    // A cell with only its median: no spread, no flags.
    let bare = CellEvidence::deserialize(&serde_json::json!({"median": 5.0})).unwrap();
    assert_eq!(bare, evidence(5.0, 0.0, 0.0, 0.0, 0));
    // Samples that are not an array: an error, not a guess.
    let e = CellEvidence::deserialize(&serde_json::json!({"samples": 3})).unwrap_err();
    assert!(e.to_string().contains("an array of samples"), "{e}");
    // The typed cell gives the same.
    let c = cell(0, 1, 100.0, 1.0);
    let e = CellEvidence::from(&c);
    assert_eq!((e.median, e.min, e.max, e.kept), (100.0, 99.0, 101.0, 3));
    assert!((e.noise() - 0.5).abs() < 1e-12);
    assert_eq!(evidence(-10.0, 0.1, 0.0, 0.0, 0).noise(), 1.0);
}

#[test]
fn a_change_counts_beyond_the_minimum_effect_and_both_noises() {
    // +10 % of 100 against a 2 % minimum and noises of 3 and 4: counts.
    // Noises 3 and 4 add in quadrature to 5: the bound is 10.
    assert_eq!(noise_bound(&[3.0, 4.0]), 10.0);
    assert!(stands_out(10.5, 100.0, 2.0, &[3.0, 4.0]));
    assert!(stands_out(-10.5, 100.0, 2.0, &[3.0, 4.0]));
    // At the bound: not beyond it.
    assert!(!stands_out(10.0, 100.0, 2.0, &[3.0, 4.0]));
    assert!(!stands_out(-10.0, 100.0, 2.0, &[3.0, 4.0]));
    // Below the minimum effect.
    assert!(!stands_out(1.5, 100.0, 2.0, &[0.1, 0.1]));
    // At it: not more than it.
    assert!(!stands_out(2.0, 100.0, 2.0, &[0.1, 0.1]));
    assert!(stands_out(2.0001, 100.0, 2.0, &[0.1, 0.1]));
    // Either side's noise alone counts: 6 asks for more than 12.
    assert!(!stands_out(12.0, 100.0, 2.0, &[6.0, 0.0]));
    assert!(!stands_out(12.0, 100.0, 2.0, &[0.0, 6.0]));
    assert!(stands_out(12.5, 100.0, 2.0, &[0.0, 6.0]));
    // The larger change a noisier pair asks for: 2 x sqrt(6^2 + 8^2) = 20.
    assert!(!stands_out(19.9, 100.0, 2.0, &[6.0, 8.0]));
    assert!(stands_out(20.1, 100.0, 2.0, &[6.0, 8.0]));
    assert!(beyond_noise(-10.0, &[4.9]));
    assert!(!beyond_noise(-10.0, &[5.0]));
    assert!(beyond_noise(1.0, &[]));
    assert_eq!(noise_bound(&[]), 0.0);
    // A negative reference is sized by its magnitude.
    assert!(stands_out(-10.0, -100.0, 2.0, &[]));
    // From zero: any change is infinitely large, none is none.
    assert!(stands_out(5.0, 0.0, 15.0, &[]));
    assert!(!stands_out(0.0, 0.0, 0.0, &[]));
}

#[test]
fn percent_and_noise_in_percent() {
    assert_eq!(percent_of(15.0, 100.0), 15.0);
    assert_eq!(percent_of(-5.0, -50.0), 10.0);
    assert_eq!(percent_of(0.0, 0.0), 0.0);
    assert_eq!(percent_of(1.0, 0.0), f64::INFINITY);
    assert_eq!(percent_of(-1.0, 0.0), f64::NEG_INFINITY);
    // 2 x sqrt(16 + 36 + 12^2) = 28, of 200.
    assert!((noise_pct(200.0, &[4.0, 6.0, 12.0]) - 14.0).abs() < 1e-9);
    assert_eq!(noise_pct(-200.0, &[4.0]), 4.0);
    assert_eq!(noise_pct(0.0, &[4.0]), 0.0);
    assert_eq!(noise_pct(100.0, &[]), 0.0);
}

#[test]
fn like_conditions_compare_and_unknown_ones_are_not_different() {
    let quiet = check(2, 0.3, 0, 0.0);
    assert_eq!(conditions_differ(Some(&quiet), Some(&quiet)), None);
    // Load 0.3 and 0.9 on 2 CPUs: 0.3 per CPU apart, both quiet.
    assert_eq!(
        conditions_differ(Some(&quiet), Some(&check(2, 0.9, 0, 0.0))),
        None
    );
    assert_eq!(conditions_differ(None, Some(&quiet)), None);
    assert_eq!(conditions_differ(Some(&quiet), None), None);
}

#[test]
fn different_load_makes_the_conditions_differ() {
    // The two busy runs of the trial: load 3.1 and 8.3 on 2 CPUs, both warned.
    let a = check(2, 3.1, 1, 0.0);
    let b = check(2, 8.3, 1, 0.0);
    assert!(!a.quiet() && !b.quiet());
    let why = conditions_differ(Some(&a), Some(&b)).unwrap();
    assert_eq!(
        why,
        "the runs' conditions differ: load average 3.10 on 2 CPU(s) in A, 8.30 on 2 in B"
    );
    // Exactly half a CPU's load apart: differs (where the check warns).
    assert!(
        conditions_differ(Some(&check(4, 4.0, 9, 0.0)), Some(&check(4, 6.0, 9, 0.0))).is_some()
    );
    assert!(
        conditions_differ(Some(&check(4, 4.0, 9, 0.0)), Some(&check(4, 5.9, 9, 0.0))).is_none()
    );
    // Load per CPU: 4 on 8 CPUs is 8 on 16.
    assert!(
        conditions_differ(Some(&check(8, 4.0, 9, 0.0)), Some(&check(16, 8.0, 18, 0.0))).is_none()
    );
    // Only one warned.
    let quiet = check(8, 0.5, 0, 0.0);
    let busy = check(8, 5.0, 0, 0.0);
    let why = conditions_differ(Some(&quiet), Some(&busy)).unwrap();
    assert!(
        why.starts_with(
            "the runs' conditions differ: only B's system check warned (load average 5.00"
        ),
        "{why}"
    );
    let why = conditions_differ(Some(&busy), Some(&quiet)).unwrap();
    assert!(why.contains("only A's system check warned"), "{why}");
}

#[test]
fn runnable_tasks_and_steal_make_the_conditions_differ() {
    let why =
        conditions_differ(Some(&check(4, 3.0, 0, 0.0)), Some(&check(4, 3.0, 2, 0.0))).unwrap();
    assert!(
        why.ends_with("0 other runnable task(s) in A, 2 in B"),
        "{why}"
    );
    assert!(
        conditions_differ(Some(&check(4, 3.0, 3, 0.0)), Some(&check(4, 3.0, 4, 0.0))).is_none()
    );
    let why =
        conditions_differ(Some(&check(4, 3.0, 0, 0.5)), Some(&check(4, 3.0, 0, 5.0))).unwrap();
    assert!(why.ends_with("steal 0.5 % in A, 5.0 % in B"), "{why}");
    // Stolen exactly at the warn line is not past it (the check does not
    // warn there either): alike to an unstolen run, either way round.
    let at_line = check(4, 3.0, 0, STEAL_WARN_PERCENT);
    assert!(at_line.quiet() == check(4, 3.0, 0, 0.0).quiet());
    assert_eq!(
        conditions_differ(Some(&at_line), Some(&check(4, 3.0, 0, 0.0))),
        None
    );
    assert_eq!(
        conditions_differ(Some(&check(4, 3.0, 0, 0.0)), Some(&at_line)),
        None
    );
    // Both stolen: alike.
    assert!(
        conditions_differ(Some(&check(4, 3.0, 0, 3.0)), Some(&check(4, 3.0, 0, 9.0))).is_none()
    );
    // A check without load figures is compared on what it has.
    let mut bare = check(4, 0.1, 0, 0.0);
    (bare.load_1m, bare.other_running, bare.steal_percent) = (None, None, None);
    assert!(conditions_differ(Some(&bare), Some(&check(4, 9.0, 9, 9.0))).is_some());
    bare.warnings = vec!["load".into()];
    assert!(conditions_differ(Some(&bare), Some(&check(4, 9.0, 9, 9.0))).is_none());
}

#[test]
fn a_cell_whose_samples_lost_their_cpu_is_not_trusted() {
    let starved = SetAside {
        preempted: 18,
        off_cpu: 0,
        shortened: 1,
        used_anyway: false,
    };
    // 2 held of 20: too few, even in a document that did not flag it.
    let mut e = evidence(100.0, 0.01, 99.0, 101.0, 2);
    e.set_aside = starved;
    let why = cell_trust(&e).unwrap();
    assert!(
        why.starts_with("preempted in 90 % of samples (18 preempted)"),
        "{why}"
    );
    // Flagged for it already: said once.
    e.flagged = true;
    e.flags = vec!["preempted in 90 % of samples, as measured".into()];
    assert_eq!(
        cell_trust(&e).as_deref(),
        Some("preempted in 90 % of samples, as measured")
    );
    // Many set aside, but enough held: the kept samples hold.
    let mut e = evidence(100.0, 0.01, 99.0, 101.0, 30);
    e.set_aside = starved;
    assert_eq!(cell_trust(&e), None);
    // From a document: the counts are read.
    let v = serde_json::json!({"median": 100.0, "samples": [100.0],
        "set_aside": {"preempted": 0, "off_cpu": 7, "used_anyway": true}});
    let e = CellEvidence::deserialize(&v).unwrap();
    assert_eq!((e.set_aside.off_cpu, e.set_aside.shortened), (7, 1));
    assert!(cell_trust(&e)
        .unwrap()
        .starts_with("preempted: the measuring thread lost its CPU in every one of 7 samples"));
    // And from a typed cell.
    let mut c = cell(0, 0, 100.0, 1.0);
    c.set_aside = starved;
    assert_eq!(CellEvidence::from(&c).set_aside, starved);
}
