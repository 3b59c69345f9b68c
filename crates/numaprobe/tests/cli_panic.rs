//! A panic anywhere in a measuring command, injected at every stage the
//! binary's fault switch knows (`NUMAPROBE_FAULT_PANIC`, feature
//! `fault-injection`, on for these tests): the real binary must end with
//! exit 1, say it in one line without a backtrace, never hang (a worker that
//! panicked must not leave the others waiting), and leave what it measured
//! before the panic in its output, every file whole.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use common::TempDir;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Far above what any run here takes (a few seconds): only a hang gets
/// there, and the child is killed so the test fails instead of hanging too.
const WALL: Duration = Duration::from_secs(240);

/// The main job, small: both matrices fit whatever the machine's load.
const RUN: &[&str] = &[
    "run",
    "--budget",
    "5s",
    "--size",
    "16MiB",
    "--report-dir",
    "rep",
];

struct Ended {
    code: Option<i32>,
    stderr: String,
}

/// Run the built binary in `cwd` with a panic injected as `fault` says
/// (`STAGE` or `STAGE:N`), as a user would see it (no `RUST_BACKTRACE`).
fn panicking(fault: &str, args: &[&str], cwd: &Path) -> Ended {
    let err_path = cwd.join("stderr.txt");
    let mut child = Command::new(env!("CARGO_BIN_EXE_numaprobe"))
        .args(args)
        .current_dir(cwd)
        .env("NUMAPROBE_FAULT_PANIC", fault)
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .expect("run numaprobe");
    let began = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if began.elapsed() > WALL {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{fault} {args:?}: still running after {WALL:?} (a hang): {}",
                std::fs::read_to_string(&err_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ended {
        code: status.code(),
        stderr: std::fs::read_to_string(&err_path).unwrap(),
    }
}

/// What every panic ends with: exit 1 and one line naming it, asking for a
/// report; no backtrace, and no second error line repeating it.
fn said_once(e: &Ended, fault: &str) {
    let stage = fault.split(':').next().unwrap();
    assert_eq!(e.code, Some(1), "{fault}: {}", e.stderr);
    let lines: Vec<&str> = e
        .stderr
        .lines()
        .filter(|l| l.contains("internal error"))
        .collect();
    assert_eq!(lines.len(), 1, "{fault}: {}", e.stderr);
    let l = lines[0];
    assert!(l.starts_with("numaprobe: internal error"), "{l}");
    assert!(l.contains(&format!("injected panic at {stage} ")), "{l}");
    assert!(l.contains("please report"), "{l}");
    for never in [
        "panicked at",
        "stack backtrace",
        "RUST_BACKTRACE=",
        "numaprobe: error:",
    ] {
        assert!(
            !e.stderr.contains(never),
            "{fault}: {never:?} in {}",
            e.stderr
        );
    }
}

fn read_json(p: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not whole JSON: {e}", p.display()))
}

/// The files of `dir` (none when it is absent): never a temporary file left
/// by a cut write, and every JSON file whole.
fn whole_files(dir: &Path) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = rd
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for n in &names {
        assert!(
            !n.ends_with(".tmp"),
            "{}: a temporary file left: {n}",
            dir.display()
        );
        if n.ends_with(".json") {
            read_json(&dir.join(n));
        }
    }
    names
}

/// A failure record that says a thread panicked.
fn failed_by_panic(doc: &serde_json::Value) -> bool {
    doc["failed"].as_array().is_some_and(|f| {
        f.iter()
            .any(|x| x["reason"].as_str().is_some_and(|r| r.contains("panicked")))
    })
}

#[test]
fn a_panicked_latency_thread_ends_the_main_job_with_its_report() {
    let t = TempDir::new("panic-lat");
    let e = panicking("latency-cell", RUN, t.path());
    said_once(&e, "latency-cell");
    let dir = t.path().join("rep");
    whole_files(&dir);
    let run = read_json(&dir.join("run.json"));
    let lat = &run["latency"];
    assert_eq!(lat["complete"], false, "{lat}");
    assert!(failed_by_panic(lat), "{lat}");
    // The panic stopped the run: nothing measured after it.
    assert!(run["bandwidth"]["cells"]
        .as_array()
        .is_none_or(|c| c.is_empty()));
}

#[test]
fn a_panicked_bandwidth_worker_keeps_the_latency_cells_measured_before() {
    let t = TempDir::new("panic-bw");
    let e = panicking("bandwidth-worker", RUN, t.path());
    said_once(&e, "bandwidth-worker");
    let dir = t.path().join("rep");
    let files = whole_files(&dir);
    for f in ["run.json", "latency.json", "bandwidth.json", "summary.md"] {
        assert!(files.iter().any(|n| n == f), "{f} missing: {files:?}");
    }
    let run = read_json(&dir.join("run.json"));
    assert_eq!(run["latency"]["complete"], true, "{}", run["latency"]);
    assert!(!run["latency"]["cells"].as_array().unwrap().is_empty());
    let bw = &run["bandwidth"];
    assert_eq!(bw["complete"], false, "{bw}");
    assert!(failed_by_panic(bw), "{bw}");
    // The phases after the matrices did not start.
    assert_eq!(run["c2c"]["status"], "skipped", "{}", run["c2c"]);
}

#[test]
fn a_coordinator_panic_after_a_saved_cell_keeps_that_cell() {
    // The panic comes on the coordinating thread, right after the first
    // finished cell was saved: the saved file holds it, whole.
    let t = TempDir::new("panic-done");
    let e = panicking("cell-done", RUN, t.path());
    said_once(&e, "cell-done");
    whole_files(&t.path().join("rep"));
    let lat = read_json(&t.path().join("rep/latency.json"));
    assert_eq!(lat["cells"].as_array().unwrap().len(), 1, "{lat}");

    let out = t.path().join("lat.json");
    let args = [
        "latency",
        "--size",
        "8MiB",
        "--time-budget",
        "30ms",
        "--pages",
        "4k",
        "-o",
    ];
    let mut args = args.to_vec();
    args.push(out.to_str().unwrap());
    let e = panicking("cell-done", &args, t.path());
    said_once(&e, "cell-done");
    let doc = read_json(&out);
    assert_eq!(doc["cells"].as_array().unwrap().len(), 1, "{doc}");
    assert_eq!(doc["complete"], false, "{doc}");
}

#[test]
fn a_panic_while_writing_leaves_every_file_whole_and_the_earlier_ones_kept() {
    // The panic comes with a file's bytes in its temporary file, before the
    // rename: the N-th write of the run, for the first writes (report
    // folder, manifest, topology, the matrices' saves). Each run keeps every
    // file the one before it (cut one write earlier) kept.
    let mut kept: Vec<String> = Vec::new();
    for n in 0..=10 {
        let t = TempDir::new(&format!("panic-out{n}"));
        let fault = format!("output:{n}");
        let e = panicking(&fault, RUN, t.path());
        said_once(&e, &fault);
        let files = whole_files(&t.path().join("rep"));
        for f in &kept {
            assert!(files.contains(f), "{fault}: {f} lost: {files:?}");
        }
        kept = files;
    }
    assert!(
        kept.iter().any(|f| f == "latency.json"),
        "ten writes reach the latency matrix: {kept:?}"
    );
    // A single document (-o): its first write cut leaves no file at all;
    // its second leaves the first, whole.
    let t = TempDir::new("panic-out-o");
    let out = t.path().join("bw.json");
    let mut args = vec![
        "bandwidth",
        "--size",
        "8MiB",
        "--time-budget",
        "30ms",
        "--pages",
        "4k",
    ];
    args.extend(["-o", out.to_str().unwrap()]);
    said_once(&panicking("output", &args, t.path()), "output");
    assert!(!out.exists());
    assert_eq!(whole_files(t.path()), vec!["stderr.txt".to_string()]);
    said_once(&panicking("output:1", &args, t.path()), "output:1");
    let doc = read_json(&out);
    assert_eq!(doc["cells"].as_array().unwrap().len(), 1, "{doc}");
    whole_files(t.path());
}

/// A measuring command whose worker threads meet at a barrier: the first
/// time a worker reaches `fault`'s stage it panics; the command must end,
/// with its document written (`complete: false`).
fn worker_panic_ends(fault: &str, args: &[&str]) -> serde_json::Value {
    let t = TempDir::new(&format!("panic-{}", fault.replace(':', "-")));
    let out = t.path().join("out.json");
    let mut args = args.to_vec();
    args.extend(["-o", out.to_str().unwrap()]);
    let e = panicking(fault, &args, t.path());
    said_once(&e, fault);
    whole_files(t.path());
    let doc = read_json(&out);
    assert_eq!(doc["complete"], false, "{fault}: {doc}");
    doc
}

#[test]
fn a_panicked_worker_ends_every_barrier_command() {
    let bw = worker_panic_ends(
        "bandwidth-worker",
        &[
            "bandwidth",
            "--scaling",
            "--threads",
            "2",
            "--size",
            "8MiB",
            "--time-budget",
            "30ms",
        ],
    );
    assert!(failed_by_panic(&bw), "{bw}");
    let peak = worker_panic_ends(
        "peak-worker",
        &[
            "peak",
            "--mix",
            "read,3:1",
            "--size",
            "1MiB",
            "--pages",
            "4k",
            "--time-budget",
            "1s",
        ],
    );
    assert_eq!(peak["interrupted"], true, "{peak}");
    let policy = worker_panic_ends(
        "policy-worker",
        &[
            "policy",
            "--size",
            "8MiB",
            "--rounds",
            "3",
            "--sample-time",
            "5ms",
        ],
    );
    assert_eq!(policy["interrupted"], true, "{policy}");
    let locks = worker_panic_ends("locks-worker", &["c2c", "--locks", "--locks-time", "50ms"]);
    assert!(failed_by_panic(&locks), "{locks}");
}

#[test]
fn a_panicked_study_thread_keeps_the_cases_finished_before() {
    // One thread per case, one warm-up and two samples: arrivals 0 to 2 are
    // the first case's, so the fourth is the second case's first round.
    let study = worker_panic_ends(
        "study-worker:3",
        &[
            "study",
            "0.0.w.0",
            "/",
            "0.1.w.0",
            "--size",
            "1MiB",
            "--passes",
            "1",
            "--repeats",
            "2",
            "--format",
            "json",
        ],
    );
    let exps = study["experiments"].as_array().unwrap();
    assert_eq!(exps.len(), 1, "{study}");
    assert_eq!(exps[0]["cases"].as_array().unwrap().len(), 1, "{study}");
}
