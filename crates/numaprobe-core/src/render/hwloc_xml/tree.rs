//! The machine as hwloc's object tree (Machine, Package, a Group per NUMA
//! node where a package holds several, Core, PU; NUMA nodes as memory
//! children), built from the run's topology; `caches` and `pci` add to it.

use super::text::Set;
use crate::model::topo::TopoReport;
use crate::topology::NumaNode;
use std::collections::BTreeMap;

/// One object of the tree being written.
pub(super) struct Obj {
    pub(super) kind: &'static str,
    pub(super) os_index: Option<i64>,
    pub(super) cpuset: Set,
    /// NUMA nodes attached here (memory children).
    pub(super) memory: Vec<u32>,
    pub(super) children: Vec<Obj>,
    /// The type's own attributes (a cache's size, depth, line and type),
    /// written as they are.
    pub(super) attrs: Vec<(&'static str, String)>,
    /// I/O children (a host bridge and its PCI devices), written after the
    /// normal children.
    pub(super) io: Vec<Io>,
}

/// An I/O object: no cpuset of its own (hwloc gives it its parent's
/// locality), its attributes and its children.
pub(super) struct Io {
    pub(super) kind: &'static str,
    pub(super) attrs: Vec<(&'static str, String)>,
    pub(super) children: Vec<Io>,
}

impl Obj {
    pub(super) fn new(kind: &'static str, os_index: Option<i64>, cpuset: Set) -> Obj {
        Obj {
            kind,
            os_index,
            cpuset,
            memory: Vec::new(),
            children: Vec::new(),
            attrs: Vec::new(),
            io: Vec::new(),
        }
    }

    pub(super) fn subtree_nodes(&self) -> Set {
        let mut s: Set = self.memory.iter().copied().collect();
        for c in &self.children {
            s.extend(c.subtree_nodes());
        }
        s
    }
}

/// The machine's tree from the topology; notes for what it had to bend.
pub(super) fn tree(t: &TopoReport, notes: &mut Vec<String>) -> Obj {
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
