//! Tests of the sweep's point flags and of plateaus from trusted points.

use super::*;
use crate::analysis::sweep::trust_note;
use crate::model::sweep::tests::result;
use crate::model::sweep::{CacheLevel, SweepPoint};
use crate::placement::PageKind;
use crate::stats::{SetAside, StopReason};

fn point(size: u64, ns: f64) -> SweepPoint {
    SweepPoint {
        size_bytes: size,
        pages: PageKind::Thp,
        ns,
        min_ns: ns,
        max_ns: ns,
        cv: 0.01,
        samples: 5,
        stop: StopReason::CvReached,
        set_aside: SetAside::default(),
        flagged: false,
        flags: vec![],
    }
}

fn sweep(points: &[(u64, f64)]) -> SweepResult {
    let mut r = result(
        points.iter().map(|p| p.0).collect(),
        4,
        vec![CacheLevel {
            name: "L2".into(),
            size_bytes: 1 << 20,
        }],
        points.iter().map(|&(s, ns)| point(s, ns)).collect(),
    );
    r.pages = vec![PageKind::Thp];
    r
}

const MIB: u64 = 1 << 20;

#[test]
fn a_point_much_faster_than_the_smaller_size_before_it_is_flagged_with_its_neighbour() {
    // The trial's curve: 4 MiB 133 ns, 4.8 MiB 48 ns, 8 MiB 128 ns.
    let mut r = sweep(&[
        (4 * MIB, 133.0),
        (4 * MIB + 4 * MIB / 5, 48.0),
        (8 * MIB, 128.0),
    ]);
    flag_steps(&mut r);
    let f: Vec<bool> = r.points.iter().map(|p| p.flagged).collect();
    assert_eq!(f, [true, true, false]);
    assert!(
        r.points[1].flags[0].starts_with(
            "non-monotonic: 48.0 ns at 4.8 MiB, faster than 133.0 ns at the smaller 4 MiB"
        ),
        "{:?}",
        r.points[1].flags
    );
    assert!(
        r.points[0].flags[0].starts_with(
            "non-monotonic: 133.0 ns at 4 MiB, slower than 48.0 ns at the larger 4.8 MiB"
        ),
        "{:?}",
        r.points[0].flags
    );
    // Judged again: the same flags, not twice.
    flag_steps(&mut r);
    assert_eq!(r.points[1].flags.len(), 1);
}

#[test]
fn a_rise_and_a_step_down_within_the_ratio_are_not_flagged() {
    // 100 -> 77 is 1.299x faster: noise, not a broken curve; exactly 1.3x
    // is not past the line either.
    let mut r = sweep(&[
        (MIB, 10.0),
        (2 * MIB, 100.0),
        (3 * MIB, 77.0),
        (4 * MIB, 130.0),
        (5 * MIB, 100.0),
    ]);
    flag_steps(&mut r);
    assert!(r.points.iter().all(|p| !p.flagged), "{:?}", r.points);
}

#[test]
fn a_step_flag_that_no_longer_holds_is_removed_and_other_flags_stay() {
    let mut r = sweep(&[(MIB, 100.0), (2 * MIB, 50.0)]);
    r.points[0].flags.push("unstable: CV 20 %".into());
    r.points[0].flagged = true;
    flag_steps(&mut r);
    assert_eq!(r.points[0].flags.len(), 2);
    r.points[1].ns = 100.0;
    flag_steps(&mut r);
    assert_eq!(r.points[0].flags, vec!["unstable: CV 20 %"]);
    assert!(r.points[0].flagged);
    assert!(r.points[1].flags.is_empty() && !r.points[1].flagged);
}

#[test]
fn steps_are_judged_within_one_page_kind_in_size_order() {
    // 4k points are slower than THP; interleaved in run order they must
    // not be compared with each other.
    let mut r = sweep(&[(2 * MIB, 50.0), (MIB, 40.0)]);
    let mut small = point(MIB, 200.0);
    small.pages = PageKind::Small;
    r.points.insert(1, small);
    r.pages = vec![PageKind::Thp, PageKind::Small];
    flag_steps(&mut r);
    assert!(r.points.iter().all(|p| !p.flagged), "{:?}", r.points);
}

fn hierarchy() -> Vec<(u64, f64)> {
    // 5 ns up to 1 MiB, 60 ns past it, 4 points each side.
    (1..=8)
        .map(|i| (i * MIB / 4, if i <= 4 { 5.0 } else { 60.0 }))
        .collect()
}

#[test]
fn plateaus_are_named_from_trusted_points_and_the_curve_says_what_it_left_out() {
    let mut r = sweep(&hierarchy());
    finish(&mut r);
    let a = r.analysis.as_ref().unwrap();
    assert_eq!(a.curves[0].plateaus.len(), 2);
    assert_eq!(a.curves[0].untrusted_points, 0);
    assert_eq!(a.curves[0].trust_note, None);
    // One noisy point inside the first plateau: still two plateaus, the
    // first from three points, and a note.
    r.points[1].flagged = true;
    r.points[1].flags = vec!["unstable: CV 30 %".into()];
    finish(&mut r);
    let c = &r.analysis.as_ref().unwrap().curves[0];
    assert_eq!(c.plateaus.len(), 2, "{:?}", c.plateaus);
    assert_eq!(c.plateaus[0].points, 3);
    assert_eq!(c.plateaus[0].ns, 5.0);
    assert_eq!(c.untrusted_points, 1);
    assert_eq!(
        c.trust_note.as_deref(),
        Some("plateaus named from the 7 trusted of 8 points: 1 flagged point(s) left out")
    );
}

#[test]
fn a_curve_of_untrusted_points_names_no_plateau_and_says_why() {
    let mut r = sweep(&hierarchy());
    for p in &mut r.points[2..] {
        p.flagged = true;
        p.flags = vec!["unstable: CV 30 %".into()];
    }
    finish(&mut r);
    let c = &r.analysis.as_ref().unwrap().curves[0];
    assert!(c.plateaus.is_empty(), "{:?}", c.plateaus);
    assert!(c.matches.iter().all(|m| m.plateau.is_none()));
    let note = c.trust_note.as_deref().unwrap();
    assert!(
        note.starts_with("plateaus named from the 2 trusted of 8 points: 6 flagged"),
        "{note}"
    );
    assert!(note.contains("too few to name any plateau"), "{note}");
    // Three trusted points make a plateau: no "too few".
    assert!(!trust_note(3, 8).unwrap().contains("too few"));
    assert!(trust_note(2, 8).unwrap().contains("too few"));
}

#[test]
fn the_summary_counts_flagged_points_and_names_one() {
    let mut r = sweep(&hierarchy());
    assert_eq!(r.flagged_summary(), None);
    r.points[3].flagged = true;
    r.points[3].flags = vec!["unstable: CV 30 %".into()];
    assert_eq!(
        r.flagged_summary().as_deref(),
        Some("1 of 8 sweep points flagged (e.g. 1 MiB with thp pages: unstable: CV 30 %)")
    );
}

#[test]
fn untrusted_points_take_no_part_in_the_tlb_cost() {
    let mut r = sweep(&[(MIB, 50.0), (2 * MIB, 50.0)]);
    let mut s1 = point(MIB, 80.0);
    s1.pages = PageKind::Small;
    let mut s2 = point(2 * MIB, 80.0);
    s2.pages = PageKind::Small;
    r.points.extend([s1, s2]);
    r.pages = vec![PageKind::Small, PageKind::Thp];
    finish(&mut r);
    assert_eq!(
        r.analysis
            .as_ref()
            .unwrap()
            .tlb_largest
            .as_ref()
            .unwrap()
            .size_bytes,
        2 * MIB
    );
    r.points[1].flagged = true;
    r.points[1].flags = vec!["two modes".into()];
    finish(&mut r);
    let a = r.analysis.as_ref().unwrap();
    assert_eq!(a.tlb_largest.as_ref().unwrap().size_bytes, MIB);
    for p in &mut r.points[2..] {
        p.flags = vec!["unstable".into()];
    }
    finish(&mut r);
    assert_eq!(r.analysis.as_ref().unwrap().tlb_largest, None);
}
