//! Robust statistics across a fleet: median, median absolute deviation, and
//! the outlier test. A fleet's spread is judged by the median and MAD rather
//! than mean and standard deviation because the nodes worth finding (a
//! missing DIMM, a different BIOS setting) would drag a mean towards them and
//! hide themselves.

use crate::model::fleet::OutlierRule;

/// The factor that makes the MAD of a normal distribution an estimate of its
/// standard deviation.
pub const MAD_TO_SIGMA: f64 = 1.4826;

/// Median of `values` (None when empty). NaNs are not expected: every value
/// comes from a parsed JSON number.
pub fn median(values: &[f64]) -> Option<f64> {
    crate::stats::median(values)
}

/// Median absolute deviation from `center`.
pub fn mad(values: &[f64], center: f64) -> Option<f64> {
    let dev: Vec<f64> = values.iter().map(|v| (v - center).abs()).collect();
    median(&dev)
}

/// How far `value` lies from a fleet's median, and whether that makes it an
/// outlier under `rule`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judgement {
    pub robust_z: Option<f64>,
    pub off_percent: f64,
    pub outlier: bool,
}

/// Judge one value against the fleet's `median` and `mad` (of `count`
/// values). A zero MAD (most nodes equal) gives no z-score; the value is then
/// judged by its distance in percent alone.
pub fn judge(value: f64, median: f64, mad: f64, count: usize, rule: &OutlierRule) -> Judgement {
    let robust_z = (mad > 0.0).then(|| (value - median) / (MAD_TO_SIGMA * mad));
    let off_percent = if median != 0.0 {
        (value - median) / median.abs() * 100.0
    } else if value == 0.0 {
        0.0
    } else {
        f64::INFINITY.copysign(value)
    };
    let outlier = count >= rule.min_nodes
        && off_percent.abs() >= rule.min_off_percent
        && robust_z.is_none_or(|z| z.abs() >= rule.min_robust_z);
    Judgement {
        robust_z,
        off_percent,
        outlier,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn mad_ignores_one_far_value() {
        let v = [100.0, 101.0, 99.0, 100.0, 400.0];
        let m = median(&v).unwrap();
        assert_eq!(m, 100.0);
        assert_eq!(mad(&v, m), Some(1.0));
    }

    #[test]
    fn a_far_value_is_an_outlier_and_a_near_one_is_not() {
        let rule = OutlierRule::default();
        let far = judge(130.0, 100.0, 1.0, 5, &rule);
        assert!(far.outlier);
        assert!((far.off_percent - 30.0).abs() < 1e-9);
        assert!((far.robust_z.unwrap() - 30.0 / MAD_TO_SIGMA).abs() < 1e-9);
        // Many MADs off but under the 5 % floor: not worth acting on.
        assert!(!judge(103.0, 100.0, 0.1, 5, &rule).outlier);
        // Far in percent but within the fleet's own wide spread.
        assert!(!judge(130.0, 100.0, 20.0, 5, &rule).outlier);
        // Too few nodes to judge.
        assert!(!judge(130.0, 100.0, 1.0, 2, &rule).outlier);
        // A zero MAD leaves the percent test alone.
        let zero = judge(90.0, 100.0, 0.0, 3, &rule);
        assert!(zero.outlier && zero.robust_z.is_none());
    }

    #[test]
    fn mad_matches_scipy_on_several_inputs() {
        // scipy.stats.median_abs_deviation(v, scale=1.0) around numpy.median.
        for (v, med, want) in [
            (&[2.0, 4.0, 4.0, 5.0, 7.0, 9.0, 10.0][..], 5.0, 2.0),
            (&[1.0, 2.0, 3.0, 4.0][..], 2.5, 1.0),
            (&[10.0, 10.0, 10.0, 12.0][..], 10.0, 0.0),
            (&[-3.0, 1.5, 8.0][..], 1.5, 4.5),
        ] {
            assert_eq!(median(v), Some(med), "{v:?}");
            assert_eq!(mad(v, med), Some(want), "{v:?}");
        }
        // Around another centre (scipy with center=0).
        assert_eq!(mad(&[1.0, 2.0, 3.0, 4.0], 0.0), Some(2.5));
        assert_eq!(mad(&[], 0.0), None);
    }

    #[test]
    fn the_thresholds_are_inclusive_and_a_zero_median_is_handled() {
        let rule = OutlierRule::default();
        // Exactly 3 nodes, exactly 5 % off, exactly 3.5 robust z: an outlier.
        let mad = 5.0 / (3.5 * MAD_TO_SIGMA);
        let j = judge(105.0, 100.0, mad, 3, &rule);
        assert!(
            (j.robust_z.unwrap() - 3.5).abs() < 1e-9 && j.outlier,
            "{j:?}"
        );
        // Just under the z cut-off: not one.
        assert!(!judge(105.0, 100.0, mad * 1.001, 3, &rule).outlier);
        // Below the median counts the same.
        let low = judge(95.0, 100.0, mad, 3, &rule);
        assert!(low.outlier && (low.off_percent + 5.0).abs() < 1e-9);
        // A zero median: zero is not off; anything else is infinitely so.
        let z = judge(0.0, 0.0, 0.0, 5, &rule);
        assert_eq!((z.off_percent, z.outlier), (0.0, false));
        let up = judge(2.0, 0.0, 0.0, 5, &rule);
        assert_eq!(up.off_percent, f64::INFINITY);
        assert!(up.outlier);
        assert_eq!(
            judge(-2.0, 0.0, 0.0, 5, &rule).off_percent,
            f64::NEG_INFINITY
        );
        // Off in percent against a negative median's size.
        let neg = judge(-110.0, -100.0, 0.0, 5, &rule);
        assert!((neg.off_percent + 10.0).abs() < 1e-9, "{neg:?}");
    }

    /// Where most of a fleet is alike its MAD is zero, and an odd node is
    /// judged by the percent floor alone, on either side of the median.
    #[test]
    fn a_fleet_mostly_alike_judges_the_odd_node_by_percent_alone() {
        let rule = OutlierRule::default();
        let v = [100.0, 100.0, 94.0, 100.0, 104.0];
        let (m, spread) = (median(&v).unwrap(), mad(&v, 100.0).unwrap());
        assert_eq!((m, spread), (100.0, 0.0));
        let low = judge(94.0, m, spread, v.len(), &rule);
        assert!(low.outlier && low.robust_z.is_none(), "{low:?}");
        assert!(!judge(104.0, m, spread, v.len(), &rule).outlier);
        // The floor holds on both sides however many MADs off a value is.
        for (value, outlier) in [(105.5, true), (104.5, false), (94.5, true), (95.5, false)] {
            let j = judge(value, 100.0, 0.01, 5, &rule);
            assert!(j.robust_z.unwrap().abs() > 30.0, "{j:?}");
            assert_eq!(j.outlier, outlier, "{value}: {j:?}");
        }
    }
}
