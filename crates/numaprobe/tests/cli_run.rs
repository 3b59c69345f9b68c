//! The main job (`numaprobe run`, and `numaprobe` with no arguments) as a user
//! runs it: the report folder and its files, the combined JSON document, the
//! SLIT analysis on another machine's dump, and one-line errors for bad input.
//! Figures are never asserted, only their presence and placement.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use cli::{json, main_job_in, numaprobe_in as numaprobe, ok};
use common::TempDir;

#[test]
fn on_a_dump_it_measures_nothing_and_analyses_the_slit() {
    let u = common::unpack("64amd64-4s2n4ca2co");
    let root = u.root.to_str().unwrap();
    let o = numaprobe(
        &[
            "run",
            "--sysfs-root",
            root,
            "--no-report",
            "--format",
            "json",
        ],
        u.tmp.path(),
    );
    let doc = json(&o);
    assert_eq!(doc["schema"], "numaprobe/1");
    assert!(doc["latency"].is_null() && doc["bandwidth"].is_null());
    assert_eq!(doc["topology"]["numa_nodes"].as_array().unwrap().len(), 8);
    let inf = &doc["inference"];
    assert_eq!(inf["source"], "slit");
    // SLIT 10/16/22: local, one hop, two hops.
    assert_eq!(inf["levels"].as_array().unwrap().len(), 3);
    let cpus = doc["binding"]["cpus"].as_array().unwrap();
    assert_eq!(cpus.len(), 64, "one thread per core");
    // Scatter: the first four threads on four different packages.
    let packages: std::collections::BTreeSet<u64> =
        cpus[..4].iter().map(|c| c.as_u64().unwrap() / 16).collect();
    assert_eq!(packages.len(), 4, "first threads {:?}", &cpus[..4]);
    assert!(doc["notes"][0]
        .as_str()
        .unwrap()
        .contains("nothing measured"));
    // Its nodes are of one package each, and nothing is sampled on a dump.
    assert_eq!(doc["interleave"], serde_json::json!([]));
    // --no-report wrote no folder.
    assert!(!u.tmp.path().join("numaprobe-report").exists());
}

#[test]
fn on_a_dump_the_report_holds_the_slit_inference_and_its_graph() {
    let u = common::unpack("64amd64-4s2n4ca2co");
    let root = u.root.to_str().unwrap();
    let o = numaprobe(
        &["run", "--sysfs-root", root, "--report-dir", "r"],
        u.tmp.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = u.tmp.path().join("r");
    let inf: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("infer-latency.json")).unwrap())
            .unwrap();
    assert_eq!(inf["nodes"].as_array().unwrap().len(), 8);
    let svg = std::fs::read_to_string(dir.join("graph-latency.svg")).unwrap();
    assert!(svg.contains("<svg"), "not an SVG document");
    let png = std::fs::read(dir.join("graph-latency.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    // Nothing was measured, so there are no matrix files.
    assert!(!dir.join("latency.json").exists());
    assert!(!dir.join("bandwidth.json").exists());
}

#[test]
fn a_live_run_writes_every_report_file_with_verified_placement() {
    let t = TempDir::new("run");
    // A small buffer and a budget far above what its set-up costs: both
    // matrices on a quiet machine, what the plan says on a busy one.
    let o = main_job_in(
        &["run", "--budget", "10s", "--size", "16MiB"],
        t.path(),
        &[],
    );
    let text = ok(&o);
    assert!(text.contains("Idle latency (ns)"), "{text}");
    assert!(
        text.contains("Report written to numaprobe-report/"),
        "{text}"
    );
    let dir = t.path().join("numaprobe-report");
    for f in [
        "topo.json",
        "latency.json",
        "pin.json",
        "run.json",
        "summary.md",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    if run["plan"]["phases"][1]["measured_cells"].as_u64() > Some(0) {
        assert!(text.contains("Bandwidth (GB/s)"), "{text}");
        assert!(
            dir.join("bandwidth.json").is_file(),
            "bandwidth.json missing"
        );
    }
    // How many cells a budget holds is the host's speed: each matrix holds
    // what its plan kept, and a cell the plan left out is named with why.
    let phases = run["plan"]["phases"].as_array().unwrap();
    for (kind, p) in ["latency", "bandwidth"].into_iter().zip(phases) {
        assert_eq!(p["phase"], kind, "{p}");
        let m = &run[kind];
        let cells = m["cells"].as_array().map_or(&[][..], |c| c.as_slice());
        assert_eq!(
            p["measured_cells"].as_u64(),
            Some(cells.len() as u64),
            "{kind}: {p}"
        );
        assert_eq!(p["measured_cells"], p["planned_cells"], "{kind}: {p}");
        if p["coverage"] != "full" {
            assert!(p["reason"].is_string(), "{kind}: {p}");
        }
        if cells.is_empty() {
            assert!(
                p["skipped"].as_array().is_some_and(|s| !s.is_empty()),
                "{kind}: {p}"
            );
            continue;
        }
        assert_eq!(m["complete"], true, "{kind}");
        for c in cells {
            assert_eq!(c["placement"]["fraction_on_intended"], 1.0, "{kind}: {c}");
        }
    }
    // The latency matrix is the last thing a plan gives up.
    assert!(phases[0]["measured_cells"].as_u64().unwrap() >= 1, "{run}");
    // The standalone matrix file is the same document as the one in run.json
    // (which carries no provenance of its own: run.json has it once).
    let mut lat: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("latency.json")).unwrap()).unwrap();
    assert!(lat.as_object_mut().unwrap().remove("provenance").is_some());
    assert_eq!(lat, run["latency"]);
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(md.starts_with("# numaprobe report"));
}

#[test]
fn csv_is_one_line_per_measured_cell() {
    let t = TempDir::new("runcsv");
    let o = main_job_in(
        &[
            "run",
            "--budget",
            "10s",
            "--size",
            "16MiB",
            "--no-report",
            "--format",
            "csv",
        ],
        t.path(),
        &[],
    );
    let text = ok(&o);
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "kind,cpu_node,mem_node,median,unit,cv,placement_fraction,flagged"
    );
    let rows: Vec<&str> = lines.collect();
    assert!(rows.iter().any(|r| r.starts_with("latency,")), "{text}");
    assert!(rows.iter().any(|r| r.starts_with("bandwidth,")), "{text}");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let t = TempDir::new("runbad");
    for (args, needle) in [
        (vec!["run", "--budget", "soon"], "--budget 'soon'"),
        // No unit, zero, or too short: each named with what would do.
        (vec!["run", "--budget", "60"], "give a unit: 60s"),
        (vec!["run", "--budget", "0s"], "at least 1s"),
        (vec!["run", "--budget", "500ms"], "at least 1s"),
        (vec!["run", "--size", "0"], "--size"),
        // A negative value reaches the option's own check, which names
        // it, where clap would have called it an unknown option.
        (
            vec!["run", "--budget", "-1"],
            "--budget '-1': a budget is a positive",
        ),
        (
            vec!["--budget=-5s"],
            "--budget '-5s': a budget is a positive",
        ),
        (vec!["run", "--size", "-1"], "invalid size '-1'"),
        (
            vec!["diff", "--threshold", "-5", "a", "b"],
            "--threshold -5",
        ),
        // A negative value with a unit, which clap reads as short options
        // (`-5`, `-%`), reaches the option's check too.
        (
            vec!["diff", "a", "b", "--threshold", "-5%"],
            "--threshold -5%: not a share",
        ),
        (
            vec!["run", "--budget", "-1s"],
            "--budget '-1s': a budget is a positive",
        ),
        (
            vec!["latency", "--time-budget", "-.5s"],
            "invalid duration '-.5s'",
        ),
        // A typed value clap refuses is one line in the same words.
        (
            vec!["pin", "--threads", "-2"],
            "--threads: invalid value '-2' (a count cannot be negative",
        ),
        (
            vec!["fleet", "--from", "x", "--outlier-sd", "x"],
            "--outlier-sd: invalid value 'x' (not a number",
        ),
        (
            vec!["pin", "--strategy", "tight"],
            "--strategy: invalid value 'tight' (valid: compact, scatter, balanced)",
        ),
        (vec!["run", "--size"], "--size needs a value"),
        // An empty word of a fixed set is named with the set.
        (
            vec!["pin", "--strategy="],
            "--strategy: invalid value '' (valid: compact, scatter, balanced)",
        ),
        (
            vec!["diff", "a", "b", "--threshold", "--alpha", "0.1"],
            "--threshold needs a value",
        ),
        // A buffer no node can hold fails before anything is measured.
        (
            vec!["run", "--size", "100TiB"],
            "--size 100TiB: 100 TiB does not fit",
        ),
        (
            vec!["run", "--sysfs-root", "/nonexistent/x"],
            "/nonexistent/x",
        ),
    ] {
        let o = numaprobe(&args, t.path());
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{err}");
    }
    // A report folder that is a file.
    std::fs::write(t.path().join("taken"), "x").unwrap();
    let o = numaprobe(&["run", "--report-dir", "taken"], t.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a folder"));
}

/// A tiny budget with a small buffer (a 32 MiB set-up is a fraction of a
/// second on a quiet machine) measures, and records what it gave up; on a
/// machine too busy for even one cell it is refused before measuring.
#[test]
fn a_tiny_budget_finishes_and_records_budget_time_and_plan() {
    let t = TempDir::new("runtiny");
    let o = numaprobe(
        &[
            "run",
            "--budget",
            "1s",
            "--size",
            "32MiB",
            "--no-report",
            "--format",
            "json",
        ],
        t.path(),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    // The plan comes from a calibration timed on this machine: on a busy
    // one even a 32 MiB latency cell may not fit in 1 s, and the run is
    // refused before measuring, with the budget that would do.
    if !o.status.success() {
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(o.stdout.is_empty());
        assert!(
            err.contains("--budget 1s is too short to measure even one latency cell"),
            "{err}"
        );
        return;
    }
    let doc = json(&o);
    assert_eq!(doc["complete"], true);
    assert_eq!(doc["budget_s"], 1.0);
    assert!(doc["elapsed_s"].as_f64().unwrap() > 0.0);
    let plan = &doc["plan"];
    assert_eq!(plan["budget_s"], 1.0);
    let phases = plan["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2);
    for p in phases {
        let kind = p["phase"].as_str().unwrap();
        // Whatever was given up is said, and the matrix holds what was measured.
        if p["coverage"] != "full" {
            assert!(p["reason"].is_string(), "{p}");
        }
        let measured = p["measured_cells"].as_u64().unwrap();
        let cells = doc[kind]["cells"].as_array().map_or(0, |c| c.len() as u64);
        assert_eq!(measured, cells, "{kind}");
    }
    // The latency matrix is the last thing given up.
    assert!(phases[0]["measured_cells"].as_u64().unwrap() >= 1);
    // The end is reported against the budget.
    assert!(err.contains("(budget 1 s)"), "{err}");
}

/// With the default buffer, a 1 s budget either shrinks the buffer and
/// measures (it stays at least 2x the last-level cache and 32 MiB), or,
/// where even the smallest such buffer's set-up does not fit (a 480 MiB
/// LLC makes it 960 MiB), refuses before measuring with the budget that
/// would do: never a run that overruns or measures a buffer in the cache.
#[test]
fn a_tiny_budget_shrinks_the_buffer_or_refuses_with_the_budget_it_needs() {
    let t = TempDir::new("runtinydefault");
    let o = numaprobe(
        &["run", "--budget", "1s", "--no-report", "--format", "json"],
        t.path(),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    if o.status.success() {
        let doc = json(&o);
        let size = doc["plan"]["size_bytes"].as_u64().unwrap();
        let llc = doc["topology"]["caches"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["size_bytes"].as_u64())
            .max()
            .unwrap_or(0);
        assert!(size >= (2 * llc).max(32 << 20), "{size} vs LLC {llc}");
        assert!(doc["plan"]["phases"][0]["measured_cells"].as_u64().unwrap() >= 1);
    } else {
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(o.stdout.is_empty());
        assert!(
            err.contains("--budget 1s is too short to measure even one latency cell"),
            "{err}"
        );
        assert!(
            err.contains("measures every cell of both matrices soundly"),
            "{err}"
        );
    }
}

#[test]
fn csv_of_a_dump_is_its_slit_in_long_form() {
    let u = common::unpack("64amd64-4s2n4ca2co");
    let root = u.root.to_str().unwrap();
    let o = numaprobe(
        &[
            "run",
            "--sysfs-root",
            root,
            "--no-report",
            "--format",
            "csv",
        ],
        u.tmp.path(),
    );
    let text = ok(&o);
    let rows: Vec<&str> = text.lines().skip(1).collect();
    // 8 nodes: every pair, in the same columns as measured cells.
    assert_eq!(rows.len(), 64, "{text}");
    assert!(rows.iter().all(|r| r.starts_with("slit,")), "{text}");
    assert!(rows.contains(&"slit,0,0,10,slit,,,"), "{text}");
}

/// A cell that fails (here its memory node reads full: the binary's fault
/// injection, as in the matrices' tests) costs only itself: the main job
/// writes every output, run.json lists the failure with its reason, and the
/// exit status is 1 with one closing line that counts the failures.
#[test]
fn a_failed_cell_is_reported_and_the_run_exits_1_after_writing_everything() {
    let t = TempDir::new("runfail");
    let o = main_job_in(
        &[
            "run",
            "--budget",
            "5s",
            "--size",
            "16MiB",
            "--report-dir",
            "rep",
        ],
        t.path(),
        &[("NUMAPROBE_FAULT_FULL_CELL", "0")],
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("numaprobe: error: ")
            && last.contains(" planned cells failed (latency: first CPU "),
        "{stderr}"
    );
    // The table still reached stdout, and the report folder is whole.
    assert!(!o.stdout.is_empty());
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.path().join("rep/run.json")).unwrap()).unwrap();
    let failed = doc["latency"]["failed"].as_array().unwrap();
    assert_eq!(failed.len(), 1, "{doc}");
    assert!(failed[0]["reason"]
        .as_str()
        .unwrap()
        .contains("does not fit in node"));
    assert!(t.path().join("rep/summary.md").exists());
}

/// The extra phases of the main job (c2c, loaded latency, system peak): each
/// has its key in run.json with a status, a reason when it is not
/// measured, its share of the budget and its result; its document in the
/// report folder (listed in the manifest) when it measured anything; its
/// share in the plan said before measuring; and a line in summary.md.
#[test]
fn the_extra_phases_have_their_keys_files_plan_and_summary_lines() {
    let t = TempDir::new("runextra");
    let o = main_job_in(
        &[
            "run",
            "--budget",
            "5s",
            "--size",
            "16MiB",
            "--report-dir",
            "rep",
        ],
        t.path(),
        &[],
    );
    let text = ok(&o);
    assert!(text.contains("Beyond the matrices:"), "{text}");
    let dir = t.path().join("rep");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    let manifest = std::fs::read_to_string(dir.join(".numaprobe-manifest")).unwrap();
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(md.contains("## Beyond the matrices"), "{md}");
    for (key, file, name) in [
        ("c2c", "c2c.json", "c2c"),
        ("loaded_latency", "loaded-latency.json", "loaded latency"),
        ("peak", "peak.json", "system peak"),
        ("sweep", "sweep.json", "cache sweep"),
    ] {
        let x = &run[key];
        assert_eq!(x["phase"], key, "{x}");
        let status = x["status"].as_str().unwrap();
        assert!(x["share_s"].as_f64().unwrap() <= 5.0, "{x}");
        match status {
            "measured" | "partial" => {
                assert!(x["result"].is_object(), "{x}");
                assert_eq!(x["result"]["complete"], status == "measured", "{x}");
                assert!(dir.join(file).is_file(), "{file} missing");
                assert!(manifest.lines().any(|l| l == file), "{manifest}");
            }
            // A failed phase is an error of this machine: not allowed here.
            "skipped" => {
                assert!(x["result"].is_null(), "{x}");
                assert!(!dir.join(file).exists(), "{file} without a result");
                assert!(x["reason"].is_string(), "{x}");
            }
            other => panic!("{key}: status {other}"),
        }
        if status != "measured" {
            assert!(x["reason"].is_string(), "{x}");
        }
        // The summary has a line for it, whatever became of it.
        assert!(
            md.lines().any(|l| l.starts_with(&format!("- {name}"))),
            "{name}: {md}"
        );
    }
    // The plan said before measuring holds each phase's share, and the
    // record as it ran one entry per phase.
    let plan = &run["plan"];
    let shares = plan["extras_plan"].as_array().unwrap();
    let phases: Vec<&str> = shares
        .iter()
        .map(|p| p["phase"].as_str().unwrap())
        .collect();
    assert_eq!(phases, ["c2c", "loaded_latency", "peak", "sweep"]);
    assert_eq!(shares[0]["fraction_of_left"], 0.2);
    // The matrices get 60 % of the budget when that holds every cell
    // soundly, else all of it. Which is the host's speed; that the share
    // agrees with the sound budget the same plan states is not.
    let sound = plan["sound_budget_s"].as_f64().unwrap();
    let budget = plan["budget_s"].as_f64().unwrap();
    let share = if sound <= budget { 0.6 } else { 1.0 };
    assert_eq!(plan["matrix_share"], share, "{plan}");
    // Each extra phase's record is written once, in its own part.
    assert!(plan.get("extras").is_none(), "{plan}");
    for key in ["c2c", "loaded_latency", "peak", "sweep"] {
        assert!(run[key]["status"].is_string(), "{key}: {}", run[key]);
    }
    // The sweep's plateaus reach the report page too.
    if run["sweep"]["status"] == "measured" {
        let page = std::fs::read_to_string(dir.join("report.html")).unwrap();
        let at = page.find("<section id=\"sweep\"").unwrap();
        let sec = &page[at..at + page[at..].find("</section>").unwrap()];
        assert!(sec.contains("<svg"), "{sec}");
    }
}
