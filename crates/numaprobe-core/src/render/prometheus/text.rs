//! The exposition format's text: a family's HELP, TYPE and sample lines,
//! label values and HELP cleaned then escaped, numbers as plain decimals,
//! values that are not finite left out.
//!
//! A label value is foreign text (a host name, a CPU model, a traffic mix
//! or a flag's reason read from a document written elsewhere). The format
//! itself only escapes `\\`, `"` and a line feed, so ESC, CR, a bidi
//! override or U+FFFE would reach whoever reads the textfile or a scrape in
//! a terminal or a dashboard: every value goes through [`clean::line`]
//! first (one line, each unsafe character a visible ASCII escape), then the
//! format's escaping.

use super::Family;
use crate::clean;
use std::fmt::Write;

pub(super) fn write_family(out: &mut String, f: &Family) {
    let samples: Vec<_> = f.samples.iter().filter(|(_, v)| v.is_finite()).collect();
    if samples.is_empty() {
        return;
    }
    let _ = writeln!(out, "# HELP {} {}", f.name, escape_help(f.help));
    let _ = writeln!(out, "# TYPE {} gauge", f.name);
    for (labels, v) in samples {
        out.push_str(f.name);
        if !labels.is_empty() {
            out.push('{');
            for (i, (k, val)) in labels.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let _ = write!(out, "{k}=\"{}\"", escape_label(val));
            }
            out.push('}');
        }
        let _ = writeln!(out, " {}", number(*v));
    }
}

/// A finite value as the exposition format reads it: Rust's shortest
/// round-trip form (never an exponent, never `NaN`).
pub(super) fn number(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// A label value: [`clean::line`] (unclipped: a caller that bounds a value
/// clips it, as [`super::trust::reason`] does), then backslash and double
/// quote escaped. A line feed is already the visible `\n` of
/// [`clean::line`], its backslash escaped here like any other.
pub(super) fn escape_label(s: &str) -> String {
    let safe = clean::line(s, clean::UNCLIPPED);
    let mut out = String::with_capacity(safe.len());
    for c in safe.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out
}

/// HELP text: [`clean::line`], then backslash escaped (the format's HELP
/// escapes are backslash and line feed, and no line feed is left).
pub(super) fn escape_help(s: &str) -> String {
    clean::line(s, clean::UNCLIPPED).replace('\\', "\\\\")
}
