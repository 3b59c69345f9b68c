//! The hwloc exporter: an [`Exported`] run as hwloc's v2 XML, so that
//! `lstopo --input FILE`, `hwloc-calc` and `hwloc-bind` (with
//! `HWLOC_XMLFILE=FILE`) see the measured machine. The tree is the run's
//! topology (Machine, Package, a Group per NUMA node where a package holds
//! several, Core, PU; caches are left out); the measured matrices become
//! hwloc memory attributes (`Latency` in ns, `Bandwidth` in MiB/s, the
//! initiator being the CPU node's cpuset) and user distance matrices
//! (`NumaprobeLatency`, `NumaprobeBandwidth`) over the nodes measured both
//! ways. The format follows hwloc's `hwloc2.dtd` (objects, `distances2`,
//! `memattr`). Values hwloc cannot hold are said in [`HwlocXml::notes`].

use crate::model::export::Exported;
use crate::model::matrix::MatrixResult;
use crate::model::topo::TopoReport;
use crate::topology::NumaNode;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

type Set = BTreeSet<u32>;

/// The XML and what it could not carry.
#[derive(Debug, Clone, PartialEq)]
pub struct HwlocXml {
    pub xml: String,
    /// What was left out or rounded, one line each.
    pub notes: Vec<String>,
}

/// How a matrix goes into hwloc: its memory attribute (name, flags:
/// HIGHER_FIRST 1, LOWER_FIRST 2, NEED_INITIATOR 4), its distance matrix
/// (name, kind: FROM_USER 2, MEANS_LATENCY 4, MEANS_BANDWIDTH 8) and the
/// conversion from numaprobe's unit to hwloc's.
struct Kind {
    attr: &'static str,
    flags: u32,
    distances: &'static str,
    kind: u32,
    unit: fn(f64) -> f64,
}

/// Latency: ns, hwloc's unit too.
const LATENCY: Kind = Kind {
    attr: "Latency",
    flags: 2 | 4,
    distances: "NumaprobeLatency",
    kind: 2 | 4,
    unit: |ns| ns,
};

/// Bandwidth: GB/s (10^9 B/s) to hwloc's MiB/s.
const BANDWIDTH: Kind = Kind {
    attr: "Bandwidth",
    flags: 1 | 4,
    distances: "NumaprobeBandwidth",
    kind: 2 | 8,
    unit: |gbs| gbs * 1e9 / 1_048_576.0,
};

/// hwloc's bitmap text: 32-bit words in hex, most significant first
/// (`0x00000001,0x00000000` is CPU 32; the empty set is `0x0`).
pub fn bitmap(set: &Set) -> String {
    let Some(&max) = set.iter().next_back() else {
        return "0x0".to_string();
    };
    let words = max / 32 + 1;
    let mut w = vec![0u32; words as usize];
    for &b in set {
        w[(b / 32) as usize] |= 1 << (b % 32);
    }
    w.iter()
        .rev()
        .map(|x| format!("0x{x:08x}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Text for an XML attribute value: the report page's escaping (`& < > " '`
/// replaced, control characters dropped), one escaper for all of numaprobe's XML.
fn attr(s: &str) -> String {
    super::html::escape(s)
}

/// One object of the tree being written.
struct Obj {
    kind: &'static str,
    os_index: Option<i64>,
    cpuset: Set,
    /// NUMA nodes attached here (memory children).
    memory: Vec<u32>,
    children: Vec<Obj>,
}

impl Obj {
    fn new(kind: &'static str, os_index: Option<i64>, cpuset: Set) -> Obj {
        Obj {
            kind,
            os_index,
            cpuset,
            memory: Vec::new(),
            children: Vec::new(),
        }
    }

    fn subtree_nodes(&self) -> Set {
        let mut s: Set = self.memory.iter().copied().collect();
        for c in &self.children {
            s.extend(c.subtree_nodes());
        }
        s
    }
}

struct Writer<'a> {
    out: String,
    next_gp: u64,
    /// NUMA node os_index -> its gp_index, for the memory attributes.
    node_gp: BTreeMap<u32, u64>,
    nodes: BTreeMap<u32, &'a NumaNode>,
}

impl Writer<'_> {
    fn gp(&mut self) -> u64 {
        let g = self.next_gp;
        self.next_gp += 1;
        g
    }

    fn object(&mut self, o: &Obj, depth: usize, inherited: &Set, machine: Option<(&Set, &Set)>) {
        let pad = "  ".repeat(depth);
        let below = o.subtree_nodes();
        let nodeset = if below.is_empty() {
            inherited.clone()
        } else {
            below
        };
        let gp = self.gp();
        let cs = bitmap(&o.cpuset);
        let ns = bitmap(&nodeset);
        let _ = write!(self.out, "{pad}<object type=\"{}\"", o.kind);
        if let Some(i) = o.os_index {
            let _ = write!(self.out, " os_index=\"{i}\"");
        }
        let _ = write!(self.out, " cpuset=\"{cs}\" complete_cpuset=\"{cs}\"");
        if let Some((cpus, nodes)) = machine {
            let _ = write!(self.out, " allowed_cpuset=\"{}\"", bitmap(cpus));
            let _ = write!(self.out, " nodeset=\"{ns}\" complete_nodeset=\"{ns}\"");
            let _ = write!(self.out, " allowed_nodeset=\"{}\"", bitmap(nodes));
        } else {
            let _ = write!(self.out, " nodeset=\"{ns}\" complete_nodeset=\"{ns}\"");
        }
        let _ = writeln!(self.out, " gp_index=\"{gp}\">");
        let here: Set = o.memory.iter().copied().collect();
        let passed = if here.is_empty() {
            inherited.clone()
        } else {
            here
        };
        for &n in &o.memory {
            self.numa_node(n, &o.cpuset, depth + 1);
        }
        for c in &o.children {
            self.object(c, depth + 1, &passed, None);
        }
        let _ = writeln!(self.out, "{pad}</object>");
    }

    /// A NUMA node as a memory child: its cpuset is its parent's.
    fn numa_node(&mut self, n: u32, cpuset: &Set, depth: usize) {
        let pad = "  ".repeat(depth);
        let gp = self.gp();
        self.node_gp.insert(n, gp);
        let cs = bitmap(cpuset);
        let ns = bitmap(&Set::from([n]));
        let memory = self.nodes.get(&n).map_or(0, |x| x.memory_bytes);
        let _ = writeln!(
            self.out,
            "{pad}<object type=\"NUMANode\" os_index=\"{n}\" cpuset=\"{cs}\" complete_cpuset=\"{cs}\" nodeset=\"{ns}\" complete_nodeset=\"{ns}\" gp_index=\"{gp}\" local_memory=\"{memory}\"/>"
        );
    }
}

/// The machine's tree from the topology; notes for what it had to bend.
fn tree(t: &TopoReport, notes: &mut Vec<String>) -> Obj {
    let online: Set = t
        .cpus
        .iter()
        .filter(|c| c.online)
        .map(|c| c.os_index)
        .collect();
    let mut machine = Obj::new("Machine", Some(0), online.clone());
    let topology = t.clone().into_topology();
    let mut placed: Set = Set::new();
    let mut packaged: Set = Set::new();
    for p in &t.packages {
        let pcpus: Set = p.cpus.iter().copied().collect();
        packaged.extend(&pcpus);
        let mut pkg = Obj::new("Package", p.os_index, pcpus.clone());
        // Cores of this package, keyed as the topology keys them.
        let mut cores: BTreeMap<_, (Option<i64>, Set)> = BTreeMap::new();
        for c in t
            .cpus
            .iter()
            .filter(|c| c.online && pcpus.contains(&c.os_index))
        {
            let e = cores
                .entry(topology.core_key(c))
                .or_insert((c.core, Set::new()));
            e.1.insert(c.os_index);
        }
        let inside: Vec<&NumaNode> = t
            .numa_nodes
            .iter()
            .filter(|n| !n.cpus.is_empty() && n.cpus.iter().all(|c| pcpus.contains(c)))
            .collect();
        let core_obj = |(os, set): (Option<i64>, Set)| {
            let mut core = Obj::new("Core", os, set.clone());
            core.children = set
                .iter()
                .map(|&c| Obj::new("PU", Some(i64::from(c)), Set::from([c])))
                .collect();
            core
        };
        let mut cores: Vec<(Option<i64>, Set)> = cores.into_values().collect();
        cores.sort_by_key(|(_, s)| s.first().copied());
        match inside.as_slice() {
            [n] if n.cpus.iter().copied().collect::<Set>() == pcpus => {
                pkg.memory.push(n.os_index);
                placed.insert(n.os_index);
                pkg.children = cores.into_iter().map(core_obj).collect();
            }
            [] => pkg.children = cores.into_iter().map(core_obj).collect(),
            several => {
                for n in several {
                    let ncpus: Set = n.cpus.iter().copied().collect();
                    let mut group = Obj::new("Group", None, ncpus.clone());
                    group.memory.push(n.os_index);
                    placed.insert(n.os_index);
                    let (mine, rest): (Vec<_>, Vec<_>) = cores
                        .into_iter()
                        .partition(|(_, s)| s.first().is_some_and(|c| ncpus.contains(c)));
                    cores = rest;
                    group.cpuset = mine.iter().flat_map(|(_, s)| s.iter().copied()).collect();
                    group.children = mine.into_iter().map(core_obj).collect();
                    pkg.children.push(group);
                }
                pkg.children.extend(cores.into_iter().map(core_obj));
            }
        }
        machine.children.push(pkg);
    }
    for &c in online.difference(&packaged) {
        machine
            .children
            .push(Obj::new("PU", Some(i64::from(c)), Set::from([c])));
    }
    for n in &t.numa_nodes {
        if placed.contains(&n.os_index) {
            continue;
        }
        if !n.cpus.is_empty() && n.cpus.len() != online.len() {
            notes.push(format!(
                "node {}'s CPUs ({}) span packages: it is attached to the Machine, so hwloc sees it local to every CPU",
                n.os_index,
                crate::units::format_list(&n.cpus)
            ));
        }
        machine.memory.push(n.os_index);
    }
    machine
}

/// The XML of `e`'s topology and matrices; None without a topology.
pub fn hwloc_xml(e: &Exported) -> Option<HwlocXml> {
    let t = e.topology.as_ref()?;
    let mut notes = Vec::new();
    let machine = tree(t, &mut notes);
    let allowed_cpus: Set = t
        .cpus
        .iter()
        .filter(|c| c.allowed)
        .map(|c| c.os_index)
        .collect();
    let allowed_nodes: Set = t
        .numa_nodes
        .iter()
        .filter(|n| n.allowed)
        .map(|n| n.os_index)
        .collect();
    let mut w = Writer {
        out: String::new(),
        next_gp: 1,
        node_gp: BTreeMap::new(),
        nodes: t.numa_nodes.iter().map(|n| (n.os_index, n)).collect(),
    };
    w.out
        .push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    w.out
        .push_str("<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n");
    w.out.push_str("<topology version=\"2.0\">\n");
    // The Machine's infos go inside its element: write it by hand around
    // the generic writer's output.
    let mut body = std::mem::take(&mut w.out);
    w.object(
        &machine,
        1,
        &Set::new(),
        Some((&allowed_cpus, &allowed_nodes)),
    );
    let machine_xml = std::mem::take(&mut w.out);
    let (open, rest) = machine_xml.split_once('\n').unwrap_or((&machine_xml, ""));
    body.push_str(open);
    body.push('\n');
    let mut infos = vec![
        ("Backend", "numaprobe".to_string()),
        ("numaprobeSource", e.source.clone()),
    ];
    if let Some(p) = &e.provenance {
        infos.push(("HostName", p.hostname.clone()));
        infos.push(("CPUModel", p.cpu_model.clone()));
        infos.push(("OSRelease", p.kernel.clone()));
        infos.push(("numaprobeVersion", p.version.clone()));
        infos.push(("numaprobeRunStart", p.start.clone()));
    } else if let Some(m) = &t.cpu_model {
        infos.push(("CPUModel", m.clone()));
    }
    for (k, v) in infos {
        let _ = writeln!(body, "    <info name=\"{k}\" value=\"{}\"/>", attr(&v));
    }
    body.push_str(rest);
    w.out = body;
    let node_cpus: BTreeMap<u32, Set> = t
        .numa_nodes
        .iter()
        .map(|n| (n.os_index, n.cpus.iter().copied().collect()))
        .collect();
    let mats: Vec<(&MatrixResult, &Kind)> = [(&e.latency, &LATENCY), (&e.bandwidth, &BANDWIDTH)]
        .into_iter()
        .filter_map(|(m, k)| m.as_ref().map(|m| (m, k)))
        .collect();
    for (m, k) in &mats {
        distances(&mut w.out, m, k, &mut notes);
    }
    for (m, k) in &mats {
        memattr(&mut w, m, k, &node_cpus, &mut notes);
    }
    w.out.push_str("</topology>\n");
    Some(HwlocXml { xml: w.out, notes })
}

/// The measured values of `m` as rounded integers in hwloc's unit, by
/// (CPU node, memory node); not finite or not measured: absent.
fn cells(m: &MatrixResult, unit: fn(f64) -> f64) -> BTreeMap<(u32, u32), u64> {
    let mut out = BTreeMap::new();
    for (r, row) in m.matrix.iter().enumerate() {
        for (c, v) in row.iter().enumerate() {
            if let (Some(v), Some(&cpu), Some(&mem)) = (v, m.cpu_nodes.get(r), m.mem_nodes.get(c)) {
                let x = unit(*v);
                if x.is_finite() && x >= 0.0 {
                    out.insert((cpu, mem), x.round() as u64);
                }
            }
        }
    }
    out
}

fn memattr(
    w: &mut Writer,
    m: &MatrixResult,
    k: &Kind,
    node_cpus: &BTreeMap<u32, Set>,
    notes: &mut Vec<String>,
) {
    let (name, flags) = (k.attr, k.flags);
    let values = cells(m, k.unit);
    if values.is_empty() {
        return;
    }
    let _ = writeln!(w.out, "  <memattr name=\"{name}\" flags=\"{flags}\">");
    for ((cpu, mem), v) in values {
        let Some(gp) = w.node_gp.get(&mem) else {
            notes.push(format!(
                "{name} {cpu}->{mem}: memory node {mem} is not in the topology; left out"
            ));
            continue;
        };
        let Some(init) = node_cpus.get(&cpu).filter(|s| !s.is_empty()) else {
            notes.push(format!(
                "{name} {cpu}->{mem}: CPU node {cpu} has no CPUs in the topology; left out"
            ));
            continue;
        };
        let _ = writeln!(
            w.out,
            "    <memattr_value target_obj_type=\"NUMANode\" target_obj_gp_index=\"{gp}\" value=\"{v}\" initiator_cpuset=\"{}\"/>",
            bitmap(init)
        );
    }
    w.out.push_str("  </memattr>\n");
}

/// A user distance matrix over the nodes that are both a row and a
/// column; hwloc takes only a full square of two nodes or more.
fn distances(out: &mut String, m: &MatrixResult, k: &Kind, notes: &mut Vec<String>) {
    let (name, kind) = (k.distances, k.kind);
    let values = cells(m, k.unit);
    let both: Vec<u32> = m
        .mem_nodes
        .iter()
        .copied()
        .filter(|n| m.cpu_nodes.contains(n))
        .collect();
    if both.len() < 2 {
        notes.push(format!(
            "{name}: fewer than two nodes measured both ways; hwloc takes no distance matrix of one node, the memory attributes hold the value"
        ));
        return;
    }
    let mut row_major = Vec::with_capacity(both.len() * both.len());
    for a in &both {
        for b in &both {
            match values.get(&(*a, *b)) {
                Some(v) => row_major.push(*v),
                None => {
                    notes.push(format!(
                        "{name}: cell {a}->{b} was not measured; hwloc takes only a full matrix, so the distances are left out (the memory attributes hold every measured cell)"
                    ));
                    return;
                }
            }
        }
    }
    let idx: String = both.iter().map(|n| format!("{n} ")).collect();
    let vals: String = row_major.iter().map(|v| format!("{v} ")).collect();
    let _ = writeln!(
        out,
        "  <distances2 type=\"NUMANode\" nbobjs=\"{}\" kind=\"{kind}\" name=\"{name}\" indexing=\"os\">",
        both.len()
    );
    let _ = writeln!(out, "    <indexes length=\"{}\">{idx}</indexes>", idx.len());
    let _ = writeln!(
        out,
        "    <u64values length=\"{}\">{vals}</u64values>",
        vals.len()
    );
    out.push_str("  </distances2>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::matrix::{tests as mt, MatrixKind};
    use crate::topology::testing::{build, CpuSpec, NodeSpec};

    /// One package of two nodes (SNC-like: a Group each), one package of
    /// one node, and a memory-only node 3.
    fn machine() -> TopoReport {
        let cpus = [
            CpuSpec::new(0, 0, 0, 0),
            CpuSpec::new(1, 0, 1, 1),
            CpuSpec::new(2, 1, 0, 2),
            CpuSpec::new(3, 1, 1, 2),
        ];
        let nodes = [0, 1, 2, 3].map(|n| NodeSpec {
            os_index: n,
            memory_bytes: (n as u64 + 1) << 30,
            free_bytes: 1 << 30,
            allowed: true,
        });
        TopoReport::new(&build("/", &cpus, &nodes, None))
    }

    fn full(kind: MatrixKind, values: [[f64; 3]; 3]) -> MatrixResult {
        let mut m = mt::sample();
        m.kind = kind;
        m.cpu_nodes = vec![0, 1, 2];
        m.mem_nodes = vec![0, 1, 2];
        m.matrix = values
            .iter()
            .map(|r| r.iter().map(|v| Some(*v)).collect())
            .collect();
        m
    }

    fn attr_of<'a>(line: &'a str, name: &str) -> &'a str {
        let key = format!(" {name}=\"");
        let at = line.find(&key).unwrap() + key.len();
        &line[at..at + line[at..].find('"').unwrap()]
    }

    #[test]
    fn bitmaps_are_hwlocs_32_bit_words_most_significant_first() {
        assert_eq!(bitmap(&Set::new()), "0x0");
        assert_eq!(bitmap(&Set::from([0, 1])), "0x00000003");
        assert_eq!(bitmap(&Set::from([0, 32])), "0x00000001,0x00000001");
        assert_eq!(
            bitmap(&Set::from([31, 65])),
            "0x00000002,0x00000000,0x80000000"
        );
    }

    #[test]
    fn attribute_text_is_escaped() {
        assert_eq!(attr("a<b>&\"c'd\u{1}"), "a&lt;b&gt;&amp;&quot;c&#39;d");
    }

    #[test]
    fn packages_nodes_and_groups_follow_the_topology() {
        let e = Exported {
            topology: Some(machine()),
            ..Exported::default()
        };
        let x = hwloc_xml(&e).unwrap();
        let objs: Vec<(&str, &str)> = x
            .xml
            .lines()
            .filter(|l| l.trim_start().starts_with("<object "))
            .map(|l| (attr_of(l, "type"), attr_of(l, "cpuset")))
            .collect();
        assert_eq!(
            objs,
            [
                ("Machine", "0x0000000f"),
                // The memory-only node hangs off the Machine.
                ("NUMANode", "0x0000000f"),
                ("Package", "0x00000003"),
                ("Group", "0x00000001"),
                ("NUMANode", "0x00000001"),
                ("Core", "0x00000001"),
                ("PU", "0x00000001"),
                ("Group", "0x00000002"),
                ("NUMANode", "0x00000002"),
                ("Core", "0x00000002"),
                ("PU", "0x00000002"),
                ("Package", "0x0000000c"),
                ("NUMANode", "0x0000000c"),
                ("Core", "0x00000004"),
                ("PU", "0x00000004"),
                ("Core", "0x00000008"),
                ("PU", "0x00000008"),
            ]
        );
        assert!(
            x.xml.contains("local_memory=\"4294967296\""),
            "node 3: 4 GiB"
        );
        assert!(!x.xml.contains("<memattr") && !x.xml.contains("<distances2"));
        assert!(x.notes.is_empty(), "{:?}", x.notes);
    }

    #[test]
    fn measured_cells_become_memory_attributes_and_a_full_square_a_distance_matrix() {
        let lat = full(
            MatrixKind::Latency,
            [
                [90.4, 140.6, 150.0],
                [141.0, 91.0, 149.0],
                [151.0, 152.0, 89.5],
            ],
        );
        let bw = full(
            MatrixKind::Bandwidth,
            [[10.0, 5.0, 4.0], [5.0, 10.0, 4.0], [4.0, 4.0, 12.0]],
        );
        let e = Exported {
            topology: Some(machine()),
            latency: Some(lat),
            bandwidth: Some(bw),
            ..Exported::default()
        };
        let x = hwloc_xml(&e).unwrap();
        // ns rounded to whole ns; GB/s to MiB/s (10 GB/s = 9536.7 MiB/s).
        assert!(x.xml.contains(
            "<distances2 type=\"NUMANode\" nbobjs=\"3\" kind=\"6\" name=\"NumaprobeLatency\" indexing=\"os\">\n    <indexes length=\"6\">0 1 2 </indexes>\n    <u64values length=\"33\">90 141 150 141 91 149 151 152 90 </u64values>"
        ), "{}", x.xml);
        assert!(x.xml.contains("kind=\"10\" name=\"NumaprobeBandwidth\""));
        assert!(x.xml.contains("<u64values length=\"46\">9537 4768 3815 4768 9537 3815 3815 3815 11444 </u64values>"), "{}", x.xml);
        let lat_values: Vec<(&str, &str)> = x
            .xml
            .split("<memattr name=\"Latency\" flags=\"6\">")
            .nth(1)
            .unwrap()
            .split("</memattr>")
            .next()
            .unwrap()
            .lines()
            .filter(|l| l.contains("memattr_value"))
            .map(|l| (attr_of(l, "initiator_cpuset"), attr_of(l, "value")))
            .collect();
        // Node 2's initiator is both its CPUs; 9 cells.
        assert_eq!(lat_values.len(), 9);
        assert_eq!(lat_values[0], ("0x00000001", "90"));
        assert_eq!(lat_values[8], ("0x0000000c", "90"));
        assert!(x.xml.contains("<memattr name=\"Bandwidth\" flags=\"5\">"));
        // The distances come before the memory attributes (hwloc2.dtd's order).
        assert!(x.xml.find("<distances2").unwrap() < x.xml.find("<memattr ").unwrap());
    }

    #[test]
    fn a_partial_square_gives_no_distances_and_a_cell_not_measured_no_value() {
        let mut lat = full(
            MatrixKind::Latency,
            [
                [90.0, 140.0, 150.0],
                [141.0, 91.0, 149.0],
                [151.0, 152.0, 89.0],
            ],
        );
        lat.matrix[1][0] = None;
        lat.matrix[2][2] = Some(f64::NAN);
        let e = Exported {
            topology: Some(machine()),
            latency: Some(lat),
            ..Exported::default()
        };
        let x = hwloc_xml(&e).unwrap();
        assert!(!x.xml.contains("<distances2"), "{}", x.xml);
        assert_eq!(x.xml.matches("<memattr_value").count(), 7);
        assert!(!x.xml.contains("NaN") && !x.xml.contains("nan"));
        assert_eq!(x.notes.len(), 1, "{:?}", x.notes);
        assert!(
            x.notes[0].contains("cell 1->0 was not measured"),
            "{:?}",
            x.notes
        );
    }
}
