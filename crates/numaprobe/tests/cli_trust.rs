//! What makes a result trustworthy later: every JSON document says where,
//! when and how it was made (`provenance`); a report folder holds only one
//! run's files; the output format follows the file name; the main job's
//! options work without `run`; an output into a missing folder is refused
//! before anything is measured.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use cli::{numaprobe_in as numaprobe, ok, usage_error};
use common::TempDir;
use std::path::Path;

/// Measurements small enough for a test (latency and bandwidth).
const TINY: &[&str] = &["--size", "8MiB", "--time-budget", "30ms", "--pages", "4k"];

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The top-level keys in the order the text has them.
fn top_keys(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("  \""))
        .filter_map(|l| l.split('"').next())
        .map(String::from)
        .collect()
}

fn check_provenance(text: &str, args: &[&str], what: &str) -> serde_json::Value {
    let keys = top_keys(text);
    assert_eq!(
        &keys[..2.min(keys.len())],
        ["schema", "provenance"],
        "{what}: provenance right after schema"
    );
    let v: serde_json::Value = serde_json::from_str(text).unwrap();
    let p = &v["provenance"];
    assert_eq!(p["version"], env!("CARGO_PKG_VERSION"), "{what}");
    let argv: Vec<&str> = p["command_line"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(&argv[1..], args, "{what}");
    for k in ["hostname", "cpu_model", "kernel"] {
        assert!(
            !p[k].as_str().unwrap().is_empty(),
            "{what}: {k} empty in {p}"
        );
    }
    let (start, end) = (p["start"].as_str().unwrap(), p["end"].as_str().unwrap());
    for t in [start, end] {
        // RFC 3339 UTC with whole seconds: 2026-11-23T12:03:13Z
        assert_eq!(t.len(), 20, "{what}: {t}");
        assert!(t.ends_with('Z') && &t[10..11] == "T", "{what}: {t}");
    }
    assert!(start <= end, "{what}: {start} after {end}");
    assert_eq!(p["complete"], true, "{what}");
    v
}

#[test]
fn every_json_document_carries_provenance_after_schema() {
    let u = common::unpack("16amd64-8n2c");
    let root = u.root.to_str().unwrap();
    let cwd = u.tmp.path();
    let matrix = common::fixtures_dir()
        .join("../matrices/ranger-4s-opteron-8356-mccalpin.json")
        .canonicalize()
        .unwrap();
    let matrix = matrix.to_str().unwrap();
    let latency: Vec<&str> = ["latency", "--format", "json"]
        .iter()
        .chain(TINY)
        .copied()
        .collect();
    let bandwidth: Vec<&str> = ["bandwidth", "--format", "json"]
        .iter()
        .chain(TINY)
        .copied()
        .collect();
    let runs: Vec<Vec<&str>> = vec![
        vec!["topo", "--sysfs-root", root, "--format", "json"],
        vec![
            "pin",
            "--threads",
            "2",
            "--strategy",
            "compact",
            "--sysfs-root",
            root,
            "--format",
            "json",
        ],
        vec!["infer", "--input", matrix, "--format", "json"],
        vec![
            "run",
            "--sysfs-root",
            root,
            "--no-report",
            "--format",
            "json",
        ],
        vec![
            "study",
            "0.0.r.0",
            "--repeats",
            "2",
            "--passes",
            "1",
            "--size",
            "1MiB",
            "--format",
            "json",
        ],
        latency,
        bandwidth,
    ];
    for args in &runs {
        let text = ok(&numaprobe(args, cwd));
        let v = check_provenance(&text, args, args[0]);
        let budget = &v["provenance"]["budget"];
        match args[0] {
            "latency" | "bandwidth" => {
                assert_eq!(budget["option"], "--time-budget");
                assert_eq!(budget["seconds"], 0.03);
            }
            // Another machine's dump: nothing is measured, so no budget is
            // stated for a measurement that did not happen.
            "run" => assert!(budget.is_null(), "run of a dump: {budget}"),
            _ => assert!(budget.is_null(), "{}: {budget}", args[0]),
        }
    }
}

#[test]
fn the_report_folder_files_carry_provenance_and_no_budget_when_nothing_is_measured() {
    let t = TempDir::new("prov-run");
    let args = ["--budget", "10s", "--no-measure", "--report-dir", "r"];
    ok(&numaprobe(&args, t.path()));
    for f in ["topo.json", "pin.json", "run.json"] {
        let text = std::fs::read_to_string(t.path().join("r").join(f)).unwrap();
        let v = check_provenance(&text, &args, f);
        assert!(
            v["provenance"]["budget"].is_null(),
            "{f}: a budget of nothing measured"
        );
    }
}

#[test]
fn the_output_file_name_chooses_the_format_unless_format_is_given() {
    let u = common::unpack("16amd64-8n2c");
    let root = u.root.to_str().unwrap();
    let cwd = u.tmp.path();
    let write = |name: &str, more: &[&str]| -> String {
        let mut args = vec![
            "pin",
            "--threads",
            "2",
            "--strategy",
            "compact",
            "--sysfs-root",
            root,
            "-o",
            name,
        ];
        args.extend(more);
        ok(&numaprobe(&args, cwd));
        std::fs::read_to_string(cwd.join(name)).unwrap()
    };
    let json = write("p.json", &[]);
    assert!(
        serde_json::from_str::<serde_json::Value>(&json).is_ok(),
        "{json}"
    );
    let json_upper = write("P.JSON", &[]);
    assert!(json_upper.starts_with('{'), "{json_upper}");
    let csv = write("p.csv", &[]);
    let table = write("p.txt", &[]);
    let md = write("p.md", &[]);
    let markdown = write("p.markdown", &[]);
    for (name, text) in [("csv", &csv), ("table", &table), ("markdown", &md)] {
        assert!(!text.starts_with('{'), "{name}: {text}");
    }
    assert_eq!(md, markdown);
    assert_ne!(csv, table);
    assert_ne!(md, table);
    // The same three through --format, to the terminal.
    let stdout = |f: &str| {
        ok(&numaprobe(
            &[
                "pin",
                "--threads",
                "2",
                "--strategy",
                "compact",
                "--sysfs-root",
                root,
                "--format",
                f,
            ],
            cwd,
        ))
    };
    assert_eq!(csv, stdout("csv"));
    assert_eq!(md, stdout("markdown"));
    assert_eq!(table, stdout("table"));
    // An explicit --format wins over the name.
    let forced = write("q.json", &["--format", "csv"]);
    assert_eq!(forced, csv);
}

#[test]
fn an_output_into_a_missing_folder_is_refused_before_measuring() {
    let t = TempDir::new("missing-out");
    let mut args = vec!["latency", "-o", "no/such/folder/f.json"];
    // A budget no test waits for: the refusal must come first.
    args.extend(["--time-budget", "600s", "--size", "8MiB"]);
    let err = usage_error(&numaprobe(&args, t.path()));
    assert!(err.contains("no/such/folder"), "{err}");
    std::fs::write(t.path().join("plain"), "x").unwrap();
    let err = usage_error(&numaprobe(&["topo", "-o", "plain/t.json"], t.path()));
    assert!(err.contains("not a folder"), "{err}");
    let err = usage_error(&numaprobe(&["--no-measure", "-o", "gone/r.json"], t.path()));
    assert!(err.contains("gone"), "{err}");
    assert!(!t.path().join("numaprobe-report").exists());
}

#[test]
fn the_main_jobs_options_work_without_run() {
    let t = TempDir::new("toplevel");
    let text = ok(&numaprobe(
        &[
            "--budget",
            "10s",
            "--no-measure",
            "--no-report",
            "--format",
            "json",
        ],
        t.path(),
    ));
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(v["topology"].is_object());
    assert!(
        v["provenance"]["budget"].is_null(),
        "--no-measure states no budget"
    );
    assert!(!t.path().join("numaprobe-report").exists());
    let err = usage_error(&numaprobe(&["--budget", "soon"], t.path()));
    assert!(err.contains("soon"), "{err}");
    let help = ok(&numaprobe(&["--help"], t.path()));
    assert!(
        help.contains("Commands, by what you want to do:") && help.contains("--budget"),
        "{help}"
    );
}

#[test]
fn a_new_run_leaves_no_file_of_the_previous_one() {
    let u = common::unpack("64amd64-4s2n4ca2co");
    let root = u.root.to_str().unwrap();
    let cwd = u.tmp.path();
    // An 8-node machine's report: inference and its graph.
    ok(&numaprobe(
        &["run", "--sysfs-root", root, "--report-dir", "r"],
        cwd,
    ));
    let dir = cwd.join("r");
    for f in [
        "infer-latency.json",
        "graph-latency.png",
        "graph-latency.svg",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing after the 8-node run");
    }
    std::fs::write(dir.join("my-notes.txt"), "mine").unwrap();
    let topo = read_json(&cwd.join("r/topo.json"));
    assert_eq!(topo["numa_nodes"].as_array().unwrap().len(), 8);
    // This machine now, nothing measured.
    let second = ["run", "--no-measure", "--report-dir", "r"];
    ok(&numaprobe(&second, cwd));
    // Every file there now is the second run's (listed in its manifest and,
    // for JSON, stamped with its command line), or the user's own.
    let manifest = std::fs::read_to_string(dir.join(".numaprobe-manifest")).unwrap();
    let listed: Vec<&str> = manifest.lines().filter(|l| !l.starts_with('#')).collect();
    for e in std::fs::read_dir(&dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        // The lock file stays: it is the folder's, not a run's.
        if [".numaprobe-manifest", ".numaprobe-lock", "my-notes.txt"].contains(&name.as_str()) {
            continue;
        }
        assert!(
            listed.contains(&name.as_str()),
            "{name} survived from the previous run"
        );
        if name.ends_with(".json") {
            let argv = &read_json(&dir.join(&name))["provenance"]["command_line"];
            assert_eq!(
                argv.as_array().unwrap()[1..],
                second.map(serde_json::Value::from),
                "{name}"
            );
        }
    }
    for f in &listed {
        assert!(dir.join(f).is_file(), "manifest lists {f}, not there");
    }
    // On a one-node machine nothing is inferred: the 8-node graph is gone.
    let here = read_json(&dir.join("topo.json"));
    if here["numa_nodes"].as_array().unwrap().len() < 2 {
        for f in [
            "infer-latency.json",
            "graph-latency.png",
            "graph-latency.svg",
        ] {
            assert!(!dir.join(f).exists(), "{f} of the previous run survived");
        }
    }
    assert!(
        dir.join("my-notes.txt").is_file(),
        "a file numaprobe did not write was removed"
    );
    assert!(!manifest.contains("my-notes.txt"));
}

#[test]
fn a_folder_numaprobe_did_not_write_needs_force() {
    let t = TempDir::new("foreign");
    let dir = t.path().join("thesis");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("chapter1.tex"), "x").unwrap();
    let args = ["run", "--no-measure", "--report-dir", "thesis"];
    let err = usage_error(&numaprobe(&args, t.path()));
    assert!(err.contains("--force"), "{err}");
    assert!(
        !dir.join("run.json").exists(),
        "wrote into the refused folder"
    );
    ok(&numaprobe(
        &["run", "--no-measure", "--report-dir", "thesis", "--force"],
        t.path(),
    ));
    assert!(dir.join("run.json").is_file());
    assert!(dir.join("chapter1.tex").is_file());
    // From now on the folder has a manifest: a rerun needs no --force and
    // still leaves the foreign file alone.
    ok(&numaprobe(&args, t.path()));
    assert!(dir.join("chapter1.tex").is_file());
}
