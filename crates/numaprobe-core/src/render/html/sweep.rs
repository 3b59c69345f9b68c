//! The report's cache-size sweep section: per `latency --sweep` document
//! the chart (latency against working-set size, the topology's cache sizes
//! marked), the analysis sentences and the curve table, from
//! `render::sweep` and `render::sweep_chart`.

use super::page::{escape, inline_svg, prose, table};
use super::ReportInput;

pub fn section(input: &ReportInput) -> String {
    if input.sweeps.is_empty() {
        return String::new();
    }
    let mut s = String::new();
    for d in &input.sweeps {
        let r = &d.value;
        s.push_str(&format!(
            "<h3>CPU {} (node {}) -> memory node {} <span class=\"note\">from {}{}</span></h3>\n",
            r.cpu,
            r.cpu_node,
            r.mem_node,
            escape(&d.file),
            if r.complete { "" } else { ", partial" }
        ));
        s.push_str(&format!(
            "<div class=\"figure\">{}</div>\n",
            inline_svg(&crate::render::sweep_chart::svg(r))
        ));
        let lines = r.analysis_lines();
        if !lines.is_empty() {
            s.push_str("<ul>\n");
            for l in &lines {
                s.push_str(&format!("<li>{}</li>\n", prose(l)));
            }
            s.push_str("</ul>\n");
        }
        s.push_str(&table(&r.curve_table()));
        for l in r.flag_lines() {
            s.push_str(&format!("<p class=\"note flag\">{}</p>\n", prose(&l)));
        }
        for n in r.notes.iter().chain(&r.failed) {
            s.push_str(&format!("<p class=\"note\">{}</p>\n", prose(n)));
        }
    }
    s
}
