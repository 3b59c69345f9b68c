//! Reading Linux sysfs and procfs below a root path into the `Topology` model.
//!
//! Every file of the machine's description is opened through `root` (`fs::Fs`
//! is the only thing that touches the file system), so a dump of
//! another machine reads like the live one, the way hwloc's `HWLOC_FSROOT` does.
//!
//! What is read, and the fallbacks (each fallback leaves a line in
//! `Topology.warnings` unless it is the kernel's normal behaviour):
//! * CPUs: `cpu/possible` (else the `cpuN` folders), `cpu/online` (else each
//!   `cpuN/online`, a missing one meaning online, as for cpu0 on most kernels).
//!   Offline CPUs are kept with `online: false` and no ids: their `topology`
//!   folder is gone.
//! * ids from `cpuN/topology`; SMT siblings from `core_cpus_list` /
//!   `thread_siblings_list` (else the hex masks, else equal core ids), kept
//!   only where the core id matches (AMD compute units share the mask).
//!   Packages from the package masks, ids only as labels: see `packages`.
//! * nodes: `node/online` (else the `nodeN` folders); a node's CPUs from
//!   `cpulist`, else the hex `cpumap`; a kernel without `node/` is read as one
//!   node holding every CPU and `/proc/meminfo`.
//! * the SLIT from `nodeN/distance`: one value per online node. A row with one
//!   value per *possible* node (seen on dumps where a node went offline) is cut
//!   down to the online columns; any other length is an error.
//! * caches, HMAT, memory tiers, PCI, THP: see `caches`, `extras`.
//! * what the process may use: see `cgroup`.
//!
//! Garbage in a file that decides the shape of the machine (CPU and node lists,
//! ids, distances) is an error naming the file; garbage in a descriptive file
//! (a cache size, a PCI class) is a warning and the item is left out. An
//! empty or unreadable file is never an error: it reads as missing, with a
//! warning and hwloc's fallback (an empty `cpuN/online` means online, an
//! empty id is unknown, an empty `distance` means no SLIT, an empty cache
//! `size` is an unknown size), because hwloc's dumps and real machines both
//! have such files.
//! * nodes whose CPU lists overlap: see `overlaps` (hwloc's rule).

use super::fs::{first_set, Fs, TopologyError, CPU_DIR};
use super::nodes::read_nodes;
use super::{Cpu, Topology};
use std::collections::BTreeSet;
use std::path::Path;

/// Read the topology of the machine whose sysfs/procfs live below `root`.
pub fn read(root: &Path) -> Result<Topology, TopologyError> {
    if !root.is_dir() {
        return Err(TopologyError::NoRoot(root.to_path_buf()));
    }
    let fs = Fs::new(root);
    if !fs.is_dir(CPU_DIR) {
        return Err(TopologyError::NotSysfs(root.to_path_buf()));
    }
    let live = is_live_root(root);
    let mut warnings = Vec::new();

    let mut cpus = read_cpus(&fs, &mut warnings)?;
    let online: Vec<u32> = cpus
        .iter()
        .filter(|c| c.online)
        .map(|c| c.os_index)
        .collect();
    let (mut nodes, distances) = read_nodes(&fs, &online, &mut warnings)?;
    // `cpus` is ascending by os_index, so a binary search finds each CPU.
    for node in &nodes {
        for &c in &node.cpus {
            if let Ok(k) = cpus.binary_search_by_key(&c, |x| x.os_index) {
                cpus[k].node = Some(node.os_index);
            }
        }
    }
    let unplaced: Vec<u32> = cpus
        .iter()
        .filter(|c| c.online && c.node.is_none())
        .map(|c| c.os_index)
        .collect();
    if !unplaced.is_empty() {
        warnings.push(format!(
            "online CPUs {} are in no online node's CPU list (is their node offline?); they are shown without a node",
            super::cpulist::format_list(&unplaced)
        ));
    }

    let caches = super::caches::read_caches(&fs, &online, &mut warnings)?;
    let node_ids: Vec<u32> = nodes.iter().map(|n| n.os_index).collect();
    let memory_side_caches = super::extras::read_memory_side_caches(&fs, &node_ids, &mut warnings)?;
    let cpu_model = super::extras::read_cpu_model(&fs)?;
    let hmat = super::extras::read_hmat(&fs, &node_ids, &mut warnings)?;
    let memory_tiers = super::extras::read_memory_tiers(&fs, &mut warnings)?;
    let pci_devices = super::extras::read_pci(&fs, &mut warnings)?;
    let thp_mode = super::extras::read_thp(&fs)?;

    let allowed = super::cgroup::read_allowed(&fs, live, &online, &node_ids, &mut warnings)?;
    for cpu in cpus.iter_mut() {
        cpu.allowed = cpu.online && allowed.cpus.binary_search(&cpu.os_index).is_ok();
    }
    for node in nodes.iter_mut() {
        node.allowed = allowed.nodes.binary_search(&node.os_index).is_ok();
    }

    let numbering = super::numbering::classify(&cpus);
    warnings.extend(fs.take_notes());
    Ok(Topology {
        root: root.to_path_buf(),
        cpus,
        nodes,
        distances,
        caches,
        memory_side_caches,
        cpu_model,
        hmat,
        memory_tiers,
        pci_devices,
        thp_mode,
        allowed,
        numbering,
        warnings,
    })
}

/// True when `root` is this machine's `/`: only then are the process's own
/// affinity mask and `/proc/self` about the machine being described.
fn is_live_root(root: &Path) -> bool {
    root.canonicalize()
        .map(|p| p == Path::new("/"))
        .unwrap_or(false)
}

fn read_cpus(fs: &Fs, warnings: &mut Vec<String>) -> Result<Vec<Cpu>, TopologyError> {
    let dirs: Vec<u32> = fs.numbered(CPU_DIR, "cpu");
    let possible_file = fs.list_opt(&format!("{CPU_DIR}/possible"))?;
    let mut possible: BTreeSet<u32> = dirs.iter().copied().collect();
    if let Some(p) = &possible_file {
        possible.extend(p.iter().copied());
    }

    // Online: the global file when there is one; otherwise the per-CPU flag.
    // An empty global file cannot be right (we are running on some CPU);
    // the per-CPU flags are the better witness then.
    let online_file = fs
        .list_opt(&format!("{CPU_DIR}/online"))?
        .filter(|l| !l.is_empty() || dirs.is_empty());
    let online: BTreeSet<u32> = match online_file {
        Some(list) => {
            let dir_set: BTreeSet<u32> = dirs.iter().copied().collect();
            let missing: Vec<u32> = list
                .iter()
                .copied()
                .filter(|c| !dir_set.contains(c))
                .collect();
            if !missing.is_empty() && !dir_set.is_empty() {
                // A live kernel always has the folder; dumps trimmed by hand
                // sometimes do not. Without the folder there is nothing to say
                // about the CPU, so it is treated as absent.
                warnings.push(format!(
                    "{}: lists CPUs {} that have no cpuN folder; they are left out",
                    fs.path(&format!("{CPU_DIR}/online")).display(),
                    super::cpulist::format_list(&missing)
                ));
            }
            list.into_iter().filter(|c| dir_set.contains(c)).collect()
        }
        None => {
            let mut on = BTreeSet::new();
            for &c in &dirs {
                let rel = format!("{CPU_DIR}/cpu{c}/online");
                // Missing (cpu0 on most kernels) or empty: online, as hwloc
                // reads it.
                let flag = match fs.attr_opt(&rel, "the CPU is read as online")? {
                    None => true,
                    Some(s) => match s.as_str() {
                        "1" => true,
                        "0" => false,
                        other => return Err(fs.malformed(&rel, format!("`{other}` is not 0 or 1"))),
                    },
                };
                if flag {
                    on.insert(c);
                }
            }
            on
        }
    };
    if online.is_empty() {
        return Err(fs.malformed(CPU_DIR, "no online CPU found"));
    }

    let mut cpus = Vec::with_capacity(possible.len());
    for &c in &possible {
        let is_online = online.contains(&c);
        let t = format!("{CPU_DIR}/cpu{c}/topology");
        let has_topo = is_online && fs.is_dir(&t);
        let (package, die, cluster, core) = if has_topo {
            (
                fs.int_opt(&format!("{t}/physical_package_id"))?,
                fs.int_opt(&format!("{t}/die_id"))?,
                // -1 (arm64) and 65535 (x86's BAD_APICID) mean "no cluster
                // known", not a cluster every CPU shares.
                fs.int_opt(&format!("{t}/cluster_id"))?
                    .filter(|&v| v != -1 && v != 0xffff),
                fs.int_opt(&format!("{t}/core_id"))?,
            )
        } else {
            (None, None, None, None)
        };
        // The cluster's members: only CPUs that are online mean anything
        // to binding; a list that does not hold the CPU itself is ignored.
        let cluster_cpus = if has_topo && cluster.is_some() {
            fs.list_opt(&format!("{t}/cluster_cpus_list"))?
                .unwrap_or_default()
                .into_iter()
                .filter(|x| online.contains(x))
                .collect::<Vec<u32>>()
        } else {
            Vec::new()
        };
        let cluster_cpus = if cluster_cpus.contains(&c) {
            cluster_cpus
        } else {
            Vec::new()
        };
        let capacity = if is_online {
            fs.int_opt(&format!("{CPU_DIR}/cpu{c}/cpu_capacity"))?
                .and_then(|v| u32::try_from(v).ok())
                .filter(|&v| v > 0)
        } else {
            None
        };
        cpus.push(Cpu {
            os_index: c,
            online: is_online,
            allowed: false,
            package,
            package_id: package,
            die,
            cluster,
            cluster_cpus,
            capacity,
            core,
            node: None,
            smt_siblings: Vec::new(),
        });
    }

    fill_siblings(fs, &mut cpus, &online, warnings)?;
    super::packages::assign(fs, &mut cpus, &online, warnings)?;
    Ok(cpus)
}

/// SMT siblings come from the kernel's per-core masks, as hwloc reads them:
/// core ids alone are not enough (they repeat across packages and dies, and
/// some kernels number them oddly). Without masks, equal (package, die, core)
/// ids are the fallback.
///
/// A mask member with another core id is not an SMT thread of this core: AMD
/// family 15h kernels put both cores of a compute unit in `thread_siblings`
/// while giving them distinct `core_id`s (hwloc makes the same call).
fn fill_siblings(
    fs: &Fs,
    cpus: &mut [Cpu],
    online: &BTreeSet<u32>,
    warnings: &mut Vec<String>,
) -> Result<(), TopologyError> {
    let mut from_ids = Vec::new();
    for i in 0..cpus.len() {
        if !cpus[i].online {
            continue;
        }
        let c = cpus[i].os_index;
        let t = format!("{CPU_DIR}/cpu{c}/topology");
        let set = first_set(
            fs,
            &t,
            &[
                "core_cpus_list",
                "thread_siblings_list",
                "core_cpus",
                "thread_siblings",
            ],
        )?;
        match set {
            Some(s) => {
                let me = (cpus[i].package, cpus[i].die, cpus[i].core);
                let same_core = |x: u32| {
                    me.2.is_none()
                        || cpus
                            .binary_search_by_key(&x, |o| o.os_index)
                            .is_ok_and(|k| (cpus[k].package, cpus[k].die, cpus[k].core) == me)
                };
                let mut sib: Vec<u32> = s
                    .into_iter()
                    .filter(|&x| online.contains(&x) && same_core(x))
                    .collect();
                if !sib.contains(&c) {
                    sib.push(c);
                    sib.sort_unstable();
                }
                cpus[i].smt_siblings = sib;
            }
            None => from_ids.push(i),
        }
    }
    if !from_ids.is_empty() {
        let with_ids = from_ids.iter().any(|&i| cpus[i].core.is_some());
        if with_ids {
            warnings.push(format!(
                "no thread_siblings for CPUs {}; SMT siblings taken from equal core ids",
                super::cpulist::format_list(
                    &from_ids
                        .iter()
                        .map(|&i| cpus[i].os_index)
                        .collect::<Vec<_>>()
                )
            ));
        }
        for &i in &from_ids {
            let me = &cpus[i];
            let sib: Vec<u32> = if me.core.is_some() {
                cpus.iter()
                    .filter(|o| {
                        o.online && o.package == me.package && o.die == me.die && o.core == me.core
                    })
                    .map(|o| o.os_index)
                    .collect()
            } else {
                vec![me.os_index]
            };
            cpus[i].smt_siblings = sib;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_damaged_id_file_is_a_one_line_error() {
        // Found by the sysfs_tree fuzz target: an id file with a newline and
        // control bytes in it, quoted as it was, broke the error into lines.
        let root = std::env::temp_dir().join(format!("numaprobe-id-{}", std::process::id()));
        let dir = root.join("sys/devices/system/cpu/cpu0/topology");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("core_id"), "0\n=\u{b}\u{1c} x\n00000008").unwrap();
        let fs = Fs::new(&root);
        let e = fs
            .int_opt("sys/devices/system/cpu/cpu0/topology/core_id")
            .unwrap_err()
            .to_string();
        std::fs::remove_dir_all(&root).unwrap();
        assert!(!e.chars().any(char::is_control), "{e:?}");
        assert!(
            e.contains(r"`0\n=\u{b}\u{1c} x\n00000008` is not an integer"),
            "{e}"
        );
        let long = fs.malformed("f", "x".repeat(5000)).to_string();
        assert!(long.len() < 600, "{} bytes", long.len());
    }
}
