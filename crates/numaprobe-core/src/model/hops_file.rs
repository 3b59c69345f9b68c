//! Hop counts from a measured latency matrix in a file (`study
//! --distances FILE`): what is needed of a latency document is read and
//! checked here, every problem one line naming the file and what was
//! expected (never a bare parser message).

use super::hops::HopMap;
use serde::Deserialize;
use std::collections::BTreeSet;
use std::path::Path;

/// The kernel numbers nodes below 1024 (`CONFIG_NODES_SHIFT` at most 10):
/// more names than that is not a machine, and the square of hop counts
/// would grow as their square.
const MAX_NODES: usize = 1024;

/// What hop counts need of a latency document (the rest of it, cells and
/// provenance, is not used, so a hand-written `{"unit": "ns", "cpu_nodes":
/// .., "mem_nodes": .., "matrix": ..}` will do).
#[derive(Deserialize)]
struct Latencies {
    unit: String,
    cpu_nodes: Vec<u32>,
    mem_nodes: Vec<u32>,
    matrix: Vec<Vec<Option<f64>>>,
}

const EXPECTED: &str = "expected the JSON of `numaprobe latency --format json` \
(unit \"ns\", cpu_nodes, mem_nodes and a matrix of one row per CPU node), a run.json or a report folder";

/// Why the file gave no hop counts: `{file}: {message}`.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {message}")]
pub struct HopsFileError {
    pub file: String,
    pub message: String,
}

/// Read a latency matrix from `path` into hop counts.
pub fn read(path: &Path) -> Result<HopMap, HopsFileError> {
    let err = |message: String| HopsFileError {
        file: path.display().to_string(),
        message,
    };
    let text = super::input::read_text(path)
        .map_err(|e| err(format!("cannot read it ({}); {EXPECTED}", e.reason())))?;
    let d: Latencies = super::bounded::from_slice(text.as_bytes()).map_err(|e| {
        use serde_json::error::Category;
        let what = match e.classify() {
            Category::Eof if text.trim().is_empty() => "the file is empty".to_string(),
            Category::Syntax | Category::Eof | Category::Io => {
                format!("not valid JSON (line {}, column {})", e.line(), e.column())
            }
            // serde's own words name the key (`missing field `unit``); the
            // position would point into the file, not help.
            Category::Data => {
                let msg = e.to_string();
                let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
                format!("not a latency matrix ({msg})")
            }
        };
        err(format!("{what}; {EXPECTED}"))
    })?;
    let shape_ok = !d.cpu_nodes.is_empty()
        && d.matrix.len() == d.cpu_nodes.len()
        && d.matrix.iter().all(|r| r.len() == d.mem_nodes.len());
    if !shape_ok {
        return Err(err(format!(
            "the matrix has {} row(s) for {} CPU node(s) and {} memory node(s); {EXPECTED}",
            d.matrix.len(),
            d.cpu_nodes.len(),
            d.mem_nodes.len()
        )));
    }
    let distinct: BTreeSet<u32> = d.cpu_nodes.iter().chain(&d.mem_nodes).copied().collect();
    if distinct.len() > MAX_NODES {
        return Err(err(format!(
            "the matrix names {} nodes; a machine has at most {MAX_NODES} (the kernel's limit), and hop counts are a square of every node",
            distinct.len()
        )));
    }
    if d.unit != "ns" {
        return Err(err(format!(
            "a matrix in {}; hop counts need a latency matrix (unit ns, from `numaprobe latency --format json`)",
            d.unit
        )));
    }
    Ok(HopMap::from_latency(&d.cpu_nodes, &d.mem_nodes, &d.matrix))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file in a folder of its own, removed when the guard drops.
    struct File(std::path::PathBuf);
    impl Drop for File {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(self.0.parent().unwrap());
        }
    }

    fn file(tag: &str, text: &str) -> File {
        let dir = std::env::temp_dir().join(format!("numaprobe-hops-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("lat.json");
        std::fs::write(&p, text).unwrap();
        File(p)
    }

    fn doc(cpu: &[u32], mem: &[u32]) -> String {
        let row = format!("[{}]", vec!["100.0"; mem.len()].join(","));
        serde_json::json!({
            "unit": "ns",
            "cpu_nodes": cpu,
            "mem_nodes": mem,
            "matrix": vec![serde_json::from_str::<serde_json::Value>(&row).unwrap(); cpu.len()],
        })
        .to_string()
    }

    #[test]
    fn a_matrix_of_as_many_nodes_as_the_kernel_numbers_reads() {
        let mem: Vec<u32> = (0..1023).collect();
        let f = file("wide", &doc(&[1023], &mem));
        let h = read(&f.0).unwrap();
        assert_eq!(h.node_ids.len(), 1024);
        assert_eq!(h.hops(1023, 0), Some(1));
    }

    #[test]
    fn more_nodes_than_the_kernel_numbers_is_refused_by_name() {
        let mem: Vec<u32> = (0..1024).collect();
        let f = file("over", &doc(&[5000], &mem));
        let e = read(&f.0).unwrap_err().to_string();
        assert!(e.contains("names 1025 nodes"), "{e}");
        assert!(e.contains("at most 1024"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn a_row_and_column_found_by_node_id_not_position() {
        // Columns in another order than rows: the square is by node id.
        let text = r#"{"unit":"ns","cpu_nodes":[1,0],"mem_nodes":[0,1,2],
            "matrix":[[140.0,90.0,300.0],[91.0,141.0,200.0]]}"#;
        let f = file("order", text);
        let h = read(&f.0).unwrap();
        assert_eq!(h.levels, vec![140.0, 200.0, 300.0]);
        assert_eq!(h.hops(0, 1), Some(1));
        assert_eq!(h.hops(1, 0), Some(1));
        assert_eq!(h.hops(0, 2), Some(2));
        assert_eq!(h.hops(1, 2), Some(3));
        assert_eq!(h.hops(2, 0), Some(3), "no row for node 2: farthest");
    }
}
