//! The report's sections other than the topology picture and the
//! heatmaps: machine and provenance, levels and the interconnect graph,
//! findings and advice, study charts, rankings, binding and files. Each
//! returns the body of its section; pictures come from the SVG renderers
//! (`report::graph`, `report::study_chart`, `render::ranking`).

use super::page::{empty, escape, inline_svg, kv_table, prose, table, words};
use super::ReportInput;
use crate::model::infer::Finding;
use crate::model::infer::Inference;

pub fn machine(input: &ReportInput) -> String {
    let mut s = String::new();
    // Another machine's dump: host, CPU model and kernel are the reader's,
    // and say so; the machine described is the dump's (below).
    let dump = input.dump_name();
    let (host, model, kernel) = if dump.is_some() {
        (
            "Read on host",
            "That host's CPU model",
            "That host's kernel",
        )
    } else {
        ("Ran on host", "CPU model", "Kernel")
    };
    match input.provenance.first() {
        Some(p) => {
            let v = &p.value;
            let mut rows = vec![
                (host, escape(&v.hostname)),
                (model, escape(&v.cpu_model)),
                (kernel, escape(&v.kernel)),
                ("numaprobe", escape(&v.version)),
                (
                    "Command line",
                    format!("<code>{}</code>", words(&escape(&v.command_line.join(" ")))),
                ),
                ("Started", words(&escape(&v.start))),
                ("Written", words(&escape(&v.end))),
            ];
            if let Some(b) = &v.budget {
                rows.push(("Budget", prose(&format!("{} {} s", b.option, b.seconds))));
            }
            // Completeness is a measurement's: with nothing measured there
            // is none to state.
            if input.measured() {
                rows.push((
                    "Complete",
                    match &input.run_status {
                        Some(st) => prose(&crate::render::run_status::line(st)),
                        None if input.complete => "yes".into(),
                        None => "no (partial result)".into(),
                    },
                ));
            }
            s.push_str(kv_table(&rows).as_str());
        }
        None => s.push_str(&empty(
            "No document in this folder carries provenance (host, kernel, command line).",
        )),
    }
    if let Some(t) = &input.topology {
        let t = &t.value;
        let online = t.cpus.iter().filter(|c| c.online).count();
        let packages = crate::model::topo::packages(t).len();
        let cpuless = t.nodes.iter().filter(|n| n.cpus.is_empty()).count();
        let mut rows = vec![
            (
                "CPUs",
                format!(
                    "{online} online of {} ({} allowed)",
                    t.cpus.len(),
                    t.allowed.cpus.len()
                ),
            ),
            ("Packages", packages.to_string()),
            (
                "NUMA nodes",
                format!(
                    "{}{}",
                    t.nodes.len(),
                    if cpuless > 0 {
                        format!(" ({cpuless} without CPUs)")
                    } else {
                        String::new()
                    }
                ),
            ),
            ("Memory", prose(&crate::render::topo::total_memory_text(t))),
            ("CPU numbering", escape(&t.numbering.summary)),
            (
                "Transparent huge pages",
                escape(t.thp_mode.as_deref().unwrap_or("not available")),
            ),
            (
                "SLIT / HMAT",
                format!(
                    "{} / {}",
                    if t.distances.is_some() { "yes" } else { "no" },
                    if t.hmat.is_empty() { "no" } else { "yes" }
                ),
            ),
        ];
        if dump.is_some() {
            rows.insert(
                0,
                (
                    "CPU model",
                    escape(t.cpu_model.as_deref().unwrap_or("not in the description")),
                ),
            );
            rows.push(("Read from", words(&escape(&t.root.display().to_string()))));
        }
        s.push_str("<h3>Machine</h3>\n");
        if let Some(name) = &dump {
            s.push_str(&format!("<p class=\"note\">The machine described here is {}, read from a saved description (a sysfs dump), not the host that read it; nothing was measured on it.</p>\n", escape(name)));
        }
        s.push_str(&kv_table(&rows));
    }
    let same_command = input
        .provenance
        .iter()
        .all(|p| p.value.command_line == input.provenance[0].value.command_line);
    if input.provenance.len() > 1 && same_command {
        let files: Vec<String> = input.provenance.iter().map(|p| escape(&p.file)).collect();
        s.push_str(&format!(
            "<p class=\"note\">Documents of this command: {}</p>\n",
            files.join(", ")
        ));
    } else if input.provenance.len() > 1 {
        s.push_str("<h3>Documents</h3>\n<div class=\"scroll\"><table class=\"data\"><thead><tr><th>file</th><th>written</th><th>command line</th><th>complete</th></tr></thead><tbody>\n");
        for p in &input.provenance {
            s.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td class=\"code\">{}</td><td>{}</td></tr>\n",
                words(&escape(&p.file)),
                words(&escape(&p.value.end)),
                words(&escape(&p.value.command_line.join(" "))),
                if p.value.complete { "yes" } else { "no" }
            ));
        }
        s.push_str("</tbody></table></div>\n");
    }
    for n in &input.notes {
        s.push_str(&format!("<p class=\"note\">Note: {}</p>\n", prose(n)));
    }
    s
}

pub fn interconnect(input: &ReportInput) -> String {
    if input.inferences.is_empty() {
        return String::new();
    }
    let mut s = String::new();
    for d in &input.inferences {
        s.push_str(&inference(&d.value, &d.file));
    }
    s
}

fn inference(inf: &Inference, file: &str) -> String {
    let what = if inf.source == "slit" {
        "the firmware's SLIT"
    } else {
        "the measured matrix"
    };
    let mut s = format!(
        "<h3>Inferred from {what} ({}, {} is better) <span class=\"note\">from {}</span></h3>\n",
        escape(&inf.unit),
        escape(&inf.better),
        escape(file)
    );
    if let Some(m) = &inf.machine {
        s.push_str(&format!("<p>{}</p>\n", prose(m)));
    }
    s.push_str(&table(&inf.levels_table()));
    if !inf.groups.is_empty() {
        s.push_str(&format!(
            "<p>Groups joined by the fastest links: <code>{}</code></p>\n",
            escape(&inf.groups_text())
        ));
    }
    let left_out = crate::render::graph::left_out(inf);
    match &left_out {
        None => match crate::render::graph::render_svg(inf) {
            Ok(svg) => s.push_str(&format!(
                "<div class=\"figure\">{}</div>\n",
                inline_svg(&svg)
            )),
            Err(e) => s.push_str(&empty(&e.to_string())),
        },
        Some(why) if inf.nodes.len() > 1 => s.push_str(&empty(why)),
        Some(_) => {}
    }
    if inf.hierarchy.len() > 1 || (inf.nodes.len() > 1 && left_out.is_some()) {
        s.push_str(&table(&inf.hierarchy_table()));
    }
    if !inf.link_details.is_empty() {
        // Folded: a 64-node machine has thousands of links.
        s.push_str(&format!(
            "<details><summary>Direct links ({})</summary>\n{}</details>\n",
            inf.link_details.len(),
            table(&inf.links_table())
        ));
    }
    s
}

fn finding_items(out: &mut Vec<String>, tag: &str, items: &[Finding]) {
    for f in items {
        out.push(format!(
            "<li><span class=\"tag {tag}\">{}</span>{}</li>",
            escape(&f.kind),
            prose(&f.text)
        ));
    }
}

pub fn findings(input: &ReportInput) -> String {
    let mut s = String::new();
    for d in &input.inferences {
        let mut advice = Vec::new();
        let mut found = Vec::new();
        finding_items(&mut advice, "advice", &d.value.advice);
        finding_items(&mut found, "finding", &d.value.findings);
        if advice.is_empty() && found.is_empty() {
            continue;
        }
        s.push_str(&format!(
            "<h3>From {} <span class=\"note\">({})</span></h3>\n",
            if d.value.source == "slit" {
                "the firmware's SLIT"
            } else {
                "the measured matrix"
            },
            escape(&d.file)
        ));
        for (tag, items) in [("Advice", advice), ("Findings", found)] {
            if !items.is_empty() {
                s.push_str(&format!(
                    "<p><strong>{tag}</strong></p>\n<ul class=\"findings\">\n{}\n</ul>\n",
                    items.join("\n")
                ));
            }
        }
    }
    let mut found = Vec::new();
    for b in &input.bindings {
        for p in &b.value.naive_problems {
            found.push(format!(
                "<li><span class=\"tag finding\">naive binding</span>{}</li>",
                prose(p)
            ));
        }
    }
    let mut warnings: Vec<String> = Vec::new();
    if let Some(t) = &input.topology {
        warnings.extend(t.value.warnings.iter().cloned());
    }
    for b in &input.bindings {
        warnings.extend(b.value.warnings.iter().cloned());
    }
    for m in &input.matrices {
        warnings.extend(m.value.failed.iter().map(|f| f.to_string()));
    }
    for st in &input.studies {
        warnings.extend(st.value.notes.iter().cloned());
    }
    let mut list = |title: &str, items: &[String]| {
        if !items.is_empty() {
            s.push_str(&format!(
                "<h3>{}</h3>\n<ul class=\"findings\">\n{}\n</ul>\n",
                escape(title),
                items.join("\n")
            ));
        }
    };
    list("The binding", &found);
    let warnings: Vec<String> = warnings
        .iter()
        .map(|w| {
            format!(
                "<li><span class=\"tag warning\">warning</span>{}</li>",
                prose(w)
            )
        })
        .collect();
    list("Warnings", &warnings);
    s
}

pub fn study(input: &ReportInput) -> String {
    if input.studies.is_empty() {
        return String::new();
    }
    let mut s = String::new();
    for d in &input.studies {
        let st = &d.value;
        s.push_str(&format!(
            "<h3>Contention study{} <span class=\"note\">from {}{}</span></h3>\n",
            st.preset
                .as_deref()
                .map(|p| format!(", preset {}", escape(p)))
                .unwrap_or_default(),
            escape(&d.file),
            if st.complete { "" } else { ", partial" }
        ));
        match crate::render::study_chart::svg(st) {
            Ok(svg) => s.push_str(&format!(
                "<div class=\"figure\">{}</div>\n",
                inline_svg(&svg)
            )),
            Err(e) => s.push_str(&empty(&e.to_string())),
        }
    }
    s
}

pub fn rankings(input: &ReportInput) -> String {
    if input.rankings.is_empty() {
        return String::new();
    }
    let mut s = String::new();
    for d in &input.rankings {
        s.push_str(&format!(
            "<h3>{} <span class=\"note\">from {}</span></h3>\n<div class=\"figure\">{}</div>\n",
            escape(&d.value.title),
            escape(&d.file),
            crate::render::ranking::svg(&d.value)
        ));
        let notes: Vec<String> = d
            .value
            .entries
            .iter()
            .flat_map(|e| {
                let flags = e
                    .flags
                    .iter()
                    .map(move |f| format!("<li>{}*: {}</li>", escape(&e.label), prose(f)));
                e.note
                    .iter()
                    .map(move |n| format!("<li>{}: {}</li>", escape(&e.label), prose(n)))
                    .chain(flags)
            })
            .collect();
        if !notes.is_empty() {
            s.push_str(&format!(
                "<ul class=\"findings\">\n{}\n</ul>\n",
                notes.join("\n")
            ));
        }
    }
    s
}

pub fn binding(input: &ReportInput) -> String {
    let mut s = String::new();
    for d in &input.bindings {
        let b = &d.value;
        s.push_str(&format!(
            "<p>{} threads, strategy {}, SMT {}: CPUs <code>{}</code> on nodes <code>{}</code> <span class=\"note\">from {}</span></p>\n",
            b.threads,
            escape(&b.strategy),
            escape(&b.smt),
            escape(&crate::units::format_list(&b.cpus)),
            escape(&crate::units::format_list(&b.nodes)),
            escape(&d.file)
        ));
        s.push_str(&table(&b.commands_table()));
    }
    if !input.files.is_empty() {
        s.push_str("<h3>Files beside this report</h3>\n<ul>\n");
        for f in &input.files {
            s.push_str(&format!(
                "<li><a href=\"{}\">{}</a></li>\n",
                escape(&relative_href(f)),
                escape(f)
            ));
        }
        s.push_str("</ul>\n");
    }
    s
}

/// A file name as a relative link: characters that would make it a scheme,
/// a query or a fragment are percent-encoded, so a name like `a:b` or
/// `x#y` still points at the file beside the report.
fn relative_href(name: &str) -> String {
    let mut out = String::from("./");
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
