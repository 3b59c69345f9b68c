//! The fleet analysis (`analysis::fleet`): grouping by signature on real
//! gathered reports (one node really restricted to one CPU), the MAD outlier
//! rule on constructed fleets, and nodes that failed, timed out or sent
//! nothing usable.

use numaprobe_core::analysis::compare::trust::{self, CellEvidence};
use numaprobe_core::analysis::fleet::{analyse, robust, NodeInput};
use numaprobe_core::model::fleet::NodeStatus;
use serde::Deserialize;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/fleet")
        .join(name)
}

fn read_fleet(dir: &Path) -> Vec<NodeInput> {
    let mut v: Vec<NodeInput> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| NodeInput {
            name: p.file_name().unwrap().to_string_lossy().into_owned(),
            run_json: std::fs::read_to_string(p.join("run.json")).ok(),
            failure: None,
        })
        .collect();
    v.sort_by(|a, b| a.name.cmp(&b.name));
    v
}

#[test]
fn the_node_restricted_to_one_cpu_is_named_with_what_differs() {
    let inputs = read_fleet(&fixture("taskset-one-cpu"));
    let r = analyse(&inputs);
    assert_eq!(r.nodes.len(), 5);
    assert!(r.complete);
    let groups: Vec<&[String]> = r.groups.iter().map(|g| g.nodes.as_slice()).collect();
    assert_eq!(
        groups,
        [&["node1", "node2", "node3", "node4"][..], &["node5"][..]]
    );
    assert!(r.groups[0].differs.is_empty());
    let d = &r.groups[1].differs;
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(
        (
            d[0].field.as_str(),
            d[0].value.as_str(),
            d[0].majority.as_str()
        ),
        ("allowed_cpus", "1", "2")
    );
    assert_eq!(r.nodes[4].group, Some(1));
}

#[test]
fn metric_statistics_are_those_of_the_reports() {
    let dir = fixture("taskset-one-cpu");
    let r = analyse(&read_fleet(&dir));
    for m in &r.metrics {
        let (kind, cell) = m.id.split_once(' ').unwrap();
        let (cpu, mem) = cell.split_once("->").unwrap();
        let mut values = Vec::new();
        for n in 1..=5 {
            let doc: Value = serde_json::from_str(
                &std::fs::read_to_string(dir.join(format!("node{n}/run.json"))).unwrap(),
            )
            .unwrap();
            for c in doc[kind]["cells"].as_array().into_iter().flatten() {
                // Only figures their report trusts count.
                let trusted = trust::cell_trust(&CellEvidence::deserialize(c).unwrap()).is_none();
                if c["cpu_node"].as_u64() == cpu.parse().ok()
                    && c["mem_node"].as_u64() == mem.parse().ok()
                    && trusted
                {
                    values.push(c["median"].as_f64().unwrap());
                }
            }
        }
        assert_eq!(m.count, values.len(), "{}", m.id);
        values.sort_by(f64::total_cmp);
        let med = robust::median(&values).unwrap();
        assert_eq!(m.median, med);
        assert_eq!(m.min, values[0]);
        assert_eq!(m.max, *values.last().unwrap());
        // Every node off the median by more than the rule asks is listed.
        for o in r.outliers.iter().filter(|o| o.metric == m.id) {
            assert!(o.off_percent.abs() >= r.rule.min_off_percent);
        }
    }
    // node2's budget did not reach bandwidth: it has no value there; of the
    // four nodes that do, node4 (CV 33 %) and node5 (CV 14 %) spread too far
    // to be trusted, so the metric counts two.
    let bw = r.metrics.iter().find(|m| m.id == "bandwidth 0->0").unwrap();
    assert_eq!(bw.count, 2);
    assert!(!r.nodes[1].values.contains_key("bandwidth 0->0"));
    assert!(r.nodes[3].untrusted["bandwidth 0->0"].starts_with("unstable: CV 33.0 %"));
    // Every node's latency spread past 11 % (a busy machine): no node sets
    // a median or is an outlier there, and a note says so.
    assert!(r.metrics.iter().all(|m| m.id != "latency 0->0"));
    assert!(r
        .nodes
        .iter()
        .all(|n| n.untrusted.contains_key("latency 0->0")));
    assert!(r.outliers.is_empty(), "{:?}", r.outliers);
    assert!(
        r.notes
            .iter()
            .any(|n| n.starts_with("7 figure(s) not trusted by their own report")),
        "{:?}",
        r.notes
    );
    // The values stay in the nodes, for what they are.
    assert_eq!(r.nodes[0].values.len(), 2);
}

/// A main-job document with one CPU node, `nodes` NUMA nodes and the
/// given latency and bandwidth of cell 0->0.
fn run_doc(cpus: usize, lat: f64, bw: f64) -> String {
    let cpu_list: Vec<usize> = (0..cpus).collect();
    json!({
        "schema": "numaprobe/1",
        "provenance": {"kernel": "6.1.0"},
        "topology": {
            "cpu_model": "Test CPU",
            "cpus": cpu_list.iter().map(|c| json!({"os_index": c})).collect::<Vec<_>>(),
            "packages": [{"id": 0}],
            "numa_nodes": [{"os_index": 0, "cpus": cpu_list, "memory_bytes": 64u64 << 30}],
            "distances": {"node_ids": [0], "matrix": [[10]]},
            "caches": [{"level": 3, "type": "Unified", "size_bytes": 32u64 << 20}],
            "thp_mode": "always",
            "allowed": {"cpus": cpu_list},
            "numbering": {"packages": "single-package", "smt": "none"}
        },
        "latency": {"unit": "ns", "cells": [{"cpu_node": 0, "mem_node": 0, "median": lat}], "failed": []},
        "bandwidth": {"unit": "GB/s", "cells": [{"cpu_node": 0, "mem_node": 0, "median": bw}], "failed": []},
        "complete": true
    })
    .to_string()
}

fn node(name: &str, doc: Option<String>) -> NodeInput {
    NodeInput {
        name: name.into(),
        run_json: doc,
        failure: None,
    }
}

#[test]
fn a_node_far_off_the_fleet_is_an_outlier_and_near_ones_are_not() {
    let mut inputs: Vec<NodeInput> = (0..9)
        .map(|i| {
            node(
                &format!("n{i}"),
                Some(run_doc(4, 100.0 + i as f64 % 3.0, 50.0 + i as f64 % 2.0)),
            )
        })
        .collect();
    // A node with a DIMM fewer: slower and with less bandwidth.
    inputs.push(node("n9", Some(run_doc(4, 140.0, 30.0))));
    let r = analyse(&inputs);
    assert_eq!(r.groups.len(), 1, "same signature");
    let named: Vec<(&str, &str, bool)> = r
        .outliers
        .iter()
        .map(|o| (o.node.as_str(), o.metric.as_str(), o.worse))
        .collect();
    assert_eq!(named.len(), 2, "{named:?}");
    assert!(named.contains(&("n9", "latency 0->0", true)));
    assert!(named.contains(&("n9", "bandwidth 0->0", true)));
    let lat = r
        .outliers
        .iter()
        .find(|o| o.metric == "latency 0->0")
        .unwrap();
    assert_eq!(lat.median, 101.0);
    assert!((lat.off_percent - (140.0 - 101.0) / 101.0 * 100.0).abs() < 1e-9);
    assert!(lat.robust_z.unwrap() > 3.5);
}

#[test]
fn a_faster_node_is_an_outlier_but_not_a_worse_one() {
    let mut inputs: Vec<NodeInput> = (0..5)
        .map(|i| node(&format!("n{i}"), Some(run_doc(4, 100.0 + i as f64, 50.0))))
        .collect();
    inputs.push(node("fast", Some(run_doc(4, 60.0, 50.0))));
    let r = analyse(&inputs);
    let o = &r.outliers;
    assert_eq!(o.len(), 1, "{o:?}");
    assert_eq!((o[0].node.as_str(), o[0].worse), ("fast", false));
}

#[test]
fn failed_timed_out_and_unreadable_nodes_are_listed_and_the_others_kept() {
    let inputs = vec![
        node("a1", Some(run_doc(4, 100.0, 50.0))),
        node("a2", Some(run_doc(4, 101.0, 50.0))),
        node("a3", None),
        node("a4", Some("{ not json".into())),
        NodeInput {
            name: "a5".into(),
            run_json: Some(
                run_doc(4, 102.0, 51.0).replace("\"complete\":true", "\"complete\":false"),
            ),
            failure: Some((NodeStatus::TimedOut, "ran past its time limit".into())),
        },
        node(
            "a6",
            Some(run_doc(2, 99.0, 49.0).replace("\"complete\":true", "\"complete\":false")),
        ),
    ];
    let r = analyse(&inputs);
    let st: Vec<(&str, NodeStatus)> = r
        .nodes
        .iter()
        .map(|n| (n.name.as_str(), n.status))
        .collect();
    assert_eq!(
        st,
        [
            ("a1", NodeStatus::Ok),
            ("a2", NodeStatus::Ok),
            ("a3", NodeStatus::Failed),
            ("a4", NodeStatus::Failed),
            ("a5", NodeStatus::TimedOut),
            ("a6", NodeStatus::Incomplete),
        ]
    );
    assert!(!r.complete);
    assert_eq!(r.nodes[2].reason.as_deref(), Some("sent no run.json"));
    assert!(r.nodes[3]
        .reason
        .as_deref()
        .unwrap()
        .contains("not valid JSON"));
    // The timed-out node's partial report is still compared.
    assert_eq!(r.nodes[4].values["latency 0->0"], 102.0);
    let lat = r.metrics.iter().find(|m| m.id == "latency 0->0").unwrap();
    assert_eq!(lat.count, 4);
    assert_eq!(r.troubled().count(), 4);
    // a6 has two CPUs where the others have four: its own group.
    assert_eq!(r.groups.len(), 2);
    assert_eq!(r.groups[1].nodes, ["a6"]);
    assert!(r.groups[1].differs.iter().any(|d| d.field == "cpus"));
    assert_eq!(r.nodes[2].group, None);
}

#[test]
fn two_nodes_are_too_few_to_judge() {
    let inputs = vec![
        node("x", Some(run_doc(4, 100.0, 50.0))),
        node("y", Some(run_doc(4, 200.0, 50.0))),
    ];
    let r = analyse(&inputs);
    assert!(r.outliers.is_empty());
    assert!(r.notes.iter().any(|n| n.contains("at least 3")));
}

/// A main-job report whose bandwidth phase the budget did not reach, as
/// `numaprobe run` writes it: `bandwidth: null` and the phase in `status`.
fn run_doc_without_bandwidth(lat: f64) -> String {
    let mut d: Value = serde_json::from_str(&run_doc(4, lat, 0.0)).unwrap();
    d["bandwidth"] = Value::Null;
    d["status"] = json!({"complete": true, "phases": [
        {"phase": "bandwidth", "shortfall": "budget", "reason": "the budget ran out before it"}
    ]});
    d.to_string()
}

#[test]
fn a_node_that_skipped_a_measurement_is_named_partial_with_what_is_missing() {
    let mut inputs: Vec<NodeInput> = (1..=3)
        .map(|i| node(&format!("np{i}"), Some(run_doc(4, 100.0, 50.0))))
        .collect();
    inputs[1].run_json = Some(run_doc_without_bandwidth(100.0));
    // A report whose status does not say why a matrix is missing.
    let mut silent: Value = serde_json::from_str(&run_doc(4, 100.0, 50.0)).unwrap();
    silent["latency"] = Value::Null;
    inputs.push(node("np4", Some(silent.to_string())));
    // A failed cell is a measurement missing too.
    let mut cell: Value = serde_json::from_str(&run_doc(4, 100.0, 50.0)).unwrap();
    cell["latency"]["failed"] = json!([{"cpu_node": 0, "mem_node": 1, "reason": "placement"}]);
    inputs.push(node("np5", Some(cell.to_string())));
    let r = analyse(&inputs);
    let by = |n: &str| r.nodes.iter().find(|x| x.name == n).unwrap();
    assert_eq!(by("np1").status, NodeStatus::Ok);
    assert_eq!(by("np2").status, NodeStatus::Partial);
    assert_eq!(by("np2").not_measured, ["bandwidth not measured (budget)"]);
    assert_eq!(
        by("np2").reason.as_deref(),
        Some("bandwidth not measured (budget)")
    );
    assert_eq!(
        by("np4").not_measured,
        ["latency not measured (the report does not say why)"]
    );
    assert_eq!(by("np5").status, NodeStatus::Partial);
    assert!(
        by("np5")
            .reason
            .as_deref()
            .unwrap()
            .contains("latency 0->1: placement (failed)"),
        "{:?}",
        by("np5").reason
    );
    // What it measured is still compared; the fleet is complete, not uniform.
    assert_eq!(by("np2").values["latency 0->0"], 100.0);
    assert!(r.complete);
    assert_eq!(r.failures().count(), 0);
    let f = r.findings();
    assert!(
        f.contains(&"np2: bandwidth not measured (budget)".to_string()),
        "{f:?}"
    );
    assert_eq!(f.len(), 3, "{f:?}");
    // Named in every format.
    use numaprobe_core::render::{fleet_csv, fleet_html, fleet_table};
    for (format, text) in [
        ("text", fleet_table::to_text(&r)),
        ("markdown", fleet_table::to_markdown(&r)),
        ("csv", fleet_csv::to_csv(&r)),
        ("html", fleet_html::to_html(&r)),
        ("json", numaprobe_core::render::to_json(&r)),
    ] {
        assert!(
            text.contains("bandwidth not measured (budget)"),
            "{format}: {text}"
        );
    }
    assert!(fleet_table::to_text(&r).contains("3 with a measurement missing"));
}

#[test]
fn a_uniform_fleet_has_no_findings_and_an_odd_one_names_them() {
    let inputs: Vec<NodeInput> = (1..=4)
        .map(|i| node(&format!("n{i}"), Some(run_doc(4, 100.0, 50.0))))
        .collect();
    let r = analyse(&inputs);
    assert!(r.findings().is_empty(), "{:?}", r.findings());
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    let mut odd = inputs.clone();
    odd.push(node("n5", Some(run_doc(2, 150.0, 50.0))));
    let odd = analyse(&odd);
    // The report says the fleet is not configured alike, and how many ways.
    assert_eq!(
        odd.notes,
        ["2 different signatures: nodes outside the largest group are not configured like it (see groups)"]
    );
    let f = odd.findings();
    assert_eq!(
        f,
        [
            "1 outlier figure(s) on n5",
            "n5 configured unlike the largest group (CPUs, allowed CPUs)"
        ],
        "{f:?}"
    );
}

#[test]
fn the_outlier_rule_decides_and_is_recorded() {
    use numaprobe_core::analysis::fleet::analyse_with;
    use numaprobe_core::model::fleet::OutlierRule;
    // 8 % off a fleet with a spread of about 1: an outlier by default...
    let mut inputs: Vec<NodeInput> = (0..6)
        .map(|i| {
            node(
                &format!("n{i}"),
                Some(run_doc(4, 100.0 + (i % 3) as f64, 50.0)),
            )
        })
        .collect();
    inputs.push(node("slow", Some(run_doc(4, 109.0, 50.0))));
    let default = analyse(&inputs);
    assert_eq!(default.outliers.len(), 1);
    // ...not when 10 % is asked for, nor when 10 robust SDs are.
    for rule in [
        OutlierRule {
            min_off_percent: 10.0,
            ..OutlierRule::default()
        },
        OutlierRule {
            min_robust_z: 10.0,
            ..OutlierRule::default()
        },
    ] {
        let r = analyse_with(inputs.clone(), rule);
        assert!(r.outliers.is_empty(), "{rule:?}: {:?}", r.outliers);
        assert_eq!(r.rule, rule);
    }
}

/// `run_doc` with `cells` latency cells (CPU node 0 to memory nodes
/// 0..cells), each `lat` but for `off` (a cell index and its value).
fn wide_doc(cells: usize, lat: f64, off: Option<(usize, f64)>) -> String {
    let mut d: Value = serde_json::from_str(&run_doc(4, lat, 50.0)).unwrap();
    d["latency"]["cells"] = (0..cells)
        .map(|m| {
            let v = match off {
                Some((at, v)) if at == m => v,
                _ => lat,
            };
            json!({"cpu_node": 0, "mem_node": m, "median": v})
        })
        .collect();
    d.to_string()
}

/// [`run_doc`] with the latency cell's spread and flags.
fn run_doc_spread(lat: f64, cv: f64, flags: &[&str]) -> String {
    let mut d: Value = serde_json::from_str(&run_doc(4, lat, 50.0)).unwrap();
    let c = &mut d["latency"]["cells"][0];
    c["cv"] = json!(cv);
    c["min"] = json!(lat * (1.0 - cv));
    c["max"] = json!(lat * (1.0 + cv));
    c["samples"] = json!([lat, lat, lat]);
    c["flagged"] = json!(!flags.is_empty());
    c["flags"] = json!(flags);
    d.to_string()
}

#[test]
fn a_long_reason_is_clipped_so_the_csv_grows_with_the_input_not_its_square() {
    use numaprobe_core::analysis::fleet::MAX_REASON;
    use numaprobe_core::render::fleet_csv::to_csv;
    let reason = "r".repeat(1 << 20);
    let mut failed: Value = serde_json::from_str(&wide_doc(500, 100.0, None)).unwrap();
    failed["latency"]["failed"] =
        json!([{"cpu_node": 0, "mem_node": 999, "reason": "x".repeat(5000)}]);
    let mut inputs: Vec<NodeInput> = (1..=3)
        .map(|i| node(&format!("n{i}"), Some(wide_doc(500, 100.0, None))))
        .collect();
    inputs.push(NodeInput {
        name: "n4".into(),
        run_json: Some(failed.to_string()),
        failure: Some((NodeStatus::Failed, reason)),
    });
    let input: usize = inputs
        .iter()
        .map(|n| {
            n.run_json.as_ref().map_or(0, String::len) + n.failure.as_ref().map_or(0, |f| f.1.len())
        })
        .sum();
    let r = analyse(&inputs);
    let why = r.nodes[3].reason.as_deref().unwrap();
    assert!(why.starts_with("rrrr"), "{why}");
    assert!(why.ends_with(&format!("... ({} more characters)", (1 << 20) - MAX_REASON)));
    assert_eq!(why.find("..."), Some(MAX_REASON));
    // The failed cell's own reason is clipped too, and named once.
    assert_eq!(r.nodes[3].failed_cells.len(), 1);
    assert!(r.nodes[3].failed_cells[0].starts_with("latency 0->999: xxx"));
    assert!(r.nodes[3].failed_cells[0].len() < 200);
    let csv = to_csv(&r);
    // The node's 501 lines each carry the clipped reason, not the megabyte.
    let n4: Vec<&str> = csv.lines().filter(|l| l.starts_with("n4,")).collect();
    assert_eq!(n4.len(), 501, "500 latency cells and one of bandwidth");
    assert!(n4.iter().all(|l| l.ends_with(&format!(",{why}"))));
    assert!(
        csv.len() < input,
        "{} bytes of CSV from {input} bytes",
        csv.len()
    );
}

#[test]
fn a_matrix_in_a_unit_other_than_its_own_is_refused_and_not_repeated() {
    use numaprobe_core::render::{fleet_csv::to_csv, fleet_html::to_html};
    let long = "u".repeat(100_000);
    let with_unit = |unit: &str| {
        let mut d: Value = serde_json::from_str(&wide_doc(50, 100.0, None)).unwrap();
        d["latency"]["unit"] = json!(unit);
        d.to_string()
    };
    let inputs = vec![
        node("n1", Some(with_unit(&long))),
        node("n2", Some(with_unit("ms"))),
        node("n3", Some(wide_doc(50, 100.0, None))),
        node("n4", Some(wide_doc(50, 101.0, None))),
    ];
    let r = analyse(&inputs);
    assert_eq!(r.nodes[0].status, NodeStatus::Failed);
    assert_eq!(
        r.nodes[0].reason.as_deref(),
        Some("latency unit \"uuuuuuuuuuuuuuuu... (99984 more characters)\" is not ns: its figures are not compared")
    );
    assert_eq!(
        r.nodes[1].reason.as_deref(),
        Some("latency unit \"ms\" is not ns: its figures are not compared")
    );
    // Their latency is left out of the fleet's; their bandwidth, in its
    // own unit, is compared.
    assert!(r.nodes[0].values.keys().all(|k| k.starts_with("bandwidth")));
    assert_eq!(r.nodes[1].values["bandwidth 0->0"], 50.0);
    let lat = r.metrics.iter().find(|m| m.id == "latency 0->7").unwrap();
    assert_eq!((lat.count, lat.unit.as_str()), (2, "ns"));
    assert!(r.metrics.iter().all(|m| m.unit == "ns" || m.unit == "GB/s"));
    let (csv, html) = (to_csv(&r), to_html(&r));
    assert!(!csv.contains("uuuuuuuuuuuuuuuuu") && !html.contains("uuuuuuuuuuuuuuuuu"));
    assert!(
        csv.len() + html.len() < 100_000,
        "{} {}",
        csv.len(),
        html.len()
    );
}

#[test]
fn every_csv_line_has_its_own_metric_and_outlier_mark() {
    use numaprobe_core::render::fleet_csv::to_csv;
    // 300 cells: one node off on cell 137 only.
    let mut inputs: Vec<NodeInput> = (0..6)
        .map(|i| {
            node(
                &format!("n{i}"),
                Some(wide_doc(300, 100.0 + i as f64 % 2.0, None)),
            )
        })
        .collect();
    inputs.push(node("odd", Some(wide_doc(300, 100.0, Some((137, 200.0))))));
    let r = analyse(&inputs);
    let csv = to_csv(&r);
    let mut marked = Vec::new();
    for l in csv.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        let m = r.metrics.iter().find(|m| m.id == f[3]).unwrap();
        assert_eq!(f[5], m.unit, "{l}");
        assert_eq!(f[6], format!("{:.4}", m.median), "{l}");
        if f[9] == "true" {
            marked.push((f[0], f[3]));
        }
    }
    assert_eq!(marked, [("odd", "latency 0->137")]);
    assert_eq!(csv.lines().count(), 1 + 7 * 301);
}

#[test]
fn a_flagged_figure_is_never_an_outlier_nor_sets_the_median() {
    let mut inputs: Vec<NodeInput> = (0..5)
        .map(|i| {
            node(
                &format!("n{i}"),
                Some(run_doc_spread(100.0 + i as f64, 0.01, &[])),
            )
        })
        .collect();
    // 446 ns, starred: far off, but not trusted.
    inputs.push(node(
        "busy",
        Some(run_doc_spread(446.0, 0.01, &["unstable: CV 12.0 %"])),
    ));
    let r = analyse(&inputs);
    assert!(r.outliers.is_empty(), "{:?}", r.outliers);
    let lat = r.metrics.iter().find(|m| m.id == "latency 0->0").unwrap();
    assert_eq!((lat.count, lat.median, lat.max), (5, 102.0, 104.0));
    let busy = r.nodes.iter().find(|n| n.name == "busy").unwrap();
    assert_eq!(busy.untrusted["latency 0->0"], "unstable: CV 12.0 %");
    assert_eq!(busy.values["latency 0->0"], 446.0);
    // The same figure unflagged is one.
    inputs.pop();
    inputs.push(node("busy", Some(run_doc_spread(446.0, 0.01, &[]))));
    let r = analyse(&inputs);
    assert_eq!(r.outliers.len(), 1);
    assert_eq!(r.outliers[0].node, "busy");
}

#[test]
fn three_runs_of_one_machine_differing_within_their_noise_name_no_outlier() {
    // 200, 201 and 212 ns, each with an 8 % standard deviation: 212 is 5.5 %
    // and many MADs off the median, but within its own noise (17 ns).
    let inputs: Vec<NodeInput> = [("run1", 200.0), ("run2", 201.0), ("run3", 212.0)]
        .into_iter()
        .map(|(n, v)| node(n, Some(run_doc_spread(v, 0.08, &[]))))
        .collect();
    let r = analyse(&inputs);
    assert!(r.outliers.is_empty(), "{:?}", r.outliers);
    assert!((r.nodes[2].noise["latency 0->0"] - 16.96).abs() < 1e-9);
    // The same three with a 1 % spread: 212 stands out.
    let tight: Vec<NodeInput> = [("run1", 200.0), ("run2", 201.0), ("run3", 212.0)]
        .into_iter()
        .map(|(n, v)| node(n, Some(run_doc_spread(v, 0.01, &[]))))
        .collect();
    let r = analyse(&tight);
    assert_eq!(r.outliers.len(), 1, "{:?}", r.outliers);
    assert_eq!(r.outliers[0].node, "run3");
    // The typical node's noise counts too: a quiet node among noisy ones
    // is not named for being off by less than theirs.
    let mixed: Vec<NodeInput> = [
        ("run1", 200.0, 0.08),
        ("run2", 201.0, 0.08),
        ("run3", 212.0, 0.001),
    ]
    .into_iter()
    .map(|(n, v, cv)| node(n, Some(run_doc_spread(v, cv, &[]))))
    .collect();
    assert!(analyse(&mixed).outliers.is_empty());
}

#[test]
fn a_reason_s_control_characters_reach_no_fleet_output_raw() {
    use numaprobe_core::render::{fleet_csv::to_csv, fleet_html::to_html, fleet_table};
    let inputs = vec![
        node("n1", Some(run_doc(4, 100.0, 50.0))),
        NodeInput {
            name: "n2".into(),
            run_json: None,
            failure: Some((NodeStatus::Failed, "bad\u{1b}[31m red\r\u{202e}txt".into())),
        },
    ];
    let r = analyse(&inputs);
    for (what, out) in [
        ("csv", to_csv(&r)),
        ("html", to_html(&r)),
        ("md", fleet_table::to_markdown(&r)),
        ("text", fleet_table::to_text(&r)),
    ] {
        assert!(
            !out.contains(['\u{1b}', '\r', '\u{202e}']),
            "{what}: a raw control character"
        );
        assert!(out.contains("bad\\u{1b}[31m red\\r"), "{what}: {out}");
    }
}

/// fleet.html lists a node configured unlike the baseline before the
/// ordinary ones (after the nodes not ok), says so in its status, and never
/// tints its cells: a machine with fewer CPUs is faster for being
/// different, not better.
#[test]
fn the_html_puts_odd_configurations_first_and_never_tints_them() {
    use numaprobe_core::render::fleet_html::to_html;
    let mut inputs: Vec<NodeInput> = (1..=4)
        .map(|i| node(&format!("n{i}"), Some(run_doc(4, 100.0 + i as f64, 50.0))))
        .collect();
    // n0: configured unlike the others and faster for it; n9: failed.
    inputs.push(node("n0", Some(run_doc(2, 60.0, 50.0))));
    inputs.push(node("n9", None));
    let r = analyse(&inputs);
    let html = to_html(&r);
    let heat = &html[html.find("<h2>Heatmap").unwrap()..html.find("</table>").unwrap()];
    let row_of = |n: &str| {
        heat.find(&format!("<tr><td class=\"bad\">{n}</td>"))
            .or_else(|| heat.find(&format!("<tr><td>{n}</td>")))
    };
    let at: Vec<usize> = ["n9", "n0", "n1", "n4"]
        .iter()
        .map(|n| row_of(n).unwrap())
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "order {at:?}: {heat}");
    let n0 = &heat[row_of("n0").unwrap()..];
    let n0 = &n0[..n0.find("</tr>").unwrap()];
    assert!(n0.contains("ok, configured unlike group 1"), "{n0}");
    assert!(
        !n0.contains("background"),
        "an odd configuration is tinted: {n0}"
    );
    assert!(n0.contains("configured unlike group 1: not judged"), "{n0}");
    // The ordinary nodes keep their tint.
    let n1 = &heat[row_of("n1").unwrap()..];
    assert!(n1[..n1.find("</tr>").unwrap()].contains("background:rgba("));
}

/// Two groups of one node each: the baseline is the group of the node
/// first by name (natural order), the report says it is a tie, and check
/// against it wants --group.
#[test]
fn a_tie_between_groups_is_broken_by_name_and_said() {
    use numaprobe_core::render::{fleet_html::to_html, fleet_table};
    for order in [["node10", "node9"], ["node9", "node10"]] {
        let inputs: Vec<NodeInput> = order
            .iter()
            .map(|n| {
                node(
                    n,
                    Some(run_doc(if *n == "node10" { 2 } else { 4 }, 100.0, 50.0)),
                )
            })
            .collect();
        let r = analyse(&inputs);
        assert!(r.baseline_tied());
        assert_eq!(r.groups[0].nodes, ["node9"], "{order:?}");
        assert!(
            r.notes
                .iter()
                .any(|n| n.contains("no group is the largest") && n.contains("node9")),
            "{:?}",
            r.notes
        );
        assert!(fleet_table::to_markdown(&r).contains("baseline by the tie rule"));
        assert!(to_html(&r).contains("baseline by the tie rule"));
    }
    let inputs: Vec<NodeInput> = ["a", "b", "c"]
        .iter()
        .map(|n| node(n, Some(run_doc(if *n == "a" { 2 } else { 4 }, 100.0, 50.0))))
        .collect();
    let r = analyse(&inputs);
    assert!(!r.baseline_tied());
    assert!(!r
        .notes
        .iter()
        .any(|n| n.contains("no group is the largest")));
}
