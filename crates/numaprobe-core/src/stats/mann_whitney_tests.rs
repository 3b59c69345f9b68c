//! Tests of the Mann–Whitney U test against values computed independently:
//! SciPy 1.x `scipy.stats.mannwhitneyu(a, b, alternative="two-sided",
//! method="exact" | "asymptotic", use_continuity=True)`, `scipy.special.erfc`,
//! and a brute-force count of every arrangement for the U distribution.

use super::*;

fn close(got: f64, want: f64, tol: f64) {
    assert!((got - want).abs() <= tol, "got {got}, want {want}");
}

#[test]
fn exact_p_values_match_scipy() {
    // (a, b, U of a, two-sided p) from scipy's method="exact".
    let cases: [(&[f64], &[f64], f64, f64); 4] = [
        (
            &[1.0, 2.0, 3.0, 3.5, 5.5],
            &[4.0, 5.0, 6.0, 8.0, 9.0],
            2.0,
            0.031746031746031744,
        ),
        (
            &[1.2, 3.4, 0.5],
            &[2.0, 4.1, 5.0, 6.3],
            1.0,
            0.11428571428571428,
        ),
        (
            &[10.0, 11.0, 14.0, 15.0, 16.5, 18.0],
            &[12.0, 13.0, 17.0, 19.0],
            9.0,
            0.6095238095238095,
        ),
        // U above its mean: the tail is taken from the other side.
        (
            &[4.0, 5.0, 6.0, 8.0, 9.0],
            &[1.0, 2.0, 3.0, 3.5, 5.5],
            23.0,
            0.031746031746031744,
        ),
    ];
    for (a, b, u, p) in cases {
        let t = mann_whitney(a, b).unwrap();
        assert!(t.exact, "{a:?} {b:?}");
        assert_eq!(t.u, u, "{a:?} {b:?}");
        close(t.p, p, 1e-12);
    }
}

#[test]
fn the_exact_p_is_at_most_one() {
    // U at the centre: the one-sided tail is over half, doubled past 1.
    let t = mann_whitney(&[1.0, 4.0], &[2.0, 3.0]).unwrap();
    assert_eq!(t.u, 2.0);
    assert_eq!(t.p, 1.0);
}

#[test]
fn ties_take_the_normal_approximation_with_tie_correction() {
    // scipy's method="asymptotic" (tie-corrected variance, continuity 0.5).
    let t = mann_whitney(&[1.0, 2.0, 2.0, 3.0, 4.0], &[2.0, 3.0, 5.0, 5.0, 6.0, 7.0]).unwrap();
    assert!(!t.exact);
    assert_eq!(t.u, 4.5);
    close(t.p, 0.06414661873440437, 1e-6);
    let t = mann_whitney(
        &[1.0, 1.0, 1.0, 2.0, 2.0, 3.0],
        &[1.0, 2.0, 3.0, 3.0, 3.0, 3.0, 4.0],
    )
    .unwrap();
    assert!(!t.exact);
    assert_eq!(t.u, 8.5);
    close(t.p, 0.07179231794885368, 1e-6);
}

#[test]
fn past_thirty_a_side_the_approximation_takes_over() {
    let thirty: Vec<f64> = (0..30).map(f64::from).collect();
    let t = mann_whitney(&thirty, &[10.5, 20.5, 40.0]).unwrap();
    assert!(t.exact);
    assert_eq!(t.u, 28.0);
    close(t.p, 0.3170821114369502, 1e-12);
    let thirty_one: Vec<f64> = (0..31).map(f64::from).collect();
    let t = mann_whitney(&thirty_one, &[10.5, 20.5, 40.0]).unwrap();
    assert!(!t.exact);
    assert_eq!(t.u, 30.0);
    close(t.p, 0.33130792154447253, 1e-6);
    // Either side past the limit; U above its mean.
    let t = mann_whitney(&[10.5, 20.5, 40.0], &thirty_one).unwrap();
    assert!(!t.exact);
    assert_eq!(t.u, 63.0);
    close(t.p, 0.33130792154447253, 1e-6);
}

#[test]
fn the_smallest_reachable_p_is_two_over_the_arrangements() {
    // 3 vs 4: C(7, 3) = 35 arrangements.
    let t = mann_whitney(&[1.2, 3.4, 0.5], &[2.0, 4.1, 5.0, 6.3]).unwrap();
    close(t.p_min, 2.0 / 35.0, 1e-15);
    let t = mann_whitney(&[1.0], &[2.0]).unwrap();
    assert_eq!(t.p_min, 1.0);
    assert_eq!(t.p, 1.0);
    assert_eq!(binomial(10, 3), 120.0);
    assert_eq!(binomial(10, 7), 120.0);
}

#[test]
fn nothing_to_test_is_none_and_all_equal_is_p_one() {
    assert_eq!(mann_whitney(&[], &[1.0]), None);
    assert_eq!(mann_whitney(&[1.0], &[]), None);
    assert_eq!(mann_whitney(&[1.0, f64::NAN], &[2.0]), None);
    assert_eq!(mann_whitney(&[1.0], &[2.0, f64::INFINITY]), None);
    let t = mann_whitney(&[5.0; 4], &[5.0; 6]).unwrap();
    assert_eq!((t.u, t.p, t.exact), (12.0, 1.0, false));
}

#[test]
fn u_counts_match_a_brute_force_count() {
    assert_eq!(u_counts(2, 3), [1.0, 1.0, 2.0, 2.0, 2.0, 1.0, 1.0]);
    assert_eq!(u_counts(3, 2), [1.0, 1.0, 2.0, 2.0, 2.0, 1.0, 1.0]);
    assert_eq!(
        u_counts(3, 4),
        [1.0, 1.0, 2.0, 3.0, 4.0, 4.0, 5.0, 4.0, 4.0, 3.0, 2.0, 1.0, 1.0]
    );
    for (m, n) in [(1, 1), (4, 7), (10, 12)] {
        let c = u_counts(m, n);
        assert_eq!(c.len(), m * n + 1);
        close(c.iter().sum::<f64>(), binomial(m + n, m), 1e-6);
    }
}

#[test]
fn erfc_matches_scipy() {
    for (x, want) in [
        (0.0, 1.0),
        (0.5, 0.4795001221869535),
        (1.0, 0.15729920705028516),
        (2.0, 0.004677734981047266),
        (-0.3, 1.3286267594591274),
        (-1.0, 1.8427007929497148),
    ] {
        close(erfc(x), want, 2e-7);
    }
}
