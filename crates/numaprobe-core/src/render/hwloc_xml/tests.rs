//! The hwloc exporter against what hwloc reads: bitmaps, escaping, the
//! object tree of a machine with a Group per node, and the matrices as
//! memory attributes and distances, a partial square included.

use super::*;
use crate::model::matrix::{tests as mt, MatrixKind};
use crate::model::topo::TopoReport;
use crate::topology::testing::{build, CpuSpec, NodeSpec};
use text::{attr, Set};

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
    assert_eq!(
        attr("a<b>&\"c'd\u{1}\u{fffe}"),
        "a&lt;b&gt;&amp;&quot;c&#39;d\\u{1}\\u{fffe}"
    );
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
    assert!(
        x.xml.contains(
            "<u64values length=\"46\">9537 4768 3815 4768 9537 3815 3815 3815 11444 </u64values>"
        ),
        "{}",
        x.xml
    );
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

fn cache(level: u32, kind: &str, cpus: &[u32]) -> crate::topology::Cache {
    crate::topology::Cache {
        level,
        kind: kind.into(),
        size_bytes: Some(1 << (10 + level * 4)),
        line_size: Some(64),
        cpus: cpus.to_vec(),
    }
}

/// The `type=` of every object line, indented by its depth.
fn outline(xml: &str) -> Vec<String> {
    xml.lines()
        .filter(|l| l.trim_start().starts_with("<object "))
        .map(|l| {
            let depth = (l.len() - l.trim_start().len()) / 2;
            format!("{}{}", " ".repeat(depth), attr_of(l, "type"))
        })
        .collect()
}

#[test]
fn caches_nest_above_the_cores_they_serve_and_one_that_does_not_nest_is_named() {
    let mut t = machine();
    t.caches = vec![
        // Listed out of order, and the L1d twice: placement is by level.
        cache(1, "Instruction", &[0]),
        cache(1, "Data", &[0]),
        cache(1, "Data", &[0]),
        cache(2, "Unified", &[0]),
        cache(3, "Unified", &[0, 1]),
        cache(3, "Unified", &[2, 3]),
        // CPUs 1 and 2 lie in two packages: it cannot nest.
        cache(4, "Unified", &[1, 2]),
    ];
    let x = hwloc_xml(&Exported {
        topology: Some(t),
        ..Exported::default()
    })
    .unwrap();
    let o = outline(&x.xml);
    let at = |kind: &str| o.iter().filter(|l| l.trim() == kind).count();
    assert_eq!(
        (at("L3Cache"), at("L2Cache"), at("L1Cache"), at("L1iCache")),
        (2, 1, 1, 1),
        "{o:#?}"
    );
    assert_eq!(at("L4Cache"), 0);
    assert!(
        x.notes
            .iter()
            .any(|n| n.contains("L4Cache of CPUs 1-2 is left out: it does not nest")),
        "{:?}",
        x.notes
    );
    // CPU 0's chain: L2 > L1d > L1i > Core > PU, each one level deeper.
    let l2 = o.iter().position(|l| l.trim() == "L2Cache").unwrap();
    let chain: Vec<&str> = o[l2..l2 + 5].iter().map(|l| l.trim()).collect();
    assert_eq!(chain, ["L2Cache", "L1Cache", "L1iCache", "Core", "PU"]);
    let depth = |l: &String| l.len() - l.trim_start().len();
    for w in o[l2..l2 + 5].windows(2) {
        assert_eq!(depth(&w[1]), depth(&w[0]) + 1, "{o:#?}");
    }
    let line = x
        .xml
        .lines()
        .find(|l| l.contains("type=\"L1iCache\""))
        .unwrap();
    assert_eq!(attr_of(line, "cache_type"), "2");
    assert_eq!(attr_of(line, "depth"), "1");
    assert_eq!(attr_of(line, "cpuset"), "0x00000001");
    let l3 = x
        .xml
        .lines()
        .find(|l| l.contains("type=\"L3Cache\""))
        .unwrap();
    assert_eq!(attr_of(l3, "cache_size"), (1u64 << 22).to_string());
    assert_eq!(attr_of(l3, "cache_type"), "0");
}

#[test]
fn pci_devices_sit_under_a_host_bridge_where_their_node_is_attached() {
    let mut t = machine();
    let dev = |address: &str, node: Option<u32>| crate::topology::PciDevice {
        address: address.into(),
        kind: "network".into(),
        class: "0x020000".into(),
        vendor: Some("0x8086".into()),
        device: Some("0x1572".into()),
        numa_node: node,
    };
    t.pci_devices = vec![
        dev("0000:3b:00.0", Some(2)),
        dev("0000:3b:00.1", Some(2)),
        dev("0000:00:1f.2", None),
        dev("0000:d8:00.0", Some(1)),
        dev("not-an-address", Some(0)),
    ];
    let x = hwloc_xml(&Exported {
        topology: Some(t),
        ..Exported::default()
    })
    .unwrap();
    let o = outline(&x.xml);
    assert_eq!(
        o.iter().filter(|l| l.trim() == "Bridge").count(),
        3,
        "{o:#?}"
    );
    assert_eq!(
        o.iter().filter(|l| l.trim() == "PCIDev").count(),
        4,
        "{o:#?}"
    );
    let line = x
        .xml
        .lines()
        .find(|l| l.contains("pci_busid=\"0000:3b:00.1\""))
        .unwrap();
    assert_eq!(attr_of(line, "pci_type"), "0200 [8086:1572] [0000:0000] 00");
    assert!(x.xml.contains("bridge_pci=\"0000:[3b-3b]\""), "{}", x.xml);
    // Node 2 is package 1's own node: its bridge is the package's I/O child.
    let lines: Vec<&str> = x.xml.lines().collect();
    let dev_line = lines
        .iter()
        .position(|l| l.contains("0000:3b:00.0"))
        .unwrap();
    let opener = lines[..dev_line]
        .iter()
        .rev()
        .find(|l| {
            l.contains("type=\"Package\"")
                || l.contains("type=\"Machine\"")
                || l.contains("type=\"Group\"")
        })
        .unwrap();
    assert!(opener.contains("type=\"Package\""), "{opener}");
    assert_eq!(attr_of(opener, "nodeset"), "0x00000004");
    assert!(
        x.notes.iter().any(|n| n.contains("not-an-address")),
        "{:?}",
        x.notes
    );
}
