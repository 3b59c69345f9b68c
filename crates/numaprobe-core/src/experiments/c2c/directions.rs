//! The two directions of a pair's HITM round trip, held against each
//! other. A modified line's round trip between the same two CPUs passes
//! the same caches whichever CPU starts it, so the two figures agree on a
//! machine that stays as it is. When they are far apart within one run,
//! the CPUs were not the same CPUs for both (a virtual machine's host
//! placed its vCPUs anew between the two measurements), and neither
//! figure says what the pair costs: both are flagged, so no verdict
//! (`diff`, `check`, `fleet`) rests on them. The read-shared transfer has
//! a direction of its own (one CPU holds the line, the other reads it) and
//! is not compared.

use crate::model::c2c::C2cPair;
use crate::stats::UNSTABLE_RANGE;

/// The start of the flag, which also keeps it from being added twice.
pub const FLAG: &str = "directions disagree";

/// Flag the HITM figures of every pair whose reverse is in `pairs` when
/// the slower of the two is more than [`UNSTABLE_RANGE`] times the faster
/// (the ratio at which one figure's own samples are too spread to trust).
pub fn mark(pairs: &mut [C2cPair]) {
    let medians: Vec<Option<f64>> = pairs
        .iter()
        .map(|p| p.hitm.as_ref().map(|f| f.median))
        .collect();
    for i in 0..pairs.len() {
        let (a, b) = (pairs[i].a, pairs[i].b);
        let Some(j) = pairs.iter().position(|q| (q.a, q.b) == (b, a)) else {
            continue;
        };
        let (Some(here), Some(back)) = (medians[i], medians[j]) else {
            continue;
        };
        let (lo, hi) = if here <= back {
            (here, back)
        } else {
            (back, here)
        };
        if !(lo > 0.0 && hi / lo > UNSTABLE_RANGE) {
            continue;
        }
        let Some(f) = pairs[i].hitm.as_mut() else {
            continue;
        };
        if f.flags.iter().any(|x| x.starts_with(FLAG)) {
            continue;
        }
        f.flags.push(format!(
            "{FLAG}: CPU {a} -> CPU {b} {here:.1} ns, CPU {b} -> CPU {a} {back:.1} ns ({:.1}x; trusted up to {UNSTABLE_RANGE}x): a modified line's round trip costs the same either way, so the CPUs moved between the two (a virtual machine's host placing its vCPUs anew)",
            hi / lo
        ));
        f.flagged = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::c2c::{Domain, Figure};

    fn fig(median: f64) -> Figure {
        Figure {
            median,
            min: median,
            max: median,
            cv: 0.0,
            samples: vec![median],
            sketch: None,
            stop: None,
            set_aside: Default::default(),
            flagged: false,
            flags: Vec::new(),
        }
    }

    fn pair(a: u32, b: u32, hitm: Option<f64>, shared: Option<f64>) -> C2cPair {
        C2cPair {
            a,
            b,
            node_a: 0,
            node_b: 0,
            domain: Domain::SameL3,
            hitm: hitm.map(fig),
            shared: shared.map(fig),
        }
    }

    fn flags(p: &C2cPair) -> Vec<String> {
        p.hitm.as_ref().map(|f| f.flags.clone()).unwrap_or_default()
    }

    #[test]
    fn directions_far_apart_flag_both_hitm_figures_and_nothing_else() {
        // A second run of the development VM: 77.2 ns one way, 223.1 the other.
        let mut p = vec![
            pair(0, 1, Some(77.2), Some(10.0)),
            pair(1, 0, Some(223.1), Some(40.0)),
        ];
        mark(&mut p);
        for q in &p {
            let h = q.hitm.as_ref().unwrap();
            assert!(h.flagged);
            assert_eq!(h.flags.len(), 1, "{:?}", h.flags);
            // The read-shared transfer has a direction: 4x apart, not compared.
            assert!(!q.shared.as_ref().unwrap().flagged);
        }
        assert_eq!(
            flags(&p[0])[0],
            "directions disagree: CPU 0 -> CPU 1 77.2 ns, CPU 1 -> CPU 0 223.1 ns (2.9x; trusted up to 1.5x): a modified line's round trip costs the same either way, so the CPUs moved between the two (a virtual machine's host placing its vCPUs anew)"
        );
        assert!(flags(&p[1])[0].starts_with(
            "directions disagree: CPU 1 -> CPU 0 223.1 ns, CPU 0 -> CPU 1 77.2 ns (2.9x"
        ));
        // Marked again (the result is marked after every pair): once.
        mark(&mut p);
        assert_eq!(flags(&p[0]).len(), 1);
        assert_eq!(flags(&p[1]).len(), 1);
    }

    #[test]
    fn directions_that_agree_or_have_no_partner_are_left_alone() {
        let mut p = vec![
            // 1.05x apart: the first quiet run.
            pair(0, 1, Some(220.5), None),
            pair(1, 0, Some(210.2), None),
            // Exactly at the line: not past it.
            pair(2, 3, Some(100.0), None),
            pair(3, 2, Some(150.0), None),
            // No reverse measured.
            pair(4, 5, Some(10.0), None),
            pair(6, 4, Some(90.0), None),
            // The reverse has no HITM figure.
            pair(6, 7, Some(10.0), None),
            pair(7, 6, None, Some(1.0)),
            // A zero figure gives no ratio.
            pair(8, 9, Some(0.0), None),
            pair(9, 8, Some(5.0), None),
        ];
        mark(&mut p);
        for q in &p {
            assert!(flags(q).is_empty(), "{} -> {}: {:?}", q.a, q.b, flags(q));
            assert!(q.hitm.as_ref().is_none_or(|f| !f.flagged));
        }
        // Just past the line, in either order: flagged.
        let mut p = vec![pair(3, 2, Some(150.1), None), pair(2, 3, Some(100.0), None)];
        mark(&mut p);
        assert!(p.iter().all(|q| q.hitm.as_ref().unwrap().flagged));
    }
}
