//! The progress figures in words: counts, elapsed time and ETA, the plain
//! line of a batch log and the closing line. Pure functions of the
//! library's [`Status`], tested without a clock.

use numaprobe_core::job::keeper::mean_eta_s;
use numaprobe_core::job::observer::Status;
use std::time::Duration;

/// How often a plain progress line is written when stderr is not a terminal.
pub const PLAIN_EVERY: Duration = Duration::from_secs(5);

/// A duration for people: `4.2 s`, `41 s`, `2 min 05 s`, `1 h 02 min`.
pub fn duration_text(s: f64) -> String {
    let s = s.max(0.0);
    if s < 10.0 {
        format!("{s:.1} s")
    } else if s < 60.0 {
        format!("{:.0} s", s.floor())
    } else if s < 3600.0 {
        let t = s.round() as u64;
        format!("{} min {:02} s", t / 60, t % 60)
    } else {
        let m = (s / 60.0).round() as u64;
        format!("{} h {:02} min", m / 60, m % 60)
    }
}

/// `latency 37/256, total 37/512` (`sep` between the two), or only the
/// phase's count when it is the whole run.
pub(crate) fn counts(s: &Status, sep: &str) -> String {
    let phase = if s.phase.is_empty() {
        format!("{}/{}", s.phase_done, s.phase_total)
    } else {
        format!("{} {}/{}", s.phase, s.phase_done, s.phase_total)
    };
    if s.total == s.phase_total && s.done == s.phase_done {
        phase
    } else {
        format!("{phase}{sep}total {}/{}", s.done, s.total)
    }
}

pub(crate) fn times(s: &Status) -> String {
    elapsed_eta(s.elapsed_s, s.eta_s)
}

/// `41 s elapsed, ETA 19 s`, or without the ETA while it is unknown.
pub(crate) fn elapsed_eta(elapsed_s: f64, eta_s: Option<f64>) -> String {
    let mut t = format!("{} elapsed", duration_text(elapsed_s));
    if let Some(e) = eta_s {
        t.push_str(&format!(", ETA {}", duration_text(e)));
    }
    t
}

/// The batch-log line: `numaprobe: latency 37/256, total 37/512, 41 s elapsed, ETA 19 s`.
pub fn plain_line(s: &Status) -> String {
    format!("numaprobe: {}, {}", counts(s, ", "), times(s))
}

/// The end: `measured 512 cells in 58.2 s (budget 60 s)`.
pub fn finish_line(cells: usize, elapsed_s: f64, budget_s: Option<f64>) -> String {
    let took = if elapsed_s < 60.0 {
        format!("{:.1} s", elapsed_s.max(0.0))
    } else {
        duration_text(elapsed_s)
    };
    let mut s = format!(
        "measured {cells} cell{} in {took}",
        if cells == 1 { "" } else { "s" }
    );
    if let Some(b) = budget_s {
        // As it was given: `60s` reads `60 s`, not `1 min 00 s`.
        let given = if b >= 120.0 {
            duration_text(b)
        } else if (b - b.round()).abs() < 1e-9 {
            format!("{} s", b.round())
        } else {
            format!("{b:.1} s")
        };
        s.push_str(&format!(" (budget {given})"));
    }
    s
}

/// The ETA of a run of `total` equal steps of which `done` have ended in
/// `elapsed_s`: the core's `mean_eta_s` (their mean time times the steps
/// left). Before the first step ends there is no mean; `planned_step_s`
/// (the time the command plans per step, when it has one) stands in for
/// it, else the ETA is unknown rather than a guess.
pub fn step_eta(
    elapsed_s: f64,
    done: usize,
    total: usize,
    planned_step_s: Option<f64>,
) -> Option<f64> {
    match (done, planned_step_s) {
        (0, None) => None,
        (_, planned) => Some(mean_eta_s(done, total, elapsed_s, planned.unwrap_or(0.0))),
    }
}

/// The ETA of a run whose steps have planned costs (`planned`, seconds, in
/// order), `done` of them ended in `elapsed_s`: what the steps left are
/// planned to cost, scaled by how long the ended ones took against their
/// plan. Steps of unequal cost (a sweep's points grow geometrically) get an
/// ETA that a mean step would miss several-fold. The scale is bounded so
/// one odd first step cannot make the ETA absurd.
pub fn planned_eta(elapsed_s: f64, done: usize, planned: &[f64]) -> f64 {
    let done = done.min(planned.len());
    let (ended, left) = planned.split_at(done);
    let (ended, left): (f64, f64) = (ended.iter().sum(), left.iter().sum());
    let scale = if done == 0 || ended <= 0.0 {
        1.0
    } else {
        (elapsed_s / ended).clamp(0.2, 20.0)
    };
    left * scale
}

/// The ETA of a run whose steps come in kinds that cost alike within a
/// kind and unlike across them, each kind recurring (policy's data cases
/// and policies, round after round): every step left costs the mean time
/// of the ended steps of its kind, or, while none of its kind has ended,
/// the mean of all ended steps. `kinds` holds every step's kind in run
/// order, `ended_s` the ended steps' times in order. A mean over all steps
/// would price the steps left at the mix of those ended, which is not the
/// mix left until a round ends. None before the first step ends.
pub fn kind_eta<K: PartialEq>(kinds: &[K], ended_s: &[f64]) -> Option<f64> {
    let done = ended_s.len().min(kinds.len());
    if done == 0 {
        return None;
    }
    let mean = |of: &dyn Fn(&K) -> bool| {
        let times: Vec<f64> = kinds[..done]
            .iter()
            .zip(ended_s)
            .filter(|(k, _)| of(k))
            .map(|(_, &t)| t)
            .collect();
        (!times.is_empty()).then(|| times.iter().sum::<f64>() / times.len() as f64)
    };
    let all = mean(&|_| true).unwrap_or(0.0);
    Some(
        kinds[done..]
            .iter()
            .map(|k| mean(&|x| x == k).unwrap_or(all))
            .sum(),
    )
}

/// How far the expected total of a planned run may move from the one stated
/// before it is stated again.
pub const RESTATE_BY: f64 = 0.25;

/// The total a planned run is now expected to take (`elapsed_s` plus
/// `eta_s`), when it is more than [`RESTATE_BY`] away from the total last
/// `stated`; None while it is not, or while too few of the `total` steps
/// (two, and a quarter) have ended for the scale to mean something: the
/// first steps of a sweep are its smallest, and one of them that loses its
/// CPU for a moment would move the scale of all the others.
pub fn restated_total(
    stated: f64,
    elapsed_s: f64,
    eta_s: f64,
    done: usize,
    total: usize,
) -> Option<f64> {
    if done < 2 || done.saturating_mul(4) < total || stated <= 0.0 {
        return None;
    }
    let now = elapsed_s + eta_s;
    ((now / stated - 1.0).abs() > RESTATE_BY).then_some(now)
}
