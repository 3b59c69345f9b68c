//! One table model rendered three ways: aligned text for the terminal, GitHub
//! Markdown, and CSV (RFC 4180 quoting). Every command's CSV and Markdown come
//! from here so the formats cannot drift apart.

use crate::clean;

/// The characters a terminal table cell keeps: a document's value may be
/// long, a table row must stay readable.
pub const CELL_MAX: usize = 4 * clean::SHOWN_MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

#[derive(Debug, Clone, Default)]
pub struct Table {
    pub title: Option<String>,
    pub headers: Vec<String>,
    pub align: Vec<Align>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// A table whose first column is left-aligned and the rest right-aligned
    /// (a label column followed by numbers, the common case).
    pub fn new<S: Into<String>>(headers: impl IntoIterator<Item = S>) -> Self {
        let headers: Vec<String> = headers.into_iter().map(Into::into).collect();
        let align = (0..headers.len())
            .map(|i| if i == 0 { Align::Left } else { Align::Right })
            .collect();
        Table {
            title: None,
            headers,
            align,
            rows: Vec::new(),
        }
    }

    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    pub fn with_align(mut self, align: Vec<Align>) -> Self {
        self.align = align;
        self
    }

    pub fn push<S: Into<String>>(&mut self, row: impl IntoIterator<Item = S>) {
        self.rows.push(row.into_iter().map(Into::into).collect());
    }

    fn width(&self) -> usize {
        self.rows
            .iter()
            .map(Vec::len)
            .chain(std::iter::once(self.headers.len()))
            .max()
            .unwrap_or(0)
    }

    fn align_of(&self, col: usize) -> Align {
        self.align.get(col).copied().unwrap_or(Align::Right)
    }

    /// Aligned plain text, columns separated by two spaces, no trailing
    /// blanks. Every cell and the title are cleaned as one terminal line
    /// ([`clean::line`], at most [`CELL_MAX`] characters): a cell from a
    /// document can neither colour the terminal nor break the alignment.
    pub fn to_text(&self) -> String {
        let n = self.width();
        let cell = |r: &Vec<String>, i: usize| {
            r.get(i)
                .map(|c| clean::line(c, CELL_MAX))
                .unwrap_or_default()
        };
        let mut widths = vec![0usize; n];
        for r in std::iter::once(&self.headers).chain(self.rows.iter()) {
            for (i, w) in widths.iter_mut().enumerate() {
                *w = (*w).max(cell(r, i).chars().count());
            }
        }
        let mut out = String::new();
        if let Some(t) = &self.title {
            out.push_str(&clean::line(t, CELL_MAX));
            out.push('\n');
        }
        let line = |r: &Vec<String>| {
            let mut s = String::new();
            for (i, w) in widths.iter().enumerate() {
                let c = cell(r, i);
                let pad = w - c.chars().count();
                if i > 0 {
                    s.push_str("  ");
                }
                match self.align_of(i) {
                    Align::Left => {
                        s.push_str(&c);
                        s.push_str(&" ".repeat(pad));
                    }
                    Align::Right => {
                        s.push_str(&" ".repeat(pad));
                        s.push_str(&c);
                    }
                }
            }
            s.trim_end().to_string() + "\n"
        };
        if !self.headers.is_empty() {
            out.push_str(&line(&self.headers));
        }
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out
    }

    /// GitHub-flavoured Markdown, every cell through [`clean::markdown_cell`]
    /// (`|` escaped, a line break as `<br>`, unsafe characters visible).
    pub fn to_markdown(&self) -> String {
        let n = self.width();
        let esc = clean::markdown_cell;
        let row = |r: &Vec<String>| {
            let cells: Vec<String> = (0..n)
                .map(|i| esc(r.get(i).map(String::as_str).unwrap_or("")))
                .collect();
            format!("| {} |\n", cells.join(" | "))
        };
        let mut out = String::new();
        if let Some(t) = &self.title {
            out.push_str(&format!("**{}**\n\n", esc(t)));
        }
        out.push_str(&row(&self.headers));
        let rule: Vec<&str> = (0..n)
            .map(|i| match self.align_of(i) {
                Align::Left => ":---",
                Align::Right => "---:",
            })
            .collect();
        out.push_str(&format!("| {} |\n", rule.join(" | ")));
        for r in &self.rows {
            out.push_str(&row(r));
        }
        out
    }

    /// CSV with a header line (RFC 4180), every field through
    /// [`clean::csv_field`] (quoted when it holds a comma, a quote or a line
    /// feed; unsafe characters visible). A row shorter than the header is
    /// padded with empty fields, so every line has as many fields as the
    /// header (loadable).
    pub fn to_csv(&self) -> String {
        let n = self.width();
        let mut out = String::new();
        for r in std::iter::once(&self.headers).chain(&self.rows) {
            csv_record(
                &mut out,
                (0..n).map(|i| r.get(i).map(String::as_str).unwrap_or("")),
            );
        }
        out
    }
}

/// One CSV line appended to `out`, every field through
/// [`clean::csv_field`] as [`Table::to_csv`] writes them: for a renderer
/// whose lines are too many to hold as a table first.
pub fn csv_record<'a>(out: &mut String, fields: impl IntoIterator<Item = &'a str>) {
    for (i, s) in fields.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&clean::csv_field(s));
    }
    out.push('\n');
}

/// Read RFC 4180 CSV back into records (for tests: the CSV every command
/// writes must load into a reader as the same fields).
#[cfg(test)]
pub(crate) fn read_csv(s: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut rec = Vec::new();
    let mut field = String::new();
    let mut chars = s.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                _ => field.push(c),
            }
            continue;
        }
        match c {
            '"' => quoted = true,
            ',' => rec.push(std::mem::take(&mut field)),
            '\n' => {
                rec.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut rec));
            }
            _ => field.push(c),
        }
    }
    if !field.is_empty() || !rec.is_empty() {
        rec.push(field);
        records.push(rec);
    }
    records
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

    fn sample() -> Table {
        let mut t = Table::new(["node", "0", "1"]);
        t.push(["0", "10", "21"]);
        t.push(["1, far", "21", "10"]);
        t
    }

    #[test]
    fn text_aligns_numbers_right_and_labels_left() {
        let s = sample().to_text();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "node     0   1");
        assert_eq!(lines[1], "0       10  21");
        assert_eq!(lines[2], "1, far  21  10");
    }

    #[test]
    fn csv_quotes_only_fields_that_need_it() {
        let s = sample().to_csv();
        assert_eq!(s, "node,0,1\n0,10,21\n\"1, far\",21,10\n");
    }

    #[test]
    fn markdown_has_alignment_rule_and_escapes_pipes() {
        let mut t = Table::new(["a|b", "n"]);
        t.push(["x", "1"]);
        let s = t.to_markdown();
        assert_eq!(s, "| a\\|b | n |\n| :--- | ---: |\n| x | 1 |\n");
    }

    #[test]
    fn csv_quotes_commas_quotes_and_line_breaks() {
        let mut t = Table::new(["flags", "command"]);
        t.push(["placement 50 %, \"odd\" node", "OMP_PLACES=\"{0},{1}\""]);
        t.push(["two\nlines", ""]);
        let s = t.to_csv();
        assert_eq!(
            s,
            "flags,command\n\"placement 50 %, \"\"odd\"\" node\",\"OMP_PLACES=\"\"{0},{1}\"\"\"\n\"two\nlines\",\n"
        );
        assert_eq!(read_csv(&s)[1], t.rows[0]);
        assert_eq!(read_csv(&s)[2], t.rows[1]);
    }

    #[test]
    fn short_rows_are_padded_to_the_header() {
        let mut t = Table::new(["a", "b", "c"]);
        t.push(["1"]);
        assert_eq!(t.to_csv(), "a,b,c\n1,,\n");
    }

    /// A document's value such as `thp_mode` reaches every form of a table;
    /// none of them may carry its ESC, CR or bidi override as they are.
    #[test]
    fn a_hostile_cell_reaches_no_form_raw() {
        let hostile = "always\u{1b}[31m\rnever\u{202e}";
        let mut t = Table::new(["setting", "value"]).with_title("thp\u{1b}[2J");
        t.push(["thp_mode", hostile]);
        for out in [t.to_text(), t.to_markdown(), t.to_csv()] {
            assert!(!out.contains(['\u{1b}', '\r', '\u{202e}']), "{out:?}");
            assert!(
                out.contains("always\\u{1b}[31m\\rnever\\u{202e}"),
                "{out:?}"
            );
        }
        // The terminal form stays aligned: one line per row.
        assert_eq!(t.to_text().lines().count(), 3);
        let long = "x".repeat(5 * CELL_MAX);
        let mut t = Table::new(["a"]);
        t.push([long.as_str()]);
        assert!(t
            .to_text()
            .lines()
            .all(|l| l.chars().count() <= CELL_MAX + 3));
    }

    #[test]
    fn markdown_keeps_a_line_break_inside_its_row() {
        let mut t = Table::new(["a"]);
        t.push(["x\ny"]);
        assert_eq!(t.to_markdown().lines().count(), 3);
        assert!(t.to_markdown().contains("| x<br>y |"));
    }

    /// Any fields (commas, quotes, line breaks, unicode) come back from the
    /// CSV as they went in once cleaned (a control character as its visible
    /// escape), the same number on every line. Fixed seed, no
    /// persistence: the same cases on every run.
    #[test]
    fn csv_round_trips_arbitrary_fields() {
        let config = Config {
            cases: 2000,
            failure_persistence: None,
            ..Config::default()
        };
        let mut runner =
            TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]));
        let field = proptest::string::string_regex("(.|\n|\r\n|,|\"|=|-){0,12}").unwrap();
        let rows = proptest::collection::vec(proptest::collection::vec(field, 3), 1..5);
        runner
            .run(&rows, |rows| {
                let mut t = Table::new(["x", "y,", "\"z\""]);
                for r in &rows {
                    t.push(r.clone());
                }
                let back = read_csv(&t.to_csv());
                prop_assert_eq!(&back[0], &t.headers);
                let cleaned: Vec<Vec<String>> = rows
                    .iter()
                    .map(|r| r.iter().map(|f| clean::csv_text(f)).collect())
                    .collect();
                prop_assert_eq!(&back[1..], &cleaned[..]);
                Ok(())
            })
            .unwrap();
    }
}
