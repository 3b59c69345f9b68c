//! The hop-myths search of the note's section 3.4: given measured cases, find
//! every case that contradicts "all equal hop cases take equal time" or
//! "greater hop distance always means slower time".
//!
//! A difference counts only when it is larger than the noise: at least
//! `MIN_DIFFERENCE` and at least `CV_FACTOR` times the larger coefficient of
//! variation of the two cases, so a noisy machine does not "debunk" anything.

use crate::model::study::{CaseRef, CaseResult, Contradiction, ExperimentResult, MythFindings};

/// Smallest relative difference that counts (5 %).
pub const MIN_DIFFERENCE: f64 = 0.05;
/// A difference must also exceed this many coefficients of variation.
pub const CV_FACTOR: f64 = 2.0;

fn threshold_text() -> String {
    format!(
        "the slower total exceeds the faster by more than {:.0} % and by more than {CV_FACTOR} x the larger CV",
        MIN_DIFFERENCE * 100.0
    )
}

fn sorted_hops(c: &CaseResult) -> Vec<u32> {
    let mut h = c.hops.clone();
    h.sort();
    h
}

fn case_ref(c: &CaseResult) -> CaseRef {
    CaseRef {
        label: c.label.clone(),
        description: c.description.clone(),
        hops: c.hops.clone(),
        total_s: c.total.median,
        percent: c.percent,
    }
}

/// Relative slowdown of `slow` over `fast` when it is significant.
fn significant(fast: &CaseResult, slow: &CaseResult) -> Option<f64> {
    let f = fast.total.median;
    let s = slow.total.median;
    if !(f > 0.0 && s.is_finite()) {
        return None;
    }
    let d = (s - f) / f;
    let noise = CV_FACTOR * fast.total.cv.max(slow.total.cv);
    (d > MIN_DIFFERENCE && d > noise).then_some(d)
}

fn contradiction(fast: &CaseResult, slow: &CaseResult, d: f64) -> Contradiction {
    Contradiction {
        faster: case_ref(fast),
        slower: case_ref(slow),
        difference_percent: d * 100.0,
    }
}

/// `a` has at least as many hops as `b` thread for thread (both sorted) and
/// more in total.
fn more_hops(a: &[u32], b: &[u32]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| x >= y)
        && a.iter().sum::<u32>() > b.iter().sum::<u32>()
}

/// Search one experiment's cases (cases that lost their placement are left
/// out: their time says nothing about hops).
pub fn find(e: &ExperimentResult) -> MythFindings {
    let cases: Vec<&CaseResult> = e.cases.iter().filter(|c| c.placement_ok).collect();
    let mut equal_hops = Vec::new();
    // Myth 1: within each group of equal hop counts, every case significantly
    // slower than the group's fastest contradicts it.
    let mut groups: Vec<Vec<u32>> = cases.iter().map(|c| sorted_hops(c)).collect();
    groups.sort();
    groups.dedup();
    for g in &groups {
        let members: Vec<&CaseResult> = cases
            .iter()
            .copied()
            .filter(|c| &sorted_hops(c) == g)
            .collect();
        let Some(fastest) = members
            .iter()
            .copied()
            .min_by(|a, b| a.total.median.total_cmp(&b.total.median))
        else {
            continue;
        };
        for c in &members {
            if let Some(d) = significant(fastest, c) {
                equal_hops.push(contradiction(fastest, c, d));
            }
        }
    }
    // Myth 2: every case with more hops that is significantly faster than a
    // case with fewer hops; cite the fewer-hop case it beats by the most.
    let mut more_hops_faster = Vec::new();
    for far in &cases {
        let hf = sorted_hops(far);
        let beaten = cases
            .iter()
            .copied()
            .filter(|near| more_hops(&hf, &sorted_hops(near)))
            .filter_map(|near| significant(far, near).map(|d| (near, d)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((near, d)) = beaten {
            more_hops_faster.push(contradiction(far, near, d));
        }
    }
    MythFindings {
        experiment: e.id.clone(),
        threshold: threshold_text(),
        equal_hops,
        more_hops_faster,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::study::tests::{case, sample_report};

    #[test]
    fn finds_the_notes_two_myths() {
        let mut r = sample_report();
        let e = &mut r.experiments[0];
        // Crossfire (1,1) is much slower than no crossfire (1,1): myth 1.
        // Add a 0 Hop-1 Hop case faster than 0 Hop-0 Hop: myth 2 (appendix A.4).
        e.cases
            .push(case("0.0.w.0 0.1.w.1", &[0, 1], &[0.4, 0.45], 1.0));
        let f = find(e);
        assert_eq!(f.equal_hops.len(), 1);
        assert_eq!(f.equal_hops[0].faster.label, "0.0.w.1 1.0.w.3");
        assert_eq!(f.equal_hops[0].slower.label, "0.0.w.1 1.0.w.0");
        assert!((f.equal_hops[0].difference_percent - 30.43).abs() < 0.1);
        assert_eq!(f.more_hops_faster.len(), 1);
        assert_eq!(f.more_hops_faster[0].faster.label, "0.0.w.0 0.1.w.1");
        assert_eq!(f.more_hops_faster[0].slower.label, "0.0.w.0 1.0.w.1");
    }

    #[test]
    fn noise_and_bad_placement_are_not_evidence() {
        let mut r = sample_report();
        let e = &mut r.experiments[0];
        for c in &mut e.cases {
            c.total.cv = 0.5; // very noisy
        }
        let f = find(e);
        assert!(f.equal_hops.is_empty() && f.more_hops_faster.is_empty());
        let mut r = sample_report();
        r.experiments[0].cases[2].placement_ok = false;
        assert!(find(&r.experiments[0]).equal_hops.is_empty());
    }
}
