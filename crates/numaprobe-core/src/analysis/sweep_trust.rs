//! Which points of a cache-size sweep hold, before the curve is read.
//!
//! A point is flagged when its own samples say so (spread, two modes, too
//! few that held their CPU: [`crate::stats::flags`], set when it is
//! measured) or when it breaks the one thing every cache hierarchy obeys: a
//! larger working set is never faster. A point more than
//! [`super::sweep::STEP_RATIO`] faster than the point of the next smaller
//! size cannot both be right (4 MiB 133 ns, 4.8 MiB 48 ns, 8 MiB 128 ns: the
//! chase was preempted at one, or the pages differ), so both are flagged,
//! since which of the two is wrong the curve alone cannot tell. The
//! plateaus are then named from trusted points only
//! ([`super::sweep::analyse`]), and a curve that left points out says so.

use super::sweep::STEP_RATIO;
use crate::model::sweep::SweepResult;
use crate::units::format_size;

/// The first word of a step flag, so that judging a curve again replaces
/// its step flags instead of adding to them.
pub const NON_MONOTONIC: &str = "non-monotonic:";

/// Flag both points of every step down larger than [`STEP_RATIO`] between
/// neighbouring sizes of one page kind's curve (see the module comment).
pub fn flag_steps(r: &mut SweepResult) {
    for p in &mut r.points {
        p.flags.retain(|f| !f.starts_with(NON_MONOTONIC));
        p.flagged = !p.flags.is_empty();
    }
    for kind in r.pages.clone() {
        let mut idx: Vec<usize> = (0..r.points.len())
            .filter(|&i| r.points[i].pages == kind)
            .collect();
        idx.sort_by_key(|&i| r.points[i].size_bytes);
        for w in idx.windows(2) {
            let (a, b) = (&r.points[w[0]], &r.points[w[1]]);
            if a.ns <= b.ns * STEP_RATIO {
                continue;
            }
            let (a_ns, a_size, b_ns, b_size) = (a.ns, a.size_bytes, b.ns, b.size_bytes);
            let why = "a larger working set is never faster, so one of the two is wrong (a preempted or disturbed point); a quieter machine or a repeated run would help";
            let slow = format!(
                "{NON_MONOTONIC} {a_ns:.1} ns at {}, slower than {b_ns:.1} ns at the larger {}; {why}",
                format_size(a_size),
                format_size(b_size)
            );
            let fast = format!(
                "{NON_MONOTONIC} {b_ns:.1} ns at {}, faster than {a_ns:.1} ns at the smaller {}; {why}",
                format_size(b_size),
                format_size(a_size)
            );
            for (i, f) in [(w[0], slow), (w[1], fast)] {
                let p = &mut r.points[i];
                if !p.flags.iter().any(|g| g.starts_with(NON_MONOTONIC)) {
                    p.flags.push(f);
                }
                p.flagged = true;
            }
        }
    }
}

/// Flag the steps and analyse the trusted points: what a sweep's document
/// holds once its points are in (or as far as they go).
pub fn finish(r: &mut SweepResult) {
    flag_steps(r);
    r.analysis = Some(super::sweep::analyse(r));
}

#[cfg(test)]
#[path = "sweep_trust_tests.rs"]
mod tests;
