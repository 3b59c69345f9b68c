//! Topology and firmware differences between two machine descriptions:
//! packages, nodes per package (SNC/NPS-like splits), CPU numbering, allowed
//! CPUs and nodes, memory per node, huge pages, SLIT, HMAT, memory tiers and
//! memory-side caches, caches, THP, PCI devices. Each difference names one
//! item with its value on both sides, in words a person can check against
//! `numaprobe topo`.
//!
//! Values that change by themselves between two looks at the same machine
//! (free memory, free huge pages, warnings) are not compared.

use crate::model::diff::{Difference, Section};
use crate::topology::cpulist::format_list;
use crate::topology::{Cpu, Topology};
use crate::units::format_size;
use std::collections::{BTreeMap, BTreeSet};

/// `diff`'s memory tolerance: memory per node differs only beyond this
/// share, since the kernel's own reservations move a node's total by a few
/// MiB between boots. `check` states its own (`check::DEFAULT_MEMORY_TOLERANCE`).
pub const MEMORY_TOLERANCE: f64 = 0.005;

/// Every section `topology` compares, in report order.
pub const ALL: &[Section] = &[
    Section::Machine,
    Section::Packages,
    Section::Nodes,
    Section::Numbering,
    Section::Cpus,
    Section::Allowed,
    Section::Memory,
    Section::Slit,
    Section::Hmat,
    Section::Caches,
    Section::Thp,
    Section::Pci,
];

/// The differences between `a` and `b` in the given sections, memory per
/// node within [`MEMORY_TOLERANCE`].
pub fn topology(a: &Topology, b: &Topology, sections: &[Section]) -> Vec<Difference> {
    topology_with(a, b, sections, MEMORY_TOLERANCE)
}

/// Do two memory sizes differ by more than `tolerance` (a share of the
/// larger)? A size exactly at the tolerance does not.
pub fn memory_differs(a: f64, b: f64, tolerance: f64) -> bool {
    (a - b).abs() > tolerance * a.max(b)
}

/// [`topology`] with memory per node compared within `memory_tolerance`
/// (a share of the larger side: 0.03 is 3 %).
pub fn topology_with(
    a: &Topology,
    b: &Topology,
    sections: &[Section],
    memory_tolerance: f64,
) -> Vec<Difference> {
    let mut out = Vec::new();
    for &s in sections {
        let mut d = Diffs {
            section: s,
            out: &mut out,
        };
        match s {
            Section::Machine => d.value("CPU model", opt(&a.cpu_model), opt(&b.cpu_model)),
            Section::Packages => packages(&mut d, a, b),
            Section::Nodes => nodes(&mut d, a, b),
            Section::Numbering => numbering(&mut d, a, b),
            Section::Cpus => cpus(&mut d, a, b),
            Section::Allowed => {
                d.value(
                    "allowed CPUs",
                    format_list(&a.allowed.cpus),
                    format_list(&b.allowed.cpus),
                );
                d.value(
                    "allowed memory nodes",
                    format_list(&a.allowed.nodes),
                    format_list(&b.allowed.nodes),
                );
            }
            Section::Memory => memory(&mut d, a, b, memory_tolerance),
            Section::Slit => slit(&mut d, a, b),
            Section::Hmat => hmat(&mut d, a, b),
            Section::Caches => caches(&mut d, a, b),
            Section::Thp => d.value("transparent huge pages", opt(&a.thp_mode), opt(&b.thp_mode)),
            Section::Pci => pci(&mut d, a, b),
            _ => {}
        }
    }
    out
}

/// Collects the differences of one section.
struct Diffs<'a> {
    section: Section,
    out: &'a mut Vec<Difference>,
}

impl Diffs<'_> {
    fn value(&mut self, item: impl Into<String>, a: String, b: String) {
        if a != b {
            self.out.push(Difference::new(self.section, item, a, b));
        }
    }

    /// Compare two keyed maps: a key on one side only reads `absent` on the other.
    fn keyed<K: Ord + Clone>(
        &mut self,
        a: &BTreeMap<K, String>,
        b: &BTreeMap<K, String>,
        item: impl Fn(&K) -> String,
    ) {
        let keys: BTreeSet<&K> = a.keys().chain(b.keys()).collect();
        for k in keys {
            let get =
                |m: &BTreeMap<K, String>| m.get(k).cloned().unwrap_or_else(|| "absent".into());
            self.value(item(k), get(a), get(b));
        }
    }
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map_or_else(|| "unknown".into(), T::to_string)
}

fn packages(d: &mut Diffs, a: &Topology, b: &Topology) {
    let pa = package_groups(a);
    let pb = package_groups(b);
    d.value("packages", pa.len().to_string(), pb.len().to_string());
    // Nodes per package: 2 on SNC2/NPS2, 4 on SNC4/NPS4, 1 without; the
    // BIOS switch shows here first.
    let per = |p: &[(Vec<u32>, BTreeSet<u32>)]| {
        let counts: BTreeSet<usize> = p.iter().map(|(_, n)| n.len()).collect();
        counts
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(" or ")
    };
    d.value("NUMA nodes per package (SNC/NPS)", per(&pa), per(&pb));
    // Package by package, in order of the lowest CPU (package ids are labels).
    for i in 0..pa.len().min(pb.len()) {
        d.value(
            format!("package {i} (in CPU order): CPUs"),
            format_list(&pa[i].0),
            format_list(&pb[i].0),
        );
    }
}

/// Online CPUs and nodes per package, in order of each package's lowest CPU.
fn package_groups(t: &Topology) -> Vec<(Vec<u32>, BTreeSet<u32>)> {
    let mut order: Vec<Option<i64>> = Vec::new();
    let mut by: BTreeMap<Option<i64>, (Vec<u32>, BTreeSet<u32>)> = BTreeMap::new();
    for c in t.cpus.iter().filter(|c| c.online) {
        let e = by.entry(c.package).or_insert_with(|| {
            order.push(c.package);
            Default::default()
        });
        e.0.push(c.os_index);
        e.1.extend(c.node);
    }
    order.into_iter().filter_map(|p| by.remove(&p)).collect()
}

fn nodes(d: &mut Diffs, a: &Topology, b: &Topology) {
    d.value(
        "NUMA nodes",
        format_list(&a.node_ids()),
        format_list(&b.node_ids()),
    );
    let cpuless = |t: &Topology| {
        let v: Vec<u32> = t
            .nodes
            .iter()
            .filter(|n| n.cpus.is_empty())
            .map(|n| n.os_index)
            .collect();
        format_list(&v)
    };
    d.value("CPU-less nodes", cpuless(a), cpuless(b));
    let map = |t: &Topology| -> BTreeMap<u32, String> {
        t.nodes
            .iter()
            .map(|n| (n.os_index, format_list(&n.cpus)))
            .collect()
    };
    d.keyed(&map(a), &map(b), |n| format!("node {n}: CPUs"));
}

fn numbering(d: &mut Diffs, a: &Topology, b: &Topology) {
    d.value(
        "package numbering",
        a.numbering.packages.clone(),
        b.numbering.packages.clone(),
    );
    d.value("SMT numbering", smt(a), smt(b));
    let per_core = |t: &Topology| {
        let m = t
            .cpus
            .iter()
            .filter(|c| c.online)
            .map(|c| c.smt_siblings.len())
            .max()
            .unwrap_or(0);
        m.to_string()
    };
    d.value("threads per core", per_core(a), per_core(b));
}

fn smt(t: &Topology) -> String {
    match t.numbering.smt_stride {
        Some(s) => format!("{} (stride {s})", t.numbering.smt),
        None => t.numbering.smt.clone(),
    }
}

/// One CPU's place in words: what `check` and `diff` compare per CPU.
pub fn place(c: Option<&Cpu>) -> String {
    let Some(c) = c else {
        return "absent".into();
    };
    if !c.online {
        return "offline".into();
    }
    let id = |v: Option<i64>| v.map_or("?".into(), |x| x.to_string());
    format!(
        "package {}, core {}, node {}, SMT siblings {}",
        id(c.package),
        id(c.core),
        c.node.map_or("?".into(), |n| n.to_string()),
        format_list(&c.smt_siblings)
    )
}

fn cpus(d: &mut Diffs, a: &Topology, b: &Topology) {
    d.value(
        "possible CPUs",
        a.cpus.len().to_string(),
        b.cpus.len().to_string(),
    );
    let online = |t: &Topology| {
        let v: Vec<u32> = t
            .cpus
            .iter()
            .filter(|c| c.online)
            .map(|c| c.os_index)
            .collect();
        format_list(&v)
    };
    d.value("online CPUs", online(a), online(b));
    let ids: BTreeSet<u32> = a.cpus.iter().chain(&b.cpus).map(|c| c.os_index).collect();
    for id in ids {
        d.value(format!("CPU {id}"), place(a.cpu(id)), place(b.cpu(id)));
    }
}

fn memory(d: &mut Diffs, a: &Topology, b: &Topology, tolerance: f64) {
    let ids: BTreeSet<u32> = a.node_ids().into_iter().chain(b.node_ids()).collect();
    for n in ids {
        let (na, nb) = (a.node(n), b.node(n));
        if let (Some(x), Some(y)) = (na, nb) {
            if memory_differs(x.memory_bytes as f64, y.memory_bytes as f64, tolerance) {
                d.value(
                    format!("node {n}: memory"),
                    format_size(x.memory_bytes),
                    format_size(y.memory_bytes),
                );
            }
        }
        let huge = |node: Option<&crate::topology::NumaNode>| -> BTreeMap<u64, String> {
            node.map(|x| {
                x.hugepages
                    .iter()
                    .map(|h| (h.size_bytes, h.total.to_string()))
                    .collect()
            })
            .unwrap_or_default()
        };
        d.keyed(&huge(na), &huge(nb), |size| {
            format!("node {n}: {} huge pages configured", format_size(*size))
        });
    }
}

fn slit(d: &mut Diffs, a: &Topology, b: &Topology) {
    let (Some(x), Some(y)) = (&a.distances, &b.distances) else {
        let has = |t: &Topology| {
            if t.distances.is_some() {
                "present"
            } else {
                "absent"
            }
        };
        d.value("distance table", has(a).into(), has(b).into());
        return;
    };
    if x.node_ids != y.node_ids {
        d.value(
            "distance table nodes",
            format_list(&x.node_ids),
            format_list(&y.node_ids),
        );
    }
    for &i in &x.node_ids {
        for &j in &x.node_ids {
            if let (Some(p), Some(q)) = (x.get(i, j), y.get(i, j)) {
                d.value(format!("distance {i} -> {j}"), p.to_string(), q.to_string());
            }
        }
    }
}

fn hmat(d: &mut Diffs, a: &Topology, b: &Topology) {
    let access = |t: &Topology| -> BTreeMap<(u32, u32), String> {
        let o = |v: Option<u64>| v.map_or("-".into(), |x| x.to_string());
        t.hmat
            .iter()
            .map(|h| {
                (
                    (h.node, h.access_class),
                    format!(
                        "initiators {}, read {} ns / {} MB/s, write {} ns / {} MB/s",
                        format_list(&h.initiators),
                        o(h.read_latency_ns),
                        o(h.read_bandwidth_mbps),
                        o(h.write_latency_ns),
                        o(h.write_bandwidth_mbps)
                    ),
                )
            })
            .collect()
    };
    d.keyed(&access(a), &access(b), |(n, c)| {
        format!("node {n} access class {c}")
    });
    let tiers = |t: &Topology| -> BTreeMap<u32, String> {
        t.memory_tiers
            .iter()
            .map(|m| (m.id, format_list(&m.nodes)))
            .collect()
    };
    d.keyed(&tiers(a), &tiers(b), |id| {
        format!("memory tier {id}: nodes")
    });
    let msc = |t: &Topology| -> BTreeMap<(u32, u32), String> {
        t.memory_side_caches
            .iter()
            .map(|m| {
                (
                    (m.node, m.level),
                    format!(
                        "{}, {}, {}",
                        m.size_bytes.map_or("size unknown".into(), format_size),
                        m.indexing,
                        m.write_policy
                    ),
                )
            })
            .collect()
    };
    d.keyed(&msc(a), &msc(b), |(n, l)| {
        format!("node {n} memory-side cache {l}")
    });
}

/// Per cache level and type: instances, their sizes, CPUs per instance.
type CacheSummary = (usize, BTreeSet<String>, BTreeSet<usize>);

fn caches(d: &mut Diffs, a: &Topology, b: &Topology) {
    // Per level and type: how many instances, their sizes, CPUs per instance.
    let sum = |t: &Topology| -> BTreeMap<(u32, String), String> {
        let mut m: BTreeMap<(u32, String), CacheSummary> = BTreeMap::new();
        for c in &t.caches {
            let e = m.entry((c.level, c.kind.clone())).or_default();
            e.0 += 1;
            e.1.insert(c.size_bytes.map_or("size unknown".into(), format_size));
            e.2.insert(c.cpus.len());
        }
        m.into_iter()
            .map(|(k, (n, sizes, shared))| {
                let join = |s: Vec<String>| s.join(" or ");
                (
                    k,
                    format!(
                        "{n} x {}, {} CPU{} each",
                        join(sizes.into_iter().collect()),
                        join(shared.iter().map(usize::to_string).collect()),
                        if shared.iter().all(|&k| k == 1) {
                            ""
                        } else {
                            "s"
                        }
                    ),
                )
            })
            .collect()
    };
    d.keyed(&sum(a), &sum(b), |(l, k)| format!("L{l} {k}"));
}

fn pci(d: &mut Diffs, a: &Topology, b: &Topology) {
    let devs = |t: &Topology| -> BTreeMap<String, String> {
        t.pci_devices
            .iter()
            .map(|p| {
                (
                    p.address.clone(),
                    format!(
                        "{} on node {}",
                        p.kind,
                        p.numa_node.map_or("?".into(), |n| n.to_string())
                    ),
                )
            })
            .collect()
    };
    d.keyed(&devs(a), &devs(b), |addr| format!("PCI {addr}"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::testing::{build, CpuSpec};

    /// Two packages of two cores; `snc` splits each package into two nodes.
    fn machine(snc: bool) -> Topology {
        let cpus: Vec<CpuSpec> = (0..4u32)
            .map(|i| {
                let pkg = i64::from(i / 2);
                let node = if snc { i } else { i / 2 };
                CpuSpec::new(i, pkg, i64::from(i % 2), node)
            })
            .collect();
        let n = if snc { 4 } else { 2 };
        let slit = (0..n)
            .map(|i| (0..n).map(|j| if i == j { 10 } else { 20 }).collect())
            .collect();
        build("/", &cpus, &[], Some(slit))
    }

    #[test]
    fn a_topology_equals_itself() {
        let t = machine(false);
        assert!(topology(&t, &t, ALL).is_empty());
    }

    #[test]
    fn a_sub_numa_split_shows_as_nodes_per_package() {
        let d = topology(&machine(false), &machine(true), ALL);
        let find = |item: &str| {
            d.iter()
                .find(|x| x.item == item)
                .unwrap_or_else(|| panic!("{item}: {d:#?}"))
        };
        let per = find("NUMA nodes per package (SNC/NPS)");
        assert_eq!((per.a.as_str(), per.b.as_str()), ("1", "2"));
        assert_eq!(find("NUMA nodes").b, "0-3");
        assert_eq!(find("CPU 1").a, "package 0, core 1, node 0, SMT siblings 1");
        assert_eq!(find("CPU 1").b, "package 0, core 1, node 1, SMT siblings 1");
        assert_eq!(find("distance table nodes").a, "0-1");
        // Packages are the same: no package count difference.
        assert!(!d.iter().any(|x| x.item == "packages"));
    }

    #[test]
    fn sections_select_what_is_compared() {
        let d = topology(
            &machine(false),
            &machine(true),
            &[Section::Thp, Section::Packages],
        );
        assert_eq!(d.len(), 1, "{d:#?}");
        assert_eq!(d[0].item, "NUMA nodes per package (SNC/NPS)");
        let d = topology(&machine(false), &machine(true), &[Section::Allowed]);
        assert_eq!(d.len(), 1, "{d:#?}");
        assert_eq!((d[0].a.as_str(), d[0].b.as_str()), ("0-1", "0-3"));
    }
}
