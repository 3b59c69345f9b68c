//! `complete` means one thing in the main job's report folder: run.json's
//! `complete` and `status`, summary.md's status line and report.html's
//! banner and provenance row say the same, and a phase cut by its share of
//! the budget is "cut short by the budget", never an interruption or a partial
//! result of the run. Nothing here depends on timing: what the budget cut
//! is read from run.json and looked for in the other two files.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use cli::{main_job_in, numaprobe_in as numaprobe};
use common::TempDir;
use serde_json::Value;
use std::path::Path;

/// run.json, summary.md and report.html of a report folder.
fn folder(dir: &Path) -> (Value, String, String) {
    let read = |n: &str| std::fs::read_to_string(dir.join(n)).unwrap();
    (
        serde_json::from_str(&read("run.json")).unwrap(),
        read("summary.md"),
        read("report.html"),
    )
}

/// The status line as summary.md and report.html must show it, built from
/// run.json's `status` alone.
fn expected_line(status: &Value) -> String {
    let phases = status["phases"].as_array().unwrap();
    if phases.is_empty() {
        return "complete: every phase ran its whole plan".into();
    }
    let mut line = String::from(if status["complete"].as_bool().unwrap() {
        "ran as far as the budget allowed"
    } else {
        "incomplete"
    });
    for (kind, name) in [
        ("interrupted", "stopped by an interruption"),
        ("failed", "failed"),
        ("budget", "cut short by the budget"),
        ("other", "not run in full"),
    ] {
        let these: Vec<String> = phases
            .iter()
            .filter(|p| p["shortfall"] == kind)
            .map(|p| {
                let (ph, why) = (p["phase"].as_str().unwrap(), p["reason"].as_str().unwrap());
                if why.is_empty() {
                    ph.to_string()
                } else {
                    format!("{ph} ({why})")
                }
            })
            .collect();
        if !these.is_empty() {
            line.push_str(&format!("; {name}: {}", these.join(", ")));
        }
    }
    line
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// The three files agree with run.json's status.
fn agree(run: &Value, md: &str, html: &str) {
    // The page joins a figure to its unit with a no-break space ("0.9 s");
    // the sentence reads the same.
    let html = &html.replace("&#160;", " ");
    let status = &run["status"];
    let complete = status["complete"].as_bool().unwrap();
    assert_eq!(run["complete"], complete, "{status}");
    assert_eq!(run["plan"]["complete"], complete, "{status}");
    assert_eq!(run["provenance"]["complete"], complete, "{status}");
    let line = expected_line(status);
    // summary.md folds a paragraph to the terminal's width: the status is
    // the paragraph's lines read as one.
    let para = md
        .split("\n\n")
        .find(|p| p.starts_with("**Status:** "))
        .map(|p| p.lines().collect::<Vec<_>>().join(" "));
    // A status longer than the paragraph's six lines (on a busy host more
    // phases are cut short, each with its reason) ends in the cut mark;
    // what is shown is the sentence's start, report.html has it whole.
    let para = para.expect("a status paragraph in summary.md");
    let shown = para.strip_prefix("**Status:** ").unwrap_or(&para);
    match shown.strip_suffix(" ...") {
        Some(head) => {
            assert!(line.starts_with(head), "{md}");
            assert!(head.len() > 200, "cut early: {md}");
        }
        None => assert_eq!(shown, line, "{md}"),
    }
    let row = html_escape(&line);
    assert!(html.contains(&row), "{row} not in report.html");
    if complete {
        assert!(!html.contains("partial result"), "{line}");
        assert!(!html.contains("id=\"status\""), "no banner: {line}");
    } else {
        assert!(
            html.contains(&format!(
                "<p class=\"warn\" id=\"status\">This run is {row}.</p>"
            )),
            "{row}"
        );
    }
}

#[test]
fn a_run_cut_by_the_budget_is_complete_in_all_three_files() {
    let t = TempDir::new("runstatus");
    // On a busy host a 2 s plan may be a refusal naming a longer budget,
    // which is then run.
    let o = main_job_in(
        &[
            "run",
            "--budget",
            "2s",
            "--size",
            "32MiB",
            "--report-dir",
            "rep",
        ],
        t.path(),
        &[],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = t.path().join("rep");
    let (run, md, html) = folder(&dir);
    agree(&run, &md, &html);
    // Nothing was interrupted and nothing failed here: the run is complete,
    // whatever the budget cut.
    assert_eq!(run["complete"], true);
    for p in run["status"]["phases"].as_array().unwrap() {
        assert!(
            p["shortfall"] == "budget" || p["shortfall"] == "other",
            "{p}"
        );
    }
    // An extra phase whose own document says `complete: false` because its
    // share was spent does not make the run's page say "partial result".
    for (key, file) in [
        ("c2c", "c2c.json"),
        ("loaded_latency", "loaded-latency.json"),
        ("peak", "peak.json"),
        ("sweep", "sweep.json"),
    ] {
        if run[key]["status"] == "partial" {
            let doc: Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join(file)).unwrap()).unwrap();
            assert_eq!(doc["complete"], false, "{file}");
            let name = run["status"]["phases"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["reason"] == run[key]["reason"])
                .unwrap_or_else(|| panic!("{key} partial but not in status"));
            assert_eq!(name["shortfall"], "budget", "{name}");
        }
    }
    // `numaprobe report` rebuilds the same page from the folder.
    let o = numaprobe(&["report", "rep"], t.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (_, _, again) = folder(&dir);
    agree(&run, &md, &again);
    // The set-ups, written once: in each matrix, not again in the plan.
    let plan = &run["plan"];
    for p in plan["phases"].as_array().unwrap() {
        assert!(
            p.get("setups").is_none() && p.get("setup_s").is_none(),
            "{p}"
        );
    }
    assert!(plan.get("setup_s").is_none(), "{plan}");
    let setups = run["latency"]["setups"].as_array().unwrap();
    assert!(setups.iter().all(|s| s["seconds"].as_f64().unwrap() >= 0.0));
    let n = setups.len();
    assert!(n >= 1);
    assert!(
        md.contains(&format!("**Buffer set-ups:** latency {n} x 32 MiB in ")),
        "{md}"
    );
}

#[test]
fn a_failed_cell_makes_the_run_incomplete_in_all_three_files() {
    let t = TempDir::new("runstatusfail");
    let o = main_job_in(
        &[
            "run",
            "--budget",
            "3s",
            "--size",
            "32MiB",
            "--report-dir",
            "rep",
        ],
        t.path(),
        &[("NUMAPROBE_FAULT_FULL_CELL", "0")],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let (run, md, html) = folder(&t.path().join("rep"));
    agree(&run, &md, &html);
    assert_eq!(run["complete"], false);
    let failed: Vec<&Value> = run["status"]["phases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["shortfall"] == "failed")
        .collect();
    assert_eq!(failed[0]["phase"], "latency", "{}", run["status"]);
    assert!(
        md.contains("**Status:** incomplete; failed: latency (1 of "),
        "{md}"
    );
}
