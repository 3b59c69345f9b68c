//! The machine as a tree of domains (outer and inner of package and node,
//! L3, cluster, L2, core), built from the allowed CPUs, and the orders the
//! strategies walk it in: scatter, depth first, balanced.

use crate::topology::{Cpu, Topology};
use std::collections::{BTreeMap, BTreeSet};

/// Depth of the full tree: outer, inner, L3, cluster, L2, core.
pub(super) const DEPTH: usize = 6;
/// The levels balanced splits over: outer, inner, core (the cache and
/// cluster levels are left to the compact placement of each share).
pub(super) const BALANCED_LEVELS: [usize; 3] = [0, 1, 5];

/// One hardware thread with its position in the tree.
#[derive(Debug, Clone)]
pub(super) struct Pu {
    pub(super) cpu: u32,
    /// (outer domain, inner domain, L3 domain, cluster, L2 domain, core)
    /// sort keys.
    pub(super) path: [i64; DEPTH],
    pub(super) smt_rank: usize,
    pub(super) package: Option<i64>,
    pub(super) node: Option<u32>,
    pub(super) core: Option<i64>,
}

/// A tree of domains; leaves are cores holding their PUs by SMT rank.
pub(super) enum Tree {
    Core(Vec<Pu>),
    Domain(Vec<Tree>),
}

impl Tree {
    /// The tree over the path entries `levels` (the last one is the core).
    pub(super) fn build(pus: &[Pu], levels: &[usize]) -> Tree {
        let Some((&level, rest)) = levels.split_first() else {
            let mut v = pus.to_vec();
            v.sort_by_key(|p| p.smt_rank);
            return Tree::Core(v);
        };
        let mut groups: BTreeMap<i64, Vec<Pu>> = BTreeMap::new();
        for p in pus {
            groups.entry(p.path[level]).or_default().push(p.clone());
        }
        Tree::Domain(groups.values().map(|g| Tree::build(g, rest)).collect())
    }

    /// Every PU with the positions of its domains among their siblings,
    /// top first.
    fn positions(&self, prefix: &mut Vec<usize>, out: &mut Vec<(Vec<usize>, Pu)>) {
        match self {
            Tree::Core(pus) => out.extend(pus.iter().map(|p| (prefix.clone(), p.clone()))),
            Tree::Domain(ch) => {
                for (i, c) in ch.iter().enumerate() {
                    prefix.push(i);
                    c.positions(prefix, out);
                    prefix.pop();
                }
            }
        }
    }

    /// The scatter order: by SMT rank, then the reversed positions (the
    /// core's place in its L2 domain first, the top domain last), so every
    /// domain of a level is used once before any is used twice.
    pub(super) fn scatter_order(&self) -> Vec<Pu> {
        let mut v = Vec::new();
        self.positions(&mut Vec::new(), &mut v);
        v.sort_by(|(a, pa), (b, pb)| {
            pa.smt_rank
                .cmp(&pb.smt_rank)
                .then_with(|| a.iter().rev().cmp(b.iter().rev()))
        });
        v.into_iter().map(|(_, p)| p).collect()
    }

    /// Depth first; `rank` = Some(r) keeps PUs of that SMT rank only.
    pub(super) fn depth_first(&self, rank: Option<usize>, out: &mut Vec<Pu>) {
        match self {
            Tree::Core(pus) => out.extend(
                pus.iter()
                    .filter(|p| rank.is_none_or(|r| p.smt_rank == r))
                    .cloned(),
            ),
            Tree::Domain(ch) => ch.iter().for_each(|c| c.depth_first(rank, out)),
        }
    }

    /// How many threads fit with `per_core` threads per core at most.
    pub(super) fn capacity(&self, per_core: usize) -> usize {
        match self {
            Tree::Core(pus) => pus.len().min(per_core),
            Tree::Domain(ch) => ch.iter().map(|c| c.capacity(per_core)).sum(),
        }
    }

    /// Spread `k` threads as evenly as capacity allows, each share compact.
    pub(super) fn balanced(&self, k: usize, per_core: usize, out: &mut Vec<Pu>) {
        match self {
            Tree::Core(pus) => out.extend(pus.iter().take(k.min(per_core)).cloned()),
            Tree::Domain(ch) => {
                let caps: Vec<usize> = ch.iter().map(|c| c.capacity(per_core)).collect();
                let mut share = vec![0usize; ch.len()];
                let mut left = k;
                while left > 0 {
                    let mut gave = false;
                    for (i, s) in share.iter_mut().enumerate() {
                        if left > 0 && *s < caps[i] {
                            *s += 1;
                            left -= 1;
                            gave = true;
                        }
                    }
                    if !gave {
                        break;
                    }
                }
                for (c, &s) in ch.iter().zip(&share) {
                    if s > 0 {
                        c.balanced(s, per_core, out);
                    }
                }
            }
        }
    }
}

/// Every allowed CPU (on `nodes`, when given) with its place in the tree.
pub(super) fn pus_of(topo: &Topology, nodes: Option<&[u32]>) -> Vec<Pu> {
    let usable: Vec<&Cpu> = topo
        .cpus
        .iter()
        .filter(|c| c.allowed && c.online)
        .filter(|c| nodes.is_none_or(|ns| c.node.is_some_and(|n| ns.contains(&n))))
        .collect();
    // Which domain is larger: does some node span packages, or some
    // package span nodes? The larger one goes on top of the tree.
    let mut pkgs_per_node: BTreeMap<Option<u32>, BTreeSet<Option<i64>>> = BTreeMap::new();
    let mut nodes_per_pkg: BTreeMap<Option<i64>, BTreeSet<Option<u32>>> = BTreeMap::new();
    for c in &usable {
        pkgs_per_node.entry(c.node).or_default().insert(c.package);
        nodes_per_pkg.entry(c.package).or_default().insert(c.node);
    }
    let node_on_top =
        pkgs_per_node.values().any(|s| s.len() > 1) && nodes_per_pkg.values().all(|s| s.len() == 1);
    // Dense core numbers per distinct core key, in key order.
    let core_keys: BTreeSet<_> = usable.iter().map(|c| topo.core_key(c)).collect();
    let core_index: BTreeMap<_, i64> = core_keys
        .into_iter()
        .enumerate()
        .map(|(i, k)| (k, i as i64))
        .collect();
    let mut by_core: BTreeMap<i64, Vec<u32>> = BTreeMap::new();
    for c in &usable {
        by_core
            .entry(core_index[&topo.core_key(c)])
            .or_default()
            .push(c.os_index);
    }
    let pkg_key = |c: &Cpu| c.package.unwrap_or(-1);
    let node_key = |c: &Cpu| c.node.map_or(-1, i64::from);
    // Cache domains: the highest level's instance (an L3 where there is
    // one, below the node or package), then the cluster (arm64's PPTT
    // cluster: cores behind one DSU or L2/L3 slice, whose own L2s are
    // often private, so the L2 alone would not group them), then the L2.
    // Each is keyed by the lowest core number of its usable CPUs, so the
    // order does not depend on how CPUs are numbered.
    let top_level = topo
        .caches
        .iter()
        .map(|c| c.level)
        .filter(|&l| l >= 3)
        .max();
    let core_of_cpu: BTreeMap<u32, i64> = usable
        .iter()
        .map(|c| (c.os_index, core_index[&topo.core_key(c)]))
        .collect();
    // CPU -> key of its instance, per level, in one pass over the caches.
    let mut by_level: BTreeMap<u32, BTreeMap<u32, i64>> = BTreeMap::new();
    for k in topo.caches.iter().filter(|k| k.kind != "Instruction") {
        if Some(k.level) != top_level && k.level != 2 {
            continue;
        }
        let Some(key) = k.cpus.iter().filter_map(|x| core_of_cpu.get(x)).min() else {
            continue;
        };
        let m = by_level.entry(k.level).or_default();
        for &x in &k.cpus {
            m.entry(x).or_insert(*key);
        }
    }
    let cache_key = |c: &Cpu, level: Option<u32>| -> Option<i64> {
        by_level.get(&level?)?.get(&c.os_index).copied()
    };
    // The kernel's member list where it has one, else equal cluster ids
    // within the package (ids repeat across packages).
    let cluster_key = |c: &Cpu| -> i64 {
        let members = |o: &&&Cpu| {
            if c.cluster_cpus.is_empty() {
                c.cluster.is_some() && o.cluster == c.cluster && o.package == c.package
            } else {
                c.cluster_cpus.contains(&o.os_index)
            }
        };
        usable
            .iter()
            .filter(members)
            .filter_map(|o| core_of_cpu.get(&o.os_index))
            .min()
            .copied()
            .unwrap_or(-1)
    };
    let l2_key = |c: &Cpu| -> i64 { cache_key(c, Some(2)).unwrap_or(-1) };
    usable
        .iter()
        .map(|c| {
            let core = core_index[&topo.core_key(c)];
            let mut sibs = by_core[&core].clone();
            sibs.sort_unstable();
            let smt_rank = sibs.iter().position(|&x| x == c.os_index).unwrap_or(0);
            let (outer, inner) = if node_on_top {
                (node_key(c), pkg_key(c))
            } else {
                (pkg_key(c), node_key(c))
            };
            Pu {
                cpu: c.os_index,
                path: [
                    outer,
                    inner,
                    cache_key(c, top_level).unwrap_or(-1),
                    cluster_key(c),
                    l2_key(c),
                    core,
                ],
                smt_rank,
                package: c.package,
                node: c.node,
                core: c.core,
            }
        })
        .collect()
}
