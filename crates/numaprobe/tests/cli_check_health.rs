//! `numaprobe check` as a node health check runs it: exit 0 matches, 1
//! differs, 2 bad input, 3 could not check; a real machine's dump whose
//! node lost half its memory or whose THP mode changed; `--only` / `--skip`;
//! a fleet's group baseline gathered from real runs; `--slurm-drain` never
//! draining on a failure.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;
#[path = "cli/dump.rs"]
mod dump;

use cli::{numaprobe, s, text, usage_error};
use common::TempDir;
use dump::{dumps, Dumps};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn check(d: &Dumps, root: &Path, more: &[&str]) -> Output {
    let mut args = vec!["check", "--expect", s(&d.expect), "--sysfs-root", s(root)];
    args.extend_from_slice(more);
    numaprobe(&args)
}

#[test]
fn a_node_with_half_its_memory_differs_and_half_a_per_cent_less_matches() {
    let d = dumps("health-half", 4_194_304);
    assert_eq!(check(&d, &d.root, &[]).status.code(), Some(0));
    let o = check(&d, &d.changed, &[]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = text(&o.stdout);
    assert_eq!(
        out.lines().next().unwrap(),
        "memory: node 1: memory: expected 8 GiB, found 4 GiB",
        "{out}"
    );
    assert!(out.contains("memory per node (within 3 %)"), "{out}");
    // A tolerance wider than the loss lets it pass; --skip memory too.
    assert_eq!(
        check(&d, &d.changed, &["--mem-tolerance", "60%"])
            .status
            .code(),
        Some(0)
    );
    assert_eq!(
        check(&d, &d.changed, &["--skip", "memory"]).status.code(),
        Some(0)
    );
    // 0.5 % less (what a kernel's reservations move) matches.
    let d = dumps("health-less", 8_388_608 - 41_943);
    let o = check(&d, &d.changed, &[]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
}

#[test]
fn a_changed_thp_mode_differs_and_only_chooses_what_is_compared() {
    let d = dumps("health-thp", 8_388_608);
    let thp = d.changed.join("sys/kernel/mm/transparent_hugepage");
    std::fs::create_dir_all(&thp).unwrap();
    std::fs::write(thp.join("enabled"), "always [madvise] never\n").unwrap();
    let o = check(&d, &d.changed, &["--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let diffs = v["differences"].as_array().unwrap();
    assert_eq!(diffs.len(), 1, "{diffs:?}");
    assert_eq!(diffs[0]["section"], "thp");
    assert_eq!(diffs[0]["b"], "madvise");
    assert!(v["sections"].as_array().unwrap().len() > 10);
    let o = check(&d, &d.changed, &["--only", "cpus,nodes,memory"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let out = text(&o.stdout);
    assert!(!out.contains("huge pages mode"), "{out}");
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let d = dumps("health-bad", 8_388_608);
    let e = usage_error(&check(&d, &d.root, &["--only", "memory,dimms"]));
    assert!(
        e.contains("--only: 'dimms' is not a section; valid: machine, kernel, packages"),
        "{e}"
    );
    let e = usage_error(&check(&d, &d.root, &["--skip", "x".repeat(5000).as_str()]));
    assert!(e.len() < 600, "{e}");
    let o = check(&d, &d.root, &["--mem-tolerance", "lots"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("invalid value 'lots' (not a percentage; give one from 0 to 100"),
        "{o:?}"
    );
    let e = usage_error(&check(&d, &d.root, &["--group", "1"]));
    assert!(e.contains("is not a fleet.json"), "{e}");
    let e = usage_error(&check(&d, &d.root, &["--measured", s(&d.expect)]));
    assert!(
        e.contains("a topo document; check --measured takes a run, latency or bandwidth document"),
        "{e}"
    );
    // A half-written expectation (a disk filled while saving it).
    let cut = d.changed.join("cut.json");
    let whole = std::fs::read_to_string(&d.expect).unwrap();
    std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
    let o = numaprobe(&["check", "--expect", s(&cut), "--sysfs-root", s(&d.root)]);
    usage_error(&o);
}

#[test]
fn could_not_check_exits_3_and_never_1() {
    let d = dumps("health-fail", 4_194_304);
    // The output cannot be written: procfs takes no new file, even from root.
    let o = check(&d, &d.changed, &["-o", "/proc/numaprobe-check.txt"]);
    assert_eq!(o.status.code(), Some(3), "{o:?}");
    assert!(text(&o.stderr).contains("error: cannot write"), "{o:?}");
    // A panic while writing (the test build's fault switch) is a failure too.
    let out = d.changed.join("out.txt");
    let o = Command::new(env!("CARGO_BIN_EXE_numaprobe"))
        .args([
            "check",
            "--expect",
            s(&d.expect),
            "--sysfs-root",
            s(&d.root),
            "-o",
            s(&out),
        ])
        .env("NUMAPROBE_FAULT_PANIC", "output")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{o:?}");
    assert!(!out.exists());
}

#[test]
fn slurm_drain_never_drains_on_a_failure_nor_on_a_match() {
    let d = dumps("health-slurm", 4_194_304);
    // No scontrol on PATH: a differing node cannot be drained: exit 3, said why.
    let run = |root: &Path, more: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_numaprobe"))
            .args([
                "check",
                "--slurm-drain",
                "--expect",
                s(&d.expect),
                "--sysfs-root",
                s(root),
            ])
            .args(more)
            .env("PATH", "/nonexistent")
            .env("SLURMD_NODENAME", "np7")
            .output()
            .unwrap()
    };
    let o = run(&d.changed, &[]);
    assert_eq!(o.status.code(), Some(3), "{o:?}");
    let err = text(&o.stderr);
    assert!(err.contains("--slurm-drain: cannot run scontrol"), "{err}");
    // A match does not call scontrol at all.
    let o = run(&d.root, &[]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    // A name that would address more than one node is refused before anything.
    let e = usage_error(&run(&d.changed, &["--node", "np[1-3]"]));
    assert!(e.contains("is not one node's name"), "{e}");
}

/// A copy of the five real nodes' reports (`fleet --from` writes its
/// comparison into the folder it reads).
fn fleet_copy(dir: &Path) -> PathBuf {
    let src =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/fleet/taskset-one-cpu");
    let dst = dir.join("fleet");
    let st = Command::new("cp")
        .args(["-a", s(&src), s(&dst)])
        .status()
        .unwrap();
    assert!(st.success());
    dst
}

#[test]
fn a_fleet_group_is_a_baseline_for_measured_cells() {
    let dir = TempDir::new("health-fleet");
    let nodes = fleet_copy(dir.path());
    let fleet = dir.path().join("fleet.json");
    // Exit 1: the fleet is not uniform (node5 differs, node2 lacks
    // bandwidth); its fleet.json is written all the same.
    let o = numaprobe(&[
        "fleet",
        "--replace",
        "--from",
        s(&nodes),
        "--format",
        "json",
        "-o",
        s(&fleet),
    ]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(fleet.is_file());
    let node = |n: &str| nodes.join(n).join("run.json");
    let cells = |more: &[&str]| {
        let mut a = vec![
            "check",
            "--expect",
            s(&fleet),
            "--only",
            "latency,bandwidth",
        ];
        a.extend_from_slice(more);
        numaprobe(&a)
    };
    // node5 alone is group 2 (as fleet.md numbers it): its own figures are
    // the group's medians.
    let n5 = node("node5");
    let o = cells(&["--group", "2", "--measured", s(&n5), "--band", "0%"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(
        text(&o.stdout).contains("group 2 of 2 (1 node: node5)"),
        "{o:?}"
    );
    // Against the largest group with a 0.1 % band: node5's bandwidth cell
    // spread too far (CV 14 %) to be judged, and is named; the group has
    // no trusted latency figure to judge against.
    let o = cells(&["--measured", s(&n5), "--band", "0.1%", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["expect_kind"], "fleet");
    assert_eq!(v["differences"], serde_json::json!([]));
    assert!(
        text(&o.stderr).contains(
            "numaprobe: note: bandwidth: CPU node 0 -> memory node 0 not judged: found unstable: CV 14.0 %"
        ),
        "{o:?}"
    );
    // The same cell with a tight spread: 0.686 GB/s against the group's
    // trusted median 0.585 (nodes 1 and 3) is more bandwidth, which fails
    // only with --either-way.
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&n5).unwrap()).unwrap();
    let c = &mut doc["bandwidth"]["cells"][0];
    let m = c["median"].as_f64().unwrap();
    (c["cv"], c["min"], c["max"]) = (0.01.into(), (m * 0.99).into(), (m * 1.01).into());
    let tight = dir.path().join("node5-tight.json");
    std::fs::write(&tight, doc.to_string()).unwrap();
    let o = cells(&["--measured", s(&tight), "--band", "0.1%"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(
        text(&o.stderr).contains(
            "(+17 %) is more bandwidth than expected: not a failure (--either-way counts it)"
        ),
        "{o:?}"
    );
    let o = cells(&["--measured", s(&tight), "--band", "0.1%", "--either-way"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(
        text(&o.stdout).starts_with("bandwidth: CPU node 0 -> memory node 0: expected 0.6 GB/s, found 0.7 GB/s (+17 %, band 0.1 %)"),
        "{o:?}"
    );
    // Without --measured the cells are not compared, and a note says so.
    let o = cells(&[]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(text(&o.stderr).contains("give this node's own run.json with --measured"));
    let e = usage_error(&cells(&["--group", "9"]));
    assert!(
        e.contains("--group 9: the fleet has 2 signature groups (1 is the largest; valid: 1-2)"),
        "{e}"
    );
}

/// A document's text reaches check's table and the terminal cleaned: an
/// escape sequence or a carriage return in the expected THP mode is shown
/// as a visible escape, never sent as it is.
#[test]
fn a_hostile_thp_mode_in_the_document_reaches_the_table_cleaned() {
    let d = dumps("health-hostile", 8_388_608);
    let doc = std::fs::read_to_string(&d.expect).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&doc).unwrap();
    let hostile = "\u{1b}[31mmadvise\r\u{202e}";
    set_key(&mut v, "thp_mode", hostile);
    std::fs::write(&d.expect, serde_json::to_string(&v).unwrap()).unwrap();
    for format in ["table", "markdown", "csv"] {
        let o = check(&d, &d.root, &["--format", format]);
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        let (out, err) = (text(&o.stdout), text(&o.stderr));
        for s in [&out, &err] {
            assert!(!s.contains(['\u{1b}', '\r', '\u{202e}']), "{format}: {s:?}");
        }
        assert!(
            out.contains("\\u{1b}[31mmadvise\\r\\u{202e}"),
            "{format}: {out}"
        );
    }
}

/// Every `key` in a JSON tree set to `value`.
fn set_key(v: &mut serde_json::Value, key: &str, value: &str) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                if k == key {
                    *x = value.into();
                } else {
                    set_key(x, key, value);
                }
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| set_key(x, key, value)),
        _ => {}
    }
}

/// A path holding a newline and an escape sequence keeps the error on one
/// line and out of the terminal's control.
#[test]
fn a_hostile_path_keeps_the_error_one_line() {
    let d = dumps("health-path", 8_388_608);
    let bad = d.root.join("no\nsuch\u{1b}[2J.json");
    let o = numaprobe(&["check", "--expect", s(&bad), "--sysfs-root", s(&d.root)]);
    assert_ne!(o.status.code(), Some(0));
    let err = text(&o.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err:?}");
    assert!(!err.contains('\u{1b}'), "{err:?}");
    assert!(err.contains("no\\nsuch\\u{1b}[2J.json"), "{err:?}");
}

/// A stand-in scontrol on PATH: `show node` prints `show` (the node's one
/// line), `update` records its arguments in `calls`.
fn fake_scontrol(dir: &Path, show: &str) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let calls = dir.join("calls");
    let script = format!(
        "#!/bin/sh\nif [ \"$1\" = show ]; then printf '%s\\n' '{show}'; exit 0; fi\nprintf '%s\\n' \"$*\" >>'{}'\n",
        calls.display()
    );
    let p = bin.join("scontrol");
    std::fs::write(&p, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    calls
}

/// --dry-run says what --slurm-drain would do and does none of it; a
/// numaprobe reason that no longer says what differs is replaced; an
/// administrator's is kept.
#[test]
fn slurm_drain_dry_run_and_a_stale_reason() {
    let d = dumps("health-dry", 4_194_304);
    let run = |scratch: &Path, more: &[&str]| {
        let path = format!("{}:/usr/bin:/bin", scratch.join("bin").display());
        Command::new(env!("CARGO_BIN_EXE_numaprobe"))
            .args([
                "check",
                "--slurm-drain",
                "--expect",
                s(&d.expect),
                "--sysfs-root",
                s(&d.changed),
            ])
            .args(more)
            .env("PATH", path)
            .env("SLURMD_NODENAME", "np7")
            .output()
            .unwrap()
    };
    let t = TempDir::new("health-dry-idle");
    let calls = fake_scontrol(t.path(), "NodeName=np7 State=IDLE ThreadsPerCore=1");
    let o = run(t.path(), &["--dry-run"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = text(&o.stderr);
    assert!(
        err.contains("dry run: would run: scontrol update nodename=np7 state=drain reason=\"node 1: memory 8 GiB!=4 GiB [numaprobe]\""),
        "{err}"
    );
    assert!(!calls.exists(), "a dry run called scontrol update");
    let o = run(t.path(), &[]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert_eq!(
        std::fs::read_to_string(&calls).unwrap(),
        "update nodename=np7 state=drain reason=node 1: memory 8 GiB!=4 GiB [numaprobe]\n"
    );
    // Drained by numaprobe for another difference: replaced.
    let t = TempDir::new("health-dry-stale");
    let calls = fake_scontrol(
        t.path(),
        "NodeName=np7 State=IDLE+DRAIN Reason=thp always!=never (+1 more) [numaprobe] [root@2026-11-27T20:01:02]",
    );
    let o = run(t.path(), &[]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(
        text(&o.stderr).contains("(replacing thp always!=never (+1 more) [numaprobe])"),
        "{o:?}"
    );
    assert!(std::fs::read_to_string(&calls)
        .unwrap()
        .contains("reason=node 1: memory"));
    // The same reason: left with its time stamp.
    let t = TempDir::new("health-dry-same");
    let calls = fake_scontrol(
        t.path(),
        "NodeName=np7 State=IDLE+DRAIN Reason=node 1: memory 8 GiB!=4 GiB [numaprobe] [root@2026-11-27T20:01:02]",
    );
    assert_eq!(run(t.path(), &[]).status.code(), Some(1));
    assert!(!calls.exists());
    // An administrator's: kept, dry run or not.
    let t = TempDir::new("health-dry-admin");
    let calls = fake_scontrol(
        t.path(),
        "NodeName=np7 State=IDLE+DRAIN Reason=fan check [root@2026-11-27T20:01:02]",
    );
    for more in [&["--dry-run"][..], &[]] {
        let o = run(t.path(), more);
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        assert!(
            text(&o.stderr).contains("already drained (fan check)"),
            "{o:?}"
        );
    }
    assert!(!calls.exists());
    // An administrator's reason carrying ESC and CR: shown escaped.
    let t = TempDir::new("health-dry-admin-esc");
    fake_scontrol(
        t.path(),
        "NodeName=np7 State=IDLE+DRAIN Reason=fan\u{1b}[31m check\r now [root@2026-11-27T20:01:02]",
    );
    let o = run(t.path(), &["--dry-run"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(!o.stderr.iter().any(|b| *b == 0x1b || *b == b'\r'), "{o:?}");
    assert!(
        text(&o.stderr).contains("already drained (fan\\u{1b}[31m check\\r now)"),
        "{o:?}"
    );
    // --dry-run alone means nothing: clap refuses it.
    let o = numaprobe(&["check", "--dry-run", "--expect", s(&d.expect)]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(text(&o.stderr).contains("--slurm-drain"), "{o:?}");
}

/// An expectation that is there but cannot be read (an I/O error; as
/// root, a mode of 000 does not stop a read) is "could not check", exit 3,
/// as doc/production.md says; a missing one is bad input, exit 2.
#[test]
fn an_unreadable_expectation_exits_3() {
    let o = numaprobe(&["check", "--expect", "/proc/self/mem"]);
    assert_eq!(o.status.code(), Some(3), "{o:?}");
    assert!(text(&o.stderr).contains("cannot read"), "{o:?}");
    let e = usage_error(&numaprobe(&[
        "check",
        "--expect",
        "/nonexistent/expect.json",
    ]));
    assert!(e.contains("no such file"), "{e}");
}
