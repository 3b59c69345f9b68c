//! The report's lock and atomic contention section (`c2c --locks`
//! documents): which atomics ran, then each document's runs as one table
//! (op, sharing, placement, threads, Mops/s, ns/op) and its notes.

use super::page::{escape, prose, table};
use super::ReportInput;
use crate::render::locks::{atomics_line, flagged_lines, runs_table};

pub fn section(input: &ReportInput) -> String {
    if input.locks.is_empty() {
        return String::new();
    }
    let mut s = String::new();
    for d in &input.locks {
        let r = &d.value;
        s.push_str(&format!(
            "<h3>{} runs{} <span class=\"note\">from {}</span></h3>\n",
            r.runs.len(),
            if r.complete { "" } else { " (partial)" },
            escape(&d.file)
        ));
        s.push_str(&format!("<p>{}</p>\n", prose(&atomics_line(r))));
        s.push_str(&table(&runs_table(r)));
        s.push_str("<p class=\"note\">Mops/s: all threads together; ns/op: one thread's wall time per operation.</p>\n");
        for f in flagged_lines(r) {
            s.push_str(&format!("<p class=\"warn\">Flagged: {}</p>\n", prose(&f)));
        }
        for n in &r.notes {
            s.push_str(&format!("<p class=\"note\">Note: {}</p>\n", prose(n)));
        }
        for f in &r.failed {
            s.push_str(&format!(
                "<p class=\"warn\">Failed: {} {} {}: {}</p>\n",
                escape(&f.op),
                escape(&f.sharing),
                escape(&f.placement),
                prose(&f.reason)
            ));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::html::Doc;

    #[test]
    fn the_section_names_the_atomics_and_lists_runs_and_failures() {
        let mut input = ReportInput::default();
        assert!(
            section(&input).is_empty(),
            "nothing to show: the page names it"
        );
        let mut r = crate::render::locks::tests::sample();
        r.notes.push("<b>".into());
        input.locks.push(Doc::new("locks.json", r));
        let s = section(&input);
        assert!(s.contains("atomics: load/store exclusive"), "{s}");
        assert!(s.contains("cross_node") && s.contains("spin_lock"), "{s}");
        assert!(s.contains("Failed: atomic_add own_line"), "{s}");
        assert!(s.contains("&lt;b&gt;") && !s.contains("<b>"), "{s}");
    }
}
