//! The matrix a document's parts make, checked as a whole.

use super::doc::RawDoc;
use crate::analysis::matrix::{Matrix, MatrixError, Slit, Unit};

/// The matrix a document's parts make, checked as a whole: what cannot be
/// checked while reading (a square matrix, positive values, unique ids).
pub(crate) fn build(raw: RawDoc, unit_override: Option<Unit>) -> Result<Matrix, MatrixError> {
    // A SLIT may come as a plain square array (fixture form) or as the
    // topology's `distances` object ({node_ids, matrix}).
    let mut slit_nodes = raw.node_ids;
    let slit_grid = match (raw.slit, raw.distances) {
        (Some(g), _) => Some(g),
        (None, Some(d)) => {
            if let Some(n) = d.node_ids {
                slit_nodes = Some(n);
            }
            d.matrix
        }
        _ => None,
    };
    let slit = match slit_grid {
        None => None,
        Some(g) => {
            let n = g.len();
            let nodes = slit_nodes
                .clone()
                .unwrap_or_else(|| (0..n as u32).collect());
            if nodes.len() != n || g.iter().any(|r| r.len() != n) {
                return Err(MatrixError::Shape(format!(
                    "the SLIT must be square over its {} nodes",
                    nodes.len()
                )));
            }
            let mut m = Vec::with_capacity(n);
            for (r, row) in g.into_iter().enumerate() {
                let mut out = Vec::with_capacity(n);
                for (c, v) in row.into_iter().enumerate() {
                    match v {
                        Some(x) if x.is_finite() && x > 0.0 => out.push(x),
                        _ => {
                            return Err(MatrixError::Value(format!(
                                "SLIT cell [{r}][{c}] must be a positive number"
                            )))
                        }
                    }
                }
                m.push(out);
            }
            Some(Slit { nodes, matrix: m })
        }
    };

    let label = raw.machine;
    let unit_field = match raw.unit {
        None => None,
        Some(Ok(s)) => Some(Unit::parse(&s).ok_or(MatrixError::UnknownUnit(s))?),
        Some(Err(other)) => return Err(MatrixError::UnknownUnit(other)),
    };
    let measured = raw.matrix;

    let Some(values) = measured else {
        // No measurement: analyse the firmware's table as if it were one.
        let Some(s) = slit else {
            return Err(MatrixError::Empty);
        };
        let cpu = raw.cpu_nodes;
        let mut m = Matrix::of_slit(s, cpu.as_deref())?;
        m.label = label;
        return Ok(m);
    };

    let unit = unit_override.or(unit_field).ok_or(MatrixError::NoUnit)?;
    let cpu_nodes = raw.cpu_nodes;
    let mem_nodes = raw.mem_nodes;
    let rows = values.len();
    let cols = values.first().map_or(0, Vec::len);
    let (row_nodes, col_nodes) = match (cpu_nodes, mem_nodes) {
        (Some(r), Some(c)) => (r, c),
        (r, c) => {
            // Without separate names the matrix must be square: row i and
            // column i are the same node.
            if values.iter().any(|row| row.len() != rows) {
                let bad = values.iter().position(|row| row.len() != rows).unwrap_or(0);
                return Err(MatrixError::Shape(format!(
                    "the matrix has {rows} rows but row {bad} has {} values: it must be square \
                     (or name its rows and columns with `cpu_nodes` and `mem_nodes`)",
                    values[bad].len()
                )));
            }
            let n = r
                .or(c)
                .or_else(|| slit_nodes.clone().filter(|s| s.len() == rows))
                .unwrap_or_else(|| (0..rows as u32).collect());
            (n.clone(), n)
        }
    };
    if cols == 0 {
        return Err(MatrixError::Shape("the matrix has no columns".into()));
    }
    let mut m = Matrix::new(unit, row_nodes, col_nodes, values)?;
    m.label = label;
    m.slit = slit;
    m.flagged = raw.flagged;
    Ok(m)
}
