//! `numaprobe loaded-latency` end to end: bad input is one line and exit 2
//! before any thread starts; a tiny run (chase on one CPU, one load thread,
//! two delays) gives every format with the idle point first and placed
//! buffers; SIGINT keeps the finished points (complete: false, exit 130).
//! Nothing depends on timing.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use cli::{interrupted, json, numaprobe, ok, report_page, usage_error, Sigint};
use common::TempDir;

/// Chase on CPU 0, one load thread on CPU 1, 4 MiB each, short points.
fn tiny(more: &[&str]) -> Vec<String> {
    [
        "loaded-latency",
        "--pairs",
        "0:0",
        "--chase-cpu",
        "0",
        "--load-cpus",
        "1",
        "--size",
        "4MiB",
        "--pages",
        "4k",
        "--time-budget",
        "30ms",
    ]
    .iter()
    .chain(more)
    .map(|s| s.to_string())
    .collect()
}

fn two_cpus() -> bool {
    std::fs::read_to_string("/sys/devices/system/node/node0/cpulist").is_ok_and(|s| s.trim() != "0")
}

#[test]
fn bad_input_is_one_line_naming_the_value_and_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["loaded-latency", "--mix", "read,4:x"],
            "--mix: invalid value '4:x' (valid: read, 3:1, 2:1, 1:1, nt-write",
        ),
        (
            &["loaded-latency", "--delays", "64,2000000"],
            "--delays: invalid value '2000000' (valid: whole numbers from 0 to 1048576",
        ),
        (
            &["loaded-latency", "--delays", "fast"],
            "--delays: invalid value 'fast'",
        ),
        (
            &["loaded-latency", "--pairs", "0-1"],
            "--pairs: invalid value '0-1' (valid: CPU node:memory node pairs",
        ),
        (
            &["loaded-latency", "--pairs", "0:99"],
            "node 99 does not exist",
        ),
        (
            &["loaded-latency", "--chase-cpu", "4096"],
            "chase CPU 4096 is not an allowed CPU of node 0",
        ),
        (&["loaded-latency", "--load-cpus", "x"], "--load-cpus:"),
        (
            &["loaded-latency", "--time-budget", "soon"],
            "--time-budget:",
        ),
        (
            &["loaded-latency", "--vector", "wide"],
            "--vector: invalid value 'wide' (valid: avx512, avx2",
        ),
        (
            &["loaded-latency", "--vector", cli::FOREIGN_WIDTH],
            "is not supported by this CPU (valid here: ",
        ),
    ];
    for (args, want) in cases {
        let o = numaprobe(args);
        let err = usage_error(&o);
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn a_tiny_run_gives_the_curve_in_every_format() {
    if !two_cpus() {
        return; // no CPU for a load thread
    }
    let t = TempDir::new("loaded-chart");
    let chart = t.path().join("c.svg");
    let doc = json(&numaprobe(&tiny(&[
        "--delays",
        "64,0",
        "--format",
        "json",
        "--vector",
        "scalar",
        "--chart",
        chart.to_str().unwrap(),
    ])));
    assert_eq!(doc["schema"], "numaprobe/1");
    assert_eq!(doc["complete"], true);
    assert_eq!(doc["vector"], "scalar");
    let c = &doc["curves"][0];
    assert_eq!(c["mix"], "read");
    assert_eq!(c["chase_cpu"], 0);
    assert_eq!(c["load_cpus"], serde_json::json!([1]));
    assert_eq!(c["placement"], 1.0);
    let pts = c["points"].as_array().unwrap();
    assert_eq!(pts.len(), 3);
    assert!(pts[0]["delay"].is_null(), "idle first: {}", pts[0]);
    assert_eq!(pts[2]["delay"], 0);
    for p in pts {
        let g = p["bandwidth_gbs"].as_f64().unwrap();
        assert!(g.is_finite() && g > 0.0, "{p}");
        assert!(p["latency_ns"].as_f64().unwrap() > 0.0, "{p}");
    }
    assert!(std::fs::read_to_string(&chart).unwrap().starts_with("<svg"));

    let csv = ok(&numaprobe(&tiny(&[
        "--delays", "0", "--format", "csv", "--mix", "1:1",
    ])));
    assert_eq!(csv.lines().count(), 1 + 2, "{csv}");
    assert!(csv.starts_with("cpu_node,mem_node,mix,"), "{csv}");
    assert!(
        csv.lines().nth(1).unwrap().starts_with("0,0,1:1,0,1,idle,"),
        "{csv}"
    );
    let md = ok(&numaprobe(&tiny(&[
        "--delays", "0", "--format", "markdown",
    ])));
    assert!(md.contains("| delay |"), "{md}");
}

#[test]
fn sigint_keeps_the_finished_points_and_exits_130() {
    if !two_cpus() {
        return;
    }
    let t = TempDir::new("loaded-sig");
    let out = t.path().join("l.json");
    let many: Vec<String> = (0..200).map(|d| d.to_string()).collect();
    // The file appears after the first finished point.
    let (doc, stderr) = interrupted(
        &tiny(&["--delays", &many.join(","), "-o", out.to_str().unwrap()]),
        &out,
        Sigint::WhenWritten,
    );
    assert!(!doc["curves"][0]["points"].as_array().unwrap().is_empty());
    assert!(stderr.contains("interrupted by SIGINT"), "{stderr}");
}

#[test]
fn the_report_shows_a_loaded_latency_document() {
    if !two_cpus() {
        return;
    }
    let t = TempDir::new("loaded-report");
    let out = t.path().join("loaded-latency.json");
    ok(&numaprobe(&tiny(&[
        "--delays",
        "0",
        "-o",
        out.to_str().unwrap(),
    ])));
    let page = report_page(t.path());
    let at = page.find("id=\"loaded\"").expect("a loaded section");
    let section = &page[at..];
    let section = &section[..section.find("</section>").unwrap()];
    assert!(section.contains("<svg"), "{section}");
    assert!(section.contains("from loaded-latency.json"), "{section}");
}
