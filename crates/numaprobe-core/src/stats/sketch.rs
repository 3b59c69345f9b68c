//! A bounded stand-in for a figure's samples in a document that leaves
//! them out (the main job's report by default): how many there were and
//! [`POINTS`] evenly spaced quantiles of them, the lowest and highest
//! included. Up to [`POINTS`] samples it is the samples themselves, sorted,
//! so a rank test (Mann–Whitney) or a bootstrap of the median on it is the
//! one on the samples; past that it is their distribution at a fixed
//! resolution, which makes such a test more cautious (fewer points), never
//! bolder. Its size does not grow with the samples: a run's document grows
//! with its cells, not with how long each was sampled.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Quantiles kept: 0, 1/16, ..., 1 (the quartiles among them).
pub const POINTS: usize = 17;

/// Significant digits a quantile is written with: far below any figure's
/// spread, and a third of the bytes of a full `f64`.
const DIGITS: i32 = 6;

/// How many samples a figure kept and their quantiles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sketch {
    /// Samples kept (warm-up and set-aside ones excluded).
    pub n: usize,
    /// Evenly spaced quantiles of them, lowest first: the samples
    /// themselves, sorted, when there are at most [`POINTS`].
    pub quantiles: Vec<f64>,
}

impl Sketch {
    /// The sketch of `samples`; None when there are none.
    pub fn of(samples: &[f64]) -> Option<Sketch> {
        let mut sorted: Vec<f64> = samples.iter().copied().filter(|v| v.is_finite()).collect();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_by(f64::total_cmp);
        let quantiles = if sorted.len() <= POINTS {
            sorted.iter().map(|&v| round(v)).collect()
        } else {
            let last = (sorted.len() - 1) as f64;
            (0..POINTS)
                .map(|i| {
                    let at = last * i as f64 / (POINTS - 1) as f64;
                    let (lo, frac) = (at.floor() as usize, at.fract());
                    let hi = (lo + 1).min(sorted.len() - 1);
                    round(sorted[lo] + (sorted[hi] - sorted[lo]) * frac)
                })
                .collect()
        };
        Some(Sketch {
            n: samples.len(),
            quantiles,
        })
    }

    /// True when the quantiles are every sample.
    pub fn is_exact(&self) -> bool {
        self.quantiles.len() == self.n
    }
}

/// What a test of a figure can run on: its samples when the document has
/// them, else its sketch's quantiles, else its median alone; and whether
/// that stands in for more samples than it holds (a sketch of more than
/// [`POINTS`]), for the note that says so.
pub fn test_values<'a>(
    samples: &'a [f64],
    sketch: Option<&'a Sketch>,
    median: f64,
) -> (Cow<'a, [f64]>, bool) {
    match sketch {
        _ if !samples.is_empty() => (Cow::Borrowed(samples), false),
        Some(s) if !s.quantiles.is_empty() => (Cow::Borrowed(&s.quantiles), !s.is_exact()),
        _ => (Cow::Owned(vec![median]), false),
    }
}

/// Replace `samples` by their sketch (nothing when there are none): what a
/// figure keeps in a document that leaves its samples out.
pub fn leave_out(samples: &mut Vec<f64>, sketch: &mut Option<Sketch>) {
    if !samples.is_empty() {
        *sketch = Sketch::of(samples);
        *samples = Vec::new();
    }
}

/// How many samples a figure kept: its samples when the document has them,
/// else its sketch's count (0 for a document with neither).
pub fn kept(samples: &[f64], sketch: Option<&Sketch>) -> usize {
    if samples.is_empty() {
        sketch.map_or(0, |s| s.n)
    } else {
        samples.len()
    }
}

fn round(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let scale = 10f64.powi(DIGITS - 1 - v.abs().log10().floor() as i32);
    (v * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn few_samples_are_kept_whole_and_sorted() {
        let s = Sketch::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!(s.n, 3);
        assert_eq!(s.quantiles, [1.0, 2.0, 3.0]);
        assert!(s.is_exact());
        assert!(Sketch::of(&[]).is_none());
    }

    #[test]
    fn many_samples_give_evenly_spaced_quantiles_from_min_to_max() {
        // 0..=160: quantile i/16 is 10 * i exactly.
        let samples: Vec<f64> = (0..=160).rev().map(f64::from).collect();
        let s = Sketch::of(&samples).unwrap();
        assert_eq!(s.n, 161);
        assert!(!s.is_exact());
        let want: Vec<f64> = (0..17).map(|i| 10.0 * f64::from(i)).collect();
        assert_eq!(s.quantiles, want);
        // Between two samples, interpolated: 0..=31 puts 1/16 at 1.9375.
        let s = Sketch::of(&(0..32).map(f64::from).collect::<Vec<_>>()).unwrap();
        assert_eq!(s.quantiles[1], 1.9375);
        assert_eq!(s.quantiles[16], 31.0);
    }

    #[test]
    fn quantiles_are_rounded_to_six_significant_digits() {
        let s = Sketch::of(&[123.456789, 0.000123456789, -98765.4321]).unwrap();
        assert_eq!(s.quantiles, [-98765.4, 0.000123457, 123.457]);
    }

    #[test]
    fn a_test_runs_on_samples_then_the_sketch_then_the_median() {
        let sk = Sketch::of(&(0..40).map(f64::from).collect::<Vec<_>>()).unwrap();
        let (v, approx) = test_values(&[5.0, 6.0], Some(&sk), 5.5);
        assert_eq!((&*v, approx), (&[5.0, 6.0][..], false));
        let (v, approx) = test_values(&[], Some(&sk), 5.5);
        assert_eq!((v.len(), approx), (POINTS, true));
        let exact = Sketch::of(&[1.0, 2.0]).unwrap();
        let (v, approx) = test_values(&[], Some(&exact), 1.5);
        assert_eq!((&*v, approx), (&[1.0, 2.0][..], false));
        let (v, approx) = test_values(&[], None, 5.5);
        assert_eq!((&*v, approx), (&[5.5][..], false));
        assert_eq!(kept(&[], Some(&sk)), 40);
        assert_eq!(kept(&[1.0], Some(&sk)), 1);
        assert_eq!(kept(&[], None), 0);
    }
}
