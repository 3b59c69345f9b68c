//! Intel Memory Latency Checker (MLC) text output as `infer` input: the
//! node-to-node tables of `--latency_matrix`, `--bandwidth_matrix` and of a
//! default run (which prints both, among other things).
//!
//! MLC's layouts differ between versions; what they share, and what is read:
//! a "Measuring idle latencies ..." or "Measuring Memory Bandwidths between
//! nodes ..." line opens a block; in it a header line ends in the memory
//! node numbers (`Numa node  0  1` in 3.x, `Socket  0  1` under a `Memory
//! node` line in older versions) and each following line is a requesting
//! node's number and its values. The unit comes from the block's own text
//! (`(in ns)`, `core clocks`, `MB/sec`). A version string, when there is
//! one, labels the matrix.

use super::matrix::{Matrix, MatrixError, Unit};

/// Which of a file's matrices to analyse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Select {
    Latency,
    Bandwidth,
}

impl Select {
    pub fn parse(s: &str) -> Option<Select> {
        match s.trim().to_ascii_lowercase().as_str() {
            "latency" | "lat" => Some(Select::Latency),
            "bandwidth" | "bw" => Some(Select::Bandwidth),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Select::Latency => "latency",
            Select::Bandwidth => "bandwidth",
        }
    }
    pub const VALID: &'static str = "latency, bandwidth";
}

const LATENCY_OPENER: &str = "measuring idle latencies";
const BANDWIDTH_OPENER: &str = "measuring memory bandwidths between nodes";

/// True when `text` looks like MLC's output (its banner or a matrix block).
pub fn looks_like(text: &str) -> bool {
    let head: String = text
        .chars()
        .take(200_000)
        .collect::<String>()
        .to_ascii_lowercase();
    head.contains("memory latency checker")
        || head.contains(LATENCY_OPENER)
        || head.contains(BANDWIDTH_OPENER)
}

struct Block {
    kind: Select,
    unit: Unit,
    /// 1-based line number of the opener, for messages.
    line: usize,
    cols: Vec<u32>,
    rows: Vec<u32>,
    values: Vec<Vec<Option<f64>>>,
}

fn is_uint(t: &str) -> bool {
    !t.is_empty() && t.len() <= 9 && t.bytes().all(|b| b.is_ascii_digit())
}

fn value(t: &str, line: usize) -> Result<Option<f64>, MatrixError> {
    if matches!(t, "-" | "n/a" | "N/A" | "NA") {
        return Ok(None);
    }
    match t.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(Some(x)),
        _ => Err(MatrixError::Value(format!(
            "MLC output line {line}: {t:?} is not a number"
        ))),
    }
}

/// Read the blocks of an MLC output; a block that opens but holds no table
/// is an error naming its line.
fn blocks(text: &str) -> Result<Vec<Block>, MatrixError> {
    let mut out: Vec<Block> = Vec::new();
    let mut cur: Option<Block> = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let lower = raw.to_ascii_lowercase();
        let opener = if lower.contains(LATENCY_OPENER) {
            Some(Select::Latency)
        } else if lower.contains(BANDWIDTH_OPENER) {
            Some(Select::Bandwidth)
        } else {
            None
        };
        if let Some(kind) = opener {
            if let Some(b) = cur.take() {
                out.push(finish(b)?);
            }
            let unit = match kind {
                Select::Latency if lower.contains("clock") => Unit::Cycles,
                Select::Latency => Unit::Ns,
                Select::Bandwidth => Unit::MBps,
            };
            cur = Some(Block {
                kind,
                unit,
                line: n,
                cols: Vec::new(),
                rows: Vec::new(),
                values: Vec::new(),
            });
            continue;
        }
        let Some(b) = cur.as_mut() else { continue };
        if lower.contains("gb/sec") {
            b.unit = Unit::GBps;
        }
        let toks: Vec<&str> = raw.split_whitespace().collect();
        if b.cols.is_empty() {
            // The header: words, then the memory node numbers.
            let nums: Vec<&str> = toks.iter().copied().skip_while(|t| !is_uint(t)).collect();
            let words = toks.len() - nums.len();
            if !nums.is_empty() && nums.iter().all(|t| is_uint(t)) && (words > 0 || nums.len() > 1)
            {
                b.cols = nums.iter().filter_map(|t| t.parse().ok()).collect();
            }
            continue;
        }
        // A data row: the requesting node, then one value per column. The
        // table ends at the first line that is not one.
        match toks.first() {
            Some(t) if is_uint(t) => {
                let node: u32 = t.parse().map_err(|_| {
                    MatrixError::Value(format!(
                        "MLC output line {n}: node {t:?} is not a node number"
                    ))
                })?;
                let vals = &toks[1..];
                if vals.len() != b.cols.len() {
                    return Err(MatrixError::Shape(format!(
                        "MLC output line {n}: node {node}'s row has {} value(s), the header names {} memory node(s)",
                        vals.len(),
                        b.cols.len()
                    )));
                }
                let row = vals
                    .iter()
                    .map(|v| value(v, n))
                    .collect::<Result<Vec<_>, _>>()?;
                b.rows.push(node);
                b.values.push(row);
            }
            _ if b.rows.is_empty() => {} // text between the header and the rows
            _ => out.push(finish(cur.take().expect("block is open"))?),
        }
    }
    if let Some(b) = cur.take() {
        out.push(finish(b)?);
    }
    Ok(out)
}

fn finish(b: Block) -> Result<Block, MatrixError> {
    if b.rows.is_empty() {
        return Err(MatrixError::Shape(format!(
            "MLC output line {}: the {} block holds no node table (expected a header such as `Numa node 0 1` and a row per node)",
            b.line,
            b.kind.as_str()
        )));
    }
    Ok(b)
}

fn version(text: &str) -> Option<String> {
    let line = text
        .lines()
        .find(|l| l.to_ascii_lowercase().contains("memory latency checker"))?;
    let v = line
        .split_whitespace()
        .find(|t| t.starts_with('v') && t[1..].starts_with(|c: char| c.is_ascii_digit()))?;
    Some(format!("Intel MLC {v}"))
}

/// The matrix of kind `select` (latency when None and there is one, else
/// bandwidth) from MLC's text output; `unit` overrides the block's unit.
pub fn parse(
    text: &str,
    select: Option<Select>,
    unit: Option<Unit>,
) -> Result<Matrix, MatrixError> {
    let all = blocks(text)?;
    let want = select.unwrap_or(if all.iter().any(|b| b.kind == Select::Latency) {
        Select::Latency
    } else {
        Select::Bandwidth
    });
    let have: Vec<&str> = all.iter().map(|b| b.kind.as_str()).collect();
    // The first block of a kind: MLC 3.10+ prints sequential access before
    // random access, and the sequential figures are the ones comparable
    // with older versions and with numaprobe's stride chase.
    let Some(b) = all.into_iter().find(|b| b.kind == want) else {
        return Err(MatrixError::Shape(format!(
            "the MLC output holds no {} matrix (it has: {})",
            want.as_str(),
            if have.is_empty() {
                "none".to_string()
            } else {
                have.join(", ")
            }
        )));
    };
    let mut m =
        Matrix::new(unit.unwrap_or(b.unit), b.rows, b.cols, b.values).map_err(|e| match e {
            MatrixError::Shape(s) => {
                MatrixError::Shape(format!("MLC {} matrix: {s}", want.as_str()))
            }
            MatrixError::Value(s) => {
                MatrixError::Value(format!("MLC {} matrix: {s}", want.as_str()))
            }
            other => other,
        })?;
    m.label = Some(format!(
        "{} {}",
        version(text).unwrap_or_else(|| "Intel MLC".into()),
        match want {
            Select::Latency => "idle latency",
            Select::Bandwidth => "bandwidth",
        }
    ));
    Ok(m)
}
