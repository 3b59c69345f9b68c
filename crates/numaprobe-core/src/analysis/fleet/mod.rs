//! The fleet analysis: many nodes' main-job reports (`run.json`) in, one
//! [`FleetReport`] out. Nodes are grouped by their topology and firmware
//! signature ([`signature`]); every measured cell (`latency 0->1`,
//! `bandwidth 1->0`) is compared across the nodes that measured it with the
//! median and MAD ([`robust`]), and the nodes far off are named with how far
//! (a figure its own report does not trust, or one off by less than its
//! noise, never is: [`crate::analysis::compare::trust`]);
//! nodes that failed, timed out or sent an incomplete report are listed with
//! why and their other results kept. Reading each node's own report is
//! [`node`]'s; this file holds what is judged across the nodes: groups,
//! each metric's statistics, the outliers and the notes.
//!
//! Cost: one pass over each node's cells plus a sort per metric, so
//! O(nodes x cells x log nodes); the bench script `bench/fleet-analysis`
//! measures it on synthetic fleets.

pub mod node;
pub mod robust;
pub mod run_doc;
pub mod signature;
pub mod stream;

pub use node::{not_measured, NodeInput, MAX_REASON};

use crate::analysis::compare::trust;
use crate::model::fleet::{FleetReport, MetricStats, Outlier, OutlierRule};
use crate::model::ranking::Better;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// Analyse a fleet with the default outlier rule.
pub fn analyse(inputs: &[NodeInput]) -> FleetReport {
    analyse_with(inputs.iter().cloned(), OutlierRule::default())
}

/// Analyse nodes as they come: each report's text is dropped once its
/// figures and signature are taken, so a fleet of 10,000 reports is never
/// held in memory whole (the binary reads them lazily from the folder).
pub fn analyse_with(inputs: impl IntoIterator<Item = NodeInput>, rule: OutlierRule) -> FleetReport {
    let mut nodes = Vec::new();
    let mut signatures = Vec::new();
    let mut reader = node::Reader::default();
    for input in inputs {
        let (node, signature) = reader.read(&input);
        if let Some(signature) = signature {
            signatures.push((node.name.clone(), signature));
        }
        nodes.push(node);
    }

    nodes.sort_by(|a, b| natural_cmp(&a.name, &b.name));
    let groups = signature::group(&signatures);
    let group_of: BTreeMap<&str, usize> = groups
        .iter()
        .enumerate()
        .flat_map(|(i, g)| g.nodes.iter().map(move |n| (n.as_str(), i)))
        .collect();
    for n in &mut nodes {
        n.group = group_of.get(n.name.as_str()).copied();
    }

    let units = reader.units;
    let mut metrics = Vec::with_capacity(units.len());
    let mut outliers = Vec::new();
    let mut untrusted = 0;
    for (id, (unit, better)) in &units {
        // Only figures that hold set the fleet's median or can stand out.
        let mut named = Vec::new();
        for n in &nodes {
            if let Some(&v) = n.values.get(id) {
                if n.untrusted.contains_key(id) {
                    untrusted += 1;
                } else {
                    named.push((n.name.as_str(), v, n.noise.get(id).copied().unwrap_or(0.0)));
                }
            }
        }
        let values: Vec<f64> = named.iter().map(|(_, v, _)| *v).collect();
        let (Some(med), count) = (robust::median(&values), values.len()) else {
            continue;
        };
        let mad = robust::mad(&values, med).unwrap_or(0.0);
        // The noise a typical node's figure has: a node must be further
        // off than its own noise and this one together
        // ([`trust::noise_bound`]).
        let noises: Vec<f64> = named.iter().map(|(_, _, n)| *n).collect();
        let typical = robust::median(&noises).unwrap_or(0.0);
        metrics.push(MetricStats {
            id: id.to_string(),
            unit: unit.to_string(),
            better: *better,
            count,
            median: med,
            mad,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        });
        // Which side of the median is worse for this metric. A figure at
        // the median is on neither side, and never an outlier anyway (a
        // change of zero is beyond no noise), so only the side is asked.
        let worse_side = match better {
            Better::Lower => Ordering::Greater,
            Better::Higher => Ordering::Less,
        };
        for (node, v, noise) in named {
            let j = robust::judge(v, med, mad, count, &rule);
            if j.outlier && trust::beyond_noise(v - med, &[noise, typical]) {
                outliers.push(Outlier {
                    node: node.to_string(),
                    metric: id.to_string(),
                    unit: unit.to_string(),
                    value: v,
                    median: med,
                    robust_z: j.robust_z,
                    off_percent: j.off_percent,
                    worse: v.partial_cmp(&med) == Some(worse_side),
                });
            }
        }
    }
    // Farthest off first: the z-score where there is one (a zero MAD is
    // "infinitely" far), then the percentage.
    outliers.sort_by(|a, b| {
        let key = |o: &Outlier| o.robust_z.map_or(f64::INFINITY, f64::abs);
        key(b)
            .total_cmp(&key(a))
            .then_with(|| b.off_percent.abs().total_cmp(&a.off_percent.abs()))
            .then_with(|| a.node.cmp(&b.node))
    });

    let mut notes = Vec::new();
    let reported = nodes.iter().filter(|n| n.group.is_some()).count();
    if reported < rule.min_nodes && !metrics.is_empty() {
        notes.push(format!(
            "{reported} node(s) with a report: at least {} are needed to judge outliers",
            rule.min_nodes
        ));
    }
    if untrusted > 0 {
        notes.push(format!(
            "{untrusted} figure(s) not trusted by their own report (flagged: spread, placement; see each node's untrusted): they set no median and make no outlier"
        ));
    }
    if groups.len() > 1 {
        notes.push(format!(
            "{} different signatures: nodes outside the largest group are not configured like it (see groups)",
            groups.len()
        ));
    }
    if groups.len() > 1 && groups[0].nodes.len() == groups[1].nodes.len() {
        notes.push(format!(
            "no group is the largest: groups 1 and 2 hold {} node(s) each; group 1 is the baseline by the tie rule only (its first node, {}, comes first by name); check --expect fleet.json needs --group for this fleet",
            groups[0].nodes.len(),
            groups[0].nodes[0]
        ));
    }
    let complete = nodes.iter().all(|n| !n.status.is_failure());
    FleetReport {
        schema: crate::SCHEMA.to_string(),
        nodes,
        groups,
        metrics,
        outliers,
        rule,
        notes,
        complete,
    }
}
/// Node names in the order people read them: `node2` before `node10`.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn parts(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (pa, pb) = (parts(a), parts(b));
    for ((da, sa), (db, sb)) in pa.iter().zip(&pb) {
        let ord = if *da && *db {
            let (ta, tb) = (sa.trim_start_matches('0'), sb.trim_start_matches('0'));
            ta.len().cmp(&tb.len()).then_with(|| ta.cmp(tb))
        } else {
            sa.cmp(sb)
        };
        if ord != std::cmp::Ordering::Equal {
            return ord;
        }
    }
    pa.len().cmp(&pb.len()).then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::run_doc::RunDoc;
    use super::*;
    use crate::model::fleet::NodeStatus;
    use serde::Deserialize;
    use serde_json::Value;

    #[test]
    fn natural_order_reads_numbers_as_numbers() {
        let mut v = vec!["node10", "node2", "node1", "gpu3", "node02"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["gpu3", "node1", "node02", "node2", "node10"]);
        // A name that starts with a number comes before one that starts
        // with a letter, however long the number.
        let mut v = vec!["b", "10", "a", "9"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["9", "10", "a", "b"]);
    }

    /// A run document of one node with one CPU: its latency and bandwidth
    /// of cell 0->0, changed by `edit`.
    fn run(lat: f64, edit: impl Fn(&mut Value)) -> String {
        let mut d = serde_json::json!({
            "schema": "numaprobe/1",
            "topology": {
                "cpus": [{"os_index": 0}],
                "numa_nodes": [{"os_index": 0, "cpus": [0], "memory_bytes": 1u64 << 34}],
            },
            "latency": {"unit": "ns", "cells": [{"cpu_node": 0, "mem_node": 0, "median": lat}]},
            "bandwidth": {"unit": "GB/s", "cells": [{"cpu_node": 0, "mem_node": 0, "median": 50.0}]},
            "complete": true,
        });
        edit(&mut d);
        d.to_string()
    }

    fn fleet(docs: &[(&str, String)]) -> FleetReport {
        analyse(
            &docs
                .iter()
                .map(|(name, doc)| NodeInput {
                    name: name.to_string(),
                    run_json: Some(doc.clone()),
                    failure: None,
                })
                .collect::<Vec<_>>(),
        )
    }

    /// Three alike nodes whose reports give no spread: nothing to remark on
    /// (enough nodes, every figure trusted, one group), and no noise
    /// written for figures that carry none.
    #[test]
    fn three_alike_nodes_need_no_note_and_carry_no_noise_they_did_not_report() {
        let r = fleet(&[
            ("n1", run(100.0, |_| {})),
            ("n2", run(101.0, |_| {})),
            ("n3", run(102.0, |_| {})),
        ]);
        assert_eq!((r.groups.len(), r.metrics.len()), (1, 2));
        assert!(r.notes.is_empty(), "{:?}", r.notes);
        assert!(r.nodes.iter().all(|n| n.noise.is_empty()), "{:?}", r.nodes);
        assert!(!serde_json::to_string(&r).unwrap().contains("\"noise\""));
    }

    /// A node that sent valid JSON of another kind (a check report) failed,
    /// named with why; its document is never read as a run.
    #[test]
    fn a_document_other_than_a_run_is_refused_with_why() {
        let check =
            serde_json::json!({"schema": "numaprobe/1", "expect": "t.json", "expect_kind": "topo"});
        let r = fleet(&[("c1", run(100.0, |_| {})), ("c2", check.to_string())]);
        assert_eq!(r.nodes[1].status, NodeStatus::Failed);
        assert_eq!(
            r.nodes[1].reason.as_deref(),
            Some("run.json holds no topology: not a main-job report")
        );
        assert_eq!((r.nodes[1].group, r.groups.len()), (None, 1));
    }

    /// A report is read into the fields the fleet uses, straight from its
    /// text: fields it does not use are skipped unbuilt, so one that would
    /// take many times its size as a JSON tree (here 300,000 empty arrays,
    /// past the memory a document of its size may build) costs nothing and
    /// the node's figures count.
    #[test]
    fn a_huge_field_the_fleet_does_not_use_is_skipped_unbuilt() {
        let empties = format!("[{}[]]", "[],".repeat(300_000));
        let huge = run(100.0, |d| {
            d["topology"]["unused"] = Value::Null;
            d["latency"]["cells"][0]["trace"] = Value::Null;
        })
        .replace(r#""unused":null"#, &format!(r#""unused":{empties}"#))
        .replace(r#""trace":null"#, &format!(r#""trace":{empties}"#));
        // Read whole, the same text is past its budget.
        let whole = crate::model::bounded::from_slice::<Value>(huge.as_bytes()).unwrap_err();
        assert!(whole.to_string().contains("too many values"), "{whole}");
        let r = fleet(&[
            ("h1", huge),
            ("h2", run(101.0, |_| {})),
            ("h3", run(102.0, |_| {})),
        ]);
        assert_eq!(r.nodes[0].status, NodeStatus::Ok, "{:?}", r.nodes[0]);
        assert_eq!(r.nodes[0].values.get("latency 0->0"), Some(&100.0));
        assert_eq!(r.groups.len(), 1, "{:?}", r.groups);
    }

    /// A field of another type than a report of this version writes reads
    /// as not there: the cell without a usable median is left out, a
    /// failed cell without numbers is named with `?`, a unit that is no
    /// string is "none", and the rest of the report still counts.
    #[test]
    fn fields_of_another_type_read_as_missing_not_as_a_broken_report() {
        let r = fleet(&[(
            "t1",
            run(100.0, |d| {
                d["latency"]["cells"] = serde_json::json!([
                    {"cpu_node": 0, "mem_node": 1, "median": "fast"},
                    {"cpu_node": 0, "mem_node": 0, "median": 90.0, "min": "x", "flagged": true, "flags": ["spread"]},
                    7
                ]);
                d["latency"]["failed"] = serde_json::json!([{"cpu_node": -1, "reason": 3}, "x"]);
                d["bandwidth"]["unit"] = serde_json::json!(5);
            }),
        )]);
        let n = &r.nodes[0];
        assert_eq!(n.values.len(), 1, "{:?}", n.values);
        // The flagged cell's evidence does not all read: judged without it.
        assert!(n.untrusted.is_empty(), "{:?}", n.untrusted);
        assert_eq!(
            n.failed_cells,
            ["latency ?->?: failed", "latency ?->?: failed"]
        );
        assert_eq!(n.status, NodeStatus::Failed);
        assert!(
            n.reason
                .as_deref()
                .is_some_and(|r| r.contains("bandwidth unit none is not GB/s")),
            "{:?}",
            n.reason
        );
    }

    /// What a matrix lacks is said in the words of the report's status (its
    /// shortfall) or else of its plan (the phase's coverage and reason); a
    /// matrix its plan covered in full is not named.
    #[test]
    fn what_a_matrix_lacks_is_read_from_the_status_or_else_the_plan() {
        let doc = |edit: &dyn Fn(&mut Value)| -> Value {
            serde_json::from_str(&run(100.0, edit)).unwrap()
        };
        let cases: [(Value, &[&str]); 4] = [
            (
                doc(&|d| {
                    d["status"]["phases"] = serde_json::json!([
                        {"phase": "latency", "shortfall": "interrupted", "reason": "SIGINT at cell 3"},
                        {"phase": "bandwidth", "shortfall": "failed", "reason": "no memory on node 1"}
                    ])
                }),
                &[
                    "latency partial (interrupted)",
                    "bandwidth partial (failed)",
                ],
            ),
            (
                doc(&|d| {
                    d["status"]["phases"] = serde_json::json!([
                        {"phase": "bandwidth", "shortfall": "other", "reason": "pinned elsewhere"}
                    ])
                }),
                &["bandwidth partial (pinned elsewhere)"],
            ),
            (
                doc(&|d| {
                    d["plan"]["phases"] = serde_json::json!([
                        {"phase": "latency", "coverage": "full", "reason": null},
                        {"phase": "bandwidth", "coverage": "subset", "reason": "the budget holds the diagonal"}
                    ])
                }),
                &["bandwidth partial (budget)"],
            ),
            (
                doc(&|d| {
                    d["latency"] = Value::Null;
                    d["plan"]["phases"] = serde_json::json!([
                        {"phase": "latency", "coverage": "skipped", "reason": "one CPU per node"},
                        {"phase": "bandwidth", "coverage": "full", "reason": null}
                    ])
                }),
                &["latency not measured (one CPU per node)"],
            ),
        ];
        for (d, want) in cases {
            let read = RunDoc::deserialize(&d).unwrap();
            assert_eq!(not_measured(&read), want, "{d}");
        }
    }
}
