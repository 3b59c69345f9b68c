//! Which CPUs c2c measures between: the closest level of the topology two
//! CPUs share ([`Domain`]), and on big machines one representative pair per
//! domain the machine has, chosen from the topology.
//!
//! A pair's domain is read from the outside in: different packages, then
//! different NUMA nodes (a sub-NUMA cluster whose L3 the kernel lists as
//! package-wide is still a cross-node transfer), then inside a node the
//! same core (SMT siblings), the same L2 or arm64 cluster, the same L3, or
//! only the node.

use crate::model::c2c::Domain;
use crate::topology::{clusters, Topology};
use std::collections::BTreeMap;

/// Per CPU, the keys of the levels it sits in.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CpuKeys {
    package: Option<i64>,
    node: Option<u32>,
    core: (Option<i64>, Option<i64>, Option<i64>, u32),
    /// Index of its L2 instance (data or unified) in `topo.caches`.
    l2: Option<usize>,
    /// Index of its cluster, where the machine has clusters worth naming.
    cluster: Option<usize>,
    l3: Option<usize>,
}

/// The topology's answer to "which domain do CPUs a and b share", for
/// many pairs at the cost of one pass over the caches.
pub struct Domains {
    keys: BTreeMap<u32, CpuKeys>,
}

impl Domains {
    pub fn new(topo: &Topology) -> Domains {
        let cache_of = |cpu: u32, level: u32| {
            topo.caches
                .iter()
                .position(|k| k.level == level && k.kind != "Instruction" && k.cpus.contains(&cpu))
        };
        let cl = clusters::clusters(topo);
        let keys = topo
            .cpus
            .iter()
            .filter(|c| c.online)
            .map(|c| {
                (
                    c.os_index,
                    CpuKeys {
                        package: c.package,
                        node: c.node,
                        core: topo.core_key(c),
                        l2: cache_of(c.os_index, 2),
                        cluster: cl.iter().position(|k| k.cpus.contains(&c.os_index)),
                        l3: cache_of(c.os_index, 3),
                    },
                )
            })
            .collect();
        Domains { keys }
    }

    /// The closest level `a` and `b` share; None for a CPU the topology
    /// does not know online.
    pub fn of(&self, a: u32, b: u32) -> Option<Domain> {
        let (x, y) = (self.keys.get(&a)?, self.keys.get(&b)?);
        let same = |p: Option<usize>, q: Option<usize>| p.is_some() && p == q;
        Some(if x.package != y.package {
            Domain::CrossPackage
        } else if x.node != y.node {
            Domain::SamePackage
        } else if x.core == y.core {
            Domain::SameCore
        } else if same(x.l2, y.l2) || same(x.cluster, y.cluster) {
            Domain::SameL2
        } else if same(x.l3, y.l3) {
            Domain::SameL3
        } else {
            Domain::SameNode
        })
    }

    /// One unordered pair per domain present among `cpus` (ascending, no
    /// duplicates), closest domain first. Pairs with the first CPU are
    /// preferred (fewer threads' worth of CPUs to read the result by), then
    /// the first pair in numeric order.
    pub fn representatives(&self, cpus: &[u32]) -> Vec<(Domain, u32, u32)> {
        let mut out = Vec::new();
        let Some(&first) = cpus.first() else {
            return out;
        };
        for d in Domain::ALL {
            let with_first = cpus[1..]
                .iter()
                .find(|&&b| self.of(first, b) == Some(d))
                .map(|&b| (first, b));
            let any = || {
                cpus.iter().enumerate().find_map(|(i, &a)| {
                    cpus[i + 1..]
                        .iter()
                        .find(|&&b| self.of(a, b) == Some(d))
                        .map(|&b| (a, b))
                })
            };
            if let Some((a, b)) = with_first.or_else(any) {
                out.push((d, a, b));
            }
        }
        out
    }
}
