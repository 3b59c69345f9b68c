//! The matrix's text, CSV and Markdown renderings, all through
//! [`super::table::Table`]: the matrix with its unit and flags, one row per
//! cell, the failed cells. JSON is [`super::to_json`] of the model itself.

use super::fit;
use super::table::Table;
use crate::model::matrix::{Cell, MatrixKind, MatrixResult};
use crate::model::Format;

/// The most lines a flag's or failure's sentence takes in [`MatrixResult::brief`];
/// the rest is cut with "...": the document has every word.
const BRIEF_LINES: usize = 4;

impl MatrixResult {
    /// The buffer every latency cell chased, as the title's words ("2
    /// GiB buffer"): an idle latency depends on the buffer's size past the
    /// caches (the TLB's reach, and a VM's nested paging, grow with it), so
    /// a reader comparing it with another tool's needs the size beside it.
    /// None for bandwidth, or when the cells chased buffers of several sizes
    /// (each cell's parameters say its own).
    pub(crate) fn buffer_words(&self) -> Option<String> {
        let mut sizes = self.cells.iter().map(|c| c.params.size_bytes);
        let first = sizes.next()?;
        (self.kind == MatrixKind::Latency && first > 0 && sizes.all(|s| s == first))
            .then(|| format!("{} buffer", crate::units::format_size(first)))
    }

    fn title(&self) -> String {
        match self.kind {
            MatrixKind::Latency => format!(
                "Idle latency ({}){}, median; rows: CPU node, columns: memory node",
                self.unit,
                self.buffer_words()
                    .map(|b| format!(", {b}"))
                    .unwrap_or_default()
            ),
            MatrixKind::Bandwidth => format!(
                "Bandwidth ({}), median; rows: CPU node, columns: memory node",
                self.unit
            ),
        }
    }

    fn value(&self, v: f64) -> String {
        match self.kind {
            MatrixKind::Latency => format!("{v:.1}"),
            MatrixKind::Bandwidth => format!("{v:.2}"),
        }
    }

    /// The matrix as a table: unit in the header, `*` after flagged cells,
    /// `-` where nothing was measured.
    pub fn matrix_table(&self) -> Table {
        let corner = format!("cpu\\mem [{}]", self.unit);
        let mut t =
            Table::new(std::iter::once(corner).chain(self.mem_nodes.iter().map(|n| n.to_string())));
        for (r, &cn) in self.cpu_nodes.iter().enumerate() {
            let mut row = vec![cn.to_string()];
            for (c, &mn) in self.mem_nodes.iter().enumerate() {
                let s = match self.matrix[r][c] {
                    None if self
                        .failed
                        .iter()
                        .any(|f| f.cpu_node == cn && f.mem_node == mn) =>
                    {
                        "failed".to_string()
                    }
                    None => "-".to_string(),
                    Some(v) => {
                        let flagged = self.cell(cn, mn).is_some_and(|x| x.flagged);
                        format!("{}{}", self.value(v), if flagged { "*" } else { "" })
                    }
                };
                row.push(s);
            }
            t.push(row);
        }
        t
    }

    /// One row per cell with its spread, stop reason and placement.
    pub fn cells_table(&self, cells: &[Cell]) -> Table {
        let mut t = Table::new([
            "cpu",
            "mem",
            "threads",
            &format!("median [{}]", self.unit),
            "min",
            "max",
            "cv %",
            "samples",
            "stop",
            "on node %",
            "cpus",
        ]);
        for c in cells {
            t.push([
                c.cpu_node.to_string(),
                c.mem_node.to_string(),
                c.params.threads.to_string(),
                format!(
                    "{}{}",
                    self.value(c.median),
                    if c.flagged { "*" } else { "" }
                ),
                self.value(c.min),
                self.value(c.max),
                format!("{:.2}", c.cv * 100.0),
                c.kept().to_string(),
                c.stop.name().to_string(),
                format!("{:.1}", c.placement.fraction_on_intended * 100.0),
                crate::units::format_list(&c.cpus),
            ]);
        }
        t
    }

    /// Each flagged cell, where and why, without the leading `*`.
    fn flag_items(&self) -> Vec<String> {
        let all = self.cells.iter().chain(self.scaling.iter().flatten());
        let mut out: Vec<String> = all
            .filter(|c| c.flagged)
            .map(|c| {
                format!(
                    "cpu node {} / mem node {}: {}",
                    c.cpu_node,
                    c.mem_node,
                    c.flags.join("; ")
                )
            })
            .collect();
        out.dedup();
        out
    }

    fn flag_notes(&self) -> Vec<String> {
        self.flag_items()
            .into_iter()
            .map(|n| format!("* {n}"))
            .collect()
    }

    /// The matrix, its flags and its failed cells, the sentences wrapped to
    /// [`fit::WIDTH`], and nothing else: what a summary shows when the whole
    /// rendering is wider than a terminal or a page line. A flag's reasons
    /// run long ("memory traffic from other tasks: ..."), and they must not
    /// cost a busy machine's summary its matrix; every cell's details stay
    /// in the matrix's document and report.html.
    pub fn brief(&self, format: Format) -> String {
        let matrix = self.matrix_table().with_title(self.title());
        let (mut s, lead) = match format {
            // A leading `*` would start a list item.
            Format::Markdown => (matrix.to_markdown(), "\\* "),
            _ => (matrix.to_text(), "* "),
        };
        let (flags, failed) = (self.flag_items(), self.failed_notes());
        // In Markdown the sentences are a paragraph of their own.
        if format == Format::Markdown && !(flags.is_empty() && failed.is_empty()) {
            s.push('\n');
        }
        for n in flags {
            s.push_str(&fit::paragraph(lead, &n, BRIEF_LINES));
        }
        for n in failed {
            s.push_str(&fit::paragraph("", &n, BRIEF_LINES));
        }
        s
    }

    /// One line per failed cell, for the text and Markdown renderings.
    fn failed_notes(&self) -> Vec<String> {
        self.failed.iter().map(|f| format!("failed: {f}")).collect()
    }

    /// Render for people or spreadsheets. JSON is [`super::to_json`].
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Json => super::to_json(self),
            Format::Csv => self.long_table().to_csv(),
            Format::Markdown => {
                let mut s = self.markdown(self.title(), &self.flag_notes());
                for n in self.failed_notes() {
                    s.push_str(&format!("\n{n}\n"));
                }
                s
            }
            Format::Table => {
                let mut s = self.matrix_table().with_title(self.title()).to_text();
                for n in self.flag_notes().into_iter().chain(self.failed_notes()) {
                    s.push_str(&n);
                    s.push('\n');
                }
                s.push('\n');
                s.push_str(&self.cells_table(&self.cells).to_text());
                if let Some(sc) = &self.scaling {
                    s.push('\n');
                    s.push_str(
                        &self
                            .cells_table(sc)
                            .with_title("Scaling: threads on one node")
                            .to_text(),
                    );
                }
                for p in self.params_lines() {
                    s.push_str(&p);
                    s.push('\n');
                }
                for n in &self.notes {
                    s.push_str(&format!("note: {n}\n"));
                }
                for n in self.status_notes() {
                    s.push_str(&format!("({n})\n"));
                }
                s
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::matrix::tests::{sample, with_a_failure};

    #[test]
    fn json_has_the_contract_keys_and_nulls() {
        let v: serde_json::Value = serde_json::from_str(&sample().render(Format::Json)).unwrap();
        for k in [
            "schema",
            "kind",
            "unit",
            "cpu_nodes",
            "mem_nodes",
            "matrix",
            "cells",
            "placement_threshold",
            "stop_rule",
            "timer",
            "complete",
        ] {
            assert!(v.get(k).is_some(), "missing {k}");
        }
        assert_eq!(v["schema"], "numaprobe/1");
        assert_eq!(v["unit"], "ns");
        assert_eq!(v["matrix"][0][1], 140.25);
        assert!(v["matrix"][1][0].is_null());
        assert!(v["matrix"][0][2].is_null());
        let c = &v["cells"][1];
        for k in [
            "median",
            "min",
            "max",
            "cv",
            "samples",
            "stop",
            "placement",
            "cpus",
            "params",
            "kernel",
            "vector_width",
            "flagged",
        ] {
            assert!(c.get(k).is_some(), "cell missing {k}");
        }
        assert_eq!(c["flagged"], true);
        assert_eq!(c["placement"]["fraction_on_intended"], 0.5);
        // Round trip: the analysis reads these documents back.
        let back: MatrixResult = serde_json::from_value(v).unwrap();
        assert_eq!(back, sample());
    }

    #[test]
    fn text_marks_flagged_cells_and_shows_unit() {
        let s = sample().render(Format::Table);
        assert!(s.contains("[ns]"), "{s}");
        assert!(s.contains("140.2*") || s.contains("140.3*"), "{s}");
        assert!(
            s.contains("* cpu node 0 / mem node 1: placement 50.0 % < 99 %"),
            "{s}"
        );
        assert!(s.lines().nth(2).unwrap().ends_with('-'), "{s}");
    }

    #[test]
    fn an_idle_latency_title_states_the_buffer_its_cells_chased() {
        let title = "Idle latency (ns), 1 MiB buffer, median; rows: CPU node, columns: memory node";
        let m = sample();
        assert_eq!(m.render(Format::Table).lines().next(), Some(title));
        assert!(m.render(Format::Markdown).contains(title));
        // Cells of several sizes: each cell's parameters say its own.
        let mut mixed = sample();
        mixed.cells[1].params.size_bytes = 2 << 20;
        assert_eq!(mixed.buffer_words(), None);
        assert!(mixed
            .render(Format::Table)
            .starts_with("Idle latency (ns), median; rows"));
        mixed.cells[1].params.size_bytes = 1 << 20;
        assert_eq!(mixed.buffer_words().as_deref(), Some("1 MiB buffer"));
        // Bandwidth's figure is a stream's, past the caches at any size
        // the plan takes: no size in its title.
        let mut bw = sample();
        bw.kind = MatrixKind::Bandwidth;
        assert_eq!(bw.buffer_words(), None);
        assert!(bw
            .render(Format::Table)
            .starts_with("Bandwidth (ns), median; rows"));
        // No cells, or a size never recorded: nothing said.
        let mut none = sample();
        none.cells.clear();
        assert_eq!(none.buffer_words(), None);
        let mut zero = sample();
        zero.cells.iter_mut().for_each(|c| c.params.size_bytes = 0);
        assert_eq!(zero.buffer_words(), None);
    }

    #[test]
    fn brief_keeps_the_matrix_and_wraps_long_reasons() {
        let mut m = with_a_failure();
        let long = format!("memory traffic from other tasks: {}", "word ".repeat(150));
        m.cells[0].flags = vec![long.trim_end().to_string()];
        m.cells[0].flagged = true;
        let text = m.brief(Format::Table);
        assert!(fit::fits(&text), "{text}");
        assert!(text.starts_with(&m.matrix_table().with_title(m.title()).to_text()));
        let first = text.lines().find(|l| l.starts_with("* cpu node")).unwrap();
        assert!(first.contains("memory traffic from other tasks"), "{text}");
        // The sentence goes on indented under its mark, then is cut.
        let rest: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("* cpu node"))
            .skip(1)
            .take_while(|l| l.starts_with("  "))
            .collect();
        assert_eq!(rest.len(), BRIEF_LINES - 1, "{text}");
        assert!(rest.last().unwrap().ends_with("..."), "{text}");
        // The failure too, and nothing of the cells' details.
        assert!(
            text.contains("failed: CPU 4 (node 1) -> memory node 2"),
            "{text}"
        );
        assert!(
            !text.contains("budget_spent") && !text.contains("kernel "),
            "{text}"
        );
        let md = m.brief(Format::Markdown);
        assert!(fit::fits(&md), "{md}");
        assert!(
            md.contains("|\n\n\\* cpu node"),
            "a paragraph of its own: {md}"
        );
        // Flags alone, no failure: still a paragraph of their own.
        let flags_only = sample().brief(Format::Markdown);
        assert!(flags_only.contains("|\n\n\\* cpu node"), "{flags_only}");
        let mut clean = sample();
        clean.cells.iter_mut().for_each(|c| c.flagged = false);
        let plain = clean.brief(Format::Markdown);
        assert_eq!(
            plain,
            clean.matrix_table().with_title(clean.title()).to_markdown()
        );
        assert!(md.contains("\\* cpu node"), "{md}");
        assert!(md.contains("| 1 | - | 91.0 | failed |"), "{md}");
    }

    #[test]
    fn markdown_shows_the_matrix_and_its_flags() {
        let md = sample().render(Format::Markdown);
        assert!(md.contains("| 0 | 90.0 | 140.2* | - |"), "{md}");
        assert!(md.contains("placement 50.0 %"), "{md}");
    }

    #[test]
    fn failed_cells_are_shown_in_every_format() {
        let m = with_a_failure();
        let line = "failed: CPU 4 (node 1) -> memory node 2: 70 MiB does not fit in node 2's allocatable memory (51 MiB now)";
        let text = m.render(Format::Table);
        assert!(text.lines().any(|l| l == line), "{text}");
        // The matrix says which empty cell failed and which was not measured.
        assert!(text.lines().nth(3).unwrap().ends_with("failed"), "{text}");
        assert!(text.lines().nth(2).unwrap().ends_with('-'), "{text}");
        let md = m.render(Format::Markdown);
        assert!(md.lines().any(|l| l == line), "{md}");
        assert!(md.contains("| 1 | - | 91.0 | failed |"), "{md}");
        // CSV: one row `failed` with the cell, its CPUs, no median and the
        // reason in the note column.
        let csv = m.render(Format::Csv);
        let row = csv
            .lines()
            .find(|l| l.starts_with("failed,"))
            .unwrap_or_else(|| panic!("{csv}"));
        assert!(row.starts_with("failed,latency,1,2,,"), "{row}");
        assert!(
            row.ends_with(",70 MiB does not fit in node 2's allocatable memory (51 MiB now)"),
            "{row}"
        );
        assert!(!sample().render(Format::Csv).contains("\nfailed,"));
    }

    #[test]
    fn failed_cells_are_in_the_json_and_read_back() {
        let m = with_a_failure();
        let v: serde_json::Value = serde_json::from_str(&m.render(Format::Json)).unwrap();
        assert_eq!(v["failed"][0]["cpus"], serde_json::json!([4]));
        assert_eq!(v["failed"][0]["mem_node"], 2);
        assert!(v["matrix"][1][2].is_null());
        let back: MatrixResult = serde_json::from_value(v).unwrap();
        assert_eq!(back, m);
        // Documents written before `failed` existed still read.
        let mut old: serde_json::Value =
            serde_json::from_str(&sample().render(Format::Json)).unwrap();
        old.as_object_mut().unwrap().remove("failed");
        let back: MatrixResult = serde_json::from_value(old).unwrap();
        assert!(back.failed.is_empty());
    }
}
