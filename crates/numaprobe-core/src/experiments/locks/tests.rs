//! Tests of the locks plan (placements from synthetic topologies) and of a
//! real run on this machine (the counters add up under contention).

use super::plan::*;
use super::*;
use crate::experiments::NoProgress;
use crate::kernels::atomics::Rmw;
use crate::stats::StopRule;
use crate::topology::testing::{build, CpuSpec};
use crate::topology::Cache;
use crate::topology::Topology;
use std::collections::BTreeSet;
use std::time::Duration;

/// Two packages = two nodes, 4 cores each, 2 SMT threads per core; one L3
/// per node (CPU n and n+16 are siblings).
fn two_node_smt() -> Topology {
    let mut cpus = Vec::new();
    for node in 0..2u32 {
        for core in 0..4i64 {
            let c = node * 4 + core as u32;
            cpus.push(CpuSpec::new(c, node as i64, core, node));
            cpus.push(CpuSpec::new(c + 16, node as i64, core, node));
        }
    }
    let mut t = build("/", &cpus, &[], None);
    for node in 0..2u32 {
        let mut l3: Vec<u32> = (0..4)
            .flat_map(|k| [node * 4 + k, node * 4 + k + 16])
            .collect();
        l3.sort_unstable();
        t.caches.push(Cache {
            level: 3,
            kind: "Unified".into(),
            size_bytes: Some(32 << 20),
            line_size: Some(64),
            cpus: l3,
        });
    }
    t
}

/// One node, 4 cores, no SMT, no cache information.
fn flat() -> Topology {
    let cpus: Vec<CpuSpec> = (0..4).map(|c| CpuSpec::new(c, 0, c as i64, 0)).collect();
    build("/", &cpus, &[], None)
}

fn cfg() -> LocksConfig {
    LocksConfig {
        cpu_has_lse: Some(true),
        ..Default::default()
    }
}

#[test]
fn placements_take_their_cpus_from_the_topology() {
    let t = two_node_smt();
    let node = |c: u32| t.cpu(c).unwrap().node.unwrap();
    let smt = placement_cpus(&t, Placement::SameCore).unwrap();
    assert_eq!(smt.len(), 2);
    assert_eq!(
        t.core_key(t.cpu(smt[0]).unwrap()),
        t.core_key(t.cpu(smt[1]).unwrap())
    );
    let l3 = placement_cpus(&t, Placement::SameL3).unwrap();
    assert_eq!(l3.len(), 4, "one CPU per core of one L3: {l3:?}");
    assert!(l3.iter().all(|&c| node(c) == node(l3[0])));
    let same = placement_cpus(&t, Placement::SameNode).unwrap();
    assert!(same.iter().all(|&c| node(c) == node(same[0])));
    let cross = placement_cpus(&t, Placement::CrossNode).unwrap();
    assert_eq!(cross.len(), 8);
    // Two threads already on two nodes.
    assert_ne!(node(cross[0]), node(cross[1]));
    // One thread per core everywhere but same_core.
    for list in [&l3, &same, &cross] {
        let keys: BTreeSet<_> = list
            .iter()
            .map(|&c| t.core_key(t.cpu(c).unwrap()))
            .collect();
        assert_eq!(keys.len(), list.len());
    }
}

#[test]
fn what_the_machine_cannot_do_is_skipped_with_a_note() {
    let p = plan(&flat(), &cfg()).unwrap();
    let names: BTreeSet<&str> = p.runs.iter().map(|r| r.2.as_str()).collect();
    assert!(
        names.contains("same_node") && names.contains("single"),
        "{names:?}"
    );
    assert!(!names.contains("same_core") && !names.contains("cross_node"));
    for skipped in ["same_core skipped", "same_l3 skipped", "cross_node skipped"] {
        assert!(
            p.notes.iter().any(|n| n.starts_with(skipped)),
            "{:?}",
            p.notes
        );
    }
    // Asking only for what cannot be done is an error, not an empty run.
    let e = plan(
        &flat(),
        &LocksConfig {
            placements: Some(vec![Placement::CrossNode]),
            ..cfg()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("only one node"), "{e}");
}

#[test]
fn thread_counts_grow_to_what_each_placement_holds() {
    let p = plan(&two_node_smt(), &cfg()).unwrap();
    let counts = |name: &str| -> Vec<usize> {
        let mut v: Vec<usize> = p
            .runs
            .iter()
            .filter(|r| r.0 == "atomic_add" && r.1 == "shared" && r.2 == name)
            .map(|r| r.3.len())
            .collect();
        v.dedup();
        v
    };
    assert_eq!(counts("single"), vec![1]);
    assert_eq!(counts("same_core"), vec![2]);
    assert_eq!(counts("same_l3"), vec![2, 4]);
    assert_eq!(counts("cross_node"), vec![2, 4, 8]);
    // Every op and sharing; the baseline once per op.
    let singles = p.runs.iter().filter(|r| r.2 == "single").count();
    assert_eq!(singles, 2);
    assert!(p
        .runs
        .iter()
        .any(|r| r.0 == "spin_lock" && r.1 == "own_line"));
    // Each thread its own CPU.
    for r in &p.runs {
        let set: BTreeSet<u32> = r.3.iter().copied().collect();
        assert_eq!(set.len(), r.3.len());
    }
}

#[test]
fn bad_requests_fail_before_anything_runs() {
    let t = two_node_smt();
    let e = plan(
        &t,
        &LocksConfig {
            threads: Some(vec![64]),
            ..cfg()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("64 threads") && e.contains("holds 8"), "{e}");
    let e = plan(
        &t,
        &LocksConfig {
            cpus: Some(vec![0, 99]),
            ..cfg()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("CPU 99"), "{e}");
    // LSE on a CPU without it names what the CPU has.
    let e = plan(
        &t,
        &LocksConfig {
            atomics: AtomicsChoice::Lse,
            cpu_has_lse: Some(false),
            ..cfg()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("LSE atomics asked for, but this CPU has"),
        "{e}"
    );
    // Auto picks exclusive loops there (arm64), lock on x86-64.
    let p = plan(
        &t,
        &LocksConfig {
            cpu_has_lse: Some(false),
            ..cfg()
        },
    )
    .unwrap();
    assert_eq!(p.rmw, Rmw::best(false));
}

#[test]
fn given_cpus_run_in_their_order() {
    let p = plan(
        &two_node_smt(),
        &LocksConfig {
            cpus: Some(vec![5, 1, 17]),
            ops: Some(vec![LockOp::SpinLock]),
            sharing: Some(vec![Sharing::Shared]),
            ..cfg()
        },
    )
    .unwrap();
    let shapes: Vec<&Vec<u32>> = p.runs.iter().map(|r| &r.3).collect();
    assert_eq!(shapes, vec![&vec![5], &vec![5, 1], &vec![5, 1, 17]]);
    assert!(p.runs.iter().all(|r| r.2 == "cpus"));
}

#[test]
fn counters_add_up_under_contention_with_two_threads() {
    let t = crate::experiments::testing::live_topology();
    let allowed = crate::placement::allowed_cpus().unwrap();
    let cpus: Vec<u32> = allowed.iter().copied().take(2).collect();
    let rule = StopRule {
        warmup: 0,
        min_samples: 3,
        max_samples: 3,
        cv_target: 0.0,
        budget: Duration::from_millis(5),
    };
    let p = plan(
        &t,
        &LocksConfig {
            cpus: Some(cpus.clone()),
            threads: Some(vec![cpus.len()]),
            rule: Some(rule),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(p.runs.len(), 6, "2 ops x 3 sharings");
    let r = run(&p, &mut NoProgress).unwrap();
    assert!(r.failed.is_empty(), "{:?}", r.failed);
    assert!(r.complete && !r.interrupted);
    assert_eq!(r.runs.len(), 6);
    for x in &r.runs {
        assert_eq!(x.cpus, cpus);
        // A slice in which a thread lost its CPU (a busy host) is set
        // aside; fewer than three kept are said in the row's flags.
        assert!(!x.samples.is_empty(), "{x:?}");
        if x.samples.len() < 3 {
            assert!(x.flagged, "{x:?}");
        }
        assert!(x.ops_per_s > 0.0 && x.ns_per_op > 0.0, "{x:?}");
    }
    assert_eq!(r.atomics, p.rmw.name());
}
