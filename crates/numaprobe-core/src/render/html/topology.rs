//! The topology picture, in the spirit of hwloc's lstopo: the machine's
//! packages and NUMA nodes as nested boxes (whichever contains the other on
//! this machine), last-level cache groups, cores and their hardware threads
//! with the kernel's CPU numbers, memory-only nodes, and PCI devices in the
//! node they are attached to. One SVG, laid out here (boxes flow left to
//! right and wrap), so a 256-CPU machine is a tall picture that scrolls
//! inside its section rather than a page metres wide. Above 64 CPUs the
//! picture is compact: core boxes lose their titles and a core with one
//! thread is drawn as that thread alone. Where the kernel lists clusters of
//! several cores (arm64's PPTT), a cache group's cores sit in cluster boxes.

use super::page::{escape, table};
use super::ReportInput;
use crate::model::topo::packages;
use crate::render::topo::human_bytes;
use crate::topology::{Cache, PciDevice, Topology};
use std::collections::{BTreeMap, BTreeSet};

/// Above this many online CPUs the picture is drawn compact.
const COMPACT_CPUS: usize = 64;
/// PCI devices named inside a node's box; the rest are in the table below.
const PCI_IN_BOX: usize = 4;
/// Widest row of boxes inside the machine and inside any other box.
const MACHINE_ROW: f64 = 1260.0;
const INNER_ROW: f64 = 1100.0;
const PAD: f64 = 6.0;
const GAP: f64 = 6.0;
const TITLE_H: f64 = 17.0;
const LINE_H: f64 = 14.0;
/// Estimated text widths (12 px sans title, 11 px sans lines, 11 px mono CPU numbers).
const TITLE_CH: f64 = 7.0;
const LINE_CH: f64 = 5.8;
const MONO_CH: f64 = 6.8;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Machine,
    Package,
    Node,
    MemNode,
    Cache,
    Core,
    Pu { allowed: bool },
}

#[derive(Debug, Clone)]
struct Item {
    kind: Kind,
    title: String,
    lines: Vec<String>,
    /// A tooltip (SVG `title`).
    hint: String,
    children: Vec<Item>,
}

impl Item {
    fn new(kind: Kind, title: impl Into<String>) -> Item {
        Item {
            kind,
            title: title.into(),
            lines: Vec::new(),
            hint: String::new(),
            children: Vec::new(),
        }
    }
}

pub fn section(input: &ReportInput) -> String {
    let Some(doc) = &input.topology else {
        return String::new();
    };
    let t = &doc.value;
    let online = t.cpus.iter().filter(|c| c.online).count();
    let mut s = format!(
        "<p>{} <span class=\"note\">from {}. Numbers in the small boxes are the kernel's CPU numbers; grey ones are outside this process's allowed CPUs.</span></p>\n",
        escape(&t.numbering.summary),
        escape(&doc.file)
    );
    if online > COMPACT_CPUS {
        s.push_str(&format!("<p class=\"note\">{online} CPUs: drawn compact (core boxes without titles; a core with one thread is drawn as its CPU). The picture scrolls inside this section.</p>\n"));
    }
    s.push_str("<div class=\"scroll figure wide\">");
    s.push_str(&svg(t));
    s.push_str("</div>\n");
    if !t.pci_devices.is_empty() {
        let all: Vec<&PciDevice> = t.pci_devices.iter().collect();
        let tb = crate::render::topo::pci_table(&all);
        // Folded when long: a server lists dozens of bridges and controllers.
        let open = if tb.rows.len() <= PCI_OPEN {
            " open=\"open\""
        } else {
            ""
        };
        s.push_str(&format!(
            "<details{open}><summary>PCI devices ({})</summary>\n{}</details>\n",
            tb.rows.len(),
            table(&tb)
        ));
    }
    s
}

/// Up to this many PCI devices the table is shown unfolded.
const PCI_OPEN: usize = 8;

/// The picture as an SVG element.
pub fn svg(t: &Topology) -> String {
    let tree = build(t);
    let laid = layout(&tree, MACHINE_ROW);
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"topology\" width=\"{w:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {w:.0} {h:.0}\" font-family=\"sans-serif\" role=\"img\" aria-label=\"topology\">\n",
        w = laid.w + 2.0,
        h = laid.h + 2.0
    );
    draw(&laid, 1.0, 1.0, &mut out);
    out.push_str("</svg>");
    out
}

fn cache_label(c: &Cache) -> String {
    let kind = match c.kind.as_str() {
        "Data" => "d",
        "Instruction" => "i",
        _ => "",
    };
    match c.size_bytes {
        Some(b) => format!("L{}{kind} {}", c.level, human_bytes(b)),
        None => format!("L{}{kind}", c.level),
    }
}

/// `Topology::core_key`: unique per physical core.
type CoreKey = (Option<i64>, Option<i64>, Option<i64>, u32);

/// The model as nested items.
fn build(t: &Topology) -> Item {
    let compact = t.cpus.iter().filter(|c| c.online).count() > COMPACT_CPUS;
    let pkgs = packages(t);
    let node_cpus: BTreeMap<u32, BTreeSet<u32>> = t
        .nodes
        .iter()
        .map(|n| (n.os_index, n.cpus.iter().copied().collect()))
        .collect();
    // Which contains which: packages inside nodes (several sockets per
    // node, as on old Itanium and some AMD boards) or nodes inside packages
    // (one or several nodes per socket, the common case).
    let packages_in_nodes = !pkgs.is_empty()
        && pkgs.iter().all(|p| p.nodes.len() == 1)
        && node_cpus.values().any(|cpus| {
            pkgs.iter()
                .filter(|p| p.cpus.iter().all(|c| cpus.contains(c)))
                .count()
                > 1
        });
    let top_level = t.caches.iter().map(|c| c.level).max().unwrap_or(0);
    let llc_of = |cpu: u32| -> Option<&Cache> {
        t.caches
            .iter()
            .filter(|c| c.level == top_level && c.kind != "Instruction")
            .find(|c| c.cpus.contains(&cpu))
    };
    // Cores (as lists of their online CPUs) of a set of CPUs, in CPU order.
    let cores_of = |cpus: &[u32]| -> Vec<Vec<u32>> {
        let mut by: BTreeMap<CoreKey, Vec<u32>> = BTreeMap::new();
        let mut order = Vec::new();
        for &c in cpus {
            if let Some(cpu) = t.cpu(c) {
                let k = t.core_key(cpu);
                if !by.contains_key(&k) {
                    order.push(k);
                }
                by.entry(k).or_default().push(c);
            }
        }
        let mut v: Vec<Vec<u32>> = order.into_iter().filter_map(|k| by.remove(&k)).collect();
        v.sort_by_key(|c| c.first().copied());
        v
    };
    let core_item = |cpus: &[u32]| -> Item {
        let first = cpus[0];
        let pus: Vec<Item> = cpus
            .iter()
            .map(|&c| {
                let allowed = t.cpu(c).map(|x| x.allowed).unwrap_or(false);
                let mut pu = Item::new(Kind::Pu { allowed }, c.to_string());
                pu.hint = format!("CPU {c}{}", if allowed { "" } else { " (not allowed)" });
                pu
            })
            .collect();
        if compact && pus.len() == 1 {
            return pus.into_iter().next().expect("one PU");
        }
        let core_id = t.cpu(first).and_then(|c| c.core);
        let title = if compact {
            String::new()
        } else {
            match core_id {
                Some(id) => format!("Core {id}"),
                None => "Core".into(),
            }
        };
        let mut core = Item::new(Kind::Core, title);
        core.hint = format!(
            "core {}: CPUs {}",
            core_id.map(|i| i.to_string()).unwrap_or_else(|| "?".into()),
            crate::units::format_list(cpus)
        );
        core.children = pus;
        core
    };
    // Cores in cluster boxes where some cluster holds several cores; the
    // cores alone otherwise (and where the cores form one cluster).
    let with_clusters = !crate::topology::clusters::clusters(t).is_empty();
    let clustered = |cores: &[Vec<u32>]| -> Vec<Item> {
        let mut groups: Vec<(Vec<u32>, Vec<&Vec<u32>>)> = Vec::new();
        for core in cores {
            let key = if with_clusters {
                t.cpu(core[0])
                    .map(|c| crate::topology::clusters::cluster_members(t, c))
                    .unwrap_or_default()
            } else {
                Vec::new()
            };
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some(g) => g.1.push(core),
                None => groups.push((key, vec![core])),
            }
        }
        if groups.len() < 2 {
            return cores.iter().map(|c| core_item(c)).collect();
        }
        groups
            .into_iter()
            .map(|(key, cores)| {
                let first = t.cpu(cores[0][0]);
                let mut title = match first.and_then(|c| c.cluster).filter(|_| !key.is_empty()) {
                    Some(id) => format!("Cluster {id}"),
                    None => "no cluster".to_string(),
                };
                if let Some(cap) = first.and_then(|c| c.capacity) {
                    title.push_str(&format!(" \u{b7} capacity {cap}"));
                }
                let mut g = Item::new(Kind::Cache, title);
                g.hint = format!("cluster: CPUs {}", crate::units::format_list(&key));
                g.children = cores.iter().map(|c| core_item(c)).collect();
                g
            })
            .collect()
    };
    // The cores of a set of CPUs grouped by last-level cache: one group
    // yields its label (for the container's title lines), several yield
    // cache boxes.
    let cached = |cpus: &[u32]| -> (Vec<String>, Vec<Item>) {
        let cores = cores_of(cpus);
        let mut groups: Vec<(Option<&Cache>, Vec<Vec<u32>>)> = Vec::new();
        for core in cores {
            let llc = llc_of(core[0]);
            match groups.iter_mut().find(|(c, _)| *c == llc) {
                Some(g) => g.1.push(core),
                None => groups.push((llc, vec![core])),
            }
        }
        let mut lines = Vec::new();
        // Private caches of the first core, once per container.
        if let Some(first) = cpus.first() {
            let mut private: Vec<&Cache> = t
                .caches
                .iter()
                .filter(|c| c.level < top_level && c.cpus.contains(first))
                .collect();
            private.sort_by_key(|c| (c.level, c.kind.clone()));
            if !private.is_empty() {
                let names: Vec<String> = private.iter().map(|c| cache_label(c)).collect();
                lines.push(format!("per core: {}", names.join(", ")));
            }
        }
        if groups.len() == 1 {
            let (llc, cores) = groups.pop().expect("one group");
            if let Some(c) = llc {
                lines.push(format!("{} shared", cache_label(c)));
            }
            (lines, clustered(&cores))
        } else {
            let items = groups
                .into_iter()
                .map(|(llc, cores)| {
                    let mut g = Item::new(
                        Kind::Cache,
                        llc.map(cache_label).unwrap_or_else(|| "no cache".into()),
                    );
                    g.children = clustered(&cores);
                    g
                })
                .collect();
            (lines, items)
        }
    };
    let mut pci_by_node: BTreeMap<Option<u32>, Vec<String>> = BTreeMap::new();
    for d in &t.pci_devices {
        pci_by_node
            .entry(d.numa_node)
            .or_default()
            .push(format!("{} {}", d.kind, d.address));
    }
    let node_lines = |node: u32, lines: &mut Vec<String>| {
        if let Some(devs) = pci_by_node.get(&Some(node)) {
            for d in devs.iter().take(PCI_IN_BOX) {
                lines.push(format!("PCI {d}"));
            }
            if devs.len() > PCI_IN_BOX {
                lines.push(format!(
                    "+{} more PCI (table below)",
                    devs.len() - PCI_IN_BOX
                ));
            }
        }
    };
    let node_title = |node: u32, part: bool| -> String {
        let mem = t
            .node(node)
            .map(|n| human_bytes(n.memory_bytes))
            .unwrap_or_default();
        format!(
            "Node {node}{} \u{b7} {mem}",
            if part { " (part)" } else { "" }
        )
    };
    let package_title = |p: &crate::model::topo::PackageSummary| -> String {
        match p.os_index.or(p.id) {
            Some(i) => format!("Package {i}"),
            None => "Package".into(),
        }
    };

    let mut machine = Item::new(
        Kind::Machine,
        format!(
            "Machine \u{b7} {}",
            crate::render::topo::total_memory_text(t)
        ),
    );
    if let Some(m) = &t.cpu_model {
        machine.lines.push(m.clone());
    }
    if let Some(h) = crate::topology::clusters::heterogeneity(t) {
        // The finding up to its explanation: the box is narrow.
        machine
            .lines
            .push(h.split(" (1024 = ").next().unwrap_or(&h).to_string());
    }
    if packages_in_nodes {
        for n in t.nodes.iter().filter(|n| !n.cpus.is_empty()) {
            let mut item = Item::new(Kind::Node, node_title(n.os_index, false));
            node_lines(n.os_index, &mut item.lines);
            for p in pkgs.iter().filter(|p| p.nodes == [n.os_index]) {
                let mut pi = Item::new(Kind::Package, package_title(p));
                let (lines, children) = cached(&p.cpus);
                pi.lines = lines;
                pi.children = children;
                item.children.push(pi);
            }
            machine.children.push(item);
        }
    } else {
        let mut seen = BTreeSet::new();
        for p in &pkgs {
            let mut pi = Item::new(Kind::Package, package_title(p));
            let mut no_node: Vec<u32> = Vec::new();
            for &c in &p.cpus {
                if t.cpu(c).and_then(|x| x.node).is_none() {
                    no_node.push(c);
                }
            }
            for &n in &p.nodes {
                let cpus: Vec<u32> = p
                    .cpus
                    .iter()
                    .copied()
                    .filter(|c| t.cpu(*c).and_then(|x| x.node) == Some(n))
                    .collect();
                let whole = node_cpus.get(&n).map(|s| s.len()) == Some(cpus.len());
                let mut item = Item::new(Kind::Node, node_title(n, !whole));
                if seen.insert(n) {
                    node_lines(n, &mut item.lines);
                }
                let (lines, children) = cached(&cpus);
                item.lines.extend(lines);
                item.children = children;
                pi.children.push(item);
            }
            if !no_node.is_empty() {
                let (lines, children) = cached(&no_node);
                pi.lines.extend(lines);
                pi.children.extend(children);
            }
            machine.children.push(pi);
        }
    }
    for n in t.nodes.iter().filter(|n| n.cpus.is_empty()) {
        let mut item = Item::new(Kind::MemNode, node_title(n.os_index, false));
        item.lines.push("memory only (no CPUs)".into());
        for c in t.memory_side_cache(n.os_index) {
            item.lines.push(format!(
                "memory-side cache L{} {}",
                c.level,
                c.size_bytes.map(human_bytes).unwrap_or_default()
            ));
        }
        node_lines(n.os_index, &mut item.lines);
        machine.children.push(item);
    }
    if let Some(devs) = pci_by_node.get(&None) {
        machine.lines.push(format!(
            "{} PCI device{} without node locality (table below)",
            devs.len(),
            if devs.len() == 1 { "" } else { "s" }
        ));
    }
    machine
}

/// An item with its size and its children's positions.
struct Laid<'a> {
    item: &'a Item,
    w: f64,
    h: f64,
    children: Vec<(f64, f64, Laid<'a>)>,
}

fn text_w(item: &Item) -> f64 {
    let title = item.title.chars().count() as f64 * TITLE_CH;
    let lines = item
        .lines
        .iter()
        .map(|l| l.chars().count() as f64 * LINE_CH)
        .fold(0.0, f64::max);
    title.max(lines)
}

fn layout(item: &Item, row_max: f64) -> Laid<'_> {
    if let Kind::Pu { .. } = item.kind {
        let w = (item.title.chars().count() as f64 * MONO_CH + 8.0).max(24.0);
        return Laid {
            item,
            w,
            h: 18.0,
            children: Vec::new(),
        };
    }
    let pad = if item.kind == Kind::Core { 3.0 } else { PAD };
    let head = if item.title.is_empty() { 0.0 } else { TITLE_H } + LINE_H * item.lines.len() as f64;
    let kids: Vec<Laid> = item.children.iter().map(|c| layout(c, INNER_ROW)).collect();
    let mut placed = Vec::new();
    let (mut x, mut y, mut row_h, mut max_x) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    for k in kids {
        if x > 0.0 && x + k.w > row_max {
            y += row_h + GAP;
            x = 0.0;
            row_h = 0.0;
        }
        row_h = row_h.max(k.h);
        max_x = max_x.max(x + k.w);
        let kw = k.w;
        placed.push((pad + x, head + pad + y, k));
        x += kw + GAP;
    }
    let inner_h = if placed.is_empty() { 0.0 } else { y + row_h };
    let w = max_x.max(text_w(item)) + 2.0 * pad;
    let h = head + inner_h + 2.0 * pad - if placed.is_empty() { pad } else { 0.0 };
    Laid {
        item,
        w,
        h,
        children: placed,
    }
}

fn style(kind: Kind) -> (&'static str, &'static str) {
    match kind {
        Kind::Machine => ("#fbfbfb", "#4a4a4a"),
        Kind::Package => ("#e2e2e2", "#6b6b6b"),
        Kind::Node => ("#dceaf6", "#5577a0"),
        Kind::MemNode => ("#f6dede", "#a05555"),
        Kind::Cache => ("#f6f1dc", "#a08c55"),
        Kind::Core => ("#c9c9c9", "#7a7a7a"),
        Kind::Pu { allowed: true } => ("#ffffff", "#555555"),
        Kind::Pu { allowed: false } => ("#d8d8d8", "#9a9a9a"),
    }
}

fn draw(l: &Laid, x: f64, y: f64, out: &mut String) {
    let (fill, stroke) = style(l.item.kind);
    out.push_str("<g>");
    if !l.item.hint.is_empty() {
        out.push_str(&format!("<title>{}</title>", escape(&l.item.hint)));
    }
    out.push_str(&format!(
        "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"3\" fill=\"{fill}\" stroke=\"{stroke}\" />",
        l.w, l.h
    ));
    match l.item.kind {
        Kind::Pu { allowed } => out.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" font-family=\"monospace\" font-size=\"11\" text-anchor=\"middle\" fill=\"{}\">{}</text>",
            x + l.w / 2.0,
            y + 13.0,
            if allowed { "#111" } else { "#777" },
            escape(&l.item.title)
        )),
        _ => {
            let pad = if l.item.kind == Kind::Core { 3.0 } else { PAD };
            let mut ty = y + pad + 10.0;
            if !l.item.title.is_empty() {
                out.push_str(&format!(
                    "<text x=\"{:.1}\" y=\"{ty:.1}\" font-size=\"12\" font-weight=\"bold\">{}</text>",
                    x + pad,
                    escape(&l.item.title)
                ));
                ty += TITLE_H - 3.0;
            }
            for line in &l.item.lines {
                out.push_str(&format!(
                    "<text x=\"{:.1}\" y=\"{ty:.1}\" font-size=\"11\" fill=\"#333\">{}</text>",
                    x + pad,
                    escape(line)
                ));
                ty += LINE_H;
            }
        }
    }
    out.push_str("</g>\n");
    for (cx, cy, c) in &l.children {
        draw(c, x + cx, y + cy, out);
    }
}

#[cfg(test)]
mod tests {
    use super::svg;
    use crate::topology::testing::{build, CpuSpec};

    #[test]
    fn clusters_get_boxes_and_capacities_a_line() {
        let specs: Vec<CpuSpec> = (0..8).map(|i| CpuSpec::new(i, 0, i as i64, 0)).collect();
        let plain = svg(&build("/", &specs, &[], None));
        assert!(!plain.contains("Cluster"), "{plain}");
        let mut t = build("/", &specs, &[], None);
        for c in &mut t.cpus {
            c.cluster = Some(i64::from(c.os_index / 4));
            c.capacity = Some(if c.os_index < 4 { 446 } else { 1024 });
        }
        let s = svg(&t);
        assert!(s.contains("Cluster 0 \u{b7} capacity 446"), "{s}");
        assert!(s.contains("Cluster 1 \u{b7} capacity 1024"), "{s}");
        assert!(
            s.contains("big.LITTLE / heterogeneous: capacities 1024 (cpus 4-7), 446 (cpus 0-3)<"),
            "{s}"
        );
    }
}
