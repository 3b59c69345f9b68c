//! `numaprobe fleet` as a user runs it without a cluster: `--from` on a
//! gathered folder (the real reports of tests/fixtures/fleet), a node that
//! failed or timed out in it, and one-line errors for bad input, including
//! a machine without Slurm. The run through a real Slurm is scripts/slurm-test.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;
mod fleet;

use cli::{numaprobe, usage_error};
use common::TempDir;
use fleet::{assert_clean, fixture};
use std::path::Path;
use std::process::Command;

/// A copy of a fixture fleet in a temporary folder (`--from` writes there).
fn copy_fleet(name: &str, tag: &str) -> TempDir {
    let t = TempDir::new(tag);
    for e in std::fs::read_dir(fixture(name)).unwrap() {
        let e = e.unwrap();
        let to = t.path().join(e.file_name());
        std::fs::create_dir_all(&to).unwrap();
        std::fs::copy(e.path().join("run.json"), to.join("run.json")).unwrap();
    }
    t
}

#[test]
fn from_a_gathered_folder_writes_the_fleet_files_and_names_the_odd_node() {
    let t = copy_fleet("taskset-one-cpu", "fleet-from");
    let dir = t.path().to_str().unwrap();
    let o = numaprobe(&["fleet", "--replace", "--from", dir, "--format", "json"]);
    // Every node reported, but the fleet is not uniform: exit 1, one line
    // naming the odd node and the node whose budget did not reach bandwidth.
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        err.trim_end(),
        "numaprobe: the fleet is not uniform: node5 configured unlike the largest group (allowed CPUs); node2: bandwidth not measured (budget)"
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["nodes"][1]["status"], "partial");
    assert_eq!(
        doc["nodes"][1]["not_measured"],
        serde_json::json!(["bandwidth not measured (budget)"])
    );
    assert_eq!(doc["schema"], "numaprobe/1");
    assert!(doc["provenance"].is_object());
    assert_eq!(doc["groups"][1]["nodes"], serde_json::json!(["node5"]));
    assert_eq!(doc["groups"][1]["differs"][0]["field"], "allowed_cpus");
    for f in ["fleet.json", "fleet.md", "fleet.csv", "fleet.html"] {
        assert!(t.path().join(f).exists(), "{f}");
    }
    let html = std::fs::read_to_string(t.path().join("fleet.html")).unwrap();
    assert!(!html.contains("<script"), "no script in the page");
    // The browser is told so too, as report.html tells it.
    assert!(
        html.contains("Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\""),
        "{}",
        &html[..300.min(html.len())]
    );
    let csv = std::fs::read_to_string(t.path().join("fleet.csv")).unwrap();
    assert!(csv.starts_with("node,status,group,metric,value"));
    assert!(csv
        .lines()
        .any(|l| l.starts_with("node5,ok,2,latency 0->0,")));
    // The table names the group difference too, in words.
    let o = numaprobe(&["fleet", "--replace", "--from", dir]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("allowed CPUs: 1 (group 1: 2)"), "{text}");
}

#[test]
fn a_uniform_fleet_exits_0_and_the_thresholds_decide() {
    // node1, node3 and node4: one signature, every matrix measured.
    let t = copy_fleet("taskset-one-cpu", "fleet-uniform");
    for odd in ["node2", "node5"] {
        std::fs::remove_dir_all(t.path().join(odd)).unwrap();
    }
    let dir = t.path().to_str().unwrap();
    // Their figures (a loaded VM) spread too far to be trusted (CV 10-33 %):
    // none sets a median or makes an outlier, and a note says so.
    let o = numaprobe(&["fleet", "--replace", "--from", dir, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["outliers"], serde_json::json!([]));
    assert!(
        doc["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("4 figure(s) not trusted by their own report"),
        "{doc}"
    );
    assert!(doc["nodes"][0]["untrusted"]["latency 0->0"]
        .as_str()
        .unwrap()
        .starts_with("unstable: CV 22.0 %"));
    // The rule used is recorded.
    let o = numaprobe(&[
        "fleet",
        "--replace",
        "--from",
        dir,
        "--format",
        "json",
        "--outlier-pct",
        "1000",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["outliers"], serde_json::json!([]));
    assert_eq!(doc["rule"]["min_off_percent"], 1000.0);
    assert_eq!(doc["rule"]["min_robust_z"], 3.5);
}

#[test]
fn an_unavailable_and_a_lost_node_are_named_and_exit_4() {
    let t = copy_fleet("taskset-one-cpu", "fleet-lost");
    let status = |node: &str, extra: serde_json::Value| {
        let mut v = serde_json::json!({
            "node": node, "exit_status": null, "signal": null, "timed_out": false,
            "error": null, "stderr_tail": [], "elapsed_s": 0.0
        });
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        v.to_string()
    };
    for (node, extra) in [
        (
            "node6",
            serde_json::json!({"unavailable": "drained (drained by an administrator): bad DIMM"}),
        ),
        (
            "node7",
            serde_json::json!({"lost": true, "error": "lost: nothing from it for 30 s (--grace)"}),
        ),
    ] {
        let d = t.path().join(node);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("fleet-node.json"), status(node, extra)).unwrap();
    }
    let o = numaprobe(&["fleet", "--replace", "--from", t.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(4));
    let text = String::from_utf8_lossy(&o.stdout);
    let line = |node: &str| {
        text.lines()
            .find(|l| l.starts_with(node))
            .unwrap_or_else(|| panic!("no line for {node}: {text}"))
            .to_string()
    };
    let n6 = line("node6 ");
    assert!(
        n6.contains(" unavailable ")
            && n6.ends_with(
                "not run: Slurm reported it drained (drained by an administrator): bad DIMM"
            ),
        "{n6}"
    );
    let n7 = line("node7 ");
    assert!(
        n7.contains(" lost ") && n7.ends_with("lost: nothing from it for 30 s (--grace)"),
        "{n7}"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("2 of 7 nodes failed, timed out, were lost or not run"),
        "{err}"
    );
}

#[test]
fn a_failed_and_a_timed_out_node_are_listed_and_the_others_kept() {
    let t = copy_fleet("taskset-one-cpu", "fleet-failed");
    // node6: its task said numaprobe run exited 1 and sent no report;
    // node3: stopped at its time limit (its report is compared as far as it goes).
    let n6 = t.path().join("node6");
    std::fs::create_dir_all(&n6).unwrap();
    let status = |node: &str, exit: Option<i32>, timed_out: bool, tail: &str| {
        serde_json::json!({
            "node": node, "exit_status": exit, "signal": null, "timed_out": timed_out,
            "error": null, "stderr_tail": [tail], "elapsed_s": 1.0
        })
        .to_string()
    };
    std::fs::write(
        n6.join("fleet-node.json"),
        status(
            "node6",
            Some(1),
            false,
            "numaprobe: error: cannot place memory",
        ),
    )
    .unwrap();
    std::fs::write(
        t.path().join("node3/fleet-node.json"),
        status("node3", Some(143), true, ""),
    )
    .unwrap();
    let o = numaprobe(&[
        "fleet",
        "--replace",
        "--from",
        t.path().to_str().unwrap(),
        "--format",
        "json",
    ]);
    // Nodes failed: 4, not the 1 of "the fleet is not uniform".
    assert_eq!(o.status.code(), Some(4));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("2 of 6 nodes failed, timed out, were lost or not run"),
        "{err}"
    );
    assert!(
        err.contains(
            "node6 (numaprobe run exited with status 1: numaprobe: error: cannot place memory)"
        ),
        "{err}"
    );
    assert!(err.contains("node3 (stopped after"), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let st: Vec<(String, String)> = doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["name"].as_str().unwrap().into(),
                n["status"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(st[2], ("node3".into(), "timed_out".into()));
    assert_eq!(st[5], ("node6".into(), "failed".into()));
    assert_eq!(doc["complete"], false);
    // The written report agrees with stdout, and the others' values are there.
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(t.path().join("fleet.json")).unwrap())
            .unwrap();
    assert_eq!(written["nodes"], doc["nodes"]);
    assert!(doc["nodes"][0]["values"]["latency 0->0"].is_number());
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let t = TempDir::new("fleet-bad");
    let missing = t.path().join("nope");
    let e = usage_error(&numaprobe(&[
        "fleet",
        "--replace",
        "--from",
        missing.to_str().unwrap(),
    ]));
    assert!(
        e.contains("no such file or folder") && e.contains("DIR/nodes/<node>/run.json"),
        "{e}"
    );
    let e = usage_error(&numaprobe(&[
        "fleet",
        "--replace",
        "--from",
        t.path().to_str().unwrap(),
    ]));
    assert!(
        e.contains("a folder without numaprobe documents, with no node folders"),
        "{e}"
    );
    // A file that is no numaprobe document is said to be one, not a folder;
    // a folder whose run.json is broken is a folder without documents.
    let notes = t.path().join("notes.txt");
    std::fs::write(&notes, "hello\n").unwrap();
    let e = usage_error(&numaprobe(&[
        "fleet",
        "--replace",
        "--from",
        notes.to_str().unwrap(),
    ]));
    assert!(
        e.contains("notes.txt: not a numaprobe document; fleet --from takes"),
        "{e}"
    );
    let broken = t.path().join("broken");
    std::fs::create_dir(&broken).unwrap();
    std::fs::write(broken.join("run.json"), "garbage\n").unwrap();
    let e = usage_error(&numaprobe(&[
        "fleet",
        "--replace",
        "--from",
        broken.to_str().unwrap(),
    ]));
    assert!(
        e.contains("broken: a folder without numaprobe documents, with no node folders;"),
        "{e}"
    );
    let e = usage_error(&numaprobe(&["fleet"]));
    assert!(e.contains("--nodes N") && e.contains("--nodelist"), "{e}");
    let e = usage_error(&numaprobe(&["fleet", "--nodes", "2", "--budget", "5"]));
    assert!(e.contains("--budget '5'"), "{e}");
    let e = usage_error(&numaprobe(&[
        "fleet",
        "--nodes",
        "2",
        "--outlier-sd",
        "nan",
    ]));
    assert!(
        e.contains("--outlier-sd NaN: not a number of standard deviations"),
        "{e}"
    );
    let e = usage_error(&numaprobe(&[
        "fleet",
        "--nodes",
        "2",
        "--outlier-pct",
        "inf",
    ]));
    assert!(e.contains("--outlier-pct inf: not a percentage"), "{e}");
    let e = usage_error(&numaprobe(&["fleet", "--nodes", "2", "--srun-arg", "foo"]));
    assert!(e.contains("--srun-arg foo: not an srun option"), "{e}");
}

#[test]
fn without_slurm_it_says_so_in_one_line() {
    let t = TempDir::new("fleet-noslurm");
    let o = Command::new(env!("CARGO_BIN_EXE_numaprobe"))
        .args(["fleet", "--nodes", "2", "--report-dir"])
        .arg(t.path().join("out"))
        .env("PATH", t.path())
        .output()
        .unwrap();
    let e = usage_error(&o);
    assert!(e.contains("no Slurm found: srun is not on PATH"), "{e}");
    assert!(!t.path().join("out").exists(), "nothing written");
}

/// Every key of a fleet document, at any depth, but the metric ids that key
/// `values`, the provenance (documented in its own section) and the `kind`
/// every document carries (its own section of doc/json.md lists them all).
fn keys(v: &serde_json::Value, out: &mut std::collections::BTreeSet<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                if k == "kind" && x == "fleet" {
                    continue;
                }
                out.insert(k.clone());
                // Maps keyed by metric id.
                if !["values", "untrusted", "noise", "provenance"].contains(&k.as_str()) {
                    keys(x, out);
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| keys(x, out)),
        _ => {}
    }
}

#[test]
fn every_json_key_is_documented_in_the_manual() {
    let manual = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../doc/json.md"))
        .expect("doc/json.md");
    let start = manual
        .find("<!-- section: json-fleet -->")
        .expect("json-fleet section");
    let rest = &manual[start + 1..];
    let section = &rest[..rest.find("<!-- section:").unwrap_or(rest.len())];
    let t = copy_fleet("taskset-one-cpu", "fleet-keys");
    // A failed node too, so `reason` is in the document.
    std::fs::create_dir_all(t.path().join("node9")).unwrap();
    let o = numaprobe(&[
        "fleet",
        "--replace",
        "--from",
        t.path().to_str().unwrap(),
        "--format",
        "json",
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut all = std::collections::BTreeSet::new();
    keys(&doc, &mut all);
    for k in &all {
        assert!(
            section.contains(&format!("`{k}`")),
            "doc/json.md json-fleet lacks `{k}`"
        );
    }
}

#[test]
fn a_long_reason_and_a_foreign_unit_do_not_multiply_the_report() {
    let t = copy_fleet("taskset-one-cpu", "fleet-linear");
    let p = |node: &str| t.path().join(node).join("run.json");
    // node1: 2,000 latency cells and a megabyte of failure reason.
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p("node1")).unwrap()).unwrap();
    let cell = doc["latency"]["cells"][0].clone();
    doc["latency"]["cells"] = (0..2000)
        .map(|m| {
            let mut c = cell.clone();
            c["mem_node"] = m.into();
            c.as_object_mut().unwrap().remove("samples");
            c
        })
        .collect();
    std::fs::write(p("node1"), doc.to_string()).unwrap();
    let status = serde_json::json!({
        "node": "node1", "exit_status": 1, "signal": null, "timed_out": false,
        "error": "e".repeat(1 << 20), "stderr_tail": [], "elapsed_s": 1.0
    });
    std::fs::write(t.path().join("node1/fleet-node.json"), status.to_string()).unwrap();
    // node2: its latency in a unit 100,000 characters long.
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p("node2")).unwrap()).unwrap();
    doc["latency"]["unit"] = "u".repeat(100_000).into();
    std::fs::write(p("node2"), doc.to_string()).unwrap();
    let input: u64 = std::fs::read_dir(t.path())
        .unwrap()
        .flat_map(|e| std::fs::read_dir(e.unwrap().path()).unwrap())
        .map(|f| f.unwrap().metadata().unwrap().len())
        .sum();

    let o = numaprobe(&["fleet", "--replace", "--from", t.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(4));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("node2 (latency unit \"uuuuuuuuuuuuuuuu... (99984 more characters)\" is not ns: its figures are not compared)"),
        "{err}"
    );
    assert!(err.len() < 2000, "{} bytes of stderr", err.len());
    for f in ["fleet.csv", "fleet.html", "fleet.md", "fleet.json"] {
        let out = std::fs::read_to_string(t.path().join(f)).unwrap();
        assert!(
            (out.len() as u64) < input,
            "{f}: {} bytes from {input} bytes of input",
            out.len()
        );
        assert!(!out.contains(&"e".repeat(300)), "{f}: the whole reason");
        assert!(!out.contains(&"u".repeat(300)), "{f}: the whole unit");
    }
    let csv = std::fs::read_to_string(t.path().join("fleet.csv")).unwrap();
    assert_eq!(
        csv.lines().filter(|l| l.starts_with("node1,")).count(),
        2001
    );
}

/// `--from DIR` never rewrites DIR unless told: its fleet files go to a new
/// folder beside it (DIR-judged, then DIR-judged-2), or --report-dir, or
/// DIR itself with --replace.
#[test]
fn from_writes_beside_the_folder_unless_told_to_replace() {
    let t = TempDir::new("fleet-beside");
    let src = copy_fleet("taskset-one-cpu", "fleet-beside-src");
    let dir = t.path().join("gathered");
    let st = Command::new("cp")
        .args(["-a", src.path().to_str().unwrap(), dir.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(st.success());
    let d = dir.to_str().unwrap();
    let names = |p: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(p)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let before = names(&dir);
    let o = numaprobe(&["fleet", "--from", d, "--outlier-pct", "10"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert_eq!(names(&dir), before, "--from rewrote its folder");
    let judged = t.path().join("gathered-judged");
    assert_eq!(
        names(&judged),
        ["fleet.csv", "fleet.html", "fleet.json", "fleet.md"]
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("is left as it is; --replace writes there"));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(judged.join("fleet.json")).unwrap()).unwrap();
    assert_eq!(doc["rule"]["min_off_percent"], 10.0);
    assert!(doc["notes"]
        .to_string()
        .contains("judged from the nodes gathered in"));
    // Again: a second folder, the first kept.
    numaprobe(&["fleet", "--from", d]);
    assert!(t.path().join("gathered-judged-2/fleet.json").is_file());
    // --report-dir: there, new or empty.
    let out = t.path().join("out");
    numaprobe(&["fleet", "--from", d, "--report-dir", out.to_str().unwrap()]);
    assert!(out.join("fleet.html").is_file());
    let e = usage_error(&numaprobe(&[
        "fleet",
        "--from",
        d,
        "--report-dir",
        out.to_str().unwrap(),
    ]));
    assert!(e.contains("not empty") && e.contains("--replace"), "{e}");
    // --replace: into DIR itself.
    numaprobe(&["fleet", "--from", d, "--replace"]);
    assert!(dir.join("fleet.json").is_file());
    let e = usage_error(&numaprobe(&["fleet", "--replace", "--nodes", "2"]));
    assert!(e.contains("--from"), "{e}");
}

/// A node folder named `n` ESC `[31m` and a node whose error output ends
/// in ESC and CR: `fleet --from` shows both escaped, in every format.
#[test]
fn from_a_node_named_with_control_characters_shows_them_escaped() {
    let t = copy_fleet("taskset-one-cpu", "fleet-from-esc");
    let odd = t.path().join("n\u{1b}[31m");
    std::fs::create_dir(&odd).unwrap();
    std::fs::copy(t.path().join("node1/run.json"), odd.join("run.json")).unwrap();
    let failed = t.path().join("node6");
    std::fs::create_dir(&failed).unwrap();
    let status = serde_json::json!({
        "node": "node6", "exit_status": 1, "signal": null, "timed_out": false,
        "error": null, "stderr_tail": ["boom \u{1b}]0;owned\u{7}\r\u{1b}[2J"], "elapsed_s": 1.0
    });
    std::fs::write(failed.join("fleet-node.json"), status.to_string()).unwrap();
    let dir = t.path().to_str().unwrap();
    for format in ["table", "json", "markdown", "csv"] {
        let o = numaprobe(&["fleet", "--replace", "--from", dir, "--format", format]);
        assert_eq!(o.status.code(), Some(4), "{o:?}");
        assert_clean(&format!("stdout ({format})"), &o.stdout);
        assert_clean(&format!("stderr ({format})"), &o.stderr);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("boom \\u{1b}]0;owned\\u{7}\\r\\u{1b}[2J"),
            "{err}"
        );
    }
    for f in ["fleet.md", "fleet.csv", "fleet.html", "fleet.json"] {
        assert_clean(f, &std::fs::read(t.path().join(f)).unwrap());
    }
    let md = std::fs::read_to_string(t.path().join("fleet.md")).unwrap();
    assert!(md.contains("n\\u{1b}[31m"), "{md}");
}
