//! Every command that reads numaprobe documents (report, diff, check, infer,
//! export) against documents made to expand: arrays longer than the
//! dimensions the document declares, and a valid document whose values
//! would take many times its size in memory. Each is one line naming the
//! file and exit status 2, never an allocation failure; how much memory
//! and time each reader takes on such inputs is shown by `bench/readers`.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use cli::{numaprobe_in, usage_error};
use common::TempDir;
use serde_json::{json, Value};
use std::path::Path;

fn real_run() -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/fleet/taskset-one-cpu/node1/run.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// `doc` with its value at `mark` replaced by `grown` (JSON text): a file
/// too large to build as a `Value` in the test itself.
fn grown(doc: &Value, mark: &str, grown: &str) -> String {
    let text = doc.to_string();
    let quoted = format!("\"{mark}\"");
    assert!(text.contains(&quoted));
    text.replacen(&quoted, grown, 1)
}

/// The commands that read `file` (in the folder `r`), each as it takes it.
fn readers(file: &str) -> Vec<Vec<String>> {
    let f = format!("r/{file}");
    [
        vec!["report", "r"],
        vec!["diff", &f, &f],
        vec!["check", "--expect", &f],
        vec!["infer", "--input", &f],
        vec!["export", "--to", "prometheus", &f],
    ]
    .into_iter()
    .map(|a| a.into_iter().map(String::from).collect())
    .collect()
}

#[test]
fn a_matrix_of_four_nodes_with_forty_thousand_rows_is_one_line_in_every_reader() {
    let t = TempDir::new("rows");
    let r = t.path().join("r");
    std::fs::create_dir(&r).unwrap();
    let mut run = real_run();
    let lat = run["latency"].as_object_mut().unwrap();
    lat.insert("cpu_nodes".into(), json!([0, 1, 2, 3]));
    lat.insert("mem_nodes".into(), json!([0, 1, 2, 3]));
    lat.insert("matrix".into(), json!("@rows@"));
    lat.insert("cells".into(), json!([]));
    let rows = vec!["[1.0,1.0,1.0,1.0]"; 40_000].join(",");
    let text = grown(&run, "@rows@", &format!("[{rows}]"));
    std::fs::write(r.join("run.json"), text).unwrap();
    for args in readers("run.json") {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let err = usage_error(&numaprobe_in(&args, t.path()));
        assert!(err.contains("run.json"), "{args:?}: {err}");
        if args[0] != "infer" {
            assert!(
                err.contains("matrix has 40000 rows but cpu_nodes names 4"),
                "{args:?}: {err}"
            );
        }
    }
}

#[test]
fn a_valid_document_that_would_grow_past_its_budget_is_refused_while_it_is_read() {
    let t = TempDir::new("budget");
    let r = t.path().join("r");
    std::fs::create_dir(&r).unwrap();
    let mut run = real_run();
    run["notes"] = json!("@notes@");
    // 600,000 empty notes: 1.8 MB of text, 28 MB as strings in a vector.
    let notes = vec!["\"\""; 600_000].join(",");
    let text = grown(&run, "@notes@", &format!("[{notes}]"));
    let len = text.len();
    std::fs::write(r.join("run.json"), text).unwrap();
    for args in readers("run.json") {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = numaprobe_in(&args, t.path());
        if args[0] == "infer" {
            // infer reads a run.json's matrix and topology only: the notes
            // are skipped as they are read, never built, so nothing grows
            // and the matrix is inferred.
            assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
            continue;
        }
        let err = usage_error(&out);
        assert!(err.contains("run.json"), "{args:?}: {err}");
        assert!(
            err.contains("too many values for its size"),
            "{args:?}: {err}"
        );
        // Refused part way through the notes, not after them: serde_json
        // names the column where reading stopped.
        let column: usize = err
            .rsplit("column ")
            .next()
            .and_then(|c| {
                c.trim()
                    .trim_end_matches(|c: char| !c.is_ascii_digit())
                    .parse()
                    .ok()
            })
            .unwrap_or_else(|| panic!("{args:?}: no column in {err}"));
        assert!(column < len, "{args:?}: read to column {column} of {len}");
        assert!(!r.join("report.html").exists(), "{args:?}");
    }
}
