//! The terminal picture's big tables: processors, placement on packages,
//! caches, nodes, HMAT, and the CPUs this process may not use.

use super::*;

pub(super) fn processor_table(online: &[&Cpu]) -> Table {
    let has_die = online
        .iter()
        .filter_map(|c| c.die)
        .collect::<BTreeSet<_>>()
        .len()
        > 1;
    let mut headers = vec!["processor", "thread", "core", "package"];
    if has_die {
        headers.push("die");
    }
    headers.extend(["node", "allowed"]);
    let folded = online.len() > FOLD_ABOVE;
    let title = if folded {
        format!(
            "Processors ({} online, folded: one row per node and thread)",
            online.len()
        )
    } else {
        "Processors".to_string()
    };
    let mut tab = Table::new(headers).with_title(title);
    if !folded {
        for c in online {
            let mut r = vec![
                c.os_index.to_string(),
                thread_of(c).to_string(),
                opt(c.core),
                opt(c.package),
            ];
            if has_die {
                r.push(opt(c.die));
            }
            r.push(opt(c.node));
            r.push(if c.allowed { "yes" } else { "no" }.into());
            tab.push(r);
        }
        return tab;
    }
    // Folded: group by (node, thread) in order of first appearance, which
    // keeps round-robin machines to a handful of rows.
    let mut order = Vec::new();
    let mut groups: BTreeMap<(Option<u32>, usize), Vec<&Cpu>> = BTreeMap::new();
    for c in online {
        let k = (c.node, thread_of(c));
        groups
            .entry(k)
            .or_insert_with(|| {
                order.push(k);
                Vec::new()
            })
            .push(c);
    }
    for k in order {
        let g = &groups[&k];
        let ids = |f: &dyn Fn(&Cpu) -> Option<i64>| -> String {
            let v: BTreeSet<i64> = g.iter().filter_map(|c| f(c)).collect();
            format_ids(&v.into_iter().collect::<Vec<_>>())
        };
        let cpus: Vec<u32> = g.iter().map(|c| c.os_index).collect();
        let allowed = g.iter().filter(|c| c.allowed).count();
        let mut r = vec![
            format_compact(&cpus),
            k.1.to_string(),
            ids(&|c| c.core),
            ids(&|c| c.package),
        ];
        if has_die {
            r.push(ids(&|c| c.die));
        }
        r.push(opt(k.0));
        r.push(if allowed == g.len() {
            "yes".into()
        } else if allowed == 0 {
            "no".into()
        } else {
            format!("{allowed} of {}", g.len())
        });
        tab.push(r);
    }
    tab
}

/// The RWTH Aachen blog's "placement on packages": each package's cores and, per core,
/// its SMT threads in parentheses.
pub(super) fn placement_table(t: &Topology, pk: &[PackageSummary]) -> Table {
    let mut tab = Table::new([
        "package",
        "cores",
        "core ids",
        "processors (per core)",
        "nodes",
    ])
    .with_title("Placement on packages")
    .with_align(vec![
        Align::Left,
        Align::Right,
        Align::Left,
        Align::Left,
        Align::Left,
    ]);
    for p in pk {
        let mut seen = BTreeSet::new();
        let mut groups = Vec::new();
        let mut core_ids = Vec::new();
        for &c in &p.cpus {
            let Some(cpu) = t.cpu(c) else { continue };
            if seen.insert(t.core_key(cpu)) {
                groups.push(cpu.smt_siblings.clone());
                if let Some(id) = cpu.core {
                    core_ids.push(id);
                }
            }
        }
        let procs = if groups.iter().all(|g| g.len() <= 1) {
            format_compact(&p.cpus)
        } else {
            fold_groups(&groups, 8)
        };
        let mut sorted_ids = core_ids.clone();
        sorted_ids.sort_unstable();
        sorted_ids.dedup();
        // The key, and the firmware's id beside it where that is not the
        // key (-1, missing or repeated ids: see `topology::packages`).
        let name = match (p.id, p.os_index) {
            (Some(k), Some(f)) if k == f => k.to_string(),
            (k, Some(f)) => format!("{} (firmware id {f})", opt(k)),
            (k, None) => format!("{} (no firmware id)", opt(k)),
        };
        tab.push([
            name,
            p.cores.to_string(),
            format_ids(&sorted_ids),
            procs,
            format_list(&p.nodes),
        ]);
    }
    tab
}

/// `(0,8)(1,9)...` with at most `max` groups shown.
pub(super) fn fold_groups(groups: &[Vec<u32>], max: usize) -> String {
    let mut s: String = groups
        .iter()
        .take(max)
        .map(|g| {
            format!(
                "({})",
                g.iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            )
        })
        .collect();
    if groups.len() > max {
        s.push_str(&format!("... {} groups", groups.len()));
    }
    s
}

/// The RWTH Aachen blog's "cache sharing": one row per (level, type), its size, how many
/// instances, and who shares one.
pub(super) fn cache_table(t: &Topology, pk: &[PackageSummary]) -> Table {
    let mut tab = Table::new([
        "cache",
        "size",
        "line",
        "instances",
        "shared by",
        "processors",
    ])
    .with_title("Cache sharing")
    .with_align(vec![
        Align::Left,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Left,
        Align::Left,
    ]);
    let mut kinds: BTreeMap<(u32, String), Vec<&Cache>> = BTreeMap::new();
    for c in &t.caches {
        kinds.entry((c.level, c.kind.clone())).or_default().push(c);
    }
    let core_sets: BTreeSet<Vec<u32>> = t
        .cpus
        .iter()
        .filter(|c| c.online)
        .map(|c| c.smt_siblings.clone())
        .collect();
    let pkg_sets: BTreeSet<Vec<u32>> = pk.iter().map(|p| p.cpus.clone()).collect();
    let node_sets: BTreeSet<Vec<u32>> = t
        .nodes
        .iter()
        .filter(|n| !n.cpus.is_empty())
        .map(|n| n.cpus.clone())
        .collect();
    for ((level, kind), list) in kinds {
        let name = format!(
            "L{level}{}",
            match kind.as_str() {
                "Data" => "d",
                "Instruction" => "i",
                _ => "",
            }
        );
        let sizes: BTreeSet<u64> = list.iter().filter_map(|c| c.size_bytes).collect();
        let size = match sizes.len() {
            0 => "-".to_string(),
            1 => human_bytes(*sizes.iter().next().unwrap_or(&0)),
            _ => sizes
                .iter()
                .map(|&s| human_bytes(s))
                .collect::<Vec<_>>()
                .join("/"),
        };
        let line = opt(list.iter().find_map(|c| c.line_size));
        let shared = if list.iter().all(|c| core_sets.contains(&c.cpus)) {
            "one core".to_string()
        } else if list.iter().all(|c| pkg_sets.contains(&c.cpus)) {
            "one package".to_string()
        } else if list.iter().all(|c| node_sets.contains(&c.cpus)) {
            "one node".to_string()
        } else {
            let n: BTreeSet<usize> = list.iter().map(|c| c.cpus.len()).collect();
            format!(
                "{} CPUs",
                n.iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join("/")
            )
        };
        let groups: Vec<Vec<u32>> = list.iter().map(|c| c.cpus.clone()).collect();
        let procs = if groups.iter().all(|g| g.len() > 4) {
            let shown: Vec<String> = groups.iter().take(4).map(|g| group(g)).collect();
            let more = if groups.len() > 4 {
                format!("... {} instances", groups.len())
            } else {
                String::new()
            };
            format!("{}{more}", shown.join(""))
        } else {
            fold_groups(&groups, 8)
        };
        tab.push([name, size, line, list.len().to_string(), shared, procs]);
    }
    tab
}

pub(super) fn node_table(t: &Topology) -> Table {
    let mut tab = Table::new(["node", "CPUs", "memory", "free", "huge pages", "allowed"])
        .with_title("NUMA nodes")
        .with_align(vec![
            Align::Left,
            Align::Left,
            Align::Right,
            Align::Right,
            Align::Left,
            Align::Left,
        ]);
    for n in &t.nodes {
        let hp: Vec<String> = n
            .hugepages
            .iter()
            .filter(|h| h.total > 0)
            .map(|h| {
                format!(
                    "{}x{} ({} free)",
                    h.total,
                    human_bytes(h.size_bytes),
                    h.free
                )
            })
            .collect();
        tab.push([
            n.os_index.to_string(),
            if n.cpus.is_empty() {
                "none (memory only)".to_string()
            } else {
                format_compact(&n.cpus)
            },
            human_bytes(n.memory_bytes),
            human_bytes(n.free_bytes),
            if hp.is_empty() {
                "-".into()
            } else {
                hp.join(", ")
            },
            if n.allowed { "yes" } else { "no" }.into(),
        ]);
    }
    tab
}

pub(super) fn hmat_table(t: &Topology) -> Table {
    let mut tab = Table::new([
        "memory node",
        "class",
        "initiators",
        "read lat ns",
        "write lat ns",
        "read MB/s",
        "write MB/s",
    ])
    .with_title("HMAT (firmware-reported access attributes; - = not given)");
    for h in &t.hmat {
        tab.push([
            h.node.to_string(),
            if h.access_class == 1 {
                "1 (CPU)".to_string()
            } else {
                h.access_class.to_string()
            },
            format_list(&h.initiators),
            opt(h.read_latency_ns),
            opt(h.write_latency_ns),
            opt(h.read_bandwidth_mbps),
            opt(h.write_bandwidth_mbps),
        ]);
    }
    tab
}

pub(super) fn not_allowed(t: &Topology, online: &[&Cpu]) -> String {
    let cpus: Vec<u32> = online
        .iter()
        .filter(|c| !c.allowed)
        .map(|c| c.os_index)
        .collect();
    let nodes: Vec<u32> = t
        .nodes
        .iter()
        .filter(|n| !n.allowed)
        .map(|n| n.os_index)
        .collect();
    let from = if t.allowed.sources.is_empty() {
        "no restriction found".to_string()
    } else {
        t.allowed.sources.join(", ")
    };
    if cpus.is_empty() && nodes.is_empty() {
        return format!("Allowed: every online CPU and node ({from})\n");
    }
    let mut s = format!("Not allowed for this process ({from}):\n");
    if !cpus.is_empty() {
        s.push_str(&format!("  CPUs  {}\n", format_list(&cpus)));
    }
    if !nodes.is_empty() {
        s.push_str(&format!("  nodes {}\n", format_list(&nodes)));
    }
    s
}
