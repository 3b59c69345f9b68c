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
    assert!(r.complete && !r.interrupted);
    assert_eq!(r.system.len(), 3);
    let all: usize = plan.cpus.iter().map(Vec::len).sum();
    for s in &r.system {
        assert_eq!(s.threads, all);
        assert!(s.gbs > 0.0);
        assert_eq!(s.placement, 1.0);
        assert!(s.sum_of_nodes_alone_gbs.is_some());
    }
    for n in &r.nodes {
        let k = plan.nodes.iter().position(|&x| x == n.node).unwrap();
        let mut cpus = n.cpus.clone();
        cpus.sort_unstable();
        let mut want = plan.cpus[k].clone();
        want.sort_unstable();
        assert_eq!(cpus, want, "threads run on their node's CPUs");
        assert_eq!(n.placement, 1.0);
    }
    assert_eq!(
        r.nodes.iter().filter(|n| n.concurrent).count(),
        3 * plan.nodes.len()
    );
    assert!(r.notes.iter().any(|n| n.contains("write-allocate")));
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
