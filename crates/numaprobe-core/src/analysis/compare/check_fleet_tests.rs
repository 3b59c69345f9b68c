//! Tests of `check --expect fleet.json`: the group's signature field by
//! field, memory within the tolerance and the GiB the fleet rounds to, the
//! kernel of a dump, and cells against the group's medians (the fleet built
//! by the real fleet analysis from run documents).

use super::tests::{items, machine, matrix, run, side};
use super::*;
use crate::analysis::fleet::{analyse, NodeInput};
use crate::model::matrix::MatrixKind;
use crate::model::topo::TopoReport;

const GIB: u64 = 1 << 30;

/// A run document of `t` with one latency row, as `numaprobe run` writes it.
fn run_doc(t: &Topology, latency: &[f64]) -> String {
    let cells: Vec<_> = latency
        .iter()
        .enumerate()
        .map(|(j, v)| serde_json::json!({"cpu_node": 0, "mem_node": j, "median": v}))
        .collect();
    serde_json::json!({
        "schema": crate::SCHEMA,
        "kind": "run",
        "complete": true,
        "provenance": {"kernel": "6.1.0"},
        "topology": TopoReport::new(t),
        "latency": {"unit": "ns", "cells": cells},
    })
    .to_string()
}

fn fleet_side() -> Side {
    let good = machine("/", [96 * GIB, 96 * GIB]);
    let small = machine("/", [96 * GIB, 64 * GIB]);
    let inputs: Vec<NodeInput> = [
        ("n1", &good, [100.0, 150.0]),
        ("n2", &good, [104.0, 160.0]),
        ("n3", &good, [96.0, 140.0]),
        ("n4", &small, [100.0, 300.0]),
    ]
    .into_iter()
    .map(|(name, t, lat)| NodeInput {
        name: name.into(),
        run_json: Some(run_doc(t, &lat)),
        failure: None,
    })
    .collect();
    let mut s = side("fleet", None, "6.1.0");
    s.fleet = Some(Box::new(analyse(&inputs)));
    s
}

#[test]
fn a_fleet_baseline_is_its_largest_group_or_the_one_chosen() {
    let fleet = fleet_side();
    let o = Options::default();
    let good = machine("/", [96 * GIB, 96 * GIB]);
    let r = run(&fleet, &good, None, &o);
    assert!(r.matches, "{:?}", r.differences);
    assert_eq!(r.expect_kind, "fleet");
    assert!(r.checked[0].starts_with("signature of group 1 of 2 (3 nodes: n1, n2, n3)"));
    let r = run(&fleet, &machine("/", [96 * GIB, 48 * GIB]), None, &o);
    assert_eq!(items(&r), [(Section::Memory, "node 1: memory".into())]);
    assert_eq!(r.differences[0].a, "96 GiB");
    // Group 2 (the node with 64 GiB on node 1) is what the smaller machine
    // matches: the number fleet.md prints is the one --group takes.
    let g1 = Options {
        group: Some(2),
        ..Options::default()
    };
    assert!(run(&fleet, &machine("/", [96 * GIB, 64 * GIB]), None, &g1).matches);
    let this = This {
        topology: &good,
        kernel: Some("6.1.0"),
        measured: None,
    };
    for (n, words) in [
        (
            3,
            "--group 3: the fleet has 2 signature groups (1 is the largest; valid: 1-2)",
        ),
        (
            0,
            "--group 0: the fleet has 2 signature groups (1 is the largest; valid: 1-2)",
        ),
    ] {
        let e = check(
            &fleet,
            &this,
            &Options {
                group: Some(n),
                ..Options::default()
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains(words), "{e}");
        assert!(!e.to_string().contains('\n'), "{e}");
    }
}

#[test]
fn a_fleet_baseline_judges_cells_against_the_group_median() {
    let fleet = fleet_side();
    let good = machine("/", [96 * GIB, 96 * GIB]);
    let mut here = side("report", None, "6.1.0");
    // Group 0's medians: 100 ns and 150 ns; node 1 here is 40 % slower.
    here.latency = Some(matrix(MatrixKind::Latency, &[101.0, 210.0]));
    let r = run(&fleet, &good, Some(&here), &Options::default());
    assert_eq!(
        r.differences
            .iter()
            .map(|d| (d.section, d.a.as_str(), d.b.as_str()))
            .collect::<Vec<_>>(),
        [(Section::Latency, "150.0 ns", "210.0 ns (+40 %, band 15 %)")]
    );
    assert!(
        r.checked
            .iter()
            .any(|c| c == "latency cells within 15 % of the expected medians"),
        "{:?}",
        r.checked
    );
}

#[test]
fn a_fleet_baseline_leaves_untrusted_figures_out() {
    let good = machine("/", [96 * GIB, 96 * GIB]);
    let mut fleet = fleet_side();
    // n2's 160 ns for 0->1 is flagged: the group's median is of 150 and 140.
    let f = fleet.fleet.as_mut().unwrap();
    let n2 = f.nodes.iter_mut().find(|n| n.name == "n2").unwrap();
    n2.untrusted
        .insert("latency 0->1".into(), "unstable".into());
    let mut here = side("report", None, "6.1.0");
    here.latency = Some(matrix(MatrixKind::Latency, &[101.0, 168.0]));
    let r = run(&fleet, &good, Some(&here), &Options::default());
    assert_eq!(
        r.differences
            .iter()
            .map(|d| (d.a.as_str(), d.b.as_str()))
            .collect::<Vec<_>>(),
        [("145.0 ns", "168.0 ns (+16 %, band 15 %)")]
    );
}

#[test]
fn the_check_names_every_signature_field_it_compared() {
    let fleet = fleet_side();
    let good = machine("/", [96 * GIB, 96 * GIB]);
    let r = run(&fleet, &good, None, &Options::default());
    assert_eq!(
        r.checked[0],
        "signature of group 1 of 2 (3 nodes: n1, n2, n3): CPU model, packages, NUMA nodes, \
         NUMA nodes per package, CPUs, allowed CPUs, CPU numbering, SLIT, transparent huge pages, kernel, \
         memory per node (within 3 % and the GiB the fleet rounds to), last-level cache bytes"
    );
    // Without measurements here, the group's medians are not compared, and
    // the check says how to give them.
    assert!(
        r.notes
            .iter()
            .any(|n| n
                .starts_with("latency not compared: the fleet holds the group's latency medians")),
        "{:?}",
        r.notes
    );
}

#[test]
fn a_dump_leaves_the_kernel_out_and_another_kernel_is_named() {
    let fleet = fleet_side();
    let good = machine("/", [96 * GIB, 96 * GIB]);
    let dump = This {
        topology: &good,
        kernel: None,
        measured: None,
    };
    let r = check(&fleet, &dump, &Options::default()).unwrap();
    assert!(r.matches, "{:?}", r.differences);
    assert!(
        r.notes
            .iter()
            .any(|n| n.starts_with("kernel not compared: a dump")),
        "{:?}",
        r.notes
    );
    assert!(!r.checked[0].contains("kernel"), "{}", r.checked[0]);
    let newer = This {
        kernel: Some("6.12.9"),
        ..dump
    };
    let r = check(&fleet, &newer, &Options::default()).unwrap();
    assert_eq!(items(&r), [(Section::Kernel, "kernel".into())]);
    assert_eq!(
        (r.differences[0].a.as_str(), r.differences[0].b.as_str()),
        ("6.1.0", "6.12.9")
    );
}

#[test]
fn memory_is_judged_within_the_tolerance_and_the_half_gib_the_fleet_rounds_to() {
    // The group's nodes hold 96 GiB each.
    let fleet = fleet_side();
    let quarter = Options {
        memory_tolerance: 0.25,
        ..Options::default()
    };
    // A quarter of 96 GiB and the half GiB: 24.5 GiB less passes, more fails.
    let edge = machine("/", [96 * GIB, 71 * GIB + GIB / 2]);
    assert!(run(&fleet, &edge, None, &quarter).matches);
    let past = machine("/", [96 * GIB, 71 * GIB + GIB / 4]);
    let r = run(&fleet, &past, None, &quarter);
    assert_eq!(items(&r), [(Section::Memory, "node 1: memory".into())]);
    assert_eq!(
        (r.differences[0].a.as_str(), r.differences[0].b.as_str()),
        ("96 GiB", "71.2 GiB")
    );
    // No tolerance: the rounding alone, a quarter GiB passes, three do not.
    let exact = Options {
        memory_tolerance: 0.0,
        ..Options::default()
    };
    let above = machine("/", [96 * GIB + GIB / 4, 96 * GIB]);
    assert!(run(&fleet, &above, None, &exact).matches);
    let further = machine("/", [96 * GIB + 3 * GIB / 4, 96 * GIB]);
    assert!(!run(&fleet, &further, None, &exact).matches);
    // 3 GiB less of 96 is within the default 3 % and the half GiB.
    let less = machine("/", [93 * GIB, 96 * GIB]);
    assert!(run(&fleet, &less, None, &Options::default()).matches);
}

/// Two groups of two nodes: no group is the largest, so the baseline is a
/// tie rule's pick; a check without --group is refused (bad input, which
/// never drains), and one with --group is judged.
#[test]
fn a_tied_fleet_wants_a_group() {
    let good = machine("/", [96 * GIB, 96 * GIB]);
    let small = machine("/", [96 * GIB, 64 * GIB]);
    let inputs: Vec<NodeInput> = [("n1", &good), ("n2", &small), ("n3", &good), ("n4", &small)]
        .into_iter()
        .map(|(name, t)| NodeInput {
            name: name.into(),
            run_json: Some(run_doc(t, &[100.0, 150.0])),
            failure: None,
        })
        .collect();
    let mut fleet = side("fleet", None, "6.1.0");
    fleet.fleet = Some(Box::new(analyse(&inputs)));
    let this = This {
        topology: &good,
        kernel: Some("6.1.0"),
        measured: None,
    };
    let e = check(&fleet, &this, &Options::default()).unwrap_err();
    assert!(
        e.to_string().contains(
            "no group is the largest (groups 1 and 2 hold 2 node(s) each): choose the one to check against with --group (valid: 1-2)"
        ),
        "{e}"
    );
    let g = |n| Options {
        group: Some(n),
        ..Options::default()
    };
    // Group 1 holds n1, the first node by name.
    assert!(run(&fleet, &good, None, &g(1)).matches);
    assert!(!run(&fleet, &good, None, &g(2)).matches);
}

/// fleet.json keeps the count of allowed CPUs only: the difference says the
/// count the group expects and this machine's count with its list, in the
/// topology check's words.
#[test]
fn fewer_allowed_cpus_are_named_with_this_machines_list() {
    let fleet = fleet_side();
    let mut fewer = machine("/", [96 * GIB, 96 * GIB]);
    fewer.allowed.cpus = vec![0, 1, 2];
    let r = run(&fleet, &fewer, None, &Options::default());
    assert_eq!(items(&r), [(Section::Allowed, "allowed CPUs".into())]);
    assert_eq!(r.differences[0].a, "4");
    assert_eq!(r.differences[0].b, "3 (0-2)");
}
