//! End-to-end tests of `numaprobe study` on this machine: a tiny same-node
//! run through the binary (JSON contract keys, --output, charts), the one-line
//! note of presets a small machine cannot host, `--plan`, and the exit code
//! and single-line message of every kind of bad input. No test asserts a
//! timing: the machine is shared and the figures are whatever they are.

mod cli;

use cli::{numaprobe, with};

const TINY: &[&str] = &["--size", "1MiB", "--passes", "1", "--repeats", "2"];

/// A path in a folder of its own (tests run in parallel; none may remove
/// another's files).
fn temp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("numaprobe-cli-study-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn remove(paths: &[&std::path::Path]) {
    for p in paths {
        if let Some(d) = p.parent() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// Exit 2 with exactly one line on stderr containing every `needles`.
fn usage_error(args: &[&str], needles: &[&str]) -> String {
    let out = numaprobe(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: {err} lacks {n}");
    }
    err
}

fn cpus_on_node0() -> usize {
    std::fs::read_to_string("/sys/devices/system/node/node0/cpulist")
        .map(|s| {
            s.trim()
                .split(',')
                .map(|r| match r.split_once('-') {
                    Some((a, b)) => {
                        b.parse::<usize>().unwrap_or(0) - a.parse::<usize>().unwrap_or(0) + 1
                    }
                    None => 1,
                })
                .sum()
        })
        .unwrap_or(1)
}

#[test]
fn keep_samples_keeps_every_repetition() {
    if cpus_on_node0() < 2 {
        return; // the preset needs two cores on one node
    }
    let args = with(
        &[
            "study",
            "--preset",
            "same-node",
            "--background",
            "none",
            "--format",
            "json",
            "--keep-samples",
        ],
        TINY,
    );
    let out = numaprobe(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cases: Vec<&serde_json::Value> = v["experiments"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| e["cases"].as_array().unwrap())
        .collect();
    assert!(!cases.is_empty(), "{v}");
    for c in cases {
        let samples = c["samples"].as_array().unwrap();
        assert_eq!(samples.len(), 2, "{c}");
        for s in samples {
            assert_eq!(s["threads_s"].as_array().unwrap().len(), 2, "{s}");
            assert!(s["total_s"].as_f64().unwrap() > 0.0, "{s}");
        }
        assert!(c.get("sketch").is_none(), "{c}");
    }
}

#[test]
fn same_node_runs_end_to_end_with_json_output_and_charts() {
    if cpus_on_node0() < 2 {
        return; // the preset needs two cores on one node
    }
    let json = temp("same-node.json");
    let svg = temp("same-node.svg");
    let png = temp("same-node.png");
    let dir = temp("charts");
    let args = with(
        &[
            "study",
            "--preset",
            "same-node",
            "--background",
            "none",
            "--format",
            "json",
            "--output",
            json.to_str().unwrap(),
            "--chart-svg",
            svg.to_str().unwrap(),
            "--chart-png",
            png.to_str().unwrap(),
            "--chart",
            dir.to_str().unwrap(),
        ],
        TINY,
    );
    let out = numaprobe(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["schema"], "numaprobe/1");
    assert_eq!(v["command"], "study");
    assert_eq!(v["preset"], "same-node");
    assert_eq!(v["complete"], true);
    assert_eq!(v["parameters"]["size_bytes"], 1 << 20);
    assert_eq!(v["parameters"]["stride_bytes"], 64);
    assert_eq!(v["background_definitions"]["levels"][1]["duty_percent"], 25);
    let exps = v["experiments"].as_array().unwrap();
    assert_eq!(exps.len(), 2, "idle: rr (figure 10) and ww (figure 11)");
    for e in exps {
        assert_eq!(e["background"]["level"], "none");
        let c = &e["cases"][0];
        assert_eq!(c["label"].as_str().unwrap().split(' ').count(), 2);
        assert!(c["total"]["median"].as_f64().unwrap() > 0.0);
        assert_eq!(c["percent"].as_f64().unwrap(), 100.0);
        // The raw samples are left out by default, their sketch kept.
        assert_eq!(c["samples"], serde_json::json!([]), "{c}");
        assert_eq!(c["sketch"]["n"], 2, "{c}");
        assert_eq!(c["sketch"]["quantiles"].as_array().unwrap().len(), 2, "{c}");
        for t in c["threads"].as_array().unwrap() {
            assert_eq!(t["cpu_verified"], true);
            assert!(t["pages_on_node"].as_f64().unwrap() >= 0.99);
        }
    }
    let p = std::fs::read(&png).unwrap();
    assert_eq!(&p[..8], b"\x89PNG\r\n\x1a\n");
    let s = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&s).expect("the SVG is well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    for id in ["same-node-rr-idle", "same-node-ww-idle"] {
        assert!(
            std::fs::metadata(dir.join(format!("{id}.svg")))
                .unwrap()
                .len()
                > 0
        );
        assert!(
            std::fs::metadata(dir.join(format!("{id}.png")))
                .unwrap()
                .len()
                > 0
        );
    }
    remove(&[&json, &svg, &png, &dir]);
}

/// Without --size the arrays are sized through the footprint limit, which
/// the document's provenance states; an explicit --size is kept as given.
#[test]
fn default_arrays_are_sized_within_the_footprint_limit_it_states() {
    let args = [
        "study",
        "0.0.w.0",
        "--passes",
        "1",
        "--repeats",
        "1",
        "--format",
        "json",
    ];
    let out = numaprobe(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let fp = &v["provenance"]["footprint"];
    let limit = fp["limit_bytes"]
        .as_u64()
        .expect("provenance.footprint.limit_bytes");
    assert!(fp["limited_by"].is_string(), "{fp}");
    let size = v["parameters"]["size_bytes"].as_u64().unwrap();
    // One array alive at once, in whole 2 MiB steps, within the limit
    // (never below one step).
    assert_eq!(size % (2 << 20), 0, "{size}");
    assert!(size <= limit.max(2 << 20), "{size} > {limit}");
    let given = numaprobe(&with(&args, &["--size", "3MiB"]));
    assert!(
        given.status.success(),
        "{}",
        String::from_utf8_lossy(&given.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&given.stdout).unwrap();
    assert_eq!(v["parameters"]["size_bytes"], 3 << 20);
    assert!(v["provenance"]["footprint"]["limit_bytes"].is_u64());
}

#[test]
fn custom_labels_print_a_table_with_the_baseline() {
    if cpus_on_node0() < 2 {
        return;
    }
    let out = numaprobe(&with(
        &["study", "0.0.w.0", "0.1.w.0", "/", "0.0.r.0", "0.1.r.0"],
        TINY,
    ));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("0.0.w.0 0.1.w.0"), "{text}");
    assert!(text.contains("100% (base)"), "{text}");
    assert!(text.contains("% of baseline"), "{text}");
    let csv = numaprobe(&with(&["study", "0.0.w.0", "--format", "csv"], TINY));
    assert!(csv.status.success());
    let csv = String::from_utf8_lossy(&csv.stdout);
    assert!(
        csv.starts_with("row,experiment,figure,mix,background"),
        "{csv}"
    );
    // One case of one thread: its case row, its thread row, one row per sample.
    let kinds: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(kinds.iter().filter(|k| **k == "case").count(), 1, "{csv}");
    assert_eq!(kinds.iter().filter(|k| **k == "thread").count(), 1, "{csv}");
    assert!(kinds.contains(&"sample"), "{csv}");
    let width = csv.lines().next().unwrap().split(',').count();
    assert!(csv.lines().all(|l| l.split(',').count() == width), "{csv}");
}

#[test]
fn multi_node_presets_say_so_in_one_line_on_a_one_node_machine() {
    let nodes = std::fs::read_dir("/sys/devices/system/node")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().starts_with("node"))
                .count()
        })
        .unwrap_or(1);
    if nodes != 1 {
        return;
    }
    let out = numaprobe(&["study", "--preset", "crossfire", "--plan"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let notes: Vec<&str> = text.lines().filter(|l| l.starts_with("note:")).collect();
    assert_eq!(notes.len(), 1, "{text}");
    assert!(notes[0].contains("crossfire"), "{text}");
    // Measured with JSON on stdout: the note goes to stderr, once.
    let out = numaprobe(&with(
        &["study", "--preset", "hops", "--format", "json"],
        TINY,
    ));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.lines().filter(|l| l.contains("note:")).count(),
        1,
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["notes"].as_array().unwrap().len(), 1);
    assert_eq!(v["experiments"].as_array().unwrap().len(), 2);
}

#[test]
fn hop_counts_can_come_from_a_measured_latency_matrix() {
    let lat = temp("latency.json");
    let out = numaprobe(&[
        "latency",
        "--size",
        "4MiB",
        "--time-budget",
        "20ms",
        "--pages",
        "4k",
        "--format",
        "json",
        "--output",
        lat.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = numaprobe(&[
        "study",
        "--preset",
        "hops",
        "--plan",
        "--format",
        "json",
        "--distances",
        lat.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["command"], "study-plan");
    assert_eq!(v["plan"]["hop_map"]["source"], "measured");
    assert!(!v["plan"]["experiments"].as_array().unwrap().is_empty());
    // A file that is not a latency document is bad input.
    std::fs::write(&lat, "{}").unwrap();
    usage_error(
        &["study", "0.0.w.0", "--distances", lat.to_str().unwrap()],
        &[
            "--distances",
            "not a latency matrix",
            "numaprobe latency --format json",
        ],
    );
    remove(&[&lat]);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    usage_error(&["study", "0.0.x.1"], &["access `x`", "r (read-only)"]);
    usage_error(&["study", "0.0.w"], &["node.core.access.memnode"]);
    usage_error(&["study", "7.0.w.0"], &["node 7 has no allowed CPUs"]);
    usage_error(&["study", "0.99.w.0"], &["allowed cores"]);
    usage_error(&["study", "0.0.w.9"], &["memory node 9"]);
    usage_error(&["study", "0.0.w.0", "0.0.r.0"], &["same core"]);
    usage_error(&["study", "0.0.w.0", "/"], &["`/` must separate"]);
    usage_error(&["study"], &["--preset", "labels"]);
    usage_error(
        &["study", "--preset", "fast"],
        &["'fast'", "hops, crossfire, same-node, myths"],
    );
    usage_error(
        &["study", "0.0.w.0", "--background", "extreme"],
        &["'extreme'", "none, low, medium, high, very-high"],
    );
    usage_error(
        &["study", "0.0.w.0", "--subscription", "over"],
        &["'over'", "under, high, full"],
    );
    usage_error(&["study", "0.0.w.0", "--mix", "some"], &["fixed, all"]);
    usage_error(
        &["study", "0.0.w.0", "--size", "lots"],
        &["--size", "'lots'"],
    );
    usage_error(&["study", "0.0.w.0", "--passes", "0"], &["--passes", "'0'"]);
    usage_error(
        &["study", "--preset", "hops", "0.0.w.0"],
        &["either --preset or thread labels"],
    );
    usage_error(
        &["study", "0.0.w.0", "--distances", "/nonexistent/x.json"],
        &[
            "--distances /nonexistent/x.json",
            "no such file",
            "numaprobe latency --format json",
        ],
    );
    // A study measures this machine: a dump is for --plan only.
    usage_error(
        &["study", "0.0.w.0", "--sysfs-root", "/tmp"],
        &["--sysfs-root /tmp", "only with --plan"],
    );
}

/// Every bad `--distances` file is one line naming the file and what was
/// expected, in numaprobe's words (no bare parser message).
#[test]
fn bad_distance_files_name_the_file_and_what_was_expected() {
    let dir = std::env::temp_dir().join(format!("numaprobe-dist-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases: [(&str, &[u8], &str); 6] = [
        ("empty.json", b"", "the file is empty"),
        (
            "syntax.json",
            b"{\"unit\": \"ns\",",
            "not valid JSON (line 1",
        ),
        (
            "object.json",
            b"{}",
            "not a latency matrix (missing field `unit`)",
        ),
        ("binary.json", &[0xff, 0xfe, 0x00, 0x41], "not UTF-8 text"),
        (
            "shape.json",
            b"{\"unit\":\"ns\",\"cpu_nodes\":[0,1],\"mem_nodes\":[0,1],\"matrix\":[[1,2]]}",
            "1 row(s) for 2 CPU node(s)",
        ),
        (
            "bw.json",
            b"{\"unit\":\"GB/s\",\"cpu_nodes\":[0],\"mem_nodes\":[0],\"matrix\":[[9.5]]}",
            "a matrix in GB/s",
        ),
    ];
    for (name, bytes, why) in cases {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        let p = path.to_str().unwrap();
        let msg = usage_error(
            &["study", "--preset", "hops", "--plan", "--distances", p],
            &[&format!("--distances {p}: "), why],
        );
        assert!(
            !msg.contains("Error(") && !msg.contains("expected value"),
            "{msg}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_chart_past_the_pixel_budget_is_refused_before_measuring() {
    // 451 one-thread bars in one experiment: a 54280x590 pixel chart, past
    // the 32 million pixels of one picture (450 fit).
    let mut cases = vec!["study"];
    for i in 0..451 {
        if i > 0 {
            cases.push("/");
        }
        cases.push("0.0.w.0");
    }
    let json = temp("past-budget.json");
    let png = temp("past-budget.png");
    let dir = temp("past-budget-charts");
    let json_s = json.to_str().unwrap();
    for chart in [
        ["--chart-png", png.to_str().unwrap()],
        ["--chart-svg", png.to_str().unwrap()],
        ["--chart", dir.to_str().unwrap()],
    ] {
        let mut args = cases.clone();
        args.extend(["--output", json_s]);
        args.extend(chart);
        args.extend(TINY);
        let err = usage_error(
            &args,
            &[
                chart[0],
                "54280x590 pixel chart (32025200 pixels)",
                "32000000",
            ],
        );
        // Refused before the first case: --output is written after each.
        assert!(!json.exists(), "{err}");
        assert!(!png.exists() && !dir.exists(), "{err}");
    }
    remove(&[&json, &png, &dir]);
}
