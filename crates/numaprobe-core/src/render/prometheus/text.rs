//! The exposition format's text: a family's HELP, TYPE and sample lines,
//! label values and HELP escaped, numbers as plain decimals, values that
//! are not finite left out.

use super::Family;
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

/// A label value: backslash, double quote and line feed escaped.
pub(super) fn escape_label(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// HELP text: backslash and line feed escaped.
pub(super) fn escape_help(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\n', "\\n")
}
