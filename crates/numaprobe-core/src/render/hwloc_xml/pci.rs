//! The PCI devices numaprobe read from sysfs as hwloc I/O objects: per
//! NUMA node (and PCI domain) a host bridge attached where the node is
//! attached, its devices below it, so `hwloc-calc` and `lstopo` with
//! `HWLOC_XMLFILE` see each device near the node the kernel says it is
//! local to (the Machine where it says none). Bridges between buses are
//! not read, so every device sits directly under its host bridge.

use super::tree::{Io, Obj};
use crate::topology::PciDevice;
use std::collections::BTreeMap;

/// `domain`, `bus` of a `dddd:bb:dd.f` address; None for another form.
fn domain_bus(address: &str) -> Option<(&str, u8)> {
    let mut parts = address.split(':');
    let (domain, bus, devfn) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || !devfn.contains('.') || domain.is_empty() {
        return None;
    }
    if !domain.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    Some((domain, u8::from_str_radix(bus, 16).ok()?))
}

/// hwloc's `pci_type`: class and subclass, vendor and device, subsystem
/// (unknown here: zeros) and revision (unknown: 00).
fn pci_type(d: &PciDevice) -> String {
    let hex = |s: Option<&str>, digits: usize| {
        let v = s
            .and_then(|s| u32::from_str_radix(s.trim_start_matches("0x"), 16).ok())
            .unwrap_or(0);
        format!("{v:0digits$x}")
    };
    // sysfs `class` is 0xCCSSPP: class, subclass, programming interface.
    let class = u32::from_str_radix(d.class.trim_start_matches("0x"), 16).unwrap_or(0) >> 8;
    format!(
        "{class:04x} [{}:{}] [0000:0000] 00",
        hex(d.vendor.as_deref(), 4),
        hex(d.device.as_deref(), 4)
    )
}

/// (node or None, domain) -> its devices and their buses.
type Bridges<'a> = BTreeMap<(Option<u32>, String), Vec<(&'a PciDevice, u8)>>;

/// Attach `devices` to `machine`; a device whose address is not
/// `dddd:bb:dd.f` is left out and named in `notes`.
pub(super) fn attach(machine: &mut Obj, devices: &[PciDevice], notes: &mut Vec<String>) {
    let mut bridges: Bridges = BTreeMap::new();
    for d in devices {
        let Some((domain, bus)) = domain_bus(&d.address) else {
            notes.push(format!(
                "PCI device {} is left out: not a domain:bus:device.function address",
                d.address
            ));
            continue;
        };
        bridges
            .entry((d.numa_node, domain.to_string()))
            .or_default()
            .push((d, bus));
    }
    for ((node, domain), mut devs) in bridges {
        devs.sort_by(|a, b| a.0.address.cmp(&b.0.address));
        let lo = devs.iter().map(|(_, b)| *b).min().unwrap_or(0);
        let hi = devs.iter().map(|(_, b)| *b).max().unwrap_or(0);
        let bridge = Io {
            kind: "Bridge",
            attrs: vec![
                ("bridge_type", "0-1".to_string()),
                ("depth", "0".to_string()),
                ("bridge_pci", format!("{domain}:[{lo:02x}-{hi:02x}]")),
            ],
            children: devs
                .into_iter()
                .map(|(d, _)| Io {
                    kind: "PCIDev",
                    attrs: vec![
                        ("pci_busid", d.address.clone()),
                        ("pci_type", pci_type(d)),
                        ("pci_link_speed", "0.000000".to_string()),
                    ],
                    children: Vec::new(),
                })
                .collect(),
        };
        let path = node.and_then(|n| holder(machine, n)).unwrap_or_default();
        let mut at = &mut *machine;
        for i in path {
            at = &mut at.children[i];
        }
        at.io.push(bridge);
    }
}

/// The path (child indices from `o`) to the object NUMA node `n` is
/// attached to.
fn holder(o: &Obj, n: u32) -> Option<Vec<usize>> {
    if o.memory.contains(&n) {
        return Some(Vec::new());
    }
    o.children.iter().enumerate().find_map(|(i, c)| {
        let mut p = holder(c, n)?;
        p.insert(0, i);
        Some(p)
    })
}
