//! Reading a cache-size sweep: where the latency curve is level (plateaus),
//! where it steps up (knees), and which cache the topology reports each knee
//! belongs to.
//!
//! Plateaus: the curve (one page kind, ascending size) is cut greedily into
//! runs whose points stay within [`FLAT_RATIO`] of the run's median; a
//! run of at least [`MIN_PLATEAU_POINTS`] points is a plateau. Two
//! neighbouring plateaus whose levels (medians) differ by less than
//! [`STEP_RATIO`] are one plateau: a smaller difference is noise, drift or
//! a partial effect (a few page walks), not another level of the memory
//! hierarchy. Real steps are far larger (L1 to L2 is about 3x, L2 to L3 2-4x,
//! L3 to DRAM 2-5x), so 1.3x keeps every real step and rejects what a noisy
//! or slowly rising curve makes.
//!
//! Knees: a plateau that is followed by a point at least [`STEP_RATIO`]
//! above its level ends at a knee (its last size); the rise is the first
//! size that is that much higher. A cache of size C matches a knee when C is
//! within a factor [`MATCH_FACTOR`] of the span from the knee to the rise
//! (a random chase starts missing before a cache is full: associativity,
//! other data, page tables; and an exclusive next level can hold it after);
//! each knee matches at most one cache and each cache one knee, the closest
//! pairs (log distance to the span's middle) first.
//!
//! A knee's plateau must also be where that cache holds the buffer: it
//! starts at a size no larger than the cache, and no later than
//! [`MATCH_FACTOR`]² times the next smaller cache (where the buffer leaves
//! that one). A plateau that starts later lies past a level the topology
//! does not report, usually memory: a VM may report a 480 MiB L3, and the
//! DRAM plateau from 32 MiB to 384 MiB, its knee near 480 MiB where page
//! walks add their step, is not that L3.

use crate::model::sweep::{
    CacheLevel, CacheMatch, CurveAnalysis, Plateau, SweepAnalysis, SweepResult, TlbCost,
};
use crate::placement::PageKind;
use crate::units::format_size;

/// The smallest ratio between two plateau levels that counts as a step.
pub const STEP_RATIO: f64 = 1.3;
/// How far (either way) a point may be from its run's median and stay on it.
pub const FLAT_RATIO: f64 = 1.15;
/// The fewest points a plateau has (with 4 points per octave: half an octave).
pub const MIN_PLATEAU_POINTS: usize = 3;
/// How far from a knee's span a cache size may be and still match it.
pub const MATCH_FACTOR: f64 = 2.0;
/// 4 KiB pages this much slower than THP at the same size: TLB misses.
pub const TLB_RATIO: f64 = 1.1;

/// A knee of a curve: plateau `plateau` ends at `knee`, the curve is
/// [`STEP_RATIO`] above it from `rise` on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Knee {
    pub plateau: usize,
    pub knee: u64,
    pub rise: u64,
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    crate::stats::median_of_sorted(v).unwrap_or(0.0)
}

fn plateau_of(curve: &[(u64, f64)], from: usize, to: usize) -> Plateau {
    let mut ns: Vec<f64> = curve[from..=to].iter().map(|p| p.1).collect();
    Plateau {
        ns: median(&mut ns),
        from_bytes: curve[from].0,
        to_bytes: curve[to].0,
        points: to - from + 1,
    }
}

/// The plateaus of `curve` (ascending size; `(bytes, ns)`).
pub fn plateaus(curve: &[(u64, f64)]) -> Vec<Plateau> {
    // Greedy runs of level points, as index ranges: a point joins the run
    // while it is within FLAT_RATIO of the run's median (a median, so one
    // noisy point neither widens the band nor drags it along).
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    for (i, &(_, ns)) in curve.iter().enumerate() {
        if i > start {
            let level = plateau_of(curve, start, i - 1).ns;
            if ns > level * FLAT_RATIO || ns * FLAT_RATIO < level {
                runs.push((start, i - 1));
                start = i;
            }
        }
    }
    if !curve.is_empty() {
        runs.push((start, curve.len() - 1));
    }
    let mut kept: Vec<(usize, usize)> = runs
        .into_iter()
        .filter(|(a, b)| b - a + 1 >= MIN_PLATEAU_POINTS)
        .collect();
    // Neighbours closer than a step are one level (with what lies between).
    loop {
        let levels: Vec<f64> = kept
            .iter()
            .map(|&(a, b)| plateau_of(curve, a, b).ns)
            .collect();
        let close = (1..kept.len()).find(|&i| {
            let (x, y) = (levels[i - 1], levels[i]);
            x.max(y) < x.min(y) * STEP_RATIO
        });
        match close {
            Some(i) => {
                kept[i - 1].1 = kept[i].1;
                kept.remove(i);
            }
            None => break,
        }
    }
    kept.into_iter()
        .map(|(a, b)| plateau_of(curve, a, b))
        .collect()
}

/// The knees of `curve` given its plateaus.
pub fn knees(curve: &[(u64, f64)], plateaus: &[Plateau]) -> Vec<Knee> {
    plateaus
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let rise = curve
                .iter()
                .find(|&&(s, ns)| s > p.to_bytes && ns >= p.ns * STEP_RATIO)?;
            Some(Knee {
                plateau: i,
                knee: p.to_bytes,
                rise: rise.0,
            })
        })
        .collect()
}

fn ns_text(ns: f64) -> String {
    if ns < 10.0 {
        format!("{ns:.1}")
    } else {
        format!("{ns:.0}")
    }
}

/// Match each cache to at most one knee (see the module comment); one
/// sentence per cache. `largest` is the sweep's largest size.
pub fn match_caches(
    plateaus: &[Plateau],
    knees: &[Knee],
    caches: &[CacheLevel],
    largest: u64,
) -> Vec<CacheMatch> {
    let mut pairs: Vec<(f64, usize, usize)> = Vec::new();
    for (ci, c) in caches.iter().enumerate() {
        let size = c.size_bytes as f64;
        // Where the buffer leaves the next smaller cache.
        let smaller = caches
            .iter()
            .map(|o| o.size_bytes)
            .filter(|&o| o < c.size_bytes)
            .max();
        let latest_start =
            smaller.map_or(size, |o| size.min(o as f64 * MATCH_FACTOR * MATCH_FACTOR));
        for (ki, k) in knees.iter().enumerate() {
            let (lo, hi) = (k.knee as f64 / MATCH_FACTOR, k.rise as f64 * MATCH_FACTOR);
            let start = plateaus[k.plateau].from_bytes as f64;
            if size >= lo && size <= hi && start <= latest_start {
                let mid = ((k.knee as f64).ln() + (k.rise as f64).ln()) / 2.0;
                pairs.push(((size.ln() - mid).abs(), ci, ki));
            }
        }
    }
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut cache_knee: Vec<Option<usize>> = vec![None; caches.len()];
    let mut knee_used = vec![false; knees.len()];
    for (_, ci, ki) in pairs {
        if cache_knee[ci].is_none() && !knee_used[ki] {
            cache_knee[ci] = Some(ki);
            knee_used[ki] = true;
        }
    }
    caches
        .iter()
        .zip(cache_knee)
        .map(|(c, k)| {
            let what = format!("{} ({})", c.name, format_size(c.size_bytes));
            match k {
                Some(ki) => {
                    let p = &plateaus[knees[ki].plateau];
                    CacheMatch {
                        cache: c.clone(),
                        plateau: Some(knees[ki].plateau),
                        text: format!(
                            "plateau ~{} ns up to ~{}, matches {what}",
                            ns_text(p.ns),
                            format_size(p.to_bytes)
                        ),
                    }
                }
                None => CacheMatch {
                    cache: c.clone(),
                    plateau: None,
                    text: if (c.size_bytes as f64) * MATCH_FACTOR > largest as f64 {
                        format!(
                            "no knee near {what}: the sweep ends at {}, too close to see one",
                            format_size(largest)
                        )
                    } else {
                        format!("no knee near {what}")
                    },
                },
            }
        })
        .collect()
}

/// Plateaus and cache matches of one curve.
pub fn analyse_curve(
    pages: PageKind,
    curve: &[(u64, f64)],
    caches: &[CacheLevel],
    largest: u64,
) -> CurveAnalysis {
    let plateaus = plateaus(curve);
    let knees = knees(curve, &plateaus);
    let matches = match_caches(&plateaus, &knees, caches, largest);
    CurveAnalysis {
        pages,
        plateaus,
        matches,
        untrusted_points: 0,
        trust_note: None,
    }
}

/// 4 KiB against THP at the sizes both were measured at and trusted: the largest one,
/// and the first size from which 4 KiB pages stay [`TLB_RATIO`] slower.
pub fn tlb(r: &SweepResult) -> (Option<TlbCost>, Option<TlbCost>) {
    let thp = r.curve(PageKind::Thp);
    let both: Vec<TlbCost> = r
        .curve(PageKind::Small)
        .into_iter()
        .filter(|s| !s.flagged)
        .filter_map(|s| {
            let t = thp
                .iter()
                .find(|t| t.size_bytes == s.size_bytes && !t.flagged)?;
            Some(TlbCost {
                size_bytes: s.size_bytes,
                small_ns: s.ns,
                thp_ns: t.ns,
            })
        })
        .collect();
    let slower = |c: &TlbCost| c.small_ns >= c.thp_ns * TLB_RATIO;
    let from = both.iter().rposition(|c| !slower(c)).map_or(0, |i| i + 1);
    (both.last().cloned(), both.get(from).cloned())
}

/// The analysis of every page kind's curve in `r`, from its trusted points
/// (flag the steps first: [`super::sweep_trust::finish`]).
pub fn analyse(r: &SweepResult) -> SweepAnalysis {
    let largest = r.points.iter().map(|p| p.size_bytes).max().unwrap_or(0);
    let curves = r
        .pages
        .iter()
        .map(|&k| {
            // Plateaus from trusted points only: a flagged point's level is
            // not the cache's (`sweep_trust`).
            let all = r.curve(k);
            let c: Vec<(u64, f64)> = all
                .iter()
                .filter(|p| !p.flagged)
                .map(|p| (p.size_bytes, p.ns))
                .collect();
            let mut a = analyse_curve(k, &c, &r.caches, largest);
            a.untrusted_points = all.len() - c.len();
            a.trust_note = trust_note(c.len(), all.len());
            a
        })
        .collect();
    let (tlb_largest, tlb_from) = tlb(r);
    SweepAnalysis {
        step_ratio: STEP_RATIO,
        flat_ratio: FLAT_RATIO,
        curves,
        tlb_largest,
        tlb_from,
    }
}

/// The note of a curve whose plateaus were named from `trusted` of `all`
/// points; None when every point was trusted.
pub fn trust_note(trusted: usize, all: usize) -> Option<String> {
    if trusted == all {
        return None;
    }
    let none = if trusted < MIN_PLATEAU_POINTS {
        "; too few to name any plateau: measure on a quieter machine, with a longer --time-budget, or repeat the run"
    } else {
        ""
    };
    Some(format!(
        "plateaus named from the {trusted} trusted of {all} points: {} flagged point(s) left out{none}",
        all - trusted
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(name: &str, size: u64) -> CacheLevel {
        CacheLevel {
            name: name.into(),
            size_bytes: size,
        }
    }

    /// A hierarchy: 1.5 ns to 32 KiB, 5 ns to 1 MiB, 20 ns to 32 MiB, then
    /// 90 ns; 4 points per octave from 4 KiB to 1 GiB, with a deterministic
    /// +-4 % wobble.
    fn curve(levels: &[(u64, f64)], last: f64) -> Vec<(u64, f64)> {
        let sizes = crate::experiments::sweep::sizes(4 << 10, 1 << 30, 4);
        sizes
            .iter()
            .enumerate()
            .map(|(i, &s)| {
                let ns = levels
                    .iter()
                    .find(|(cap, _)| s <= *cap)
                    .map_or(last, |l| l.1);
                let wobble = [1.0, 1.04, 0.97, 1.02, 0.96][i % 5];
                (s, ns * wobble)
            })
            .collect()
    }

    #[test]
    fn every_level_is_a_plateau_and_matches_its_cache() {
        let c = curve(&[(32 << 10, 1.5), (768 << 10, 5.0), (24 << 20, 20.0)], 90.0);
        let caches = [
            cache("L1d", 32 << 10),
            cache("L2", 1 << 20),
            cache("L3", 32 << 20),
        ];
        let a = analyse_curve(PageKind::Thp, &c, &caches, 1 << 30);
        assert_eq!(a.plateaus.len(), 4, "{:?}", a.plateaus);
        for (m, want) in a.matches.iter().zip([0, 1, 2]) {
            assert_eq!(m.plateau, Some(want), "{}", m.text);
        }
        assert_eq!(
            a.matches[0].text,
            "plateau ~1.5 ns up to ~32 KiB, matches L1d (32 KiB)"
        );
        assert!(
            a.matches[2].text.starts_with("plateau ~20 ns up to ~"),
            "{}",
            a.matches[2].text
        );
    }

    #[test]
    fn a_missing_level_is_no_knee_and_noise_is_no_plateau_step() {
        // No L3 effect at all: L2 straight to memory.
        let c = curve(&[(32 << 10, 1.5), (768 << 10, 5.0)], 90.0);
        let caches = [
            cache("L1d", 32 << 10),
            cache("L2", 1 << 20),
            cache("L3", 32 << 20),
        ];
        let a = analyse_curve(PageKind::Thp, &c, &caches, 1 << 30);
        assert!(a.matches[1].plateau.is_some());
        assert_eq!(a.matches[2].plateau, None);
        assert_eq!(a.matches[2].text, "no knee near L3 (32 MiB)");
        // A flat curve with +-4 % wobble: one plateau, no knee, nothing matches.
        let flat = curve(&[], 80.0);
        let a = analyse_curve(PageKind::Thp, &flat, &caches, 1 << 30);
        assert_eq!(a.plateaus.len(), 1);
        assert!(a.matches.iter().all(|m| m.plateau.is_none()));
    }

    /// A VM reports a 480 MiB L3; the real one ends near 24 MiB. Memory
    /// (90 ns) runs to 362 MiB, then page walks add a 1.4x step right where
    /// the reported L3 would end: that memory plateau is not the L3.
    #[test]
    fn a_plateau_past_the_smaller_cache_is_not_a_larger_cache_reported_wrong() {
        let c = curve(
            &[
                (32 << 10, 1.5),
                (768 << 10, 5.0),
                (24 << 20, 20.0),
                (362 << 20, 90.0),
            ],
            130.0,
        );
        let reported = [
            cache("L1d", 32 << 10),
            cache("L2", 1 << 20),
            cache("L3", 480 << 20),
        ];
        let a = analyse_curve(PageKind::Thp, &c, &reported, 1 << 30);
        let memory = a.plateaus.iter().position(|p| p.ns > 80.0).unwrap();
        assert!(a.plateaus[memory].to_bytes > 256 << 20, "{:?}", a.plateaus);
        assert_eq!(a.matches[0].plateau, Some(0), "{}", a.matches[0].text);
        assert_eq!(a.matches[1].plateau, Some(1), "{}", a.matches[1].text);
        assert_eq!(a.matches[2].plateau, None, "{}", a.matches[2].text);
        assert_eq!(a.matches[2].text, "no knee near L3 (480 MiB)");
        // The same curve with the L3 the hardware has: the 20 ns plateau.
        let real = [
            reported[0].clone(),
            reported[1].clone(),
            cache("L3", 32 << 20),
        ];
        let a = analyse_curve(PageKind::Thp, &c, &real, 1 << 30);
        assert_eq!(a.matches[2].plateau, Some(2), "{}", a.matches[2].text);
    }

    /// The L3 plateau starts near 0.9 MiB: within 4x of a 256 KiB L2 (where
    /// a buffer leaves it, however slowly the curve turns), so it is the L3.
    #[test]
    fn a_plateau_within_four_times_the_smaller_cache_is_the_larger_one() {
        let c = curve(&[(32 << 10, 1.5), (768 << 10, 5.0), (24 << 20, 20.0)], 90.0);
        let caches = [cache("L2", 256 << 10), cache("L3", 32 << 20)];
        let a = analyse_curve(PageKind::Thp, &c, &caches, 1 << 30);
        assert!(a.plateaus[2].from_bytes > 512 << 10, "{:?}", a.plateaus);
        assert_eq!(a.matches[1].plateau, Some(2), "{}", a.matches[1].text);
    }

    /// Two caches near one knee (22.6 to 26.9 MiB, middle 24.7 MiB): the
    /// closer one takes it, the other matches nothing.
    #[test]
    fn a_knee_goes_to_the_closest_cache_and_to_one_only() {
        let c = curve(&[(32 << 10, 1.5), (768 << 10, 5.0), (24 << 20, 20.0)], 90.0);
        let caches = [cache("A", 12 << 20), cache("B", 32 << 20)];
        let a = analyse_curve(PageKind::Thp, &c, &caches, 1 << 30);
        assert_eq!(a.matches[1].plateau, Some(2), "{}", a.matches[1].text);
        assert_eq!(a.matches[0].plateau, None, "{}", a.matches[0].text);
        let caches = [cache("B", 32 << 20), cache("A", 12 << 20)];
        let a = analyse_curve(PageKind::Thp, &c, &caches, 1 << 30);
        assert_eq!(a.matches[0].plateau, Some(2), "{}", a.matches[0].text);
        assert_eq!(a.matches[1].plateau, None, "{}", a.matches[1].text);
        // Closeness on a log scale, whichever side: 20 MiB is 1.24x below
        // the middle, 40 MiB 1.62x above it.
        let caches = [cache("C", 20 << 20), cache("D", 40 << 20)];
        let a = analyse_curve(PageKind::Thp, &c, &caches, 1 << 30);
        assert_eq!(a.matches[0].plateau, Some(2), "{}", a.matches[0].text);
        assert_eq!(a.matches[1].plateau, None, "{}", a.matches[1].text);
    }

    #[test]
    fn a_step_below_the_ratio_is_not_a_new_level() {
        // 20 -> 24 ns at 8 MiB is 1.2x: one plateau, no knee for a 8 MiB cache.
        let c = curve(&[(32 << 10, 1.5), (8 << 20, 20.0), (64 << 20, 24.0)], 90.0);
        let p = plateaus(&c);
        assert_eq!(p.len(), 3, "{p:?}");
        let a = analyse_curve(PageKind::Thp, &c, &[cache("L3", 8 << 20)], 1 << 30);
        assert_eq!(a.matches[0].plateau, None);
    }

    #[test]
    fn a_cache_near_the_end_of_the_sweep_says_so() {
        let c = curve(&[(32 << 10, 1.5)], 5.0);
        let a = analyse_curve(
            PageKind::Small,
            &c,
            &[cache("memory-side", 96 << 30)],
            1 << 30,
        );
        assert!(
            a.matches[0].text.contains("the sweep ends at 1 GiB"),
            "{}",
            a.matches[0].text
        );
        // Half the sweep's end is near enough to say so too; a quarter is not.
        let near = |size: u64| {
            analyse_curve(PageKind::Small, &c, &[cache("L4", size)], 1 << 30).matches[0]
                .text
                .clone()
        };
        assert!(near(600 << 20).contains("too close to see one"));
        assert_eq!(near(256 << 20), "no knee near L4 (256 MiB)");
    }
}
