//! Verdicts only from figures that hold, end to end on crafted run
//! documents (nothing is measured): `diff` of two runs a minute apart under
//! different load, a starred cell, `check --measured` in the harmful
//! direction only, and `--slurm-drain` never draining on a flagged cell.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use cli::{numaprobe, s, text};
use common::TempDir;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A real node's run.json (a 2-CPU VM) with its latency cell 0->0 set to
/// `lat` ns (1 % spread, 20 samples), its bandwidth cell 0->0 to `bw` GB/s,
/// `flags` on the latency cell, and a system check at `load` on 2 CPUs.
struct Run {
    lat: f64,
    lat_flags: &'static [&'static str],
    bw: f64,
    bw_flags: &'static [&'static str],
    load: f64,
}

fn write(dir: &Path, name: &str, r: &Run) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/fleet/taskset-one-cpu/node1/run.json");
    let mut d: Value = serde_json::from_str(&std::fs::read_to_string(src).unwrap()).unwrap();
    let set = |c: &mut Value, v: f64, flags: &[&str]| {
        let samples: Vec<f64> = (0..20).map(|i| v * (0.99 + 0.001 * i as f64)).collect();
        c["median"] = json!(v);
        c["min"] = json!(samples[0]);
        c["max"] = json!(samples[19]);
        c["cv"] = json!(0.006);
        c["samples"] = json!(samples);
        c["flagged"] = json!(!flags.is_empty());
        c["flags"] = json!(flags);
    };
    set(&mut d["latency"]["cells"][0], r.lat, r.lat_flags);
    d["latency"]["matrix"] = json!([[r.lat]]);
    set(&mut d["bandwidth"]["cells"][0], r.bw, r.bw_flags);
    d["bandwidth"]["matrix"] = json!([[r.bw]]);
    let warnings: Vec<String> = if r.load >= 1.0 {
        vec![format!("load average {:.2} against 2 allowed CPU(s): figures move with the load; measure on a quieter machine", r.load)]
    } else {
        vec![]
    };
    d["provenance"]["system_check"] = json!({
        "allowed_cpus": 2, "load_1m": r.load, "other_running": 0, "steal_percent": 0.0,
        "interval_s": 0.25, "governors": [], "thp": "always", "warnings": warnings,
    });
    let p = dir.join(name);
    std::fs::write(&p, d.to_string()).unwrap();
    p
}

const QUIET: Run = Run {
    lat: 242.4,
    lat_flags: &[],
    bw: 12.0,
    bw_flags: &[],
    load: 0.4,
};

fn diff_json(a: &Path, b: &Path) -> (Output, Value) {
    let o = numaprobe(&["diff", s(a), s(b), "--format", "json"]);
    let v = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (o, v)
}

fn latency_cell(v: &Value) -> &Value {
    v["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == "latency")
        .unwrap()
}

#[test]
fn two_runs_under_different_load_are_never_worse() {
    let dir = TempDir::new("verdicts-diff");
    let a = write(dir.path(), "a.json", &QUIET);
    // The trial: 446.2 ns starred, a minute later at load 8.3.
    let starred = Run {
        lat: 446.2,
        lat_flags: &["unstable: CV 12.0 %"],
        load: 8.3,
        ..QUIET
    };
    let b = write(dir.path(), "b.json", &starred);
    let (o, v) = diff_json(&a, &b);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let c = latency_cell(&v);
    assert_eq!(c["verdict"], "inconclusive");
    assert_eq!(c["reason"], "B not trusted: unstable: CV 12.0 %");
    assert!(
        (c["change_pct"].as_f64().unwrap() - 84.08).abs() < 0.1,
        "{c}"
    );
    assert_eq!(v["summary"]["worse"], 0);
    assert!(v["notes"].as_array().unwrap().iter().any(|n| n
        .as_str()
        .unwrap()
        .starts_with("the runs' conditions differ: only B's system check warned")));
    // The same figure unstarred, still under the other load: inconclusive
    // for the load.
    let busy = Run {
        lat: 446.2,
        load: 8.3,
        ..QUIET
    };
    let b = write(dir.path(), "b2.json", &busy);
    let (o, v) = diff_json(&a, &b);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let c = latency_cell(&v);
    assert_eq!(c["verdict"], "inconclusive");
    assert!(
        c["reason"]
            .as_str()
            .unwrap()
            .starts_with("the runs' conditions differ: only B's system check warned"),
        "{c}"
    );
    // The table says so in its notes column and its last line.
    let t = numaprobe(&["diff", s(&a), s(&b)]);
    let out = text(&t.stdout);
    assert!(
        out.contains("inconclusive  the runs' conditions differ"),
        "{out}"
    );
    assert!(
        out.trim_end()
            .ends_with("equal: cells: 1 inconclusive, 1 unchanged"),
        "{out}"
    );
    // Under like load, the same change is worse: exit 1.
    let like = Run {
        lat: 446.2,
        load: 0.5,
        ..QUIET
    };
    let b = write(dir.path(), "b3.json", &like);
    let (o, v) = diff_json(&a, &b);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert_eq!(latency_cell(&v)["verdict"], "worse");
    assert!(latency_cell(&v)["reason"].is_null());
}

fn check(expect: &Path, measured: &Path, more: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_numaprobe"))
        .args(["check", "--expect", s(expect), "--measured", s(measured)])
        .args(["--only", "latency,bandwidth"])
        .args(more)
        // No scontrol: a drain attempt would fail with exit 3.
        .env("PATH", "/nonexistent")
        .env("SLURMD_NODENAME", "np7")
        .output()
        .unwrap()
}

#[test]
fn check_judges_trusted_cells_in_the_harmful_direction_and_drains_on_nothing_else() {
    let dir = TempDir::new("verdicts-check");
    let a = write(dir.path(), "a.json", &QUIET);
    // Bandwidth 18 % lower, both cells starred: named, not judged, no drain.
    let low = |flags: &'static [&'static str]| Run {
        bw: 9.84,
        bw_flags: flags,
        ..QUIET
    };
    let starred_a = write(
        dir.path(),
        "a-starred.json",
        &Run {
            bw_flags: &["unstable: CV 16.5 %"],
            ..QUIET
        },
    );
    let b = write(dir.path(), "b.json", &low(&["unstable: CV 14.0 %"]));
    let o = check(&starred_a, &b, &[]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(
        text(&o.stderr).contains("numaprobe: note: bandwidth: CPU node 0 -> memory node 0 not judged: expected unstable: CV 16.5 %; found unstable: CV 14.0 %"),
        "{o:?}"
    );
    let o = check(&starred_a, &b, &["--slurm-drain"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "never drains on a flagged cell: {o:?}"
    );
    // The same cell trusted fails, and --slurm-drain tries to drain (no
    // scontrol here: exit 3, said why).
    let b = write(dir.path(), "b-trusted.json", &low(&[]));
    let o = check(&a, &b, &[]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(text(&o.stdout).starts_with(
        "bandwidth: CPU node 0 -> memory node 0: expected 12.0 GB/s, found 9.8 GB/s (-18 %, band 15 %)"
    ));
    let o = check(&a, &b, &["--slurm-drain"]);
    assert_eq!(o.status.code(), Some(3), "{o:?}");
    assert!(text(&o.stderr).contains("cannot run scontrol"), "{o:?}");
    // A faster node passes, saying so; --either-way fails it.
    let fast = write(
        dir.path(),
        "fast.json",
        &Run {
            lat: 135.8,
            ..QUIET
        },
    );
    let o = check(&a, &fast, &[]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(
        text(&o.stderr).contains(
            "135.8 ns (-44 %) is faster than expected: not a failure (--either-way counts it)"
        ),
        "{o:?}"
    );
    let o = check(&a, &fast, &["--either-way"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    // A slower node measured at another load: named, not judged.
    let busy = write(
        dir.path(),
        "busy.json",
        &Run {
            lat: 446.2,
            load: 8.3,
            ..QUIET
        },
    );
    let o = check(&a, &busy, &["--slurm-drain"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(
        text(&o.stderr).contains("not judged: 446.2 ns (+84 %), but the runs' conditions differ"),
        "{o:?}"
    );
}

/// Three quiet runs a side, each run's samples tight, their medians as far
/// apart as this 2-CPU VM's quiet runs of a minute apart (135-154 ns): one
/// run against one calls the drift a change; all three a side do not, and
/// a real change still shows.
#[test]
fn several_runs_a_side_measure_the_drift_between_runs() {
    let dir = TempDir::new("verdicts-runs");
    let at = |name: &str, lat: f64| write(dir.path(), name, &Run { lat, ..QUIET });
    let a: Vec<PathBuf> = [154.4, 140.3, 134.8]
        .iter()
        .enumerate()
        .map(|(i, &l)| at(&format!("a{i}.json"), l))
        .collect();
    let b: Vec<PathBuf> = [145.3, 149.3, 139.8]
        .iter()
        .enumerate()
        .map(|(i, &l)| at(&format!("b{i}.json"), l))
        .collect();
    let (o, v) = diff_json(&a[0], &b[0]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert_eq!(latency_cell(&v)["verdict"], "better");
    let mut args: Vec<&str> = vec!["diff"];
    args.extend(a.iter().map(|p| s(p)));
    args.push("--vs");
    args.extend(b.iter().map(|p| s(p)));
    args.extend(["--format", "json"]);
    let o = numaprobe(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let c = latency_cell(&v);
    assert!(
        ["within_noise", "unchanged"].contains(&c["verdict"].as_str().unwrap()),
        "{c}"
    );
    assert_eq!(c["a"]["samples"], 60);
    assert_eq!(v["a"]["runs"].as_array().unwrap().len(), 3);
    assert_eq!(
        v["a"]["path"].as_str().unwrap(),
        format!("{} + {} + {}", s(&a[0]), s(&a[1]), s(&a[2]))
    );
    assert!(v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().starts_with("B pools 3 runs")));
    // 40 % slower on every run of B: worse across the drift.
    let slow: Vec<PathBuf> = [216.0, 196.0, 190.0]
        .iter()
        .enumerate()
        .map(|(i, &l)| at(&format!("s{i}.json"), l))
        .collect();
    let mut args: Vec<&str> = vec!["diff"];
    args.extend(a.iter().map(|p| s(p)));
    args.push("--vs");
    args.extend(slow.iter().map(|p| s(p)));
    let o = numaprobe(&args);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(text(&o.stdout).contains("worse"), "{}", text(&o.stdout));
    // Three runs without --vs: which are A's is not said.
    let o = numaprobe(&["diff", s(&a[0]), s(&a[1]), s(&b[0])]);
    assert_eq!(o.status.code(), Some(2));
    let e = text(&o.stderr);
    assert!(
        e.contains("3 runs given without --vs: give two (diff A B), or several a side (diff a1 a2 --vs b1 b2)"),
        "{e}"
    );
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    // A run of another kind among a side's runs is named.
    let topo = dir.path().join("topo.json");
    std::fs::write(&topo, numaprobe(&["topo", "--format", "json"]).stdout).unwrap();
    let o = numaprobe(&["diff", s(&a[0]), s(&topo), "--vs", s(&b[0])]);
    assert_eq!(o.status.code(), Some(2));
    let e = text(&o.stderr);
    assert!(
        e.contains(&format!(
            "A: {}: a topo among runs that are report",
            s(&topo)
        )),
        "{e}"
    );
}

/// A health check against several saved runs of one node judges a cell
/// against the spread between them: the drift of quiet runs is no failure
/// (one saved run fails it), a node 40 % slower still is, and only saved
/// runs are pooled.
#[test]
fn check_against_several_saved_runs_judges_against_their_spread() {
    let dir = TempDir::new("verdicts-check-runs");
    let at = |name: &str, lat: f64| write(dir.path(), name, &Run { lat, ..QUIET });
    let saved = [
        at("r1.json", 154.4),
        at("r2.json", 140.3),
        at("r3.json", 134.8),
    ];
    let today = at("today.json", 152.0);
    let band = ["--band", "5%"];
    // One saved run: +12.8 % past a 5 % band and far past its 1 % spread.
    let o = check(&saved[2], &today, &band);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let pooled = |measured: &Path| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_numaprobe"));
        c.arg("check");
        for p in &saved {
            c.args(["--expect", s(p)]);
        }
        c.args([
            "--measured",
            s(measured),
            "--only",
            "latency",
            "--band",
            "5%",
        ])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap()
    };
    let o = pooled(&today);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let err = text(&o.stderr);
    assert!(err.contains("note: the expectation pools 3 runs"), "{err}");
    let slow = at("slow.json", 200.0);
    let o = pooled(&slow);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(
        text(&o.stdout).starts_with("latency: CPU node 0 -> memory node 0: expected"),
        "{}",
        text(&o.stdout)
    );
    // A topology is not a run: refused, naming it.
    let topo = dir.path().join("topo.json");
    std::fs::write(&topo, numaprobe(&["topo", "--format", "json"]).stdout).unwrap();
    // One topology alone is what it always was: checked, not pooled.
    let o = numaprobe(&["check", "--expect", s(&topo)]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let o = numaprobe(&["check", "--expect", s(&saved[0]), "--expect", s(&topo)]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let e = text(&o.stderr);
    assert!(
        e.contains(&format!("--expect {}: a topo cannot be pooled", s(&topo))),
        "{e}"
    );
}
