//! The long forms of a latency or bandwidth matrix: every cell (and every
//! `--scaling` thread count) as one row with the parameters that produced it,
//! for CSV and Markdown, so those formats keep what the JSON has.
//!
//! CSV is one loadable table (RFC 4180, one header line, the same number of
//! fields on every line): the `row` column says what a line is — `cell`,
//! `scaling`, or `note` (a matrix note such as write-allocate traffic, whose
//! text is in the `note` column and whose other fields are empty). Column
//! names follow the JSON keys (`placement_fraction` is
//! `placement.fraction_on_intended`, `samples` is the number of samples).

use super::table::{Align, Table};
use crate::model::matrix::{Cell, MatrixResult};

/// The CSV columns, in order (documented in doc/commands/latency-bandwidth.md;
/// a test checks the two agree).
pub const CSV_COLUMNS: [&str; 31] = [
    "row",
    "kind",
    "cpu_node",
    "mem_node",
    "median",
    "min",
    "max",
    "cv",
    "unit",
    "samples",
    "stop",
    "op",
    "threads",
    "size_bytes",
    "pages",
    "page_size",
    "stride_bytes",
    "pattern",
    "window_pages",
    "policy",
    "kernel",
    "vector_width",
    "cpus",
    "placement_fraction",
    "placement_pages",
    "thp_fraction",
    "flagged",
    "flags",
    "elapsed_s",
    "setup_s",
    "note",
];

/// The serde name of a unit-like enum (`4k`, `cv_reached`, `avx2`, ...), so
/// the CSV says what the JSON says.
fn serde_name<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map(T::to_string).unwrap_or_default()
}

fn cpus(c: &Cell) -> String {
    crate::topology::cpulist::format_ranges(&c.cpus, "")
}

impl MatrixResult {
    /// `latency` or `bandwidth`, as the JSON's `kind` says.
    pub fn kind_name(&self) -> String {
        serde_name(&self.kind)
    }

    /// One row per cell, then per scaling cell, then per note; numbers at
    /// full precision (Rust's shortest round-trip form, as in the JSON).
    pub fn long_table(&self) -> Table {
        let mut t = Table::new(CSV_COLUMNS);
        let kind = self.kind_name();
        let rows = self
            .cells
            .iter()
            .map(|c| ("cell", c))
            .chain(self.scaling.iter().flatten().map(|c| ("scaling", c)));
        for (row, c) in rows {
            let p = &c.params;
            t.push([
                row.to_string(),
                kind.clone(),
                c.cpu_node.to_string(),
                c.mem_node.to_string(),
                c.median.to_string(),
                c.min.to_string(),
                c.max.to_string(),
                c.cv.to_string(),
                self.unit.clone(),
                c.kept().to_string(),
                c.stop.name().to_string(),
                opt(&p.op),
                p.threads.to_string(),
                p.size_bytes.to_string(),
                serde_name(&p.pages),
                c.placement.page_size.to_string(),
                opt(&p.stride_bytes),
                opt(&p.pattern),
                opt(&p.window_pages),
                p.policy.clone(),
                c.kernel.name.clone(),
                serde_name(&c.vector_width),
                cpus(c),
                c.placement.fraction_on_intended.to_string(),
                c.placement.pages.to_string(),
                opt(&c.placement.thp_fraction),
                c.flagged.to_string(),
                c.flags.join("; "),
                c.elapsed_s.to_string(),
                c.setup_s.to_string(),
                String::new(),
            ]);
        }
        // A failed cell: where it was planned, on which CPUs, and why (no figures).
        let cpus_col = CSV_COLUMNS.iter().position(|&c| c == "cpus");
        for f in &self.failed {
            let mut r = vec![String::new(); CSV_COLUMNS.len()];
            r[0] = "failed".into();
            r[1] = kind.clone();
            r[2] = f.cpu_node.to_string();
            r[3] = f.mem_node.to_string();
            if let Some(i) = cpus_col {
                r[i] = crate::units::format_list(&f.cpus);
            }
            r[CSV_COLUMNS.len() - 1] = f.reason.clone();
            t.push(r);
        }
        for n in self.status_notes().iter().chain(self.notes.iter()) {
            let mut r = vec![String::new(); CSV_COLUMNS.len()];
            r[0] = "note".into();
            r[1] = kind.clone();
            r[CSV_COLUMNS.len() - 1] = n.clone();
            t.push(r);
        }
        t
    }

    /// Why the document is not the whole matrix, in words (none when it is).
    pub(crate) fn status_notes(&self) -> Vec<String> {
        if self.complete {
            Vec::new()
        } else if self.interrupted {
            vec!["incomplete: interrupted before every cell was measured".into()]
        } else if !self.failed.is_empty() {
            vec![format!(
                "incomplete: {} cell(s) failed (each listed as `failed`, with its reason)",
                self.failed.len()
            )]
        } else {
            vec!["incomplete: not every cell has been measured".into()]
        }
    }

    /// The parameters behind the cells in words, one line per distinct set
    /// (thread counts are in the cell tables): for the text format, which
    /// has no room for them in its columns.
    pub(crate) fn params_lines(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for c in self.cells.iter().chain(self.scaling.iter().flatten()) {
            let p = &c.params;
            let mut parts = vec![format!("kernel {}", c.kernel.name)];
            if let Some(op) = &p.op {
                parts.push(format!("op {op}"));
            }
            if let Some(pat) = &p.pattern {
                parts.push(format!("pattern {pat}"));
            }
            if let Some(s) = p.stride_bytes {
                parts.push(format!("stride {s} B"));
            }
            if let Some(w) = p.window_pages {
                parts.push(format!("TLB window {w} pages"));
            }
            parts.push(format!("size {}", crate::units::format_size(p.size_bytes)));
            parts.push(format!("pages {}", serde_name(&p.pages)));
            parts.push(format!("vector {}", serde_name(&c.vector_width)));
            let line = format!("parameters: {}", parts.join(", "));
            if !out.contains(&line) {
                out.push(line);
            }
        }
        out
    }

    /// The per-cell table for Markdown: what the text's cell table shows
    /// plus the parameters and the flags in words.
    pub fn details_table(&self, cells: &[Cell]) -> Table {
        let mut t = Table::new([
            "cpu".to_string(),
            "mem".into(),
            "threads".into(),
            format!("median [{}]", self.unit),
            "min".into(),
            "max".into(),
            "cv %".into(),
            "samples".into(),
            "stop".into(),
            "on node %".into(),
            "cpus".into(),
            "op / pattern".into(),
            "size".into(),
            "pages".into(),
            "stride".into(),
            "flags".into(),
        ]);
        let mut align = vec![Align::Right; 16];
        for i in [8, 10, 11, 13, 15] {
            align[i] = Align::Left;
        }
        t.align = align;
        let base = self.cells_table(cells);
        for (c, r) in cells.iter().zip(base.rows) {
            let p = &c.params;
            let mut row = r;
            let what = match (&p.op, &p.pattern) {
                (Some(op), _) => op.clone(),
                (None, Some(pat)) => match p.window_pages {
                    Some(w) => format!("{pat} (window {w} pages)"),
                    None => pat.clone(),
                },
                (None, None) => c.kernel.name.clone(),
            };
            row.push(what);
            row.push(crate::units::format_size(p.size_bytes));
            row.push(serde_name(&p.pages));
            row.push(p.stride_bytes.map(|s| format!("{s} B")).unwrap_or_default());
            row.push(c.flags.join("; "));
            t.push(row);
        }
        t
    }

    /// The Markdown document: matrix, flag notes, every cell with its
    /// parameters, the scaling rows, and the notes.
    pub(crate) fn markdown(&self, title: String, flag_notes: &[String]) -> String {
        let mut s = self.matrix_table().with_title(title).to_markdown();
        if !flag_notes.is_empty() {
            s.push('\n');
            for n in flag_notes {
                // A leading `*` would start a list item.
                s.push_str(&format!("\\{n}\n"));
            }
        }
        if !self.cells.is_empty() {
            s.push('\n');
            s.push_str(
                &self
                    .details_table(&self.cells)
                    .with_title("Cells")
                    .to_markdown(),
            );
        }
        if let Some(sc) = &self.scaling {
            s.push('\n');
            s.push_str(
                &self
                    .details_table(sc)
                    .with_title("Scaling: threads on one node")
                    .to_markdown(),
            );
        }
        for n in self.status_notes().iter().chain(self.notes.iter()) {
            s.push_str(&format!("\n> note: {n}\n"));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::matrix::tests::{cell, sample};
    use crate::model::Format;
    use crate::render::table::read_csv;

    fn with_scaling_and_notes() -> MatrixResult {
        let mut m = sample();
        m.kind = crate::model::matrix::MatrixKind::Bandwidth;
        m.unit = "GB/s".into();
        let mut sc = Vec::new();
        for t in 1..=3 {
            let mut c = cell(0, 0, 10.0 * t as f64, 1.0);
            c.params.threads = t;
            c.params.op = Some("copy".into());
            c.params.pattern = None;
            sc.push(c);
        }
        m.scaling = Some(sc);
        m.cells[1].flags = vec!["placement 50.0 % < 99 %, \"node 2\" too".into()];
        m.notes = vec!["copy uses ordinary stores, so write-allocate adds reads".into()];
        m.complete = false;
        m.interrupted = true;
        m
    }

    fn column<'a>(rows: &'a [Vec<String>], name: &str) -> Vec<&'a str> {
        let i = rows[0].iter().position(|h| h == name).expect(name);
        rows[1..].iter().map(|r| r[i].as_str()).collect()
    }

    #[test]
    fn csv_is_one_loadable_table_with_every_cell_scaling_row_and_note() {
        let m = with_scaling_and_notes();
        let rows = read_csv(&m.render(Format::Csv));
        assert_eq!(rows[0], CSV_COLUMNS);
        assert!(
            rows.iter().all(|r| r.len() == CSV_COLUMNS.len()),
            "{rows:?}"
        );
        // 3 cells, 3 scaling rows (every thread count), 2 notes.
        assert_eq!(
            column(&rows, "row"),
            ["cell", "cell", "cell", "scaling", "scaling", "scaling", "note", "note"]
        );
        assert_eq!(column(&rows, "threads")[3..6], ["1", "2", "3"]);
        assert_eq!(column(&rows, "op")[3], "copy");
        assert_eq!(column(&rows, "median")[1], "140.25");
        assert_eq!(column(&rows, "placement_fraction")[1], "0.5");
        assert_eq!(column(&rows, "flagged")[1], "true");
        // The flag's comma and quotes survive the round trip.
        assert_eq!(
            column(&rows, "flags")[1],
            "placement 50.0 % < 99 %, \"node 2\" too"
        );
        assert_eq!(column(&rows, "stop")[0], "cv_reached");
        assert_eq!(column(&rows, "pages")[0], "4k");
        assert_eq!(column(&rows, "size_bytes")[0], (1u64 << 20).to_string());
        assert_eq!(column(&rows, "pattern")[0], "random");
        assert_eq!(column(&rows, "stride_bytes")[0], "64");
        assert_eq!(column(&rows, "cv")[0], "0.005");
        assert_eq!(column(&rows, "unit")[0], "GB/s");
        let notes = column(&rows, "note");
        assert!(notes[6].contains("interrupted"), "{notes:?}");
        assert!(notes[7].contains("write-allocate"), "{notes:?}");
        assert_eq!(column(&rows, "median")[7], "");
    }

    #[test]
    fn markdown_has_every_cell_with_parameters_scaling_and_notes() {
        let md = with_scaling_and_notes().render(Format::Markdown);
        assert!(md.contains("**Cells**"), "{md}");
        assert!(md.contains("**Scaling: threads on one node**"), "{md}");
        // Three scaling rows with op copy, one per thread count.
        assert_eq!(md.matches("| copy |").count(), 3, "{md}");
        assert!(md.contains("| random |"), "{md}");
        assert!(md.contains("| 1 MiB | 4k | 64 B |"), "{md}");
        assert!(md.contains("cv_reached"), "{md}");
        assert!(md.contains("\"node 2\" too"), "{md}");
        assert!(md.contains("> note: copy uses ordinary stores"), "{md}");
        assert!(md.contains("> note: incomplete: interrupted"), "{md}");
    }

    #[test]
    fn text_names_the_parameters_once_per_set() {
        let s = with_scaling_and_notes().render(Format::Table);
        assert!(
            s.contains("parameters: kernel chase_random, pattern random, stride 64 B, size 1 MiB, pages 4k, vector scalar"),
            "{s}"
        );
        assert_eq!(s.matches("op copy").count(), 1, "{s}");
        assert!(s.contains("note: copy uses"), "{s}");
        assert!(s.contains("(incomplete: interrupted"), "{s}");
    }
}
