//! What `taskset -c 0-(N-1)`, the first N CPU numbers, would get wrong
//! compared with the strategy: CPUs it cannot use, packages, nodes, cores
//! and caches it crowds or spreads, in words.

use super::tree::{Pu, DEPTH};
use super::{cpulist, Place, Request, Strategy};
use crate::topology::Topology;
use std::collections::{BTreeMap, BTreeSet};

/// What is wrong with `taskset -c 0-(N-1)` compared with the strategy.
pub(super) fn naive_problems(
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
