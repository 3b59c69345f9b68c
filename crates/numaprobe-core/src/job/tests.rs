//! The main job's sizes, notes, preparation and a tiny run on this machine.

use super::*;
use crate::placement::PlacementError;

#[test]
fn a_default_below_the_floor_is_said_with_its_reason() {
    const MIB: u64 = 1 << 20;
    assert_eq!(below_floor_note(32 * MIB, None, "why"), None);
    assert_eq!(below_floor_note(64 * MIB, Some(32 * MIB), "why"), None);
    let n = below_floor_note(26 * MIB, Some(16 * MIB), "the footprint").unwrap();
    assert!(
        n.starts_with("buffers of 26 MiB, below the 32 MiB a memory figure needs (32 MiB, or twice the last-level cache of 16 MiB): the footprint;"),
        "{n}"
    );
    // Twice a 24 MiB cache is the floor, not 32 MiB.
    let n = below_floor_note(40 * MIB, Some(24 * MIB), "x").unwrap();
    assert!(n.contains("below the 48 MiB"), "{n}");
    assert!(below_floor_note(31 * MIB, None, "x")
        .unwrap()
        .contains("cache)"));
}

#[test]
fn buffer_sizes_start_at_the_default_and_stay_above_twice_the_llc() {
    // An 8 MiB LLC, a 256 MiB default: 64 and 32 MiB are the levers.
    assert_eq!(
        buffer_sizes(Some(8 << 20), 256 << 20),
        vec![256 << 20, 64 << 20, 32 << 20]
    );
    // A 32 MiB LLC: 128 and 64 MiB.
    assert_eq!(
        buffer_sizes(Some(32 << 20), 256 << 20),
        vec![256 << 20, 128 << 20, 64 << 20]
    );
    // A 480 MiB LLC (3.75 GiB default): 1.875 GiB and 960 MiB.
    assert_eq!(
        buffer_sizes(Some(480 << 20), 3840 << 20),
        vec![3840 << 20, 1920 << 20, 960 << 20]
    );
    // The experiments' cap wins over every lever; 32 MiB is the floor.
    assert_eq!(
        buffer_sizes(Some(1 << 20), 40 << 20),
        vec![40 << 20, 32 << 20]
    );
    assert_eq!(buffer_sizes(Some(1 << 20), 10 << 20), vec![10 << 20]);
    assert_eq!(buffer_sizes(None, 256 << 20), vec![256 << 20]);
}

#[test]
fn a_budget_that_holds_no_cell_is_refused_with_the_budget_that_would() {
    let topo = crate::experiments::testing::live_topology();
    // A nanosecond: the calibration alone takes longer.
    let e = prepare(
        &topo,
        &Config {
            budget: Duration::from_nanos(1),
            size: Some(64 << 20),
        },
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.contains("is too short to measure even one latency cell"),
        "{e}"
    );
    assert!(
        e.contains("measures every cell of both matrices soundly"),
        "{e}"
    );
}

/// Observes a real (tiny) job on this machine.
#[derive(Default)]
struct Count {
    phases: Vec<Phase>,
    statuses: usize,
}
impl crate::experiments::Progress for Count {}
impl Observer for Count {
    fn phase_started(&mut self, p: Phase, _cells: usize) {
        self.phases.push(p);
    }
    fn status(&mut self, _s: &keeper::Status) {
        self.statuses += 1;
    }
}

#[test]
fn a_tiny_job_on_this_machine_runs_both_phases() {
    let topo = crate::experiments::testing::live_topology();
    // 3 s: the matrices get 60 % of it, enough for both on a busy machine.
    let job = prepare(
        &topo,
        &Config {
            budget: Duration::from_secs(3),
            size: Some(8 << 20),
        },
    )
    .unwrap();
    assert_eq!(job.plan.size_bytes, 8 << 20);
    // A buffer the size of a few probes teaches nothing more.
    assert_eq!(job.plan.costs.source, "calibration");
    assert_eq!(job.lat.handed.held(), None);
    let mut seen = Count::default();
    let out = run(&job, &mut seen).unwrap();
    assert_eq!(seen.phases, vec![Phase::Latency, Phase::Bandwidth]);
    assert!(seen.statuses >= 4);
    assert!(out.record.complete);
    let lat = out.latency.unwrap();
    assert!(lat.complete);
    assert_eq!(out.record.phases.len(), 2);
    // One set-up per memory node and matrix, recorded in run.json too.
    for p in &out.record.phases {
        assert_eq!(p.setups.len(), job.mem_nodes.len(), "{:?}", p.plan.phase);
        assert_eq!(
            p.setups.iter().map(|s| s.cells).sum::<usize>(),
            p.measured_cells
        );
        assert!((p.setup_s - p.setups.iter().map(|s| s.seconds).sum::<f64>()).abs() < 1e-12);
    }
    assert_eq!(lat.setups, out.record.phases[0].setups);
    assert_eq!(out.record.budget_s, 3.0);
    // The extra phases follow, each recorded whatever became of it.
    assert_eq!(out.record.extras.len(), 4);
    assert_eq!(out.record.extras_plan.len(), 4);
    for r in &out.record.extras {
        assert!(r.share_s <= 3.0, "{r:?}");
        if r.status != crate::model::extra::ExtraStatus::Measured {
            assert!(r.reason.is_some(), "{r:?}");
        }
    }
}

#[test]
fn a_large_buffer_is_calibrated_on_and_handed_to_the_latency_phase() {
    let topo = crate::experiments::testing::live_topology();
    let job = prepare(
        &topo,
        &Config {
            budget: Duration::from_secs(30),
            size: Some(40 << 20),
        },
    )
    .unwrap();
    assert_eq!(job.plan.costs.source, "calibration on a real buffer");
    // The size was the user's, so the new plan keeps it and the buffer
    // waits for the first memory node's cells.
    assert_eq!(job.lat.handed.held(), Some((job.mem_nodes[0], 40 << 20)));
}

#[test]
fn an_impossible_size_fails_before_measuring() {
    let topo = crate::experiments::testing::live_topology();
    let e = prepare(
        &topo,
        &Config {
            budget: Duration::from_secs(1),
            size: Some(1 << 50),
        },
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("does not fit"), "{e}");
}

#[test]
fn a_set_up_cut_short_is_scaled_to_the_whole_buffer() {
    // A quarter touched in 2 s: 8 s for all of it.
    assert_eq!(
        real_buffer::whole_from_part(2.0, 1 << 28, 1 << 30, 0.5),
        8.0
    );
    // Nothing touched: nothing learnt of the rate, never less than the
    // time spent nor than the prediction.
    assert_eq!(real_buffer::whole_from_part(2.0, 0, 1 << 30, 0.5), 2.0);
    assert_eq!(real_buffer::whole_from_part(0.1, 0, 1 << 30, 0.5), 0.5);
}

#[test]
fn a_real_buffer_past_its_deadline_is_refused_with_how_far_it_got() {
    let topo = crate::experiments::testing::live_topology();
    let lat = latency::plan(
        &topo,
        &latency::LatencyConfig {
            size: Some(8 << 20),
            ..Default::default()
        },
    )
    .unwrap();
    let mem = lat.mem_nodes[0];
    let toucher = crate::experiments::node_buffers::toucher_of(&lat.touchers, mem, 0);
    let e = latency::set_up_node_by(&lat, mem, toucher, 8 << 20, Some(Instant::now()))
        .err()
        .unwrap();
    assert!(
        matches!(
            e,
            ExperimentError::Placement(PlacementError::Late {
                touched: 0,
                bytes: 8388608
            })
        ),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "the buffer's set-up ran out of time after touching 0 B of 8 MiB"
    );
}
