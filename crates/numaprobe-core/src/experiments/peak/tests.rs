//! Tests of `peak`.

use super::*;
use crate::experiments::{testing, NoProgress};
use std::time::Duration;

fn small(mixes: &[&str]) -> PeakConfig {
    PeakConfig {
        mixes: Some(mixes.iter().map(|s| s.to_string()).collect()),
        size: Some(1 << 20),
        pages: Some(PageKind::Small),
        rule: Some(StopRule {
            budget: Duration::from_millis(60),
            min_samples: 3,
            ..StopRule::default()
        }),
        per_node: true,
        width: None,
    }
}

#[test]
fn every_cpu_streams_its_own_node_and_each_node_alone() {
    let topo = testing::live_topology();
    let plan = plan(&topo, &small(&["read", "1:1", "nt-write"])).unwrap();
    assert_eq!(plan.steps(), 3 * (1 + plan.nodes.len()));
    let r = run(&plan, &mut NoProgress).unwrap();
    // Every assertion prints the result: a failure in a guest is read from
    // CI's log alone.
    assert!(r.complete && !r.interrupted, "{r:?}");
    assert_eq!(r.system.len(), 3, "{r:?}");
    let all: usize = plan.cpus.iter().map(Vec::len).sum();
    for s in &r.system {
        assert_eq!(s.threads, all, "{s:?}");
        assert!(s.gbs > 0.0, "{s:?}");
        assert_eq!(s.placement, 1.0, "{r:?}");
        assert!(s.sum_of_nodes_alone_gbs.is_some(), "{r:?}");
    }
    for n in &r.nodes {
        let k = plan.nodes.iter().position(|&x| x == n.node).unwrap();
        let mut cpus = n.cpus.clone();
        cpus.sort_unstable();
        let mut want = plan.cpus[k].clone();
        want.sort_unstable();
        assert_eq!(cpus, want, "threads run on their node's CPUs: {n:?}");
        assert_eq!(n.placement, 1.0, "{n:?}");
    }
    assert_eq!(
        r.nodes.iter().filter(|n| n.concurrent).count(),
        3 * plan.nodes.len(),
        "{r:?}"
    );
    assert!(
        r.notes.iter().any(|n| n.contains("write-allocate")),
        "{:?}",
        r.notes
    );
}

#[test]
fn a_bad_mix_or_a_tiny_size_fails_in_the_plan() {
    let topo = testing::live_topology();
    let e = plan(&topo, &small(&["read", "5:x"]))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("--mix: invalid value '5:x' (valid: read, nt-write"),
        "{e}"
    );
    let cfg = PeakConfig {
        size: Some(100),
        ..small(&["read"])
    };
    assert!(plan(&topo, &cfg)
        .unwrap_err()
        .to_string()
        .contains("too small"));
}

struct Budget(usize);
impl StepProgress for Budget {
    fn step_finished(&mut self, _i: usize, _t: usize) {
        self.0 += 1;
    }
    fn out_of_time(&self) -> bool {
        self.0 >= 1
    }
}

#[test]
fn out_of_time_stops_between_steps_with_a_partial_result() {
    let topo = testing::live_topology();
    let plan = plan(&topo, &small(&["read", "2:1"])).unwrap();
    let r = run(&plan, &mut Budget(0)).unwrap();
    assert_eq!(r.system.len(), 1);
    assert!(!r.complete && !r.interrupted);
}

#[test]
fn the_achieved_fraction_is_the_best_system_figure_over_the_theory() {
    let mut r = memory_only(MemoryPopulation::default());
    assert_eq!(r.achieved_fraction, None);
    r.system.push(SystemPeak {
        flagged: false,
        set_aside: Default::default(),
        mix: "read".into(),
        threads: 2,
        gbs: 50.0,
        placement: 1.0,
        samples: 5,
        cv: 0.0,
        sum_of_nodes_alone_gbs: None,
        flags: vec![],
    });
    set_memory(
        &mut r,
        MemoryPopulation {
            theoretical_gbs: Some(200.0),
            ..MemoryPopulation::default()
        },
    );
    assert_eq!(r.achieved_fraction, Some(0.25));
}

fn measured(samples: Vec<f64>, aside: crate::stats::SetAside) -> crate::stats::Measured {
    crate::stats::Measured {
        summary: crate::stats::Summary::of(&samples).unwrap(),
        samples,
        stop: crate::stats::StopReason::MaxSamples,
        warmup_runs: 1,
        elapsed_s: 0.0,
        set_aside: aside,
    }
}

#[test]
fn a_nodes_figures_drop_the_samples_set_aside_and_the_warm_up() {
    // Probe, warm-up, then held, lost, held, lost, held: node 0's and 1's
    // figures from the three held samples only.
    let s = |a: f64, b: f64, lost: bool| (vec![(0, a), (1, b)], lost);
    let taken = vec![
        s(1.0, 1.0, false),
        s(2.0, 2.0, false),
        s(10.0, 20.0, false),
        s(99.0, 99.0, true),
        s(11.0, 21.0, false),
        s(98.0, 98.0, true),
        s(12.0, 22.0, false),
    ];
    let aside = crate::stats::SetAside {
        preempted: 2,
        shortened: 1,
        ..Default::default()
    };
    let per = per_node_of(&taken, &measured(vec![30.0, 32.0, 34.0], aside));
    assert_eq!(per[&0], vec![10.0, 11.0, 12.0]);
    assert_eq!(per[&1], vec![20.0, 21.0, 22.0]);
    // None held: the figure is the lost samples', and so are the nodes'.
    let aside = crate::stats::SetAside {
        used_anyway: true,
        ..aside
    };
    let per = per_node_of(&taken, &measured(vec![198.0, 196.0], aside));
    assert_eq!(per[&0], vec![99.0, 98.0]);
}

#[test]
fn a_part_of_a_threads_buffers_splits_reads_and_writes_alike() {
    let mut buf = vec![0u8; 8 * LINE * 4];
    let base = buf.as_mut_ptr();
    let b = MixBuffers {
        read: base as *const u8,
        read_len: 8 * LINE,
        write: base.wrapping_add(16 * LINE),
        write_len: 4 * LINE,
    };
    let p = part_of(&b, Part { k: 1, parts: 2 });
    assert_eq!(p.read as usize - base as usize, 4 * LINE);
    assert_eq!(p.read_len, 4 * LINE);
    assert_eq!(p.write as usize - base as usize, 18 * LINE);
    assert_eq!(p.write_len, 2 * LINE);
    let w = part_of(&b, Part::WHOLE);
    assert_eq!((w.read_len, w.write_len), (8 * LINE, 4 * LINE));
    // Buffers too small to split in 16 lines stay whole.
    let r = part_of(&b, Part { k: 3, parts: 16 });
    assert_eq!((r.read_len, r.write_len), (8 * LINE, 4 * LINE));
    assert_eq!(r.read, b.read);
}
