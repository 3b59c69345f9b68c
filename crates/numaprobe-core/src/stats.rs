//! Repeated samples and their summary: median, min, max, coefficient of variation.
//!
//! A measurement is a closure returning one sample. [`repeat`] discards the
//! warm-up runs (caches, TLB, page tables and the CPU's frequency settle
//! there), then samples until the CV is under a target or the time budget is
//! spent, and records which of the two ended it: a cell that ran out of time
//! is less trustworthy than one that converged, and the reader should know.

pub mod mann_whitney;

use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// Why a cell stopped sampling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The CV of the samples fell to the target (after `min_samples`).
    CvReached,
    /// The time budget was spent before the CV reached the target.
    BudgetSpent,
    /// `max_samples` were taken before either.
    MaxSamples,
    /// Cancelled (SIGINT/SIGTERM, [`crate::cancel`]) after at least one sample.
    Interrupted,
}

impl StopReason {
    pub fn name(self) -> &'static str {
        match self {
            StopReason::CvReached => "cv_reached",
            StopReason::BudgetSpent => "budget_spent",
            StopReason::MaxSamples => "max_samples",
            StopReason::Interrupted => "interrupted",
        }
    }
}

/// When to stop sampling.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StopRule {
    /// Runs discarded before the first sample.
    pub warmup: usize,
    /// Samples taken before the CV may end the cell (a CV of two samples is
    /// luck, not convergence).
    pub min_samples: usize,
    pub max_samples: usize,
    /// Target coefficient of variation (standard deviation / mean), e.g. 0.01.
    pub cv_target: f64,
    /// Wall time for warm-up plus samples. When it is spent the cell stops as
    /// soon as it has [`BUDGET_MIN_SAMPLES`] samples (a median needs three).
    #[serde(with = "secs")]
    pub budget: Duration,
}

/// The fewest samples a cell ends with, even when its budget is spent.
pub const BUDGET_MIN_SAMPLES: usize = 3;

impl Default for StopRule {
    fn default() -> Self {
        StopRule {
            warmup: 1,
            min_samples: 5,
            max_samples: 1000,
            cv_target: 0.01,
            budget: Duration::from_secs(2),
        }
    }
}

mod secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let v = f64::deserialize(d)?;
        Ok(Duration::from_secs_f64(v.max(0.0)))
    }
}

/// Median, min, max, mean and CV of a set of samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    /// Sample standard deviation (n - 1) over the mean; 0 for one sample.
    pub cv: f64,
    pub n: usize,
}

/// The median of values already in ascending order: the middle one, or the
/// mean of the middle two; None for none. Every median numaprobe reports
/// (a cell's, a level's, a fleet group's, a comparison's) is this one.
pub fn median_of_sorted(s: &[f64]) -> Option<f64> {
    let n = s.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(s[n / 2]),
        _ => Some((s[n / 2 - 1] + s[n / 2]) / 2.0),
    }
}

/// [`median_of_sorted`] of a sorted copy of `v` (NaNs sort last).
pub fn median(v: &[f64]) -> Option<f64> {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    median_of_sorted(&s)
}

impl Summary {
    /// None for no samples or any non-finite sample.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() || samples.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let mut v = samples.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = median_of_sorted(&v)?;
        let mean = v.iter().sum::<f64>() / n as f64;
        let cv = if n < 2 || mean == 0.0 {
            0.0
        } else {
            let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            var.sqrt() / mean.abs()
        };
        Some(Summary {
            median,
            min: v[0],
            max: v[n - 1],
            mean,
            cv,
            n,
        })
    }
}

/// A figure whose samples spread more than this (standard deviation over
/// the mean) is not to be trusted as is: pyperf's instability warning draws
/// the line at 10 % of the mean.
pub const UNSTABLE_CV: f64 = 0.10;

/// ... nor one whose slowest and fastest samples are further apart than
/// this factor, which a few outliers can reach while the CV stays low
/// (hyperfine warns of outliers for the same reason).
pub const UNSTABLE_RANGE: f64 = 1.5;

/// Why a figure with this spread cannot be trusted, with what would help;
/// None when its spread is within [`UNSTABLE_CV`] and [`UNSTABLE_RANGE`] (or
/// it has a single sample, which has no spread to judge).
pub fn instability(cv: f64, min: f64, max: f64, samples: usize) -> Option<String> {
    if samples < 2 {
        return None;
    }
    let range = if min > 0.0 { max / min } else { f64::INFINITY };
    let wide = range > UNSTABLE_RANGE && max > min;
    if !(cv > UNSTABLE_CV || wide) {
        return None;
    }
    Some(format!(
        "unstable: CV {:.1} %, max/min {} over {samples} samples (trusted up to CV {:.0} % and max/min {UNSTABLE_RANGE}); a quieter machine, more samples (a longer budget) or a repeated run would help",
        cv * 100.0,
        if range.is_finite() {
            format!("{range:.2}")
        } else {
            "unbounded".into()
        },
        UNSTABLE_CV * 100.0
    ))
}

/// The outcome of [`repeat`]: every sample kept, its summary, why it stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    pub samples: Vec<f64>,
    pub summary: Summary,
    pub stop: StopReason,
    pub warmup_runs: usize,
    /// Wall time spent, warm-up included.
    pub elapsed_s: f64,
}

/// Run `sample` under `rule`, timing the budget with the wall clock and
/// stopping early when the process is asked to ([`crate::cancel`]).
pub fn repeat<E>(rule: &StopRule, sample: impl FnMut() -> Result<f64, E>) -> Result<Measured, E> {
    let start = Instant::now();
    repeat_with(
        rule,
        sample,
        move || start.elapsed(),
        crate::cancel::requested,
    )
}

/// [`repeat`] with the clock given (`elapsed` returns the time since start),
/// so the stopping logic can be tested without waiting.
pub fn repeat_with_clock<E>(
    rule: &StopRule,
    sample: impl FnMut() -> Result<f64, E>,
    elapsed: impl FnMut() -> Duration,
) -> Result<Measured, E> {
    repeat_with(rule, sample, elapsed, || false)
}

/// [`repeat_with_clock`] with the cancellation check given too: `cancelled`
/// is asked after every sample (and before the warm-up ends), and a true
/// answer ends the cell with [`StopReason::Interrupted`] once it has one
/// sample, so an interrupted cell still carries what it measured.
pub fn repeat_with<E>(
    rule: &StopRule,
    mut sample: impl FnMut() -> Result<f64, E>,
    mut elapsed: impl FnMut() -> Duration,
    mut cancelled: impl FnMut() -> bool,
) -> Result<Measured, E> {
    for _ in 0..rule.warmup {
        if cancelled() {
            break;
        }
        sample()?;
    }
    let max = rule.max_samples.max(1);
    let floor = BUDGET_MIN_SAMPLES.min(max);
    let mut samples = Vec::new();
    let stop = loop {
        samples.push(sample()?);
        let n = samples.len();
        if cancelled() {
            break StopReason::Interrupted;
        }
        if n >= rule.min_samples.max(2) {
            if let Some(s) = Summary::of(&samples) {
                if s.cv <= rule.cv_target {
                    break StopReason::CvReached;
                }
            }
        }
        if n >= max {
            break StopReason::MaxSamples;
        }
        if n >= floor && elapsed() >= rule.budget {
            break StopReason::BudgetSpent;
        }
    };
    let summary = Summary::of(&samples).unwrap_or(Summary {
        median: f64::NAN,
        min: f64::NAN,
        max: f64::NAN,
        mean: f64::NAN,
        cv: f64::NAN,
        n: samples.len(),
    });
    Ok(Measured {
        samples,
        summary,
        stop,
        warmup_runs: rule.warmup,
        elapsed_s: elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
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
}
