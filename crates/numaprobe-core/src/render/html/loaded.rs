//! The report's loaded-latency section: per document the chart (latency
//! against bandwidth, every curve) and a table per curve with its knee and
//! peak, from `render::loaded`.

use super::page::{empty, escape, inline_svg, prose, table};
use super::ReportInput;

pub fn section(input: &ReportInput) -> String {
    if input.loaded.is_empty() {
        return String::new();
    }
    let mut s = String::new();
    for d in &input.loaded {
        let r = &d.value;
        s.push_str(&format!(
            "<h3>Latency against bandwidth, every curve <span class=\"note\">from {}{}</span></h3>\n",
            escape(&d.file),
            if r.complete { "" } else { ", partial" }
        ));
        match crate::render::loaded_chart::svg(r) {
            Ok(svg) => s.push_str(&format!(
                "<div class=\"figure\">{}</div>\n",
                inline_svg(&svg)
            )),
            Err(e) => s.push_str(&empty(&e.to_string())),
        }
        for c in &r.curves {
            s.push_str(&table(&crate::render::loaded::curve_table(c)));
            s.push_str(&format!(
                "<p>{}</p>\n",
                prose(&crate::render::loaded::summary_line(c))
            ));
        }
        for f in &r.failed {
            s.push_str(&format!("<p class=\"note\">failed: {}</p>\n", prose(f)));
        }
    }
    s
}
