//! Plan checks (on the live machine and a memory-only node) and one tiny
//! real run: chase on one CPU, one load thread, two delays.

use super::*;
use crate::experiments::{testing, StepProgress};
use crate::model::loaded::LoadPoint;
use std::time::Duration;

fn tiny() -> LoadedConfig {
    LoadedConfig {
        size: Some(4 << 20),
        pages: Some(PageKind::Small),
        delays: Some(vec![0, 64]),
        rule: Some(StopRule {
            budget: Duration::from_millis(40),
            ..StopRule::default()
        }),
        ..LoadedConfig::default()
    }
}

#[test]
fn defaults_are_local_and_the_worst_remote_with_a_geometric_series() {
    let topo = testing::with_memory_only_node();
    let p = default_pairs(&topo, 0);
    // Node 7 has no distances here: the farthest other node by number.
    assert_eq!(p.first(), Some(&(0, 0)));
    assert_eq!(p.last(), Some(&(0, 7)));
    let live = testing::live_topology();
    if live.allowed_mem_nodes().len() == 1 {
        assert_eq!(default_pairs(&live, 0), vec![(0, 0)]);
    }
    assert_eq!(DEFAULT_DELAYS.last(), Some(&0));
    assert!(DEFAULT_DELAYS.windows(2).all(|w| w[0] > w[1]));
}

#[test]
fn delays_are_ordered_lightest_first_and_checked() {
    assert_eq!(check_delays(&[0, 64, 8, 64]).unwrap(), vec![64, 8, 0]);
    let e = check_delays(&[8, MAX_DELAY + 1]).unwrap_err().to_string();
    assert!(e.contains(&format!("delay {}", MAX_DELAY + 1)), "{e}");
    assert!(e.contains("valid: 0 to"), "{e}");
    assert!(check_delays(&[]).is_err());
}

#[test]
fn mixes_parse_to_canonical_names_and_a_bad_one_names_the_valid_ones() {
    let v: Vec<String> = ["read", "3:1", "NT-write", "3:1"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(parse_mixes(&v).unwrap(), ["read", "3:1", "nt-write"]);
    let e = parse_mixes(&["4:x".to_string()]).unwrap_err().to_string();
    assert!(e.contains("'4:x'"), "{e}");
    assert!(e.contains("read, 3:1, 2:1, 1:1, nt-write"), "{e}");
}

#[test]
fn a_cpu_less_node_is_a_memory_target_but_never_a_cpu_node() {
    let topo = testing::with_memory_only_node();
    let cfg = LoadedConfig {
        pairs: Some(vec![(7, 0)]),
        ..tiny()
    };
    assert!(matches!(
        plan(&topo, &cfg),
        Err(ExperimentError::CpuLessNode { .. })
    ));
    let cfg = LoadedConfig {
        pairs: Some(vec![(0, 99)]),
        ..tiny()
    };
    assert!(matches!(
        plan(&topo, &cfg),
        Err(ExperimentError::NoSuchNode { .. })
    ));
}

#[test]
fn chase_and_load_cpus_are_checked_against_the_node() {
    let topo = testing::live_topology();
    let cpus = topo.allowed_cpus_of_node(0);
    let cfg = LoadedConfig {
        chase_cpu: Some(9999),
        ..tiny()
    };
    let e = plan(&topo, &cfg).unwrap_err().to_string();
    assert!(
        e.contains("chase CPU 9999 is not an allowed CPU of node 0"),
        "{e}"
    );
    let cfg = LoadedConfig {
        chase_cpu: Some(cpus[0]),
        load_cpus: Some(vec![cpus[0]]),
        ..tiny()
    };
    let e = plan(&topo, &cfg).unwrap_err().to_string();
    assert!(e.contains("is the chase CPU"), "{e}");
    if cpus.len() >= 2 {
        let p = plan(&topo, &tiny()).unwrap();
        assert_eq!(p.cpus[0].chase, topo.allowed_core_cpus_of_node(0)[0]);
        assert!(!p.cpus[0].load.contains(&p.cpus[0].chase));
        assert!(!p.cpus[0].load.is_empty());
        assert_eq!(p.delays, vec![64, 0]);
        assert_eq!(p.steps(), p.pairs.len() * 3);
    }
}

#[test]
fn the_default_size_beats_the_cache_within_a_gib_per_thread() {
    let topo = testing::live_topology();
    let live = LiveSystem::read().unwrap();
    for threads in [1, 2, 64] {
        let s = default_size(&topo, &live, &[0], threads);
        assert!(s <= 1 << 30, "{s}");
        assert_eq!(s % (2 << 20), 0);
        assert!(s * threads as u64 <= live.allocatable_bytes(0).unwrap() / 2 + (2 << 20));
    }
}

/// Step indices and labels as a progress bar sees them.
#[derive(Default)]
struct Seen(Vec<(usize, usize, String)>);
impl StepProgress for Seen {
    fn step_started(&mut self, index: usize, total: usize, label: &str) {
        self.0.push((index, total, label.to_string()));
    }
}

#[test]
fn a_tiny_run_gives_an_idle_point_then_loaded_points_all_placed() {
    let topo = testing::live_topology();
    if topo.allowed_cpus_of_node(0).len() < 2 {
        return; // no CPU left for a load thread
    }
    let mut cfg = tiny();
    cfg.pairs = Some(vec![(0, 0)]);
    let cpus = topo.allowed_cpus_of_node(0);
    cfg.chase_cpu = Some(cpus[0]);
    cfg.load_cpus = Some(vec![cpus[1]]);
    let p = plan(&topo, &cfg).unwrap();
    let mut seen = Seen::default();
    let mut partials = 0;
    let r = run_with(&p, &mut seen, &mut |_| partials += 1).unwrap();
    assert!(r.complete, "{:?}", r.failed);
    assert_eq!(r.curves.len(), 1);
    let c = &r.curves[0];
    assert_eq!((c.chase_cpu, c.load_cpus.clone()), (cpus[0], vec![cpus[1]]));
    assert_eq!(c.placement, 1.0);
    let delays: Vec<Option<u32>> = c.points.iter().map(|p| p.delay).collect();
    assert_eq!(delays, [None, Some(64), Some(0)]);
    assert_eq!(c.points[0].load_threads, 0);
    assert_eq!(c.points[2].load_threads, 1);
    for pt in &c.points {
        assert!(
            pt.bandwidth_gbs.is_finite() && pt.bandwidth_gbs > 0.0,
            "{pt:?}"
        );
        assert!(pt.latency_ns > 0.0 && pt.p90_ns >= pt.latency_ns && pt.p99_ns >= pt.p90_ns);
        assert!(pt.windows > 0);
    }
    // The peak is a trusted point's bandwidth, the highest (none: 0); a
    // busy machine may flag any point.
    let trusted: Vec<f64> = c
        .points
        .iter()
        .filter(|pt| pt.flags.is_empty())
        .map(|pt| pt.bandwidth_gbs)
        .collect();
    assert!(trusted.iter().all(|&b| b <= c.peak_gbs), "{c:?}");
    assert!(trusted.contains(&c.peak_gbs) || c.peak_gbs == 0.0, "{c:?}");
    assert_eq!(seen.0.len(), 3);
    assert_eq!(seen.0[0].0, 0);
    assert!(seen.0[0].2.ends_with("idle"), "{:?}", seen.0);
    assert_eq!(seen.0[2].1, 3);
    // Once per point, once per curve's placement.
    assert_eq!(partials, 4);
}

/// Out of time from the start: nothing measured, not complete.
struct Spent;
impl StepProgress for Spent {
    fn out_of_time(&self) -> bool {
        true
    }
}

#[test]
fn out_of_time_stops_before_the_first_point() {
    let topo = testing::live_topology();
    if topo.allowed_cpus_of_node(0).len() < 2 {
        return;
    }
    let p = plan(&topo, &tiny()).unwrap();
    let r = run(&p, &mut Spent).unwrap();
    assert!(!r.complete);
    assert!(!r.interrupted, "out of time is no interruption");
    // No pair is set up: no buffer placed, no curve begun.
    assert!(r.curves.is_empty(), "{:?}", r.curves);
}

/// Out of time once `left` steps have finished.
struct SpentAfter {
    left: usize,
}
impl StepProgress for SpentAfter {
    fn step_finished(&mut self, _index: usize, _total: usize) {
        self.left = self.left.saturating_sub(1);
    }
    fn out_of_time(&self) -> bool {
        self.left == 0
    }
}

#[test]
fn steps_run_in_order_across_mixes_and_time_spent_mid_pair_leaves_the_run_incomplete() {
    let topo = testing::live_topology();
    let cpus = topo.allowed_cpus_of_node(0);
    if cpus.len() < 2 {
        return; // no CPU left for a load thread: one point a mix
    }
    let mut cfg = tiny();
    cfg.pairs = Some(vec![(0, 0)]);
    cfg.mixes = Some(vec!["read".into(), "2:1".into()]);
    cfg.delays = Some(vec![0]);
    cfg.chase_cpu = Some(cpus[0]);
    cfg.load_cpus = Some(vec![cpus[1]]);
    let p = plan(&topo, &cfg).unwrap();
    // Idle and one delay, for each of two mixes: steps 0-3, in order.
    let mut seen = Seen::default();
    let r = run(&p, &mut seen).unwrap();
    assert!(r.complete, "{:?}", r.failed);
    let steps: Vec<(usize, usize)> = seen.0.iter().map(|s| (s.0, s.1)).collect();
    assert_eq!(steps, [(0, 4), (1, 4), (2, 4), (3, 4)]);
    assert!(
        seen.0[2].2.ends_with("idle") && seen.0[3].2.contains("2:1"),
        "{:?}",
        seen.0
    );
    // Spent after the first point: the pair stops there, and the run says
    // it is not complete (nor interrupted: nobody asked it to stop).
    let r = run(&p, &mut SpentAfter { left: 1 }).unwrap();
    assert!(!r.complete && !r.interrupted);
    let points: usize = r.curves.iter().map(|c| c.points.len()).sum();
    assert_eq!(points, 1);
}

#[test]
fn a_node_without_a_cpu_to_spare_gives_the_idle_point_alone() {
    let mut topo = testing::live_topology();
    let chase = topo.allowed_core_cpus_of_node(0)[0];
    for c in &mut topo.cpus {
        c.allowed = c.os_index == chase;
    }
    let mut cfg = tiny();
    cfg.pairs = Some(vec![(0, 0)]);
    let p = plan(&topo, &cfg).unwrap();
    assert!(p.cpus[0].load.is_empty());
    assert_eq!(p.steps(), 1);
    assert!(
        p.notes.iter().any(|n| n.contains("idle point alone")),
        "{:?}",
        p.notes
    );
    let r = run(&p, &mut Seen::default()).unwrap();
    assert!(r.complete, "{:?}", r.failed);
    let c = &r.curves[0];
    assert_eq!(c.points.len(), 1);
    assert!(c.points[0].delay.is_none());
    assert!(c.load_cpus.is_empty());
    assert_eq!(c.placement, 1.0);
    assert_eq!(c.knee, None);
}

#[test]
fn step_costs_are_the_sampling_plus_each_pairs_buffers_on_its_first_step() {
    let topo = crate::experiments::testing::live_topology();
    let cfg = LoadedConfig {
        delays: Some(vec![8, 0]),
        size: Some(64 << 20),
        rule: Some(StopRule {
            budget: Duration::from_millis(100),
            ..StopRule::default()
        }),
        ..LoadedConfig::default()
    };
    let plan = plan(&topo, &cfg).unwrap();
    let c = plan.step_costs();
    assert_eq!(c.len(), plan.steps());
    // 100 ms budget and a 5 ms sample.
    let sampling = 0.105;
    let threads = 1 + plan.cpus[0].load.len();
    let setup = threads as f64 / 16.0 * SETUP_S_PER_GIB;
    assert!((c[0] - sampling - setup).abs() < 1e-12, "{c:?}");
    assert!(c[1..plan.pair_steps(0)]
        .iter()
        .all(|&x| (x - sampling).abs() < 1e-12));
}

/// A run of `delays` with a busy rival on `rival_cpu` for all of it, the
/// chase on the node's first CPU and one load thread on its second, a zero
/// budget (three samples a point, held or not, of 5 ms each): its points,
/// or None (with the reason printed) where the machine cannot pin or has
/// no second CPU.
fn with_a_rival(test: &str, on_load_cpu: bool, delays: Vec<u32>) -> Option<Vec<LoadPoint>> {
    let topo = testing::live_topology();
    let cpus = topo.allowed_cpus_of_node(0);
    if cpus.len() < 2 {
        eprintln!("{test}: skipped: node 0 has no second CPU for a load thread");
        return None;
    }
    let mut cfg = tiny();
    cfg.pairs = Some(vec![(0, 0)]);
    cfg.chase_cpu = Some(cpus[0]);
    cfg.load_cpus = Some(vec![cpus[1]]);
    cfg.delays = Some(delays);
    cfg.rule = Some(StopRule {
        budget: Duration::ZERO,
        ..StopRule::default()
    });
    let p = plan(&topo, &cfg).unwrap();
    let cpu = if on_load_cpu { cpus[1] } else { cpus[0] };
    let _rival = crate::experiments::rival::rival_or_skip(cpu, test)?;
    let mut points = Vec::new();
    for _ in 0..20 {
        let r = run(&p, &mut Seen::default()).unwrap();
        assert!(r.complete, "{:?}", r.failed);
        let got = r.curves[0].points.clone();
        let preempted = got
            .iter()
            .filter(|pt| pt.delay.is_some() || !on_load_cpu)
            .any(|pt| pt.set_aside.preempted > 0);
        points.extend(got);
        if preempted {
            break;
        }
    }
    Some(points)
}

/// Every point took three samples: at most three set aside, and all three
/// exactly when its figure had to be made of them.
fn three_taken(points: &[LoadPoint]) {
    for pt in points {
        let aside = pt.set_aside.total();
        assert!(aside <= crate::stats::BUDGET_MIN_SAMPLES, "{pt:?}");
        assert_eq!(
            pt.set_aside.used_anyway,
            aside == crate::stats::BUDGET_MIN_SAMPLES,
            "{pt:?}"
        );
        assert!(pt.windows > 0, "{pt:?}");
    }
}

#[test]
fn a_chase_sharing_its_cpu_with_a_busy_thread_sets_its_lost_samples_aside() {
    let test = "a_chase_sharing_its_cpu_with_a_busy_thread_sets_its_lost_samples_aside";
    let Some(points) = with_a_rival(test, false, vec![0]) else {
        return;
    };
    three_taken(&points);
    assert!(
        points.iter().any(|pt| pt.set_aside.preempted > 0),
        "{points:?}"
    );
}

#[test]
fn a_load_thread_sharing_its_cpu_with_a_busy_thread_sets_the_sample_aside() {
    // The chase's CPU is left alone: what is set aside at a loaded point is
    // the load thread's loss, read from outside it.
    let test = "a_load_thread_sharing_its_cpu_with_a_busy_thread_sets_the_sample_aside";
    let Some(points) = with_a_rival(test, true, vec![0]) else {
        return;
    };
    three_taken(&points);
    assert!(
        points
            .iter()
            .any(|pt| pt.delay.is_some() && pt.set_aside.preempted > 0),
        "{points:?}"
    );
}
