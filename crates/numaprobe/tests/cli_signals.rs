//! Stopping a measurement with real signals: SIGINT and SIGTERM sent to the
//! binary while it measures must leave a valid, partial document behind
//! (`complete: false`) and end with 130 / 143 and one line on stderr.
//! Nothing here depends on timing: the tests wait (with generous limits)
//! until the process is measuring, and only assert what it wrote.

#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

mod signalled;

use common::TempDir;
use signalled::{signal_and_wait, spawn, stderr, wait_until};
use std::path::Path;
use std::process::Child;
use std::time::Duration;

const PATIENCE: Duration = Duration::from_secs(180);

/// Wait until the process runs a measuring thread (every measurement runs
/// on a thread of its own, after the signal handlers are installed).
fn wait_until_measuring(child: &mut Child, cwd: &Path) {
    wait_until(child, cwd, PATIENCE, "never started measuring", |pid| {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .ok()
            .and_then(|t| {
                t.lines()
                    .find_map(|l| l.strip_prefix("Threads:"))
                    .and_then(|n| n.trim().parse::<u32>().ok())
            })
            .unwrap_or(0)
            >= 2
    });
}

fn document(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{} was not written: {e}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON ({e}): {text}", path.display()))
}

fn interrupted_latency(sig: libc::c_int, code: i32, name: &str) {
    let t = TempDir::new("sig-latency");
    // 30 s per cell and a CV target no cell reaches: the signal comes long
    // before the first cell is done.
    let mut child = spawn(
        &[
            "latency",
            "--time-budget",
            "30s",
            "--cv-target",
            "0",
            "--size",
            "64MiB",
            "-o",
            "f.json",
        ],
        t.path(),
    );
    wait_until_measuring(&mut child, t.path());
    let status = signal_and_wait(&mut child, sig, t.path(), PATIENCE);
    let err = stderr(t.path());
    assert_eq!(status.code(), Some(code), "{err}");
    let doc = document(&t.path().join("f.json"));
    assert_eq!(doc["schema"], "numaprobe/1");
    assert_eq!(doc["complete"], false, "{doc}");
    assert_eq!(doc["interrupted"], true, "{doc}");
    assert_eq!(doc["provenance"]["complete"], false, "{doc}");
    // The cell cut short keeps the samples it took and says why it stopped.
    for c in doc["cells"].as_array().unwrap() {
        assert_eq!(c["stop"], "interrupted", "{c}");
    }
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines.last().copied(),
        Some(
            format!(
                "numaprobe: interrupted by {name}; finished cells are in the output (complete: false)"
            )
            .as_str()
        ),
        "{err}"
    );
}

#[test]
fn sigint_during_the_first_cell_leaves_a_partial_document_and_exits_130() {
    interrupted_latency(libc::SIGINT, 130, "SIGINT");
}

#[test]
fn sigterm_during_the_first_cell_leaves_a_partial_document_and_exits_143() {
    interrupted_latency(libc::SIGTERM, 143, "SIGTERM");
}

#[test]
fn an_interrupted_study_keeps_its_finished_cases() {
    let t = TempDir::new("sig-study");
    // Many identical cases of about a second each: the study stops after
    // the case in progress, long before the last.
    let mut args: Vec<&str> = vec!["study"];
    for i in 0..100 {
        if i > 0 {
            args.push("/");
        }
        args.push("0.0.r.0");
    }
    args.extend([
        "--repeats",
        "20",
        "--passes",
        "10",
        "--size",
        "64MiB",
        "-o",
        "s.json",
    ]);
    let mut child = spawn(&args, t.path());
    wait_until_measuring(&mut child, t.path());
    let status = signal_and_wait(&mut child, libc::SIGINT, t.path(), PATIENCE);
    let err = stderr(t.path());
    assert_eq!(status.code(), Some(130), "{err}");
    let doc = document(&t.path().join("s.json"));
    assert_eq!(doc["complete"], false, "{doc}");
    assert_eq!(doc["provenance"]["complete"], false);
    let cases = doc["experiments"][0]["cases"]
        .as_array()
        .map_or(0, |c| c.len());
    assert!(cases < 100, "the study ran to its end: {cases} cases");
    assert!(err.contains("interrupted by SIGINT"), "{err}");
}
