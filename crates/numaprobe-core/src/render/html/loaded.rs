//! The report's loaded-latency section: per document the chart (latency
//! against bandwidth, every curve, a flagged point hollow and grey) and a
//! table per curve with its knee and peak, each starred latency's reason
//! under it, from `render::loaded`.

use super::page::{empty, escape, inline_svg, prose, table};
use super::ReportInput;
use crate::render::loaded::{curve_table, flagged_lines, summary_line};

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
            s.push_str(&table(&curve_table(c)));
            s.push_str(&format!("<p>{}</p>\n", prose(&summary_line(c))));
            for l in flagged_lines(c) {
                s.push_str(&format!("<p class=\"note flag\">{}</p>\n", prose(&l)));
            }
        }
        for f in &r.failed {
            s.push_str(&format!("<p class=\"note\">failed: {}</p>\n", prose(f)));
        }
    }
    s
}
