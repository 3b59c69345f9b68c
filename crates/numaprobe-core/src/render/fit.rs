//! What fits a terminal: the main job's summary held to [`WIDTH`] columns
//! and a screenful of rows per table, whatever the machine's size. The full
//! detail stays in the report folder (report.html, the JSON documents) and
//! in the command that shows one part in full; a folded part says where.
//! summary.md is held to the same bounds ([`markdown`], [`paragraph`]).

use super::table::{Align, Table};

/// Columns a terminal line may take.
pub const WIDTH: usize = 120;
/// Rows of one table shown before the rest is folded into a line.
pub const ROWS: usize = 16;
/// Lines a wrapped cell may take before the rest is cut.
pub const CELL_LINES: usize = 2;

/// How a last text column wider than the terminal is brought in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Long {
    /// Prose: wrapped under itself, at most [`CELL_LINES`] lines.
    Wrap,
    /// Something to paste: one line, cut and marked (a wrapped command
    /// would paste as two).
    Cut,
}

/// `t` as terminal text within [`WIDTH`]: rows past [`ROWS`] folded into one
/// line that says how many and where they are (`rest`); a text last column
/// wrapped or cut per `long`. A table that still does not fit (a
/// node-by-node grid) gives way to `instead`.
pub fn table(t: &Table, long: Long, rest: &str, instead: impl FnOnce() -> String) -> String {
    let mut t = t.clone();
    let folded = t.rows.len().saturating_sub(ROWS);
    if folded > 0 {
        t.rows.truncate(ROWS - 1);
    }
    let text = t.to_text();
    let mut out = if fits(&text) {
        text
    } else {
        match bring_in(&t, long) {
            Some(s) => s,
            None => return instead(),
        }
    };
    if folded > 0 {
        out.push_str(&format!("... {} more; {rest}\n", folded + 1));
    }
    out
}

/// True when every line of `text` is within [`WIDTH`].
pub fn fits(text: &str) -> bool {
    text.lines().all(|l| l.chars().count() <= WIDTH)
}

/// The table with its last column wrapped or cut to what the others leave;
/// None when the other columns alone leave too little.
fn bring_in(t: &Table, long: Long) -> Option<String> {
    let last = t.headers.len().checked_sub(1)?;
    if t.align.get(last) != Some(&Align::Left) {
        return None;
    }
    let mut head = t.clone();
    head.title = None;
    for r in head
        .rows
        .iter_mut()
        .chain(std::iter::once(&mut head.headers))
    {
        r.truncate(last);
    }
    let used = head.to_text().lines().map(|l| l.chars().count()).max()? + 2;
    let room = WIDTH.checked_sub(used).filter(|r| *r >= 24)?;
    let mut out = t.clone();
    out.rows.clear();
    for r in &t.rows {
        let cell = r.get(last).cloned().unwrap_or_default();
        let pieces = match long {
            Long::Wrap => wrap(&cell, room, CELL_LINES),
            Long::Cut => vec![cut(&cell, room)],
        };
        for (i, p) in pieces.into_iter().enumerate() {
            let mut row = if i == 0 {
                r.clone()
            } else {
                vec![String::new(); last + 1]
            };
            row.truncate(last);
            row.push(p);
            out.rows.push(row);
        }
    }
    let text = out.to_text();
    fits(&text).then_some(text)
}

/// `s` in lines of at most `room` characters broken at spaces, at most
/// `lines` of them; a cut marked with "...".
pub fn wrap(s: &str, room: usize, lines: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    for w in s.split(' ') {
        let need = cur.chars().count() + usize::from(!cur.is_empty()) + w.chars().count();
        if need > room && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(w);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    if out.len() > lines {
        let rest = out[lines - 1..].join(" ");
        out.truncate(lines - 1);
        out.push(cut(&rest, room));
    }
    out.into_iter()
        .map(|l| {
            if l.chars().count() > room {
                cut(&l, room)
            } else {
                l
            }
        })
        .collect()
}

/// `s` within `room` characters: cut at the last space or comma that
/// leaves room for the mark " ...", or hard when there is none.
pub fn cut(s: &str, room: usize) -> String {
    if s.chars().count() <= room {
        return s.to_string();
    }
    const MARK: &str = " ...";
    let keep = room.saturating_sub(MARK.len());
    let head: String = s.chars().take(keep).collect();
    let at = head
        .rfind([' ', ','])
        .filter(|i| *i > keep / 2)
        .unwrap_or(head.len());
    format!("{}{MARK}", head[..at].trim_end_matches([',', ' ']))
}

/// Every line of `text` within [`WIDTH`]: wrapped on at most three lines,
/// the later ones indented two more than the first, then cut.
pub fn lines(text: &str) -> String {
    let mut out = String::new();
    for l in text.lines() {
        let body = l.trim_start();
        let indent = l.len() - body.len();
        for (i, piece) in wrap(body, WIDTH - indent - 2, 3).iter().enumerate() {
            out.push_str(&" ".repeat(indent + if i == 0 { 0 } else { 2 }));
            out.push_str(piece);
            out.push('\n');
        }
        if body.is_empty() {
            out.push('\n');
        }
    }
    out
}

/// `t` as a Markdown table within [`WIDTH`], as [`table`] does for the
/// terminal: rows past [`ROWS`] folded into a line naming where the rest is
/// (`rest`); a row cannot wrap in Markdown, so a last text column too wide
/// is cut and marked; a table that still does not fit gives way to
/// `instead`.
pub fn markdown(t: &Table, rest: &str, instead: impl FnOnce() -> String) -> String {
    let mut t = t.clone();
    let folded = t.rows.len().saturating_sub(ROWS);
    if folded > 0 {
        t.rows.truncate(ROWS - 1);
    }
    let mut out = t.to_markdown();
    if !fits(&out) {
        let Some(cut_table) = cut_last_markdown(&t) else {
            return instead();
        };
        out = cut_table;
    }
    if folded > 0 {
        out.push_str(&format!("\n... {} more; {rest}\n", folded + 1));
    }
    out
}

/// The Markdown table with its last (text) column cut to what the widest
/// row of the others leaves; None when that is too little.
fn cut_last_markdown(t: &Table) -> Option<String> {
    let last = t.headers.len().checked_sub(1)?;
    if t.align.get(last) != Some(&Align::Left) {
        return None;
    }
    let mut out = t.clone();
    for r in out.rows.iter_mut() {
        let mut head = r.clone();
        head.truncate(last);
        let probe = Table {
            rows: vec![head],
            title: None,
            ..t.clone()
        };
        // `| a | b | ` before the last cell, ` |` after it.
        let used = probe
            .to_markdown()
            .lines()
            .last()
            .map_or(0, |l| l.chars().count())
            + 3;
        let room = WIDTH.checked_sub(used).filter(|r| *r >= 24)?;
        if let Some(c) = r.get_mut(last) {
            *c = cut(c, room);
        }
    }
    let text = out.to_markdown();
    fits(&text).then_some(text)
}

/// A Markdown paragraph (or `- ` item, `> ` quote: `lead`) within
/// [`WIDTH`]: wrapped at spaces, its later lines indented under the first,
/// at most `lines` of them, then cut.
pub fn paragraph(lead: &str, text: &str, lines: usize) -> String {
    let indent = " ".repeat(lead.chars().count());
    let mut out = String::new();
    for (i, l) in wrap(text, WIDTH - lead.chars().count(), lines)
        .iter()
        .enumerate()
    {
        out.push_str(if i == 0 { lead } else { &indent });
        out.push_str(l);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn long_table(rows: usize, text_len: usize) -> Table {
        let mut t = Table::new(["kind", "text"]).with_align(vec![Align::Left, Align::Left]);
        for i in 0..rows {
            let words: Vec<String> = (0..text_len / 4).map(|j| format!("w{j:02}")).collect();
            t.push([format!("row{i}"), words.join(" ")]);
        }
        t
    }

    fn widest(s: &str) -> usize {
        s.lines().map(|l| l.chars().count()).max().unwrap_or(0)
    }

    #[test]
    fn a_table_that_fits_is_left_as_it_is() {
        let t = long_table(3, 40);
        assert_eq!(table(&t, Long::Wrap, "rest", String::new), t.to_text());
    }

    #[test]
    fn rows_past_a_screenful_fold_into_one_line_naming_the_rest() {
        let t = long_table(40, 20);
        let s = table(&t, Long::Wrap, "the report has them", String::new);
        assert!(s.contains("row14\n") || s.contains("row14 "), "{s}");
        assert!(!s.contains("row15"), "{s}");
        assert!(s.contains("... 25 more; the report has them"), "{s}");
        assert_eq!(s.lines().count(), 1 + ROWS - 1 + 1);
    }

    #[test]
    fn a_long_text_column_wraps_under_itself_within_the_width() {
        let t = long_table(2, 400);
        let s = table(&t, Long::Wrap, "rest", String::new);
        assert!(widest(&s) <= WIDTH, "{s}");
        // Two rows, each on at most CELL_LINES lines, under one header.
        assert_eq!(s.lines().count(), 1 + 2 * CELL_LINES, "{s}");
        assert!(s.lines().nth(2).unwrap().starts_with("      "), "{s}");
        assert!(s.contains(" ..."), "the cut is marked: {s}");
    }

    #[test]
    fn something_to_paste_stays_on_one_line_and_is_marked_cut() {
        let t = long_table(2, 400);
        let s = table(&t, Long::Cut, "rest", String::new);
        assert_eq!(s.lines().count(), 3, "{s}");
        assert!(widest(&s) <= WIDTH, "{s}");
        assert!(s.lines().nth(1).unwrap().ends_with(" ..."), "{s}");
    }

    #[test]
    fn a_grid_too_wide_gives_way() {
        let mut t = Table::new((0..64).map(|i| i.to_string()));
        t.push((0..64).map(|i| (i * 10).to_string()));
        assert_eq!(
            table(&t, Long::Wrap, "rest", || "instead".into()),
            "instead"
        );
    }

    #[test]
    fn a_markdown_table_folds_and_cuts_within_the_width() {
        let t = long_table(40, 400);
        let s = markdown(&t, "the report has them", String::new);
        assert!(widest(&s) <= WIDTH, "{s}");
        // Header, rule, a screenful of rows less one, the fold.
        assert_eq!(s.lines().count(), 2 + ROWS - 1 + 2, "{s}");
        assert!(s.contains("| row14 | w00 "), "{s}");
        assert!(s.lines().nth(2).unwrap().ends_with(" ... |"), "{s}");
        assert!(s.ends_with("\n... 25 more; the report has them\n"), "{s}");
        // A table that fits is the table.
        let small = long_table(3, 40);
        assert_eq!(markdown(&small, "rest", String::new), small.to_markdown());
        // A grid too wide gives way.
        let mut g = Table::new((0..64).map(|i| i.to_string()));
        g.push((0..64).map(|i| (i * 10).to_string()));
        assert_eq!(markdown(&g, "rest", || "instead".into()), "instead");
    }

    #[test]
    fn a_paragraph_wraps_under_its_lead() {
        let p = paragraph("- ", &"word ".repeat(100), 3);
        assert!(widest(&p) <= WIDTH, "{p}");
        assert_eq!(p.lines().count(), 3, "{p}");
        assert!(p.starts_with("- word"), "{p}");
        assert!(p.lines().nth(1).unwrap().starts_with("  word"), "{p}");
        assert!(p.trim_end().ends_with(" ..."), "{p}");
        assert_eq!(paragraph("> ", "short", 3), "> short\n");
    }

    #[test]
    fn cut_breaks_at_a_separator_and_marks_it() {
        assert_eq!(cut("0-1, 0-2, 0-3, 0-4", 13), "0-1, 0-2 ...");
        assert_eq!(cut("short", 13), "short");
        assert_eq!(cut("abcdefghijklmnop", 10), "abcdef ...");
        let l = lines(&format!("ok\n\n  {}\n", "x ".repeat(200)));
        assert!(widest(&l) <= WIDTH);
        assert!(l.starts_with("ok\n\n  x x"), "{l}");
        assert_eq!(l.lines().count(), 2 + 3, "{l}");
        assert!(l.lines().nth(3).unwrap().starts_with("    x"), "{l}");
    }
}
