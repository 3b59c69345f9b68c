//! One NUMA node of one package whose memory answers in two groups: a
//! virtual machine (VM) given no NUMA layout while its memory lies on two
//! of the host's nodes. Every tool then sees a one-node machine whose
//! figures fall into two modes (a chase through pages of both host nodes,
//! a stream that reads some of them a link away). Told from the same
//! per-line latency samples as the interleave test, by the same two-means
//! split, with every threshold raised: here no package count predicts the
//! proportion, so nothing but the separation itself speaks for two groups,
//! and one memory's own spread (DRAM row misses, refresh, a long tail of
//! interrupted loads) must never pass for them.
//!
//! What the rule asks, against the interleave test's: 1,024 samples, not
//! 32 (the check takes 4,096); Ashman's D above 3, not 2; the far group at
//! least 1.3x the near one, not 1.15x (a host's remote node costs 1.3-2x;
//! a DRAM row miss against a hit is within 1.3x of it); at most a quarter,
//! not half, as many samples half-way between the groups as near the
//! sparser one; the smaller group at least a tenth, as there.

use super::interleave::{self, Rule, Verdict};

/// The one-package test's thresholds.
pub const ONE_PACKAGE: Rule = Rule {
    min_samples: 1024,
    min_ashman_d: 3.0,
    min_share: 0.1,
    min_gap: 1.3,
    max_valley: 0.25,
};

/// Judge one node's per-line samples (ns) by [`ONE_PACKAGE`].
pub fn judge(samples: &[f64]) -> Verdict {
    interleave::judge_by(samples, &ONE_PACKAGE)
}

/// The verdict in words for `node`, whose `buffer_bytes` were sampled.
pub fn explain(node: u32, buffer_bytes: u64, verdict: &Verdict) -> String {
    let size = crate::units::format_size(buffer_bytes);
    match verdict {
        Verdict::TooFew { samples } => format!(
            "node {node} holds one package; {samples} latency sample(s) of its memory are too few (at least {}) to tell one group of pages from two",
            ONE_PACKAGE.min_samples
        ),
        Verdict::OneMode { median, samples } => format!(
            "node {node} holds one package and the {samples} lines sampled of {size} of its memory answer in one group (at {median:.0} ns): no sign of memory on two host nodes in what was sampled"
        ),
        Verdict::TwoModes {
            near,
            far,
            near_share,
            samples,
            ..
        }
        | Verdict::Unmatched {
            near,
            far,
            near_share,
            samples,
            ..
        } => format!(
            "node {node} holds one package, yet its memory answers in two groups: {:.0} % of {samples} lines sampled at ~{near:.0} ns, {:.0} % at ~{far:.0} ns ({:.2}x); a VM's memory may span the host's NUMA nodes, and every figure of this node then mixes the two: bind the VM's memory to one host node, or give the guest the host's NUMA layout",
            near_share * 100.0,
            (1.0 - near_share) * 100.0,
            far / near
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
            .map(|_| r.index(1 << 20) as f64 / (1 << 20) as f64)
            .sum();
        mean + sd * (u - 6.0)
    }

    /// `n` samples of each (count, mean, sd) group, shuffled.
    fn groups(seed: u64, parts: &[(usize, f64, f64)]) -> Vec<f64> {
        let mut r = SplitMix64::new(seed);
        let mut out = Vec::new();
        for &(n, mean, sd) in parts {
            out.extend((0..n).map(|_| normal(&mut r, mean, sd)));
        }
        for i in (1..out.len()).rev() {
            out.swap(i, r.index(i + 1));
        }
        out
    }

    fn is_one(v: &Verdict) -> bool {
        matches!(v, Verdict::OneMode { .. })
    }

    #[test]
    fn one_group_is_one_group() {
        for seed in 0..10 {
            let v = judge(&groups(seed, &[(4096, 140.0, 6.0)]));
            assert!(
                matches!(v, Verdict::OneMode { median, samples: 4096 } if (median - 140.0).abs() < 1.0),
                "seed {seed}: {v:?}"
            );
        }
    }

    #[test]
    fn one_group_with_noise_a_long_tail_and_outliers_is_one_group() {
        for seed in 0..10 {
            let mut r = SplitMix64::new(100 + seed);
            let mut v = groups(seed, &[(3600, 110.0, 5.0)]);
            // A long tail: an eighth of the loads slowed by anything from 0
            // to 3x (exponential, mean 60 ns): row misses, refresh, a TLB
            // walk, a neighbour's traffic.
            v.extend((0..500).map(|_| {
                let u = (r.index(1 << 20) as f64 + 0.5) / (1 << 20) as f64;
                110.0 - 60.0 * u.ln()
            }));
            // Interrupts: far outliers.
            v.extend([2000.0, 5000.0, 9000.0, 40_000.0]);
            let got = judge(&v);
            assert!(is_one(&got), "seed {seed}: {got:?}");
        }
        // One wide group (CV 25 %), whose two-means halves pass the gap.
        let got = judge(&groups(3, &[(4096, 140.0, 35.0)]));
        assert!(is_one(&got), "{got:?}");
        // A shoulder: a fifth of the lines a little slower (1.2x), as a
        // DRAM row miss against a hit.
        let got = judge(&groups(4, &[(3300, 100.0, 4.0), (800, 120.0, 4.0)]));
        assert!(is_one(&got), "{got:?}");
    }

    #[test]
    fn two_clear_groups_are_two_and_say_what_they_are() {
        for seed in 0..10 {
            let v = groups(seed, &[(1640, 110.0, 6.0), (2456, 180.0, 9.0)]);
            match judge(&v) {
                Verdict::TwoModes {
                    near,
                    far,
                    near_share,
                    ..
                } => {
                    assert!((near - 110.0).abs() < 2.0 && (far - 180.0).abs() < 2.0);
                    assert!((near_share - 0.4).abs() < 0.02, "{near_share}");
                }
                other => panic!("seed {seed}: {other:?}"),
            }
        }
        let v = groups(1, &[(1640, 110.0, 6.0), (2456, 180.0, 9.0)]);
        let t = explain(0, 32 << 20, &judge(&v));
        assert!(
            t.starts_with(
                "node 0 holds one package, yet its memory answers in two groups: 40 % of 4096 lines sampled at ~110 ns, 60 % at ~180 ns (1.6"
            ) && t.contains("a VM's memory may span the host's NUMA nodes"),
            "{t}"
        );
        // A tenth on the far node is still two groups; less is not.
        let small = |far: usize| groups(2, &[(4096 - far, 100.0, 4.0), (far, 160.0, 6.0)]);
        assert!(matches!(judge(&small(450)), Verdict::TwoModes { .. }));
        assert!(is_one(&judge(&small(350))));
    }

    #[test]
    fn two_groups_too_close_or_too_wide_are_one() {
        // 1.2x apart, each tight: past the interleave test's 1.15x, short
        // of this one's 1.3x.
        let v = groups(5, &[(2048, 100.0, 2.0), (2048, 120.0, 2.0)]);
        assert!(matches!(interleave::judge(&v), Verdict::TwoModes { .. }));
        assert!(is_one(&judge(&v)));
        // 1.35x apart: two groups.
        let v = groups(5, &[(2048, 100.0, 2.0), (2048, 135.0, 2.0)]);
        assert!(
            matches!(judge(&v), Verdict::TwoModes { .. }),
            "{:?}",
            judge(&v)
        );
        // 1.4x apart but overlapping: the interleave test's half valley
        // passes, this one's quarter does not.
        let v = groups(6, &[(2048, 100.0, 11.0), (2048, 140.0, 11.0)]);
        assert!(matches!(interleave::judge(&v), Verdict::TwoModes { .. }));
        assert!(is_one(&judge(&v)), "{:?}", judge(&v));
        // Two tight groups 1.4x apart over a wide even spread of a fifth of
        // the samples: a deep valley, but Ashman's D about 2.6 passes the
        // interleave test's 2, not this one's 3.
        let mut r = SplitMix64::new(9);
        let mut v = groups(9, &[(1800, 100.0, 2.0), (1800, 140.0, 2.0)]);
        v.extend((0..900).map(|_| 50.0 + r.index(200_000) as f64 / 1000.0));
        let d = match interleave::judge(&v) {
            Verdict::TwoModes { ashman_d, .. } => ashman_d,
            other => panic!("{other:?}"),
        };
        assert!(d > 2.0 && d < 3.0, "{d}");
        assert!(is_one(&judge(&v)), "{:?}", judge(&v));
    }

    #[test]
    fn few_samples_say_so() {
        let v = groups(7, &[(500, 110.0, 6.0), (523, 180.0, 9.0)]);
        assert_eq!(judge(&v), Verdict::TooFew { samples: 1023 });
        let t = explain(2, 32 << 20, &judge(&v));
        assert_eq!(
            t,
            "node 2 holds one package; 1023 latency sample(s) of its memory are too few (at least 1024) to tell one group of pages from two"
        );
        let t = explain(0, 32 << 20, &judge(&groups(8, &[(4096, 140.0, 6.0)])));
        assert!(
            t.starts_with(
                "node 0 holds one package and the 4096 lines sampled of 32 MiB of its memory answer in one group (at 140 ns)"
            ),
            "{t}"
        );
        // An unmatched verdict (the interleave test's) reads as two groups.
        let u = Verdict::Unmatched {
            near: 100.0,
            far: 150.0,
            near_share: 0.25,
            expected_near_share: 0.5,
            samples: 2000,
        };
        assert!(explain(1, 1 << 20, &u)
            .contains("25 % of 2000 lines sampled at ~100 ns, 75 % at ~150 ns (1.50x)"));
    }
}
