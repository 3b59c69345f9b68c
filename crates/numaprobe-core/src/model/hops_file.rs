//! Hop counts from a measured latency matrix in a file (`study
//! --distances FILE`): what is needed of a latency document is read and
//! checked here, every problem one line naming the file and what was
//! expected (never a bare parser message).

use super::hops::HopMap;
use serde::Deserialize;
use std::path::Path;

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
    if d.unit != "ns" {
        return Err(err(format!(
            "a matrix in {}; hop counts need a latency matrix (unit ns, from `numaprobe latency --format json`)",
            d.unit
        )));
    }
    Ok(HopMap::from_latency(&d.cpu_nodes, &d.mem_nodes, &d.matrix))
}
