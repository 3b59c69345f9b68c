//! The hwloc exporter: an [`Exported`] run as hwloc's v2 XML, so that
//! `lstopo --input FILE`, `hwloc-calc` and `hwloc-bind` (with
//! `HWLOC_XMLFILE=FILE`) see the measured machine. The tree is the run's
//! topology (Machine, Package, a Group per NUMA node where a package holds
//! several, the caches read from sysfs, Core, PU, and the PCI devices under
//! a host bridge per NUMA node); the measured matrices become
//! hwloc memory attributes (`Latency` in ns, `Bandwidth` in MiB/s, the
//! initiator being the CPU node's cpuset) and user distance matrices
//! (`NumaprobeLatency`, `NumaprobeBandwidth`) over the nodes measured both
//! ways. The format follows hwloc's `hwloc2.dtd` (objects, `distances2`,
//! `memattr`). Values hwloc cannot hold are said in [`HwlocXml::notes`].
//!
//! - `text`: hwloc's bitmaps and attribute escaping;
//! - `tree`: the object tree from the topology;
//! - `caches`: the CPU caches placed in the tree;
//! - `pci`: the PCI devices as I/O objects;
//! - `writer`: the tree as XML elements;
//! - `matrices`: the matrices as memory attributes and distances.

mod caches;
mod matrices;
mod pci;
mod text;
mod tree;
mod writer;

use crate::model::export::Exported;
use crate::model::matrix::MatrixResult;
use matrices::{distances, memattr, Kind, BANDWIDTH, LATENCY};
use std::collections::BTreeMap;
use std::fmt::Write;
pub use text::bitmap;
use text::{attr, Set};
use tree::tree;
use writer::Writer;

/// The XML and what it could not carry.
#[derive(Debug, Clone, PartialEq)]
pub struct HwlocXml {
    pub xml: String,
    /// What was left out or rounded, one line each.
    pub notes: Vec<String>,
}

/// The XML of `e`'s topology and matrices; None without a topology.
pub fn hwloc_xml(e: &Exported) -> Option<HwlocXml> {
    let t = e.topology.as_ref()?;
    let mut notes = Vec::new();
    let mut machine = tree(t, &mut notes);
    caches::insert(&mut machine, &t.caches, &mut notes);
    pci::attach(&mut machine, &t.pci_devices, &mut notes);
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

#[cfg(test)]
mod tests;
