//! The report's peak section: `numaprobe peak` documents (system and
//! per-node figures, the SMBIOS population, theoretical and achieved/peak,
//! findings), built from the same tables as the text renderer.

use super::page::{code_spans, escape, noted_table, prose, table};
use super::ReportInput;
use crate::render::peak::{
    dimm_table, flag_lines, node_table, peak_lines, socket_table, system_table,
};

pub fn section(input: &ReportInput) -> String {
    if input.peaks.is_empty() {
        return String::new();
    }
    let mut s = String::new();
    for d in &input.peaks {
        let r = &d.value;
        let from = format!(
            " <span class=\"note\">from {}{}</span>",
            escape(&d.file),
            if r.complete { "" } else { ", partial" }
        );
        // The system table's title names the system peak already.
        if r.system.is_empty() {
            s.push_str(&format!("<h3>System peak{from}</h3>\n"));
        } else {
            s.push_str(&noted_table(&system_table(r), &from));
        }
        if !r.nodes.is_empty() {
            s.push_str(&table(&node_table(r)));
        }
        for l in flag_lines(r) {
            s.push_str(&format!("<p class=\"note flag\">{}</p>\n", prose(&l)));
        }
        let lines: Vec<String> = peak_lines(r)
            .iter()
            .map(|l| format!("<li>{}</li>", code_spans(&escape(l))))
            .collect();
        s.push_str(&format!("<ul>\n{}\n</ul>\n", lines.join("\n")));
        if !r.memory.sockets.is_empty() {
            s.push_str(&table(&socket_table(&r.memory)));
        }
        if !r.memory.findings.is_empty() {
            let f: Vec<String> = r
                .memory
                .findings
                .iter()
                .map(|l| format!("<li>{}</li>", prose(l)))
                .collect();
            s.push_str(&format!(
                "<ul class=\"findings\">\n{}\n</ul>\n",
                f.join("\n")
            ));
        }
        if !r.memory.devices.is_empty() {
            s.push_str(&table(&dimm_table(&r.memory)));
        }
    }
    s
}
