//! The trust flags of one measured figure: every reason its kept samples
//! cannot be taken as is (a spread past pyperf's and hyperfine's lines, two
//! modes, too few samples that held their CPU), in the words every format
//! prints, and the star that marks a flagged figure. One rule for every
//! figure sampled under a stop rule (latency and bandwidth matrix cells,
//! c2c pair figures, lock runs, sweep points, the system peak,
//! loaded-latency points, a loaded point's samples held only when the chase
//! and every load thread held their CPUs), so a figure is flagged for the
//! same reasons wherever it appears. A figure made of rounds instead (a
//! policy's throughput, a `tune` candidate's wall times) is judged by the
//! same spread and two-modes lines ([`instability`], [`two_modes`]), and a
//! policy's also when none of its rounds held its CPUs.
//!
//! Beside these, other tasks' busy CPUs ([`crate::beside`]) star every one
//! of those figures (a sweep point only past the caches its core has to
//! itself) and a policy's throughput; `tune` records them per run and names
//! them in a note instead. The knee and the peak of a loaded-latency curve
//! come from its trusted points only.

use super::{instability, two_modes, Measured, SetAside};

/// The mark a flagged figure carries after its value in every format.
pub const STAR: &str = "*";

/// [`STAR`] for a flagged figure, nothing for a trusted one.
pub fn star(flagged: bool) -> &'static str {
    if flagged {
        STAR
    } else {
        ""
    }
}

/// Why the figure of these kept `samples` (their CV, fastest and slowest
/// given, so a figure that keeps only its count is judged too) cannot be
/// trusted, in `unit`: [`instability`], [`two_modes`] and
/// [`SetAside::flag`], in that order; empty for a trusted figure.
pub fn figure_flags(
    samples: &[f64],
    cv: f64,
    min: f64,
    max: f64,
    kept: usize,
    set_aside: &SetAside,
    unit: &str,
) -> Vec<String> {
    let mut flags = Vec::new();
    flags.extend(instability(cv, min, max, kept));
    flags.extend(two_modes(samples).map(|m| m.flag(unit)));
    flags.extend(set_aside.flag(kept));
    flags
}

/// Add each of `new` to `flags` unless a flag of the same kind (its first
/// word, as "unstable:" or "preempted") is already there, so a figure
/// judged twice is not flagged twice.
pub fn merge(flags: &mut Vec<String>, new: Vec<String>) {
    for f in new {
        let kind = f.split([' ', ':']).next().unwrap_or_default().to_string();
        if !flags
            .iter()
            .any(|g| g.split([' ', ':']).next() == Some(&kind))
        {
            flags.push(f);
        }
    }
}

impl Measured {
    /// [`figure_flags`] of this measurement's kept samples.
    pub fn flags(&self, unit: &str) -> Vec<String> {
        figure_flags(
            &self.samples,
            self.summary.cv,
            self.summary.min,
            self.summary.max,
            self.samples.len(),
            &self.set_aside,
            unit,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tight_figure_is_trusted_and_unstarred() {
        let s = [100.0, 101.0, 99.0, 100.5];
        assert!(figure_flags(&s, 0.01, 99.0, 101.0, 4, &SetAside::default(), "ns").is_empty());
        assert_eq!(star(false), "");
        assert_eq!(star(true), "*");
    }

    #[test]
    fn spread_two_modes_and_set_aside_each_flag_in_order() {
        let s = [100.0, 101.0, 100.0, 200.0, 201.0, 200.0];
        let aside = SetAside {
            preempted: 9,
            shortened: 1,
            ..SetAside::default()
        };
        let f = figure_flags(&s, 0.35, 100.0, 201.0, 2, &aside, "ns");
        assert_eq!(f.len(), 3, "{f:?}");
        assert!(f[0].starts_with("unstable: CV 35.0 %"), "{f:?}");
        assert!(f[1].starts_with("two modes: 100.0 ns"), "{f:?}");
        assert!(f[2].starts_with("preempted in 82 %"), "{f:?}");
    }

    #[test]
    fn merge_skips_a_kind_already_flagged_and_keeps_a_new_one() {
        let mut f = vec!["unstable: CV 20 %".to_string()];
        merge(
            &mut f,
            vec!["unstable: CV 30 %".into(), "preempted in 50 %".into()],
        );
        assert_eq!(f, vec!["unstable: CV 20 %", "preempted in 50 %"]);
        merge(&mut f, vec!["two modes: 1 and 2".into()]);
        assert_eq!(f.len(), 3);
    }

    #[test]
    fn a_measurement_is_judged_on_its_kept_samples() {
        let samples = vec![100.0, 180.0, 90.0];
        let m = Measured {
            summary: crate::stats::Summary::of(&samples).unwrap(),
            samples,
            stop: crate::stats::StopReason::MaxSamples,
            warmup_runs: 0,
            elapsed_s: 0.0,
            set_aside: SetAside::default(),
        };
        let f = m.flags("ns");
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].contains("over 3 samples"), "{f:?}");
    }
}
