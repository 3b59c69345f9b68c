//! The statistics behind `diff`'s per-cell verdict: a two-sided
//! Mann–Whitney U test (is one run's distribution shifted against the
//! other's?) and a percentile bootstrap confidence interval of the
//! difference of the medians (by how much?), at a fixed seed so the same two
//! files always give the same answer.
//!
//! Both are rank/resampling methods on purpose: timing samples are skewed
//! (a few slow outliers from interrupts and other jobs), so a t-test's
//! normality assumption does not hold and the mean is the wrong centre.

/// Resamples of the bootstrap: the usual order for a 95 % percentile
/// interval, and cheap for the few dozen samples a cell usually has (the
/// seed is fixed, so the interval does not move between invocations).
pub const RESAMPLES: usize = 1000;

/// The bootstrap's base seed; each cell mixes its coordinates in, so a
/// cell's interval does not depend on which other cells were compared.
pub const SEED: u64 = 0x6e75_6d61_7072_6f62; // "numaprob"

/// The exact U distribution is used up to this many samples on each side
/// (and without ties); beyond it, or with ties, the normal approximation
/// with tie and continuity correction (the usual practice from about 20 a side).
const EXACT_MAX: usize = 30;

/// Median of a slice (sorted copy); NaN for none.
pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    median_sorted(&s)
}

fn median_sorted(s: &[f64]) -> f64 {
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// The outcome of the Mann–Whitney U test of `a` against `b`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UTest {
    /// U of `a` (the number of (a, b) pairs with a > b, ties counting 1/2).
    pub u: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// The smallest p-value these sample counts can give at all: with three
    /// samples a side it is 0.1, so no such pair is ever "significant" at 0.05.
    pub p_min: f64,
    /// Whether `p` came from the exact distribution (small, tie-free samples).
    pub exact: bool,
}

/// Two-sided Mann–Whitney U test; None when a side has no samples or a
/// sample is not finite.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<UTest> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 || a.iter().chain(b).any(|x| !x.is_finite()) {
        return None;
    }
    // Pool, sort, average ranks over ties.
    let mut pooled: Vec<(f64, bool)> = a
        .iter()
        .map(|&x| (x, true))
        .chain(b.iter().map(|&x| (x, false)))
        .collect();
    pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
    let n = pooled.len();
    let (mut r1, mut tie_term, mut ties) = (0.0, 0.0, false);
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && pooled[j + 1].0 == pooled[i].0 {
            j += 1;
        }
        let t = (j - i + 1) as f64;
        let rank = (i + j) as f64 / 2.0 + 1.0;
        r1 += pooled[i..=j].iter().filter(|p| p.1).count() as f64 * rank;
        if t > 1.0 {
            ties = true;
            tie_term += t * t * t - t;
        }
        i = j + 1;
    }
    let (f1, f2) = (n1 as f64, n2 as f64);
    let u = r1 - f1 * (f1 + 1.0) / 2.0;
    let p_min = (2.0 / binomial(n1 + n2, n1)).min(1.0);
    let u_small = u.min(f1 * f2 - u);
    if !ties && n1 <= EXACT_MAX && n2 <= EXACT_MAX {
        let counts = u_counts(n1, n2);
        let total: f64 = counts.iter().sum();
        let tail: f64 = counts[..=(u_small as usize)].iter().sum::<f64>() / total;
        return Some(UTest {
            u,
            p: (2.0 * tail).min(1.0),
            p_min,
            exact: true,
        });
    }
    let mean = f1 * f2 / 2.0;
    let nn = f1 + f2;
    let var = f1 * f2 / 12.0 * ((nn + 1.0) - tie_term / (nn * (nn - 1.0)));
    let p = if var <= 0.0 {
        1.0 // every sample equal: nothing to tell apart
    } else {
        // Continuity correction: U moves in steps of 1/2 at least.
        let z = ((u - mean).abs() - 0.5).max(0.0) / var.sqrt();
        erfc(z / std::f64::consts::SQRT_2).min(1.0)
    };
    Some(UTest {
        u,
        p,
        p_min,
        exact: false,
    })
}

/// How many of the C(n1+n2, n1) arrangements give each U = 0..=n1*n2
/// (the classic recursion f(m, n, u) = f(m-1, n, u-n) + f(m, n-1, u)).
fn u_counts(n1: usize, n2: usize) -> Vec<f64> {
    let max = n1 * n2;
    // table[m][n] as vectors over u, built up for m <= n1, n <= n2.
    let mut prev: Vec<Vec<f64>> = (0..=n2).map(|_| vec![1.0]).collect(); // m = 0
    for m in 1..=n1 {
        let mut cur: Vec<Vec<f64>> = Vec::with_capacity(n2 + 1);
        cur.push(vec![1.0]); // n = 0
        for n in 1..=n2 {
            let len = m * n + 1;
            let mut v = vec![0.0; len];
            for (u, slot) in v.iter_mut().enumerate() {
                let left = u
                    .checked_sub(n)
                    .and_then(|k| prev[n].get(k))
                    .copied()
                    .unwrap_or(0.0);
                let right = cur[n - 1].get(u).copied().unwrap_or(0.0);
                *slot = left + right;
            }
            cur.push(v);
        }
        prev = cur;
    }
    let mut out = prev.swap_remove(n2);
    out.resize(max + 1, 0.0);
    out
}

fn binomial(n: usize, k: usize) -> f64 {
    let k = k.min(n - k);
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// erfc(x) by Numerical Recipes' `erfcc` Chebyshev fit (fractional error
/// below 1.2e-7 everywhere, ample for a p-value).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

pub use crate::rng::SplitMix64;

/// A 95 % percentile bootstrap interval of median(b) - median(a): both
/// sides resampled with replacement `resamples` times. None when a side is
/// empty.
pub fn bootstrap_median_diff(
    a: &[f64],
    b: &[f64],
    resamples: usize,
    seed: u64,
) -> Option<(f64, f64)> {
    if a.is_empty() || b.is_empty() || resamples == 0 {
        return None;
    }
    let mut rng = SplitMix64::new(seed);
    let mut diffs = Vec::with_capacity(resamples);
    let (mut ra, mut rb) = (vec![0.0; a.len()], vec![0.0; b.len()]);
    for _ in 0..resamples {
        for x in ra.iter_mut() {
            *x = a[rng.index(a.len())];
        }
        for x in rb.iter_mut() {
            *x = b[rng.index(b.len())];
        }
        ra.sort_by(f64::total_cmp);
        rb.sort_by(f64::total_cmp);
        diffs.push(median_sorted(&rb) - median_sorted(&ra));
    }
    diffs.sort_by(f64::total_cmp);
    let at = |q: f64| diffs[((q * (resamples - 1) as f64).round() as usize).min(resamples - 1)];
    Some((at(0.025), at(0.975)))
}

/// A seed for one cell: the base seed with the cell's coordinates mixed in.
pub fn cell_seed(base: u64, cpu_node: u32, mem_node: u32, kind: &str) -> u64 {
    let mut h = base;
    for byte in kind
        .bytes()
        .chain(cpu_node.to_le_bytes())
        .chain(mem_node.to_le_bytes())
    {
        h = (h ^ byte as u64).wrapping_mul(0x0000_0100_0000_01b3); // FNV-1a step
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic "noisy" samples around `centre` with a relative spread.
    fn noisy(centre: f64, spread: f64, n: usize, seed: u64) -> Vec<f64> {
        let mut r = SplitMix64::new(seed);
        (0..n)
            .map(|_| centre * (1.0 + spread * ((r.next_u64() % 10_000) as f64 / 5_000.0 - 1.0)))
            .collect()
    }

    #[test]
    fn exact_counts_sum_to_the_arrangements() {
        for (m, n) in [(1, 1), (3, 3), (4, 7), (10, 12)] {
            let c = u_counts(m, n);
            assert_eq!(c.len(), m * n + 1);
            assert!((c.iter().sum::<f64>() - binomial(m + n, m)).abs() < 1e-6);
            // The U distribution is symmetric.
            for u in 0..c.len() {
                assert_eq!(c[u], c[c.len() - 1 - u]);
            }
        }
    }

    #[test]
    fn exact_p_of_complete_separation_is_the_smallest_possible() {
        // 4 vs 4, every b above every a: U = 0, p = 2 / C(8, 4) = 2/70.
        let t = mann_whitney(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0]).unwrap();
        assert_eq!(t.u, 0.0);
        assert!(t.exact);
        assert!((t.p - 2.0 / 70.0).abs() < 1e-12, "{}", t.p);
        assert!((t.p_min - 2.0 / 70.0).abs() < 1e-12);
        // Three a side can never reach 0.05.
        let t3 = mann_whitney(&[1.0, 2.0, 3.0], &[5.0, 6.0, 7.0]).unwrap();
        assert!((t3.p_min - 0.1).abs() < 1e-12);
    }

    #[test]
    fn exact_p_matches_the_tables() {
        // 5 vs 5 with U = 2: the arrangements with U <= 2 are 1 + 1 + 2 of
        // C(10, 5) = 252, so two-sided p = 8/252 (0.0317 in the tables).
        let t = mann_whitney(&[1.0, 2.0, 3.0, 3.5, 5.5], &[4.0, 5.0, 6.0, 8.0, 9.0]).unwrap();
        assert_eq!(t.u.min(25.0 - t.u), 2.0, "{t:?}");
        assert!(t.exact);
        assert!((t.p - 8.0 / 252.0).abs() < 1e-12, "{}", t.p);
        // With ties (or many samples) the normal approximation takes over,
        // and more samples with the same shift give a smaller p.
        let a: Vec<f64> = [1.0, 2.0, 3.0, 3.5, 5.5]
            .iter()
            .flat_map(|&x| [x; 4])
            .collect();
        let b: Vec<f64> = [4.0, 5.0, 6.0, 8.0, 9.0]
            .iter()
            .flat_map(|&x| [x; 4])
            .collect();
        let approx = mann_whitney(&a, &b).unwrap();
        assert!(!approx.exact);
        assert!(approx.p < t.p, "{approx:?}");
    }

    #[test]
    fn equal_samples_are_not_significant() {
        let a = noisy(100.0, 0.02, 25, 1);
        let t = mann_whitney(&a, &a).unwrap();
        assert!(t.p > 0.9, "{t:?}");
        let (lo, hi) = bootstrap_median_diff(&a, &a, RESAMPLES, 7).unwrap();
        assert!(lo <= 0.0 && hi >= 0.0, "{lo} {hi}");
        // Two draws from one distribution: not significant either.
        let b = noisy(100.0, 0.02, 25, 2);
        let t = mann_whitney(&a, &b).unwrap();
        assert!(t.p > 0.05, "{t:?}");
        // All samples identical: p = 1, interval [0, 0].
        let same = vec![5.0; 10];
        assert_eq!(mann_whitney(&same, &same).unwrap().p, 1.0);
        assert_eq!(
            bootstrap_median_diff(&same, &same, 100, 3),
            Some((0.0, 0.0))
        );
    }

    #[test]
    fn a_shift_is_significant_and_its_size_is_found() {
        let a = noisy(100.0, 0.02, 30, 11);
        let b: Vec<f64> = noisy(100.0, 0.02, 30, 12)
            .iter()
            .map(|x| x * 1.10)
            .collect();
        let t = mann_whitney(&a, &b).unwrap();
        assert!(t.p < 1e-6, "{t:?}");
        let (lo, hi) = bootstrap_median_diff(&a, &b, RESAMPLES, 5).unwrap();
        let d = median(&b) - median(&a);
        assert!(lo <= d && d <= hi, "{lo} {d} {hi}");
        // The 10 % shift is inside the interval and the interval excludes 0.
        assert!(
            lo > 0.0 && lo < 10.0 && hi > 10.0 - 4.0 && hi < 15.0,
            "{lo} {hi}"
        );
    }

    #[test]
    fn the_bootstrap_is_reproducible_from_its_seed() {
        let a = noisy(50.0, 0.05, 12, 21);
        let b = noisy(52.0, 0.05, 9, 22);
        let x = bootstrap_median_diff(&a, &b, RESAMPLES, 99);
        assert_eq!(x, bootstrap_median_diff(&a, &b, RESAMPLES, 99));
        assert_ne!(x, bootstrap_median_diff(&a, &b, RESAMPLES, 100));
        assert_eq!(
            cell_seed(SEED, 0, 1, "latency"),
            cell_seed(SEED, 0, 1, "latency")
        );
        assert_ne!(
            cell_seed(SEED, 0, 1, "latency"),
            cell_seed(SEED, 1, 0, "latency")
        );
    }

    #[test]
    fn erfc_matches_known_values() {
        assert!((erfc(0.0) - 1.0).abs() < 1e-7);
        assert!((erfc(1.0) - 0.157_299_207).abs() < 1e-7);
        assert!((erfc(1.959_963_985 / std::f64::consts::SQRT_2) - 0.05).abs() < 1e-6);
    }
}
