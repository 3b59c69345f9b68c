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
        || head
            .lines()
            .zip(std::iter::once("").chain(head.lines()))
            .any(|(l, prev)| bare_header(l, prev.trim()).is_some())
}

struct Block {
    /// None for a table pasted without its `Measuring ...` line, when no
    /// command line or unit line said what it holds either.
    kind: Option<Select>,
    unit: Unit,
    /// 1-based line number of the opener (or of the header), for messages.
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

/// The memory node numbers of a table header that stands on its own: MLC
/// 3.x's `Numa node  0  1`, or `Socket  0  1` right under older versions'
/// `Memory node`. People paste the table with the command that made it
/// and without the `Measuring ...` line; the header is what is left.
fn bare_header(lower: &str, prev: &str) -> Option<Vec<u32>> {
    let toks: Vec<&str> = lower.split_whitespace().collect();
    let at = toks.iter().position(|t| is_uint(t))?;
    let words = toks[..at].join(" ");
    let named = words == "numa node" || (words == "socket" && prev == "memory node");
    (named && toks[at..].iter().all(|t| is_uint(t)))
        .then(|| toks[at..].iter().filter_map(|t| t.parse().ok()).collect())
}

/// What a line says about the tables that follow it: the command line
/// (`./mlc --bandwidth_matrix`, MLC's own `Command line parameters:`) or a
/// unit line.
fn hint(lower: &str) -> Option<(Select, Unit)> {
    if lower.contains("--bandwidth_matrix") || lower.contains("bandwidths are in mb/sec") {
        Some((Select::Bandwidth, Unit::MBps))
    } else if lower.contains("bandwidths are in gb/sec") {
        Some((Select::Bandwidth, Unit::GBps))
    } else if lower.contains("--latency_matrix") || lower.contains("--idle_latency") {
        Some((Select::Latency, Unit::Ns))
    } else {
        None
    }
}

fn opener(lower: &str) -> Option<Select> {
    if lower.contains(LATENCY_OPENER) {
        Some(Select::Latency)
    } else if lower.contains(BANDWIDTH_OPENER) {
        Some(Select::Bandwidth)
    } else {
        None
    }
}

/// Read the blocks of an MLC output; a block that opens but holds no table
/// is an error naming its line. Lines outside a block (a shell prompt, the
/// banner, blank lines) are read only for what they say about the kind.
fn blocks(text: &str) -> Result<Vec<Block>, MatrixError> {
    let mut out: Vec<Block> = Vec::new();
    let mut cur: Option<Block> = None;
    let mut said: Option<(Select, Unit)> = None;
    let mut prev = String::new();
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let lower = raw.to_ascii_lowercase();
        said = hint(&lower).or(said);
        if let Some(kind) = opener(&lower) {
            if let Some(b) = cur.take() {
                out.push(finish(b)?);
            }
            let unit = match kind {
                Select::Latency if lower.contains("clock") => Unit::Cycles,
                Select::Latency => Unit::Ns,
                Select::Bandwidth => Unit::MBps,
            };
            cur = Some(Block {
                kind: Some(kind),
                unit,
                line: n,
                cols: Vec::new(),
                rows: Vec::new(),
                values: Vec::new(),
            });
            prev = lower.trim().to_string();
            continue;
        }
        if let Some(b) = cur.as_mut() {
            if row(b, raw, n, &lower)? {
                prev = lower.trim().to_string();
                continue;
            }
            out.push(finish(cur.take().expect("block is open"))?);
        }
        if let Some(cols) = bare_header(&lower, &prev) {
            cur = Some(Block {
                kind: said.map(|(k, _)| k),
                unit: said.map_or(Unit::Ns, |(_, u)| u),
                line: n,
                cols,
                rows: Vec::new(),
                values: Vec::new(),
            });
        }
        if !lower.trim().is_empty() {
            prev = lower.trim().to_string();
        }
    }
    if let Some(b) = cur.take() {
        out.push(finish(b)?);
    }
    Ok(out)
}

/// Feed one line to an open block; false when the line ends the block.
fn row(b: &mut Block, raw: &str, n: usize, lower: &str) -> Result<bool, MatrixError> {
    if lower.contains("gb/sec") {
        b.unit = Unit::GBps;
    }
    let toks: Vec<&str> = raw.split_whitespace().collect();
    if b.cols.is_empty() {
        // The header: words, then the memory node numbers.
        let nums: Vec<&str> = toks.iter().copied().skip_while(|t| !is_uint(t)).collect();
        let words = toks.len() - nums.len();
        if !nums.is_empty() && nums.iter().all(|t| is_uint(t)) && (words > 0 || nums.len() > 1) {
            b.cols = nums.iter().filter_map(|t| t.parse().ok()).collect();
        }
        return Ok(true);
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
            // Sized once: collected through a Result, a row would grow by
            // doubling, up to twice its cells.
            let mut row = Vec::with_capacity(vals.len());
            for v in vals {
                row.push(value(v, n)?);
            }
            b.rows.push(node);
            b.values.push(row);
            Ok(true)
        }
        // Text between the header and the rows.
        _ => Ok(b.rows.is_empty()),
    }
}

fn finish(b: Block) -> Result<Block, MatrixError> {
    if b.rows.is_empty() {
        return Err(MatrixError::Shape(format!(
            "MLC output line {}: the {} block holds no node table (expected a header such as `Numa node 0 1` and a row per node)",
            b.line,
            b.kind.map_or("MLC", Select::as_str)
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
    let mut all = blocks(text)?;
    // A table nothing named: what the caller asked for, or what the unit
    // it supplies measures; else there is no telling.
    let told = select.or(unit.and_then(|u| match u {
        Unit::Ns | Unit::Cycles => Some(Select::Latency),
        Unit::MBps | Unit::GBps => Some(Select::Bandwidth),
        Unit::Distance => None,
    }));
    for b in &mut all {
        if b.kind.is_none() {
            let kind = told.ok_or_else(|| {
                MatrixError::Shape(format!(
                    "MLC output line {}: a node table with no `Measuring ...` line, MLC command line or unit line above it, so it could hold latencies or bandwidths; say which with --matrix (latency, bandwidth) or --unit",
                    b.line
                ))
            })?;
            // MLC's own units when it prints them: ns and MB/sec.
            b.unit = match kind {
                Select::Latency => Unit::Ns,
                Select::Bandwidth => Unit::MBps,
            };
            b.kind = Some(kind);
        }
    }
    let all: Vec<(Select, Block)> = all
        .into_iter()
        .filter_map(|b| b.kind.map(|k| (k, b)))
        .collect();
    let want = select.unwrap_or(if all.iter().any(|(k, _)| *k == Select::Latency) {
        Select::Latency
    } else {
        Select::Bandwidth
    });
    let have: Vec<&str> = all.iter().map(|(k, _)| k.as_str()).collect();
    // The first block of a kind: MLC 3.10+ prints sequential access before
    // random access, and the sequential figures are the ones comparable
    // with older versions and with numaprobe's stride chase.
    let Some((_, b)) = all.into_iter().find(|(k, _)| *k == want) else {
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
