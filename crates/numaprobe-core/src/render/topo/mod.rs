//! The topology renderers: JSON (`TopoReport`), the CPU and distance tables
//! (for text, CSV and Markdown), and the terminal picture in the spirit of
//! the RWTH Aachen blog's processor tables (its tables in `tables.rs`; the
//! picture and the short summary within a terminal in `fitted.rs`).
//!
//! Everything here is derived from the `Topology`; nothing reads the
//! machine.

mod clusters;
mod fitted;
mod tables;

use super::table::{Align, Table};
use crate::model::topo::{packages, PackageSummary, TopoReport};
use crate::topology::cpulist::{format_compact, format_ids, format_list};
use crate::topology::{Cache, Cpu, PciDevice, Topology};
use crate::units::plural;
use clusters::{cluster_table, heterogeneity_line};
pub use fitted::{to_summary, to_summary_markdown, to_terminal, to_text};
use std::collections::{BTreeMap, BTreeSet};
use tables::{cache_table, hmat_table, node_table, placement_table, processor_table};

pub fn to_json(t: &Topology) -> String {
    super::to_json(&TopoReport::new(t))
}

/// A CPU group inside parentheses: a progression reads `(0,4,...,36 step 4)`.
fn group(ids: &[u32]) -> String {
    let s = format_compact(ids);
    let inner = match s.split_once(" (step ") {
        Some((head, tail)) => format!("{head} step {}", tail.trim_end_matches(')')),
        None => s,
    };
    format!("({inner})")
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or("-".to_string(), |v| v.to_string())
}

/// Position of a CPU among its core's online threads (the RWTH Aachen blog's "Thread Id").
fn thread_of(c: &Cpu) -> usize {
    c.smt_siblings
        .iter()
        .position(|&s| s == c.os_index)
        .unwrap_or(0)
}

/// The machine's total memory as the summaries show it
/// ([`Topology::total_memory`]), or why there is none.
pub fn total_memory_text(t: &Topology) -> String {
    t.total_memory().map_or_else(
        || "memory unknown (the nodes' figures add up past 16 EiB)".to_string(),
        human_bytes,
    )
}

/// Binary units, one decimal: `31.9 GiB`.
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    let num = format!("{v:.1}");
    // `32 KiB`, not `32.0 KiB`; but `27.5 MiB` keeps its decimal.
    let num = num.strip_suffix(".0").unwrap_or(&num);
    format!("{num} {}", UNITS[u])
}

/// `l1d`, `l1i`, `l2`, `l3`: the short name of a (level, type) of cache.
fn cache_name(level: u32, kind: &str) -> String {
    format!(
        "l{level}{}",
        match kind {
            "Data" => "d",
            "Instruction" => "i",
            _ => "",
        }
    )
}

/// Every (level, type) of CPU cache on the machine, in level order.
fn cache_kinds(t: &Topology) -> Vec<(u32, String)> {
    let s: BTreeSet<(u32, String)> = t.caches.iter().map(|c| (c.level, c.kind.clone())).collect();
    s.into_iter().collect()
}

/// The cache instance of (level, type) that `cpu` uses, named by the lowest
/// CPU sharing it (`l3 = 0`: the L3 that CPU 0 uses too).
fn cache_instance(t: &Topology, cpu: u32, level: u32, kind: &str) -> Option<u32> {
    t.caches
        .iter()
        .find(|c| c.level == level && c.kind == kind && c.cpus.contains(&cpu))
        .and_then(|c| c.cpus.first().copied())
}

/// One row per possible CPU: the machine-readable CPU table (CSV, Markdown):
/// ids, node, SMT siblings and, per cache level, the instance it uses.
/// PCI devices with the node they are local to (`unknown` when the
/// firmware does not say): the text view and the HTML report show the same table.
pub fn pci_table(devs: &[&PciDevice]) -> Table {
    let mut tab =
        Table::new(["address", "kind", "class", "vendor:device", "node"]).with_align(vec![
            Align::Left,
            Align::Left,
            Align::Left,
            Align::Left,
            Align::Right,
        ]);
    for d in devs {
        tab.push([
            d.address.clone(),
            d.kind.clone(),
            d.class.clone(),
            format!(
                "{}:{}",
                d.vendor.as_deref().unwrap_or("?"),
                d.device.as_deref().unwrap_or("?")
            ),
            d.numa_node
                .map_or_else(|| "unknown".to_string(), |n| n.to_string()),
        ]);
    }
    tab
}

pub fn cpu_table(t: &Topology) -> Table {
    let kinds = cache_kinds(t);
    let mut headers: Vec<String> = [
        "cpu",
        "online",
        "allowed",
        "node",
        "package",
        "package_id",
        "die",
        "cluster",
        "capacity",
        "core",
        "thread",
        "smt_siblings",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    headers.extend(kinds.iter().map(|(l, k)| cache_name(*l, k)));
    let mut tab = Table::new(headers);
    for c in &t.cpus {
        let mut row = vec![
            c.os_index.to_string(),
            c.online.to_string(),
            c.allowed.to_string(),
            opt(c.node),
            opt(c.package),
            if c.online {
                opt(c.package_id)
            } else {
                "-".into()
            },
            opt(c.die),
            opt(c.cluster),
            opt(c.capacity),
            opt(c.core),
            if c.online {
                thread_of(c).to_string()
            } else {
                "-".into()
            },
            if c.smt_siblings.is_empty() {
                "-".into()
            } else {
                format_list(&c.smt_siblings)
            },
        ];
        for (l, k) in &kinds {
            row.push(opt(cache_instance(t, c.os_index, *l, k)));
        }
        tab.push(row);
    }
    tab
}

/// One row per node: CPUs, memory, huge pages, memory-side caches.
pub fn nodes_csv_table(t: &Topology) -> Table {
    let mut tab = Table::new([
        "node",
        "cpus",
        "memory_bytes",
        "free_bytes",
        "allowed",
        "memory_side_cache_bytes",
    ]);
    for n in &t.nodes {
        let msc: u64 = t
            .memory_side_cache(n.os_index)
            .iter()
            .filter_map(|c| c.size_bytes)
            .fold(0u64, u64::saturating_add);
        tab.push([
            n.os_index.to_string(),
            format_list(&n.cpus),
            n.memory_bytes.to_string(),
            n.free_bytes.to_string(),
            n.allowed.to_string(),
            if t.memory_side_cache(n.os_index).is_empty() {
                "-".into()
            } else {
                msc.to_string()
            },
        ]);
    }
    tab
}

/// One row per CPU cache instance.
pub fn caches_csv_table(t: &Topology) -> Table {
    let mut tab = Table::new(["cache", "instance", "size_bytes", "line_size", "cpus"]);
    for c in &t.caches {
        tab.push([
            cache_name(c.level, &c.kind),
            opt(c.cpus.first()),
            opt(c.size_bytes),
            opt(c.line_size),
            format_list(&c.cpus),
        ]);
    }
    tab
}

/// The SLIT as a square table; `None` when the kernel gave none.
pub fn distance_table(t: &Topology) -> Option<Table> {
    let d = t.distances.as_ref()?;
    let mut headers = vec!["node".to_string()];
    headers.extend(d.node_ids.iter().map(|n| n.to_string()));
    let mut tab = Table::new(headers);
    for (i, row) in d.matrix.iter().enumerate() {
        let mut r = vec![d.node_ids.get(i).map_or("?".into(), |n| n.to_string())];
        r.extend(row.iter().map(|v| v.to_string()));
        tab.push(r);
    }
    Some(tab)
}

/// The distinct remote values of the SLIT in one line: on a 64-node table
/// the levels are what a person looks for (the RWTH Aachen blog: a SLIT with two levels
/// can hide a deeper machine).
fn distance_levels(t: &Topology) -> String {
    let Some(d) = &t.distances else {
        return String::new();
    };
    let mut levels = BTreeSet::new();
    for (i, row) in d.matrix.iter().enumerate() {
        for (j, &v) in row.iter().enumerate() {
            if i != j {
                levels.insert(v);
            }
        }
    }
    if levels.is_empty() {
        return String::new();
    }
    let l: Vec<String> = levels.iter().map(|v| v.to_string()).collect();
    format!(
        "  {} remote level{}: {}\n",
        l.len(),
        if l.len() == 1 { "" } else { "s" },
        l.join(", ")
    )
}

/// Which table `--format csv` writes: CSV is one table per file, so a
/// CSV reader loads it as is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CsvTable {
    /// One row per possible CPU (the default).
    #[default]
    Cpus,
    /// One row per node.
    Nodes,
    /// One row per CPU cache instance.
    Caches,
    /// The SLIT, square; empty (header `node` only) when there is none.
    Distances,
}

/// CSV: one table, `which` of them.
pub fn to_csv_table(t: &Topology, which: CsvTable) -> String {
    match which {
        CsvTable::Cpus => cpu_table(t).to_csv(),
        CsvTable::Nodes => nodes_csv_table(t).to_csv(),
        CsvTable::Caches => caches_csv_table(t).to_csv(),
        CsvTable::Distances => distance_table(t)
            .unwrap_or_else(|| Table::new(["node"]))
            .to_csv(),
    }
}

/// CSV: the CPU table.
pub fn to_csv(t: &Topology) -> String {
    to_csv_table(t, CsvTable::Cpus)
}

/// Markdown: the machine line, then every table the text shows (processors,
/// packages, caches, nodes with their memory, distances, HMAT, memory-side
/// caches, memory tiers), then the warnings.
pub fn to_markdown(t: &Topology) -> String {
    let online: Vec<&Cpu> = t.cpus.iter().filter(|c| c.online).collect();
    let pk = packages(t);
    let mut s = format!(
        "**Machine** `{}`: {}, {} CPUs online ({} possible), {}, {}\n\n",
        t.root.display(),
        t.cpu_model.as_deref().unwrap_or("unknown CPU model"),
        online.len(),
        t.cpus.len(),
        plural(pk.len(), "package"),
        plural(t.nodes.len(), "NUMA node"),
    );
    s.push_str(&format!("Numbering: {}\n\n", t.numbering.summary));
    if let Some(h) = crate::topology::clusters::heterogeneity(t) {
        s.push_str(&format!("**Cores**: {h}\n\n"));
    }
    // The terminal's processor table, not the CSV's: one package column
    // (the CSV also has the firmware's package_id) and no cache instance
    // ids (the cache-sharing table below names who shares what).
    s.push_str(&processor_table(&online).to_markdown());
    s.push('\n');
    s.push_str(&placement_table(t, &pk).to_markdown());
    if let Some(c) = cluster_table(t) {
        s.push('\n');
        s.push_str(&c.to_markdown());
    }
    if !t.caches.is_empty() {
        s.push('\n');
        s.push_str(&cache_table(t, &pk).to_markdown());
    }
    s.push('\n');
    s.push_str(&node_table(t).to_markdown());
    if let Some(d) = distance_table(t) {
        s.push('\n');
        s.push_str(&d.with_title("Distances (SLIT)").to_markdown());
    }
    if !t.hmat.is_empty() {
        s.push('\n');
        s.push_str(&hmat_table(t).to_markdown());
    }
    if !t.memory_side_caches.is_empty() {
        s.push('\n');
        s.push_str(&msc_table(t).to_markdown());
    }
    if !t.memory_tiers.is_empty() {
        let mut tab = Table::new(["tier", "nodes"]).with_title("Memory tiers (lower = faster)");
        for m in &t.memory_tiers {
            tab.push([m.id.to_string(), format_list(&m.nodes)]);
        }
        s.push('\n');
        s.push_str(&tab.to_markdown());
    }
    if !t.warnings.is_empty() {
        s.push_str("\n**Warnings**\n\n");
        for w in &t.warnings {
            s.push_str(&format!("- {w}\n"));
        }
    }
    s
}

/// Memory-side caches (Optane memory mode): DRAM in front of a node's
/// memory.
fn msc_table(t: &Topology) -> Table {
    let mut tab = Table::new(["node", "level", "size", "line", "indexing", "write policy"])
        .with_title("Memory-side caches (in front of the node's memory)");
    for c in &t.memory_side_caches {
        tab.push([
            c.node.to_string(),
            c.level.to_string(),
            c.size_bytes.map_or("-".into(), human_bytes),
            opt(c.line_size),
            c.indexing.clone(),
            c.write_policy.clone(),
        ]);
    }
    tab
}

/// Above this many online CPUs the processor table is folded to one row per
/// (node, thread) group instead of one row per CPU.
pub const FOLD_ABOVE: usize = 64;

fn push_warnings(out: &mut String, t: &Topology) {
    if !t.warnings.is_empty() {
        out.push_str("\nWarnings\n");
        for w in &t.warnings {
            out.push_str(&format!("  - {w}\n"));
        }
    }
}

/// The machine in a few lines and the numbering classification.
fn header(t: &Topology, online: &[&Cpu]) -> String {
    let mut out = String::new();
    let offline: Vec<u32> = t
        .cpus
        .iter()
        .filter(|c| !c.online)
        .map(|c| c.os_index)
        .collect();
    let pk = packages(t);
    let cores: BTreeSet<_> = online.iter().map(|c| t.core_key(c)).collect();
    let cpuless = t.nodes.iter().filter(|n| n.cpus.is_empty()).count();

    out.push_str(&format!("Machine ({})\n", t.root.display()));
    out.push_str(&format!(
        "  CPU model: {}\n",
        t.cpu_model.as_deref().unwrap_or("unknown")
    ));
    out.push_str(&format!(
        "  {} CPUs online ({} possible), {}, {}, {}{}, {} memory\n",
        online.len(),
        t.cpus.len(),
        plural(cores.len(), "core"),
        plural(pk.len(), "package"),
        plural(t.nodes.len(), "NUMA node"),
        if cpuless > 0 {
            format!(" ({cpuless} without CPUs)")
        } else {
            String::new()
        },
        total_memory_text(t)
    ));
    if !offline.is_empty() {
        out.push_str(&format!("  offline CPUs: {}\n", format_list(&offline)));
    }
    if let Some(m) = &t.thp_mode {
        out.push_str(&format!("  transparent huge pages: {m}\n"));
    }
    out.push_str(&heterogeneity_line(t));
    out.push_str(&format!("\nNumbering: {}\n", t.numbering.summary));
    if t.numbering.packages == "round-robin" {
        out.push_str(
            "  (a binding written as CPU numbers for a consecutively numbered machine spreads across packages here)\n",
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::tables::fold_groups;
    use super::*;

    #[test]
    fn human_bytes_reads_well() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(32 * 1024), "32 KiB");
        assert_eq!(human_bytes(1536 * 1024 * 1024), "1.5 GiB");
    }

    #[test]
    fn group_keeps_one_pair_of_parentheses() {
        assert_eq!(group(&[0, 1, 2, 3, 4, 5, 6, 7]), "(0-7)");
        assert_eq!(group(&[0, 4, 8, 12, 16]), "(0,4,...,16 step 4)");
    }

    #[test]
    fn groups_fold_after_max() {
        let g = vec![vec![0, 8], vec![1, 9], vec![2, 10]];
        assert_eq!(fold_groups(&g, 8), "(0,8)(1,9)(2,10)");
        assert_eq!(fold_groups(&g, 2), "(0,8)(1,9)... 3 groups");
    }
}
