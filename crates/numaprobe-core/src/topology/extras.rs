//! The descriptive parts of a machine beyond CPUs and nodes: HMAT access
//! attributes, memory-side caches, memory tiers, PCI devices with their
//! node, the THP mode, the CPU model.
//!
//! None of these changes the shape of the machine, so an unreadable value is
//! left out (with a warning where it is worth one) rather than failing the
//! whole read.

use super::cpulist::{clean, parse_list};
use super::fs::{Fs, TopologyError, NODE_DIR};
use super::{HmatAccess, MemorySideCache, MemoryTier, PciDevice};

/// `nodeN/accessK/initiators/`: `nodeM` entries name the initiators, the
/// `{read,write}_{latency,bandwidth}` files the figures. The kernel writes 0
/// when the firmware's HMAT gave no figure, so 0 is read as "unknown".
pub(crate) fn read_hmat(
    fs: &Fs,
    nodes: &[u32],
    warnings: &mut Vec<String>,
) -> Result<Vec<HmatAccess>, TopologyError> {
    let mut out = Vec::new();
    for &n in nodes {
        let nd = format!("{NODE_DIR}/node{n}");
        for class in fs.numbered(&nd, "access") {
            let d = format!("{nd}/access{class}/initiators");
            if !fs.is_dir(&d) {
                continue;
            }
            let initiators = fs.numbered(&d, "node");
            let mut value = |name: &str| -> Result<Option<u64>, TopologyError> {
                let rel = format!("{d}/{name}");
                Ok(match fs.read_opt(&rel)? {
                    None => None,
                    Some(s) => match clean(&s).parse::<u64>() {
                        Ok(0) => None,
                        Ok(v) => Some(v),
                        Err(_) => {
                            warnings.push(format!(
                                "{}: `{}` is not a number; left out",
                                fs.path(&rel).display(),
                                clean(&s)
                            ));
                            None
                        }
                    },
                })
            };
            out.push(HmatAccess {
                node: n,
                access_class: class,
                initiators,
                read_latency_ns: value("read_latency")?,
                write_latency_ns: value("write_latency")?,
                read_bandwidth_mbps: value("read_bandwidth")?,
                write_bandwidth_mbps: value("write_bandwidth")?,
            });
        }
    }
    Ok(out)
}

/// `nodeN/memory_side_cache/indexK/{size,line_size,indexing,write_policy}`
/// (Linux 5.6+, from the HMAT). An empty or unreadable value is unknown; a
/// level without any readable value is still a cache that is there.
pub(crate) fn read_memory_side_caches(
    fs: &Fs,
    nodes: &[u32],
    warnings: &mut Vec<String>,
) -> Result<Vec<MemorySideCache>, TopologyError> {
    let mut out = Vec::new();
    for &n in nodes {
        let dir = format!("{NODE_DIR}/node{n}/memory_side_cache");
        for level in fs.numbered(&dir, "index") {
            let d = format!("{dir}/index{level}");
            let mut num = |name: &str| -> Result<Option<u64>, TopologyError> {
                let rel = format!("{d}/{name}");
                Ok(match fs.attr_opt(&rel, "the value is unknown")? {
                    None => None,
                    Some(s) => match s.parse::<u64>() {
                        Ok(v) => Some(v),
                        Err(_) => {
                            warnings.push(format!(
                                "{}: `{s}` is not a number; read as unknown",
                                fs.path(&rel).display()
                            ));
                            None
                        }
                    },
                })
            };
            let size_bytes = num("size")?.filter(|&v| v > 0);
            let line_size = num("line_size")?.filter(|&v| v > 0);
            // The kernel's enums (include/linux/node.h): indexing 0 direct
            // mapped, 1 indexed, 2 other; write policy 0 write-back, 1
            // write-through, 2 other. Optane memory mode is 0 and 0.
            let indexing = match num("indexing")? {
                Some(0) => "direct-mapped",
                Some(1) => "indexed",
                Some(_) => "other",
                None => "unknown",
            };
            let write_policy = match num("write_policy")? {
                Some(0) => "write-back",
                Some(1) => "write-through",
                Some(_) => "other",
                None => "unknown",
            };
            out.push(MemorySideCache {
                node: n,
                level,
                size_bytes,
                line_size,
                indexing: indexing.to_string(),
                write_policy: write_policy.to_string(),
            });
        }
    }
    Ok(out)
}

/// `model name` lines of `proc/cpuinfo`, as lstopo and likwid-topology show
/// them: the distinct names in order of appearance, joined by ` / ` (a
/// machine mixing two models says so). Arm's cpuinfo has no model name: there
/// the cores are named from their MIDR, read from cpuinfo's `CPU implementer`
/// and `CPU part` or else sysfs's `midr_el1`. None when nothing names them.
pub(crate) fn read_cpu_model(fs: &Fs) -> Result<Option<String>, TopologyError> {
    let text = fs.read_opt("proc/cpuinfo")?.unwrap_or_default();
    if let Some(names) = model_names(&text) {
        return Ok(Some(names));
    }
    let mut midrs = super::midr::midrs_from_cpuinfo(&text);
    if midrs.is_empty() {
        for cpu in fs.numbered("sys/devices/system/cpu", "cpu") {
            let rel = format!("sys/devices/system/cpu/cpu{cpu}/regs/identification/midr_el1");
            if let Some(v) = fs.read_opt(&rel)? {
                let v = v.trim().trim_start_matches("0x");
                if let Ok(raw) = u64::from_str_radix(v, 16) {
                    midrs.push(super::midr::Midr::from_raw(raw));
                }
            }
        }
    }
    Ok(super::midr::names_of(&midrs))
}

fn model_names(text: &str) -> Option<String> {
    let mut names: Vec<String> = Vec::new();
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let v = v.split_whitespace().collect::<Vec<_>>().join(" ");
        if k.trim() == "model name" && !v.is_empty() && !names.contains(&v) {
            names.push(v);
        }
    }
    (!names.is_empty()).then(|| names.join(" / "))
}

const TIER_DIR: &str = "sys/devices/virtual/memory_tiering";

/// `memory_tierN/nodelist` (Linux 6.1+). Lower tier ids are faster memory.
pub(crate) fn read_memory_tiers(
    fs: &Fs,
    warnings: &mut Vec<String>,
) -> Result<Vec<MemoryTier>, TopologyError> {
    let mut out = Vec::new();
    for id in fs.numbered(TIER_DIR, "memory_tier") {
        let rel = format!("{TIER_DIR}/memory_tier{id}/nodelist");
        match fs.read_opt(&rel)? {
            None => {}
            Some(s) => match parse_list(&s) {
                Ok(nodes) => out.push(MemoryTier { id, nodes }),
                Err(p) => warnings.push(format!("{}: {p}; tier left out", fs.path(&rel).display())),
            },
        }
    }
    Ok(out)
}

const PCI_DIR: &str = "sys/bus/pci/devices";

/// Every PCI function with its class and NUMA node. `kind` sorts the ones
/// that matter for placement (GPUs, NICs, NVMe) from the rest.
pub(crate) fn read_pci(
    fs: &Fs,
    warnings: &mut Vec<String>,
) -> Result<Vec<PciDevice>, TopologyError> {
    let mut out = Vec::new();
    let mut bad = 0usize;
    for address in fs.list_dir(PCI_DIR) {
        let d = format!("{PCI_DIR}/{address}");
        let text = |name: &str| -> Option<String> {
            fs.read_opt(&format!("{d}/{name}"))
                .ok()
                .flatten()
                .map(|s| clean(&s).to_string())
        };
        let Some(class) = text("class") else {
            bad += 1;
            continue;
        };
        let Some(code) = u32::from_str_radix(class.trim_start_matches("0x"), 16).ok() else {
            bad += 1;
            continue;
        };
        let numa_node = text("numa_node")
            .and_then(|s| s.parse::<i64>().ok())
            .and_then(|v| u32::try_from(v).ok());
        out.push(PciDevice {
            address,
            kind: pci_kind(code).to_string(),
            class,
            vendor: text("vendor"),
            device: text("device"),
            numa_node,
        });
    }
    if bad > 0 {
        warnings.push(format!(
            "{}: {bad} device(s) without a readable class left out",
            fs.path(PCI_DIR).display()
        ));
    }
    Ok(out)
}

/// The PCI class code (`0xCCSSPP`: class, subclass, programming interface)
/// mapped to what a placement decision cares about.
pub fn pci_kind(code: u32) -> &'static str {
    let class = code >> 16;
    let sub = (code >> 8) & 0xff;
    match (class, sub) {
        (0x03, _) => "gpu",
        (0x02, _) => "network",
        (0x0c, 0x06) => "network", // InfiniBand as a serial bus controller
        (0x01, 0x08) => "nvme",
        (0x01, _) => "storage",
        (0x12, _) | (0x0b, 0x40) => "accelerator",
        _ => "other",
    }
}

/// `sys/kernel/mm/transparent_hugepage/enabled` reads `always [madvise] never`:
/// the bracketed word is the mode.
pub(crate) fn read_thp(fs: &Fs) -> Result<Option<String>, TopologyError> {
    let Some(s) = fs.read_opt("sys/kernel/mm/transparent_hugepage/enabled")? else {
        return Ok(None);
    };
    Ok(s.split_whitespace()
        .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
        .map(str::to_string))
}

#[cfg(test)]
mod tests {
    use super::{pci_kind, read_cpu_model};
    use crate::topology::fs::Fs;

    #[test]
    fn arm_cpu_model_from_cpuinfo_or_sysfs_midr() {
        let root = std::env::temp_dir().join(format!("numaprobe-midr-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("proc")).unwrap();
        // Arm cpuinfo: no model name, the MIDR fields name it.
        std::fs::write(
            root.join("proc/cpuinfo"),
            "processor\t: 0\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd40\nCPU revision\t: 1\n",
        )
        .unwrap();
        let fs = Fs::new(&root);
        assert_eq!(
            read_cpu_model(&fs).unwrap().as_deref(),
            Some("ARM Neoverse-V1")
        );
        // A cpuinfo without them (a container's masked one): sysfs's midr_el1.
        std::fs::write(root.join("proc/cpuinfo"), "processor\t: 0\n").unwrap();
        for cpu in 0..2 {
            let d = root.join(format!(
                "sys/devices/system/cpu/cpu{cpu}/regs/identification"
            ));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("midr_el1"), "0x00000000410fd4f0\n").unwrap();
        }
        assert_eq!(
            read_cpu_model(&fs).unwrap().as_deref(),
            Some("ARM Neoverse-V2")
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn pci_classes_map_to_kinds() {
        assert_eq!(pci_kind(0x030200), "gpu");
        assert_eq!(pci_kind(0x020000), "network");
        assert_eq!(pci_kind(0x020700), "network");
        assert_eq!(pci_kind(0x0c0600), "network");
        assert_eq!(pci_kind(0x010802), "nvme");
        assert_eq!(pci_kind(0x010601), "storage");
        assert_eq!(pci_kind(0x120000), "accelerator");
        assert_eq!(pci_kind(0x060400), "other");
    }
}
