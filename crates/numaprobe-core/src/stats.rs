//! Repeated samples and their summary: median, min, max, coefficient of variation.
//!
//! A measurement is a closure returning one sample. [`repeat`] discards the
//! warm-up runs (caches, TLB, page tables and the CPU's frequency settle
//! there), then samples until the CV is under a target or the time budget is
//! spent, and records which of the two ended it: a cell that ran out of time
//! is less trustworthy than one that converged, and the reader should know.

pub mod flags;
pub mod length;
pub mod mann_whitney;
pub mod sketch;

pub use length::{MAX_SHORTEN, SHORTEN_WINDOW};
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
    /// Samples in which the scheduler switched a measuring thread out for
    /// more than [`crate::held::OFF_CPU_SHARE`] of the sample.
    pub preempted: usize,
    /// Samples in which a measuring thread was off its CPU without a
    /// switch (a VM's stolen time, interrupts).
    pub off_cpu: usize,
    /// The most the samples' length was divided by (1: never shortened);
    /// they lengthen back once they hold again ([`length`]).
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

impl SetAside {
    /// Samples set aside, all reasons. The counts of a document read from
    /// outside may be anything: their sum saturates, so a claim past
    /// `usize::MAX` reads as that many, never as a wrapped-round few.
    pub fn total(&self) -> usize {
        self.preempted.saturating_add(self.off_cpu)
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
        let all = kept.saturating_add(total);
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

    /// Add another measurement's counts (a figure made of several),
    /// saturating as [`Self::total`] does.
    pub fn add(&mut self, other: &SetAside) {
        self.preempted = self.preempted.saturating_add(other.preempted);
        self.off_cpu = self.off_cpu.saturating_add(other.off_cpu);
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
/// [`MAX_SHORTEN`]) so that more of them fit between two preemptions, and
/// they double back toward their usual length after a run of held ones
/// ([`length`]).
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
    let mut length = length::Length::default();
    let stop = loop {
        let t = sample(length.divisor())?;
        length.record(t.lost.is_some());
        aside.shortened = length.most();
        match t.lost {
            None => kept.push(t.value),
            Some(why) => {
                match why {
                    crate::held::Lost::Preempted => aside.preempted += 1,
                    crate::held::Lost::OffCpu => aside.off_cpu += 1,
                }
                lost_values.push(t.value);
            }
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
mod tests;
