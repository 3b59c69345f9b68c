//! Packages from the kernel's package masks, built the way hwloc builds them,
//! with `physical_package_id` kept as a label only.
//!
//! Why not the ids: they are -1 on every CPU on some machines (POWER, s390,
//! old Itanium kernels), repeated across packages on others (Itanium; a
//! Cluster-on-Die kernel that gives each half-package its own
//! `core_siblings` under one id), and edited dumps contradict them. The
//! masks (`package_cpus`, or `core_siblings` on older kernels; mask form
//! first) say which CPUs share a package in every one of these cases.
//!
//! hwloc's rule, followed here: a package exists where the lowest online CPU
//! of a CPU's mask is that CPU itself (so each package is made once, by its
//! first CPU); a mask that partially overlaps a package already made is a
//! contradiction and is dropped. A CPU that no package claims has no package
//! (hwloc leaves it directly under the machine). Without any mask the ids
//! are the only witness: CPUs with the same id >= 0 share a package.
//!
//! `Cpu.package` is then a key unique per package: the firmware id where the
//! packages' ids (read on each package's first CPU, as hwloc does) are all
//! known (not -1) and distinct, else each package's position in order of its
//! lowest CPU, for every package, so keys never mix the two schemes.

use super::fs::{first_set, Fs, TopologyError, CPU_DIR};
use super::Cpu;
use std::collections::{BTreeMap, BTreeSet};

pub(crate) fn assign(
    fs: &Fs,
    cpus: &mut [Cpu],
    online: &BTreeSet<u32>,
    warnings: &mut Vec<String>,
) -> Result<(), TopologyError> {
    let mut masks: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for c in cpus.iter().filter(|c| c.online) {
        let t = format!("{CPU_DIR}/cpu{}/topology", c.os_index);
        let set = first_set(
            fs,
            &t,
            // The mask first, as hwloc reads it: the kernel writes both
            // forms from one set, and where an edited dump disagrees
            // (40intel64-4n10c+pci-conflicts) the mask is what was meant.
            &[
                "package_cpus",
                "core_siblings",
                "package_cpus_list",
                "core_siblings_list",
            ],
        )?;
        if let Some(m) = set {
            let m: Vec<u32> = m.into_iter().filter(|x| online.contains(x)).collect();
            if !m.is_empty() {
                masks.insert(c.os_index, m);
            }
        }
    }

    // Each package as (its CPUs, the firmware id of its first CPU).
    let mut made: Vec<(Vec<u32>, Option<i64>)> = Vec::new();
    if masks.is_empty() {
        let mut by_id: BTreeMap<i64, Vec<u32>> = BTreeMap::new();
        for c in cpus.iter().filter(|c| c.online) {
            if let Some(id) = c.package_id.filter(|&v| v >= 0) {
                by_id.entry(id).or_default().push(c.os_index);
            }
        }
        made = by_id.into_iter().map(|(id, v)| (v, Some(id))).collect();
        made.sort_by_key(|(v, _)| v.first().copied());
    } else {
        let mut dropped: Vec<u32> = Vec::new();
        for (&c, m) in &masks {
            if m.first() != Some(&c) {
                continue;
            }
            let set: BTreeSet<u32> = m.iter().copied().collect();
            let conflicts = made.iter().any(|(p, _)| {
                let inter = p.iter().filter(|x| set.contains(x)).count();
                inter > 0 && inter != p.len().min(set.len())
            });
            let same = made.iter().any(|(p, _)| p == m);
            if conflicts {
                dropped.push(c);
            } else if !same {
                let id = cpus
                    .binary_search_by_key(&c, |x| x.os_index)
                    .ok()
                    .and_then(|k| cpus[k].package_id);
                made.push((m.clone(), id));
            }
        }
        if !dropped.is_empty() {
            warnings.push(format!(
                "package masks of CPUs {} overlap packages already read; they are left out (as hwloc does)",
                super::cpulist::format_list(&dropped)
            ));
        }
    }

    let ids: Vec<Option<i64>> = made.iter().map(|(_, id)| *id).collect();
    let distinct: BTreeSet<i64> = ids.iter().flatten().copied().collect();
    let use_ids = ids.iter().all(|i| i.is_some_and(|v| v >= 0)) && distinct.len() == ids.len();
    if !use_ids && !made.is_empty() {
        let why = if ids.iter().all(|i| *i == Some(-1) || i.is_none()) {
            "unknown (-1 or missing) on every package".to_string()
        } else if ids.iter().any(|i| i.is_none_or(|v| v < 0)) {
            "unknown (-1 or missing) on some packages".to_string()
        } else {
            format!(
                "repeated across packages ({} packages, ids {})",
                ids.len(),
                ids.iter()
                    .flatten()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            )
        };
        warnings.push(format!(
            "physical_package_id is {why}; the {} packages the kernel's package masks describe are numbered 0-{} in order of their lowest CPU",
            made.len(),
            made.len() - 1
        ));
    }
    let mut key_of: BTreeMap<u32, i64> = BTreeMap::new();
    for (i, (set, id)) in made.iter().enumerate() {
        let key = if use_ids { id.unwrap_or(-1) } else { i as i64 };
        for &c in set {
            key_of.entry(c).or_insert(key);
        }
    }

    // A CPU whose own id differs from its package's first CPU's id: the ids
    // and the masks disagree; the masks win, and it is said once.
    let mut disagree: Vec<u32> = Vec::new();
    let mut unclaimed: Vec<u32> = Vec::new();
    let first_id: BTreeMap<u32, Option<i64>> = made
        .iter()
        .flat_map(|(set, id)| set.iter().map(move |&c| (c, *id)))
        .collect();
    for c in cpus.iter_mut() {
        if !c.online {
            c.package = None;
            continue;
        }
        c.package = key_of.get(&c.os_index).copied();
        match first_id.get(&c.os_index) {
            None if !made.is_empty() => unclaimed.push(c.os_index),
            Some(id) if *id != c.package_id => disagree.push(c.os_index),
            _ => {}
        }
    }
    if !disagree.is_empty() {
        warnings.push(format!(
            "CPUs {}: physical_package_id differs from the id of the first CPU of their package mask; the masks decide the packages",
            super::cpulist::format_list(&disagree)
        ));
    }
    if !unclaimed.is_empty() {
        warnings.push(format!(
            "CPUs {} are in no package: their package masks contradict the others (hwloc leaves them outside every package too)",
            super::cpulist::format_list(&unclaimed)
        ));
    }
    Ok(())
}
