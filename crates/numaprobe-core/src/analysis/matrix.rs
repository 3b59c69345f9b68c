//! The input of `infer`: a node-to-node matrix of latency, bandwidth or firmware
//! distance, and its JSON form (the fixture form `{unit, matrix, slit?}` and
//! numaprobe's own latency/bandwidth results). `input` decides which reader
//! a text goes to; CSV and MLC text have their own files.
//!
//! Everything read from a user's file is checked here, so the analysis after
//! it can assume a rectangular matrix of finite positive numbers (or gaps).

use crate::model::infer::index_of;

/// What the numbers mean, and so which direction is "better".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Ns,
    Cycles,
    MBps,
    GBps,
    /// A firmware distance (ACPI SLIT): exact small integers, no noise.
    Distance,
}

impl Unit {
    /// Accepts the spellings the fixtures, numaprobe and MLC use.
    pub fn parse(s: &str) -> Option<Unit> {
        match s.trim().to_ascii_lowercase().as_str() {
            "ns" | "nanoseconds" => Some(Unit::Ns),
            "cycles" | "cycle" | "clocks" => Some(Unit::Cycles),
            "mb/s" | "mbps" | "mib/s" | "mb_s" => Some(Unit::MBps),
            "gb/s" | "gbps" | "gib/s" | "gb_s" => Some(Unit::GBps),
            "slit" | "distance" | "distances" => Some(Unit::Distance),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Ns => "ns",
            Unit::Cycles => "cycles",
            Unit::MBps => "MB/s",
            Unit::GBps => "GB/s",
            Unit::Distance => "slit",
        }
    }

    /// Bandwidth: more is better. Latency and distance: less is better.
    pub fn higher_is_better(self) -> bool {
        matches!(self, Unit::MBps | Unit::GBps)
    }

    /// Firmware tables are exact: two different values are two levels.
    pub fn is_exact(self) -> bool {
        matches!(self, Unit::Distance)
    }

    pub fn is_bandwidth(self) -> bool {
        self.higher_is_better()
    }

    pub const VALID: &'static str = "ns, cycles, MB/s, GB/s, slit";
}

/// A measured (or firmware) matrix: rows are the nodes that make the request
/// (CPU nodes), columns the nodes that hold the memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    pub unit: Unit,
    pub row_nodes: Vec<u32>,
    pub col_nodes: Vec<u32>,
    /// The cells row by row (`value(r, c)`: from `row_nodes[r]` to
    /// `col_nodes[c]`).
    values: Values,
    /// The firmware distances, if the input carried them.
    pub slit: Option<Slit>,
    /// A name for the machine (the fixture's `machine`), for titles.
    pub label: Option<String>,
    /// True when no measurement was given and the SLIT itself is analysed.
    pub slit_only: bool,
    /// Cells a numaprobe result marked as not to be trusted as they are
    /// (e.g. pages placed below 99 % on the intended node), with why.
    pub flagged: Vec<([u32; 2], Vec<String>)>,
    /// Nodes known to have no CPU although they have a row (a SLIT names
    /// every node); a node without a row has no CPU measured from anyway.
    pub cpuless: Vec<u32>,
}

/// A matrix's values held flat, row after row, 8 bytes a cell: a cell not
/// measured is NaN, which no value can be (`Matrix::new` takes finite
/// numbers only), where an `Option` a cell took 16 and a row a vector.
/// Shared, not copied, with the cells of the matrix's inference.
#[derive(Debug, Clone)]
struct Values {
    cols: usize,
    cells: std::sync::Arc<Vec<f64>>,
}

impl Values {
    fn get(&self, r: usize, c: usize) -> Option<f64> {
        if c >= self.cols {
            return None;
        }
        let v = *self.cells.get(r * self.cols + c)?;
        (!v.is_nan()).then_some(v)
    }
}

/// Two cells are equal when both are missing or both hold one number.
impl PartialEq for Values {
    fn eq(&self, o: &Values) -> bool {
        self.cols == o.cols
            && self.cells.len() == o.cells.len()
            && self
                .cells
                .iter()
                .zip(o.cells.iter())
                .all(|(a, b)| a == b || (a.is_nan() && b.is_nan()))
    }
}

/// A firmware distance table over `nodes` (square).
#[derive(Debug, Clone, PartialEq)]
pub struct Slit {
    pub nodes: Vec<u32>,
    pub matrix: Vec<Vec<f64>>,
}

impl Slit {
    /// The topology's firmware distances, for `Matrix::slit` when the main
    /// job analyses a matrix it measured itself.
    pub fn from_distances(d: &crate::topology::Distances) -> Slit {
        Slit {
            nodes: d.node_ids.clone(),
            matrix: d
                .matrix
                .iter()
                .map(|r| r.iter().map(|&x| f64::from(x)).collect())
                .collect(),
        }
    }

    pub fn get(&self, from: u32, to: u32) -> Option<f64> {
        let a = self.nodes.iter().position(|&n| n == from)?;
        let b = self.nodes.iter().position(|&n| n == to)?;
        self.matrix.get(a)?.get(b).copied()
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum MatrixError {
    #[error("not valid JSON: {0}")]
    Json(String),
    #[error("{0}")]
    Shape(String),
    #[error("{0}")]
    Value(String),
    #[error("unit {0:?} is not known (valid: {valid})", valid = Unit::VALID)]
    UnknownUnit(String),
    #[error("the input gives no unit; say which with --unit ({valid})", valid = Unit::VALID)]
    NoUnit,
    #[error("the input holds neither a matrix nor a SLIT")]
    Empty,
    #[error("not a numaprobe matrix, a numaprobe run.json, an MLC --latency_matrix/--bandwidth_matrix output, a {{matrix:…}} JSON or a CSV matrix")]
    Unrecognised,
}

/// The most nodes a matrix may name, rows and columns together. Linux
/// counts at most 1024 NUMA nodes (`CONFIG_NODES_SHIFT` 10); the inference
/// keeps node-by-node tables (hops, distances), so an input naming more,
/// such as one row of 8000 columns, is refused before they are built.
pub const MAX_NODES: usize = 2048;

impl Matrix {
    /// Every node the matrix mentions, as row or column, ascending.
    pub fn nodes(&self) -> Vec<u32> {
        let mut n: Vec<u32> = self
            .row_nodes
            .iter()
            .chain(self.col_nodes.iter())
            .copied()
            .collect();
        n.sort_unstable();
        n.dedup();
        n
    }

    /// True when threads can run on `n`: it has a row (was measured from)
    /// and is not named CPU-less.
    pub fn has_cpus(&self, n: u32) -> bool {
        index_of(&self.row_nodes, n).is_some() && !self.cpuless.contains(&n)
    }

    /// Nodes that hold memory but no CPU, ascending.
    pub fn cpuless_nodes(&self) -> Vec<u32> {
        self.nodes()
            .into_iter()
            .filter(|&n| !self.has_cpus(n))
            .collect()
    }

    /// The value from node `from` to node `to`, if measured.
    pub fn get(&self, from: u32, to: u32) -> Option<f64> {
        let (r, c) = self.position(from, to)?;
        self.values.get(r, c)
    }

    /// The value of row `r`, column `c`, if measured.
    pub fn value(&self, r: usize, c: usize) -> Option<f64> {
        self.values.get(r, c)
    }

    /// Row `r`'s cells, in column order.
    pub fn row(&self, r: usize) -> impl Iterator<Item = Option<f64>> + '_ {
        let cols = self.values.cols;
        self.values
            .cells
            .iter()
            .skip(r * cols)
            .take(if r < self.row_nodes.len() { cols } else { 0 })
            .map(|&v| (!v.is_nan()).then_some(v))
    }

    /// The cells row by row, NaN where not measured: the matrix's own,
    /// for an inference's cells to read rather than copy.
    pub(crate) fn shared_values(&self) -> std::sync::Arc<Vec<f64>> {
        self.values.cells.clone()
    }

    /// How many cells hold a value.
    pub fn measured(&self) -> usize {
        self.values.cells.iter().filter(|v| !v.is_nan()).count()
    }

    /// The cells as rows of `Option`s, a copy: for small matrices and
    /// for building a changed one with `Matrix::new`.
    pub fn rows(&self) -> Vec<Vec<Option<f64>>> {
        (0..self.row_nodes.len())
            .map(|r| self.row(r).collect())
            .collect()
    }

    /// The row and column of the cell from `from` to `to`, when both are named.
    pub(crate) fn position(&self, from: u32, to: u32) -> Option<(usize, usize)> {
        Some((
            index_of(&self.row_nodes, from)?,
            index_of(&self.col_nodes, to)?,
        ))
    }

    /// Build from parts, checking shape and values. `node_ids` names rows and
    /// columns of a square matrix; `cpu_nodes`/`mem_nodes` name them apart.
    pub fn new(
        unit: Unit,
        row_nodes: Vec<u32>,
        col_nodes: Vec<u32>,
        values: Vec<Vec<Option<f64>>>,
    ) -> Result<Matrix, MatrixError> {
        if values.is_empty() {
            return Err(MatrixError::Shape("the matrix has no rows".into()));
        }
        if row_nodes.len() != values.len() {
            return Err(MatrixError::Shape(format!(
                "the matrix has {} rows but {} row nodes are named",
                values.len(),
                row_nodes.len()
            )));
        }
        for (r, row) in values.iter().enumerate() {
            if row.len() != col_nodes.len() {
                return Err(MatrixError::Shape(format!(
                    "row {r} has {} values, expected {} (one per memory node)",
                    row.len(),
                    col_nodes.len()
                )));
            }
            for (c, v) in row.iter().enumerate() {
                if let Some(v) = v {
                    if !v.is_finite() {
                        return Err(MatrixError::Value(format!(
                            "cell [{r}][{c}] is {v}: values must be finite numbers"
                        )));
                    }
                    if *v <= 0.0 {
                        return Err(MatrixError::Value(format!(
                            "cell [{r}][{c}] is {v}: latencies, bandwidths and distances must be positive"
                        )));
                    }
                }
            }
        }
        for (what, ids) in [("row", &row_nodes), ("column", &col_nodes)] {
            let mut s = ids.clone();
            s.sort_unstable();
            s.dedup();
            if s.len() != ids.len() {
                return Err(MatrixError::Shape(format!(
                    "{what} node ids repeat: {ids:?}"
                )));
            }
        }
        let mut named: Vec<u32> = row_nodes.iter().chain(&col_nodes).copied().collect();
        named.sort_unstable();
        named.dedup();
        if named.len() > MAX_NODES {
            return Err(MatrixError::Shape(format!(
                "the matrix names {} nodes ({} rows, {} columns); at most {MAX_NODES} can be analysed \
                 (Linux has at most 1024 NUMA nodes)",
                named.len(),
                row_nodes.len(),
                col_nodes.len()
            )));
        }
        if values.iter().flatten().all(Option::is_none) {
            return Err(MatrixError::Value(
                "every cell is null: nothing was measured".into(),
            ));
        }
        // Row by row, each dropped once copied: the rows of `Option`s and
        // the flat cells are never both whole.
        let cols = col_nodes.len();
        let mut cells = Vec::with_capacity(values.len() * cols);
        for row in values {
            cells.extend(row.into_iter().map(|v| v.unwrap_or(f64::NAN)));
        }
        Ok(Matrix {
            unit,
            row_nodes,
            col_nodes,
            values: Values {
                cols,
                cells: std::sync::Arc::new(cells),
            },
            slit: None,
            label: None,
            slit_only: false,
            flagged: Vec::new(),
            cpuless: Vec::new(),
        })
    }
}

impl Matrix {
    /// A matrix numaprobe measured, its flagged cells kept with why.
    pub fn from_result(r: &crate::model::matrix::MatrixResult) -> Result<Matrix, MatrixError> {
        let unit = Unit::parse(&r.unit).ok_or_else(|| MatrixError::UnknownUnit(r.unit.clone()))?;
        let mut m = Matrix::new(
            unit,
            r.cpu_nodes.clone(),
            r.mem_nodes.clone(),
            r.matrix.clone(),
        )?;
        m.flagged = r
            .cells
            .iter()
            .filter(|c| c.flagged)
            .map(|c| ([c.cpu_node, c.mem_node], c.flags.clone()))
            .collect();
        Ok(m)
    }

    /// The firmware's distance table analysed as if it were a measurement;
    /// nodes outside `cpu_nodes` get no thread advice.
    pub fn from_slit(
        d: &crate::topology::Distances,
        cpu_nodes: &[u32],
    ) -> Result<Matrix, MatrixError> {
        Matrix::of_slit(Slit::from_distances(d), Some(cpu_nodes))
    }

    /// A SLIT as the matrix to analyse. A firmware table has a row for
    /// every node; `cpu_nodes`, when known, says which of them can run
    /// threads.
    pub(super) fn of_slit(s: Slit, cpu_nodes: Option<&[u32]>) -> Result<Matrix, MatrixError> {
        let values = s
            .matrix
            .iter()
            .map(|r| r.iter().map(|&x| Some(x)).collect())
            .collect();
        let mut m = Matrix::new(Unit::Distance, s.nodes.clone(), s.nodes.clone(), values)?;
        if let Some(cpu) = cpu_nodes {
            m.cpuless = s
                .nodes
                .iter()
                .copied()
                .filter(|n| !cpu.contains(n))
                .collect();
        }
        m.slit = Some(s);
        m.slit_only = true;
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::parse;

    #[test]
    fn cells_are_found_whatever_order_and_gaps_the_node_ids_have() {
        let ids_orders: [Vec<u32>; 4] = [
            vec![0, 1, 2, 3], // the usual 0..n
            vec![0, 2, 8, 9], // gaps (CXL or hot-plugged nodes), ascending
            vec![3, 1, 0, 2], // any order an input may give
            vec![1, 0, 5, 2], // some ids at their own index, some not
        ];
        for ids in ids_orders {
            // Cell value encodes its (row id, column id), so a wrong index shows.
            let values = ids
                .iter()
                .map(|&r| {
                    ids.iter()
                        .map(|&c| Some(100.0 + f64::from(r * 10 + c)))
                        .collect()
                })
                .collect();
            let m = Matrix::new(Unit::Ns, ids.clone(), ids.clone(), values).unwrap();
            for &r in &ids {
                assert!(m.has_cpus(r), "{ids:?}: node {r}");
                for &c in &ids {
                    assert_eq!(
                        m.get(r, c),
                        Some(100.0 + f64::from(r * 10 + c)),
                        "{ids:?}: {r}->{c}"
                    );
                }
            }
            assert_eq!(m.get(4, ids[0]), None, "{ids:?}: an id not named");
            assert_eq!(m.get(ids[0], 7), None, "{ids:?}: an id not named");
            assert!(!m.has_cpus(4), "{ids:?}: an id not named has no CPUs");
        }
    }

    #[test]
    fn fixture_form_reads_unit_matrix_and_slit() {
        let m = parse(
            r#"{"unit":"ns","matrix":[[10,20],[21,11]],"slit":[[10,21],[21,10]]}"#,
            None,
        )
        .unwrap();
        assert_eq!(m.unit, Unit::Ns);
        assert_eq!(m.get(1, 0), Some(21.0));
        assert_eq!(m.slit.unwrap().get(0, 1), Some(21.0));
    }

    #[test]
    fn numaprobe_result_form_names_rows_and_columns() {
        let m = parse(
            r#"{"schema":"numaprobe/1","kind":"bandwidth","unit":"GB/s","cpu_nodes":[0,1],"mem_nodes":[0,1,2],
                "matrix":[[{"median":100.0},50,null],[50,100,70]],
                "cells":[{"cpu_node":1,"mem_node":2,"flagged":true,"flags":["pages 80 % on node 2"]}]}"#,
            None,
        )
        .unwrap();
        assert_eq!(
            m.flagged,
            vec![([1, 2], vec!["pages 80 % on node 2".to_string()])]
        );
        assert_eq!(m.col_nodes, vec![0, 1, 2]);
        assert_eq!(m.get(0, 0), Some(100.0));
        assert_eq!(m.get(0, 2), None);
        assert!(m.unit.higher_is_better());
    }

    #[test]
    fn slit_only_becomes_a_distance_matrix() {
        let m = parse(
            r#"{"unit":null,"matrix":null,"slit":[[10,12],[12,10]]}"#,
            None,
        )
        .unwrap();
        assert!(m.slit_only);
        assert_eq!(m.unit, Unit::Distance);
    }

    #[test]
    fn bad_inputs_are_errors_not_panics() {
        let cases = [
            r#"{"unit":"ns","matrix":[[1,2],[3]]}"#,
            r#"{"unit":"ns","matrix":[[1,2,3],[3,4,5]]}"#,
            r#"{"unit":"ns","matrix":[[1,-2],[3,4]]}"#,
            r#"{"unit":"ns","matrix":[[0,2],[3,4]]}"#,
            r#"{"unit":"ns","matrix":[]}"#,
            r#"{"unit":"ns","matrix":[[null,null],[null,null]]}"#,
            r#"{"unit":"furlongs","matrix":[[1]]}"#,
            r#"{"matrix":[[1,2],[2,1]]}"#,
            r#"{"unit":"ns","matrix":[["x",2],[2,1]]}"#,
            r#"{"unit":"ns","matrix":null,"slit":null}"#,
            r#"{"unit":"ns","matrix":[[1,2],[2,1]],"slit":[[10,20]]}"#,
            r#"[1,2]"#,
            "{",
            "",
            "1,2\n3",
            "# unit: ns\n1,NaN\n3,4",
            "# unit: ns\n1,x\n3,4",
            "1,2\n2,1",
        ];
        for c in cases {
            assert!(parse(c, None).is_err(), "accepted {c:?}");
        }
    }

    #[test]
    fn csv_with_header_labels_and_unit_comment() {
        let m = parse("# unit: ns\nnode,0,1\n0,80,130\n1,131,81\n", None).unwrap();
        assert_eq!(m.row_nodes, vec![0, 1]);
        assert_eq!(m.get(1, 0), Some(131.0));
        let m = parse("ns,node0,node1\nnode0,80,\nnode1,131,81\n", None).unwrap();
        assert_eq!(m.unit, Unit::Ns);
        assert_eq!(m.get(0, 1), None);
        let m = parse("80,130\n131,81\n", Some(Unit::Cycles)).unwrap();
        assert_eq!(m.unit, Unit::Cycles);
    }
}
