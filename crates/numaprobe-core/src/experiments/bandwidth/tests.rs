//! The bandwidth plan and run on this machine and on built topologies.

use super::*;
use crate::experiments::{testing, NoProgress};
use std::time::Duration;

fn small() -> BandwidthConfig {
    BandwidthConfig {
        mem_nodes: Some(vec![0]),
        cpu_nodes: Some(vec![0]),
        size: Some(8 << 20),
        pages: Some(PageKind::Small),
        rule: Some(StopRule {
            budget: Duration::from_millis(100),
            ..StopRule::default()
        }),
        ..BandwidthConfig::default()
    }
}

#[test]
fn every_op_runs_placed_with_all_threads() {
    let topo = testing::live_topology();
    let n = topo.allowed_core_cpus_of_node(0).len();
    for op in [StreamOp::Read, StreamOp::CopyNt, StreamOp::Triad] {
        let cfg = BandwidthConfig {
            op: Some(op),
            ..small()
        };
        let plan = plan(&topo, &cfg).unwrap();
        let r = run(&plan, &mut NoProgress).unwrap();
        let c = &r.cells[0];
        assert_eq!(c.params.threads as usize, n);
        assert_eq!(c.cpus.len(), n);
        assert_eq!(c.placement.fraction_on_intended, 1.0, "{op:?}");
        assert!(c.median > 0.0);
        assert_eq!(c.params.op.as_deref(), Some(op.name()));
        assert_eq!(r.unit, "GB/s");
        assert_eq!(r.notes.is_empty(), op != StreamOp::Triad);
    }
}

#[test]
fn scaling_measures_one_to_n_threads() {
    let topo = testing::live_topology();
    let cfg = BandwidthConfig {
        scaling: true,
        threads: Some(2.min(topo.allowed_cpus_of_node(0).len())),
        ..small()
    };
    let plan = plan(&topo, &cfg).unwrap();
    let r = run(&plan, &mut NoProgress).unwrap();
    let sc = r.scaling.as_ref().unwrap();
    assert_eq!(sc.len(), plan.cells.len());
    for (i, c) in sc.iter().enumerate() {
        assert_eq!(c.params.threads as usize, i + 1);
    }
    assert_eq!(r.cells.len(), 1);
    assert_eq!(r.matrix, vec![vec![Some(sc.last().unwrap().median)]]);
}

#[test]
fn a_buffer_that_does_not_fit_fails_every_cell_on_it() {
    let topo = testing::live_topology();
    if topo.allowed_cpus_of_node(0).len() < 2 {
        return; // one CPU: a scaling run has one cell
    }
    let cfg = BandwidthConfig {
        scaling: true,
        threads: Some(2),
        ..small()
    };
    let plan = plan(&topo, &cfg).unwrap();
    // Node 0 has 7 MiB left for the 8 MiB buffer both cells share.
    let mut gauge = testing::ShortAt::new(0, 0, 7 << 20);
    let r = run_with(&plan, &mut NoProgress, &mut gauge).unwrap();
    assert_eq!(r.failed.len(), 2);
    assert_eq!(r.failed[0].cpus, plan.cells[0].cpus);
    assert_eq!(r.failed[1].cpus, plan.cells[1].cpus);
    assert!(
        r.failed[0]
            .reason
            .starts_with("8 MiB does not fit in node 0's allocatable memory (7 MiB now"),
        "{}",
        r.failed[0].reason
    );
    assert!(r.scaling.as_ref().unwrap().is_empty());
    assert!(r.setups.is_empty());
    assert!(!r.complete);
    // With room, one buffer serves both thread counts.
    let r = run(&plan, &mut NoProgress).unwrap();
    assert_eq!(r.setups.len(), 1);
    assert_eq!(r.setups[0].cells, 2);
    let sc = r.scaling.as_ref().unwrap();
    assert_eq!(sc[0].params.size_bytes, sc[1].params.size_bytes);
    assert_eq!(sc[1].placement.fraction_on_intended, 1.0);
}

#[test]
fn the_threads_of_a_cell_are_checked_together() {
    let topo = testing::live_topology();
    if topo.allowed_cpus_of_node(0).len() < 2 {
        return;
    }
    // Two threads of 4 MiB each: 6 MiB left is enough for either alone.
    let cfg = BandwidthConfig {
        threads: Some(2),
        ..small()
    };
    let plan = plan(&topo, &cfg).unwrap();
    let mut gauge = testing::ShortAt::new(0, 0, 6 << 20);
    let r = run_with(&plan, &mut NoProgress, &mut gauge).unwrap();
    assert_eq!(r.failed.len(), 1, "{:?}", r.cells);
    assert!(r.cells.is_empty());
    assert_eq!(r.matrix, vec![vec![None]]);
}

#[test]
fn too_many_threads_and_tiny_sizes_fail_in_the_plan() {
    let topo = testing::live_topology();
    let cfg = BandwidthConfig {
        threads: Some(1000),
        ..small()
    };
    let e = plan(&topo, &cfg).unwrap_err().to_string();
    assert!(e.contains("1000 threads asked for node 0"), "{e}");
    let cfg = BandwidthConfig {
        size: Some(4096),
        op: Some(StreamOp::Triad),
        ..small()
    };
    assert!(matches!(
        plan(&topo, &cfg),
        Err(ExperimentError::Invalid(_))
    ));
}

#[test]
fn write_allocate_is_stated_for_ordinary_stores_only() {
    assert!(write_allocate_note(StreamOp::Write)
        .unwrap()
        .contains("2.00x"));
    assert!(write_allocate_note(StreamOp::Copy)
        .unwrap()
        .contains("1.50x"));
    assert!(write_allocate_note(StreamOp::Read).is_none());
    assert!(write_allocate_note(StreamOp::WriteNt).is_none());
}
