//! `numaprobe check --measured` when this node's run was measured with
//! other parameters than the expectation's (the real case: bandwidth with
//! 2 threads expected, 1 found on a node whose job saw fewer CPUs): the
//! matrix is named as not compared, with each parameter expected and
//! found, in the text, JSON and Markdown forms; it neither fails the check
//! nor drains the node, whatever its cells say.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use cli::{s, text};
use common::TempDir;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The real run (tests/fixtures/fleet, node1): its bandwidth cell was
/// measured with 2 threads.
fn real_run() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/fleet/taskset-one-cpu/node1/run.json")
}

/// A report folder holding the real run as measured with one bandwidth
/// thread, its bandwidth half the expectation's: outside any band, were it
/// judged.
fn one_thread(dir: &Path) -> PathBuf {
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(real_run()).unwrap()).unwrap();
    let m = &mut doc["bandwidth"];
    for c in m["cells"].as_array_mut().unwrap() {
        assert_eq!(c["params"]["threads"], 2, "{c}");
        c["params"]["threads"] = 1.into();
        for v in c["samples"].as_array_mut().unwrap() {
            *v = (v.as_f64().unwrap() * 0.5).into();
        }
        for k in ["median", "min", "max"] {
            c[k] = (c[k].as_f64().unwrap() * 0.5).into();
        }
    }
    for row in m["matrix"].as_array_mut().unwrap() {
        for v in row.as_array_mut().unwrap() {
            if let Some(x) = v.as_f64() {
                *v = (x * 0.5).into();
            }
        }
    }
    let folder = dir.join("one-thread");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("run.json"), doc.to_string()).unwrap();
    folder
}

const NOTE: &str = "bandwidth not compared: measured with other parameters (threads: expected 2, found 1); its cells are not judged against the band";

/// The health check's cells only (the expectation is another machine's),
/// with `path` first on PATH and the Slurm node np7.
fn check(expect: &Path, measured: &Path, path: &Path, more: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_numaprobe"))
        .args(["check", "--expect", s(expect), "--measured", s(measured)])
        .args(["--only", "latency,bandwidth"])
        .args(more)
        .env("PATH", format!("{}:/usr/bin:/bin", path.display()))
        .env("SLURMD_NODENAME", "np7")
        .output()
        .unwrap()
}

/// A stand-in scontrol that records every call it gets in `calls`.
fn recording_scontrol(dir: &Path) -> (PathBuf, PathBuf) {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let calls = dir.join("calls");
    let p = bin.join("scontrol");
    std::fs::write(
        &p,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >>'{}'\necho NodeName=np7 State=IDLE\n",
            calls.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    (bin, calls)
}

#[test]
fn a_thread_count_difference_is_named_not_judged_and_never_drains() {
    let t = TempDir::new("check-params");
    let expect = t.path().join("run.json");
    std::fs::copy(real_run(), &expect).unwrap();
    let here = one_thread(t.path());
    let (bin, calls) = recording_scontrol(t.path());

    let o = check(&expect, &here, &bin, &[]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(err.contains(&format!("numaprobe: note: {NOTE}")), "{err}");
    // Not a difference, and its prefix once: nothing on stdout names it.
    assert!(!out.contains("bandwidth: bandwidth"), "{out}");
    assert!(!out.contains("threads"), "{out}");
    assert!(
        out.starts_with(&format!("{} matches {} (report)", s(&here), s(&expect))),
        "{out}"
    );

    let o = check(&expect, &here, &bin, &["--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["matches"], true, "{doc}");
    assert_eq!(doc["differences"], serde_json::json!([]), "{doc}");
    assert!(
        doc["notes"].as_array().unwrap().iter().any(|n| n == NOTE),
        "{doc}"
    );

    let o = check(&expect, &here, &bin, &["--format", "markdown"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let md = text(&o.stdout);
    assert!(md.contains("## Notes\n\n"), "{md}");
    assert!(md.contains(&format!("- {NOTE}\n")), "{md}");
    assert!(!md.contains("## Differences"), "{md}");

    // With --slurm-drain: nothing would be done, and nothing is.
    let o = check(&expect, &here, &bin, &["--slurm-drain", "--dry-run"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(
        text(&o.stderr).contains("numaprobe: dry run: np7 matches: nothing would be done"),
        "{o:?}"
    );
    let o = check(&expect, &here, &bin, &["--slurm-drain"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(!calls.exists(), "scontrol was called: {o:?}");
}
