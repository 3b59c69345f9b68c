//! `numaprobe diff` and `numaprobe check` as a script runs them: the exit
//! status (0 equal / matches, 1 different, 2 bad input with one line), every
//! format, on real machines' dumps and on documents measured on this machine.
//! Measured documents are only checked for properties that do not depend on
//! timing noise (two runs may or may not differ; a run equals itself).

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use cli::{main_job_in, numaprobe, ok, s, usage_error};
use common::TempDir;
use std::path::{Path, PathBuf};
use std::process::Output;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `numaprobe topo -o DIR/NAME.json` of a dump; the guard keeps the dump.
fn saved_topo(fixture: &str, dir: &Path) -> (common::Unpacked, PathBuf) {
    let u = common::unpack(fixture);
    let out = dir.join(format!("{fixture}.json"));
    cli::ok(&numaprobe(&[
        "topo",
        "--sysfs-root",
        s(&u.root),
        "-o",
        s(&out),
    ]));
    (u, out)
}

#[test]
fn diff_of_two_dumps_exits_1_and_names_the_differences_in_every_format() {
    let dir = TempDir::new("diff-dumps");
    let (_a, a) = saved_topo("16amd64-8n2c", dir.path());
    let (_b, b) = saved_topo("16amd64-8n2c-cpusets", dir.path());

    let o = numaprobe(&["diff", s(&a), s(&b)]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let text = stdout(&o);
    assert!(text.contains("CPU 4") && text.contains("offline"), "{text}");
    let last = text.trim_end().lines().last().unwrap();
    assert!(last.starts_with("different: "), "{text}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("differ") && !err.contains("error"), "{err}");

    let o = numaprobe(&["diff", s(&a), s(&b), "--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["schema"], "numaprobe/1");
    assert_eq!(v["summary"]["equal"], false);
    assert_eq!(v["a"]["kind"], "topo");
    let diffs = v["differences"].as_array().unwrap();
    assert!(diffs
        .iter()
        .any(|d| d["section"] == "cpus" && d["item"] == "CPU 4" && d["b"] == "offline"));
    assert_eq!(v["summary"]["differences"], diffs.len());

    let o = numaprobe(&["diff", s(&a), s(&b), "--format", "csv"]);
    let csv = stdout(&o);
    let mut lines = csv.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("row,section,item,a,b,kind,"));
    assert_eq!(lines.count(), diffs.len());
    assert!(csv.contains("difference,cpus,CPU 4,"), "{csv}");

    let o = numaprobe(&["diff", s(&a), s(&b), "--format", "markdown"]);
    let md = stdout(&o);
    assert!(md.starts_with("# numaprobe diff"), "{md}");
    assert!(
        md.contains("## Differences") && md.contains("| section |"),
        "{md}"
    );

    // --output writes the file; the format follows its extension.
    let out = dir.path().join("d.json");
    let o = numaprobe(&["diff", s(&a), s(&b), "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["summary"]["equal"], false);
}

#[test]
fn diff_of_a_dump_with_itself_exits_0() {
    let dir = TempDir::new("diff-same");
    let (_a, a) = saved_topo("16amd64-8n2c", dir.path());
    let o = numaprobe(&["diff", s(&a), s(&a)]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(stdout(&o).trim_end().ends_with("equal"), "{}", stdout(&o));
    assert!(o.stderr.is_empty());
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let dir = TempDir::new("diff-bad");
    let (_a, topo) = saved_topo("16amd64-8n2c", dir.path());
    let missing = dir.path().join("nope.json");
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "hello").unwrap();
    let study_like = dir.path().join("other.json");
    std::fs::write(&study_like, r#"{"schema": "numaprobe/1", "cases": []}"#).unwrap();

    let err = usage_error(&numaprobe(&["diff", s(&topo), s(&missing)]));
    assert!(err.contains("nope.json: no such file or folder"), "{err}");
    let err = usage_error(&numaprobe(&["diff", s(&empty), s(&empty)]));
    assert!(
        err.contains("a folder without numaprobe documents"),
        "{err}"
    );
    let err = usage_error(&numaprobe(&["diff", s(&topo), s(&text)]));
    assert!(err.contains("not JSON"), "{err}");
    let err = usage_error(&numaprobe(&["diff", s(&topo), s(&study_like)]));
    assert!(
        err.contains("of no kind this numaprobe knows; diff takes a run, topo, latency, bandwidth or c2c document, or a report folder holding one"),
        "{err}"
    );
    // A topology against a report folder: different kinds.
    std::fs::copy(&topo, empty.join("topo.json")).unwrap();
    let err = usage_error(&numaprobe(&["diff", s(&topo), s(&empty)]));
    assert!(
        err.contains("cannot compare a topo document with a report folder"),
        "{err}"
    );
    // A folder's document is what its content says, whatever its name:
    // a broken one is named.
    std::fs::write(
        empty.join("topo.json"),
        r#"{"schema": "numaprobe/1", "kind": "latency", "matrix": []}"#,
    )
    .unwrap();
    let err = usage_error(&numaprobe(&["diff", s(&empty), s(&empty)]));
    assert!(
        err.contains("topo.json: not a valid matrix document"),
        "{err}"
    );
    let err = usage_error(&numaprobe(&[
        "diff",
        s(&topo),
        s(&topo),
        "--threshold",
        "150%",
    ]));
    assert!(err.contains("--threshold 150%"), "{err}");
    let err = usage_error(&numaprobe(&["diff", s(&topo), s(&topo), "--alpha", "0"]));
    assert!(err.contains("--alpha 0"), "{err}");
    let err = usage_error(&numaprobe(&["check", "--expect", s(&missing)]));
    assert!(
        err.contains("--expect") && err.contains("nope.json"),
        "{err}"
    );
}

#[test]
fn check_a_saved_topology_against_dumps() {
    let dir = TempDir::new("check-topo");
    let (a_dump, a) = saved_topo("16amd64-8n2c", dir.path());
    let b_dump = common::unpack("16amd64-8n2c-cpusets");

    let o = numaprobe(&["check", "--expect", s(&a), "--sysfs-root", s(&a_dump.root)]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(stdout(&o).contains("matches"), "{}", stdout(&o));

    let o = numaprobe(&["check", "--expect", s(&a), "--sysfs-root", s(&b_dump.root)]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = stdout(&o);
    // One line per difference, then the summary and what was checked.
    let v: serde_json::Value = serde_json::from_slice(
        &numaprobe(&[
            "check",
            "--expect",
            s(&a),
            "--sysfs-root",
            s(&b_dump.root),
            "--format",
            "json",
        ])
        .stdout,
    )
    .unwrap();
    assert_eq!(v["matches"], false);
    let n = v["differences"].as_array().unwrap().len();
    assert!(n > 0);
    assert_eq!(out.lines().count(), n + 2, "{out}");
    assert!(
        out.contains(
            "cpus: CPU 4: expected package 2, core 0, node 2, SMT siblings 4, found offline"
        ),
        "{out}"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("{n} differences")), "{err}");
}

#[test]
fn check_a_saved_binding_against_a_dump() {
    let dir = TempDir::new("check-pin");
    let a = common::unpack("16amd64-8n2c");
    let b = common::unpack("16amd64-8n2c-cpusets");
    let pin = dir.path().join("p.json");
    cli::ok(&numaprobe(&[
        "pin",
        "--sysfs-root",
        s(&a.root),
        "--threads",
        "8",
        "--strategy",
        "scatter",
        "-o",
        s(&pin),
    ]));
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&pin).unwrap()).unwrap();
    assert_eq!(
        numaprobe(&["check", "--expect", s(&pin), "--sysfs-root", s(&a.root)])
            .status
            .code(),
        Some(0)
    );
    let o = numaprobe(&[
        "check",
        "--expect",
        s(&pin),
        "--sysfs-root",
        s(&b.root),
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["expect_kind"], "pin");
    // Exactly the saved CPUs the cpuset dump lacks are named.
    let topo_b: serde_json::Value = serde_json::from_slice(
        &numaprobe(&["topo", "--sysfs-root", s(&b.root), "--format", "json"]).stdout,
    )
    .unwrap();
    let allowed: Vec<u64> = topo_b["allowed"]["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    let lost = saved["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| !allowed.contains(&c.as_u64().unwrap()))
        .count();
    assert!(
        lost > 0,
        "the scatter binding uses a CPU the cpuset takes away"
    );
    assert_eq!(v["differences"].as_array().unwrap().len(), lost);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn this_machine_matches_its_own_saved_topology() {
    let dir = TempDir::new("check-live");
    let t = dir.path().join("t.json");
    cli::ok(&numaprobe(&["topo", "-o", s(&t)]));
    let o = numaprobe(&["check", "--expect", s(&t)]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
}

/// Two latency runs on this machine: timing noise decides whether they
/// differ, so only what holds either way is asserted.
#[test]
fn two_measured_runs_compare_cell_by_cell() {
    let dir = TempDir::new("diff-live");
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    for f in [&a, &b] {
        cli::ok(&numaprobe(&[
            "latency",
            "--size",
            "16MiB",
            "--time-budget",
            "0.3s",
            "-o",
            s(f),
        ]));
    }
    let o = numaprobe(&["diff", s(&a), s(&b), "--format", "json"]);
    let code = o.status.code().unwrap();
    assert!(code == 0 || code == 1, "{o:?}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["summary"]["equal"], code == 0);
    let cells = v["cells"].as_array().unwrap();
    let measured: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&a).unwrap()).unwrap();
    assert_eq!(cells.len(), measured["cells"].as_array().unwrap().len());
    for c in cells {
        let p = c["p_value"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&p), "{c}");
        let (lo, hi) = (
            c["ci_low_pct"].as_f64().unwrap(),
            c["ci_high_pct"].as_f64().unwrap(),
        );
        assert!(lo <= hi, "{c}");
        assert!([
            "unchanged",
            "negligible",
            "within_noise",
            "better",
            "worse",
            "inconclusive"
        ]
        .contains(&c["verdict"].as_str().unwrap()));
    }
    // A run against itself: every cell unchanged (p = 1), or inconclusive
    // when it is flagged (a busy machine spreads the samples), exit 0, and
    // the same answer every time (the bootstrap's seed is fixed).
    let o1 = numaprobe(&["diff", s(&a), s(&a), "--format", "json"]);
    assert_eq!(o1.status.code(), Some(0), "{o1:?}");
    let v1: serde_json::Value = serde_json::from_slice(&o1.stdout).unwrap();
    for c in v1["cells"].as_array().unwrap() {
        assert_eq!(c["p_value"], 1.0);
        match c["verdict"].as_str().unwrap() {
            "unchanged" => assert!(c["reason"].is_null(), "{c}"),
            "inconclusive" => assert!(
                c["reason"].as_str().unwrap().starts_with("A not trusted: "),
                "{c}"
            ),
            v => panic!("{v}: {c}"),
        }
    }
    let x: serde_json::Value =
        serde_json::from_slice(&numaprobe(&["diff", s(&a), s(&b), "--format", "json"]).stdout)
            .unwrap();
    assert_eq!(x["cells"], v["cells"]);
    // A latency expectation is judged against this node's own run: without
    // one, check says what to give.
    let err = usage_error(&numaprobe(&["check", "--expect", s(&a)]));
    assert!(err.contains("give them with --measured"), "{err}");
}

/// Report folders of the main job on this machine: a folder equals itself,
/// and a folder compares with its own run.json.
#[test]
fn report_folders_compare() {
    let dir = TempDir::new("diff-run");
    let r = dir.path().join("r");
    // A short budget may be refused on a loaded host (the calibration
    // decides); it is then run at the budget the refusal names. The folder
    // is what is tested.
    let o = main_job_in(
        &[
            "run",
            "--budget",
            "3s",
            "--size",
            "16MiB",
            "--report-dir",
            s(&r),
        ],
        dir.path(),
        &[],
    );
    ok(&o);
    let o = numaprobe(&["diff", s(&r), s(&r)]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let o = numaprobe(&["diff", s(&r), s(&r.join("run.json")), "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["a"]["kind"], "report");
    assert!(v["cells"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["kind"] == "latency"));
    // A copy with its topology only (as if nothing had been measured): a
    // document on one side only is a difference. (Whether the budget left
    // room for the bandwidth matrix is the planner's call, so only the
    // latency matrix, which is always measured, is asserted on.)
    let short = dir.path().join("short");
    std::fs::create_dir(&short).unwrap();
    std::fs::copy(r.join("topo.json"), short.join("topo.json")).unwrap();
    let o = numaprobe(&["diff", s(&r), s(&short), "--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let d = v["differences"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["item"] == "latency matrix")
        .expect("the latency matrix is named");
    assert_eq!(d["section"], "documents");
    assert_eq!(
        (d["a"].as_str(), d["b"].as_str()),
        (Some("present"), Some("absent"))
    );
}
