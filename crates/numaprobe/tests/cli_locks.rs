//! `numaprobe c2c --locks` end to end: bad input is one line and exit 2
//! before any thread starts; a short run gives every format and says which
//! atomics ran; SIGINT ends it with what it finished (complete: false, exit
//! 130). Nothing depends on timing.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use cli::{interrupted, json, numaprobe, ok, report_page, usage_error, Sigint};
use common::TempDir;

fn short(more: &[&str]) -> Vec<String> {
    ["c2c", "--locks", "--locks-time", "10ms", "--threads", "1,2"]
        .iter()
        .chain(more)
        .map(|s| s.to_string())
        .collect()
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for (args, says) in [
        (
            vec!["--ops", "cas"],
            "--ops: invalid value 'cas' (valid: atomic_add, spin_lock)",
        ),
        (vec!["--sharing", "none"], "--sharing: invalid value 'none'"),
        (
            vec!["--placement", "same_socket"],
            "--placement: invalid value 'same_socket'",
        ),
        (
            vec!["--atomics", "fast"],
            "--atomics: invalid value 'fast' (valid: auto, lse, llsc)",
        ),
        (vec!["--threads", "0"], "--threads: invalid value '0'"),
        (vec!["--threads", "4096"], "4096 threads"),
        (
            vec!["--locks-time", "1ms"],
            "--locks-time: '1ms' is out of range",
        ),
        (vec!["--cpus", "100000"], "CPU 100000"),
    ] {
        let a: Vec<&str> = ["c2c", "--locks"].into_iter().chain(args).collect();
        let err = usage_error(&numaprobe(&a));
        assert!(err.contains(says), "{a:?}: {err}");
    }
}

#[test]
fn atomics_the_cpu_lacks_are_refused_naming_what_it_has() {
    if cfg!(target_arch = "aarch64") {
        return; // the arm64 stage checks lse/llsc under qemu (scripts/arm64-atomics-test)
    }
    for kind in ["lse", "llsc"] {
        let err = usage_error(&numaprobe(&["c2c", "--locks", "--atomics", kind]));
        assert!(err.contains(&format!("--atomics {kind}:")), "{err}");
        assert!(
            err.contains("this CPU has x86 lock (valid here: auto)"),
            "{err}"
        );
    }
}

#[test]
fn a_short_run_in_every_format_says_which_atomics_ran() {
    let doc = json(&numaprobe(&short(&[
        "--format",
        "json",
        "--ops",
        "atomic_add",
    ])));
    assert_eq!(doc["schema"], "numaprobe/1");
    assert_eq!(doc["complete"], true);
    let atomics = doc["atomics"].as_str().unwrap();
    assert!(["x86 lock", "lse", "load/store exclusive"].contains(&atomics));
    let runs = doc["runs"].as_array().unwrap();
    assert!(!runs.is_empty());
    for r in runs {
        assert_eq!(r["op"], "atomic_add");
        assert!(r["ops_per_s"].as_f64().unwrap() > 0.0);
        assert_eq!(
            r["cpus"].as_array().unwrap().len(),
            r["threads"].as_u64().unwrap() as usize
        );
    }
    assert!(doc["provenance"].is_object());
    let t = ok(&numaprobe(&short(&[
        "--ops",
        "spin_lock",
        "--sharing",
        "shared",
    ])));
    assert!(t.contains(&format!("atomics: {atomics}")), "{t}");
    assert!(t.contains("spin_lock") && t.contains("Mops/s"), "{t}");
    let csv = ok(&numaprobe(&short(&[
        "--format",
        "csv",
        "--ops",
        "atomic_add",
        "--sharing",
        "own_line",
    ])));
    assert!(csv.starts_with("op,sharing,placement,threads"), "{csv}");
    let md = ok(&numaprobe(&short(&[
        "--format",
        "markdown",
        "--ops",
        "atomic_add",
        "--sharing",
        "shared",
    ])));
    assert!(md.starts_with("## numaprobe c2c --locks"), "{md}");
}

#[test]
fn sigint_ends_with_what_finished_and_exits_130() {
    let t = TempDir::new("locks-sig");
    let out = t.path().join("locks.json");
    // The file is rewritten after every run: the signal comes once the
    // first run is in it, and the interrupted document keeps that run.
    let (doc, _) = interrupted(
        &[
            "c2c",
            "--locks",
            "--locks-time",
            "500ms",
            "-o",
            out.to_str().unwrap(),
        ],
        &out,
        Sigint::WhenWritten,
    );
    assert_eq!(doc["provenance"]["complete"], false);
    assert!(!doc["runs"].as_array().unwrap().is_empty(), "{doc}");
}

#[test]
fn report_shows_a_locks_document() {
    let t = TempDir::new("locks-report");
    let f = t.path().join("locks.json");
    ok(&numaprobe(&short(&[
        "--ops",
        "atomic_add",
        "--sharing",
        "shared",
        "-o",
        f.to_str().unwrap(),
    ])));
    let page = report_page(t.path());
    assert!(page.contains("Lock and atomic contention"), "no section");
    assert!(page.contains("atomics: "), "no atomics line");
    assert!(page.contains("from locks.json"), "not classified");
}
