//! Tests of the sampling loop, its set-aside samples, two modes and the summary.

use super::*;

#[test]
fn the_median_is_the_middle_or_the_mean_of_the_middle_two() {
    assert_eq!(median_of_sorted(&[]), None);
    assert_eq!(median_of_sorted(&[4.0]), Some(4.0));
    assert_eq!(median_of_sorted(&[1.0, 4.0]), Some(2.5));
    assert_eq!(median_of_sorted(&[1.0, 2.0, 9.0]), Some(2.0));
    assert_eq!(median_of_sorted(&[1.0, 2.0, 3.0, 10.0]), Some(2.5));
    // Unsorted input is sorted first; a NaN sorts last.
    assert_eq!(median(&[9.0, 1.0, 2.0]), Some(2.0));
    assert_eq!(median(&[f64::NAN, 1.0, 3.0]), Some(3.0));
    assert_eq!(median(&[]), None);
}
use std::cell::Cell;
use std::convert::Infallible;

#[test]
fn a_wide_spread_is_unstable_by_cv_or_by_range() {
    assert_eq!(instability(0.005, 99.0, 101.0, 10), None);
    assert_eq!(instability(0.10, 99.0, 101.0, 10), None);
    let cv = instability(0.417, 498.6, 860.9, 12).unwrap();
    assert!(
        cv.starts_with("unstable: CV 41.7 %, max/min 1.73 over 12 samples"),
        "{cv}"
    );
    assert!(cv.contains("quieter machine"), "{cv}");
    // A low CV with one far outlier is caught by the range.
    let outlier = instability(0.03, 100.0, 160.0, 50).unwrap();
    assert!(outlier.contains("max/min 1.60"), "{outlier}");
    assert_eq!(instability(0.03, 100.0, 150.0, 50), None);
    // One sample has no spread; a zero minimum is unbounded.
    assert_eq!(instability(0.9, 1.0, 100.0, 1), None);
    assert!(instability(0.01, 0.0, 1.0, 3)
        .unwrap()
        .contains("unbounded"));
    assert_eq!(instability(0.0, 0.0, 0.0, 3), None);
}

#[test]
fn summary_median_min_max_cv() {
    let s = Summary::of(&[3.0, 1.0, 2.0]).unwrap();
    assert_eq!((s.median, s.min, s.max, s.n), (2.0, 1.0, 3.0, 3));
    assert!((s.cv - 0.5).abs() < 1e-12); // sd 1, mean 2
    let even = Summary::of(&[4.0, 1.0, 2.0, 3.0]).unwrap();
    assert_eq!(even.median, 2.5);
    assert_eq!(Summary::of(&[5.0]).unwrap().cv, 0.0);
    assert!(Summary::of(&[]).is_none());
    assert!(Summary::of(&[1.0, f64::NAN]).is_none());
}

fn fake_clock(step_ms: u64) -> impl FnMut() -> Duration {
    let t = Cell::new(0u64);
    move || {
        t.set(t.get() + step_ms);
        Duration::from_millis(t.get())
    }
}

#[test]
fn stops_when_cv_reached_after_min_samples_and_discards_warmup() {
    let calls = Cell::new(0);
    let rule = StopRule::default();
    let m = repeat_with_clock(
        &rule,
        || {
            calls.set(calls.get() + 1);
            // The warm-up run is wildly off; it must not be kept.
            Ok::<_, Infallible>(if calls.get() == 1 { 1000.0 } else { 10.0 })
        },
        fake_clock(1),
    )
    .unwrap();
    assert_eq!(m.stop, StopReason::CvReached);
    assert_eq!(m.samples.len(), rule.min_samples);
    assert_eq!(calls.get(), rule.min_samples + rule.warmup);
    assert_eq!(m.summary.max, 10.0);
}

#[test]
fn noisy_samples_stop_on_budget_with_reason() {
    let i = Cell::new(0u32);
    let rule = StopRule {
        budget: Duration::from_millis(50),
        ..StopRule::default()
    };
    let m = repeat_with_clock(
        &rule,
        || {
            i.set(i.get() + 1);
            Ok::<_, Infallible>(if i.get().is_multiple_of(2) { 1.0 } else { 2.0 })
        },
        fake_clock(10),
    )
    .unwrap();
    assert_eq!(m.stop, StopReason::BudgetSpent);
    assert!(m.samples.len() >= BUDGET_MIN_SAMPLES);
    assert!(m.summary.cv > rule.cv_target);
}

#[test]
fn spent_budget_still_yields_three_samples() {
    let rule = StopRule {
        budget: Duration::ZERO,
        cv_target: 0.0,
        ..StopRule::default()
    };
    let x = Cell::new(0.0);
    let m = repeat_with_clock(
        &rule,
        || {
            x.set(x.get() + 1.0);
            Ok::<_, Infallible>(x.get())
        },
        fake_clock(1000),
    )
    .unwrap();
    assert_eq!(m.stop, StopReason::BudgetSpent);
    assert_eq!(m.samples.len(), BUDGET_MIN_SAMPLES);
}

#[test]
fn max_samples_ends_a_cell() {
    let rule = StopRule {
        max_samples: 4,
        cv_target: 0.0,
        budget: Duration::from_secs(3600),
        ..StopRule::default()
    };
    let x = Cell::new(0.0);
    let m = repeat_with_clock(
        &rule,
        || {
            x.set(x.get() + 1.0);
            Ok::<_, Infallible>(x.get())
        },
        fake_clock(1),
    )
    .unwrap();
    assert_eq!(m.stop, StopReason::MaxSamples);
    assert_eq!(m.samples.len(), 4);
}

#[test]
fn errors_from_the_sample_propagate() {
    let r = repeat(&StopRule::default(), || Err::<f64, _>("boom"));
    assert_eq!(r.unwrap_err(), "boom");
}

#[test]
fn stop_reason_serializes_snake_case() {
    let s = serde_json::to_string(&StopReason::BudgetSpent).unwrap();
    assert_eq!(s, "\"budget_spent\"");
    assert_eq!(StopReason::CvReached.name(), "cv_reached");
}

#[test]
fn cancellation_ends_the_cell_after_the_sample_in_progress() {
    let calls = Cell::new(0);
    let rule = StopRule {
        budget: Duration::from_secs(3600),
        cv_target: 0.0,
        ..StopRule::default()
    };
    let m = repeat_with(
        &rule,
        || {
            calls.set(calls.get() + 1);
            Ok::<_, Infallible>(calls.get() as f64)
        },
        fake_clock(1),
        || calls.get() >= 4,
    )
    .unwrap();
    assert_eq!(m.stop, StopReason::Interrupted);
    // One warm-up run, then samples until the flag is seen: 2, 3, 4.
    assert_eq!(m.samples, vec![2.0, 3.0, 4.0]);
    assert_eq!(StopReason::Interrupted.name(), "interrupted");
}

#[test]
fn cancellation_before_warmup_still_keeps_one_sample() {
    let m = repeat_with(
        &StopRule::default(),
        || Ok::<_, Infallible>(7.0),
        fake_clock(1),
        || true,
    )
    .unwrap();
    assert_eq!((m.stop, m.samples.len()), (StopReason::Interrupted, 1));
}

use crate::held::Lost;

/// Samples from a script: (value, lost) per call, the last repeated.
fn scripted(script: Vec<(f64, Option<Lost>)>) -> impl FnMut(u32) -> Result<Taken, Infallible> {
    let i = Cell::new(0usize);
    move |_| {
        let k = i.get().min(script.len() - 1);
        i.set(i.get() + 1);
        let (value, lost) = script[k];
        Ok(Taken { value, lost })
    }
}

#[test]
fn lost_samples_are_set_aside_and_counted_by_reason() {
    let rule = StopRule {
        warmup: 1,
        min_samples: 5,
        cv_target: 0.01,
        ..StopRule::default()
    };
    let p = Some(Lost::Preempted);
    let o = Some(Lost::OffCpu);
    let m = repeat_held_with(
        &rule,
        scripted(vec![
            (999.0, p), // warm-up: neither kept nor counted
            (100.0, None),
            (450.0, p),
            (100.0, None),
            (300.0, o),
            (100.0, None),
            (460.0, p),
            (100.0, None),
            (100.0, None),
        ]),
        fake_clock(1),
        || false,
    )
    .unwrap();
    assert_eq!(m.samples, vec![100.0; 5]);
    assert_eq!(m.summary.median, 100.0);
    assert_eq!((m.set_aside.preempted, m.set_aside.off_cpu), (2, 1));
    assert_eq!(m.set_aside.total(), 3);
    assert!(!m.set_aside.used_anyway);
    assert_eq!(
        m.set_aside.reasons(),
        "2 preempted, 1 off its CPU (stolen or interrupted)"
    );
    assert_eq!(m.set_aside.flag(5), None);
    assert_eq!(m.stop, StopReason::CvReached);
}

#[test]
fn samples_shorten_when_a_quarter_are_lost_and_stop_at_the_most() {
    let lengths = std::cell::RefCell::new(Vec::new());
    let calls = Cell::new(0usize);
    let rule = StopRule {
        warmup: 0,
        min_samples: 5,
        max_samples: 10_000,
        cv_target: 0.0,
        budget: Duration::from_secs(3600),
    };
    let m = repeat_held_with(
        &rule,
        |shorten| {
            lengths.borrow_mut().push(shorten);
            calls.set(calls.get() + 1);
            // One lost in four: exactly a quarter, which shortens.
            let lost = calls.get().is_multiple_of(4);
            Ok::<_, Infallible>(Taken {
                value: calls.get() as f64,
                lost: lost.then_some(Lost::Preempted),
            })
        },
        fake_clock(0),
        || calls.get() >= 80,
    )
    .unwrap();
    let l = lengths.borrow();
    // Two lost in each window of eight: every window halves them.
    assert_eq!(
        &l[..17],
        &[1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 4]
    );
    assert_eq!(*l.last().unwrap(), MAX_SHORTEN);
    assert_eq!(m.set_aside.shortened, MAX_SHORTEN);
    assert_eq!(m.set_aside.preempted, 20);
    assert_eq!(m.samples.len(), 60);
    // Every sample lost, none held yet: quartered after each one.
    let lengths = std::cell::RefCell::new(Vec::new());
    let calls = Cell::new(0usize);
    repeat_held_with(
        &rule,
        |shorten| {
            lengths.borrow_mut().push(shorten);
            calls.set(calls.get() + 1);
            Ok::<_, Infallible>(Taken {
                value: 1.0,
                lost: Some(Lost::Preempted),
            })
        },
        fake_clock(0),
        || calls.get() >= 6,
    )
    .unwrap();
    assert_eq!(*lengths.borrow(), vec![1, 4, 16, 64, 256, 256]);
    // One lost in eight never shortens.
    let calls = Cell::new(0usize);
    let m = repeat_held_with(
        &rule,
        |_| {
            calls.set(calls.get() + 1);
            Ok::<_, Infallible>(Taken {
                value: calls.get() as f64,
                lost: calls.get().is_multiple_of(8).then_some(Lost::OffCpu),
            })
        },
        fake_clock(0),
        || calls.get() >= 40,
    )
    .unwrap();
    assert_eq!(m.set_aside.shortened, 1);
    assert_eq!(m.set_aside.off_cpu, 5);
}

#[test]
fn the_budget_ends_a_cell_short_of_held_samples_and_its_flag_says_so() {
    let rule = StopRule {
        warmup: 0,
        min_samples: 5,
        max_samples: 1000,
        cv_target: 0.0,
        budget: Duration::from_millis(100),
    };
    // Every 10 ms a sample; two held, then only lost ones.
    let mut script = vec![(10.0, None), (11.0, None)];
    script.push((50.0, Some(Lost::Preempted)));
    let m = repeat_held_with(&rule, scripted(script), fake_clock(10), || false).unwrap();
    assert_eq!(m.stop, StopReason::BudgetSpent);
    // The clock is read from the third sample on: 12 samples, 2 kept.
    assert_eq!(m.samples, vec![10.0, 11.0]);
    assert_eq!(m.set_aside.preempted, 10);
    let flag = m.set_aside.flag(m.samples.len()).unwrap();
    assert!(
        flag.starts_with("preempted in 83 % of samples (10 preempted): only 2 of 12 held"),
        "{flag}"
    );
    // Without a lost sample the budget ends it as before: the clock is
    // read from the floor on (60 ms at the third, 120 ms at the fourth).
    let m = repeat_held_with(
        &rule,
        scripted(vec![(1.0, None), (2.0, None)]),
        fake_clock(60),
        || false,
    )
    .unwrap();
    assert_eq!(m.samples.len(), BUDGET_MIN_SAMPLES + 1);
    assert_eq!(
        m.set_aside,
        SetAside {
            shortened: 1,
            ..SetAside::default()
        }
    );
    // A spent budget with fewer than the floor taken goes on to it.
    let m = repeat_held_with(
        &rule,
        scripted(vec![(1.0, Some(Lost::OffCpu))]),
        fake_clock(1000),
        || false,
    )
    .unwrap();
    assert_eq!(m.samples.len(), BUDGET_MIN_SAMPLES);
    assert!(m.set_aside.used_anyway);
}

#[test]
fn a_cell_of_lost_samples_only_keeps_them_flagged() {
    let rule = StopRule {
        warmup: 0,
        max_samples: 8,
        budget: Duration::from_secs(3600),
        ..StopRule::default()
    };
    let m = repeat_held_with(
        &rule,
        scripted(vec![
            (300.0, Some(Lost::Preempted)),
            (310.0, Some(Lost::OffCpu)),
        ]),
        fake_clock(1),
        || false,
    )
    .unwrap();
    // max * 4 attempts, every one lost.
    assert_eq!(m.samples.len(), 32);
    assert!(m.set_aside.used_anyway);
    assert_eq!((m.set_aside.preempted, m.set_aside.off_cpu), (1, 31));
    assert_eq!(m.summary.median, 310.0);
    let flag = m.set_aside.flag(m.samples.len()).unwrap();
    assert!(flag.contains("in every one of 32 samples"), "{flag}");
    // Nothing set aside: no flag, whatever is kept.
    assert_eq!(SetAside::default().flag(0), None);
    let three = SetAside {
        preempted: 9,
        ..SetAside::default()
    };
    assert_eq!(three.flag(3), None);
    assert!(three.flag(2).is_some());
}

#[test]
fn set_aside_counts_add_up_across_measurements() {
    let mut a = SetAside {
        preempted: 1,
        off_cpu: 2,
        shortened: 4,
        used_anyway: false,
    };
    a.add(&SetAside {
        preempted: 3,
        off_cpu: 0,
        shortened: 2,
        used_anyway: true,
    });
    assert_eq!(
        a,
        SetAside {
            preempted: 4,
            off_cpu: 2,
            shortened: 4,
            used_anyway: true
        }
    );
    // Older documents carry no counts: they read as nothing set aside.
    let m: SetAside = serde_json::from_str("{\"preempted\":0,\"off_cpu\":0}").unwrap();
    assert_eq!(m.shortened, 1);
}

#[test]
fn set_aside_counts_from_a_hostile_document_saturate() {
    let hostile: SetAside = crate::model::bounded::from_slice(
        format!(r#"{{"preempted":{m},"off_cpu":{m}}}"#, m = usize::MAX).as_bytes(),
    )
    .unwrap();
    assert_eq!(hostile.total(), usize::MAX);
    let flag = hostile.flag(usize::MAX).unwrap_or_default();
    assert_eq!(flag, "", "as many held as the most there can be: no flag");
    let flag = hostile.flag(1).unwrap();
    assert!(
        flag.contains(&format!("only 1 of {} held", usize::MAX)),
        "{flag}"
    );
    let mut sum = hostile;
    sum.add(&hostile);
    assert_eq!((sum.preempted, sum.off_cpu), (usize::MAX, usize::MAX));
}

#[test]
fn two_groups_far_apart_are_two_modes_and_one_spread_is_not() {
    let bimodal = [27.7, 28.0, 28.1, 27.9, 55.3, 55.0, 54.8, 28.2];
    let m = two_modes(&bimodal).unwrap();
    assert_eq!((m.n_low, m.n_high), (5, 3));
    assert_eq!(m.low, 28.0);
    assert_eq!(m.high, 55.0);
    assert!(m
        .flag("GB/s")
        .starts_with("two modes: 28.0 GB/s (5 samples) and 55.0 GB/s (3 samples)"));
    // One outlier is not a mode: each group needs two and a fifth.
    assert_eq!(
        two_modes(&[10.0, 10.1, 10.0, 9.9, 10.2, 10.1, 10.0, 10.1, 10.0, 30.0]),
        None
    );
    // A step below the least gap, or within the groups' own spread.
    assert_eq!(two_modes(&[100.0, 101.0, 100.5, 112.0, 113.0, 112.5]), None);
    assert_eq!(two_modes(&[100.0, 130.0, 115.0, 160.0, 200.0, 180.0]), None);
    // Too few samples to tell.
    assert_eq!(two_modes(&[1.0, 1.0, 2.0, 2.0, 2.0]), None);
    // Non-finite and non-positive samples are left out.
    assert_eq!(two_modes(&[f64::NAN, 0.0, 1.0, 1.0, 2.0, 2.0]), None);
    let edge = [1.0, 1.0, 1.0, 1.15, 1.15, 1.15];
    assert!(two_modes(&edge).is_some());
}
