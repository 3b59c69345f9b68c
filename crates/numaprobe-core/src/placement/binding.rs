//! Portable thread binding: compact, scatter and balanced placements computed
//! from the topology (packages, nodes, cores, SMT siblings), never from CPU
//! numbers, so one strategy gives equivalent placements on machines that
//! number their CPUs differently (the Sun and HP boxes of the RWTH Aachen blog on an 8-socket
//! Nehalem-EX).
//!
//! The machine is a tree: the larger of {package, node} domains on top (a
//! package holding two nodes, or a node holding several packages), the
//! smaller below it, then the cache domains inside them (an L3 instance,
//! then a cluster where the kernel lists one (arm64's PPTT clusters, whose
//! cores often keep private L2s), then an L2 instance: a Bulldozer compute
//! unit's two cores share an L2 and an FPU, a Skylake-SP tile shares an L2
//! too), then cores, then hardware threads. A level where every domain
//! holds one core changes nothing. Only allowed CPUs (online, in the
//! affinity mask and cpuset, on `--nodes`) are in the tree.
//!
//! * scatter: every domain at every level gets a thread before any gets a
//!   second one: threads are ordered by (SMT rank, then the position of
//!   their core in its L2 domain, of that domain in its L3, of the L3 in
//!   its node or package, ..., the top domain), the reverse-lexicographic
//!   order of the tree, which is round-robin at every level on a regular
//!   machine and still never doubles up in one domain while a domain of
//!   the same kind is unused on an irregular one (hwloc-distrib spreads the
//!   same way);
//! * compact: depth first, filling an L2 domain, then its L3, then a
//!   package's cores before the next;
//! * balanced: threads split as evenly as capacity allows over the top
//!   domains, then the next level, each share placed compactly, so thread
//!   numbers that are close sit close.
//!
//! Hardware threads: first every core's first thread (layer 0), then the
//! second threads, and so on, so no two threads share a core while a free
//! core remains. `Smt::Use` lets compact put a core's threads next to each
//! other instead (KMP_AFFINITY=compact style); past the number of cores
//! `Smt::Avoid` falls back to sharing cores, with a warning.

use crate::topology::{Cpu, Topology};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    Compact,
    Scatter,
    Balanced,
}

impl Strategy {
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Compact => "compact",
            Strategy::Scatter => "scatter",
            Strategy::Balanced => "balanced",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Smt {
    Use,
    Avoid,
}

impl Smt {
    pub fn as_str(self) -> &'static str {
        match self {
            Smt::Use => "use",
            Smt::Avoid => "avoid",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub threads: usize,
    pub strategy: Strategy,
    pub smt: Smt,
    /// Restrict to these nodes' CPUs (None: every allowed CPU).
    pub nodes: Option<Vec<u32>>,
}

/// Where one thread goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub thread: usize,
    pub cpu: u32,
    pub package: Option<i64>,
    pub node: Option<u32>,
    /// `core_id` as sysfs gives it (unique within a package).
    pub core: Option<i64>,
    /// 0 for a core's first allowed hardware thread, 1 for the second, ...
    pub smt_rank: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    pub places: Vec<Place>,
    /// What the naive "first N CPU numbers" would have been.
    pub naive_cpus: Vec<u32>,
    /// Why the naive choice is worse, one line each (empty when it is the
    /// same set of CPUs).
    pub naive_problems: Vec<String>,
    pub warnings: Vec<String>,
    /// Nodes for `--membind`: the threads' nodes whose memory this process
    /// may use (cgroup `mems`).
    pub mem_nodes: Vec<u32>,
}

impl Binding {
    pub fn cpus(&self) -> Vec<u32> {
        self.places.iter().map(|p| p.cpu).collect()
    }
    pub fn nodes(&self) -> Vec<u32> {
        let s: BTreeSet<u32> = self.places.iter().filter_map(|p| p.node).collect();
        s.into_iter().collect()
    }
    pub fn packages(&self) -> Vec<i64> {
        let s: BTreeSet<i64> = self.places.iter().filter_map(|p| p.package).collect();
        s.into_iter().collect()
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BindError {
    #[error("--threads 0: at least one thread is needed")]
    ZeroThreads,
    #[error("node {node} does not exist (nodes: {known})")]
    UnknownNode { node: u32, known: String },
    #[error(
        "node {node} has no CPU this process may use (a memory-only node, or outside the cpuset)"
    )]
    NodeWithoutCpus { node: u32 },
    #[error("no CPU this process may use{scope}")]
    NoCpus { scope: String },
    #[error("--threads {threads}: only {cpus} CPUs are allowed{scope} (online, in the affinity mask and cpuset)")]
    TooManyThreads {
        threads: usize,
        cpus: usize,
        scope: String,
    },
}

/// Depth of the full tree: outer, inner, L3, cluster, L2, core.
const DEPTH: usize = 6;
/// The levels balanced splits over: outer, inner, core (the cache and
/// cluster levels are left to the compact placement of each share).
const BALANCED_LEVELS: [usize; 3] = [0, 1, 5];

/// One hardware thread with its position in the tree.
#[derive(Debug, Clone)]
struct Pu {
    cpu: u32,
    /// (outer domain, inner domain, L3 domain, cluster, L2 domain, core)
    /// sort keys.
    path: [i64; DEPTH],
    smt_rank: usize,
    package: Option<i64>,
    node: Option<u32>,
    core: Option<i64>,
}

/// A tree of domains; leaves are cores holding their PUs by SMT rank.
enum Tree {
    Core(Vec<Pu>),
    Domain(Vec<Tree>),
}

impl Tree {
    /// The tree over the path entries `levels` (the last one is the core).
    fn build(pus: &[Pu], levels: &[usize]) -> Tree {
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
    fn scatter_order(&self) -> Vec<Pu> {
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
    fn depth_first(&self, rank: Option<usize>, out: &mut Vec<Pu>) {
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
    fn capacity(&self, per_core: usize) -> usize {
        match self {
            Tree::Core(pus) => pus.len().min(per_core),
            Tree::Domain(ch) => ch.iter().map(|c| c.capacity(per_core)).sum(),
        }
    }

    /// Spread `k` threads as evenly as capacity allows, each share compact.
    fn balanced(&self, k: usize, per_core: usize, out: &mut Vec<Pu>) {
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

/// `0-3,8,10-11`: the kernel's cpulist form, sorted; empty is empty (see
/// `topology::cpulist::format_ranges`).
pub fn cpulist(cpus: &[u32]) -> String {
    crate::topology::cpulist::format_ranges(cpus, "")
}

fn pus_of(topo: &Topology, nodes: Option<&[u32]>) -> Vec<Pu> {
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

/// Compute the placement of `req.threads` threads on `topo`.
pub fn bind(topo: &Topology, req: &Request) -> Result<Binding, BindError> {
    if req.threads == 0 {
        return Err(BindError::ZeroThreads);
    }
    let scope = match &req.nodes {
        Some(ns) => format!(" on node(s) {}", cpulist(ns)),
        None => String::new(),
    };
    if let Some(ns) = &req.nodes {
        let known = topo.node_ids();
        for &n in ns {
            if !known.contains(&n) {
                return Err(BindError::UnknownNode {
                    node: n,
                    known: cpulist(&known),
                });
            }
            if topo.allowed_cpus_of_node(n).is_empty() {
                return Err(BindError::NodeWithoutCpus { node: n });
            }
        }
    }
    let pus = pus_of(topo, req.nodes.as_deref());
    if pus.is_empty() {
        return Err(BindError::NoCpus { scope });
    }
    if req.threads > pus.len() {
        return Err(BindError::TooManyThreads {
            threads: req.threads,
            cpus: pus.len(),
            scope,
        });
    }
    let tree = Tree::build(&pus, &[0, 1, 2, 3, 4, 5]);
    let cores = tree.capacity(1);
    let max_rank = pus.iter().map(|p| p.smt_rank).max().unwrap_or(0);
    let n = req.threads;
    let mut warnings = Vec::new();

    let order: Vec<Pu> = match (req.strategy, req.smt) {
        (Strategy::Scatter, _) => tree.scatter_order(),
        (Strategy::Compact, Smt::Use) => {
            let mut v = Vec::new();
            tree.depth_first(None, &mut v);
            v
        }
        (Strategy::Compact, Smt::Avoid) => {
            let mut v = Vec::new();
            for r in 0..=max_rank {
                tree.depth_first(Some(r), &mut v);
            }
            v
        }
        (Strategy::Balanced, _) => {
            // One thread per core while they fit; beyond, as many per core
            // as needed, spread evenly.
            let tree = Tree::build(&pus, &BALANCED_LEVELS);
            let mut per_core = 1;
            while tree.capacity(per_core) < n && per_core <= max_rank {
                per_core += 1;
            }
            let mut v = Vec::new();
            tree.balanced(n, per_core, &mut v);
            v
        }
    };
    let chosen: Vec<Pu> = order.into_iter().take(n).collect();
    if n > cores && req.smt == Smt::Avoid {
        warnings.push(format!(
            "--smt avoid: only {cores} cores are allowed{}, so {} of the {n} threads share a core with another thread \
             (pass --smt use to place them so on purpose)",
            if let Some(ns) = &req.nodes {
                format!(" on node(s) {}", cpulist(ns))
            } else {
                String::new()
            },
            n - cores
        ));
    }
    let places: Vec<Place> = chosen
        .iter()
        .enumerate()
        .map(|(t, p)| Place {
            thread: t,
            cpu: p.cpu,
            package: p.package,
            node: p.node,
            core: p.core,
            smt_rank: p.smt_rank,
        })
        .collect();
    let naive_cpus: Vec<u32> = (0..n as u32).collect();
    let naive_problems = naive_problems(topo, req, &pus, &places, &naive_cpus);
    // Memory binding: the threads' own nodes, as far as the cpuset lets us
    // allocate there; otherwise numactl --membind would fail.
    let cpu_nodes: BTreeSet<u32> = places.iter().filter_map(|p| p.node).collect();
    let mut mem_nodes: Vec<u32> = cpu_nodes
        .iter()
        .copied()
        .filter(|&x| topo.node(x).is_some_and(|nd| nd.allowed))
        .collect();
    let denied: Vec<u32> = cpu_nodes
        .iter()
        .copied()
        .filter(|x| !mem_nodes.contains(x))
        .collect();
    if mem_nodes.is_empty() {
        // CPUs without a known node, or only denied nodes: every node the
        // process may allocate on.
        mem_nodes = topo.allowed_mem_nodes();
    }
    if !denied.is_empty() {
        warnings.push(format!(
            "memory on node(s) {} is outside this process's cpuset; --membind uses {}",
            cpulist(&denied),
            cpulist(&mem_nodes)
        ));
    }
    Ok(Binding {
        places,
        naive_cpus,
        naive_problems,
        warnings,
        mem_nodes,
    })
}

/// One allowed CPU per core of `node` (each core's first allowed hardware
/// thread), in the order scatter uses them: cores that share an L2 domain
/// (a compute unit, a cluster) or an L3 come after cores that share
/// nothing. The one place that decides which cores "core 0, core 1, ..." of
/// a node are, for binding and for the study presets alike, so two threads
/// on "different cores" of a node do not share an L2 and an FPU while other
/// cores are free.
pub fn core_order(topo: &Topology, node: u32) -> Vec<u32> {
    let pus: Vec<Pu> = pus_of(topo, Some(&[node]))
        .into_iter()
        .filter(|p| p.smt_rank == 0)
        .collect();
    Tree::build(&pus, &[0, 1, 2, 3, 4, 5])
        .scatter_order()
        .into_iter()
        .map(|p| p.cpu)
        .collect()
}

/// What is wrong with `taskset -c 0-(N-1)` compared with the strategy.
fn naive_problems(
    topo: &Topology,
    req: &Request,
    pus: &[Pu],
    places: &[Place],
    naive: &[u32],
) -> Vec<String> {
    let chosen: BTreeSet<u32> = places.iter().map(|p| p.cpu).collect();
    let naive_set: BTreeSet<u32> = naive.iter().copied().collect();
    if chosen == naive_set {
        return Vec::new();
    }
    let name = if naive.len() == 1 {
        format!("CPU {}", naive[0])
    } else {
        format!("CPUs {}", cpulist(naive))
    };
    let mut out = Vec::new();
    // CPUs that cannot be used at all.
    let mut bad = Vec::new();
    for &c in naive {
        match topo.cpu(c) {
            None => bad.push(format!("CPU {c} does not exist")),
            Some(cpu) if !cpu.online => bad.push(format!("CPU {c} is offline")),
            Some(cpu) if !cpu.allowed => bad.push(format!(
                "CPU {c} is outside this process's affinity mask or cpuset"
            )),
            Some(_) if !pus.iter().any(|p| p.cpu == c) => {
                bad.push(format!("CPU {c} is not on the requested node(s)"))
            }
            _ => {}
        }
    }
    if !bad.is_empty() {
        let shown: Vec<String> = bad.iter().take(4).cloned().collect();
        out.push(format!(
            "{name} would use CPUs the threads cannot run on: {}{}",
            shown.join("; "),
            if bad.len() > 4 {
                format!(" (and {} more)", bad.len() - 4)
            } else {
                String::new()
            }
        ));
        return out;
    }
    let naive_pus: Vec<&Pu> = naive
        .iter()
        .filter_map(|c| pus.iter().find(|p| p.cpu == *c))
        .collect();
    let count = |it: &mut dyn Iterator<Item = Option<i64>>| -> BTreeMap<Option<i64>, usize> {
        let mut m = BTreeMap::new();
        for k in it {
            *m.entry(k).or_insert(0) += 1;
        }
        m
    };
    let naive_pk = count(&mut naive_pus.iter().map(|p| p.package));
    let strat_pk = count(&mut places.iter().map(|p| p.package));
    let naive_nd = count(&mut naive_pus.iter().map(|p| p.node.map(i64::from)));
    let strat_nd = count(&mut places.iter().map(|p| p.node.map(i64::from)));
    let fmt_keys = |m: &BTreeMap<Option<i64>, usize>| {
        m.keys()
            .map(|k| k.map_or("?".into(), |x| x.to_string()))
            .collect::<Vec<_>>()
            .join(",")
    };
    let n = places.len();
    match req.strategy {
        Strategy::Scatter | Strategy::Balanced => {
            if naive_pk.len() < strat_pk.len() {
                out.push(if naive_pk.len() == 1 {
                    format!(
                        "{name} would put all {n} threads on package {}; {} uses {} packages",
                        fmt_keys(&naive_pk),
                        req.strategy.as_str(),
                        strat_pk.len()
                    )
                } else {
                    format!(
                        "{name} would use only {} packages ({}); {} uses {}",
                        naive_pk.len(),
                        fmt_keys(&naive_pk),
                        req.strategy.as_str(),
                        strat_pk.len()
                    )
                });
            } else if naive_nd.len() < strat_nd.len() {
                out.push(format!(
                    "{name} would use only {} node(s) ({}) and their memory bandwidth; {} uses {}",
                    naive_nd.len(),
                    fmt_keys(&naive_nd),
                    req.strategy.as_str(),
                    strat_nd.len()
                ));
            }
            if req.strategy == Strategy::Balanced && out.is_empty() {
                let (lo, hi) = (
                    naive_pk.values().min().copied().unwrap_or(0),
                    naive_pk.values().max().copied().unwrap_or(0),
                );
                let (slo, shi) = (
                    strat_pk.values().min().copied().unwrap_or(0),
                    strat_pk.values().max().copied().unwrap_or(0),
                );
                if hi - lo > shi - slo {
                    out.push(format!(
                        "{name} would load the packages unevenly ({lo} to {hi} threads per package); balanced gives {slo} to {shi}"
                    ));
                }
            }
        }
        Strategy::Compact => {
            if naive_pk.len() > strat_pk.len() {
                out.push(format!(
                    "{name} would spread {n} threads over {} packages ({}); compact keeps them on {} ({}), sharing its caches and memory",
                    naive_pk.len(),
                    fmt_keys(&naive_pk),
                    strat_pk.len(),
                    fmt_keys(&strat_pk)
                ));
            } else if naive_nd.len() > strat_nd.len() {
                out.push(format!(
                    "{name} would spread {n} threads over {} nodes ({}); compact keeps them on {}",
                    naive_nd.len(),
                    fmt_keys(&naive_nd),
                    strat_nd.len()
                ));
            }
        }
    }
    // Cores shared while the strategy shares fewer.
    let shared = |ps: &mut dyn Iterator<Item = [i64; DEPTH]>| {
        let mut seen: BTreeMap<[i64; DEPTH], usize> = BTreeMap::new();
        let mut extra = 0;
        for k in ps {
            let e = seen.entry(k).or_insert(0);
            if *e > 0 {
                extra += 1;
            }
            *e += 1;
        }
        extra
    };
    let naive_shared = shared(&mut naive_pus.iter().map(|p| p.path));
    let strat_shared = shared(
        &mut places
            .iter()
            .filter_map(|pl| pus.iter().find(|p| p.cpu == pl.cpu).map(|p| p.path)),
    );
    if naive_shared > strat_shared {
        // Name the first two naive CPUs on one core.
        let mut example = String::new();
        'outer: for (i, a) in naive_pus.iter().enumerate() {
            for b in &naive_pus[i + 1..] {
                if a.path == b.path {
                    example = format!(
                        " (CPUs {} and {} are hardware threads of one core{})",
                        a.cpu,
                        b.cpu,
                        a.package
                            .map_or(String::new(), |p| format!(" on package {p}"))
                    );
                    break 'outer;
                }
            }
        }
        out.push(format!(
            "{name} would put {} thread(s) on a core another thread already uses{example}, while free cores remain",
            naive_shared
        ));
    }
    // Clusters (arm64): the same package and node count can still put
    // scatter's threads in one cluster, or compact's in several.
    let clusters_of = |ps: &mut dyn Iterator<Item = [i64; DEPTH]>| -> BTreeSet<[i64; 4]> {
        ps.filter(|p| p[3] >= 0)
            .map(|p| [p[0], p[1], p[2], p[3]])
            .collect()
    };
    let naive_cl = clusters_of(&mut naive_pus.iter().map(|p| p.path)).len();
    let strat_cl = clusters_of(
        &mut places
            .iter()
            .filter_map(|pl| pus.iter().find(|p| p.cpu == pl.cpu).map(|p| p.path)),
    )
    .len();
    if out.is_empty() && req.strategy == Strategy::Scatter && naive_cl < strat_cl {
        out.push(format!(
            "{name} would use only {naive_cl} cluster(s), sharing their caches; scatter uses {strat_cl}"
        ));
    }
    if out.is_empty() && req.strategy == Strategy::Compact && naive_cl > strat_cl {
        out.push(format!(
            "{name} would spread {n} threads over {naive_cl} clusters; compact keeps them in {strat_cl}, sharing its caches"
        ));
    }
    if out.is_empty() {
        out.push(format!(
            "{name} differ from the {} choice only in which equivalent CPUs are used",
            req.strategy.as_str()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::testing::{build, CpuSpec};

    /// A machine from (cpu, package, core, node); CPUs sharing a package and
    /// core are SMT siblings.
    pub(crate) fn machine(cpus: &[(u32, i64, i64, u32)]) -> Topology {
        let specs: Vec<CpuSpec> = cpus
            .iter()
            .map(|&(os, pkg, core, node)| CpuSpec::new(os, pkg, core, node))
            .collect();
        build("/", &specs, &[], None)
    }

    /// The RWTH Aachen blog's Sun box: CPUs 0-3 package 0, 4-7 package 1, 8-15 siblings.
    fn sun() -> Topology {
        let mut c = Vec::new();
        for os in 0..16u32 {
            let pkg = ((os % 8) / 4) as i64;
            c.push((os, pkg, (os % 4) as i64, pkg as u32));
        }
        machine(&c)
    }

    /// The RWTH Aachen blog's HP box: even CPUs package 1, odd package 0.
    fn hp() -> Topology {
        let mut c = Vec::new();
        let cores = [0, 0, 2, 2, 1, 1, 3, 3];
        for os in 0..16u32 {
            let pkg = if os % 2 == 0 { 1 } else { 0 };
            c.push((os, pkg, cores[(os % 8) as usize], pkg as u32));
        }
        machine(&c)
    }

    fn req(n: usize, s: Strategy, smt: Smt) -> Request {
        Request {
            threads: n,
            strategy: s,
            smt,
            nodes: None,
        }
    }

    #[test]
    fn scatter_matches_the_rwth_blog_on_both_boxes() {
        let b = bind(&sun(), &req(2, Strategy::Scatter, Smt::Avoid)).unwrap();
        assert_eq!(b.cpus(), vec![0, 4]);
        let b = bind(&hp(), &req(2, Strategy::Scatter, Smt::Avoid)).unwrap();
        assert_eq!(b.cpus(), vec![1, 0]);
        // Naive 0,1 on the Sun box is one package.
        let b = bind(&sun(), &req(2, Strategy::Scatter, Smt::Avoid)).unwrap();
        assert!(b.naive_problems[0].contains("all 2 threads on package 0"));
    }

    #[test]
    fn compact_fills_a_package_and_warns_about_round_robin_numbering() {
        let b = bind(&hp(), &req(4, Strategy::Compact, Smt::Avoid)).unwrap();
        assert_eq!(b.packages(), vec![0]);
        assert!(b.naive_problems[0].contains("spread 4 threads over 2 packages"));
        let b = bind(&sun(), &req(2, Strategy::Compact, Smt::Use)).unwrap();
        assert_eq!(b.cpus(), vec![0, 8], "siblings side by side with --smt use");
    }

    #[test]
    fn smt_avoid_falls_back_with_a_warning() {
        let b = bind(&sun(), &req(10, Strategy::Scatter, Smt::Avoid)).unwrap();
        assert_eq!(b.places.len(), 10);
        assert!(b.warnings[0].contains("only 8 cores"));
        let first8: BTreeSet<[i64; 2]> = b.places[..8]
            .iter()
            .map(|p| [p.package.unwrap(), p.core.unwrap()])
            .collect();
        assert_eq!(first8.len(), 8, "all cores before any sibling");
    }

    #[test]
    fn balanced_gives_contiguous_even_blocks() {
        let b = bind(&sun(), &req(4, Strategy::Balanced, Smt::Avoid)).unwrap();
        assert_eq!(b.cpus(), vec![0, 1, 4, 5]);
        let b = bind(&sun(), &req(12, Strategy::Balanced, Smt::Use)).unwrap();
        let per_pkg: Vec<usize> = [0, 1]
            .iter()
            .map(|&k| b.places.iter().filter(|p| p.package == Some(k)).count())
            .collect();
        assert_eq!(per_pkg, vec![6, 6]);
    }

    #[test]
    fn errors_name_the_value() {
        assert_eq!(
            bind(&sun(), &req(0, Strategy::Scatter, Smt::Use)),
            Err(BindError::ZeroThreads)
        );
        let e = bind(&sun(), &req(17, Strategy::Scatter, Smt::Use)).unwrap_err();
        assert!(e.to_string().contains("--threads 17: only 16 CPUs"));
        let mut r = req(1, Strategy::Scatter, Smt::Use);
        r.nodes = Some(vec![5]);
        assert!(bind(&sun(), &r)
            .unwrap_err()
            .to_string()
            .contains("node 5 does not exist"));
    }

    #[test]
    fn cpulist_compresses_ranges() {
        assert_eq!(cpulist(&[3, 0, 1, 2, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(cpulist(&[]), "");
    }
}
