//! Inputs large enough that a command which only reads them is still
//! reading or analysing seconds after it opened them, on any machine and in
//! a debug build, and small enough for the readers' limits (256 MiB a file,
//! 2048 nodes, a memory budget of twice a document's size and 8 MiB): an
//! MLC-style matrix, a latency document, and a gathered fleet folder.

use std::io::Write;
use std::path::{Path, PathBuf};

/// One cell of a crafted latency matrix: nodes in groups of 8 (90 ns local,
/// 130 ns in the group, 210 ns across) with a deterministic ripple of a few
/// percent, so that the analysis has levels to find.
fn cell(r: usize, c: usize) -> f64 {
    let base = if r == c {
        90.0
    } else if r / 8 == c / 8 {
        130.0
    } else {
        210.0
    };
    base * (1.0 + 0.02 * (((r * 7919 + c * 104729) % 101) as f64 / 50.0 - 1.0))
}

/// A latency matrix of `nodes` nodes as CSV (`json`: false) or as the
/// `{unit, cpu_nodes, mem_nodes, matrix}` form, one decimal a value.
pub fn write_matrix(path: &Path, nodes: usize, json: bool) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    if json {
        let names: Vec<String> = (0..nodes).map(|n| n.to_string()).collect();
        let names = names.join(",");
        write!(
            f,
            "{{\"unit\":\"ns\",\"cpu_nodes\":[{names}],\"mem_nodes\":[{names}],\"matrix\":["
        )
        .unwrap();
    } else {
        writeln!(f, "# unit: ns").unwrap();
    }
    for r in 0..nodes {
        let row: Vec<String> = (0..nodes).map(|c| format!("{:.1}", cell(r, c))).collect();
        if json {
            write!(f, "{}[{}]", if r > 0 { "," } else { "" }, row.join(",")).unwrap();
        } else {
            writeln!(f, "{}", row.join(",")).unwrap();
        }
    }
    if json {
        write!(f, "]}}").unwrap();
    }
    f.flush().unwrap();
}

/// The run.json of a real main job (the fixture fleet's first node).
fn fixture_run() -> serde_json::Value {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/fleet/taskset-one-cpu/node1/run.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// `doc` as compact JSON, split around the string `"@grown@"` it holds once.
fn split_at_mark(doc: &serde_json::Value) -> (String, String) {
    let text = doc.to_string();
    let (head, tail) = text.split_once("\"@grown@\"").expect("one mark");
    (head.to_string(), tail.to_string())
}

/// A numaprobe latency document (`"kind": "latency"`, a real run's fields)
/// whose matrix is `nodes` x `nodes` crafted cells and whose per-cell
/// details are left out. Each value is written with 14 decimals: every
/// value read costs the readers' budget 32 bytes, so its text must not be
/// much shorter than 16 bytes for the document to be read whole.
pub fn write_latency_document(path: &Path, nodes: usize) {
    let mut lat = fixture_run()["latency"].take();
    let names: Vec<usize> = (0..nodes).collect();
    lat["cpu_nodes"] = serde_json::json!(names);
    lat["mem_nodes"] = serde_json::json!(names);
    lat["cells"] = serde_json::json!([]);
    lat["matrix"] = serde_json::json!("@grown@");
    let (head, tail) = split_at_mark(&lat);
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    f.write_all(head.as_bytes()).unwrap();
    f.write_all(b"[").unwrap();
    for r in 0..nodes {
        let row: Vec<String> = (0..nodes).map(|c| format!("{:.14}", cell(r, c))).collect();
        write!(f, "{}[{}]", if r > 0 { "," } else { "" }, row.join(",")).unwrap();
    }
    f.write_all(b"]").unwrap();
    f.write_all(tail.as_bytes()).unwrap();
    f.flush().unwrap();
}

/// A folder as `numaprobe fleet` gathers it, `dir/nodes/nNNN/run.json` for
/// `nodes` nodes, each a real run whose latency matrix is replaced by
/// `cells` compact cells (a median each, a deterministic ripple of about
/// 1 %): the most cells per byte read. Returns the first node's run.json,
/// the first file the fleet reads.
pub fn write_fleet(dir: &Path, nodes: usize, cells: usize) -> PathBuf {
    let side = (1..).find(|s| s * s >= cells).unwrap();
    let mut run = fixture_run();
    let lat = &mut run["latency"];
    let names: Vec<usize> = (0..side).collect();
    lat["cpu_nodes"] = serde_json::json!(names);
    lat["mem_nodes"] = serde_json::json!(names);
    lat["matrix"] = serde_json::json!([]);
    lat["cells"] = serde_json::json!("@grown@");
    let (head, tail) = split_at_mark(&run);
    for n in 0..nodes {
        let node = dir.join("nodes").join(format!("n{:03}", n + 1));
        std::fs::create_dir_all(&node).unwrap();
        let mut f = std::io::BufWriter::new(std::fs::File::create(node.join("run.json")).unwrap());
        f.write_all(head.as_bytes()).unwrap();
        f.write_all(b"[").unwrap();
        for c in 0..cells {
            let ripple = ((n * 7919 + c * 104729) % 101) as f64 / 5000.0;
            write!(
                f,
                "{}{{\"cpu_node\":{},\"mem_node\":{},\"median\":{:.3}}}",
                if c > 0 { "," } else { "" },
                c / side,
                c % side,
                100.0 * (0.99 + ripple)
            )
            .unwrap();
        }
        f.write_all(b"]").unwrap();
        f.write_all(tail.as_bytes()).unwrap();
        f.flush().unwrap();
    }
    dir.join("nodes/n001/run.json")
}
