//! Several packages on one NUMA node: uniform memory, or memory the firmware
//! interleaves across the sockets? Told from per-page (or per-line) latency
//! samples taken on that one node.
//!
//! A front-side-bus machine (several packages behind one memory controller)
//! gives every page the same latency: one mode. Firmware "node interleave"
//! (or NUMA switched off) spreads consecutive pages or lines over every
//! socket's memory, so from one CPU some pages are local and the rest one
//! link away: two modes, the remote one about 1.3x to 2x the local one, in
//! the proportion 1 : (sockets - 1). The iXBT Opteron study measured what
//! that costs: node interleave helps an OS that does not know NUMA (5-15 %
//! on some SPEC CPU2000 tests) and should stay "Disabled" under one that
//! does.
//!
//! The test: split the sorted samples where the two sides' within-cluster
//! spread is least (1-D two-means, exact), then ask Ashman's D of the two
//! clusters, a minimum share for the smaller one, a minimum gap between the
//! modes (a link hop costs tens of percent; a few percent is the noise of
//! one memory), and a valley between them. Samples above 4x the median (an
//! interrupt, a page fault) are set aside first.
//!
//! Why the valley: two-means cuts *any* sample in two, and the halves of one
//! normal mode have Ashman's D of 2.66 (means 1.6 sigma apart, each half's
//! sd 0.6 sigma), past the textbook D > 2 for fitted mixtures; one wide
//! mode (a CV above ~9 %) also clears the gap. Two real modes have few
//! samples half-way between them; one mode has its densest part there.

use serde::{Deserialize, Serialize};

/// Fewer samples than this say nothing.
pub const MIN_SAMPLES: usize = 32;
/// Ashman's D above which two modes are told apart.
pub const MIN_ASHMAN_D: f64 = 2.0;
/// The smaller mode's least share of the samples: interleaving over n
/// sockets makes 1/n of the pages local, at least 1/8 on an 8-socket board.
pub const MIN_SHARE: f64 = 0.1;
/// The least ratio of the slow mode to the fast one: below it the "modes"
/// are one memory's spread (a page on another channel, a DRAM page miss).
pub const MIN_GAP: f64 = 1.15;
/// Samples within an eighth of the gap of the point half-way between the
/// modes, against those as near each mode's median: above this ratio (of
/// the sparser mode's) there is no valley, so one mode cut in two.
pub const MAX_VALLEY: f64 = 0.5;
/// How far the near mode's share may lie from the 1/packages that
/// interleaving over the node's packages gives (absolute): the share of
/// a few thousand lines estimates 1/n to within a few percent, while a
/// noisy clock's two "modes" fall anywhere (75 : 25 on two packages under
/// software emulation).
pub const SHARE_TOLERANCE: f64 = 0.1;

/// The thresholds of a two-mode test: the interleave test's are the
/// constants above ([`INTERLEAVE`]); the one-package node's test
/// (`analysis::host_nodes`) asks more of every one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    pub min_samples: usize,
    pub min_ashman_d: f64,
    pub min_share: f64,
    pub min_gap: f64,
    pub max_valley: f64,
}

/// The interleave test's thresholds.
pub const INTERLEAVE: Rule = Rule {
    min_samples: MIN_SAMPLES,
    min_ashman_d: MIN_ASHMAN_D,
    min_share: MIN_SHARE,
    min_gap: MIN_GAP,
    max_valley: MAX_VALLEY,
};

/// What the samples show.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Verdict {
    TooFew {
        samples: usize,
    },
    /// Every page answers alike: uniform memory.
    OneMode {
        median: f64,
        samples: usize,
    },
    /// Near and far pages mixed: memory interleaved across sockets.
    TwoModes {
        near: f64,
        far: f64,
        /// Share of the samples in the near mode.
        near_share: f64,
        ashman_d: f64,
        samples: usize,
    },
    /// Two modes, but not in the proportion interleaving over the node's
    /// packages gives: a noisy clock or a busy machine, not read as
    /// interleaving.
    Unmatched {
        near: f64,
        far: f64,
        near_share: f64,
        /// 1 / packages: the near share interleaving would give.
        expected_near_share: f64,
        samples: usize,
    },
}

fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n;
    (m, var.sqrt())
}

fn median_sorted(v: &[f64]) -> f64 {
    crate::stats::median_of_sorted(v).unwrap_or(f64::NAN)
}

/// Samples of sorted `v` within `half` of `at`.
fn around(v: &[f64], at: f64, half: f64) -> usize {
    let lo = v.partition_point(|&x| x < at - half);
    let hi = v.partition_point(|&x| x <= at + half);
    hi - lo
}

/// Whether sorted `v` is sparse half-way between `near` and `far`: at most
/// `max_valley` ([`MAX_VALLEY`] for interleaving) of what lies as near the
/// sparser of the two modes.
fn has_valley(v: &[f64], near: f64, far: f64, max_valley: f64) -> bool {
    let half = (far - near) / 8.0;
    let peak = around(v, near, half).min(around(v, far, half));
    let valley = around(v, (near + far) / 2.0, half);
    (valley as f64) <= max_valley * peak as f64
}

/// Judge latency samples (any unit where lower is nearer; non-finite and
/// non-positive values are dropped) by the interleave test's thresholds.
pub fn judge(samples: &[f64]) -> Verdict {
    judge_by(samples, &INTERLEAVE)
}

/// [`judge`] by the thresholds of `rule`.
pub fn judge_by(samples: &[f64], rule: &Rule) -> Verdict {
    let mut v: Vec<f64> = samples
        .iter()
        .copied()
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    v.sort_by(f64::total_cmp);
    if v.len() < rule.min_samples {
        return Verdict::TooFew { samples: v.len() };
    }
    let cap = 4.0 * median_sorted(&v);
    v.retain(|&x| x <= cap);
    let n = v.len();
    // Best split: prefix sums give each side's sum of squares in O(1).
    let mut s = vec![0.0; n + 1];
    let mut q = vec![0.0; n + 1];
    for (i, x) in v.iter().enumerate() {
        s[i + 1] = s[i] + x;
        q[i + 1] = q[i] + x * x;
    }
    let ss = |a: usize, b: usize| {
        let k = (b - a) as f64;
        let sum = s[b] - s[a];
        (q[b] - q[a]) - sum * sum / k
    };
    let split = (1..n)
        .min_by(|&i, &j| (ss(0, i) + ss(i, n)).total_cmp(&(ss(0, j) + ss(j, n))))
        .unwrap_or(1);
    let (lo, hi) = v.split_at(split);
    let (m1, s1) = mean_sd(lo);
    let (m2, s2) = mean_sd(hi);
    let spread = (s1 * s1 + s2 * s2).sqrt();
    let d = if spread > 0.0 {
        std::f64::consts::SQRT_2 * (m2 - m1).abs() / spread
    } else if m2 > m1 {
        f64::INFINITY
    } else {
        0.0
    };
    let share = lo.len() as f64 / n as f64;
    let (near, far) = (median_sorted(lo), median_sorted(hi));
    let two = d > rule.min_ashman_d
        && share.min(1.0 - share) >= rule.min_share
        && far >= rule.min_gap * near
        && has_valley(&v, near, far, rule.max_valley);
    if two {
        Verdict::TwoModes {
            near,
            far,
            near_share: share,
            ashman_d: d,
            samples: n,
        }
    } else {
        Verdict::OneMode {
            median: median_sorted(&v),
            samples: n,
        }
    }
}

/// [`judge`] for a node holding `packages` packages: two modes count as
/// interleaving only in the proportion it gives, 1 : (packages - 1) near to
/// far (within [`SHARE_TOLERANCE`]); otherwise they are [`Verdict::Unmatched`].
pub fn judge_packages(samples: &[f64], packages: usize) -> Verdict {
    match judge(samples) {
        Verdict::TwoModes {
            near,
            far,
            near_share,
            samples,
            ..
        } if packages >= 2 && (near_share - 1.0 / packages as f64).abs() > SHARE_TOLERANCE => {
            Verdict::Unmatched {
                near,
                far,
                near_share,
                expected_near_share: 1.0 / packages as f64,
                samples,
            }
        }
        v => v,
    }
}

/// The verdict in words for a node that holds `packages` packages, with what
/// to change.
pub fn explain(node: u32, packages: usize, verdict: &Verdict) -> String {
    match verdict {
        Verdict::TooFew { samples } => format!(
            "node {node} holds {packages} packages; {samples} latency sample(s) are too few (at least {MIN_SAMPLES}) to tell uniform from interleaved memory"
        ),
        Verdict::OneMode { median, samples } => format!(
            "node {node} holds {packages} packages and its memory answers alike ({samples} samples, one mode at {median:.1} ns): uniform memory (a shared front-side bus or memory controller); nothing to change"
        ),
        Verdict::TwoModes {
            near,
            far,
            near_share,
            ashman_d,
            samples,
        } => format!(
            "node {node} holds {packages} packages and its memory answers in two modes ({:.0} % of {samples} samples at {near:.1} ns, the rest at {far:.1} ns, {:.2}x; Ashman's D {ashman_d:.1}): the firmware interleaves memory across the sockets (node interleaving on, or NUMA off), so every thread gets remote memory for {:.0} % of its pages. In the BIOS, turn node interleaving off (enable NUMA) so the OS can place memory near its threads; the iXBT Opteron study found node interleave worth keeping only for an OS that does not know NUMA",
            near_share * 100.0,
            far / near,
            (1.0 - near_share) * 100.0
        ),
        Verdict::Unmatched {
            near,
            far,
            near_share,
            expected_near_share,
            samples,
        } => format!(
            "node {node} holds {packages} packages; its memory answers in two modes ({:.0} % of {samples} samples at {near:.1} ns, the rest at {far:.1} ns), but interleaving over {packages} packages would put {:.0} % near: not read as interleaved memory (a noisy clock or a busy machine spreads samples so); run again on a quiet machine to be sure",
            near_share * 100.0,
            expected_near_share * 100.0
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    /// Roughly normal noise: the mean of 12 uniforms, centred, scaled.
    fn normal(r: &mut SplitMix64, mean: f64, sd: f64) -> f64 {
        let u: f64 = (0..12)
            .map(|_| (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
            .sum();
        mean + sd * (u - 6.0)
    }

    fn modes(seed: u64, parts: &[(usize, f64, f64)]) -> Vec<f64> {
        let mut r = SplitMix64::new(seed);
        let mut out = Vec::new();
        for &(n, mean, sd) in parts {
            out.extend((0..n).map(|_| normal(&mut r, mean, sd)));
        }
        // Interleaved pages come in address order, not sorted.
        for i in (1..out.len()).rev() {
            let j = r.index(i + 1);
            out.swap(i, j);
        }
        out
    }

    #[test]
    fn uniform_memory_is_one_mode() {
        for seed in 0..20 {
            let v = modes(seed, &[(512, 95.0, 3.0)]);
            assert!(
                matches!(judge(&v), Verdict::OneMode { median, .. } if (median - 95.0).abs() < 1.0),
                "seed {seed}: {:?}",
                judge(&v)
            );
        }
    }

    #[test]
    fn two_sockets_interleaved_is_two_modes_half_near() {
        for seed in 0..20 {
            let v = modes(seed, &[(256, 80.0, 3.0), (256, 130.0, 4.0)]);
            match judge(&v) {
                Verdict::TwoModes {
                    near,
                    far,
                    near_share,
                    ashman_d,
                    ..
                } => {
                    assert!((near - 80.0).abs() < 2.0 && (far - 130.0).abs() < 2.0);
                    assert!((near_share - 0.5).abs() < 0.02, "{near_share}");
                    assert!(ashman_d > 5.0);
                }
                other => panic!("seed {seed}: {other:?}"),
            }
        }
    }

    #[test]
    fn four_sockets_interleaved_is_a_quarter_near() {
        let v = modes(7, &[(128, 80.0, 3.0), (384, 125.0, 6.0)]);
        match judge(&v) {
            Verdict::TwoModes { near_share, .. } => assert!((near_share - 0.25).abs() < 0.03),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn interrupts_and_wide_noise_do_not_make_a_second_mode() {
        // A few samples hit by an interrupt (10x), and a few percent of
        // slower pages (a DRAM page miss): still one memory.
        let mut v = modes(3, &[(500, 90.0, 4.0), (12, 100.0, 2.0)]);
        v.extend([900.0, 1500.0, 2000.0]);
        assert!(
            matches!(judge(&v), Verdict::OneMode { .. }),
            "{:?}",
            judge(&v)
        );
        // Two modes closer than a link hop (5 %): not interleaving.
        let v = modes(4, &[(256, 90.0, 0.5), (256, 94.5, 0.5)]);
        assert!(
            matches!(judge(&v), Verdict::OneMode { .. }),
            "{:?}",
            judge(&v)
        );
        // A far mode too small to be a socket's share.
        let v = modes(5, &[(490, 90.0, 3.0), (22, 140.0, 3.0)]);
        assert!(
            matches!(judge(&v), Verdict::OneMode { .. }),
            "{:?}",
            judge(&v)
        );
    }

    #[test]
    fn two_modes_count_as_interleaving_only_in_its_proportion() {
        // Half near on two packages, a quarter on four: interleaving.
        let half = modes(8, &[(256, 80.0, 3.0), (256, 130.0, 4.0)]);
        assert!(matches!(judge_packages(&half, 2), Verdict::TwoModes { .. }));
        let quarter = modes(9, &[(128, 80.0, 3.0), (384, 125.0, 6.0)]);
        assert!(matches!(
            judge_packages(&quarter, 4),
            Verdict::TwoModes { .. }
        ));
        // A quarter near where two packages would give half: not interleaving
        // (what a coarse emulated clock gave), and the words say why.
        match judge_packages(&quarter, 2) {
            Verdict::Unmatched {
                near_share,
                expected_near_share,
                ..
            } => {
                assert!((near_share - 0.25).abs() < 0.03, "{near_share}");
                assert_eq!(expected_near_share, 0.5);
            }
            other => panic!("{other:?}"),
        }
        let t = explain(3, 2, &judge_packages(&quarter, 2));
        assert!(
            t.starts_with(
                "node 3 holds 2 packages; its memory answers in two modes (25 % of 512 samples"
            ) && t.contains("would put 50 % near: not read as interleaved memory"),
            "{t}"
        );
        // Half near on four packages is not four-way interleaving either.
        assert!(matches!(
            judge_packages(&half, 4),
            Verdict::Unmatched { .. }
        ));
        // The edges: within the tolerance is interleaving, past it is not.
        let edge = |near: usize| modes(10, &[(near, 80.0, 2.0), (1000 - near, 130.0, 2.0)]);
        assert!(matches!(
            judge_packages(&edge(590), 2),
            Verdict::TwoModes { .. }
        ));
        assert!(matches!(
            judge_packages(&edge(610), 2),
            Verdict::Unmatched { .. }
        ));
        assert!(matches!(
            judge_packages(&edge(410), 2),
            Verdict::TwoModes { .. }
        ));
        assert!(matches!(
            judge_packages(&edge(390), 2),
            Verdict::Unmatched { .. }
        ));
        // One mode and too few pass through unchanged.
        let one = modes(11, &[(512, 95.0, 3.0)]);
        assert_eq!(judge_packages(&one, 2), judge(&one));
        assert_eq!(judge_packages(&[], 2), Verdict::TooFew { samples: 0 });
    }

    #[test]
    fn one_wide_mode_is_one_mode_though_its_halves_pass_d_and_the_gap() {
        // A CV of 30 %: two-means' halves are 1.6 sigma apart (gap 1.7x)
        // with Ashman's D near 2.66; there is no valley, so one mode.
        for seed in 0..10 {
            let v = modes(seed, &[(4096, 100.0, 30.0)]);
            assert!(
                matches!(judge(&v), Verdict::OneMode { .. }),
                "seed {seed}: {:?}",
                judge(&v)
            );
        }
        // A flat spread from 60 to 160 ns: no valley either.
        let flat: Vec<f64> = (0..2000).map(|i| 60.0 + i as f64 / 20.0).collect();
        assert!(
            matches!(judge(&flat), Verdict::OneMode { .. }),
            "{:?}",
            judge(&flat)
        );
        // Two wide modes with a valley between them: still two.
        let v = modes(12, &[(2048, 80.0, 8.0), (2048, 140.0, 10.0)]);
        assert!(
            matches!(judge(&v), Verdict::TwoModes { .. }),
            "{:?}",
            judge(&v)
        );
    }

    #[test]
    fn the_valley_is_counted_around_the_midpoint_against_the_sparser_mode() {
        // Modes at 100 and 180 (half-width 10): 40 near each mode, `mid`
        // at the midpoint 140, the rest far outside every window.
        let with = |mid: usize| {
            let mut v = vec![100.0; 40];
            v.extend(vec![180.0; 40]);
            v.extend(vec![140.0; mid]);
            v.sort_by(f64::total_cmp);
            has_valley(&v, 100.0, 180.0, MAX_VALLEY)
        };
        assert!(with(0) && with(20));
        assert!(!with(21));
        // The windows are closed: a sample exactly at the edge counts.
        let v = [90.0, 100.0, 110.0, 130.0, 150.0, 170.0, 180.0, 190.0];
        assert_eq!(around(&v, 100.0, 10.0), 3);
        assert_eq!(around(&v, 140.0, 10.0), 2);
        assert_eq!(around(&v, 140.0, 9.0), 0);
        // The sparser mode sets the bar.
        let mut v = vec![100.0; 100];
        v.extend(vec![180.0; 10]);
        v.extend(vec![140.0; 6]);
        v.sort_by(f64::total_cmp);
        assert!(!has_valley(&v, 100.0, 180.0, MAX_VALLEY));
    }

    #[test]
    fn too_few_or_unusable_samples_say_so() {
        assert_eq!(judge(&[]), Verdict::TooFew { samples: 0 });
        let v = vec![f64::NAN; 100];
        assert_eq!(judge(&v), Verdict::TooFew { samples: 0 });
        let v: Vec<f64> = (0..31).map(f64::from).map(|x| x + 1.0).collect();
        assert_eq!(judge(&v), Verdict::TooFew { samples: 31 });
        // Identical samples: one mode, no division by zero.
        assert!(matches!(judge(&[100.0; 64]), Verdict::OneMode { .. }));
    }

    #[test]
    fn the_words_name_the_node_and_what_to_change() {
        let v = modes(1, &[(256, 80.0, 3.0), (256, 130.0, 4.0)]);
        let t = explain(0, 2, &judge(&v));
        assert!(
            t.contains("node 0 holds 2 packages") && t.contains("turn node interleaving off"),
            "{t}"
        );
        let t = explain(0, 2, &judge(&modes(1, &[(256, 95.0, 3.0)])));
        assert!(
            t.contains("uniform memory") && t.contains("nothing to change"),
            "{t}"
        );
    }
}
