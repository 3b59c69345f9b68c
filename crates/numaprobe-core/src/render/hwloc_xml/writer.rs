//! Writing the object tree as hwloc XML elements, numbering every object
//! (`gp_index`) and remembering each NUMA node's number for the memory
//! attributes.

use super::text::{attr, bitmap, Set};
use super::tree::{Io, Obj};
use crate::topology::NumaNode;
use std::collections::BTreeMap;
use std::fmt::Write;

pub(super) struct Writer<'a> {
    pub(super) out: String,
    pub(super) next_gp: u64,
    /// NUMA node os_index -> its gp_index, for the memory attributes.
    pub(super) node_gp: BTreeMap<u32, u64>,
    pub(super) nodes: BTreeMap<u32, &'a NumaNode>,
}

impl Writer<'_> {
    fn gp(&mut self) -> u64 {
        let g = self.next_gp;
        self.next_gp += 1;
        g
    }

    pub(super) fn object(
        &mut self,
        o: &Obj,
        depth: usize,
        inherited: &Set,
        machine: Option<(&Set, &Set)>,
    ) {
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
        let _ = write!(self.out, " gp_index=\"{gp}\"");
        for (k, v) in &o.attrs {
            let _ = write!(self.out, " {k}=\"{}\"", attr(v));
        }
        self.out.push_str(">\n");
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
        for i in &o.io {
            self.io(i, depth + 1);
        }
        let _ = writeln!(self.out, "{pad}</object>");
    }

    /// An I/O object and its children: attributes only, no sets.
    fn io(&mut self, o: &Io, depth: usize) {
        let pad = "  ".repeat(depth);
        let gp = self.gp();
        let _ = write!(
            self.out,
            "{pad}<object type=\"{}\" gp_index=\"{gp}\"",
            o.kind
        );
        for (k, v) in &o.attrs {
            let _ = write!(self.out, " {k}=\"{}\"", attr(v));
        }
        if o.children.is_empty() {
            self.out.push_str("/>\n");
            return;
        }
        self.out.push_str(">\n");
        for c in &o.children {
            self.io(c, depth + 1);
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
