//! `numaprobe tune -- CMD` end to end with a real OpenMP program: the
//! STREAM-like kernel of tests/data/stream.c, built here with
//! `gcc -fopenmp`. Asserted: every candidate ran every round, the ranking
//! and the winner are there, each run's memory distribution was sampled
//! from numa_maps, the child got its CPU set and OpenMP variables, a
//! candidate under which the program fails is reported and not ranked, a
//! missing program is a usage error with nothing run, and Ctrl-C ranks the
//! finished rounds (complete: false, exit 130). No assertion is about time.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use cli::{json, numaprobe_in, usage_error};
use common::TempDir;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Build the kernel in `dir` (gcc and libgomp are part of the test setup:
/// a missing compiler fails loudly rather than skipping).
fn build_stream(dir: &Path) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/stream.c");
    let out = Command::new("gcc")
        .args(["-O2", "-fopenmp", "-o"])
        .arg(dir.join("stream"))
        .arg(&src)
        .output()
        .expect("gcc is needed for the tune tests (apt-get install gcc)");
    assert!(
        out.status.success(),
        "gcc -fopenmp failed (is libgomp installed?): {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn allowed_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn candidates(doc: &Value) -> &Vec<Value> {
    doc["candidates"].as_array().expect("candidates")
}

#[test]
fn every_candidate_runs_every_round_and_is_ranked_with_its_memory_sampled() {
    let d = TempDir::new("tune-stream");
    build_stream(d.path());
    let threads = allowed_cpus().min(2).to_string();
    // 2M doubles x 3 arrays = 48 MB, 20 iterations: long enough (about a
    // second) for several numa_maps samples.
    let o = numaprobe_in(
        &[
            "tune",
            "--runs",
            "2",
            "--threads",
            &threads,
            "--format",
            "json",
            "--",
            "./stream",
            "2000000",
            "20",
        ],
        d.path(),
    );
    let doc = json(&o);
    assert_eq!(doc["schema"], "numaprobe/1");
    assert_eq!(doc["complete"], true);
    assert_eq!(doc["rounds_completed"], 2);
    assert_eq!(doc["threads_from"], "--threads");
    let cands = candidates(&doc);
    let nodes = doc["mem_nodes"].as_array().unwrap().len();
    // compact, scatter, none x first touch (+ the memory policies where
    // there is more than one node); those with the same placement on this
    // machine run once, the others listed as not run.
    let folded = doc["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| {
            s["reason"]
                .as_str()
                .unwrap()
                .contains("the same placement as")
        })
        .count();
    assert!(cands.len() + folded >= 3);
    if nodes == 1 {
        assert_eq!(cands.len() + folded, 3);
        assert!(doc["skipped"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("only the binding"));
    }
    let ranking = &doc["rankings"][0];
    assert_eq!(ranking["better"], "lower");
    assert_eq!(ranking["unit"], "s");
    let entries = ranking["entries"].as_array().unwrap();
    assert_eq!(entries.len(), cands.len());
    assert!(entries
        .iter()
        .all(|e| e["ranked"] == true && e["samples"] == 2));
    // Sorted by median.
    let medians: Vec<f64> = entries
        .iter()
        .map(|e| e["median"].as_f64().unwrap())
        .collect();
    assert!(medians.windows(2).all(|w| w[0] <= w[1]), "{medians:?}");
    for c in cands {
        let runs = c["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2, "{}", c["label"]);
        assert!(c["failure"].is_null());
        for r in runs {
            assert_eq!(r["ok"], true);
            assert_eq!(r["exit_status"], 0);
            assert!(r["memory_samples"].as_u64().unwrap() >= 1, "{}", c["label"]);
            // Its CPU time is read from the kernel's account of the reaped
            // program: some, and no more than every CPU for the whole run.
            let cpu = r["cpu_s"].as_f64().unwrap();
            let wall = r["wall_s"].as_f64().unwrap();
            let cpus = std::thread::available_parallelism().unwrap().get() as f64;
            assert!(cpu > 0.0 && cpu <= wall * cpus + 0.05, "{r}");
            // The arrays (48 MB) are in the peak sample, and on the
            // machine's memory nodes.
            let anon: u64 = r["memory_peak"]["anon"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n["bytes"].as_u64().unwrap())
                .sum();
            assert!(anon >= 40_000_000, "{}: peak anon {anon}", c["label"]);
        }
    }
    // Two runs a side can never be beyond noise (the smallest p is 1/3):
    // no winner is named, and the notes say why.
    assert!(doc["winner"].is_null(), "{}", doc["winner"]);
    assert!(doc["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("too few")));
}

#[test]
fn the_child_gets_its_cpu_set_and_openmp_variables() {
    let d = TempDir::new("tune-env");
    let script = "echo \"$OMP_NUM_THREADS ${OMP_PLACES-unset} $OMP_PROC_BIND $(grep Cpus_allowed_list /proc/self/status | cut -f2)\" >> log";
    // OMP_NUM_THREADS comes from the environment when --threads is not
    // given; an OMP_PLACES of the user's is replaced (bound) or removed.
    let doc = json(
        &Command::new(env!("CARGO_BIN_EXE_numaprobe"))
            .args([
                "tune", "--runs", "1", "--format", "json", "--", "sh", "-c", script,
            ])
            .current_dir(d.path())
            .env("OMP_NUM_THREADS", "1")
            .env("OMP_PLACES", "cores")
            .output()
            .unwrap(),
    );
    assert_eq!(doc["threads"], 1);
    assert_eq!(doc["threads_from"], "OMP_NUM_THREADS");
    let log = std::fs::read_to_string(d.path().join("log")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    let cands = candidates(&doc);
    assert_eq!(lines.len(), cands.len());
    for (c, line) in cands.iter().zip(&lines) {
        let cpus: Vec<u64> = c["cpus"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        let f: Vec<&str> = line.split(' ').collect();
        assert_eq!(f[0], "1", "{line}");
        if c["binding"] == "none" {
            // OMP_PLACES removed, binding off, every allowed CPU.
            assert_eq!(f[1], "unset", "{line}");
            assert_eq!(f[2], "false");
        } else {
            assert_eq!(f[1], format!("{{{}}}", cpus[0]), "{line}");
            assert_eq!(f[2], "close");
            assert_eq!(f[3], cpus[0].to_string(), "{line}");
        }
    }
}

#[test]
fn a_failing_candidate_is_reported_with_status_and_stderr_and_not_ranked() {
    let d = TempDir::new("tune-fail");
    build_stream(d.path());
    let o = Command::new(env!("CARGO_BIN_EXE_numaprobe"))
        .args([
            "tune",
            "--runs",
            "2",
            "--threads",
            "1",
            "--format",
            "json",
            "--",
        ])
        .args(["./stream", "100000", "2"])
        .current_dir(d.path())
        .env("STREAM_FAIL_IF_UNBOUND", "1")
        .output()
        .unwrap();
    let doc = json(&o);
    let mut failed = 0;
    for c in candidates(&doc) {
        if c["binding"] == "none" {
            failed += 1;
            assert_eq!(c["failure"]["status"], "exit status 3");
            assert!(c["failure"]["stderr_tail"]
                .as_str()
                .unwrap()
                .contains("refusing to run unbound"));
            assert!(c["rank"].is_null());
            // Not run again after it failed.
            assert_eq!(c["runs"].as_array().unwrap().len(), 1);
        } else {
            assert!(c["rank"].is_number(), "{}", c["label"]);
        }
    }
    assert!(failed >= 1);
    let entries = doc["rankings"][0]["entries"].as_array().unwrap();
    for e in entries {
        let unbound = e["label"].as_str().unwrap().starts_with("none/");
        assert_eq!(e["ranked"], !unbound, "{e}");
    }
    // Unranked entries come last.
    let first_unranked = entries.iter().position(|e| e["ranked"] == false).unwrap();
    assert!(entries[first_unranked..]
        .iter()
        .all(|e| e["ranked"] == false));
    assert!(!doc["winner"]["label"]
        .as_str()
        .unwrap()
        .starts_with("none/"));
    // The table shows the failure and the stderr.
    let t = Command::new(env!("CARGO_BIN_EXE_numaprobe"))
        .args([
            "tune",
            "--runs",
            "1",
            "--threads",
            "1",
            "--",
            "./stream",
            "1000",
            "1",
        ])
        .current_dir(d.path())
        .env("STREAM_FAIL_IF_UNBOUND", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&t.stdout);
    assert!(text.contains("FAILED: exit status 3"), "{text}");
    assert!(text.contains("| stream: refusing to run unbound"), "{text}");
}

#[test]
fn a_missing_or_non_executable_program_is_a_usage_error_and_nothing_runs() {
    let d = TempDir::new("tune-missing");
    let e = usage_error(&numaprobe_in(
        &["tune", "-o", "out.json", "--", "./no-such-program"],
        d.path(),
    ));
    assert!(e.contains("./no-such-program"), "{e}");
    let e = usage_error(&numaprobe_in(
        &["tune", "-o", "out.json", "--", "no-such-program-anywhere"],
        d.path(),
    ));
    assert!(e.contains("not found in PATH"), "{e}");
    std::fs::write(d.path().join("data.txt"), "x").unwrap();
    let e = usage_error(&numaprobe_in(&["tune", "--", "./data.txt"], d.path()));
    assert!(e.contains("not an executable"), "{e}");
    assert!(!d.path().join("out.json").exists());
    let o = Command::new(env!("CARGO_BIN_EXE_numaprobe"))
        .args(["tune", "--", "sh", "-c", "touch ran"])
        .current_dir(d.path())
        .env("OMP_NUM_THREADS", "many")
        .output()
        .unwrap();
    let e = usage_error(&o);
    assert!(e.contains("OMP_NUM_THREADS=\"many\""), "{e}");
    let e = usage_error(&numaprobe_in(
        &["tune", "--threads", "100000", "--", "sh", "-c", "touch ran"],
        d.path(),
    ));
    assert!(e.contains("--threads 100000"), "{e}");
    assert!(!d.path().join("ran").exists());
    // No command at all: clap's usage error.
    assert_eq!(
        numaprobe_in(&["tune", "--runs", "1"], d.path())
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn ctrl_c_ranks_the_finished_rounds_and_stops_the_child() {
    let d = TempDir::new("tune-int");
    let count = candidates(&json(&numaprobe_in(
        &[
            "tune",
            "--runs",
            "1",
            "--threads",
            "1",
            "--format",
            "json",
            "--",
            "true",
        ],
        d.path(),
    )))
    .len();
    // The first round's runs end at once; the first run of the second
    // round sleeps until it is stopped, and says so when a signal stops it
    // (tune ends a run with SIGTERM to its process group).
    let script = format!(
        "n=$(cat started 2>/dev/null | wc -l); echo $$ >> started; [ $n -lt {count} ] || \
         {{ trap 'echo $$ >> stopped; exit 143' TERM; sleep 60 & wait $!; }}"
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_numaprobe"))
        .args([
            "tune",
            "--runs",
            "3",
            "--threads",
            "1",
            "-o",
            "out.json",
            "--",
        ])
        .args(["sh", "-c", &script])
        .current_dir(d.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let began = Instant::now();
    let lines =
        || std::fs::read_to_string(d.path().join("started")).map_or(0, |s| s.lines().count());
    while lines() <= count {
        assert!(
            began.elapsed() < Duration::from_secs(60),
            "the second round did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    // The sleeping run was ended by a signal, not left to finish its
    // minute: it wrote its pid as the signal came.
    let stopped = std::fs::read_to_string(d.path().join("stopped")).unwrap_or_default();
    assert_eq!(
        stopped.lines().count(),
        1,
        "the sleeping run was not stopped: {stopped:?}"
    );
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("out.json")).unwrap()).unwrap();
    assert_eq!(doc["complete"], false);
    assert_eq!(doc["provenance"]["complete"], false);
    assert_eq!(doc["rounds_completed"], 1);
    // The interrupted run is neither counted nor a failure; the finished
    // round is ranked.
    for c in candidates(&doc) {
        assert!(c["failure"].is_null());
        assert_eq!(c["runs"].as_array().unwrap().len(), 1);
        assert!(c["rank"].is_number());
    }
    let entries = doc["rankings"][0]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), count);
    assert!(entries.iter().all(|e| e["ranked"] == true));
    assert_eq!(lines(), count + 1);
}
