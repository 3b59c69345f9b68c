//! Foreign text made safe to show: the one place that decides which
//! characters of a string from outside (a document's field, a host or node
//! name, a path, a sysfs value, a stream line) may reach a terminal, a log,
//! Markdown, CSV, HTML or XML.
//!
//! A character is *unsafe* when it can steer a terminal or a log reader
//! (C0 controls such as ESC and CR, DEL, C1 controls), when XML 1.0 forbids
//! it or Unicode reserves it as a non-character (U+FFFE, U+FFFF, U+FDD0 to
//! U+FDEF and the last two code points of every plane), when it reorders
//! what is displayed (bidi embeddings, overrides, isolates and marks: the
//! "Trojan Source" characters), or when it breaks a line outside ASCII
//! (U+2028, U+2029). An unsafe character is never dropped silently: it is
//! written as a visible escape (`\n`, `\r`, `\t`, `\0`, `\u{1b}`), which is
//! plain ASCII and so safe in every context, and the reader sees that
//! something was there.
//!
//! [`line`] is the base every context builds on: one line, clipped to a
//! stated number of characters. [`block`] keeps line feeds and tabs for
//! text that is meant to span lines. [`html`] (also XML: character data and
//! attribute values), [`markdown_cell`] and [`csv_field`] add their format's
//! own quoting on top, so a renderer calls one of them and nothing else.

/// The number of characters a foreign value keeps in a message or a table
/// cell unless its caller states another: enough for any real name or path.
pub const SHOWN_MAX: usize = 200;

/// Unbounded: for callers that clip by their own rule afterwards.
pub const UNCLIPPED: usize = usize::MAX;

/// What a clipped value ends with.
const CLIPPED: &str = "...";

/// True for a character no output context may receive as it is.
pub fn is_unsafe(c: char) -> bool {
    let u = c as u32;
    c.is_control() // C0, DEL, C1 (U+0085 NEL among them)
        || (0xFDD0..=0xFDEF).contains(&u)
        || (u & 0xFFFE) == 0xFFFE // U+xFFFE and U+xFFFF of every plane
        || (0x202A..=0x202E).contains(&u) // LRE RLE PDF LRO RLO
        || (0x2066..=0x2069).contains(&u) // LRI RLI FSI PDI
        || matches!(u, 0x200E | 0x200F | 0x061C) // LRM RLM ALM
        || matches!(u, 0x2028 | 0x2029) // line and paragraph separators
}

/// The visible, ASCII-only form of an unsafe character.
fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\0' => out.push_str("\\0"),
        c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
    }
}

/// The shared walk: every unsafe character escaped except those `keep`
/// lets through; at most `max` characters written, counting escapes at
/// their written length, and [`CLIPPED`] appended when the value was cut.
fn cleaned(s: &str, max: usize, keep: impl Fn(char) -> bool) -> String {
    let mut out = String::with_capacity(s.len().min(max.saturating_add(8)));
    let mut written = 0usize;
    let mut piece = String::new();
    for c in s.chars() {
        piece.clear();
        if is_unsafe(c) && !keep(c) {
            push_escaped(&mut piece, c);
        } else {
            piece.push(c);
        }
        let n = piece.chars().count();
        if written.saturating_add(n) > max {
            out.push_str(CLIPPED);
            return out;
        }
        written += n;
        out.push_str(&piece);
    }
    out
}

/// `s` as one line of a terminal, a log or an error message: every unsafe
/// character (line breaks and tabs too) escaped, at most `max` characters
/// kept (then `...`).
pub fn line(s: &str, max: usize) -> String {
    cleaned(s, max, |_| false)
}

/// `s` as text that may span lines (a note, a command line in a report):
/// as [`line`], but line feeds and tabs are kept. A carriage return is
/// escaped all the same: on a terminal it rewinds the line and hides what
/// was written before it.
pub fn block(s: &str, max: usize) -> String {
    cleaned(s, max, |c| c == '\n' || c == '\t')
}

/// `s` as HTML or XML 1.0 character data or attribute value: [`block`]
/// (unclipped; every character left is one XML 1.0 allows), then
/// `& < > " '` as entities.
pub fn html(s: &str) -> String {
    let safe = block(s, UNCLIPPED);
    let mut out = String::with_capacity(safe.len());
    for c in safe.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `s` as a cell of a GitHub Markdown table: [`block`] (unclipped), `|`
/// escaped and a line break (`\n` or `\r\n`) written as `<br>` (a raw one
/// would end the row).
pub fn markdown_cell(s: &str) -> String {
    block(&s.replace("\r\n", "\n"), UNCLIPPED)
        .replace('|', "\\|")
        .replace('\n', "<br>")
}

/// `s` as one RFC 4180 CSV field: [`block`] (unclipped), a leading `'`
/// before text a spreadsheet would run as a formula, then quoted with its
/// quotes doubled when it holds a comma, a quote or a line feed.
///
/// A field opening with `=`, `+`, `-` or `@` is a formula to Excel and
/// LibreOffice (`=HYPERLINK(...)` in a host name or a node's reason, read
/// from another machine, would run when an administrator opens the fleet's
/// CSV); the quote makes it text. A number (`-0.5`, `+3`) and a lone `-`
/// (a missing figure) are left as they are: a spreadsheet reads them as
/// the column means them.
pub fn csv_field(s: &str) -> String {
    let safe = csv_text(s);
    if safe.contains([',', '"', '\n']) {
        format!("\"{}\"", safe.replace('"', "\"\""))
    } else {
        safe
    }
}

/// What a reader of [`csv_field`]'s output gets back: `s` through
/// [`block`], with the leading `'` of a would-be formula.
pub fn csv_text(s: &str) -> String {
    let mut safe = block(s, UNCLIPPED);
    if safe.len() > 1 && safe.starts_with(['=', '+', '-', '@']) && safe.parse::<f64>().is_err() {
        safe.insert(0, '\'');
    }
    safe
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every character class the module promises to neutralise.
    const HOSTILE: &[char] = &[
        '\u{1b}',
        '\r',
        '\n',
        '\t',
        '\0',
        '\u{7}',
        '\u{7f}',
        '\u{85}',
        '\u{9b}',
        '\u{fffe}',
        '\u{ffff}',
        '\u{fdd0}',
        '\u{fdef}',
        '\u{1fffe}',
        '\u{10ffff}',
        '\u{202a}',
        '\u{202e}',
        '\u{2066}',
        '\u{2069}',
        '\u{200f}',
        '\u{2028}',
        '\u{2029}',
    ];

    /// XML 1.0's Char production (surrogates cannot be a `char`).
    fn xml_allows(c: char) -> bool {
        matches!(c as u32, 0x9 | 0xA | 0xD | 0x20..=0xD7FF | 0xE000..=0xFFFD | 0x10000..=0x10FFFF)
    }

    #[test]
    fn every_hostile_character_becomes_a_visible_ascii_escape_on_a_line() {
        for &c in HOSTILE {
            let s = format!("a{c}b");
            let out = line(&s, SHOWN_MAX);
            assert!(!out.chars().any(is_unsafe), "{c:?} -> {out:?}");
            assert!(
                out.starts_with("a\\") && out.ends_with('b'),
                "{c:?} -> {out:?}"
            );
            assert!(out.is_ascii(), "{c:?} -> {out:?}");
        }
        assert_eq!(line("\u{1b}[31mred\r\n", SHOWN_MAX), "\\u{1b}[31mred\\r\\n");
        assert_eq!(line("\u{202e}cba", SHOWN_MAX), "\\u{202e}cba");
    }

    #[test]
    fn ordinary_text_is_left_as_it_is() {
        for s in [
            "node-01.cluster",
            "Größe → 12 GiB",
            "日本語",
            "a b\\c",
            "\u{1F600}",
            "",
        ] {
            assert_eq!(line(s, SHOWN_MAX), s);
            assert_eq!(block(s, SHOWN_MAX), s);
        }
        assert!(!is_unsafe('\u{fffd}') && !is_unsafe('\u{fdcf}') && !is_unsafe('\u{fdf0}'));
        assert!(!is_unsafe('\u{2065}') && !is_unsafe('\u{206a}') && !is_unsafe('\u{2027}'));
    }

    #[test]
    fn a_block_keeps_line_feeds_and_tabs_but_not_carriage_returns() {
        assert_eq!(block("a\nb\tc\rd\u{1b}", SHOWN_MAX), "a\nb\tc\\rd\\u{1b}");
    }

    #[test]
    fn a_long_value_is_clipped_to_the_stated_length_escapes_counted() {
        let s = "x".repeat(500);
        let out = line(&s, 10);
        assert_eq!(out, format!("{}...", "x".repeat(10)));
        assert_eq!(line("abcdefghij", 10), "abcdefghij");
        // An escape is never cut in half: it is kept whole or not at all.
        assert_eq!(line("abcdefgh\u{1b}", 10), "abcdefgh...");
        assert_eq!(line("abcd\u{1b}", 10), "abcd\\u{1b}");
        assert_eq!(
            line(&"\u{1b}".repeat(1000), SHOWN_MAX).chars().count(),
            198 + 3
        );
    }

    #[test]
    fn html_and_xml_get_entities_and_only_characters_xml_allows() {
        assert_eq!(html("a<b>&\"c'd"), "a&lt;b&gt;&amp;&quot;c&#39;d");
        for &c in HOSTILE {
            let out = html(&format!("x{c}y"));
            assert!(out.chars().all(xml_allows), "{c:?} -> {out:?}");
            assert!(!out.chars().any(is_unsafe) || c == '\n' || c == '\t');
        }
        assert_eq!(html("two\nlines"), "two\nlines");
    }

    #[test]
    fn a_markdown_cell_cannot_end_its_row_or_colour_the_terminal() {
        assert_eq!(markdown_cell("a|b\nc"), "a\\|b<br>c");
        assert_eq!(markdown_cell("a\r\nb\rc\u{1b}[0m"), "a<br>b\\rc\\u{1b}[0m");
    }

    #[test]
    fn a_csv_field_a_spreadsheet_would_run_is_text_and_a_number_stays_a_number() {
        assert_eq!(
            csv_field("=HYPERLINK(\"http://x\")"),
            "\"'=HYPERLINK(\"\"http://x\"\")\""
        );
        assert_eq!(csv_field("+cmd|' /C calc'!A0"), "'+cmd|' /C calc'!A0");
        assert_eq!(csv_field("-2+3"), "'-2+3");
        assert_eq!(csv_field("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(csv_field("-0.5"), "-0.5");
        assert_eq!(csv_field("+3"), "+3");
        assert_eq!(csv_field("-1e-3"), "-1e-3");
        assert_eq!(csv_field("a=b"), "a=b");
        assert_eq!(csv_field(""), "");
        // A lone sign is a missing figure, not a formula.
        assert_eq!(csv_field("-"), "-");
    }

    #[test]
    fn a_csv_field_is_quoted_only_when_needed_and_never_holds_raw_controls() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("a\nb"), "\"a\nb\"");
        assert_eq!(csv_field("node\u{1b}[31m\r"), "node\\u{1b}[31m\\r");
    }
}
