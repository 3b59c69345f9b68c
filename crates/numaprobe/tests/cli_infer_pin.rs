//! The `infer` and `pin` commands as a user runs them: the built binary on a
//! fixture matrix and on an unpacked sysfs dump; JSON keys, exit statuses,
//! one-line errors.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_numaprobe");

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn matrix(name: &str) -> PathBuf {
    workspace().join("tests/fixtures/matrices").join(name)
}

fn run_stdin(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run numaprobe");
    // numaprobe may refuse its arguments and exit before reading stdin; the
    // write then fails with a broken pipe, which is not the test's business
    // (its exit status and stderr are).
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    child.wait_with_output().unwrap()
}

fn temp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("numaprobe-cli-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use cli::{json, numaprobe as run, usage_error};

/// Unpack one sysfs dump; returns (temp dir guard, root).
fn unpack(name: &str) -> (common::TempDir, PathBuf) {
    let u = common::unpack(name);
    (u.tmp, u.root)
}

#[test]
fn infer_json_on_the_ranger_table() {
    let p = matrix("ranger-4s-opteron-8356-mccalpin.json");
    let v = json(&run(&[
        "infer",
        "--input",
        p.to_str().unwrap(),
        "--format",
        "json",
    ]));
    assert_eq!(v["schema"], "numaprobe/1");
    for key in [
        "levels", "hops", "links", "groups", "findings", "advice", "nodes", "unit",
    ] {
        assert!(v.get(key).is_some(), "{key}");
    }
    let l = &v["levels"][0];
    for key in ["value", "min", "max", "members"] {
        assert!(l.get(key).is_some(), "level.{key}");
    }
    assert_eq!(v["hops"][0][3], 2);
    assert_eq!(v["links"].as_array().unwrap().len(), 5);
    assert!(v["findings"][0].get("text").is_some() && v["findings"][0].get("data").is_some());
}

#[test]
fn infer_table_draws_and_advises_and_writes_pictures() {
    let dir = temp("graph");
    let svg = dir.join("g.svg");
    let png = dir.join("g.png");
    let p = matrix("intel-xeon-8269cy-2s-snc2.json");
    let o = run(&[
        "infer",
        "--input",
        p.to_str().unwrap(),
        "--advice",
        "--graph-svg",
        svg.to_str().unwrap(),
        "--graph-png",
        png.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("Interconnect")
            && out.contains("Advice")
            && out.contains("groups: [0,1] [2,3]")
    );
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
    assert_eq!(&std::fs::read(&png).unwrap()[1..4], b"PNG");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn infer_reads_csv_from_stdin() {
    let o = run_stdin(
        &["infer", "--input", "-", "--unit", "ns", "--format", "json"],
        "node,0,1\n0,80,130\n1,131,81\n",
    );
    let v = json(&o);
    assert_eq!(v["levels"].as_array().unwrap().len(), 2);
    let csv = run(&[
        "infer",
        "--input",
        matrix("mctop-lpdquad.json").to_str().unwrap(),
        "--format",
        "csv",
    ]);
    let csv = String::from_utf8_lossy(&csv.stdout).to_string();
    assert!(
        csv.starts_with(
            "cpu_node,mem_node,value,unit,level,kind,level_value,x_local,hops,distance,stray,flagged\n"
        ),
        "{csv}"
    );
    // Every cell with its own measured value: 16 cells of the 4x4 matrix.
    assert_eq!(csv.lines().count(), 17);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(matrix("mctop-lpdquad.json")).unwrap())
            .unwrap();
    let v01 = doc["matrix"][0][1].as_f64().unwrap();
    let row = csv.lines().find(|l| l.starts_with("0,1,")).unwrap();
    let got: f64 = row.split(',').nth(2).unwrap().parse().unwrap();
    assert!((got - v01).abs() / v01 < 0.005, "{row} vs {v01}");
}

fn mlc_sample(name: &str) -> PathBuf {
    workspace()
        .join("crates/numaprobe-core/tests/data/mlc")
        .join(name)
}

#[test]
fn infer_reads_mlc_text_and_run_json() {
    // MLC's default run: latency by default, the bandwidth table on request.
    let p = mlc_sample("v3.10-default-run.txt");
    let lat = json(&run(&[
        "infer",
        "-i",
        p.to_str().unwrap(),
        "--format",
        "json",
    ]));
    assert_eq!(
        (lat["unit"].as_str(), lat["better"].as_str()),
        (Some("ns"), Some("lower"))
    );
    let bw = json(&run(&[
        "infer",
        "-i",
        p.to_str().unwrap(),
        "--matrix",
        "bandwidth",
        "--format",
        "json",
    ]));
    assert_eq!(
        (bw["unit"].as_str(), bw["better"].as_str()),
        (Some("MB/s"), Some("higher"))
    );
    // "x local" of a bandwidth level is below 1.
    assert!(bw["levels"][1]["ratio_to_local"].as_f64().unwrap() < 1.0);

    // run.json: its latency matrix, or its bandwidth with --matrix.
    let run_json = serde_json::json!({"schema": "numaprobe/1", "topology": {"distances": null},
        "latency": {"kind": "latency", "unit": "ns", "cpu_nodes": [0, 1], "mem_nodes": [0, 1],
            "matrix": [[80.0, 130.0], [131.0, 81.0]], "cells": []},
        "bandwidth": {"kind": "bandwidth", "unit": "GB/s", "cpu_nodes": [0, 1], "mem_nodes": [0, 1],
            "matrix": [[90.0, 35.0], [34.0, 91.0]], "cells": []}});
    let v = json(&run_stdin(
        &["infer", "-i", "-", "--format", "json"],
        &run_json.to_string(),
    ));
    assert_eq!(v["unit"], "ns");
    let v = json(&run_stdin(
        &[
            "infer",
            "-i",
            "-",
            "--matrix",
            "bandwidth",
            "--format",
            "json",
        ],
        &run_json.to_string(),
    ));
    assert_eq!(v["unit"], "GB/s");
    let e = usage_error(&run_stdin(
        &["infer", "-i", "-", "--matrix", "power"],
        &run_json.to_string(),
    ));
    assert!(
        e.contains("power") && e.contains("latency, bandwidth"),
        "{e}"
    );
}

#[test]
fn infer_names_the_file_and_what_it_expected() {
    let dir = temp("notamatrix");
    let f = dir.join("x.txt");
    std::fs::write(
        &f,
        "just some notes
about a machine
",
    )
    .unwrap();
    let e = usage_error(&run(&["infer", "-i", f.to_str().unwrap()]));
    assert!(
        e.contains("x.txt: not a numaprobe matrix, a numaprobe run.json, an MLC --latency_matrix/--bandwidth_matrix output"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn infer_markdown_keeps_what_json_has() {
    let p = matrix("intel-xeon-8269cy-2s-snc2.json");
    let o = run(&["infer", "-i", p.to_str().unwrap(), "--format", "markdown"]);
    assert!(o.status.success());
    let md = String::from_utf8_lossy(&o.stdout);
    for part in [
        "Performance levels",
        "Hops between nodes",
        "Distance between nodes",
        "Groups within groups",
        "Direct links",
        "Findings",
        "Advice",
        "| cpu_node | mem_node | value |",
    ] {
        assert!(md.contains(part), "{part} missing:\n{md}");
    }
}

#[test]
fn infer_bad_input_exits_2_with_one_line() {
    assert!(usage_error(&run(&["infer"])).contains("--input"));
    assert!(usage_error(&run(&["infer", "--input", "/no/such/file"])).contains("/no/such/file"));
    let e = usage_error(&run_stdin(
        &["infer", "--input", "-"],
        r#"{"unit":"ns","matrix":[[1,2],[3]]}"#,
    ));
    assert!(e.contains("row 1"), "{e}");
    let e = usage_error(&run_stdin(
        &["infer", "--input", "-"],
        r#"{"unit":"ns","matrix":[[1,-2],[3,4]]}"#,
    ));
    assert!(e.contains("-2"), "{e}");
    let e = usage_error(&run_stdin(
        &["infer", "--input", "-", "--unit", "furlongs"],
        "1,2\n2,1\n",
    ));
    assert!(e.contains("furlongs") && e.contains("ns"), "{e}");
    usage_error(&run_stdin(&["infer", "--input", "-"], "1,2\n2,1\n")); // no unit
    usage_error(&run_stdin(&["infer", "--input", "-"], ""));
}

#[test]
fn pin_on_a_round_robin_dump() {
    // cpu0 and cpu1 sit on different packages on this machine.
    let (tmp, root) = unpack("40intel64-2g2n4c+pcilocality");
    let r = root.to_str().unwrap();
    let v = json(&run(&[
        "pin",
        "--threads",
        "4",
        "--strategy",
        "scatter",
        "--sysfs-root",
        r,
        "--format",
        "json",
    ]));
    assert_eq!(v["schema"], "numaprobe/1");
    assert_eq!(v["cpus"].as_array().unwrap().len(), 4);
    assert_eq!(v["packages"].as_array().unwrap().len(), 4);
    for key in [
        "nodes",
        "placement",
        "commands",
        "naive_cpus",
        "naive_problems",
        "warnings",
    ] {
        assert!(v.get(key).is_some(), "{key}");
    }
    for key in [
        "taskset",
        "numactl",
        "omp_places",
        "omp_proc_bind",
        "gomp_cpu_affinity",
        "kmp_affinity",
        "srun",
    ] {
        assert!(v["commands"].get(key).is_some(), "commands.{key}");
    }

    // CSV: one table with a `row` column; the commands are rows too, the
    // commas inside them quoted.
    let o = run(&[
        "pin",
        "--threads",
        "4",
        "--strategy",
        "scatter",
        "--sysfs-root",
        r,
        "--format",
        "csv",
    ]);
    assert!(o.status.success());
    let csv = String::from_utf8_lossy(&o.stdout);
    assert!(
        csv.starts_with("row,thread,cpu,package,node,core,smt_rank,key,value\n"),
        "{csv}"
    );
    assert_eq!(csv.lines().filter(|l| l.starts_with("thread,")).count(), 4);
    let places = v["commands"]["omp_places"].as_str().unwrap();
    assert!(
        csv.contains(&format!("command,,,,,,,omp_places,\"{places}\"\n")),
        "{csv}"
    );
    assert!(csv.contains("command,,,,,,,taskset,taskset -c "), "{csv}");

    // Compact keeps 4 threads on one package; CPUs 0-3 would not.
    let o = run(&[
        "pin",
        "--threads",
        "4",
        "--strategy",
        "compact",
        "--sysfs-root",
        r,
    ]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("CPUs 0-3 would spread 4 threads over 4 packages"),
        "{err}"
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("taskset -c")
            && out.contains("KMP_AFFINITY")
            && out.contains("srun --cpu-bind=map_cpu:")
    );

    // Bad values: one line naming the value, exit 2.
    assert!(usage_error(&run(&[
        "pin",
        "--threads",
        "1000",
        "--strategy",
        "scatter",
        "--sysfs-root",
        r
    ]))
    .contains("1000"));
    assert!(usage_error(&run(&[
        "pin",
        "--threads",
        "0",
        "--strategy",
        "scatter",
        "--sysfs-root",
        r
    ]))
    .contains("--threads 0"));
    assert!(usage_error(&run(&[
        "pin",
        "--threads",
        "2",
        "--strategy",
        "scatter",
        "--nodes",
        "x",
        "--sysfs-root",
        r
    ]))
    .contains("\"x\""));
    assert!(usage_error(&run(&[
        "pin",
        "--threads",
        "2",
        "--strategy",
        "scatter",
        "--nodes",
        "9",
        "--sysfs-root",
        r
    ]))
    .contains("node 9"));
    assert_eq!(
        run(&[
            "pin",
            "--threads",
            "2",
            "--strategy",
            "nearest",
            "--sysfs-root",
            r
        ])
        .status
        .code(),
        Some(2)
    );
    drop(tmp);
}

#[test]
fn infer_compares_with_a_machines_slit() {
    // SNC2 on two sockets: nodes 0,2 share a socket, SLIT 10/11/21.
    let (tmp, root) = unpack("memorysidecaches");
    let m = r#"{"unit":"ns","matrix":[[80,140,85,141],[140,80,141,85],[85,141,80,140],[141,85,140,80]]}"#;
    let without = json(&run_stdin(
        &["infer", "--input", "-", "--format", "json"],
        m,
    ));
    let with = json(&run_stdin(
        &[
            "infer",
            "--input",
            "-",
            "--format",
            "json",
            "--sysfs-root",
            root.to_str().unwrap(),
        ],
        m,
    ));
    let kinds = |v: &serde_json::Value| -> Vec<String> {
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["kind"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(!kinds(&without).contains(&"slit-ratio".to_string()));
    assert!(
        kinds(&with).contains(&"slit-ratio".to_string()),
        "{:?}",
        kinds(&with)
    );
    assert_eq!(with["groups"], serde_json::json!([[0, 2], [1, 3]]));
    drop(tmp);
}

/// Every key the infer and pin JSON documents carry is named (in backticks)
/// in the manual's `json-infer-pin` section (doc/json.md): the contract is documented.
#[test]
fn every_infer_and_pin_json_key_is_in_the_manual() {
    let manual = std::fs::read_to_string(workspace().join("doc/json.md")).unwrap();
    let start = manual
        .find("<!-- section: json-infer-pin -->")
        .expect("section marker");
    let rest = &manual[start..];
    let end = rest[1..]
        .find("<!-- section:")
        .map_or(rest.len(), |e| e + 1);
    let section = &rest[..end];
    fn keys(v: &serde_json::Value, out: &mut std::collections::BTreeSet<String>) {
        match v {
            serde_json::Value::Object(o) => {
                for (k, x) in o {
                    // `data` under findings is free-form: the numbers behind a text.
                    out.insert(k.clone());
                    if k != "data" {
                        keys(x, out);
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| keys(x, out)),
            _ => {}
        }
    }
    let mut all = std::collections::BTreeSet::new();
    let inf = json(&run(&[
        "infer",
        "--input",
        matrix("ranger-4s-opteron-8356-mccalpin.json")
            .to_str()
            .unwrap(),
        "--format",
        "json",
    ]));
    keys(&inf, &mut all);
    let (tmp, root) = unpack("16amd64-8n2c");
    let pin = json(&run(&[
        "pin",
        "--threads",
        "2",
        "--strategy",
        "compact",
        "--sysfs-root",
        root.to_str().unwrap(),
        "--format",
        "json",
    ]));
    keys(&pin, &mut all);
    drop(tmp);
    let missing: Vec<&String> = all
        .iter()
        .filter(|k| {
            !section.contains(&format!("`{k}`"))
                && !section.contains(&format!("{{{k},"))
                && !section.contains(&format!(", {k}}}"))
                && !section.contains(&format!(", {k},"))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "not in doc/json.md's json-infer-pin section: {missing:?}"
    );
}
