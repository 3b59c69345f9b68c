//! Tests of `tune`'s plan, ranking, noise test and paste-ready winner.

use super::*;
use crate::topology::testing::{build, two_packages, CpuSpec, NodeSpec};

const GIB: u64 = 1 << 30;

/// Two packages, one node each, two cores each, no SLIT.
fn two_nodes() -> Topology {
    two_packages(None)
}

fn one_node() -> Topology {
    let cpus = [CpuSpec::new(0, 0, 0, 0), CpuSpec::new(1, 0, 1, 0)];
    let nodes = [NodeSpec {
        os_index: 0,
        memory_bytes: GIB,
        free_bytes: GIB,
        allowed: true,
    }];
    build("/", &cpus, &nodes, None)
}

fn find<'a>(p: &'a Plan, label: &str) -> &'a Planned {
    p.candidates
        .iter()
        .find(|c| c.label == label)
        .unwrap_or_else(|| panic!("no candidate {label}"))
}

fn env<'a>(c: &'a Planned, k: &str) -> Option<&'a str> {
    c.env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str())
}

#[test]
fn two_nodes_give_every_binding_times_every_memory_policy() {
    let p = plan(&two_nodes(), 2, true).unwrap();
    assert_eq!(p.candidates.len(), 12);
    assert!(p.skipped.is_empty());
    let c = find(&p, "compact/local-bind");
    assert_eq!(c.cpus, vec![0, 1]);
    assert_eq!(c.policy_nodes, vec![0]);
    assert_eq!(env(c, "OMP_PLACES"), Some("{0},{1}"));
    assert_eq!(env(c, "OMP_PROC_BIND"), Some("close"));
    assert_eq!(env(c, "OMP_NUM_THREADS"), Some("2"));
    let s = find(&p, "scatter/local-bind");
    assert_eq!(s.cpus, vec![0, 2]);
    assert_eq!(s.policy_nodes, vec![0, 1]);
    let i = find(&p, "compact/interleave");
    assert_eq!(i.policy_nodes, vec![0, 1]);
    let n = find(&p, "none/first-touch");
    assert_eq!(n.cpus, vec![0, 1, 2, 3]);
    assert_eq!(env(n, "OMP_PROC_BIND"), Some("false"));
    assert_eq!(n.env_remove, vec!["OMP_PLACES".to_string()]);
    assert!(n.policy_nodes.is_empty());
    for c in &p.candidates {
        c.task_policy().unwrap();
    }
}

#[test]
fn an_old_kernel_skips_weighted_interleave_with_a_note() {
    let p = plan(&two_nodes(), 2, false).unwrap();
    assert_eq!(p.candidates.len(), 9);
    assert!(p
        .candidates
        .iter()
        .all(|c| c.memory != MemoryKind::WeightedInterleave));
    assert_eq!(p.skipped.len(), 1);
    assert!(p.skipped[0].reason.contains("6.9"), "{:?}", p.skipped);
}

/// One node, two packages of two cores (CPUs 0,1 and 2,3): compact and
/// scatter differ.
fn one_node_two_packages() -> Topology {
    let cpus = [
        CpuSpec::new(0, 0, 0, 0),
        CpuSpec::new(1, 0, 1, 0),
        CpuSpec::new(2, 1, 0, 0),
        CpuSpec::new(3, 1, 1, 0),
    ];
    let nodes = [NodeSpec {
        os_index: 0,
        memory_bytes: GIB,
        free_bytes: GIB,
        allowed: true,
    }];
    build("/", &cpus, &nodes, None)
}

fn one_cpu() -> Topology {
    let node = NodeSpec {
        os_index: 0,
        memory_bytes: GIB,
        free_bytes: GIB,
        allowed: true,
    };
    build("/", &[CpuSpec::new(0, 0, 0, 0)], &[node], None)
}

fn labels(p: &Plan) -> Vec<&str> {
    p.candidates.iter().map(|c| c.label.as_str()).collect()
}

#[test]
fn one_node_ranks_only_the_binding() {
    let p = plan(&one_node_two_packages(), 2, true).unwrap();
    assert_eq!(
        labels(&p),
        [
            "compact/first-touch",
            "scatter/first-touch",
            "none/first-touch"
        ]
    );
    assert_eq!(p.candidates[1].cpus, [0, 2]);
    assert_eq!(p.skipped.len(), 1);
    assert!(p.skipped[0].reason.contains("only the binding"));
}

#[test]
fn candidates_with_the_same_placement_here_run_once() {
    // One package: scatter has nowhere to scatter to, so it binds thread i
    // to the same CPU as compact does.
    let p = plan(&one_node(), 2, true).unwrap();
    assert_eq!(labels(&p), ["compact/first-touch", "none/first-touch"]);
    let folded = &p.skipped[1];
    assert_eq!(folded.label, "scatter/first-touch");
    assert_eq!(
        folded.reason,
        "the same placement as compact/first-touch on this machine (threads bound to CPUs 0,1 in turn, first touch): run once, as compact/first-touch"
    );
    // One thread: compact and scatter pick the same CPU; unbound it roams
    // both CPUs, which is another placement.
    let p = plan(&one_node(), 1, false).unwrap();
    assert_eq!(labels(&p), ["compact/first-touch", "none/first-touch"]);
    assert!(p.skipped[1].reason.contains("CPUs 0 in turn"));
    // One CPU: unbound is bound too, all three are one.
    let p = plan(&one_cpu(), 1, false).unwrap();
    assert_eq!(labels(&p), ["compact/first-touch"]);
    let names: Vec<&str> = p.skipped[1..].iter().map(|s| s.label.as_str()).collect();
    assert_eq!(names, ["scatter/first-touch", "none/first-touch"]);
    // Two nodes: every binding x memory policy is its own placement.
    assert_eq!(plan(&two_nodes(), 2, false).unwrap().candidates.len(), 9);
}

#[test]
fn too_many_threads_is_a_bind_error() {
    assert!(matches!(
        plan(&one_node(), 3, false),
        Err(BindError::TooManyThreads { threads: 3, .. })
    ));
    assert_eq!(plan(&one_node(), 0, false), Err(BindError::ZeroThreads));
}

fn run(round: usize, wall_s: f64) -> Run {
    Run {
        round,
        wall_s,
        exit_status: Some(0),
        signal: None,
        ok: true,
        memory_last: None,
        memory_peak: None,
        memory_samples: 0,
        others_busy_cpus: None,
        cpu_s: None,
    }
}

fn meta(rounds: usize) -> Meta {
    Meta {
        command: vec!["./stream".into(), "a b".into()],
        threads_from: "--threads".into(),
        runs_requested: rounds,
        rounds_completed: rounds,
        complete: true,
    }
}

#[test]
fn ranking_orders_by_median_keeps_failures_unranked_and_tests_gaps() {
    let p = plan(&one_node_two_packages(), 2, false).unwrap();
    let slow = Outcome {
        runs: (0..5).map(|r| run(r, 2.0 + r as f64 * 0.01)).collect(),
        failure: None,
    };
    let fast = Outcome {
        runs: (0..5).map(|r| run(r, 1.0 + r as f64 * 0.01)).collect(),
        failure: None,
    };
    let failed = Outcome {
        runs: vec![Run {
            ok: false,
            exit_status: Some(3),
            ..run(0, 0.1)
        }],
        failure: Some(Failure {
            round: 0,
            status: "exit status 3".into(),
            stderr_tail: "boom".into(),
        }),
    };
    let r = report(&p, &[slow, fast, failed], meta(5));
    let labels: Vec<&str> = r.rankings[0]
        .entries
        .iter()
        .map(|e| e.label.as_str())
        .collect();
    assert_eq!(
        labels,
        [
            "scatter/first-touch",
            "compact/first-touch",
            "none/first-touch"
        ]
    );
    let e = &r.rankings[0].entries;
    assert!(e[0].ranked && e[1].ranked && !e[2].ranked);
    assert!(e[2].note.as_deref().unwrap().contains("exit status 3"));
    assert_eq!(r.candidates[1].rank, Some(1));
    assert_eq!(r.candidates[2].rank, None);
    let v = r.candidates[1].vs_next.as_ref().unwrap();
    assert_eq!(v.next, "compact/first-touch");
    assert!(v.beyond_noise, "{v:?}");
    assert!((v.ratio - 2.0).abs() < 0.05);
    let w = r.winner.unwrap();
    assert_eq!(w.label, "scatter/first-touch");
    assert!(w
        .taskset
        .unwrap()
        .ends_with("taskset -c 0,2 ./stream 'a b'"));
    assert!(w.omp.contains("OMP_PLACES='{0},{2}'"), "{}", w.omp);
}

fn outcome(walls: &[f64]) -> Outcome {
    Outcome {
        runs: walls.iter().enumerate().map(|(r, &w)| run(r, w)).collect(),
        failure: None,
    }
}

#[test]
fn no_winner_is_named_when_the_fastest_is_within_noise() {
    let p = plan(&one_node_two_packages(), 2, false).unwrap();
    // Interleaved run times: the fastest median is not faster beyond noise.
    let a = outcome(&[1.00, 1.04, 1.01, 1.05, 1.02]);
    let b = outcome(&[1.03, 0.99, 1.06, 1.02, 1.00]);
    let c = outcome(&[3.0, 3.1, 3.2, 3.3, 3.4]);
    let r = report(&p, &[a.clone(), b.clone(), c.clone()], meta(5));
    let top = r.candidates.iter().find(|c| c.rank == Some(1)).unwrap();
    let v = top.vs_next.as_ref().unwrap();
    assert!(!v.beyond_noise && v.p_value > 0.5, "{v:?}");
    assert_eq!(r.winner, None);
    // The gap's p is the stats layer's Mann–Whitney test of the two sets.
    let times = |o: &Outcome| o.runs.iter().map(|r| r.wall_s).collect::<Vec<_>>();
    let second = r.candidates.iter().find(|c| c.rank == Some(2)).unwrap();
    let (ta, tb) = if top.label == "compact/first-touch" {
        (times(&a), times(&b))
    } else {
        (times(&b), times(&a))
    };
    assert_eq!(second.label, v.next);
    assert_eq!(
        v.p_value,
        crate::stats::mann_whitney::mann_whitney(&ta, &tb)
            .unwrap()
            .p
    );
    // Separated: the fastest is named (p = 2/252 for 5 against 5).
    let fast = outcome(&[0.50, 0.51, 0.52, 0.53, 0.54]);
    let r = report(&p, &[a, fast, c], meta(5));
    assert_eq!(r.winner.unwrap().label, "scatter/first-touch");
    let v = r.candidates[1].vs_next.as_ref().unwrap();
    assert!((v.p_value - 2.0 / 252.0).abs() < 1e-12, "{v:?}");
}

#[test]
fn runs_beside_other_tasks_are_counted_in_one_note_with_the_busiest() {
    let p = plan(&one_node_two_packages(), 2, false).unwrap();
    let a = outcome(&[1.00, 1.01, 1.02, 1.03, 1.04]);
    let b = outcome(&[2.0, 2.1, 2.2, 2.3, 2.4]);
    let quiet = report(&p, &[a.clone(), b.clone()], meta(5));
    assert!(
        !quiet.notes.iter().any(|n| n.contains("beside other tasks")),
        "{:?}",
        quiet.notes
    );
    let mut busy = a.clone();
    busy.runs[1].others_busy_cpus = Some(1.7);
    busy.runs[2].others_busy_cpus = Some(0.49);
    busy.runs[3].others_busy_cpus = Some(0.5);
    // A run of a round that did not finish is not counted.
    busy.runs.push(Run {
        others_busy_cpus: Some(3.0),
        ..run(5, 1.0)
    });
    let r = report(&p, &[busy, b], meta(5));
    let beside: Vec<&String> = r
        .notes
        .iter()
        .filter(|n| n.contains("beside other tasks"))
        .collect();
    assert_eq!(beside.len(), 1, "{:?}", r.notes);
    assert!(
        beside[0].starts_with("2 of 10 runs ran beside other tasks (up to 1.7 CPUs busy)"),
        "{}",
        beside[0]
    );
    assert_eq!(r.winner, quiet.winner, "a note, not a different verdict");
}

#[test]
fn a_lone_candidate_wins_only_over_failed_ones() {
    let p = plan(&one_node_two_packages(), 2, false).unwrap();
    let ok = outcome(&[1.0, 1.1, 1.2]);
    let failed = Outcome {
        runs: vec![],
        failure: Some(Failure {
            round: 0,
            status: "exit status 1".into(),
            stderr_tail: String::new(),
        }),
    };
    let r = report(&p, &[ok.clone(), failed.clone(), failed], meta(3));
    assert_eq!(r.winner.unwrap().label, "compact/first-touch");
    // Nothing else ran and nothing failed: nothing to choose between.
    let p = plan(&one_cpu(), 1, false).unwrap();
    assert_eq!(report(&p, &[ok], meta(3)).winner, None);
    // Nothing ran at all.
    assert_eq!(report(&p, &[Outcome::default()], meta(3)).winner, None);
}

#[test]
fn runs_of_an_unfinished_round_are_not_ranked() {
    let p = plan(&one_node(), 1, false).unwrap();
    let o = Outcome {
        runs: vec![run(0, 1.0), run(1, 9.0)],
        failure: None,
    };
    let mut m = meta(1);
    m.complete = false;
    let r = report(&p, &[o.clone(), o.clone(), o], m);
    assert_eq!(r.candidates[0].wall_s.unwrap().n, 1);
    assert_eq!(r.candidates[0].wall_s.unwrap().max, 1.0);
    assert!(!r.complete);
    assert!(r.notes.iter().any(|n| n.contains("too few")));
}

#[test]
fn paste_forms_name_policy_nodes_and_masks() {
    let p = plan(&two_nodes(), 2, true).unwrap();
    let cmd = vec!["./a.out".to_string()];
    let w = winner(find(&p, "scatter/interleave"), 2, &cmd);
    assert!(w
        .numactl
        .ends_with("numactl --physcpubind=0,2 --interleave=0-1 ./a.out"));
    assert!(w
        .srun
        .contains("--cpu-bind=mask_cpu:0x5 numactl --interleave=0-1 ./a.out"));
    let w = winner(find(&p, "compact/local-bind"), 2, &cmd);
    assert!(w.srun.contains("--mem-bind=mask_mem:0x1"), "{}", w.srun);
    let w = winner(find(&p, "none/first-touch"), 2, &cmd);
    assert!(w.taskset.is_none());
    assert!(w
        .omp
        .starts_with("env OMP_NUM_THREADS=2 OMP_PROC_BIND=false -u OMP_PLACES"));
    assert!(w.srun.contains("--cpu-bind=none"));
    let w = winner(find(&p, "none/weighted-interleave"), 2, &cmd);
    assert!(w
        .numactl
        .ends_with("numactl --weighted-interleave=0-1 ./a.out"));
    assert_eq!(hex_mask(&[0, 5, 12]), "0x1021");
}

#[test]
fn a_flagged_time_names_no_winner_and_says_which() {
    let p = plan(&one_node_two_packages(), 2, false).unwrap();
    // Beyond noise by the test (5 against 5, no overlap), but the fastest
    // candidate's slowest run is 1.8x its fastest: past the trust lines.
    let jumpy = outcome(&[0.50, 0.51, 0.52, 0.53, 0.90]);
    let steady = outcome(&[1.00, 1.01, 1.02, 1.03, 1.04]);
    let r = report(&p, &[steady.clone(), jumpy], meta(5));
    let top = r.candidates.iter().find(|c| c.rank == Some(1)).unwrap();
    assert_eq!(top.label, "scatter/first-touch");
    assert!(top.vs_next.as_ref().unwrap().beyond_noise);
    assert!(top.flags[0].starts_with("unstable:"), "{:?}", top.flags);
    assert!(r.candidates[0].flags.is_empty(), "{:?}", r.candidates[0]);
    assert_eq!(r.winner, None);
    assert_eq!(
        untrusted_pair(&r.candidates, top),
        Some("scatter/first-touch")
    );
    // The ranking entry carries the flag for every renderer.
    let e = &r.rankings[0].entries[0];
    assert_eq!(
        (e.label.as_str(), e.flags.len()),
        ("scatter/first-touch", 1)
    );
    assert!(r.rankings[0].entries[1].flags.is_empty());
    // The slower one flagged stops the verdict too: it is what the gap is
    // measured against.
    let jumpy_slow = outcome(&[1.00, 1.01, 1.02, 1.03, 1.90]);
    let fast = outcome(&[0.50, 0.51, 0.52, 0.53, 0.54]);
    let r = report(&p, &[jumpy_slow, fast.clone()], meta(5));
    let top = r.candidates.iter().find(|c| c.rank == Some(1)).unwrap();
    assert!(top.flags.is_empty());
    assert_eq!(
        untrusted_pair(&r.candidates, top),
        Some("compact/first-touch")
    );
    assert_eq!(r.winner, None);
    // Both steady: the verdict stands.
    let r = report(&p, &[steady, fast], meta(5));
    assert_eq!(r.winner.unwrap().label, "scatter/first-touch");
}

#[test]
fn cpu_time_is_summarised_over_the_counted_runs() {
    let p = plan(&one_node_two_packages(), 2, false).unwrap();
    let with_cpu = |walls: &[f64], cpus: &[f64]| Outcome {
        runs: walls
            .iter()
            .zip(cpus)
            .enumerate()
            .map(|(r, (&w, &c))| Run {
                cpu_s: Some(c),
                ..run(r, w)
            })
            .collect(),
        failure: None,
    };
    let a = with_cpu(&[1.0, 1.0, 1.0], &[1.9, 2.0, 2.1]);
    // The run of an unfinished round (the third) is not counted.
    let b = with_cpu(&[1.0, 1.0, 1.0], &[0.5, 0.7, 9.0]);
    let r = report(&p, &[a, b], meta(2));
    let cpu = |i: usize| r.candidates[i].cpu_s.unwrap();
    assert_eq!((cpu(0).median, cpu(0).n), (1.95, 2));
    assert_eq!((cpu(1).median, cpu(1).max), (0.6, 0.7));
    // Runs that could not read it leave no figure, not a zero.
    let r = report(&p, &[outcome(&[1.0]), outcome(&[1.0])], meta(1));
    assert_eq!(r.candidates[0].cpu_s, None);
}
