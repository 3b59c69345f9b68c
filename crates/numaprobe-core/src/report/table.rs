//! One table model rendered three ways: aligned text for the terminal, GitHub
//! Markdown, and CSV (RFC 4180 quoting). Every command's CSV and Markdown come
//! from here so the formats cannot drift apart.

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

    /// Aligned plain text, columns separated by two spaces, no trailing blanks.
    pub fn to_text(&self) -> String {
        let n = self.width();
        let cell = |r: &Vec<String>, i: usize| r.get(i).cloned().unwrap_or_default();
        let mut widths = vec![0usize; n];
        for r in std::iter::once(&self.headers).chain(self.rows.iter()) {
            for (i, w) in widths.iter_mut().enumerate() {
                *w = (*w).max(cell(r, i).chars().count());
            }
        }
        let mut out = String::new();
        if let Some(t) = &self.title {
            out.push_str(t);
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

    /// GitHub-flavoured Markdown; `|` inside cells is escaped.
    pub fn to_markdown(&self) -> String {
        let n = self.width();
        let esc = |s: &str| s.replace('|', "\\|");
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

    /// CSV with a header line; fields quoted only when they need it.
    pub fn to_csv(&self) -> String {
        fn field(s: &str) -> String {
            if s.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.to_string()
            }
        }
        let line =
            |r: &Vec<String>| r.iter().map(|c| field(c)).collect::<Vec<_>>().join(",") + "\n";
        let mut out = line(&self.headers);
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
