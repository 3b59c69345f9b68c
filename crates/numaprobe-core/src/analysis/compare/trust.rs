//! What a verdict may rest on. Every verdict numaprobe gives (`diff`'s
//! better and worse, `check --measured` and so `--slurm-drain`, `fleet`'s
//! outliers) asks three questions here, so that a new reason to distrust a
//! figure is added in one place:
//!
//! - [`cell_trust`]: does this cell hold at all? Not when it is flagged
//!   (placement, spread: [`crate::stats::instability`], samples set aside
//!   because the measuring thread lost its CPU: [`SetAside::flag`]), nor
//!   when its figures say so by the same rules though the document did not.
//! - [`stands_out`]: is a change larger than the two runs' noise and at
//!   least the stated minimum effect? criterion.rs keeps the same two
//!   apart: its noise threshold decides whether a significant change is
//!   worth reporting. The noise is [`NOISE_SIGMAS`] times the two sides'
//!   standard deviations (CV × median) added in quadrature: a run is one
//!   draw, so two runs of an unchanged machine differ by about that much
//!   (see [`NOISE_SIGMAS`] for why the samples within a run do not say
//!   less).
//! - [`conditions_differ`]: were the two runs measured under conditions
//!   (their system checks: load, runnable tasks, steal, warnings) different
//!   enough that a change between them may be the load's, not the machine's?
//!   Samples within one run are not independent of the run's load: a test
//!   over them says the runs differ, not why.

use crate::model::matrix::Cell;
use crate::stats::SetAside;
use crate::system_check::{SystemCheck, LOAD_WARN_SHARE, STEAL_WARN_PERCENT};
use serde::de::{Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::Deserialize;
use std::collections::BTreeMap;

/// The parts of a measured cell its trust is judged from: read from a
/// typed [`Cell`] or straight from a document's JSON (the fleet reads
/// reports untyped), with the same field names.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct CellEvidence {
    #[serde(default)]
    pub median: f64,
    #[serde(default)]
    pub min: f64,
    #[serde(default)]
    pub max: f64,
    /// Standard deviation over mean of the kept samples.
    #[serde(default)]
    pub cv: f64,
    /// How many samples were kept (the document's `samples`, counted).
    #[serde(default, rename = "samples", deserialize_with = "count")]
    pub kept: usize,
    #[serde(default)]
    pub flagged: bool,
    #[serde(default)]
    pub flags: Vec<String>,
    /// The samples set aside because a measuring thread lost its CPU.
    #[serde(default)]
    pub set_aside: SetAside,
    /// The noise measured across repeated runs, where the figure pools
    /// several (`super::pool::level_noise`): it stands in for the
    /// samples' spread. Never read from a document.
    #[serde(skip)]
    pub across_runs: Option<f64>,
}

/// The length of a JSON array, without holding its elements.
fn count<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    struct Count;
    impl<'de> Visitor<'de> for Count {
        type Value = usize;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an array of samples")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
            let mut n = 0;
            while seq.next_element::<IgnoredAny>()?.is_some() {
                n += 1;
            }
            Ok(n)
        }
    }
    d.deserialize_seq(Count)
}

impl From<&Cell> for CellEvidence {
    fn from(c: &Cell) -> Self {
        CellEvidence {
            median: c.median,
            min: c.min,
            max: c.max,
            cv: c.cv,
            kept: c.kept(),
            flagged: c.flagged,
            flags: c.flags.clone(),
            set_aside: c.set_aside,
            across_runs: None,
        }
    }
}

impl CellEvidence {
    /// The cell's noise in its own unit: measured across runs where the
    /// figure pools several, else the standard deviation of its samples
    /// (CV × median; the median stands in for the mean, which the
    /// documents do not keep).
    pub fn noise(&self) -> f64 {
        self.across_runs
            .unwrap_or_else(|| (self.cv * self.median).abs())
    }
}

/// The noise each figure pooled over several runs (`super::pool`) carries
/// in place of its samples' spread,
/// by the comparison's kind name (`latency`, `bandwidth`, `c2c hitm`,
/// `c2c shared`) and its two coordinates.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spread {
    /// How many runs the side pools.
    pub runs: usize,
    figures: BTreeMap<(String, u32, u32), f64>,
}

impl Spread {
    /// The noise of one figure, when it was measured in two runs or more.
    pub fn noise(&self, kind: &str, x: u32, y: u32) -> Option<f64> {
        self.figures.get(&(kind.to_string(), x, y)).copied()
    }

    /// How a side of these runs takes its noise, for a note: "3 runs: ...".
    pub fn describe(&self) -> String {
        let df = self.runs.saturating_sub(1);
        format!(
            "{} runs: a figure's noise is the standard error of its runs' medians, widened by Student's t ({:.2} for {df} degree{} of freedom), and never below its runs' own spread over the square root of their count",
            self.runs,
            t_975(df),
            if df == 1 { "" } else { "s" }
        )
    }

    /// Record one figure's noise across runs.
    pub fn set(&mut self, kind: &str, x: u32, y: u32, noise: f64) {
        self.figures.insert((kind.to_string(), x, y), noise);
    }
}

/// Student's t at the 97.5 % point for 1 to 30 degrees of freedom: the
/// two-sided 95 % level that [`NOISE_SIGMAS`] stands for with many runs.
const T_975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// t at 97.5 % for `df` degrees of freedom (1.96 past the table).
pub fn t_975(df: usize) -> f64 {
    match df {
        0 => f64::INFINITY,
        d if d <= T_975.len() => T_975[d - 1],
        _ => 1.96,
    }
}

/// Why a cell cannot carry a verdict, in words (its flags, `; `-joined);
/// None when it holds. A cell whose spread is past
/// [`crate::stats::instability`]'s lines, or too few of whose samples held
/// their CPU ([`SetAside::flag`]), is not trusted even when its document
/// did not flag it (a document written by hand or by an older numaprobe).
pub fn cell_trust(cell: &CellEvidence) -> Option<String> {
    let mut why: Vec<String> = if cell.flagged {
        cell.flags.clone()
    } else {
        Vec::new()
    };
    // A figure pooled over runs had each run judged when it was pooled
    // (`super::pool`): the spread between its runs is its noise.
    let pooled = cell.across_runs.is_some();
    if !pooled && !why.iter().any(|f| f.starts_with("unstable:")) {
        if let Some(w) = crate::stats::instability(cell.cv, cell.min, cell.max, cell.kept) {
            why.push(w);
        }
    }
    if !pooled && !why.iter().any(|f| f.starts_with("preempted")) {
        if let Some(w) = cell.set_aside.flag(cell.kept) {
            why.push(w);
        }
    }
    if cell.flagged && why.is_empty() {
        why.push("flagged (no reason given)".into());
    }
    (!why.is_empty()).then(|| why.join("; "))
}

/// The change from `reference` in percent of it (an infinite one from zero).
pub fn percent_of(change: f64, reference: f64) -> f64 {
    if reference != 0.0 {
        change / reference * 100.0
    } else if change == 0.0 {
        0.0
    } else {
        f64::INFINITY.copysign(change)
    }
}

/// How many standard deviations of the difference between two runs a
/// change must exceed to stand out: 2, about the 95 % two-sided level.
/// The standard deviation of one cell's samples stands for how far a
/// whole run may fall from another, not for how well its median is known:
/// the samples of one run are taken seconds apart and move together with
/// what the host does over seconds, so the standard error of their median
/// promises a precision that a second run does not keep. Measured on a
/// quiet 2-CPU VM, eight identical `latency` runs: of their 28 pairs,
/// 5 changes exceeded each side's standard deviation (and p < 0.05); none
/// exceeded twice the two added in quadrature, while 4 KiB pages against
/// THP (+22 to +45 %) still did on all three pairs
/// (doc/footprint-and-trust.md, "How verdicts are judged").
pub const NOISE_SIGMAS: f64 = 2.0;

/// Does a change of `change` (in the unit of `reference`) stand out: more
/// than `min_effect_pct` percent of `reference`, and beyond the noise of
/// `noises` (each side's [`CellEvidence::noise`], see [`noise_bound`])?
pub fn stands_out(change: f64, reference: f64, min_effect_pct: f64, noises: &[f64]) -> bool {
    percent_of(change, reference).abs() > min_effect_pct && beyond_noise(change, noises)
}

/// Is `change` larger than [`noise_bound`] of `noises`?
pub fn beyond_noise(change: f64, noises: &[f64]) -> bool {
    change.abs() > noise_bound(noises)
}

/// The least change that stands out from `noises` (each a standard
/// deviation, in the change's unit): [`NOISE_SIGMAS`] times their sum in
/// quadrature, the standard deviation of a difference of independent draws.
pub fn noise_bound(noises: &[f64]) -> f64 {
    NOISE_SIGMAS * noises.iter().map(|n| n * n).sum::<f64>().sqrt()
}

/// [`noise_bound`] of `noises` in percent of `reference`, for words.
pub fn noise_pct(reference: f64, noises: &[f64]) -> f64 {
    if reference == 0.0 {
        0.0
    } else {
        noise_bound(noises) / reference.abs() * 100.0
    }
}

/// Load (1-minute average or other runnable tasks) per allowed CPU.
fn per_cpu(v: f64, c: &SystemCheck) -> f64 {
    v / c.allowed_cpus.max(1) as f64
}

/// Why two runs' conditions differ enough that a change between them may be
/// the load's: one run's system check warned and the other's did not; their
/// load averages or other runnable tasks differ by
/// [`LOAD_WARN_SHARE`] per allowed CPU or more (the share at which one
/// warns); or one run's CPUs were stolen past [`STEAL_WARN_PERCENT`] and the
/// other's were not. None when they are alike, or when a run does not say
/// (a document without a system check).
pub fn conditions_differ(a: Option<&SystemCheck>, b: Option<&SystemCheck>) -> Option<String> {
    let (a, b) = (a?, b?);
    let mut why = Vec::new();
    if a.quiet() != b.quiet() {
        let (loud, name) = if a.quiet() { (b, "B") } else { (a, "A") };
        why.push(format!(
            "only {name}'s system check warned ({})",
            loud.warnings.first().map_or("", String::as_str)
        ));
    }
    if let (Some(x), Some(y)) = (a.load_1m, b.load_1m) {
        if (per_cpu(x, a) - per_cpu(y, b)).abs() >= LOAD_WARN_SHARE {
            why.push(format!(
                "load average {x:.2} on {} CPU(s) in A, {y:.2} on {} in B",
                a.allowed_cpus, b.allowed_cpus
            ));
        }
    }
    if let (Some(x), Some(y)) = (a.other_running, b.other_running) {
        if (per_cpu(x as f64, a) - per_cpu(y as f64, b)).abs() >= LOAD_WARN_SHARE {
            why.push(format!("{x} other runnable task(s) in A, {y} in B"));
        }
    }
    if let (Some(x), Some(y)) = (a.steal_percent, b.steal_percent) {
        if (x > STEAL_WARN_PERCENT) != (y > STEAL_WARN_PERCENT) {
            why.push(format!("steal {x:.1} % in A, {y:.1} % in B"));
        }
    }
    (!why.is_empty()).then(|| format!("the runs' conditions differ: {}", why.join("; ")))
}

#[cfg(test)]
#[path = "trust_tests.rs"]
mod tests;
