//! Reading the NUMA nodes below a root: `node/online` (else the `nodeN`
//! folders), each node's CPUs, memory (`nodeN/meminfo`, else
//! `/proc/meminfo` for a kernel without `node/`), huge page pools and the
//! SLIT rows (cut down to the online columns); see `sysfs` for the rules.

use super::cpulist::{clean, parse_list};
use super::fs::{Fs, TopologyError, NODE_DIR};
use super::{Distances, HugePages, NumaNode};
use std::collections::BTreeSet;

pub(super) fn read_nodes(
    fs: &Fs,
    online: &[u32],
    warnings: &mut Vec<String>,
) -> Result<(Vec<NumaNode>, Option<Distances>), TopologyError> {
    if !fs.is_dir(NODE_DIR) {
        // A kernel built without NUMA: one node with everything, memory from
        // /proc/meminfo (hwloc does the same).
        warnings.push(format!(
            "{}: missing; the machine is read as one NUMA node",
            fs.path(NODE_DIR).display()
        ));
        let m = match fs.read_opt("proc/meminfo")? {
            Some(s) => parse_meminfo(&s),
            None => Meminfo::default(),
        };
        warnings.extend(overflow_note(fs, "proc/meminfo", &m));
        let (total, free) = (m.total, m.free);
        return Ok((
            vec![NumaNode {
                os_index: 0,
                cpus: online.to_vec(),
                memory_bytes: total.unwrap_or(0),
                free_bytes: free.unwrap_or(0),
                allowed: false,
                hugepages: Vec::new(),
            }],
            None,
        ));
    }

    let dirs = fs.numbered(NODE_DIR, "node");
    // As for CPUs, an empty `online` says nothing; the folders do.
    let online_file = fs
        .list_opt(&format!("{NODE_DIR}/online"))?
        .filter(|l| !l.is_empty() || dirs.is_empty());
    let ids: Vec<u32> = match online_file {
        Some(list) => {
            let missing: Vec<u32> = list.iter().copied().filter(|n| !dirs.contains(n)).collect();
            if !missing.is_empty() {
                warnings.push(format!(
                    "{}: lists nodes {} that have no nodeN folder; they are left out",
                    fs.path(&format!("{NODE_DIR}/online")).display(),
                    super::cpulist::format_list(&missing)
                ));
            }
            list.into_iter().filter(|n| dirs.contains(n)).collect()
        }
        None => dirs.clone(),
    };
    if ids.is_empty() {
        return Err(fs.malformed(NODE_DIR, "no online NUMA node found"));
    }

    let online_set: BTreeSet<u32> = online.iter().copied().collect();
    let mut listed: Vec<Vec<u32>> = Vec::with_capacity(ids.len());
    for &n in &ids {
        let d = format!("{NODE_DIR}/node{n}");
        let list = fs.list_opt(&format!("{d}/cpulist"))?;
        let map = fs.mask_opt(&format!("{d}/cpumap"))?;
        let on = |v: Vec<u32>| -> Vec<u32> {
            v.into_iter().filter(|c| online_set.contains(c)).collect()
        };
        let all = match (list.map(on), map.map(on)) {
            // An empty list beside a mask naming CPUs: the list file is the
            // one that is wrong (memory-only nodes write an empty list *and*
            // an all-zero mask); the mask is what hwloc reads.
            (Some(l), Some(m)) if l.is_empty() && !m.is_empty() => {
                fs.note(&format!("{d}/cpulist"), "the node's cpumap is used");
                m
            }
            (Some(l), Some(m)) => {
                // Both describe the same set (offline CPUs aside: kernels and
                // edited dumps differ on whether they appear); a difference
                // means one of them was cut short, and there is no telling
                // which CPUs are right.
                if l != m {
                    return Err(fs.malformed(
                        &format!("{d}/cpulist"),
                        format!(
                            "lists CPUs {} but cpumap says {}",
                            super::cpulist::format_list(&l),
                            super::cpulist::format_list(&m)
                        ),
                    ));
                }
                l
            }
            (Some(l), None) => l,
            (None, Some(m)) => m,
            (None, None) => {
                warnings.push(format!(
                    "{}: neither cpulist nor cpumap; the node is read as having no CPU",
                    fs.path(&d).display()
                ));
                Vec::new()
            }
        };
        listed.push(all);
    }
    let keep = super::overlaps::keep_first_listing(&listed);

    let mut nodes = Vec::with_capacity(ids.len());
    let mut dropped: Vec<(u32, u64)> = Vec::new();
    for (k, &n) in ids.iter().enumerate() {
        let d = format!("{NODE_DIR}/node{n}");
        let rel = format!("{d}/meminfo");
        let m = match fs.read_opt(&rel)? {
            Some(s) => parse_meminfo(&s),
            None => Meminfo::default(),
        };
        warnings.extend(overflow_note(fs, &rel, &m));
        let (total, free) = (m.total, m.free);
        if !keep[k] {
            dropped.push((n, total.unwrap_or(0)));
            continue;
        }
        if total.is_none() && !m.overflow.contains(&"MemTotal") {
            warnings.push(format!(
                "{}: no MemTotal; the node's memory is shown as 0",
                fs.path(&format!("{d}/meminfo")).display()
            ));
        }
        let hugepages = read_hugepages(fs, &format!("{d}/hugepages"), warnings)?;
        nodes.push(NumaNode {
            os_index: n,
            cpus: listed[k].clone(),
            memory_bytes: total.unwrap_or(0),
            free_bytes: free.unwrap_or(0),
            allowed: false,
            hugepages,
        });
    }
    if !dropped.is_empty() {
        let gone: Vec<u32> = dropped.iter().map(|d| d.0).collect();
        let bytes = dropped.iter().fold(0u64, |a, d| a.saturating_add(d.1));
        warnings.push(format!(
            "nodes {} list CPUs that a lower-numbered node already lists (firmware that puts every CPU in every node does this); as hwloc does, they are left out with their {} of memory, and the machine is read as {}",
            super::cpulist::format_list(&gone),
            crate::units::format_size(bytes),
            crate::units::plural(nodes.len(), "NUMA node")
        ));
    }
    let kept: Vec<u32> = nodes.iter().map(|n| n.os_index).collect();
    let distances = read_distances(fs, &ids, warnings)?.map(|d| keep_rows(d, &kept));
    Ok((nodes, distances))
}

/// The distance table cut down to the `kept` nodes' rows and columns.
fn keep_rows(d: Distances, kept: &[u32]) -> Distances {
    let at: Vec<usize> = kept
        .iter()
        .filter_map(|k| d.node_ids.iter().position(|n| n == k))
        .collect();
    Distances {
        node_ids: at.iter().map(|&i| d.node_ids[i]).collect(),
        matrix: at
            .iter()
            .map(|&i| at.iter().map(|&j| d.matrix[i][j]).collect())
            .collect(),
    }
}

/// `MemTotal` and `MemFree` in bytes from a node `meminfo` (`Node 0 MemTotal:
/// 123 kB`) or `/proc/meminfo` (`MemTotal: 123 kB`).
/// `MemTotal` and `MemFree` of a meminfo text, in bytes, and the names of
/// those whose kB do not fit a 64-bit byte count (a damaged or forged file:
/// no machine has 16 EiB), left `None` rather than wrapped or cut.
#[derive(Debug, Default, PartialEq, Eq)]
struct Meminfo {
    total: Option<u64>,
    free: Option<u64>,
    overflow: Vec<&'static str>,
}

fn parse_meminfo(s: &str) -> Meminfo {
    let mut m = Meminfo::default();
    for line in s.lines() {
        let mut words = line.split_whitespace();
        let mut key = None;
        let mut value = None;
        for w in words.by_ref() {
            if let Some(k) = w.strip_suffix(':') {
                key = Some(k);
                value = words.next().and_then(|v| v.parse::<u64>().ok());
                break;
            }
        }
        let unit = words.next().unwrap_or("");
        let (slot, name) = match key {
            Some("MemTotal") => (&mut m.total, "MemTotal"),
            Some("MemFree") => (&mut m.free, "MemFree"),
            _ => continue,
        };
        *slot = match value.map(|v| {
            if unit == "kB" {
                v.checked_mul(1024)
            } else {
                Some(v)
            }
        }) {
            Some(None) => {
                m.overflow.push(name);
                None
            }
            Some(b) => b,
            None => None,
        };
    }
    m
}

/// The note for a meminfo whose figures overflow, naming the file.
fn overflow_note(fs: &Fs, rel: &str, m: &Meminfo) -> Option<String> {
    (!m.overflow.is_empty()).then(|| {
        format!(
            "{}: {} larger than a 64-bit byte count (16 EiB); the figure is refused and the node's memory is shown as 0",
            crate::clean::line(&fs.path(rel).display().to_string(), crate::clean::SHOWN_MAX),
            m.overflow.join(" and ")
        )
    })
}

fn read_hugepages(
    fs: &Fs,
    dir: &str,
    warnings: &mut Vec<String>,
) -> Result<Vec<HugePages>, TopologyError> {
    let mut out = Vec::new();
    for name in fs.list_dir(dir) {
        let Some(kb) = name
            .strip_prefix("hugepages-")
            .and_then(|s| s.strip_suffix("kB"))
            .and_then(|s| s.parse::<u64>().ok())
        else {
            continue;
        };
        let num = |file: &str| -> Result<Option<u64>, TopologyError> {
            let rel = format!("{dir}/{name}/{file}");
            Ok(fs
                .read_opt(&rel)?
                .and_then(|s| clean(&s).parse::<u64>().ok()))
        };
        let Some(size_bytes) = kb.checked_mul(1024) else {
            warnings.push(format!(
                "{}: a page size larger than a 64-bit byte count; size left out",
                crate::clean::line(
                    &fs.path(&format!("{dir}/{name}")).display().to_string(),
                    crate::clean::SHOWN_MAX
                )
            ));
            continue;
        };
        match (num("nr_hugepages")?, num("free_hugepages")?) {
            (Some(total), free) => out.push(HugePages {
                size_bytes,
                total,
                free: free.unwrap_or(0),
            }),
            (None, _) => warnings.push(format!(
                "{}: unreadable nr_hugepages; size left out",
                fs.path(&format!("{dir}/{name}")).display()
            )),
        }
    }
    out.sort_by_key(|h| h.size_bytes);
    Ok(out)
}

/// The SLIT as the kernel shows it: `nodeN/distance` has one value per online
/// node, in node order.
fn read_distances(
    fs: &Fs,
    ids: &[u32],
    warnings: &mut Vec<String>,
) -> Result<Option<Distances>, TopologyError> {
    let possible = fs
        .attr_opt(&format!("{NODE_DIR}/possible"), "read as missing")?
        .map(|t| parse_list(&t))
        .transpose()
        .unwrap_or(None);
    let mut matrix = Vec::with_capacity(ids.len());
    for &n in ids {
        let rel = format!("{NODE_DIR}/node{n}/distance");
        let Some(text) = fs.read_opt(&rel)? else {
            warnings.push(format!(
                "{}: missing; no distance table",
                fs.path(&rel).display()
            ));
            return Ok(None);
        };
        if clean(&text).is_empty() {
            warnings.push(format!(
                "{}: empty; no distance table",
                fs.path(&rel).display()
            ));
            return Ok(None);
        }
        let mut row = Vec::new();
        for w in clean(&text).split_whitespace() {
            match w.parse::<u32>() {
                Ok(v) => row.push(v),
                Err(_) => return Err(fs.malformed(&rel, format!("`{w}` is not a distance"))),
            }
        }
        if row.len() != ids.len() {
            // Seen on dumps where a node was taken offline: the row still has
            // one value per possible node. Keep the online nodes' columns.
            let cut = possible.as_ref().and_then(|p| {
                (p.len() == row.len() && ids.iter().all(|i| p.contains(i))).then(|| {
                    ids.iter()
                        .map(|i| row[p.iter().position(|x| x == i).unwrap_or(0)])
                        .collect::<Vec<u32>>()
                })
            });
            match cut {
                Some(r) => {
                    warnings.push(format!(
                        "{}: {} values for {} possible nodes but {} online; kept the online nodes' columns",
                        fs.path(&rel).display(),
                        row.len(),
                        row.len(),
                        ids.len()
                    ));
                    row = r;
                }
                // Longer than the online nodes but not one value per
                // possible node (e.g. `possible` empty or unreadable): the
                // row says more than we can place; no SLIT rather than a
                // guess.
                None if row.len() > ids.len() => {
                    warnings.push(format!(
                        "{}: {} values for {} online nodes, and node/possible does not say which columns are theirs; no distance table",
                        fs.path(&rel).display(),
                        row.len(),
                        ids.len()
                    ));
                    return Ok(None);
                }
                None => {
                    return Err(fs.malformed(
                        &rel,
                        format!(
                            "{} distances for {} online nodes ({})",
                            row.len(),
                            ids.len(),
                            super::cpulist::format_list(ids)
                        ),
                    ))
                }
            }
        }
        matrix.push(row);
    }
    Ok(Some(Distances {
        node_ids: ids.to_vec(),
        matrix,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(m: Meminfo) -> (Option<u64>, Option<u64>) {
        assert!(m.overflow.is_empty(), "{m:?}");
        (m.total, m.free)
    }

    #[test]
    fn meminfo_reads_node_and_proc_forms() {
        let node = "Node 1 MemTotal:       67108864 kB\nNode 1 MemFree:        57913400 kB\n";
        assert_eq!(
            figures(parse_meminfo(node)),
            (Some(67108864 * 1024), Some(57913400 * 1024))
        );
        let proc = "MemTotal:        1000 kB\nMemFree:          500 kB\nBuffers: 1 kB\n";
        assert_eq!(figures(parse_meminfo(proc)), (Some(1024000), Some(512000)));
        assert_eq!(figures(parse_meminfo("garbage")), (None, None));
    }

    /// kB that do not fit in bytes are refused by name, never saturated to
    /// 16 EiB or wrapped to a small figure.
    #[test]
    fn meminfo_figures_past_64_bits_are_refused_by_name() {
        let m = parse_meminfo("Node 0 MemTotal: 18446744073709551615 kB\nNode 0 MemFree: 5 kB\n");
        assert_eq!(m.total, None);
        assert_eq!(m.free, Some(5120));
        assert_eq!(m.overflow, vec!["MemTotal"]);
        let edge = format!(
            "MemTotal: {} kB\nMemFree: {} kB\n",
            u64::MAX / 1024,
            u64::MAX / 1024 + 1
        );
        let m = parse_meminfo(&edge);
        assert_eq!(m.total, Some(u64::MAX / 1024 * 1024));
        assert_eq!(m.overflow, vec!["MemFree"]);
    }
}
