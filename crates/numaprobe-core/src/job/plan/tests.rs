//! Tests of `plan`.

use super::*;

fn nodes(n: u32) -> Vec<u32> {
    (0..n).collect()
}

fn request(n: u32, budget_s: f64) -> Request {
    Request {
        budget: Duration::from_secs_f64(budget_s),
        budget_given: Duration::from_secs_f64(budget_s),
        cpu_nodes: nodes(n),
        mem_nodes: nodes(n),
        distances: None,
        sizes: vec![64 << 20, 32 << 20],
        at_most: None,
        costs: CostModel::SERVER,
        matrix_share: 1.0,
    }
}

fn plain(c: CostModel) -> Corrected {
    Corrected {
        model: c,
        setup: 1.0,
        overhead: 1.0,
        sampling: 1.0,
    }
}

#[test]
fn the_matrices_keep_to_their_share_and_the_extras_get_the_rest() {
    let mut r = request(4, 30.0);
    let alone = plan(&r);
    r.matrix_share = 0.6;
    let p = plan(&r);
    assert!(p.phases.iter().all(|ph| ph.coverage == Coverage::Full));
    assert_eq!(p.matrix_share, 0.6);
    assert!(p.estimated_s <= 18.0 + 1e-6, "{}", p.estimated_s);
    assert!(alone.extras.is_empty());
    assert_eq!(p.extras.len(), crate::model::extra::Extra::ALL.len());
    let extras: f64 = p.extras.iter().map(|e| e.estimated_share_s).sum();
    assert!((extras + p.estimated_s - 30.0).abs() < 1e-6, "{extras}");
    // A sound measurement needs the matrices' part scaled up.
    assert!(p.sound_budget_s > alone.sound_budget_s);
}

#[test]
fn matrices_that_do_not_fit_their_share_take_the_whole_budget_first() {
    // 8 nodes in 5 s: not sound in 3 s, so the matrices plan into all 5.
    let mut r = request(8, 5.0);
    let alone = plan(&r);
    r.matrix_share = 0.6;
    let p = plan(&r);
    assert_eq!(p.matrix_share, 1.0);
    assert_eq!(
        p.phases.iter().map(|ph| ph.cells.len()).collect::<Vec<_>>(),
        alone
            .phases
            .iter()
            .map(|ph| ph.cells.len())
            .collect::<Vec<_>>()
    );
    assert!(
        p.estimated_s > 3.0 && p.estimated_s <= 5.0 + 1e-6,
        "{}",
        p.estimated_s
    );
    let extras: f64 = p.extras.iter().map(|e| e.estimated_share_s).sum();
    assert!(extras <= 5.0 - p.estimated_s + 1e-6, "{extras}");
    let s = p.statement.unwrap();
    assert!(
        s.contains("the matrices take all of a shorter one first"),
        "{s}"
    );
}

#[test]
fn a_budget_that_holds_not_even_one_cell_is_an_empty_plan() {
    let mut slow = CostModel::SERVER;
    slow.latency_setup_s_per_gib = 100.0;
    let mut r = request(2, 1.0);
    r.costs = slow;
    let p = plan(&r);
    assert!(p.is_empty());
    let s = p.statement.unwrap();
    assert!(
        s.contains("--budget 1s is too short to measure even one latency cell"),
        "{s}"
    );
    assert!(
        s.contains(&format!("--budget {}", budget_arg(p.sound_budget_s))),
        "{s}"
    );
    assert!(!plan(&request(2, 1.0)).is_empty());
}

#[test]
fn two_nodes_in_a_minute_is_a_sound_full_plan() {
    let p = plan(&request(2, 60.0));
    assert!(p.statement.is_none(), "{:?}", p.statement);
    assert!(p.phases.iter().all(|ph| ph.coverage == Coverage::Full));
    assert!(p.phases.iter().all(|ph| ph.cells.len() == 4));
    assert_eq!(p.size_bytes, 64 << 20, "the preferred size fits");
    assert!(p.estimated_s <= 60.0);
}

#[test]
fn sixteen_and_sixty_four_nodes_stay_within_the_budget() {
    for n in [16, 64] {
        let p = plan(&request(n, 60.0));
        assert!(p.estimated_s <= 60.0 + 1e-6, "{n} nodes: {}", p.estimated_s);
        // The planned total, recomputed from the cells, is the estimate.
        let c = plain(CostModel::SERVER);
        let sum: f64 = p
            .phases
            .iter()
            .map(|ph| {
                c.phase_s(
                    Load::of(ph.phase, &ph.cells),
                    p.size_bytes,
                    ph.cell_budget_s,
                )
            })
            .sum();
        assert!(sum <= 60.0 + 1e-6, "{n} nodes: {sum}");
        assert!(!p.phases[0].cells.is_empty());
    }
    // 64 nodes: 4096 cells per matrix do not fit a minute: the statement
    // names a budget that would, and bandwidth goes first.
    let p = plan(&request(64, 60.0));
    let s = p.statement.as_deref().unwrap();
    assert!(s.contains("--budget 60s is too short"), "{s}");
    assert!(p.sound_budget_s > 60.0);
    assert!(
        s.contains(&format!("--budget {}", budget_arg(p.sound_budget_s))),
        "{s}"
    );
    assert_ne!(p.phases[1].coverage, Coverage::Full);
    assert_eq!(p.size_bytes, 32 << 20, "the smaller buffer is used first");
}

#[test]
fn too_small_budget_says_what_is_reduced() {
    // 8 nodes, 5 s: 128 cells cannot each have 100 ms.
    let p = plan(&request(8, 5.0));
    assert!(!p.is_empty());
    let s = p.statement.clone().unwrap();
    assert!(s.contains("--budget 5s is too short"), "{s}");
    assert!(p.sound_budget_s > 5.0);
    assert!(p.estimated_s <= 5.0 + 1e-6, "{}", p.estimated_s);
    assert!(p.phases.iter().any(|ph| ph.coverage != Coverage::Full));
    // The latency matrix is kept whole before bandwidth is cut.
    if p.phases[1].coverage != Coverage::FewerSamples {
        assert_eq!(p.phases[0].cells.len(), 64);
    }
    for ph in &p.phases {
        if ph.coverage != Coverage::Full {
            assert!(ph.reason.is_some());
        }
    }
}

#[test]
fn the_ladder_gives_up_bandwidth_before_latency() {
    // Costs so high that only a few latency cells fit.
    let mut slow = CostModel::SERVER;
    slow.latency_setup_s_per_gib = 60.0;
    slow.bandwidth_setup_s_per_gib = 60.0;
    let mut r = request(4, 5.0);
    r.costs = slow;
    let p = plan(&r);
    assert_eq!(p.phases[1].coverage, Coverage::Skipped);
    assert_eq!(p.phases[1].skipped.len(), 16);
    let lat = &p.phases[0];
    assert_eq!(lat.coverage, Coverage::Subset);
    // The diagonal comes first; then every cell on a buffer already set
    // up (2 of the 4 fit at 1.9 s each), row by row.
    assert_eq!(
        lat.cells,
        vec![
            (0, 0),
            (0, 1),
            (1, 0),
            (1, 1),
            (2, 0),
            (2, 1),
            (3, 0),
            (3, 1)
        ]
    );
    let s = p.statement.unwrap();
    assert!(
        s.contains(
            "measuring latency on 8 of 16 cells (the diagonal first, then row by row), no bandwidth matrix"
        ),
        "{s}"
    );
    assert!(
        s.ends_with("; run.json's plan names the skipped cells"),
        "{s}"
    );
}

#[test]
fn bandwidth_subset_is_the_diagonal_and_the_farthest_node() {
    let d = ring_slit();
    let v = diagonal_and_farthest(&nodes(4), &nodes(4), Some(&d));
    assert_eq!(
        v,
        vec![
            (0, 0),
            (0, 2),
            (1, 1),
            (1, 3),
            (2, 0),
            (2, 2),
            (3, 1),
            (3, 3)
        ]
    );
    // Without a SLIT: the next node.
    let v = diagonal_and_farthest(&nodes(3), &nodes(3), None);
    assert_eq!(v, vec![(0, 0), (0, 1), (1, 1), (1, 2), (2, 0), (2, 2)]);
}

#[test]
fn fit_is_bounded_and_monotonic() {
    let c = plain(CostModel::SERVER);
    let ph = [Load {
        phase: Phase::Latency,
        cells: 10,
        buffers: 2,
    }];
    assert_eq!(fit(&c, 64 << 20, &ph, 1e6, 0.0), Some(CELL_MAX_S));
    assert_eq!(fit(&c, 64 << 20, &ph, 0.01, 0.0), None);
    let a = fit(&c, 64 << 20, &ph, 5.0, 0.0).unwrap();
    let b = fit(&c, 64 << 20, &ph, 10.0, 0.0).unwrap();
    assert!(a < b && b <= CELL_MAX_S);
}

#[test]
fn budget_args_round_up_to_what_a_user_types() {
    assert_eq!(budget_arg(4.2), "5s");
    assert_eq!(budget_arg(119.0), "119s");
    assert_eq!(budget_arg(121.0), "3m");
    assert_eq!(budget_arg(0.1), "1s");
    // Two minutes exactly reads as minutes.
    assert_eq!(budget_arg(120.0), "2m");
    assert_eq!(duration_arg(Duration::from_millis(500)), "500ms");
    // A second exactly is whole seconds, not a thousand milliseconds.
    assert_eq!(duration_arg(Duration::from_secs(1)), "1s");
    assert_eq!(duration_arg(Duration::from_secs(5)), "5s");
    assert_eq!(duration_arg(Duration::from_millis(2500)), "2.5s");
}

#[test]
fn latency_is_given_up_from_the_end_of_diagonal_then_rows() {
    // Rows 0-2 (CPU nodes), columns 0-3 (node 3 has memory only).
    let v = latency_priority(&nodes(3), &nodes(4));
    assert_eq!(
        v,
        vec![
            (0, 0),
            (1, 1),
            (2, 2),
            (0, 1),
            (0, 2),
            (0, 3),
            (1, 0),
            (1, 2),
            (1, 3),
            (2, 0),
            (2, 1),
            (2, 3)
        ]
    );
}

#[test]
fn a_slit_that_lacks_a_row_s_entry_falls_back_to_the_next_node() {
    // Node 3 is missing from the SLIT: row 0 cannot rank every remote
    // node by distance, so it takes the next node id, as without one.
    let d = Distances {
        node_ids: vec![0, 1, 2],
        matrix: vec![vec![10, 16, 22], vec![16, 10, 16], vec![22, 16, 10]],
    };
    let v = diagonal_and_farthest(&[0], &nodes(4), Some(&d));
    assert_eq!(v, vec![(0, 0), (0, 1)]);
    // With every entry known the farthest is taken.
    let v = diagonal_and_farthest(&[0], &nodes(3), Some(&d));
    assert_eq!(v, vec![(0, 0), (0, 2)]);
}

#[test]
fn cells_that_fill_the_time_exactly_still_fit() {
    let c = plain(CostModel::SERVER);
    let ph = [Load {
        phase: Phase::Latency,
        cells: 10,
        buffers: 3,
    }];
    let exact = total_s(&c, 64 << 20, &ph, 0.1);
    let got = fit(&c, 64 << 20, &ph, exact, 0.1).expect("fits exactly");
    assert!((got - 0.1).abs() < 1e-6, "{got}");
}

/// Four nodes whose SLIT puts node i + 2 farthest from node i.
fn ring_slit() -> Distances {
    Distances {
        node_ids: vec![0, 1, 2, 3],
        matrix: vec![
            vec![10, 16, 22, 16],
            vec![16, 10, 16, 22],
            vec![22, 16, 10, 16],
            vec![16, 22, 16, 10],
        ],
    }
}

#[test]
fn a_budget_between_the_ladder_s_steps_keeps_latency_whole_and_bandwidth_on_the_diagonal_and_farthest(
) {
    // Enough for the whole latency matrix and the bandwidth diagonal with
    // its farthest cells, not for both whole matrices: step 3 of the ladder.
    let n = nodes(4);
    let all = all_cells(&n, &n);
    let diag = diagonal_and_farthest(&n, &n, Some(&ring_slit()));
    let c = plain(CostModel::SERVER);
    let size = 32 << 20;
    let at_floor = |bw: &[(u32, u32)]| {
        c.phase_s(Load::of(Phase::Latency, &all), size, 0.0)
            + c.phase_s(Load::of(Phase::Bandwidth, bw), size, 0.0)
    };
    let budget = (at_floor(&diag) + at_floor(&all)) / 2.0;
    let mut r = request(4, budget);
    r.distances = Some(ring_slit());
    let p = plan(&r);
    assert_eq!(p.phases[0].cells, all);
    assert!(p.phases[0].skipped.is_empty());
    let bw = &p.phases[1];
    assert_eq!(bw.coverage, Coverage::Subset);
    assert_eq!(bw.cells, diag);
    assert_eq!(bw.skipped.len(), 16 - diag.len());
    assert!(p.estimated_s <= budget + 1e-6, "{}", p.estimated_s);
    let s = p.statement.unwrap();
    assert!(
        s.contains("bandwidth only on the diagonal and the farthest remote node of each row (8 cells skipped)"),
        "{s}"
    );
}

#[test]
fn bandwidth_re_planned_alone_falls_back_to_the_diagonal_and_farthest() {
    // What the main job does when bandwidth begins with less time left
    // than planned: the phase alone, its whole matrix not fitting.
    let n = nodes(4);
    let all = all_cells(&n, &n);
    let diag = diagonal_and_farthest(&n, &n, Some(&ring_slit()));
    let c = plain(CostModel::SERVER);
    let size = 32 << 20;
    let at_floor = |cells: &[(u32, u32)]| c.phase_s(Load::of(Phase::Bandwidth, cells), size, 0.0);
    let avail = (at_floor(&diag) + at_floor(&all)) / 2.0;
    let (v, got_size) = plan_phases(
        &c,
        &[size],
        &[(Phase::Bandwidth, all.clone())],
        &n,
        &n,
        Some(&ring_slit()),
        avail,
    );
    assert_eq!(got_size, size);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].coverage, Coverage::Subset);
    assert_eq!(v[0].cells, diag);
    assert!(v[0].estimated_s <= avail + 1e-6, "{}", v[0].estimated_s);
    let why = v[0].reason.as_deref().unwrap();
    assert!(
        why.starts_with(
            "only the diagonal and the farthest remote node of each row; 8 of 16 cells skipped"
        ),
        "{why}"
    );
    // Short of even that, the phase is skipped rather than overrun.
    let (v, _) = plan_phases(
        &c,
        &[size],
        &[(Phase::Bandwidth, all)],
        &n,
        &n,
        Some(&ring_slit()),
        at_floor(&diag) / 2.0,
    );
    assert_eq!(v[0].coverage, Coverage::Skipped);
    assert!(v[0].cells.is_empty());
}

#[test]
fn the_latency_matrix_planned_alone_keeps_its_diagonal_first() {
    // Time for the diagonal's cells and buffers and nothing more.
    let n = nodes(4);
    let all = all_cells(&n, &n);
    let c = plain(CostModel::SERVER);
    let size = 32 << 20;
    let diag: Vec<(u32, u32)> = n.iter().map(|&i| (i, i)).collect();
    let avail = c.phase_s(Load::of(Phase::Latency, &diag), size, 0.0);
    let (v, _) = plan_phases(&c, &[size], &[(Phase::Latency, all)], &n, &n, None, avail);
    assert_eq!(v[0].coverage, Coverage::Subset);
    assert_eq!(v[0].cells, diag);
    assert_eq!(v[0].skipped.len(), 12);
    // Cells at the floor: the reason says how far below a sound
    // measurement they are.
    assert_eq!(v[0].cell_budget_s, 0.0);
    assert_eq!(
        v[0].reason.as_deref(),
        Some(
            "only the diagonal, then row by row as far as the budget goes: 12 of 16 cells skipped; \
             0 ms of sampling per cell instead of at least 100 ms"
        )
    );
}

#[test]
fn the_sound_budget_counts_what_was_spent_before_the_measurements() {
    // Two seconds of the given budget went before the plan (discovery,
    // calibration): a budget that measures soundly has to hold them too.
    let r = request(8, 5.0);
    let base = plan(&r);
    // With nothing spent the budget named is the matrices' need, whatever
    // too short a budget was given.
    assert_eq!(base.sound_budget_s, plan(&request(8, 50.0)).sound_budget_s);
    let mut spent = r.clone();
    spent.budget_given = Duration::from_secs(7);
    let p = plan(&spent);
    assert!(
        (p.sound_budget_s - base.sound_budget_s - 2.0).abs() < 1e-9,
        "{} vs {}",
        p.sound_budget_s,
        base.sound_budget_s
    );
    assert_eq!(p.budget_s, 7.0);
    let s = p.statement.unwrap();
    assert!(s.contains("--budget 7s is too short"), "{s}");
}

#[test]
fn a_budget_short_of_sound_but_past_the_floor_measures_every_cell_with_fewer_samples() {
    // Between every cell at the floor and every cell sound, at the smaller
    // buffer: both matrices whole, each cell sampled less than 100 ms.
    let n = nodes(2);
    let all = all_cells(&n, &n);
    let c = plain(CostModel::SERVER);
    let loads = [
        Load::of(Phase::Latency, &all),
        Load::of(Phase::Bandwidth, &all),
    ];
    let size = 32 << 20;
    let budget = (total_s(&c, size, &loads, 0.0) + total_s(&c, size, &loads, SOUND_CELL_S)) / 2.0;
    let p = plan(&request(2, budget));
    assert_eq!(p.size_bytes, size);
    for ph in &p.phases {
        assert_eq!(ph.coverage, Coverage::FewerSamples);
        assert!(ph.skipped.is_empty());
        assert!(ph.cell_budget_s > 0.0 && ph.cell_budget_s < SOUND_CELL_S);
        let why = ph.reason.as_deref().unwrap();
        assert!(
            why.starts_with("every cell with fewer samples; ")
                && why.ends_with(
                    " ms of sampling per cell instead of at least 100 ms (at least a warm-up and 3 samples)"
                ),
            "{why}"
        );
    }
    let s = p.statement.unwrap();
    assert!(
        s.ends_with(&format!(
            "): measuring every cell with fewer samples ({:.0} ms of sampling per cell, at least 3 samples)",
            p.phases[0].cell_budget_s * 1e3
        )),
        "{s}"
    );
}

/// The calibration's probe as it ran on the 2-CPU development machine
/// beside four busy loops (load average 11.9; its L3 of 260 MiB makes
/// 520 MiB the smallest buffer): the flush and page check of its 8 MiB took
/// 18 ms of CPU in 274 ms, the thread off its CPU for the rest. Costed by
/// the CPU time, a 10 s budget plans a measurement, and the real buffer's
/// set-up then judges the load; by the wall clock the wait, extrapolated
/// per GiB (35 s/GiB of flush and check), refused the budget before a real
/// buffer was tried ("--budget 10s is too short to measure even one
/// latency cell; --budget 13m measures every cell").
#[test]
fn a_calibration_that_waited_for_its_cpu_still_plans_a_short_budget() {
    use crate::job::cost::{Calibration, Timed, CALIBRATION_BYTES};
    let held = |s: f64| Timed {
        wall_s: s,
        cpu_s: Some(s),
    };
    let busy = Calibration {
        bytes: CALIBRATION_BYTES,
        touch: held(0.0014),
        chain: held(0.0026),
        cell: Timed {
            wall_s: 0.274,
            cpu_s: Some(0.018),
        },
        pass: held(0.0005),
    };
    let quiet = Calibration {
        cell: held(0.018),
        ..busy
    };
    assert_eq!(busy.model(), quiet.model());
    let mut r = request(1, 9.1);
    r.budget_given = Duration::from_secs(10);
    r.sizes = vec![1740 << 20, 520 << 20];
    r.costs = busy.model();
    let p = plan(&r);
    assert!(!p.is_empty(), "{:?}", p.statement);
    assert_eq!(p.phases[0].cells, vec![(0, 0)]);
    // Where the kernel gives no CPU time the wall clock is all there is:
    // the same probe then refuses, which is what the CPU time avoids.
    let blind = |t: Timed| Timed { cpu_s: None, ..t };
    let wall_only = Calibration {
        touch: blind(busy.touch),
        chain: blind(busy.chain),
        cell: blind(busy.cell),
        pass: blind(busy.pass),
        ..busy
    };
    r.costs = wall_only.model();
    let refused = plan(&r);
    assert!(refused.is_empty());
    assert!(refused
        .statement
        .unwrap()
        .contains("--budget 10s is too short to measure even one latency cell"));
}

#[test]
fn cells_sampled_exactly_the_sound_minimum_are_a_sound_full_matrix() {
    // A budget that holds every cell at exactly the sound sampling and not
    // a nanosecond more: the matrix is sound and whole, its reason empty.
    let n = nodes(2);
    let all = all_cells(&n, &n);
    let c = plain(CostModel::SERVER);
    let size = 32 << 20;
    let avail = total_s(&c, size, &[Load::of(Phase::Latency, &all)], SOUND_CELL_S);
    let (v, _) = plan_phases(&c, &[size], &[(Phase::Latency, all)], &n, &n, None, avail);
    assert_eq!(v[0].cell_budget_s, SOUND_CELL_S);
    assert_eq!(v[0].coverage, Coverage::Full);
    assert_eq!(v[0].reason, None);
}

#[test]
fn a_plan_held_to_a_smaller_size_names_the_preferred_size_s_sound_budget() {
    let mut r = request(2, 60.0);
    let free = plan(&r);
    assert_eq!(free.size_bytes, 64 << 20);
    r.at_most = Some(32 << 20);
    let held = plan(&r);
    assert_eq!(held.size_bytes, 32 << 20);
    assert!(held.phases.iter().all(|p| p.coverage == Coverage::Full));
    assert_eq!(held.sound_budget_s, free.sound_budget_s);
    // Between two sizes: the smaller; below every size: the smallest.
    r.at_most = Some(48 << 20);
    assert_eq!(plan(&r).size_bytes, 32 << 20);
    r.at_most = Some(1 << 20);
    assert_eq!(plan(&r).size_bytes, 32 << 20);
}
