//! Tests of the inference's working state: which levels count as on the
//! package (below the link step).

use super::{on_package_ranks, PairCells};
use crate::analysis::pair_table::Slot;

fn ranks(ratios: &[f64]) -> usize {
    let c: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
    on_package_ranks(&c, &c)
}

#[test]
fn on_package_levels_are_the_mesh_near_ones_below_the_link_step() {
    // SNC2 on two sockets: 1.05x on the package, 1.74x across.
    assert_eq!(ranks(&[1.05, 1.74]), 1);
    // SNC4 with on-package HBM: 1.2, 1.3, 1.4 on the package, 2.1 and
    // 2.3 across.
    assert_eq!(ranks(&[1.2, 1.3, 1.4, 2.1, 2.3]), 3);
    // One remote level: a package split in four and a flat firmware
    // table over eight sockets look alike; nothing is claimed.
    assert_eq!(ranks(&[1.1]), 0);
    // A fast link between two nodes of low local latency (McCalpin's
    // Ranger: 122 ns against their own 100 ns, though 1.04x the median
    // local): judged against its own ends, it is a link.
    let costs: Vec<f64> = [122.0f64, 138.0, 145.0].iter().map(|v| v.ln()).collect();
    let excess = [
        (122.0f64 / 100.3).ln(),
        (138.0f64 / 117.0).ln(),
        (145.0f64 / 134.0).ln(),
    ];
    assert_eq!(on_package_ranks(&excess, &costs), 0);
    // Sockets joined by links: the nearest level is a link hop.
    assert_eq!(ranks(&[1.6, 2.2]), 0);
    assert_eq!(ranks(&[1.7]), 0);
    // A near level that is no nearer to local than the next step is
    // long: a ladder of hops, not a package.
    assert_eq!(ranks(&[1.3, 1.6, 1.9]), 0);
    assert_eq!(ranks(&[]), 0);
}

#[test]
fn a_pair_holds_its_two_directions_in_order_and_no_more() {
    let mut p = PairCells::default();
    assert_eq!(p.iter().count(), 0);
    assert_eq!(p.both(), None);
    assert!(!(1.0, p).is_set());
    // The mark of an empty place is not taken for a cell.
    p.push(u32::MAX as usize);
    assert!(!(1.0, p).is_set());
    p.push(7);
    assert!((1.0, p).is_set());
    assert_eq!(p.iter().collect::<Vec<_>>(), [7]);
    assert_eq!(p.both(), None);
    p.push(3);
    assert_eq!(p.iter().collect::<Vec<_>>(), [7, 3]);
    assert_eq!(p.both(), Some((7, 3)));
    p.push(9);
    assert_eq!(p.iter().collect::<Vec<_>>(), [7, 3]);
}
