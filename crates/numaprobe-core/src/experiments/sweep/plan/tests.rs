//! The sweep plan's tests: sizes, ranges, the default end, caches per
//! CPU and the plan's arithmetic with injected rates.

use super::*;
use crate::experiments::testing;

#[test]
fn ranges_parse_and_bad_ones_say_what_is_valid() {
    assert_eq!(parse_range("4K-1G"), Ok((4 << 10, 1 << 30)));
    assert_eq!(parse_range("64KiB-512MiB"), Ok((64 << 10, 512 << 20)));
    for bad in ["1G-4K", "4K-4K", "4Q-1G", "4K", "64-1M", "-1G", "4K-"] {
        let e = parse_range(bad).unwrap_err();
        assert!(
            e.starts_with(&format!("--sweep: invalid range '{bad}'")),
            "{e}"
        );
        assert!(e.contains("valid: FROM-TO"), "{e}");
        assert!(!e.contains('\n'));
    }
    assert!(parse_range("1G-4K")
        .unwrap_err()
        .contains("smaller than TO"));
    assert!(parse_range("4Q-1G")
        .unwrap_err()
        .contains("'4Q' is not a size"));
}

#[test]
fn sizes_are_geometric_whole_lines_and_end_at_the_range() {
    let s = sizes(4 << 10, 1 << 20, 4);
    assert_eq!(s.first(), Some(&(4 << 10)));
    assert_eq!(s.last(), Some(&(1 << 20)));
    // 8 octaves, 4 points each, both ends included.
    assert_eq!(s.len(), 33);
    assert!(s.iter().all(|x| x % 64 == 0));
    assert!(s.windows(2).all(|w| w[0] < w[1]));
    // Every 4th point is a power of two.
    assert_eq!(s[4], 8 << 10);
    assert_eq!(s[8], 16 << 10);
    assert_eq!(
        sizes(4 << 10, 64 << 10, 1),
        vec![4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10]
    );
}

#[test]
fn default_max_is_a_power_of_two_within_memory() {
    let live = LiveSystem::read().unwrap();
    let m = default_max(&live, 0);
    assert!(m.is_power_of_two());
    assert!(m <= DEFAULT_TO);
    assert!(m <= live.allocatable_bytes(0).unwrap() / 4 || m == DEFAULT_FROM * 2);
}

fn cache(name: &str, size_bytes: u64) -> CacheLevel {
    CacheLevel {
        name: name.into(),
        size_bytes,
    }
}

#[test]
fn the_default_range_ends_past_the_largest_cache() {
    let caches = [
        cache("L1d", 32 << 10),
        cache("L2", 1 << 20),
        cache("L3", 32 << 20),
    ];
    assert_eq!(default_to(&caches, u64::MAX), 128 << 20);
    // Not a power of two: up to the next one.
    assert_eq!(default_to(&[cache("L3", 48 << 20)], u64::MAX), 256 << 20);
    // A small cache still reaches memory; a huge one stops at 2 GiB.
    assert_eq!(default_to(&[cache("L2", 1 << 20)], u64::MAX), 64 << 20);
    assert_eq!(default_to(&[cache("L3", 480 << 20)], u64::MAX), DEFAULT_TO);
    // Unknown caches: the widest range; short memory: what it allows.
    assert_eq!(default_to(&[], u64::MAX), DEFAULT_TO);
    assert_eq!(default_to(&caches, 32 << 20), 32 << 20);
}

#[test]
fn step_costs_grow_with_the_points_and_count_each_buffer() {
    let live = LiveSystem::read().unwrap();
    let topo = testing::live_topology();
    let mut cfg = tiny();
    cfg.range = Some((1 << 20, 1 << 30));
    cfg.pages = Some(vec![PageKind::Small, PageKind::Thp]);
    if default_max(&live, 0) < (4 << 30) {
        cfg.range = Some((1 << 20, 256 << 20));
    }
    let plan = plan(&topo, &cfg).unwrap();
    let c = plan.step_costs();
    assert_eq!(c.len(), plan.steps());
    let n = plan.sizes.len();
    // Sampling: the 20 ms budget and a 5 ms sample.
    let sampling = 0.025;
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    let largest = gib(*plan.sizes.last().unwrap());
    for k in 0..2 {
        for (i, &size) in plan.sizes.iter().enumerate() {
            let buffer = if i == 0 {
                largest * BUFFER_S_PER_GIB
            } else {
                0.0
            };
            let want = sampling + gib(size) * POINT_SETUP_S_PER_GIB + buffer;
            assert!(
                (c[k * n + i] - want).abs() < 1e-12,
                "{i}: {} {want}",
                c[k * n + i]
            );
        }
    }
    assert!(c[n - 1] > c[n - 2] && c[n - 2] > c[1]);
}

/// A plan made by hand: the arithmetic is tested without the machine.
fn plan_of(sizes: Vec<u64>, pages: Vec<PageKind>) -> SweepPlan {
    SweepPlan {
        cpu_node: 0,
        cpu: 0,
        mem_node: 0,
        sizes,
        points_per_octave: 1,
        pages,
        rule: default_rule(),
        seed: 1,
        caches: Vec::new(),
        private_bytes: 0,
        notes: Vec::new(),
    }
}

#[test]
fn step_costs_at_measured_rates_use_them_and_the_fallback_is_the_constants() {
    let mib = |m: u64| m << 20;
    let plan = plan_of(
        vec![mib(64), mib(256), mib(1024)],
        vec![PageKind::Small, PageKind::Thp],
    );
    let rates = SweepRates {
        setup_s_per_gib: 2.0,
        buffer_s_per_gib: 0.25,
        sampling: vec![(mib(64), 0.1)],
        measured: true,
    };
    let c = plan.step_costs_at(&rates);
    // Per kind: sampling 0.1, set-up 2 s/GiB, the 1 GiB buffer at 0.25 s
    // on the first point only.
    let want = [0.1 + 0.125 + 0.25, 0.1 + 0.5, 0.1 + 2.0];
    assert_eq!(c.len(), 6);
    for (i, w) in want.iter().chain(want.iter()).enumerate() {
        assert!((c[i] - w).abs() < 1e-12, "{i}: {} {w}", c[i]);
    }
    // Twice the set-up rate: the set-up part doubles, nothing else.
    let twice = SweepRates {
        setup_s_per_gib: 4.0,
        ..rates.clone()
    };
    let d = plan.step_costs_at(&twice);
    assert!((d[2] - c[2] - 2.0).abs() < 1e-12);
    // Nothing timed: 3 s/GiB, 0.5 s/GiB, the 200 ms budget and its 10 ms sample.
    let f = plan.step_costs();
    assert_eq!(f, plan.step_costs_at(&SweepRates::fallback()));
    assert!((f[0] - (0.21 + 0.1875 + 0.5)).abs() < 1e-12, "{}", f[0]);
    assert!((f[2] - (0.21 + 3.0)).abs() < 1e-12, "{}", f[2]);
}

#[test]
fn a_points_sampling_is_the_slowest_calibrated_or_the_budget() {
    let rule = default_rule();
    let r = SweepRates {
        sampling: vec![(4 << 10, 0.06), (1 << 20, 0.23), (64 << 20, 0.2)],
        ..SweepRates::fallback()
    };
    assert_eq!(r.point_sampling_s(&rule), 0.23);
    // Nothing sampled: the 200 ms budget and its 10 ms sample.
    let f = SweepRates::fallback().point_sampling_s(&rule);
    assert!((f - 0.21).abs() < 1e-12, "{f}");
    // Another budget: its own figure (2 s and a 100 ms sample).
    let long = StopRule {
        budget: Duration::from_secs(2),
        ..rule
    };
    assert!((SweepRates::fallback().point_sampling_s(&long) - 2.1).abs() < 1e-12);
}

#[test]
fn the_calibration_times_the_smallest_a_middle_and_the_largest_cheap_size() {
    let s = sizes(4 << 10, 128 << 20, 4);
    let plan = plan_of(s.clone(), vec![PageKind::Small]);
    let c = plan.calibration_sizes();
    // 4 KiB, 64 MiB (the largest not above the cap) and 512 KiB between.
    assert_eq!(c, vec![4 << 10, 512 << 10, CALIBRATION_MAX_BYTES]);
    assert!(c.iter().all(|x| s.contains(x)));
    // A sweep below the cap: its own largest.
    let small = plan_of(sizes(4 << 10, 1 << 20, 1), vec![PageKind::Small]);
    assert_eq!(small.calibration_sizes(), vec![4 << 10, 64 << 10, 1 << 20]);
    // All above the cap: the smallest alone.
    let big = plan_of(vec![128 << 20, 256 << 20], vec![PageKind::Small]);
    assert_eq!(big.calibration_sizes(), vec![128 << 20]);
    assert_eq!(
        plan_of(vec![], vec![]).calibration_sizes(),
        Vec::<u64>::new()
    );
}

pub(crate) fn tiny() -> SweepConfig {
    SweepConfig {
        range: Some((4 << 10, 256 << 10)),
        points_per_octave: Some(1),
        pages: Some(vec![PageKind::Small]),
        rule: Some(StopRule {
            budget: Duration::from_millis(20),
            ..StopRule::default()
        }),
        ..SweepConfig::default()
    }
}

#[test]
fn bad_requests_fail_in_the_plan() {
    let topo = testing::with_memory_only_node();
    let mut cfg = tiny();
    cfg.cpus = Some(vec![9999]);
    let e = plan(&topo, &cfg).unwrap_err().to_string();
    assert!(e.contains("CPU 9999 does not exist"), "{e}");
    let mut cfg = tiny();
    cfg.cpu_node = Some(7);
    assert!(matches!(
        plan(&topo, &cfg),
        Err(ExperimentError::CpuLessNode { .. })
    ));
    let mut cfg = tiny();
    cfg.points_per_octave = Some(0);
    assert!(plan(&topo, &cfg).is_err());
    let mut cfg = tiny();
    cfg.range = Some((128, 1 << 40));
    cfg.points_per_octave = Some(64);
    let e = plan(&topo, &cfg).unwrap_err().to_string();
    assert!(e.contains("at most 1000"), "{e}");
}

#[test]
fn the_private_caches_are_those_no_other_core_shares() {
    let c = |level: u32, kind: &str, kib: u64, cpus: &[u32]| Cache {
        level,
        kind: kind.into(),
        size_bytes: Some(kib << 10),
        line_size: Some(64),
        cpus: cpus.to_vec(),
    };
    let caches = [
        c(1, "Data", 48, &[0, 4]),
        c(1, "Instruction", 4096, &[0, 4]),
        c(2, "Unified", 2048, &[0, 4]),
        c(3, "Unified", 32768, &[0, 1, 2, 3, 4, 5, 6, 7]),
        c(2, "Unified", 9999, &[1, 5]),
    ];
    // CPU 0's core (CPUs 0 and 4) alone has its L1d and L2; the L3 is
    // shared and another core's L2 is not CPU 0's.
    assert_eq!(private_bytes(&caches, 0, &[0, 4]), 2048 << 10);
    // An L2 shared by a cluster of cores is not private.
    let cluster = [c(1, "Data", 64, &[0]), c(2, "Unified", 4096, &[0, 1, 2, 3])];
    assert_eq!(private_bytes(&cluster, 0, &[0]), 64 << 10);
    // Caches not known: none.
    assert_eq!(private_bytes(&[], 0, &[0]), 0);
    let unsized_l1 = Cache {
        size_bytes: None,
        ..c(1, "Data", 0, &[0])
    };
    assert_eq!(private_bytes(&[unsized_l1], 0, &[0]), 0);
}
