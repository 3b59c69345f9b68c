//! CSV input of `infer`: one row per requesting node, an optional header line
//! naming the memory nodes and an optional first column naming the rows.

use super::matrix::{Matrix, MatrixError, Unit};

fn parse_number(s: &str) -> Option<Result<f64, String>> {
    let t = s.trim().trim_matches('"').trim();
    if t.is_empty() || ["null", "na", "n/a", "-", "none"].contains(&t.to_ascii_lowercase().as_str())
    {
        return None;
    }
    Some(t.parse::<f64>().map_err(|_| t.to_string()))
}

/// CSV: one row per requesting node. An optional first line names the columns
/// (memory nodes; its first field may be a label such as `node` or the unit),
/// an optional first column names the rows. Empty, `null` or `NA` cells are
/// gaps. A line `# unit: ns` gives the unit.
pub(crate) fn parse_csv(text: &str, unit_override: Option<Unit>) -> Result<Matrix, MatrixError> {
    let mut unit_line = None;
    let mut lines: Vec<Vec<String>> = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        if l.is_empty() {
            continue;
        }
        if let Some(c) = l.strip_prefix('#') {
            if let Some((k, v)) = c.split_once(':') {
                if k.trim().eq_ignore_ascii_case("unit") {
                    unit_line = Some(v.trim().to_string());
                }
            }
            continue;
        }
        let sep = if l.contains(',') {
            ','
        } else if l.contains(';') {
            ';'
        } else if l.contains('\t') {
            '\t'
        } else {
            ' '
        };
        lines.push(
            l.split(sep)
                .filter(|f| sep != ' ' || !f.is_empty())
                .map(|f| f.trim().to_string())
                .collect(),
        );
    }
    if lines.is_empty() {
        return Err(MatrixError::Empty);
    }
    let is_num = |s: &String| parse_number(s).is_some_and(|r| r.is_ok());
    // A header is a first line with a non-number after its first field
    // (`ns,node0,node1`), or one whose first field is a label while the next
    // line starts with a number (`node,0,1` over `0,80,130`).
    // Its fields after the first must name nodes (`3`, `node3`, `N 3`, or
    // empty): a line like `80,7x` is a data row with a typo, and gets the
    // error that names `7x`, not a silent reading as a header.
    let names_nodes = lines[0].iter().skip(1).all(|f| is_node_label(f));
    // A first field that starts like a number (`0.1`, `1.2.3`, `-4`) is a
    // value, perhaps mistyped, not a corner label.
    let first_is_fraction = (lines[0][0].contains('.') && is_num(&lines[0][0]))
        || (!is_num(&lines[0][0])
            && lines[0][0]
                .trim()
                .trim_matches('"')
                .starts_with(|c: char| c.is_ascii_digit() || matches!(c, '.' | '-' | '+')));
    let has_header = lines.len() > 1
        && names_nodes
        && !first_is_fraction
        && (lines[0].iter().skip(1).any(|f| !is_num(f))
            || (!is_num(&lines[0][0]) && is_num(&lines[1][0])));
    let mut header_unit = None;
    let (header, body) = if has_header {
        (Some(lines[0].clone()), &lines[1..])
    } else {
        (None, &lines[..])
    };
    // A row label column: with a header, when data rows are one field longer
    // than the header, or the header's first field names no node (`node`,
    // `ns`, empty); without one, when every row starts with a non-number.
    let label_col = match &header {
        Some(h) => {
            let row_len = body.first().map_or(0, Vec::len);
            let first = h.first().cloned().unwrap_or_default();
            if let Some(u) = Unit::parse(&first) {
                header_unit = Some(u);
            }
            let shaped =
                row_len == h.len() + 1 || (row_len == h.len() && node_name(&first).is_none());
            // Row labels name nodes (`0`, `node0`); `0.1` is a value.
            let labelled = body.iter().all(|r| {
                r.first()
                    .is_some_and(|f| is_node_label(f) && !f.trim().is_empty())
            });
            if shaped && !labelled && row_len == h.len() {
                return Err(MatrixError::Shape(format!(
                    "the header's first field {first:?} names no memory node, so each row should start with its node,                      but row 0 starts with {:?}",
                    body.first().and_then(|r| r.first()).cloned().unwrap_or_default()
                )));
            }
            shaped && labelled
        }
        None => body.iter().all(|r| {
            r.first()
                .is_some_and(|f| !is_num(f) && is_node_label(f) && !f.trim().is_empty())
        }),
    };
    let mut values = Vec::new();
    let mut row_nodes = Vec::new();
    for (r, row) in body.iter().enumerate() {
        let fields = if label_col && !row.is_empty() {
            &row[1..]
        } else {
            &row[..]
        };
        if label_col {
            row_nodes.push(node_name(&row[0]).unwrap_or(r as u32));
        } else {
            row_nodes.push(r as u32);
        }
        let mut vals = Vec::new();
        for (c, f) in fields.iter().enumerate() {
            match parse_number(f) {
                None => vals.push(None),
                Some(Ok(x)) => vals.push(Some(x)),
                Some(Err(bad)) => {
                    return Err(MatrixError::Value(format!(
                        "row {r}, column {c}: {bad:?} is not a number"
                    )))
                }
            }
        }
        values.push(vals);
    }
    let ncols = values.first().map_or(0, Vec::len);
    let col_nodes: Vec<u32> = match &header {
        Some(h) => {
            let names = if label_col && h.len() == ncols + 1 {
                &h[1..]
            } else {
                &h[..]
            };
            if names.len() == ncols {
                names
                    .iter()
                    .enumerate()
                    .map(|(i, n)| node_name(n).unwrap_or(i as u32))
                    .collect()
            } else {
                (0..ncols as u32).collect()
            }
        }
        None => (0..ncols as u32).collect(),
    };
    let unit = match unit_override {
        Some(u) => u,
        None => match (unit_line, header_unit) {
            (Some(s), _) => Unit::parse(&s).ok_or(MatrixError::UnknownUnit(s))?,
            (None, Some(u)) => u,
            (None, None) => return Err(MatrixError::NoUnit),
        },
    };
    // Without names the matrix is square (row i and column i are one node).
    let square_expected = header.is_none() || !label_col;
    if square_expected && values.iter().any(|r| r.len() != values.len()) {
        let bad = values
            .iter()
            .position(|r| r.len() != values.len())
            .unwrap_or(0);
        return Err(MatrixError::Shape(format!(
            "the CSV matrix has {} rows but row {bad} has {} values: it must be square, \
             or name rows and columns in a header line and a first column",
            values.len(),
            values[bad].len()
        )));
    }
    Matrix::new(unit, row_nodes, col_nodes, values)
}

/// A header field naming a node: digits, optionally after letters
/// (`3`, `node3`, `N 3`, `mem_3`), or empty.
fn is_node_label(s: &str) -> bool {
    let t = s.trim().trim_matches('"').trim();
    let digits = t.trim_start_matches(|c: char| c.is_ascii_alphabetic() || c == '_' || c == ' ');
    t.is_empty() || (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// `3`, `node3`, `N3`, `node 3` -> 3.
pub(crate) fn node_name(s: &str) -> Option<u32> {
    let digits: String = s
        .trim()
        .trim_matches('"')
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}
