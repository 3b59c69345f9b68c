//! The knee and the peak of a loaded-latency curve (`model::loaded`).
//!
//! Knee: the first loaded point whose median latency is at least
//! [`KNEE_FACTOR`] (1.10) times the idle point's, i.e. where queueing in the
//! memory system adds a tenth to the unloaded latency. Below it the load
//! costs the chase (almost) nothing; past it latency climbs while bandwidth
//! flattens. Ten per cent is well above the run-to-run noise of an idle
//! chase (about 1 %) and early enough to mark the start of the climb rather
//! than the wall. Peak: the highest achieved bandwidth of the curve's
//! trusted points, which need not be the heaviest (past saturation more
//! injected traffic can lower what is delivered). Both come from trusted
//! points only: a flagged point was measured while a thread lost its CPU,
//! beside other tasks' traffic, or spread too wide, and its bandwidth is
//! the machine's load as much as the memory system's.

use crate::model::loaded::{Curve, LoadPoint, LoadedResult};

/// Latency over idle at which a point is the knee.
pub const KNEE_FACTOR: f64 = 1.10;

/// Index of the knee in `points` (idle first), or None when the curve has
/// no idle point or never climbs by [`KNEE_FACTOR`]. Flagged points
/// (`LoadPoint::flags`) take no part: a point stretched by another task, or
/// an idle figure that did, would put the knee where the machine's load
/// was, not the memory system's.
pub fn knee(points: &[LoadPoint]) -> Option<usize> {
    let idle = points
        .first()
        .filter(|p| p.delay.is_none() && p.flags.is_empty())?;
    if !(idle.latency_ns.is_finite() && idle.latency_ns > 0.0) {
        return None;
    }
    // A hair under the product, so 110 ns over an idle 100 ns counts
    // despite binary rounding.
    let limit = idle.latency_ns * KNEE_FACTOR * (1.0 - 1e-12);
    points
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, p)| p.flags.is_empty() && p.latency_ns.is_finite() && p.latency_ns >= limit)
        .map(|(i, _)| i)
}

/// The highest finite bandwidth of the trusted points of `points` (no
/// `LoadPoint::flags`); 0 for none, which no point matches.
pub fn peak_gbs(points: &[LoadPoint]) -> f64 {
    points
        .iter()
        .filter(|p| p.flags.is_empty())
        .map(|p| p.bandwidth_gbs)
        .filter(|b| b.is_finite())
        .fold(0.0, f64::max)
}

/// Fill a curve's knee and peak from its points.
pub fn finish_curve(c: &mut Curve) {
    c.knee = knee(&c.points);
    c.peak_gbs = peak_gbs(&c.points);
}

/// Fill every curve of a result.
pub fn finish(r: &mut LoadedResult) {
    for c in &mut r.curves {
        finish_curve(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(delay: Option<u32>, gbs: f64, ns: f64) -> LoadPoint {
        LoadPoint {
            delay,
            bandwidth_gbs: gbs,
            latency_ns: ns,
            p90_ns: ns * 1.1,
            p99_ns: ns * 1.3,
            load_threads: if delay.is_some() { 3 } else { 0 },
            windows: 100,
            stop: None,
            set_aside: Default::default(),
            others_busy_cpus: None,
            flags: Vec::new(),
        }
    }

    #[test]
    fn the_knee_is_the_first_point_ten_per_cent_above_idle() {
        let pts = [
            pt(None, 0.6, 100.0),
            pt(Some(1024), 5.0, 104.0),
            pt(Some(256), 20.0, 109.9),
            pt(Some(64), 40.0, 110.0),
            pt(Some(0), 45.0, 180.0),
        ];
        assert_eq!(knee(&pts), Some(3));
        // Exactly at the factor counts; later higher points do not move it.
        let mut later = pts.to_vec();
        later[2].latency_ns = 125.0;
        assert_eq!(knee(&later), Some(2));
    }

    #[test]
    fn a_flat_curve_or_one_without_idle_has_no_knee() {
        let flat = [
            pt(None, 0.6, 100.0),
            pt(Some(64), 30.0, 105.0),
            pt(Some(0), 35.0, 109.0),
        ];
        assert_eq!(knee(&flat), None);
        assert_eq!(knee(&flat[1..]), None);
        assert_eq!(knee(&[]), None);
        // A lone idle point: nothing to climb.
        assert_eq!(knee(&flat[..1]), None);
    }

    #[test]
    fn a_flagged_point_is_never_the_knee_nor_a_flagged_idle_its_base() {
        let flag = |mut p: LoadPoint| {
            p.flags = vec!["preempted".into()];
            p
        };
        let pts = [
            pt(None, 0.6, 100.0),
            flag(pt(Some(256), 20.0, 300.0)),
            pt(Some(64), 40.0, 108.0),
            pt(Some(0), 45.0, 115.0),
        ];
        assert_eq!(knee(&pts), Some(3), "the stretched point is passed over");
        let mut base = pts.to_vec();
        base[0] = flag(base[0].clone());
        assert_eq!(knee(&base), None, "a flagged idle is no base");
    }

    #[test]
    fn the_peak_is_the_highest_bandwidth_not_the_heaviest_point() {
        let pts = [
            pt(None, 0.6, 100.0),
            pt(Some(64), 42.0, 130.0),
            pt(Some(0), 39.0, 250.0),
            pt(Some(8), f64::NAN, 200.0),
        ];
        assert_eq!(peak_gbs(&pts), 42.0);
        assert_eq!(peak_gbs(&[]), 0.0);
    }

    #[test]
    fn the_peak_is_taken_from_trusted_points_only() {
        let flag = |mut p: LoadPoint| {
            p.flags = vec!["memory traffic from other tasks: ...".into()];
            p
        };
        let pts = [
            pt(None, 0.6, 100.0),
            pt(Some(64), 30.0, 130.0),
            flag(pt(Some(8), 55.0, 180.0)),
            pt(Some(0), 39.0, 250.0),
        ];
        assert_eq!(peak_gbs(&pts), 39.0, "the flagged 55 GB/s is passed over");
        // No trusted point: no peak, which no point's bandwidth matches.
        let all: Vec<LoadPoint> = pts.iter().cloned().map(flag).collect();
        assert_eq!(peak_gbs(&all), 0.0);
        let mut c = Curve {
            cpu_node: 0,
            mem_node: 0,
            mix: "read".into(),
            chase_cpu: 0,
            load_cpus: vec![1],
            points: pts.to_vec(),
            knee: None,
            peak_gbs: 0.0,
            placement: 1.0,
            size_bytes: 0,
            pages: "4k".into(),
        };
        finish_curve(&mut c);
        assert_eq!((c.knee, c.peak_gbs), (Some(1), 39.0));
        let mut r = LoadedResult {
            schema: "numaprobe/1".into(),
            curves: vec![Curve {
                points: all,
                ..c.clone()
            }],
            timer: crate::timer::Timer::get().info(),
            rule: None,
            vector: "scalar".into(),
            notes: Vec::new(),
            failed: Vec::new(),
            complete: true,
            interrupted: false,
        };
        finish(&mut r);
        assert_eq!((r.curves[0].knee, r.curves[0].peak_gbs), (None, 0.0));
    }
}
