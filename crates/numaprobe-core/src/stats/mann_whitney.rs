//! The two-sided Mann–Whitney U test (Wilcoxon rank sum): is one set of
//! timing samples shifted against another? The one test behind `diff`'s
//! per-cell verdict and `tune`'s "beyond noise", kept in the stats layer so
//! both the analysis and the experiments can ask it.
//!
//! Rank-based on purpose: timing samples are skewed (a few slow outliers
//! from interrupts and other jobs), so one wild sample weighs as one rank,
//! and a t-test's normality assumption is not needed.

/// The exact U distribution is used up to this many samples on each side
/// (and without ties); beyond it, or with ties, the normal approximation
/// with tie and continuity correction (the usual practice from about 20 a side).
pub const EXACT_MAX: usize = 30;

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

#[cfg(test)]
#[path = "mann_whitney_tests.rs"]
mod tests;
