//! Documents with figures starred for other tasks' memory traffic or with
//! samples set aside, and documents without: which are named, and the
//! sentence after the system check's finding.

use super::*;
use crate::model::matrix::tests::{cell, sample};
use crate::stats::SetAside;
use serde_json::{json, Value};

const TRAFFIC: &str = "memory traffic from other tasks: they kept 3.9 CPUs busy beside it";

fn from_json<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).expect("a valid document")
}

fn timer() -> Value {
    json!({"source": "monotonic_raw", "overhead_ns": 0.0, "resolution_ns": 1.0})
}

fn lost(n: usize) -> SetAside {
    SetAside {
        preempted: n,
        ..SetAside::default()
    }
}

/// A latency matrix of `n` cells (CPU node 0 to memory nodes 0..n), the
/// first `traffic` starred, the last `aside` with samples set aside.
fn latency(n: u32, traffic: u32, aside: u32) -> MatrixResult {
    let mut m = sample();
    m.mem_nodes = (0..n).collect();
    m.cpu_nodes = vec![0];
    m.matrix = vec![vec![None; n as usize]];
    m.cells.clear();
    for i in 0..n {
        let mut c = cell(0, i, 90.0, 1.0);
        if i < traffic {
            c.others_busy_cpus = Some(3.9);
        }
        if i >= n - aside {
            c.set_aside = lost(2);
        }
        m.push(c);
    }
    m
}

fn bandwidth(traffic: bool) -> MatrixResult {
    let mut m = latency(1, u32::from(traffic), 0);
    m.kind = MatrixKind::Bandwidth;
    m
}

fn figure(flags: &[&str], aside: usize) -> Value {
    json!({"median": 80.0, "min": 79.0, "max": 81.0, "cv": 0.01, "samples": [80.0],
        "flags": flags, "flagged": !flags.is_empty(), "set_aside": lost(aside)})
}

fn c2c(hitm: Value, shared: Option<Value>) -> C2cResult {
    from_json(json!({
        "schema": crate::SCHEMA, "unit": "ns", "cpus": [0, 1], "hitm": [], "shared": [],
        "pairs": [{"a": 0, "b": 1, "node_a": 0, "node_b": 0, "domain": "same_l3",
            "hitm": hitm, "shared": shared}],
        "domains": [], "atomics": "x86 lock",
        "stop_rule": serde_json::to_value(crate::stats::StopRule::default()).unwrap(),
        "timer": timer(), "notes": [], "complete": true
    }))
}

fn loaded(points: Vec<Value>) -> LoadedResult {
    from_json(json!({
        "schema": crate::SCHEMA, "timer": timer(), "notes": [], "complete": true,
        "curves": [{"cpu_node": 0, "mem_node": 0, "mix": "read", "chase_cpu": 0,
            "load_cpus": [1], "points": points, "knee": null, "peak_gbs": 20.0,
            "placement": 1.0}]
    }))
}

fn point(delay: Option<u32>, flags: &[&str], aside: usize) -> Value {
    json!({"delay": delay, "bandwidth_gbs": 1.0, "latency_ns": 90.0, "p90_ns": 95.0,
        "p99_ns": 99.0, "flags": flags, "set_aside": lost(aside)})
}

fn peak(system: &[(&str, &[&str])], nodes: &[(u32, bool, &[&str], usize)]) -> PeakResult {
    let system: Vec<Value> = system
        .iter()
        .map(|(mix, flags)| json!({"mix": mix, "threads": 2, "gbs": 30.0, "flags": flags}))
        .collect();
    let nodes: Vec<Value> = nodes
        .iter()
        .map(|(node, concurrent, flags, aside)| {
            json!({"node": node, "mix": "read", "threads": 2, "gbs": 15.0,
                "concurrent": concurrent, "flags": flags, "set_aside": lost(*aside)})
        })
        .collect();
    from_json(json!({
        "schema": crate::SCHEMA, "system": system, "nodes": nodes,
        "memory": {"source": "unknown", "devices": [], "theoretical_gbs": null, "findings": []},
        "achieved_fraction": null, "timer": timer(), "notes": [], "complete": true
    }))
}

fn check(load: f64) -> SystemCheck {
    SystemCheck {
        allowed_cpus: 2,
        load_1m: Some(load),
        other_running: Some(0),
        steal_percent: Some(0.0),
        interval_s: 0.25,
        governors: vec![],
        thp: None,
        warnings: vec![],
    }
}

#[test]
fn starred_figures_are_counted_after_the_load_and_named_in_json() {
    let lat = latency(16, 12, 0);
    let p = peak(&[("read", &[TRAFFIC])], &[]);
    let f = Figures {
        latency: Some(&lat),
        peak: Some(&p),
        ..Figures::default()
    };
    let b = of(&f, Some(&check(8.34))).expect("figures were starred");
    assert_eq!(
        b.statement,
        "system check: load average 8.34 on 2 CPUs: 12 of 16 latency cells and the system peak are starred for memory traffic from other tasks; run.json's busy_figures names each figure; a quieter machine, or a comparison with a quieter run, tells what the load did to them"
    );
    assert_eq!(b.memory_traffic.len(), 13);
    assert_eq!(b.memory_traffic[0], "latency 0->0");
    assert_eq!(b.memory_traffic[11], "latency 0->11");
    assert_eq!(b.memory_traffic[12], "system peak read");
    assert!(b.set_aside.is_empty());
    // The JSON carries both lists and the sentence.
    let v = serde_json::to_value(&b).unwrap();
    assert_eq!(v["memory_traffic"][12], "system peak read");
    assert_eq!(v["set_aside"], json!([]));
}

#[test]
fn a_document_without_such_figures_has_no_line() {
    let lat = latency(4, 0, 0);
    let bw = bandwidth(false);
    let p = peak(&[("read", &["unstable: CV 12 %"])], &[(0, true, &[], 0)]);
    let l = loaded(vec![point(None, &[], 0)]);
    let c = c2c(figure(&[], 0), None);
    let f = Figures {
        latency: Some(&lat),
        bandwidth: Some(&bw),
        c2c: Some(&c),
        loaded: Some(&l),
        peak: Some(&p),
        sweep: None,
    };
    assert_eq!(of(&f, Some(&check(8.34))), None);
    assert_eq!(of(&f, None), None);
    assert_eq!(of(&Figures::default(), Some(&check(0.1))), None);
}

#[test]
fn set_aside_samples_are_named_and_a_quiet_start_is_said() {
    let lat = latency(4, 0, 1);
    let bw = bandwidth(true);
    let f = Figures {
        latency: Some(&lat),
        bandwidth: Some(&bw),
        ..Figures::default()
    };
    let b = of(&f, Some(&check(0.4))).unwrap();
    assert_eq!(
        b.statement,
        "system check: quiet when the run began (load 0.40 on 2 CPUs); during the run the bandwidth cell is starred for memory traffic from other tasks; 1 of 4 latency cells had samples set aside, their measuring thread having lost its CPU (preempted or off it), and are made of the samples that held it; run.json's busy_figures names each figure; a quieter machine, or a comparison with a quieter run, tells what the load did to them"
    );
    assert_eq!(b.memory_traffic, vec!["bandwidth 0->0"]);
    assert_eq!(b.set_aside, vec!["latency 0->3"]);
    // Without a system check, what happened while the run measured.
    let b = of(&f, None).unwrap();
    assert!(
        b.statement
            .starts_with("while the run measured: the bandwidth cell is starred"),
        "{}",
        b.statement
    );
    // One figure set aside alone: "is".
    let one = latency(1, 0, 1);
    let b = of(
        &Figures {
            latency: Some(&one),
            ..Figures::default()
        },
        Some(&check(8.0)),
    )
    .unwrap();
    assert!(
        b.statement.starts_with(
            "system check: load average 8.00 on 2 CPUs: the latency cell had samples set aside, their measuring thread having lost its CPU (preempted or off it), and is made of"
        ),
        "{}",
        b.statement
    );
}

#[test]
fn every_family_of_figure_is_named() {
    let c = c2c(figure(&[TRAFFIC], 0), Some(figure(&[], 3)));
    let l = loaded(vec![
        point(None, &[], 0),
        point(Some(100), &[TRAFFIC], 0),
        point(Some(0), &[], 1),
    ]);
    let p = peak(
        &[("read", &[]), ("1:1", &[TRAFFIC])],
        &[(0, false, &[], 2), (0, true, &[TRAFFIC], 0)],
    );
    let mut s = crate::render::sweep::tests::sample();
    let n = s.points.len();
    s.points[0].flags = vec![TRAFFIC.into()];
    s.points[1].set_aside = lost(1);
    let f = Figures {
        c2c: Some(&c),
        loaded: Some(&l),
        peak: Some(&p),
        sweep: Some(&s),
        ..Figures::default()
    };
    let b = of(&f, Some(&check(3.0))).unwrap();
    let first = format!(
        "cache sweep {} {}",
        crate::units::format_size(s.points[0].size_bytes),
        s.points[0].pages
    );
    assert_eq!(
        b.memory_traffic,
        vec![
            "c2c CPUs 0-1 hitm".to_string(),
            "loaded latency 0->0 read delay 100".into(),
            "system peak 1:1".into(),
            "node 0 peak read with every node".into(),
            first,
        ]
    );
    let second = format!(
        "cache sweep {} {}",
        crate::units::format_size(s.points[1].size_bytes),
        s.points[1].pages
    );
    assert_eq!(
        b.set_aside,
        vec![
            "c2c CPUs 0-1 shared".to_string(),
            "loaded latency 0->0 read delay 0".into(),
            "node 0 peak read alone".into(),
            second,
        ]
    );
    assert!(
        b.statement.starts_with(&format!(
            "system check: load average 3.00 on 2 CPUs: 1 of 2 c2c figures, 1 of 3 loaded-latency points, 1 of 2 system peak figures, 1 of 2 node peak figures and 1 of {n} cache sweep points are starred for memory traffic from other tasks; 1 of 2 c2c figures, 1 of 3 loaded-latency points, 1 of 2 node peak figures and 1 of {n} cache sweep points had samples set aside"
        )),
        "{}",
        b.statement
    );
}
