//! The main job's summary: the terminal text, summary.md (Markdown) and the
//! long CSV of every measured cell, from run.json's model. The status line
//! comes from `run_status`, the extra phases' lines from `run_extra`.

use super::fit;
use super::table::Table;
use crate::model::run::RunReport;
use crate::model::Format;
use crate::topology::Topology;

/// What the summary shows first: the run's status and the buffer set-ups
/// (the job's own sentence), one line each; none when nothing was measured.
pub fn status_lines<P, C>(
    doc: &RunReport<P, C>,
    setups: Option<&str>,
) -> Vec<(&'static str, String)> {
    let Some(st) = &doc.status else {
        return Vec::new();
    };
    let mut v = vec![("Status", super::run_status::line(st))];
    if let Some(s) = setups {
        v.push(("Buffer set-ups", s.to_string()));
    }
    v
}

fn extra_lines<P, C>(doc: &RunReport<P, C>) -> Vec<String> {
    super::run_extra::lines(
        doc.c2c.as_ref(),
        doc.loaded_latency.as_ref(),
        doc.peak.as_ref(),
        doc.sweep.as_ref(),
    )
}

/// The terminal summary: topology, status, matrices, inferences, the extra
/// phases, the binding and the notes.
pub fn to_text<P, C>(
    topo: &Topology,
    doc: &RunReport<P, C>,
    status: &[(&'static str, String)],
) -> String {
    let mut s = super::topo::to_summary(topo);
    for (label, l) in status {
        s.push('\n');
        push_wrapped(&mut s, &format!("{label}: {l}"), 6);
    }
    for m in doc.matrices() {
        s.push('\n');
        let text = m.render(Format::Table);
        let where_ = format!("\n  {} cells, wider than a terminal", m.cells.len());
        let brief = format!("{}{}\n", m.brief(Format::Table), details(&m.kind_name()));
        s.push_str(&matrix_within(&text, &brief, &where_, &m.kind_name()));
    }
    for inf in doc.inferences() {
        s.push('\n');
        s.push_str(&inf.to_terminal(true));
    }
    let extra = extra_lines(doc);
    if !extra.is_empty() {
        s.push_str("\nBeyond the matrices:\n");
        for l in &extra {
            let [first, rest @ ..] = &fit::wrap(l, fit::WIDTH - 4, 3)[..] else {
                continue;
            };
            s.push_str(&format!("  {first}\n"));
            for r in rest {
                s.push_str(&format!("    {r}\n"));
            }
        }
    }
    if let Some(p) = &doc.binding {
        s.push_str("\nBinding: one thread per core, scatter (numaprobe pin --strategy scatter)\n");
        s.push_str(&fit::table(
            &p.commands_table(),
            fit::Long::Cut,
            "",
            String::new,
        ));
        if p.commands_table()
            .to_text()
            .lines()
            .any(|l| l.chars().count() > fit::WIDTH)
        {
            s.push_str("(a line cut at \"...\" is whole in `numaprobe pin --strategy scatter` and pin.json)\n");
        }
    }
    if !doc.notes.is_empty() {
        s.push('\n');
        for n in &doc.notes {
            push_wrapped(&mut s, &format!("Note: {n}"), 6);
        }
    }
    s
}

/// A sentence on at most `lines` terminal lines, the later ones indented.
/// A matrix's rendered `text` when it fits [`fit::WIDTH`]; wider, its
/// `brief` form (the matrix and its flags, wrapped, and where the cells'
/// details are); when even that is wider, its title and `where_` (how many
/// cells, wider than what), then where it is in full.
fn matrix_within(text: &str, brief: &str, where_: &str, kind: &str) -> String {
    if fit::fits(text) {
        return text.to_string();
    }
    if fit::fits(brief) {
        return brief.to_string();
    }
    let title = text.lines().next().unwrap_or_default();
    format!(
        "{}{where_}: report.html draws it, {kind}.json has every figure\n",
        fit::cut(title, fit::WIDTH)
    )
}

/// Where a matrix shown in brief has its cells' details.
fn details(kind: &str) -> String {
    format!("(every cell's details: {kind}.json and report.html)")
}

fn push_wrapped(s: &mut String, text: &str, lines: usize) {
    for (i, l) in fit::wrap(text, fit::WIDTH - 2, lines).iter().enumerate() {
        s.push_str(if i == 0 { "" } else { "  " });
        s.push_str(l);
        s.push('\n');
    }
}

/// summary.md and `--format markdown`: the same as [`to_text`], as a
/// document, within the same bounds (`fit`): lines of at most
/// [`fit::WIDTH`] characters, long tables folded, a matrix or a binding too
/// wide said where it is whole (report.html and the JSON documents).
pub fn to_markdown<P, C>(
    topo: &Topology,
    doc: &RunReport<P, C>,
    status: &[(&'static str, String)],
) -> String {
    let mut s = String::from("# numaprobe report\n\n");
    for (label, l) in status {
        s.push_str(&fit::paragraph("", &format!("**{label}:** {l}"), 6));
        s.push('\n');
    }
    s.push_str(&super::topo::to_summary_markdown(topo));
    for m in doc.matrices() {
        s.push('\n');
        let text = m.render(Format::Markdown);
        let where_ = format!("\n\n{} cells, wider than a page line", m.cells.len());
        let brief = format!(
            "{}\n{}\n",
            m.brief(Format::Markdown),
            details(&m.kind_name())
        );
        s.push_str(&matrix_within(&text, &brief, &where_, &m.kind_name()));
    }
    for inf in doc.inferences() {
        s.push('\n');
        s.push_str(&inf.to_summary_markdown(true));
    }
    let extra = extra_lines(doc);
    if !extra.is_empty() {
        s.push_str("\n## Beyond the matrices\n\n");
        for l in &extra {
            s.push_str(&fit::paragraph("- ", l, 3));
        }
    }
    if let Some(p) = &doc.binding {
        s.push_str("\n## Binding: one thread per core, scatter\n\n");
        let t = p.commands_table();
        let md = fit::markdown(&t, "", String::new);
        let cut = md != t.to_markdown();
        s.push_str(&md);
        if cut {
            s.push_str("\n(a line cut at \"...\" is whole in `numaprobe pin --strategy scatter` and pin.json)\n");
        }
    }
    for n in &doc.notes {
        s.push('\n');
        s.push_str(&fit::paragraph("> ", n, 6));
    }
    s
}

/// The end of the report folder's summary.md: links to the pictures and
/// the page beside it (only there: `--format markdown` on stdout has no
/// files beside it).
pub fn links(graph: bool) -> String {
    let mut s = String::from(
        "\n## Pictures and files\n\n- [report.html](report.html): the whole report as one page (topology picture, heatmaps, interconnect, findings)\n",
    );
    if graph {
        s.push_str("- [graph-latency.svg](graph-latency.svg) ([PNG](graph-latency.png)): the inferred interconnect\n\n![Inferred interconnect](graph-latency.png)\n");
    }
    s
}

/// CSV of the main job: every measured cell in long form, one line each, so
/// both matrices fit one table a script can read; with nothing measured, the
/// firmware's SLIT in the same form (kind `slit`).
pub fn cells_csv<P, C>(doc: &RunReport<P, C>, topo: &Topology) -> String {
    let mut t = Table::new([
        "kind",
        "cpu_node",
        "mem_node",
        "median",
        "unit",
        "cv",
        "placement_fraction",
        "flagged",
    ]);
    for m in doc.matrices() {
        let kind = m.kind_name();
        for c in &m.cells {
            t.push([
                kind.to_string(),
                c.cpu_node.to_string(),
                c.mem_node.to_string(),
                format!("{:.3}", c.median),
                m.unit.clone(),
                format!("{:.4}", c.cv),
                format!("{:.4}", c.placement.fraction_on_intended),
                c.flagged.to_string(),
            ]);
        }
    }
    if doc.latency.is_none() && doc.bandwidth.is_none() {
        if let Some(d) = &topo.distances {
            for (a, from) in d.node_ids.iter().enumerate() {
                for (b, to) in d.node_ids.iter().enumerate() {
                    let Some(v) = d.matrix.get(a).and_then(|r| r.get(b)) else {
                        continue;
                    };
                    // A distance has no spread and no placement: empty, not zero.
                    t.push([
                        "slit".to_string(),
                        from.to_string(),
                        to.to_string(),
                        v.to_string(),
                        "slit".to_string(),
                        String::new(),
                        String::new(),
                        String::new(),
                    ]);
                }
            }
        }
    }
    t.to_csv()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_matrix_too_wide_in_full_is_shown_in_brief_and_only_then() {
        let wide = format!("Title\n{}\n", "x".repeat(fit::WIDTH + 1));
        let brief = "Title\ncpu\\mem 0\n* why\n(details)\n";
        assert_eq!(
            matrix_within("Title\nfits\n", brief, "", "latency"),
            "Title\nfits\n"
        );
        assert_eq!(matrix_within(&wide, brief, "", "latency"), brief);
        // The brief form names the matrix's own document.
        assert_eq!(
            details("bandwidth"),
            "(every cell's details: bandwidth.json and report.html)"
        );
        assert_eq!(
            matrix_within(&wide, &wide, "\n  9 cells, wider", "latency"),
            "Title\n  9 cells, wider: report.html draws it, latency.json has every figure\n"
        );
    }
}
