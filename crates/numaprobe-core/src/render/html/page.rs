//! The page skeleton of the HTML report: head, inline stylesheet, the table
//! of contents, the sections, and the helpers every section uses (escaping,
//! tables, colour scales).
//!
//! Every piece of text that comes from a document (host names, command
//! lines, labels, findings) goes through [`escape`]: a report is shared, and
//! a host name or a label must never become markup.

use super::{ReportInput, SECTIONS};
use crate::render::table::Align;
use crate::render::table::Table;

/// Text as HTML/XML character data or attribute value: the one cleaner of
/// foreign text ([`crate::clean::html`]: unsafe characters made visible,
/// `& < > " '` replaced).
pub fn escape(s: &str) -> String {
    crate::clean::html(s)
}

/// Printed and screen styles: sections scroll inside themselves (a 64-node
/// matrix or a 256-CPU machine never makes the page wider than the window),
/// matrix headers stay in view while scrolling. A table cell breaks only
/// between words (`break-word`, unlike `anywhere`, leaves a column at least
/// as wide as its longest word) and a header never breaks: a narrow window
/// scrolls the table rather than print "task set" or "lev el".
const CSS: &str = r#"
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
  margin: 0; color: #1d2330; background: #f4f5f7; }
header { background: #1f3b57; color: #fff; padding: 14px 24px; }
header h1 { margin: 0; font-size: 22px; }
header p { margin: 4px 0 0; opacity: .85; }
nav { background: #fff; border-bottom: 1px solid #d5d9e0; padding: 6px 24px; position: sticky; top: 0; z-index: 5; }
nav a { margin-right: 14px; color: #1f3b57; text-decoration: none; white-space: nowrap; }
nav a:hover { text-decoration: underline; }
main { padding: 8px 24px 40px; max-width: 1500px; }
section { background: #fff; border: 1px solid #d5d9e0; border-radius: 6px; margin: 16px 0; padding: 4px 18px 14px; }
h2 { font-size: 19px; margin: 12px 0 8px; }
h3 { font-size: 15px; margin: 14px 0 6px; }
.note { color: #5b6475; }
.warn { background: #fff4d6; border-left: 4px solid #e0a800; padding: 6px 10px; margin: 8px 0; }
.scroll { overflow: auto; max-height: 80vh; max-width: 100%; border: 1px solid #e3e6eb; border-radius: 4px; }
.scroll > svg { display: block; }
table.data { border-collapse: collapse; margin: 6px 0 10px; font-size: 13px; }
table.data th, table.data td { border: 1px solid #dde1e7; padding: 3px 8px; vertical-align: top; overflow-wrap: break-word; word-break: normal; hyphens: none; }
table.data th { white-space: nowrap; }
span.nw { white-space: nowrap; }
span.long { overflow-wrap: anywhere; }
details { margin: 6px 0; }
summary { cursor: pointer; font-weight: 600; }
table.data th { background: #eef1f5; text-align: left; }
table.data td.r { text-align: right; font-variant-numeric: tabular-nums; }
table.data td.code, code { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12px; }
table.kv th { width: 12em; }
table.heat { border-collapse: separate; border-spacing: 0; font-size: 12px; font-variant-numeric: tabular-nums; }
table.heat th, table.heat td { padding: 3px 6px; text-align: right; border-right: 1px solid #fff; border-bottom: 1px solid #fff; white-space: nowrap; }
table.heat thead th { position: sticky; top: 0; background: #e6e9ee; z-index: 2; }
table.heat tbody th { position: sticky; left: 0; background: #e6e9ee; z-index: 1; }
table.heat thead th.corner { left: 0; z-index: 3; }
table.heat.compact { font-size: 10px; }
table.heat.compact th, table.heat.compact td { padding: 1px 2px; }
table.heat td.flag { outline: 2px dashed #b00020; outline-offset: -3px; background: repeating-linear-gradient(45deg, #f2f2f2, #f2f2f2 4px, #dcdcdc 4px, #dcdcdc 8px); color: #333; }
table.heat td.flag.none { background: repeating-linear-gradient(45deg, #f2f2f2, #f2f2f2 4px, #dcdcdc 4px, #dcdcdc 8px); color: #333; }
table.heat td.none { background: #f7f7f7; color: #9aa1ad; }
.legend { font-size: 12px; color: #5b6475; margin: 4px 0 10px; }
.swatch { display: inline-block; width: 12px; height: 12px; vertical-align: -2px; border-radius: 2px; margin: 0 3px 0 8px; }
ul.findings li { margin: 3px 0; }
.tag { display: inline-block; font-size: 11px; padding: 0 6px; border-radius: 8px; background: #e6e9ee; color: #39414f; margin-right: 4px; }
.tag.advice { background: #dff3e4; }
.tag.finding { background: #e3ecfa; }
.tag.warning { background: #fff0c2; }
.figure { margin: 8px 0 14px; }
.figure svg { max-width: 100%; height: auto; }
.figure.wide svg { max-width: none; }
.absent { color: #5b6475; margin: 16px 0; padding: 0 18px; }
.absent p { margin: 0; }
.absent summary { font-weight: normal; }
footer { color: #5b6475; font-size: 12px; padding: 0 24px 24px; }
@media print { nav { display: none; } .scroll { max-height: none; overflow: visible; } }
"#;

/// No script, no outside resource: said to the browser too. Every page
/// numaprobe writes carries it (report.html, fleet.html).
pub const CSP: &str = "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\" />\n";

/// The page around the sections' bodies (in [`SECTIONS`] order).
pub fn page(input: &ReportInput, bodies: &[String]) -> String {
    let title = if input.title.is_empty() {
        "numaprobe report".to_string()
    } else {
        format!("numaprobe report: {}", input.title)
    };
    let mut s = String::with_capacity(64 * 1024);
    s.push_str(
        "<!DOCTYPE html>\n<html lang=\"en\" xmlns=\"http://www.w3.org/1999/xhtml\">\n<head>\n",
    );
    s.push_str("<meta charset=\"utf-8\" />\n");
    s.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" />\n");
    s.push_str(CSP);
    s.push_str(&format!("<title>{}</title>\n", escape(&title)));
    s.push_str("<style>");
    s.push_str(CSS);
    s.push_str("</style>\n</head>\n<body>\n<header>\n");
    s.push_str(&format!("<h1>{}</h1>\n", escape(&title)));
    s.push_str(&format!("<p>{}</p>\n", prose(&subtitle(input))));
    s.push_str("</header>\n<nav>");
    let shown: Vec<bool> = bodies.iter().map(|b| !b.trim().is_empty()).collect();
    for ((id, heading, _), &on) in SECTIONS.iter().zip(&shown) {
        // A newline between links is where the bar may wrap: without it the
        // links are one unbreakable run wider than a narrow window.
        if on {
            s.push_str(&format!("<a href=\"#{id}\">{}</a>\n", escape(heading)));
        }
    }
    s.push_str("</nav>\n<main>\n");
    if let Some(b) = banner(input) {
        s.push_str(&b);
    }
    for (((id, heading, _), body), &on) in SECTIONS.iter().zip(bodies).zip(&shown) {
        if on {
            s.push_str(&format!(
                "<section id=\"{id}\">\n<h2>{}</h2>\n{body}</section>\n",
                escape(heading)
            ));
        }
    }
    s.push_str(&absent(&shown));
    s.push_str("</main>\n<footer>Written by numaprobe ");
    s.push_str(&escape(env!("CARGO_PKG_VERSION")));
    s.push_str(" from the JSON documents beside this file; <code>numaprobe report DIR</code> rebuilds it.</footer>\n</body>\n</html>\n");
    s
}

/// The warning above the sections, only for an incomplete result: with a
/// run.json its `status` decides (the same `complete` as run.json and
/// summary.md; a phase cut short by its budget share leaves the run
/// complete and is said in the provenance table, not in a banner).
fn banner(input: &ReportInput) -> Option<String> {
    match &input.run_status {
        Some(st) if !st.complete => Some(format!(
            "<p class=\"warn\" id=\"status\">This run is {}.</p>\n",
            prose(&crate::render::run_status::line(st))
        )),
        Some(_) => None,
        None if !input.complete => Some(
            "<p class=\"warn\" id=\"status\">This report holds a partial result: a document in this folder says it was interrupted or a cell failed (see the notes).</p>\n".into(),
        ),
        None => None,
    }
}

/// The sections without data, named on one line (each name carries the
/// section's id), with what adds each folded below.
fn absent(shown: &[bool]) -> String {
    let missing: Vec<&(&str, &str, &str)> = SECTIONS
        .iter()
        .zip(shown)
        .filter(|(_, &on)| !on)
        .map(|(s, _)| s)
        .collect();
    if missing.is_empty() {
        return String::new();
    }
    let names: Vec<String> = missing
        .iter()
        .map(|(id, heading, _)| format!("<span id=\"{id}\">{}</span>", escape(heading)))
        .collect();
    let how: Vec<String> = missing
        .iter()
        .map(|(_, heading, hint)| {
            format!(
                "<li>{}: {}</li>",
                escape(heading),
                code_spans(&escape(hint))
            )
        })
        .collect();
    format!(
        "<div class=\"absent\" id=\"absent\"><p>Nothing in this folder for: {}.</p>\n<details><summary>How to add them</summary>\n<ul>\n{}\n</ul>\n</details>\n</div>\n",
        names.join(", "),
        how.join("\n")
    )
}

/// One line under the title: host, CPU model, when.
fn subtitle(input: &ReportInput) -> String {
    let mut parts = Vec::new();
    if let (Some(name), Some(t)) = (input.dump_name(), &input.topology) {
        // Whose machine the page shows: the dump's, with the reader last.
        let t = &t.value;
        parts.push(format!("{name} (a saved description)"));
        if let Some(m) = &t.cpu_model {
            parts.push(m.clone());
        }
        parts.push(format!(
            "{} CPUs, {} NUMA nodes",
            t.cpus.len(),
            t.nodes.len()
        ));
        if let Some(p) = input.provenance.first() {
            parts.push(format!("read on {} at {}", p.value.hostname, p.value.end));
        }
    } else if let Some(p) = input.provenance.first() {
        parts.push(p.value.hostname.clone());
        parts.push(p.value.cpu_model.clone());
        parts.push(format!("Linux {}", p.value.kernel));
        parts.push(p.value.end.clone());
    } else if let Some(m) = input
        .topology
        .as_ref()
        .and_then(|t| t.value.cpu_model.clone())
    {
        parts.push(m);
    }
    if parts.is_empty() {
        "no provenance in this folder".into()
    } else {
        parts.join(" · ")
    }
}

/// Units a figure in the report's sentences and cells is written with.
pub(super) const UNITS: [&str; 18] = [
    "%", "ns", "us", "\u{b5}s", "ms", "s", "B", "KiB", "MiB", "GiB", "TiB", "GB", "MB/s", "GB/s",
    "Mops/s", "MHz", "GHz", "W",
];

/// Already escaped prose with each figure kept on one line with its unit
/// ("CV 28.5&#160;%", "0.9&#160;s)"): a narrow window must not put "%"
/// alone at the start of a line. Only a space between a number and a unit
/// of [`UNITS`] changes; code and command lines are not passed here (a
/// no-break space pasted into a shell is not a space).
pub fn figures(escaped: &str) -> String {
    let mut out = String::with_capacity(escaped.len() + 16);
    let mut parts = escaped.split(' ').peekable();
    while let Some(part) = parts.next() {
        out.push_str(part);
        let Some(next) = parts.peek() else { break };
        let unit = next.trim_end_matches([',', ';', '.', ')', ':', '*']);
        let number = part.ends_with(|c: char| c.is_ascii_digit());
        out.push_str(if number && UNITS.contains(&unit) {
            "&#160;"
        } else {
            " "
        });
    }
    out
}

/// Document text as escaped prose with its figures kept whole ([`figures`]).
pub fn prose(s: &str) -> String {
    figures(&escape(s))
}

/// A [`Table`] as an HTML table (title as a caption-like heading).
pub fn table(t: &Table) -> String {
    noted_table(t, "")
}

/// [`table`] with `note` (HTML) after its title, as a section names the
/// file its first table comes from in that table's own heading rather
/// than in a heading of its own above it.
pub fn noted_table(t: &Table, note: &str) -> String {
    let mut s = String::new();
    if let Some(title) = &t.title {
        s.push_str(&format!("<h3>{}{note}</h3>\n", prose(title)));
    }
    s.push_str("<div class=\"scroll\"><table class=\"data\">\n<thead><tr>");
    for h in &t.headers {
        s.push_str(&format!("<th>{}</th>", prose(h)));
    }
    s.push_str("</tr></thead>\n<tbody>\n");
    for row in &t.rows {
        s.push_str("<tr>");
        for (i, c) in row.iter().enumerate() {
            let right = t.align.get(i).copied().unwrap_or(Align::Right) == Align::Right;
            let class = if right { " class=\"r\"" } else { "" };
            s.push_str(&format!("<td{class}>{}</td>", words(&prose(c))));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody></table></div>\n");
    s
}

/// Already escaped text with each word that holds a break opportunity
/// other than a space (`--size`, `2026-11-27T10:00:00Z`, `a/b`) kept on
/// one line: a browser breaks after a hyphen or a slash, and a narrow
/// column would read "--" above "format". A word longer than
/// [`LONG_WORD`] characters (an `OMP_PLACES=` list of 64 places) may break
/// anywhere instead: no column can be that wide.
pub fn words(escaped: &str) -> String {
    let mut out = String::with_capacity(escaped.len() + 16);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if word.is_empty() {
            return;
        }
        let shown = word.chars().filter(|&c| c != ';').count();
        if shown > LONG_WORD {
            out.push_str(&format!("<span class=\"long\">{word}</span>"));
        } else if word.chars().any(|c| !c.is_alphanumeric()) {
            out.push_str(&format!("<span class=\"nw\">{word}</span>"));
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in escaped.chars() {
        if c.is_whitespace() {
            flush(&mut word, &mut out);
            out.push(c);
        } else {
            word.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// Words longer than this (in characters) may break anywhere.
pub const LONG_WORD: usize = 40;

/// Key/value rows (the machine section), values already escaped.
pub fn kv_table(rows: &[(&str, String)]) -> String {
    let mut s = String::from("<table class=\"data kv\"><tbody>\n");
    for (k, v) in rows {
        s.push_str(&format!("<tr><th>{}</th><td>{v}</td></tr>\n", escape(k)));
    }
    s.push_str("</tbody></table>\n");
    s
}

/// A paragraph saying why a section is empty (text escaped here).
/// `` `command` `` in the text is shown as code.
pub fn empty(text: &str) -> String {
    format!("<p class=\"note\">{}</p>\n", code_spans(&escape(text)))
}

/// Backtick pairs of already escaped text as `<code>` elements, the text
/// between them with its figures kept whole ([`figures`]).
pub fn code_spans(escaped: &str) -> String {
    let mut out = String::new();
    for (i, part) in escaped.split('`').enumerate() {
        if i % 2 == 1 {
            out.push_str(&format!("<code>{part}</code>"));
        } else {
            out.push_str(&figures(part));
        }
    }
    // An unpaired backtick: the last part was opened and never closed.
    if escaped.matches('`').count() % 2 == 1 {
        return figures(escaped);
    }
    out
}

/// Colour of a value on a good-to-bad scale: `t` 0 is the best (green), 1
/// the worst (red); light enough for dark text on top.
pub fn scale_colour(t: f64) -> String {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.5
    };
    let hue = 130.0 * (1.0 - t);
    format!("hsl({hue:.0}, 62%, {:.0}%)", 80.0 - 8.0 * t)
}

/// An SVG document produced by plotters, ready to sit inside the page
/// (any XML declaration removed).
pub fn inline_svg(svg: &str) -> String {
    let s = svg.trim_start();
    let s = match s.strip_prefix("<?xml") {
        Some(rest) => rest.split_once("?>").map(|(_, r)| r).unwrap_or(rest),
        None => s,
    };
    s.trim().to_string()
}
