//! `bind` and `core_order`: a strategy's walk over the tree of domains
//! turned into places, the naive choice's problems and the memory nodes.

use super::naive::naive_problems;
use super::tree::{pus_of, Pu, Tree, BALANCED_LEVELS};
use super::{cpulist, BindError, Binding, Place, Request, Smt, Strategy};
use crate::topology::Topology;
use std::collections::BTreeSet;

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
