//! Repeated samples and their summary: median, min, max, coefficient of variation.
//!
//! A measurement is a closure returning one sample. [`repeat`] discards the
//! warm-up runs (caches, TLB, page tables and the CPU's frequency settle
//! there), then samples until the CV is under a target or the time budget is
//! spent, and records which of the two ended it: a cell that ran out of time
//! is less trustworthy than one that converged, and the reader should know.

pub mod flags;
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

/// Two groups of samples far apart: their medians and sizes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Modes {
    pub low: f64,
    pub high: f64,
    pub n_low: usize,
    pub n_high: usize,
}

/// The least step between two modes, as a ratio of the higher to the
/// lower sample beside the gap: memory that lies on two host nodes, or a
/// page that is huge in some runs and not in others, moves a figure by far
/// more than this.
pub const MODE_GAP: f64 = 1.15;

/// The two modes of `samples` when they fall into two groups (None
/// otherwise): the widest step between neighbours in sorted order is at
/// least [`MODE_GAP`], at least three times either group's own spread
/// (max/min - 1), and each group holds at least two samples and a fifth of
/// them. A median of such samples lies in one mode or between them and
/// describes neither, so the figure says both.
pub fn two_modes(samples: &[f64]) -> Option<Modes> {
    let mut v: Vec<f64> = samples
        .iter()
        .copied()
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    let n = v.len();
    if n < 6 {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let (i, gap) = (1..n)
        .map(|i| (i, v[i] / v[i - 1]))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let least = (n / 5).max(2);
    if gap < MODE_GAP || i < least || n - i < least {
        return None;
    }
    let (lo, hi) = v.split_at(i);
    let spread = |g: &[f64]| g[g.len() - 1] / g[0] - 1.0;
    if gap - 1.0 < 3.0 * spread(lo).max(spread(hi)) {
        return None;
    }
    Some(Modes {
        low: median_of_sorted(lo)?,
        high: median_of_sorted(hi)?,
        n_low: lo.len(),
        n_high: hi.len(),
    })
}

impl Modes {
    /// The flag of a figure with two modes, in `unit`.
    pub fn flag(&self, unit: &str) -> String {
        format!(
            "two modes: {:.1} {unit} ({} samples) and {:.1} {unit} ({} samples); the median describes neither (memory on two nodes of a host, or pages that differ between runs)",
            self.low, self.n_low, self.high, self.n_high
        )
    }
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
    /// The samples set aside because a measuring thread lost its CPU
    /// ([`repeat_held`]); none for a [`repeat`] that does not ask.
    #[serde(default)]
    pub set_aside: SetAside,
}

/// What [`repeat_held`] set aside: samples during which a measuring thread
/// lost its CPU, counted by reason and never averaged in, and how far it
/// shortened the samples to get some that held.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetAside {
    /// Samples in which the scheduler switched a measuring thread out.
    pub preempted: usize,
    /// Samples in which a measuring thread was off its CPU without a
    /// switch (a VM's stolen time, interrupts).
    pub off_cpu: usize,
    /// The divisor the samples' length ended at (1: never shortened).
    #[serde(default = "one")]
    pub shortened: u32,
    /// True when no sample held its CPU, so the figure is made of
    /// set-aside samples and flagged.
    #[serde(default)]
    pub used_anyway: bool,
}

fn one() -> u32 {
    1
}

/// How many samples [`repeat_held`] looks back on to decide whether to
/// shorten them: two lost in at most eight shortens; one may be bad luck.
pub const SHORTEN_WINDOW: usize = 8;

/// The most a sample is shortened (its length divided by), when many are
/// set aside: 100 ms / 256 is 0.4 ms, below any scheduler's time slice.
pub const MAX_SHORTEN: u32 = 256;

impl SetAside {
    /// Samples set aside, all reasons.
    pub fn total(&self) -> usize {
        self.preempted + self.off_cpu
    }

    /// Why a figure of `kept` samples cannot be trusted for what was set
    /// aside: every sample lost its CPU, or fewer than
    /// [`BUDGET_MIN_SAMPLES`] held it. None otherwise: the kept samples
    /// held their CPU, whatever share was set aside.
    pub fn flag(&self, kept: usize) -> Option<String> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let all = kept + total;
        if self.used_anyway {
            return Some(format!(
                "preempted: the measuring thread lost its CPU in every one of {total} samples ({}); the figure is made of them and counts the time the thread was off its CPU as work: measure on a quieter machine",
                self.reasons()
            ));
        }
        (kept < BUDGET_MIN_SAMPLES).then(|| {
            format!(
                "preempted in {:.0} % of samples ({}): only {kept} of {all} held their CPU, too few for a median; measure on a quieter machine",
                100.0 * total as f64 / all as f64,
                self.reasons()
            )
        })
    }

    /// "12 preempted, 1 off its CPU".
    pub fn reasons(&self) -> String {
        let mut parts = Vec::new();
        if self.preempted > 0 {
            parts.push(format!("{} preempted", self.preempted));
        }
        if self.off_cpu > 0 {
            parts.push(format!(
                "{} {}",
                self.off_cpu,
                crate::held::Lost::OffCpu.words()
            ));
        }
        parts.join(", ")
    }

    /// Add another measurement's counts (a figure made of several).
    pub fn add(&mut self, other: &SetAside) {
        self.preempted += other.preempted;
        self.off_cpu += other.off_cpu;
        self.shortened = self.shortened.max(other.shortened);
        self.used_anyway |= other.used_anyway;
    }
}

/// One sample as [`repeat_held`] takes it: the figure, and whether the
/// measuring thread(s) lost the CPU during it ([`crate::held`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Taken {
    pub value: f64,
    pub lost: Option<crate::held::Lost>,
}

impl Taken {
    /// A sample that held its CPU.
    pub fn held(value: f64) -> Taken {
        Taken { value, lost: None }
    }
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
    elapsed: impl FnMut() -> Duration,
    cancelled: impl FnMut() -> bool,
) -> Result<Measured, E> {
    repeat_held_with(rule, |_| sample().map(Taken::held), elapsed, cancelled)
}

/// [`repeat`] for samples that know whether their thread(s) held the CPU:
/// `sample(shorten)` takes one sample of its usual length divided by
/// `shorten` and says whether it was lost ([`Taken`]). A lost sample is set
/// aside and counted, never kept; when a quarter or more of the last
/// [`SHORTEN_WINDOW`] samples are lost, the samples are shortened (halved, down to
/// [`MAX_SHORTEN`]) so that more of them fit between two preemptions.
pub fn repeat_held<E>(
    rule: &StopRule,
    sample: impl FnMut(u32) -> Result<Taken, E>,
) -> Result<Measured, E> {
    let start = Instant::now();
    repeat_held_with(
        rule,
        sample,
        move || start.elapsed(),
        crate::cancel::requested,
    )
}

/// [`repeat_held`] with the clock and the cancellation check given, as
/// [`repeat_with`]. The CV target and `max_samples` count kept samples
/// only; the budget ends the cell as before, once it has taken
/// [`BUDGET_MIN_SAMPLES`] samples held or not, so a plan's budget holds on a
/// busy machine. A cell that kept fewer than that is flagged, and with none
/// kept its figure is the set-aside samples', flagged ([`SetAside::flag`]).
pub fn repeat_held_with<E>(
    rule: &StopRule,
    mut sample: impl FnMut(u32) -> Result<Taken, E>,
    mut elapsed: impl FnMut() -> Duration,
    mut cancelled: impl FnMut() -> bool,
) -> Result<Measured, E> {
    for _ in 0..rule.warmup {
        if cancelled() {
            break;
        }
        sample(1)?;
    }
    let max = rule.max_samples.max(1);
    let floor = BUDGET_MIN_SAMPLES.min(max);
    let mut kept = Vec::new();
    let mut lost_values = Vec::new();
    let mut aside = SetAside {
        shortened: 1,
        ..SetAside::default()
    };
    let (mut window, mut window_lost) = (0usize, 0usize);
    let stop = loop {
        let t = sample(aside.shortened)?;
        window += 1;
        match t.lost {
            None => kept.push(t.value),
            Some(why) => {
                match why {
                    crate::held::Lost::Preempted => aside.preempted += 1,
                    crate::held::Lost::OffCpu => aside.off_cpu += 1,
                }
                lost_values.push(t.value);
                window_lost += 1;
            }
        }
        // Two lost, a quarter or more of the samples since the last change:
        // halve at once (a busy machine loses the first two long samples,
        // and waiting for eight would spend the budget on lost ones).
        if window_lost >= 2 && window_lost * 4 >= window && aside.shortened < MAX_SHORTEN {
            aside.shortened *= 2;
            (window, window_lost) = (0, 0);
        } else if window >= SHORTEN_WINDOW {
            (window, window_lost) = (0, 0);
        }
        let n = kept.len();
        if cancelled() {
            break StopReason::Interrupted;
        }
        if n >= rule.min_samples.max(2) {
            if let Some(s) = Summary::of(&kept) {
                if s.cv <= rule.cv_target {
                    break StopReason::CvReached;
                }
            }
        }
        if n >= max {
            break StopReason::MaxSamples;
        }
        // The budget ends the cell once it has taken the floor's samples,
        // held or not: a plan's budget holds on a busy machine too, and a
        // cell short of held samples says so (`SetAside::flag`) instead.
        let taken = n + aside.total();
        if taken >= floor && elapsed() >= rule.budget {
            break StopReason::BudgetSpent;
        }
        if taken >= max * 4 {
            break StopReason::BudgetSpent;
        }
    };
    if kept.is_empty() && !lost_values.is_empty() {
        aside.used_anyway = true;
        kept = lost_values;
    }
    let summary = Summary::of(&kept).unwrap_or(Summary {
        median: f64::NAN,
        min: f64::NAN,
        max: f64::NAN,
        mean: f64::NAN,
        cv: f64::NAN,
        n: kept.len(),
    });
    Ok(Measured {
        samples: kept,
        summary,
        stop,
        warmup_runs: rule.warmup,
        elapsed_s: elapsed().as_secs_f64(),
        set_aside: aside,
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
        // Every sample lost: halved after every second one.
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
        assert_eq!(*lengths.borrow(), vec![1, 1, 2, 2, 4, 4]);
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
}
