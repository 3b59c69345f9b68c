//! The inputs people have, read by content: Intel MLC's text output (several
//! versions' layouts, samples written here in tests/data/mlc), numaprobe's
//! run.json and latency/bandwidth JSON, and one clear error for the rest.

use numaprobe_core::analysis::{
    analyse_with_advice, parse, parse_with, MatrixError, ParseOptions, Select, Unit,
};
use std::path::PathBuf;

fn mlc(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/mlc")
        .join(name);
    std::fs::read_to_string(p).unwrap()
}

fn select(text: &str, s: Select) -> Result<numaprobe_core::analysis::Matrix, MatrixError> {
    parse_with(
        text,
        ParseOptions {
            unit: None,
            select: Some(s),
        },
    )
}

#[test]
fn mlc_latency_layouts_of_several_versions() {
    // 3.11: sequential then random access; the sequential table is taken.
    let m = parse(&mlc("v3.11-latency-matrix-snc2.txt"), None).unwrap();
    assert_eq!(m.unit, Unit::Ns);
    assert_eq!(m.row_nodes, vec![0, 1, 2, 3]);
    assert_eq!(m.get(0, 1), Some(92.1));
    assert_eq!(m.get(3, 0), Some(154.7));
    assert!(m.label.as_deref().unwrap().contains("v3.11b"));
    let inf = analyse_with_advice(&m);
    assert_eq!(inf.groups, vec![vec![0, 1], vec![2, 3]]);

    // 3.6 and older: `Memory node` over `Socket 0 1`.
    let m = parse(&mlc("v3.6-latency-matrix-socket.txt"), None).unwrap();
    assert_eq!(m.col_nodes, vec![0, 1]);
    assert_eq!(m.get(1, 0), Some(126.8));

    // A CPU-less (CXL) memory node: a column without a row.
    let m = parse(&mlc("v3.11-latency-matrix-cxl.txt"), None).unwrap();
    assert_eq!(
        (m.row_nodes.clone(), m.col_nodes.clone()),
        (vec![0, 1], vec![0, 1, 2])
    );
    assert_eq!(m.get(1, 2), Some(371.5));
    assert_eq!(analyse_with_advice(&m).cpuless_nodes, vec![2]);
}

#[test]
fn mlc_bandwidth_and_default_run() {
    let m = parse(&mlc("v3.9-bandwidth-matrix.txt"), None).unwrap();
    assert_eq!(m.unit, Unit::MBps);
    assert_eq!(m.get(0, 0), Some(101844.7));
    assert!(select(&mlc("v3.9-bandwidth-matrix.txt"), Select::Latency)
        .unwrap_err()
        .to_string()
        .contains("no latency matrix (it has: bandwidth)"));

    // A default run: latency first, bandwidth on request; the peak
    // injection, loaded latency and cache-to-cache parts are not matrices.
    let text = mlc("v3.10-default-run.txt");
    let lat = parse(&text, None).unwrap();
    assert_eq!((lat.unit, lat.get(1, 0)), (Unit::Ns, Some(140.9)));
    let bw = select(&text, Select::Bandwidth).unwrap();
    assert_eq!((bw.unit, bw.get(0, 1)), (Unit::MBps, Some(38541.0)));
    assert_eq!(bw.rows().len(), 2);
}

#[test]
fn mlc_errors_name_the_line() {
    let good = mlc("v3.9-bandwidth-matrix.txt");
    let e = parse(&good.replace("34106.3", "34x06.3"), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 12") && e.contains("34x06.3"), "{e}");
    let e = parse(&good.replace("\t34106.3", ""), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 12") && e.contains("node 1"), "{e}");
    let e = parse(
        "Intel(R) Memory Latency Checker - v3.9\nMeasuring idle latencies (in ns)...\n",
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("line 2") && e.contains("no node table"), "{e}");
}

/// The table as people paste it: the shell command above it, sometimes
/// MLC's banner, sometimes only the header and rows.
#[test]
fn mlc_pasted_with_its_command_line() {
    let bw = mlc("v3.9-bandwidth-matrix.txt");
    let table = "\t\tNuma node\nNuma node\t     0\t     1\t\n       0\t101844.7\t33917.2\t\n       1\t34106.3\t102311.9\t\n";
    for text in [
        format!("> sudo ./mlc --bandwidth_matrix\n\n{bw}"),
        format!("user@host:~/mlc/Linux$ sudo ./mlc --bandwidth_matrix\n{table}"),
        format!("$ mlc --bandwidth_matrix\n\n\n{table}\n$ "),
        format!("# ./mlc\nBandwidths are in MB/sec (1 MB/sec = 1,000,000 Bytes/sec)\n{table}"),
    ] {
        let m = parse(&text, None).unwrap_or_else(|e| panic!("{e}: {text}"));
        assert_eq!((m.unit, m.get(1, 0)), (Unit::MBps, Some(34106.3)), "{text}");
    }

    // The sequential-access table without its `Measuring` line, then the
    // random-access one with it: the first is still the one read.
    let lat = mlc("v3.11-latency-matrix-snc2.txt");
    let cut = lat
        .lines()
        .skip_while(|l| !l.contains("Numa node"))
        .collect::<Vec<_>>()
        .join("\n");
    let m = parse(&format!("$ ./mlc --latency_matrix\n{cut}"), None).unwrap();
    assert_eq!((m.unit, m.get(0, 1)), (Unit::Ns, Some(92.1)));

    // Older versions' `Memory node` / `Socket` header, pasted bare.
    let old = mlc("v3.6-latency-matrix-socket.txt");
    let bare = old.lines().skip(5).collect::<Vec<_>>().join("\n");
    let m = parse(&format!("> ./mlc --latency_matrix\n{bare}"), None).unwrap();
    assert_eq!(m.get(1, 0), Some(126.8));

    // Nothing says what the bare table holds: the error says how to tell.
    let e = parse(&format!("$ ./mlc\n{table}"), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 3") && e.contains("--matrix"), "{e}");
    let m = select(&format!("$ ./mlc\n{table}"), Select::Bandwidth).unwrap();
    assert_eq!(m.unit, Unit::MBps);
    let m = parse(&format!("$ ./mlc\n{table}"), Some(Unit::GBps)).unwrap();
    assert_eq!((m.unit, m.get(0, 0)), (Unit::GBps, Some(101844.7)));
}

fn result(kind: &str, unit: &str, m: serde_json::Value) -> serde_json::Value {
    serde_json::json!({"schema": "numaprobe/1", "kind": kind, "unit": unit, "cpu_nodes": [0, 1],
        "mem_nodes": [0, 1], "matrix": m, "cells": [], "complete": true, "notes": []})
}

#[test]
fn numaprobe_run_json_and_results() {
    let lat = result(
        "latency",
        "ns",
        serde_json::json!([[80.0, 130.0], [131.0, 81.0]]),
    );
    let bw = result(
        "bandwidth",
        "GB/s",
        serde_json::json!([[90.0, 35.0], [34.0, 91.0]]),
    );
    let run = serde_json::json!({"schema": "numaprobe/1",
        "topology": {"distances": {"node_ids": [0, 1], "matrix": [[10, 21], [21, 10]]}},
        "latency": lat, "bandwidth": bw, "inference": null, "notes": []});
    let text = run.to_string();
    let m = parse(&text, None).unwrap();
    assert_eq!((m.unit, m.get(0, 1)), (Unit::Ns, Some(130.0)));
    // The machine's SLIT comes along for the comparison.
    assert_eq!(m.slit.as_ref().unwrap().get(0, 1), Some(21.0));
    let m = select(&text, Select::Bandwidth).unwrap();
    assert_eq!((m.unit, m.get(1, 0)), (Unit::GBps, Some(34.0)));

    // No latency measured: the bandwidth is what there is; asking for the
    // missing one is an error that says so.
    let mut only_bw = run.clone();
    only_bw["latency"] = serde_json::Value::Null;
    assert_eq!(parse(&only_bw.to_string(), None).unwrap().unit, Unit::GBps);
    let e = select(&only_bw.to_string(), Select::Latency)
        .unwrap_err()
        .to_string();
    assert!(e.contains("no latency matrix"), "{e}");

    // latency.json itself, and a selector that contradicts its kind.
    assert_eq!(parse(&lat.to_string(), None).unwrap().get(1, 1), Some(81.0));
    let e = select(&lat.to_string(), Select::Bandwidth)
        .unwrap_err()
        .to_string();
    assert!(e.contains("latency matrix, not a bandwidth"), "{e}");
}

#[test]
fn anything_else_is_one_error_saying_what_was_expected() {
    for text in [
        "hello world\nthis is prose\n",
        "<html><body>no table</body></html>",
        r#"{"name": "x", "version": 3}"#,
        "[1, 2, 3]",
    ] {
        let e = parse(text, None).unwrap_err();
        assert_eq!(e, MatrixError::Unrecognised, "{text}");
        let s = e.to_string();
        assert!(
            s.contains("run.json") && s.contains("MLC") && s.contains("{matrix:"),
            "{s}"
        );
        assert_eq!(s.lines().count(), 1);
    }
    // A selector makes no sense for a CSV file.
    assert!(select("# unit: ns\n1,2\n2,1\n", Select::Bandwidth).is_err());
}

/// An MLC latency table of `rows` x `cols` nodes: groups of 8, local 90 ns,
/// 130 ns inside a group, 210 ns across.
fn mlc_grouped(rows: u32, cols: u32) -> String {
    let mut s = String::from("Intel(R) Memory Latency Checker - v3.11\nMeasuring idle latencies for random access (in ns)...\n                Numa node\nNuma node");
    for c in 0..cols {
        s.push_str(&format!("{c:>8}"));
    }
    s.push('\n');
    for r in 0..rows {
        s.push_str(&format!("{r:>9}"));
        for c in 0..cols {
            let v = if r == c {
                90.0
            } else if r / 8 == c / 8 {
                130.0
            } else {
                210.0
            };
            s.push_str(&format!("{v:>8.1}"));
        }
        s.push('\n');
    }
    s
}

/// A 200-node machine of 25 groups of 8 reads as it is built: local, the
/// in-group level and the across-group level, every pair one link apart,
/// the groups as the inner tier; the terminal's drawing says it has too
/// many nodes to draw instead of a 200 x 200 grid.
#[test]
fn a_200_node_matrix_infers_its_groups_and_folds_its_drawing() {
    let m = parse(&mlc_grouped(200, 200), None).unwrap();
    let inf = analyse_with_advice(&m);
    let levels: Vec<(&str, &str, usize)> = inf
        .levels
        .iter()
        .map(|l| (l.name.as_str(), l.kind.as_str(), l.members.len()))
        .collect();
    assert_eq!(
        levels,
        [
            ("L", "local", 200),
            ("A", "remote", 200 * 7),
            ("B", "remote", 200 * 192)
        ]
    );
    assert_eq!(inf.groups.len(), 25);
    assert!(inf.groups.iter().all(|g| g.len() == 8));
    assert_eq!(inf.groups[1], (8..16).collect::<Vec<u32>>());
    assert_eq!(inf.links.len(), 200 * 199 / 2);
    assert!(inf.hops.rows().iter().enumerate().all(|(i, row)| row
        .iter()
        .enumerate()
        .all(|(j, h)| *h == Some(u32::from(i != j)))));
    assert_eq!(inf.hierarchy.len(), 2);
    assert_eq!(inf.distance.get(0, 7), Some(1));
    assert_eq!(inf.distance.get(0, 8), Some(2));
    let text = inf.to_text(false);
    assert!(
        text.contains("too many nodes to draw: 200 nodes"),
        "{}",
        &text[..2000]
    );
    assert!(text.lines().count() < 100, "{}", text.lines().count());
}

/// One row of 8000 columns names 8000 nodes: refused with a one-line
/// reason before any node-by-node table is built.
#[test]
fn a_matrix_naming_thousands_of_nodes_is_refused_with_its_count() {
    let e = parse(&mlc_grouped(1, 8000), None).unwrap_err().to_string();
    assert!(
        e.contains("the matrix names 8000 nodes (1 rows, 8000 columns)"),
        "{e}"
    );
    assert!(e.contains("at most 2048"), "{e}");
    assert!(!e.contains('\n'));
    // A wide input within the bound is analysed.
    let m = parse(&mlc_grouped(1, 300), None).unwrap();
    let inf = analyse_with_advice(&m);
    assert_eq!(inf.nodes.len(), 300);
    assert!(inf
        .to_text(false)
        .contains("too many nodes to draw: 300 nodes"));
}
