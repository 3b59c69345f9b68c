//! The latency plan and run on this machine and on built topologies.

use super::*;
use crate::experiments::testing;
use crate::experiments::NoProgress;
use crate::experiments::Progress;
use crate::model::matrix::MatrixResult;
use std::time::Duration;

fn small() -> LatencyConfig {
    LatencyConfig {
        size: Some(4 << 20),
        pages: Some(PageKind::Small),
        rule: Some(StopRule {
            budget: Duration::from_millis(100),
            ..StopRule::default()
        }),
        ..LatencyConfig::default()
    }
}

#[test]
fn small_matrix_on_this_machine_is_fully_placed() {
    let topo = testing::live_topology();
    let plan = plan(&topo, &small()).unwrap();
    let r = run(&plan, &mut NoProgress).unwrap();
    assert!(r.complete);
    assert_eq!(r.cells.len(), plan.cells.len());
    for c in &r.cells {
        assert_eq!(c.placement.fraction_on_intended, 1.0);
        // A busy machine may flag a cell (spread, samples set aside, other
        // tasks beside it); nothing else may.
        assert!(
            c.flags
                .iter()
                .all(|f| crate::model::matrix::is_busy_machine_flag(f)),
            "{:?}",
            c.flags
        );
        assert_eq!(c.flagged, !c.flags.is_empty());
        // Three held samples, or a flag that says why not.
        assert!(c.samples.len() >= 3 || c.flagged, "{c:?}");
        assert!(c.median > 0.0);
        assert_eq!(c.cpus.len(), 1);
        assert_eq!(c.params.size_bytes, 4 << 20);
    }
    assert!(r.matrix.iter().flatten().all(Option::is_some));
}

/// Records what a caller drawing progress would see.
#[derive(Default)]
struct Seen {
    started: Vec<(usize, usize)>,
    finished: Vec<(usize, bool)>,
}
impl Progress for Seen {
    fn cell_started(&mut self, index: usize, total: usize, _label: &str) {
        self.started.push((index, total));
    }
    fn cell_finished(&mut self, partial: &MatrixResult) {
        self.finished.push((partial.cells.len(), partial.complete));
    }
}

#[test]
fn progress_sees_every_cell_and_partial_results() {
    let topo = testing::live_topology();
    let plan = plan(&topo, &small()).unwrap();
    let mut seen = Seen::default();
    run(&plan, &mut seen).unwrap();
    let n = plan.cells.len();
    assert_eq!(seen.started, (0..n).map(|i| (i, n)).collect::<Vec<_>>());
    // After each cell the partial result holds that many cells and is
    // not yet complete: what `--output` is rewritten with.
    assert_eq!(
        seen.finished,
        (1..=n).map(|i| (i, false)).collect::<Vec<_>>()
    );
}

/// Records failures as a caller drawing progress would see them.
#[derive(Default)]
struct Failures(Vec<(usize, usize, String, usize)>);
impl Progress for Failures {
    fn cell_failed(&mut self, index: usize, total: usize, reason: &str, p: &MatrixResult) {
        self.0
            .push((index, total, reason.to_string(), p.failed.len()));
    }
}

#[test]
fn an_explicit_size_that_no_longer_fits_fails_the_cells_of_its_buffer() {
    let topo = testing::live_topology();
    let mut plan = plan(&topo, &small()).unwrap();
    // Node 0 measured twice: both cells share its one buffer.
    let (cn, cpu, mn) = plan.cells[0];
    plan.cells = vec![(cn, cpu, mn), (cn, cpu, mn)];
    let mut seen = Failures::default();
    let mut gauge = testing::ShortAt::new(0, mn, 3 << 20);
    let r = run_with(&plan, &mut seen, &mut gauge).unwrap();
    assert_eq!(r.failed.len(), 2);
    let f = &r.failed[0];
    assert_eq!(
        (f.cpu_node, f.mem_node, f.cpus.clone()),
        (cn, mn, vec![cpu])
    );
    assert!(
        f.reason.starts_with(&format!(
            "4 MiB does not fit in node {mn}'s allocatable memory (3 MiB now"
        )),
        "{}",
        f.reason
    );
    assert_eq!(
        seen.0,
        [(0, 2, f.reason.clone(), 1), (1, 2, f.reason.clone(), 2)]
    );
    assert!(r.cells.is_empty() && r.setups.is_empty());
    assert!(!r.complete);
    assert!(!r.interrupted);
    // With room again, both are measured on one buffer set up once.
    let r = run(&plan, &mut NoProgress).unwrap();
    assert_eq!(r.cells.len(), 2);
    assert_eq!(r.setups.len(), 1);
    assert_eq!(r.setups[0].cells, 2);
    assert_eq!(r.setups[0].touched_by_cpu, plan.touchers[0].1);
    assert!(r.complete);
}

#[test]
fn a_default_size_that_no_longer_fits_is_reduced_and_flagged() {
    let topo = testing::live_topology();
    let cfg = LatencyConfig {
        size: Some(8 << 20),
        ..small()
    };
    let mut plan = plan(&topo, &cfg).unwrap();
    // As if 8 MiB had been the default of the plan.
    plan.size_explicit = false;
    // One cell: on a multi-node machine (the arm64 VM runs these tests
    // on two nodes) the other cells would be measured and fill the matrix.
    plan.cells.truncate(1);
    let mn = plan.cells[0].2;
    let mut gauge = testing::ShortAt::new(0, mn, 6 << 20);
    let r = run_with(&plan, &mut NoProgress, &mut gauge).unwrap();
    assert!(r.failed.is_empty());
    let c = &r.cells[0];
    // Half of what is left, in whole 2 MiB.
    assert_eq!(c.params.size_bytes, 2 << 20);
    assert!(c.flagged);
    assert!(
        c.flags[0].contains("reduced from 8 MiB to 2 MiB"),
        "{:?}",
        c.flags
    );
    // Less than 2 MiB worth measuring left: the cell fails instead.
    let mut gauge = testing::ShortAt::new(0, mn, 3 << 20);
    let r = run_with(&plan, &mut NoProgress, &mut gauge).unwrap();
    assert_eq!(r.failed.len(), 1);
    assert!(r.matrix.iter().flatten().all(Option::is_none));
}

#[test]
fn stride_pattern_defaults_to_128_bytes() {
    let topo = testing::live_topology();
    let cfg = LatencyConfig {
        pattern: Some(ChasePattern::Stride),
        ..small()
    };
    assert_eq!(plan(&topo, &cfg).unwrap().stride, 128);
}

#[test]
fn bad_requests_fail_in_the_plan() {
    let topo = testing::with_memory_only_node();
    let mut cfg = small();
    cfg.cpu_nodes = Some(vec![7]);
    assert!(matches!(
        plan(&topo, &cfg),
        Err(ExperimentError::CpuLessNode { .. })
    ));
    cfg.cpu_nodes = Some(vec![99]);
    assert!(matches!(
        plan(&topo, &cfg),
        Err(ExperimentError::NoSuchNode { .. })
    ));
    let mut cfg = small();
    cfg.mem_nodes = Some(vec![0]);
    cfg.size = Some(1 << 50);
    let e = plan(&topo, &cfg).unwrap_err().to_string();
    assert!(
        e.contains("does not fit in node 0 even when nothing else uses it"),
        "{e}"
    );
    let mut cfg = small();
    cfg.stride = Some(12);
    assert!(matches!(
        plan(&topo, &cfg),
        Err(ExperimentError::Invalid(_))
    ));
}

#[test]
fn a_handed_buffer_is_measured_on_instead_of_a_second_set_up() {
    use crate::experiments::node_buffers::toucher_of;
    let topo = testing::live_topology();
    let mut plan = super::plan(
        &topo,
        &LatencyConfig {
            size: Some(4 << 20),
            rule: Some(StopRule {
                budget: Duration::from_millis(20),
                ..StopRule::default()
            }),
            ..Default::default()
        },
    )
    .unwrap();
    let (_, cpu, mem) = plan.cells[0];
    plan.cells.truncate(1);
    let toucher = toucher_of(&plan.touchers, mem, cpu);
    // Another node's or another size's request does not take it.
    plan.handed
        .put(set_up_node(&plan, mem, toucher, 4 << 20).unwrap());
    assert!(plan.handed.take_for(mem + 1, 4 << 20).is_none());
    assert!(plan.handed.take_for(mem, 2 << 20).is_none());
    assert_eq!(plan.handed.held(), Some((mem, 4 << 20)));
    let handed = set_up_node(&plan, mem, toucher, 4 << 20).unwrap();
    let seconds = handed.record.seconds;
    plan.handed.put(handed);
    let clone = plan.clone();
    let r = run(&clone, &mut NoProgress).unwrap();
    assert_eq!(r.cells.len(), 1, "{:?}", r.failed);
    assert_eq!(r.setups.len(), 1);
    assert_eq!(r.setups[0].seconds, seconds);
    // Taken once, by the clone: the next run sets its own up.
    assert_eq!(plan.handed.held(), None);
    let again = run(&plan, &mut NoProgress).unwrap();
    assert_eq!((again.cells.len(), again.setups.len()), (1, 1));
}

#[test]
fn a_cell_sharing_its_cpu_with_a_busy_thread_sets_its_lost_samples_aside() {
    // A rival spins on the cell's CPU for the whole run: the chase is
    // switched out at the end of every slice, so some of its samples of
    // 5 ms (a zero budget's, the shortest) lose a slice. A zero budget ends
    // each cell at its third sample, held or not.
    let topo = testing::live_topology();
    let mut cfg = small();
    cfg.rule = Some(StopRule {
        budget: Duration::ZERO,
        ..StopRule::default()
    });
    let p = plan(&topo, &cfg).unwrap();
    let cpu = p.cells[0].1;
    let test = "a_cell_sharing_its_cpu_with_a_busy_thread_sets_its_lost_samples_aside";
    let Some(_rival) = crate::experiments::rival::rival_or_skip(cpu, test) else {
        return;
    };
    let mut preempted = 0;
    for _ in 0..20 {
        let r = run(&p, &mut NoProgress).unwrap();
        for c in r.cells.iter().filter(|c| c.cpus == [cpu]) {
            assert_eq!(
                crate::experiments::rival::taken(c.samples.len(), &c.set_aside),
                crate::stats::BUDGET_MIN_SAMPLES,
                "{c:?}"
            );
            preempted += c.set_aside.preempted;
        }
        if preempted > 0 {
            break;
        }
    }
    assert!(
        preempted > 0,
        "no sample on CPU {cpu} was set aside as preempted"
    );
}
