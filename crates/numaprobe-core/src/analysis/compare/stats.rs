//! The statistics behind `diff`'s per-cell verdict: a two-sided
//! Mann–Whitney U test (is one run's distribution shifted against the
//! other's? the stats layer's [`crate::stats::mann_whitney`], shared with
//! `tune`) and a percentile bootstrap confidence interval of the difference
//! of the medians (by how much?), at a fixed seed so the same two files
//! always give the same answer.
//!
//! Both are rank/resampling methods on purpose: timing samples are skewed
//! (a few slow outliers from interrupts and other jobs), so a t-test's
//! normality assumption does not hold and the mean is the wrong centre.
//!
//! The bootstrap's work is bounded per cell: [`RESAMPLES`] resamples of at
//! most [`BOOTSTRAP_POINTS`] values a side, whatever the sample count, so a
//! document of many samples per cell costs time linear in its size (the
//! sort that picks the points) instead of resamples x samples.

pub use crate::stats::mann_whitney::{mann_whitney, UTest};
use std::borrow::Cow;

/// Resamples of the bootstrap: the usual order for a 95 % percentile
/// interval, and cheap for the few dozen samples a cell usually has (the
/// seed is fixed, so the interval does not move between invocations).
pub const RESAMPLES: usize = 1000;

/// Values a side the bootstrap resamples at most. Up to this many it
/// resamples the samples themselves; past it, this many evenly spaced
/// order statistics of them (lowest and highest included): the samples'
/// distribution at a fixed resolution. A median of fewer values varies
/// more, so the interval comes out wider than the one of every sample,
/// never narrower. That keeps the verdict sound: the verdict rests on the
/// Mann–Whitney test, the change of the medians and both runs' noise, all
/// of every sample; the interval is reported and only adds the note that a
/// change is not ruled out, which a wider interval can only add more often.
pub const BOOTSTRAP_POINTS: usize = 1000;

/// The bootstrap's base seed; each cell mixes its coordinates in, so a
/// cell's interval does not depend on which other cells were compared.
pub const SEED: u64 = 0x6e75_6d61_7072_6f62; // "numaprob"

/// Median of a slice (sorted copy); NaN for none.
pub fn median(v: &[f64]) -> f64 {
    crate::stats::median(v).unwrap_or(f64::NAN)
}

/// Median of a non-empty slice, reordering it: the order statistics a sort
/// would put in the middle, found by selection (linear, not n log n).
fn median_in_place(v: &mut [f64]) -> f64 {
    let (n, mid) = (v.len(), v.len() / 2);
    let (low, &mut hi, _) = v.select_nth_unstable_by(mid, f64::total_cmp);
    if n % 2 == 1 {
        return hi;
    }
    // Even: the other middle value is the largest of the lower half.
    let lo = low.iter().copied().max_by(f64::total_cmp).unwrap_or(hi);
    (lo + hi) / 2.0
}

/// What the bootstrap resamples of one side: the samples up to `points`,
/// else `points` evenly spaced order statistics of them.
fn bounded(v: &[f64], points: usize) -> Cow<'_, [f64]> {
    if v.len() <= points {
        return Cow::Borrowed(v);
    }
    let mut sorted = v.to_vec();
    sorted.sort_by(f64::total_cmp);
    let last = sorted.len() - 1;
    Cow::Owned(
        (0..points)
            .map(|i| sorted[i * last / (points - 1).max(1)])
            .collect(),
    )
}

pub use crate::rng::SplitMix64;

/// A 95 % percentile bootstrap interval of median(b) - median(a): both
/// sides resampled with replacement `resamples` times, each side bounded to
/// [`BOOTSTRAP_POINTS`] values. None when a side is empty.
pub fn bootstrap_median_diff(
    a: &[f64],
    b: &[f64],
    resamples: usize,
    seed: u64,
) -> Option<(f64, f64)> {
    bootstrap(a, b, resamples, seed, BOOTSTRAP_POINTS).map(|(interval, _)| interval)
}

/// The bootstrap with a side bounded to `points` values; also how many
/// values it drew, the measure of its work.
fn bootstrap(
    a: &[f64],
    b: &[f64],
    resamples: usize,
    seed: u64,
    points: usize,
) -> Option<((f64, f64), usize)> {
    if a.is_empty() || b.is_empty() || resamples == 0 {
        return None;
    }
    let (a, b) = (bounded(a, points), bounded(b, points));
    let mut rng = SplitMix64::new(seed);
    let mut diffs = Vec::with_capacity(resamples);
    let (mut ra, mut rb) = (vec![0.0; a.len()], vec![0.0; b.len()]);
    let mut drawn = 0;
    for _ in 0..resamples {
        for x in ra.iter_mut() {
            *x = a[rng.index(a.len())];
        }
        for x in rb.iter_mut() {
            *x = b[rng.index(b.len())];
        }
        drawn += ra.len() + rb.len();
        diffs.push(median_in_place(&mut rb) - median_in_place(&mut ra));
    }
    diffs.sort_by(f64::total_cmp);
    // q is 0.025 or 0.975: the index rounds to at most resamples - 1.
    let at = |q: f64| diffs[(q * (resamples - 1) as f64).round() as usize];
    Some(((at(0.025), at(0.975)), drawn))
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
    fn medians_are_exact_for_odd_even_and_no_samples() {
        // numpy.median of the same lists.
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[7.5]), 7.5);
        assert_eq!(median(&[-1.0, 5.0]), 2.0);
        assert_eq!(median(&[2.0, 9.0, 4.0, 8.0, 1.0, 6.0]), 5.0);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn the_bootstrap_interval_matches_an_independent_resampling() {
        // The same resampling written apart in Python (SplitMix64, Lemire's
        // index, numpy.median, the 2.5 % and 97.5 % order statistics
        // rounded half away from zero).
        let a = [1.0, 2.5, 3.0, 4.0, 5.5, 6.0];
        let b = [4.0, 6.5, 7.0, 9.0, 10.0];
        assert_eq!(bootstrap_median_diff(&a, &b, 7, 3), Some((2.75, 5.75)));
        assert_eq!(bootstrap_median_diff(&a, &b, 41, 5), Some((0.0, 6.0)));
        assert_eq!(bootstrap_median_diff(&a, &b, 1000, 42), Some((0.5, 7.25)));
        let (a, b) = ([10.0, 12.0, 11.0, 15.0, 13.0], [14.0, 16.0, 13.5, 18.0]);
        assert_eq!(bootstrap_median_diff(&a, &b, 7, 3), Some((0.0, 5.0)));
        // One resample: both ends are its difference.
        assert_eq!(bootstrap_median_diff(&a, &b, 1, 3), Some((3.0, 3.0)));
    }

    #[test]
    fn no_samples_or_no_resamples_give_no_interval() {
        assert_eq!(bootstrap_median_diff(&[], &[1.0], 10, 1), None);
        assert_eq!(bootstrap_median_diff(&[1.0], &[], 10, 1), None);
        assert_eq!(bootstrap_median_diff(&[1.0], &[2.0], 0, 1), None);
    }

    #[test]
    fn the_median_by_selection_is_the_median_of_a_sort() {
        for v in [
            vec![3.0, 1.0, 2.0],
            vec![4.0, 1.0, 2.0, 3.0],
            vec![7.5],
            vec![-1.0, 5.0],
            vec![2.0, 9.0, 4.0, 8.0, 1.0, 6.0],
            vec![5.0, 5.0, 1.0, 5.0],
            noisy(80.0, 0.3, 101, 4),
            noisy(80.0, 0.3, 100, 5),
        ] {
            let want = median(&v);
            assert_eq!(median_in_place(&mut v.clone()), want, "{v:?}");
        }
    }

    #[test]
    fn a_side_past_its_points_is_its_evenly_spaced_order_statistics() {
        // 1999 values 0..=1998 shuffled: 1000 points are every second one,
        // the lowest and the highest included.
        let mut v: Vec<f64> = (0..1999).map(f64::from).collect();
        v.reverse();
        let b = bounded(&v, 1000);
        let want: Vec<f64> = (0..1000).map(|i| f64::from(2 * i)).collect();
        assert_eq!(&*b, &want[..]);
        // Up to the points: the samples themselves, as given.
        let few = [3.0, 1.0, 2.0];
        assert!(matches!(bounded(&few, 3), Cow::Borrowed(x) if x == few));
        assert_eq!(&*bounded(&few, 2), &[1.0, 3.0]);
        assert_eq!(&*bounded(&few, 1), &[1.0]);
    }

    #[test]
    fn the_bootstrap_draws_at_most_its_points_a_side() {
        // Tens of thousands of samples a side: the work is that of
        // BOOTSTRAP_POINTS a side, not of the samples.
        let a = noisy(100.0, 0.02, 50_000, 31);
        let b: Vec<f64> = noisy(100.0, 0.02, 40_000, 32)
            .iter()
            .map(|x| x * 1.10)
            .collect();
        let ((lo, hi), drawn) = bootstrap(&a, &b, RESAMPLES, 9, BOOTSTRAP_POINTS).unwrap();
        assert_eq!(drawn, RESAMPLES * 2 * BOOTSTRAP_POINTS);
        let d = median(&b) - median(&a);
        assert!(lo > 0.0 && lo <= d && d <= hi && hi < 20.0, "{lo} {d} {hi}");
        // A few samples are drawn whole, as many as they are.
        let (_, drawn) = bootstrap(&a[..30], &b[..20], RESAMPLES, 9, BOOTSTRAP_POINTS).unwrap();
        assert_eq!(drawn, RESAMPLES * 50);
        let (_, drawn) = bootstrap(&a[..30], &b[..20], 7, 9, 25).unwrap();
        assert_eq!(drawn, 7 * 45);
    }

    #[test]
    fn bounded_sides_widen_the_interval_never_narrow_it() {
        // 5000 samples a side, a 3 % shift: the interval on 1000 points
        // holds the one on every sample and, like it, excludes 0.
        let a = noisy(100.0, 0.05, 5000, 41);
        let b: Vec<f64> = noisy(100.0, 0.05, 5000, 42)
            .iter()
            .map(|x| x * 1.03)
            .collect();
        let (full, _) = bootstrap(&a, &b, 100, 3, usize::MAX).unwrap();
        let capped = bootstrap_median_diff(&a, &b, 100, 3).unwrap();
        assert!(
            capped.0 <= full.0 && full.1 <= capped.1,
            "{capped:?} {full:?}"
        );
        assert!(full.0 > 0.0 && capped.0 > 0.0, "{capped:?} {full:?}");
        // Up to the points, bounded or not is the same interval.
        let (whole, _) = bootstrap(&a[..999], &b[..1000], 20, 3, usize::MAX).unwrap();
        assert_eq!(
            bootstrap_median_diff(&a[..999], &b[..1000], 20, 3),
            Some(whole)
        );
    }

    #[test]
    fn cell_seeds_are_fnv1a_over_kind_and_nodes() {
        // FNV-1a steps over the bytes, computed apart in Python.
        assert_eq!(cell_seed(SEED, 0, 1, "latency"), 0xde61_ae36_deb9_1cb1);
        assert_eq!(cell_seed(SEED, 2, 3, "bandwidth"), 0xce1a_cb3e_7233_e502);
        assert_eq!(cell_seed(0, 0, 0, ""), 0);
    }
}
