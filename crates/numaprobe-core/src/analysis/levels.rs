//! One-dimensional grouping of values into performance levels.
//!
//! The criterion has no per-machine threshold. Values are compared on a log
//! scale (a level is "x % slower", whatever the unit). Two neighbours in
//! sorted order belong to different levels when the gap between them is
//! larger than `GAP_SIGMAS` standard deviations of the noise — noise of the
//! size the data themselves show could hardly have opened it (for Gaussian
//! noise, neighbours 4 sigma apart inside one level happen about once in
//! 10^4). The noise is estimated from the data: the pooled scatter of the
//! values around their own level, floored at `NOISE_FLOOR` (1 %), the
//! run-to-run drift of a memory measurement, so levels closer than 4 % are
//! never told apart ("robust to a few percent of noise"). Because the
//! estimate needs the levels and the levels need the estimate, the grouping
//! first cuts at every gap above the resolution, estimates the noise inside
//! those groups, and merges back every cut that is not significant against
//! it.
//! Firmware distances are exact: for them the floor is zero and every
//! distinct value is a level.
//!
//! The limit, measured on the synthetic tests: with uniform ±3 % noise (a
//! 6 % band) two pairs of one level can land at opposite edges of the band
//! with both their directions, which no method can tell from a real 4-5 %
//! step such as the two-hop pair of McCalpin's remote-latency
//! measurements. On a 4-node square with such noise
//! that happens about once in 1000 matrices; none in 2000 fully connected
//! 4-node or 1000 8-node ring matrices. Conversely two real levels need a
//! gap of more than 4 sigma between their noise bands: with uniform ±3 %
//! noise (sigma 1.7 %) that is about 7 %, i.e. levels 13 % or more apart.

/// How many pooled standard deviations a gap must exceed to separate levels.
pub const GAP_SIGMAS: f64 = 4.0;
/// Smallest noise assumed for measured data, as a log-ratio (about 1 %).
pub const NOISE_FLOOR: f64 = 0.01;

/// Group `xs` (log-scale costs) into levels. Returns groups of indices into
/// `xs`, groups ordered by ascending value, indices ascending by value.
/// `floor` is the smallest standard deviation assumed (0 for exact data).
pub fn cluster(xs: &[f64], floor: f64) -> Vec<Vec<usize>> {
    cluster_with(xs, floor, |groups| pooled_sd_of(xs, groups))
}

/// `cluster`, with the noise estimated by `noise` from a candidate grouping
/// (groups of indices into `xs`) instead of from the scatter of `xs`: a
/// value that summarises several measurements (a node pair's two
/// directions) is judged against the scatter of those measurements.
pub fn cluster_with(
    xs: &[f64],
    floor: f64,
    noise: impl Fn(&[Vec<usize>]) -> f64,
) -> Vec<Vec<usize>> {
    if xs.is_empty() {
        return Vec::new();
    }
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
    if floor <= 0.0 {
        // Exact data (firmware tables): every distinct value is a level.
        let mut out: Vec<Vec<usize>> = Vec::new();
        for &i in &order {
            match out.last_mut() {
                Some(g) if xs[g[0]] == xs[i] => g.push(i),
                _ => out.push(vec![i]),
            }
        }
        return out;
    }
    // Step 1: cut at every gap wider than the resolution (GAP_SIGMAS x
    // floor). No gap inside the resulting groups could be a level on its
    // own, so their scatter is an honest estimate of the noise.
    let mut cuts: Vec<usize> = (1..order.len())
        .filter(|&i| xs[order[i]] - xs[order[i - 1]] > GAP_SIGMAS * floor)
        .collect();
    // Step 2: estimate the noise once, from these groups (they hold no gap
    // wider than the resolution, so their scatter is noise, not structure),
    // and merge back every cut whose gap is not more than GAP_SIGMAS
    // deviations. The estimate is not refreshed after a merge: a merged
    // group would hold two real levels, inflate the estimate and drag the
    // next cut along with it, collapsing a deep machine into one level.
    let fine: Vec<Vec<usize>> = ranges(&cuts, order.len())
        .into_iter()
        .map(|(s, e)| order[s..e].to_vec())
        .collect();
    let sd = noise(&fine).max(floor);
    cuts.retain(|&i| (xs[order[i]] - xs[order[i - 1]]) / sd > GAP_SIGMAS);
    let groups = ranges(&cuts, order.len());
    groups
        .into_iter()
        .map(|(s, e)| order[s..e].to_vec())
        .collect()
}

/// Cut positions -> half-open ranges into the sorted order.
fn ranges(cuts: &[usize], n: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(cuts.len() + 1);
    let mut start = 0;
    for &c in cuts {
        out.push((start, c));
        start = c;
    }
    out.push((start, n));
    out
}

/// Standard deviation of the values around their own group's mean, pooled
/// over all groups (n - groups degrees of freedom); 0 when every group is a
/// single value.
pub fn pooled_sd(groups: &[Vec<f64>]) -> f64 {
    pooled_sd_by(groups.len(), |g| groups[g].iter().copied())
}

/// `pooled_sd` of `groups` groups whose values `values(g)` gives, walked
/// three times a group (count, mean, scatter) rather than copied: the
/// groups of a full matrix's cells hold every cell. The same sums in the
/// same order, so the same number.
pub fn pooled_sd_by<I: Iterator<Item = f64>>(groups: usize, values: impl Fn(usize) -> I) -> f64 {
    let mut ss = 0.0;
    let mut n = 0usize;
    let mut k = 0usize;
    for g in 0..groups {
        let len = values(g).count();
        if len == 0 {
            continue;
        }
        k += 1;
        let mean = values(g).sum::<f64>() / len as f64;
        ss += values(g).map(|v| (v - mean).powi(2)).sum::<f64>();
        n += len;
    }
    let dof = n.saturating_sub(k);
    if dof == 0 {
        0.0
    } else {
        (ss / dof as f64).sqrt()
    }
}

fn pooled_sd_of(xs: &[f64], groups: &[Vec<usize>]) -> f64 {
    pooled_sd_by(groups.len(), |g| groups[g].iter().map(|&i| xs[i]))
}

/// Median of a slice (mean of the middle two for even lengths); NaN for none.
pub fn median(v: &[f64]) -> f64 {
    crate::stats::median(v).unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn levels_of(vals: &[f64], floor: f64) -> Vec<Vec<f64>> {
        let logs: Vec<f64> = vals.iter().map(|v| v.ln()).collect();
        cluster(&logs, floor)
            .into_iter()
            .map(|g| g.into_iter().map(|i| vals[i]).collect())
            .collect()
    }

    #[test]
    fn clear_levels_split_and_noise_does_not() {
        let l = levels_of(&[100.0, 102.0, 99.0, 150.0, 148.0, 153.0], NOISE_FLOOR);
        assert_eq!(l.len(), 2);
        let l = levels_of(&[100.0, 101.5, 98.7, 102.9, 97.2, 100.8], NOISE_FLOOR);
        assert_eq!(l.len(), 1);
    }

    #[test]
    fn exact_data_split_on_every_distinct_value() {
        let l = levels_of(&[10.0, 12.0, 12.0, 13.0, 21.0, 21.0, 23.0], 0.0);
        assert_eq!(l.len(), 5);
    }

    #[test]
    fn gaps_under_four_percent_never_split_measured_data() {
        let l = levels_of(&[100.0, 103.5], NOISE_FLOOR);
        assert_eq!(l.len(), 1);
        let l = levels_of(&[100.0, 105.0], NOISE_FLOOR);
        assert_eq!(l.len(), 2);
    }

    #[test]
    fn empty_and_single_inputs() {
        assert!(cluster(&[], NOISE_FLOOR).is_empty());
        assert_eq!(cluster(&[1.0], NOISE_FLOOR), vec![vec![0]]);
    }
}
