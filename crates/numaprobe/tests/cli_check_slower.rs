//! `numaprobe check --measured` against a node whose memory is slower, end
//! to end: a real run.json (tests/fixtures/fleet, node1) is the expectation,
//! and this node's report folder is the same run as a slower (or faster)
//! node would have written it: every sample scaled, and the median, fastest,
//! slowest and matrix entry that follow from the samples with them (the CV
//! does not move with a scale). The slower node fails with one line per
//! difference and one summary line; the faster node passes, saying so; a
//! cell too spread to be trusted is named and never judged. The summary
//! names what was compared: the documents, or this machine and its run.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use cli::{s, text};
use common::TempDir;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The real run: a 2-CPU VM, one NUMA node, one latency and one bandwidth
/// cell. Its bandwidth cell holds (CV 5.8 %, max/min 1.20); its latency
/// cell does not (CV 22 %, max/min 1.71).
fn real_run() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/fleet/taskset-one-cpu/node1/run.json")
}

/// The real run with every figure of matrix `kind` scaled by `factor`.
fn scale(doc: &mut Value, kind: &str, factor: f64) {
    let m = &mut doc[kind];
    for c in m["cells"].as_array_mut().unwrap() {
        for v in c["samples"].as_array_mut().unwrap() {
            *v = (v.as_f64().unwrap() * factor).into();
        }
        for k in ["median", "min", "max"] {
            c[k] = (c[k].as_f64().unwrap() * factor).into();
        }
    }
    for row in m["matrix"].as_array_mut().unwrap() {
        for v in row.as_array_mut().unwrap() {
            if let Some(x) = v.as_f64() {
                *v = (x * factor).into();
            }
        }
    }
}

/// A report folder `dir/name` holding the real run as a node whose latency
/// is `lat` times and bandwidth `bw` times the real one's.
fn node(dir: &Path, name: &str, lat: f64, bw: f64) -> PathBuf {
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(real_run()).unwrap()).unwrap();
    scale(&mut doc, "latency", lat);
    scale(&mut doc, "bandwidth", bw);
    consistent(&doc);
    let folder = dir.join(name);
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("run.json"), doc.to_string()).unwrap();
    folder
}

/// Each cell's median, fastest and slowest are its samples', and the
/// matrix holds its median: the edited run reads as one that was measured.
fn consistent(doc: &Value) {
    for kind in ["latency", "bandwidth"] {
        for c in doc[kind]["cells"].as_array().unwrap() {
            let mut v: Vec<f64> = c["samples"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect();
            v.sort_by(f64::total_cmp);
            let near = |a: f64, b: &Value| (a - b.as_f64().unwrap()).abs() <= 1e-9 * a.abs();
            assert!(
                near(v[0], &c["min"]) && near(v[v.len() - 1], &c["max"]),
                "{c}"
            );
            let n = v.len();
            let median = (v[(n - 1) / 2] + v[n / 2]) / 2.0;
            assert!(near(median, &c["median"]), "{c}");
            let (i, j) = (
                c["cpu_node"].as_u64().unwrap() as usize,
                c["mem_node"].as_u64().unwrap() as usize,
            );
            assert!(near(
                c["median"].as_f64().unwrap(),
                &doc[kind]["matrix"][i][j]
            ));
        }
    }
}

/// The health check's comparison of the cells: `--only latency,bandwidth`,
/// since the expectation was measured on another machine than this one.
fn check(expect: &Path, measured: &Path) -> Output {
    check_with(expect, measured, &["--only", "latency,bandwidth"])
}

/// `check --expect EXPECT --measured MEASURED`, then `extra`.
fn check_with(expect: &Path, measured: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_numaprobe"))
        .args(["check", "--expect", s(expect), "--measured", s(measured)])
        .args(extra)
        .output()
        .unwrap()
}

const LATENCY_NOT_JUDGED: &str =
    "numaprobe: note: latency: CPU node 0 -> memory node 0 not judged: expected unstable: CV 22.0 %";

#[test]
fn a_slower_node_fails_in_one_line_and_a_faster_one_passes() {
    let t = TempDir::new("check-slower");
    let expect = t.path().join("run.json");
    std::fs::copy(real_run(), &expect).unwrap();

    // Memory a third slower to stream and a quarter slower to reach (a
    // DIMM at a lower speed, a channel lost): the bandwidth cell fails.
    let slow = node(t.path(), "slow", 1.25, 0.7);
    let o = check(&expect, &slow);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[..2],
        [
            "bandwidth: CPU node 0 -> memory node 0: expected 0.6 GB/s, found 0.4 GB/s (-30 %, band 15 %)",
            &format!(
                "{} differs from {} (report): 1 difference",
                s(&slow),
                s(&expect)
            ),
        ],
        "{out}"
    );
    assert_eq!(
        err.lines().last(),
        Some(
            format!(
                "numaprobe: {} differs from {} (report): 1 difference",
                s(&slow),
                s(&expect)
            )
            .as_str()
        ),
        "{err}"
    );
    // The latency cell, 25 % slower too, is too spread on both sides to be
    // judged: named on stderr, not a difference.
    assert!(err.contains(LATENCY_NOT_JUDGED), "{err}");
    assert!(!out.contains("latency: CPU node"), "{out}");

    // The same node 10 % slower: within the band, it matches.
    let within = node(t.path(), "within", 1.1, 0.9);
    let o = check(&expect, &within);
    assert_eq!(o.status.code(), Some(0), "{o:?}");

    // A faster node is not failed: the note says what --either-way would do.
    let fast = node(t.path(), "fast", 0.8, 1.3);
    let o = check(&expect, &fast);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(
        out.starts_with(&format!("{} matches {} (report)", s(&fast), s(&expect))),
        "{out}"
    );
    assert!(
        err.contains("numaprobe: note: bandwidth: CPU node 0 -> memory node 0: 0.8 GB/s (+30 %) is more bandwidth than expected: not a failure (--either-way counts it)"),
        "{err}"
    );
    assert!(err.contains(LATENCY_NOT_JUDGED), "{err}");
}

/// The summary names what was held against the expectation: the measured
/// document when only cells were compared, this machine and its measured
/// document when the machine was read too; never the system root `/`.
#[test]
fn the_summary_names_what_was_compared() {
    let t = TempDir::new("check-names");
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/documents/latency.json");
    let (a, b) = (t.path().join("a.json"), t.path().join("b.json"));
    std::fs::copy(&fixture, &a).unwrap();
    std::fs::copy(&fixture, &b).unwrap();
    // A latency document against another: only their cells are compared.
    let o = check_with(&a, &b, &[]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let out = text(&o.stdout);
    assert_eq!(
        out.lines().next(),
        Some(format!("{} matches {} (latency)", s(&b), s(&a)).as_str()),
        "{out}"
    );

    // A report folder of matrices (no topology, no run.json) against a
    // measured document: nothing of the machine is read, so the answer
    // names the document, and the JSON its cell sections alone.
    let folder = t.path().join("matrices");
    std::fs::create_dir(&folder).unwrap();
    std::fs::copy(&fixture, folder.join("latency.json")).unwrap();
    let bw = fixture.with_file_name("bandwidth.json");
    std::fs::copy(&bw, folder.join("bandwidth.json")).unwrap();
    let o = check_with(&folder, &b, &[]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let out = text(&o.stdout);
    assert_eq!(
        out.lines().next(),
        Some(format!("{} matches {} (report)", s(&b), s(&folder)).as_str()),
        "{out}"
    );
    let o = check_with(&folder, &b, &["--format", "json"]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["expect_kind"], "report", "{doc}");
    assert_eq!(doc["measured"], s(&b), "{doc}");
    assert_eq!(
        doc["sections"],
        serde_json::json!(["latency", "bandwidth"]),
        "{doc}"
    );

    // A run against this node's run with every section: the machine is
    // read as well as the measured run. Whether it matches depends on the
    // host (the expectation is another machine's), what the line names
    // does not.
    let expect = t.path().join("run.json");
    std::fs::copy(real_run(), &expect).unwrap();
    let slow = node(t.path(), "slow", 1.25, 0.7);
    let o = check_with(&expect, &slow, &[]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{o:?}");
    let out = text(&o.stdout);
    let summary = out
        .lines()
        .find(|l| l.contains(&format!(" {} (report)", s(&expect))))
        .unwrap_or_else(|| panic!("no summary: {out}"));
    assert!(
        summary.starts_with(&format!("this machine (measured: {}) ", s(&slow))),
        "{summary}"
    );
}
