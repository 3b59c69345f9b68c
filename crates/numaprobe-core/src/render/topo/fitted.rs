//! The topology within a terminal and within summary.md (`render::fit`):
//! `numaprobe topo`'s picture with long tables folded, and the main job's
//! short form of it. The full tables are [`super::to_text`]'s, the
//! Markdown, CSV and JSON forms' and the report's.

use super::clusters::cluster_table;
use super::tables::{
    cache_table, hmat_table, node_table, not_allowed, placement_table, processor_table,
};
use super::{
    distance_levels, distance_table, header, msc_table, packages, pci_table, push_warnings, Table,
};
use crate::render::fit;
use crate::topology::cpulist::format_list;
use crate::topology::{Cpu, PciDevice, Topology};

/// The short form for `numaprobe` without arguments: the machine in a few
/// lines, its nodes and distances, what is not allowed, and any warning;
/// within a terminal's width (`render::fit`): past a screenful of nodes the
/// table is folded, and a SLIT wider than the terminal is given by its levels.
pub fn to_summary(t: &Topology) -> String {
    let online: Vec<&Cpu> = t.cpus.iter().filter(|c| c.online).collect();
    let mut out = fit::lines(&header(t, &online));
    out.push('\n');
    out.push_str(&fit::table(
        &node_table(t),
        fit::Long::Wrap,
        EVERY_NODE,
        String::new,
    ));
    if let Some(d) = distance_table(t) {
        out.push('\n');
        let title =
            "Distances (SLIT, the firmware's System Locality Information Table; 10 = local)";
        let n = t.nodes.len();
        out.push_str(&fit::table(
            &d.with_title(title),
            fit::Long::Wrap,
            "",
            || {
                format!(
                    "{title}\n  {n} x {n} nodes, wider than a terminal: the report and `numaprobe topo --format csv --table distances` have it\n{}",
                    distance_levels(t)
                )
            },
        ));
    }
    out.push('\n');
    out.push_str(&fit::lines(&not_allowed(t, &online)));
    let mut warnings = String::new();
    push_warnings(&mut warnings, t);
    out.push_str(&fit::lines(&warnings));
    out.push_str("\n(`numaprobe topo` shows processors, packages, caches, HMAT and PCI devices)\n");
    out
}

/// [`to_summary`] as Markdown for summary.md: the machine, its nodes and
/// distances within [`fit::WIDTH`], folded as on the terminal.
pub fn to_summary_markdown(t: &Topology) -> String {
    let online: Vec<&Cpu> = t.cpus.iter().filter(|c| c.online).collect();
    let mut s = String::new();
    for l in header(t, &online)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
    {
        s.push_str(&fit::paragraph("", l, 3));
        s.push('\n');
    }
    s.push_str(&fit::markdown(&node_table(t), EVERY_NODE, String::new));
    if let Some(d) = distance_table(t) {
        let title =
            "Distances (SLIT, the firmware's System Locality Information Table; 10 = local)";
        let n = t.nodes.len();
        s.push('\n');
        s.push_str(&fit::markdown(&d.with_title(title), "", || {
            let said = format!(
                "{n} x {n} nodes, wider than a page line: the report and `numaprobe topo --format csv --table distances` have it; {}",
                distance_levels(t).trim()
            );
            format!("**{title}**\n\n{}", fit::paragraph("", &said, 3))
        }));
    }
    let mut rest = not_allowed(t, &online);
    push_warnings(&mut rest, t);
    for l in rest.lines().map(str::trim).filter(|l| !l.is_empty()) {
        s.push('\n');
        s.push_str(&fit::paragraph("", l, 3));
    }
    s
}

/// The whole picture: every table in full (what the tests of the readers
/// compare; `numaprobe topo` prints [`to_terminal`]).
pub fn to_text(t: &Topology) -> String {
    picture(t, false)
}

/// [`to_text`] within a terminal (`render::fit`): a table past a screenful
/// of rows folded into a line saying where the rest is, a SLIT wider than
/// the terminal given by its levels, long lines wrapped. The Markdown, CSV
/// and JSON forms and the report keep every row.
pub fn to_terminal(t: &Topology) -> String {
    picture(t, true)
}

/// Where a folded node table's rows are in full.
const EVERY_NODE: &str =
    "every node is in `numaprobe topo --format csv --table nodes` and the report";

/// Where a folded table's rows are in full.
const WHOLE: &str = "every row is in `numaprobe topo --format markdown` and the report";

fn picture(t: &Topology, fold: bool) -> String {
    let table = |tab: &Table, rest: &str| -> String {
        if fold {
            fit::table(tab, fit::Long::Wrap, rest, || {
                let title = tab.title.clone().unwrap_or_default();
                format!("{title}\n  wider than a terminal: {WHOLE}\n")
            })
        } else {
            tab.to_text()
        }
    };
    let lines = |text: &str| -> String {
        if fold {
            fit::lines(text)
        } else {
            text.to_string()
        }
    };
    let online: Vec<&Cpu> = t.cpus.iter().filter(|c| c.online).collect();
    let pk = packages(t);
    let mut out = lines(&header(t, &online));
    out.push('\n');
    out.push_str(&table(
        &processor_table(&online),
        "every CPU is in `numaprobe topo --format csv` and the report",
    ));
    out.push('\n');
    out.push_str(&table(&placement_table(t, &pk), WHOLE));
    if let Some(c) = cluster_table(t) {
        out.push('\n');
        out.push_str(&table(&c, WHOLE));
    }
    if !t.caches.is_empty() {
        out.push('\n');
        out.push_str(&table(
            &cache_table(t, &pk),
            "every cache is in `numaprobe topo --format csv --table caches` and the report",
        ));
    }
    out.push('\n');
    out.push_str(&table(&node_table(t), EVERY_NODE));
    out.push('\n');
    match distance_table(t) {
        Some(d) => {
            let title = "Distances (SLIT, 10 = local)";
            let d = d.with_title(title);
            let n = t.nodes.len();
            if fold {
                out.push_str(&fit::table(&d, fit::Long::Wrap, "", || {
                    format!(
                        "{title}\n  {n} x {n} nodes, wider than a terminal: the report and `numaprobe topo --format csv --table distances` have it\n"
                    )
                }));
            } else {
                out.push_str(&d.to_text());
            }
            out.push_str(&lines(&distance_levels(t)));
        }
        None => out.push_str("Distances: none given by the kernel\n"),
    }
    if !t.hmat.is_empty() {
        out.push('\n');
        out.push_str(&table(&hmat_table(t), WHOLE));
    }
    if !t.memory_side_caches.is_empty() {
        out.push('\n');
        out.push_str(&table(&msc_table(t), WHOLE));
    }
    if !t.memory_tiers.is_empty() {
        let mut tiers = String::from("\nMemory tiers (lower = faster)\n");
        for m in &t.memory_tiers {
            tiers.push_str(&format!(
                "  tier {}: nodes {}\n",
                m.id,
                format_list(&m.nodes)
            ));
        }
        out.push_str(&lines(&tiers));
    }
    let devs: Vec<&PciDevice> = t.pci_devices.iter().filter(|d| d.kind != "other").collect();
    if !devs.is_empty() {
        out.push('\n');
        let tab = pci_table(&devs).with_title(format!(
            "PCI devices ({} of {}; bridges and the like left out)",
            devs.len(),
            t.pci_devices.len()
        ));
        out.push_str(&table(&tab, WHOLE));
    }

    out.push('\n');
    out.push_str(&lines(&not_allowed(t, &online)));
    let mut warnings = String::new();
    push_warnings(&mut warnings, t);
    out.push_str(&lines(&warnings));
    out
}
