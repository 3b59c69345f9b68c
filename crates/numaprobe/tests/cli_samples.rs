//! The main job's documents and those of `latency`, `bandwidth`, `c2c` and
//! `c2c --locks` leave the raw samples out by default (each figure keeps
//! its count and quantiles) and keep them with
//! `--keep-samples`; diff reads either form, and the two against each
//! other. Figures are never asserted, only the documents' shape.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use cli::{main_job_in, numaprobe_in as numaprobe, ok};
use common::TempDir;
use serde_json::Value;

fn read(p: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn figures(doc: &Value) -> Vec<&Value> {
    let mut v: Vec<&Value> = doc["cells"].as_array().into_iter().flatten().collect();
    v.extend(doc["runs"].as_array().into_iter().flatten());
    for p in doc["pairs"].as_array().into_iter().flatten() {
        v.extend(
            [&p["hitm"], &p["shared"]]
                .into_iter()
                .filter(|f| f.is_object()),
        );
    }
    v
}

/// Each figure of `doc`: its samples when `keep`, else an empty list and
/// their sketch (count and sorted quantiles); how many figures there were.
fn check_figures(doc: &Value, keep: bool) -> usize {
    let mut seen = 0;
    for f in figures(doc) {
        seen += 1;
        let samples = f["samples"].as_array().unwrap();
        if keep {
            assert!(!samples.is_empty() && f.get("sketch").is_none(), "{f}");
        } else {
            // The field stays (empty) for readers that expect it.
            assert!(samples.is_empty(), "{f}");
            let n = f["sketch"]["n"].as_u64().unwrap() as usize;
            let q = f["sketch"]["quantiles"].as_array().unwrap();
            assert!(n >= 1 && !q.is_empty() && q.len() <= n.min(17), "{f}");
            let q: Vec<f64> = q.iter().map(|v| v.as_f64().unwrap()).collect();
            assert!(q.windows(2).all(|w| w[0] <= w[1]), "{q:?}");
        }
    }
    seen
}

#[test]
fn standalone_documents_leave_samples_out_by_default_and_keep_them_when_asked() {
    let t = TempDir::new("samples-standalone");
    // One small cell: 8 MiB of 4 KiB pages, 30 ms.
    let cell = "--size 8MiB --time-budget 30ms --pages 4k";
    let commands = [
        format!("latency {cell}"),
        format!("bandwidth {cell} --threads 1"),
        "c2c --time-budget 40ms".to_string(),
        "c2c --locks --locks-time 10ms --threads 1 --ops atomic_add --sharing shared".to_string(),
    ];
    for (i, command) in commands.iter().enumerate() {
        for keep in [false, true] {
            let file = format!("doc{i}-{keep}.json");
            let mut args: Vec<&str> = command.split(' ').collect();
            args.extend(["-o", file.as_str()]);
            if keep {
                args.push("--keep-samples");
            }
            let o = numaprobe(&args, t.path());
            // c2c needs two allowed CPUs; a machine without them has no pair.
            if !o.status.success() && command.starts_with("c2c") {
                continue;
            }
            ok(&o);
            let doc = read(&t.path().join(&file));
            assert!(
                check_figures(&doc, keep) >= 1,
                "{command:?}: no figure found"
            );
        }
    }
    // diff reads a standalone latency document either way.
    let o = numaprobe(&["diff", "doc0-false.json", "doc0-true.json"], t.path());
    assert!(matches!(o.status.code(), Some(0) | Some(1)), "{o:?}");
}

#[test]
fn samples_are_left_out_by_default_and_kept_when_asked() {
    let t = TempDir::new("samples");
    for (dir, keep) in [("slim", false), ("full", true)] {
        let mut args = vec![
            "run",
            "--budget",
            "3s",
            "--size",
            "16MiB",
            "--report-dir",
            dir,
        ];
        if keep {
            args.push("--keep-samples");
        }
        ok(&main_job_in(&args, t.path(), &[]));
        let d = t.path().join(dir);
        let run = read(&d.join("run.json"));
        let mut docs = vec![read(&d.join("latency.json")), run["latency"].clone()];
        for f in ["bandwidth.json", "c2c.json"] {
            if d.join(f).is_file() {
                docs.push(read(&d.join(f)));
            }
        }
        let seen: usize = docs.iter().map(|doc| check_figures(doc, keep)).sum();
        assert!(seen >= 2, "{dir}: no figure found");
    }
    // diff reads both forms, each against itself and against the other.
    for (a, b) in [("slim", "full"), ("full", "slim"), ("slim", "slim")] {
        let o = numaprobe(&["diff", a, b, "--format", "json"], t.path());
        assert!(
            matches!(o.status.code(), Some(0) | Some(1)),
            "diff {a} {b}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(!v["cells"].as_array().unwrap().is_empty(), "{v}");
    }
    ok(&numaprobe(&["report", "slim"], t.path()));
}
