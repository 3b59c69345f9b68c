//! `numaprobe policy` end to end: bad input is one line and exit 2 before
//! anything runs; a short run gives every format with the page distribution
//! of each policy and the top-level rankings; SIGINT keeps the finished
//! samples (complete: false, exit 130). Nothing depends on timing.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use cli::{interrupted, json, numaprobe, ok, usage_error, Sigint};
use common::TempDir;

/// A short run: 8 MiB, one thread, 5 ms samples, `rounds` rounds.
fn short_rounds(rounds: &str, more: &[&str]) -> Vec<String> {
    [
        "policy",
        "--size",
        "8MiB",
        "--rounds",
        rounds,
        "--sample-time",
        "5ms",
        "--threads",
        "1",
    ]
    .iter()
    .chain(more)
    .map(|s| s.to_string())
    .collect()
}

fn short(more: &[&str]) -> Vec<String> {
    short_rounds("1", more)
}

#[test]
fn bad_input_is_one_line_naming_the_value_and_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--policies", "first-touch,bogus"],
            "--policies: invalid value 'bogus' (valid: first-touch, serial",
        ),
        (&["--op", "load"], "--op: invalid value 'load' (valid: read"),
        (
            &["--cases", "both"],
            "--cases: invalid value 'both' (valid: independent, shared)",
        ),
        (&["--node", "99"], "node 99 does not exist"),
        (&["--node", "x"], "--node: invalid value 'x'"),
    ];
    for (more, want) in cases {
        let o = numaprobe(&short(more));
        let err = usage_error(&o);
        assert!(err.contains(want), "{more:?}: {err}");
        assert!(o.stdout.is_empty(), "{more:?}");
    }
    for t in ["0", "100000"] {
        let o = numaprobe(&["policy", "--threads", t]);
        let err = usage_error(&o);
        assert!(
            err.contains(&format!("--threads {t}")) || err.contains("--threads: invalid value"),
            "{err}"
        );
        assert!(
            err.contains("out of range") || err.contains("valid"),
            "{err}"
        );
    }
    let o = numaprobe(&["policy", "--sample-time", "0s"]);
    assert!(usage_error(&o).contains("--sample-time: '0s' is out of range"));
    let o = numaprobe(&short_rounds("0", &[]));
    assert!(usage_error(&o).contains("--rounds: invalid value '0'"));
    let o = numaprobe(&["policy", "--threads-per-node", "100000"]);
    assert!(usage_error(&o).contains("--threads-per-node 100000 is out of range (valid: 1 to"));
    let t = TempDir::new("policy-weights");
    let f = t.path().join("lat.json");
    std::fs::write(&f, r#"{"unit": "ns", "matrix": [[90.0]]}"#).unwrap();
    let o = numaprobe(&short(&["--weights-from", f.to_str().unwrap()]));
    assert!(usage_error(&o).contains("weights need a bandwidth matrix"));
}

#[test]
fn a_short_run_gives_each_policy_its_pages_and_the_rankings() {
    let doc = json(&numaprobe(&short(&["--format", "json", "--op", "copy"])));
    assert_eq!(doc["schema"], "numaprobe/1");
    assert_eq!(doc["command"], "policy");
    assert_eq!(doc["complete"], true);
    let cases = doc["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2);
    for c in cases {
        for p in c["policies"].as_array().unwrap() {
            if !p["skipped"].is_null() {
                assert_eq!(p["policy"], "weighted", "{p}");
                continue;
            }
            let d = &p["placement"];
            let pages = d["pages"].as_u64().unwrap();
            assert_eq!(pages, 2048, "{p}");
            let on: u64 = d["per_node"]
                .as_object()
                .unwrap()
                .values()
                .map(|v| v.as_u64().unwrap())
                .sum();
            assert_eq!(on, pages, "{p}");
            // The raw samples are left out by default: their count and
            // the sketch of their GB/s stay.
            assert_eq!(p["samples"], serde_json::json!([]), "{p}");
            assert_eq!(p["left_out"]["samples"], 1, "{p}");
            assert_eq!(p["left_out"]["gbps"]["n"], 1, "{p}");
        }
    }
    let rankings = doc["rankings"].as_array().unwrap();
    assert_eq!(rankings.len(), 2);
    assert_eq!(rankings[0]["unit"], "GB/s");
    assert_eq!(rankings[0]["better"], "higher");
    assert!(!doc["advice"].as_array().unwrap().is_empty());

    let csv = ok(&numaprobe(&short(&[
        "--format",
        "csv",
        "--policies",
        "first-touch,unpinned",
    ])));
    assert_eq!(csv.lines().count(), 1 + 2 * 2, "{csv}");
    // On one memory node interleave places pages as first touch does: it
    // is folded into it, not measured twice.
    let one_node = doc["cases"][0]["policies"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["policy"] != "interleave");
    let csv = ok(&numaprobe(&short(&[
        "--format",
        "csv",
        "--policies",
        "first-touch,interleave",
    ])));
    assert_eq!(
        csv.lines().count(),
        1 + 2 * if one_node { 1 } else { 2 },
        "{csv}"
    );
    assert!(csv.starts_with("case,policy,rounds,gbps_median"));
    let md = ok(&numaprobe(&short(&[
        "--format", "markdown", "--cases", "shared",
    ])));
    assert!(
        md.contains("| policy |") && md.contains("shared data"),
        "{md}"
    );
    assert!(!md.contains("independent data"), "{md}");
}

#[test]
fn keep_samples_keeps_every_raw_sample_and_the_default_leaves_them_out() {
    let policies = |doc: &serde_json::Value| -> Vec<serde_json::Value> {
        doc["cases"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|c| c["policies"].as_array().unwrap().clone())
            .filter(|p| p["skipped"].is_null())
            .collect()
    };
    let slim = json(&numaprobe(&short_rounds("2", &["--format", "json"])));
    let kept = json(&numaprobe(&short_rounds(
        "2",
        &["--format", "json", "--keep-samples"],
    )));
    assert!(!policies(&slim).is_empty());
    for p in policies(&slim) {
        assert_eq!(p["samples"], serde_json::json!([]), "{p}");
        assert_eq!(p["left_out"]["samples"], 2, "{p}");
        assert!(
            p["left_out"]["gbps"]["quantiles"].as_array().is_some(),
            "{p}"
        );
    }
    for p in policies(&kept) {
        let samples = p["samples"].as_array().unwrap();
        assert_eq!(samples.len(), 2, "{p}");
        assert!(samples.iter().all(|s| s["gbps"].as_f64().is_some()), "{p}");
        assert!(p.get("left_out").is_none(), "{p}");
    }
}

#[test]
fn sigint_keeps_the_finished_samples_and_exits_130() {
    let t = TempDir::new("policy-sig");
    let out = t.path().join("p.json");
    // The file appears after the first finished sample.
    let (doc, stderr) = interrupted(
        &short_rounds("1000", &["-o", out.to_str().unwrap()]),
        &out,
        Sigint::WhenWritten,
    );
    assert_eq!(doc["provenance"]["complete"], false);
    let samples: u64 = doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["policies"].as_array().unwrap())
        .map(|p| p["left_out"]["samples"].as_u64().unwrap_or(0))
        .sum();
    assert!(samples >= 1, "{doc}");
    assert!(stderr.contains("interrupted by SIGINT"), "{stderr}");
}

#[test]
fn weights_derived_from_a_bandwidth_matrix_are_printed_ready_to_apply() {
    let t = TempDir::new("policy-derived");
    let f = t.path().join("bw.json");
    std::fs::write(&f, r#"{"unit": "GB/s", "matrix": [[12.5]]}"#).unwrap();
    let doc = json(&numaprobe(&short(&[
        "--format",
        "json",
        "--policies",
        "first-touch",
        "--cases",
        "independent",
        "--weights-from",
        f.to_str().unwrap(),
    ])));
    let w = &doc["weights"];
    assert_eq!(
        w["derived"],
        serde_json::json!([{"node": 0, "weight": 1}]),
        "{w}"
    );
    assert!(
        w["derived_from"].as_str().unwrap().contains("bw.json"),
        "{w}"
    );
    let lines: Vec<&str> = w["reproduce"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            "echo 1 | sudo tee /sys/kernel/mm/mempolicy/weighted_interleave/node0",
            "numactl --weighted-interleave=0 PROGRAM"
        ]
    );
}
