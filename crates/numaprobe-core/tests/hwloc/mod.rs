//! hwloc's side of the oracle: running `lstopo-no-graphics` on a root,
//! reading its XML, and comparing it with our reading of the same root
//! (see `hwloc_oracle.rs` for what must agree and why).

use numaprobe_core::topology::{self, Topology};
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

pub type Set = BTreeSet<u32>;

/// What we take from hwloc's XML.
#[derive(Debug, Default)]
pub struct Hwloc {
    pub pus: Set,
    /// (cpuset, os_index = physical_package_id, None when hwloc has none).
    pub packages: Vec<(Set, Option<i64>)>,
    pub cores: Vec<Set>,
    /// (level, "Data"/"Instruction"/"Unified", cpuset) of every CPU cache.
    pub caches: BTreeSet<(u32, String, Set)>,
    /// node os_index -> cpuset (locality for CPU-less nodes)
    pub nodes: BTreeMap<u32, Set>,
    /// (node ids in hwloc's order, row-major values)
    pub distances: Option<(Vec<u32>, Vec<u64>)>,
    pub allowed_cpus: Set,
    pub allowed_nodes: Set,
}

/// hwloc's bitmap text: comma-separated 32-bit hex words, most significant
/// first, an empty word meaning zero (`0xfc000000,,,,,,,0x00000101`).
pub fn parse_bitmap(s: &str) -> Result<Set, String> {
    if s.contains("0xf...f") {
        return Err(format!("infinite bitmap `{s}`"));
    }
    let mut out = Set::new();
    for (k, w) in s.split(',').rev().enumerate() {
        let w = w.trim().trim_start_matches("0x");
        if w.is_empty() {
            continue;
        }
        let v = u32::from_str_radix(w, 16).map_err(|e| format!("`{w}`: {e}"))?;
        for bit in 0..32 {
            if v & (1 << bit) != 0 {
                out.insert(k as u32 * 32 + bit);
            }
        }
    }
    Ok(out)
}

/// hwloc's reading of the dump at `root`, or of this machine for `None`.
pub fn run_lstopo(root: Option<&std::path::Path>) -> String {
    let mut cmd = Command::new("lstopo-no-graphics");
    cmd.args(["--whole-system", "--of", "xml"]);
    match root {
        // Without the x86 backend: on a dump it would add what the CPUID of
        // the machine running the test says (its caches) to the dump's tree.
        Some(r) => cmd.env("HWLOC_FSROOT", r).env("HWLOC_COMPONENTS", "-x86"),
        None => cmd
            .env_remove("HWLOC_FSROOT")
            .env_remove("HWLOC_COMPONENTS"),
    };
    let out = cmd
        .env("HWLOC_KEEP_NVIDIA_GPU_NUMA_NODES", "1")
        // Keep the host's own settings from changing what hwloc reports.
        .env_remove("HWLOC_XMLFILE")
        .env_remove("HWLOC_PCI_LOCALITY")
        .output();
    match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        Ok(o) => panic!(
            "lstopo-no-graphics failed on {}: {}",
            root.map_or("this machine".into(), |r| r.display().to_string()),
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => panic!(
            "cannot run lstopo-no-graphics ({e}). The hwloc comparison needs it: \
             install the Debian package `hwloc` (scripts/test does this)"
        ),
    }
}

pub fn parse_hwloc(xml: &str) -> Result<Hwloc, String> {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(xml, opts).map_err(|e| e.to_string())?;
    let mut h = Hwloc::default();
    for n in doc.descendants().filter(|n| n.has_tag_name("object")) {
        let ty = n.attribute("type").unwrap_or("");
        let cpuset = || parse_bitmap(n.attribute("cpuset").unwrap_or(""));
        match ty {
            "Machine" => {
                h.allowed_cpus = parse_bitmap(n.attribute("allowed_cpuset").unwrap_or(""))?;
                h.allowed_nodes = parse_bitmap(n.attribute("allowed_nodeset").unwrap_or(""))?;
            }
            "Package" => h.packages.push((
                cpuset()?,
                n.attribute("os_index")
                    .and_then(|v| v.parse::<i64>().ok())
                    .filter(|&v| v >= 0 && v != u32::MAX as i64),
            )),
            "Core" => h.cores.push(cpuset()?),
            t if t.starts_with('L') && t.ends_with("Cache") => {
                let level: u32 = n
                    .attribute("depth")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                let kind = match n.attribute("cache_type") {
                    Some("1") => "Data",
                    Some("2") => "Instruction",
                    _ => "Unified",
                };
                h.caches.insert((level, kind.to_string(), cpuset()?));
            }
            "PU" => {
                let i: u32 = n
                    .attribute("os_index")
                    .and_then(|v| v.parse().ok())
                    .ok_or("PU without os_index")?;
                h.pus.insert(i);
            }
            "NUMANode" => {
                let i: u32 = n
                    .attribute("os_index")
                    .and_then(|v| v.parse().ok())
                    .ok_or("NUMANode without os_index")?;
                h.nodes.insert(i, cpuset()?);
            }
            _ => {}
        }
    }
    for d in doc.descendants().filter(|n| n.has_tag_name("distances2")) {
        if d.attribute("type") != Some("NUMANode") || d.attribute("name") != Some("NUMALatency") {
            continue;
        }
        let nums = |tag: &str| -> Vec<u64> {
            d.children()
                .filter(|c| c.has_tag_name(tag))
                .flat_map(|c| {
                    c.text()
                        .unwrap_or("")
                        .split_whitespace()
                        .filter_map(|w| w.parse::<u64>().ok())
                        .collect::<Vec<_>>()
                })
                .collect()
        };
        let ids: Vec<u32> = nums("indexes").into_iter().map(|v| v as u32).collect();
        h.distances = Some((ids, nums("u64values")));
    }
    Ok(h)
}

pub fn partition<K: Ord>(t: &Topology, key: impl Fn(&topology::Cpu) -> K) -> BTreeSet<Set> {
    let mut m: BTreeMap<K, Set> = BTreeMap::new();
    for c in t.cpus.iter().filter(|c| c.online) {
        m.entry(key(c)).or_default().insert(c.os_index);
    }
    m.into_values().collect()
}

/// How the allowed sets are compared: exactly on a dump (both read the same
/// cgroup files); on this machine ours may be smaller, because we also apply
/// the affinity mask (e.g. under `taskset`) and hwloc does not.
#[derive(Clone, Copy, PartialEq)]
pub enum AllowedCheck {
    Exact,
    Subset,
}

pub fn compare(name: &str, t: &Topology, h: &Hwloc, allowed: AllowedCheck) -> Vec<String> {
    let mut errs = Vec::new();
    let mut check = |ok: bool, what: &str, ours: String, theirs: String| {
        if !ok {
            errs.push(format!(
                "{name}: {what}\n    ours:  {ours}\n    hwloc: {theirs}"
            ));
        }
    };
    let online: Set = t
        .cpus
        .iter()
        .filter(|c| c.online)
        .map(|c| c.os_index)
        .collect();
    check(
        online == h.pus,
        "online CPUs",
        format!("{online:?}"),
        format!("{:?}", h.pus),
    );

    // Packages: the CPU sets, and each one's firmware id (hwloc's P#, taken
    // from the package's first CPU). A CPU in no package (contradictory
    // masks) is outside every set on both sides.
    let mut by_pkg: BTreeMap<i64, Set> = BTreeMap::new();
    for c in t.cpus.iter().filter(|c| c.online) {
        if let Some(p) = c.package {
            by_pkg.entry(p).or_default().insert(c.os_index);
        }
    }
    let ours: BTreeSet<(Set, Option<i64>)> = by_pkg
        .into_values()
        .map(|s| {
            let first = s.first().and_then(|&f| t.cpu(f));
            let id = first.and_then(|c| c.package_id).filter(|&v| v >= 0);
            (s, id)
        })
        .collect();
    let theirs: BTreeSet<(Set, Option<i64>)> = h.packages.iter().cloned().collect();
    check(
        ours == theirs,
        "packages (CPUs, physical_package_id)",
        format!("{ours:?}"),
        format!("{theirs:?}"),
    );
    let keys: Set = t
        .cpus
        .iter()
        .filter_map(|c| c.package)
        .map(|p| p as u32)
        .collect();
    check(
        keys.len() == h.packages.len(),
        "package keys are unique per package",
        format!("{keys:?}"),
        format!("{} packages", h.packages.len()),
    );

    let ours = partition(t, |c| t.core_key(c));
    let theirs: BTreeSet<Set> = h.cores.iter().cloned().collect();
    check(
        ours == theirs,
        "cores",
        format!("{ours:?}"),
        format!("{theirs:?}"),
    );

    // Caches: hwloc reads the same cache folders (with the x86 backend off,
    // see `run_lstopo`).
    {
        let ours: BTreeSet<(u32, String, Set)> = t
            .caches
            .iter()
            .map(|c| (c.level, c.kind.clone(), c.cpus.iter().copied().collect()))
            .collect();
        // Show only the difference: the full sets run to hundreds of entries.
        check(
            ours == h.caches,
            "caches (level, type, CPUs), only the differing ones",
            format!("{:?}", ours.difference(&h.caches).collect::<Vec<_>>()),
            format!("{:?}", h.caches.difference(&ours).collect::<Vec<_>>()),
        );
    }

    let ours_ids: Set = t.nodes.iter().map(|n| n.os_index).collect();
    let theirs_ids: Set = h.nodes.keys().copied().collect();
    check(
        ours_ids == theirs_ids,
        "node ids",
        format!("{ours_ids:?}"),
        format!("{theirs_ids:?}"),
    );
    check_nodes(t, h, &online, &mut check);

    match (&t.distances, &h.distances) {
        (Some(d), Some((ids, vals))) => {
            let mut ours_vals = Vec::new();
            for &a in ids {
                for &b in ids {
                    ours_vals.push(d.get(a, b).map(u64::from).unwrap_or(u64::MAX));
                }
            }
            check(
                &ours_vals == vals && d.node_ids.len() == ids.len(),
                "distance matrix",
                format!("{:?} {:?}", d.node_ids, d.matrix),
                format!("{ids:?} {vals:?}"),
            );
        }
        // hwloc drops a 1x1 table: it says nothing.
        (Some(d), None) => check(
            d.node_ids.len() <= 1,
            "distance matrix",
            format!("{:?}", d.matrix),
            "none".into(),
        ),
        (None, Some((ids, _))) => {
            check(false, "distance matrix", "none".into(), format!("{ids:?}"))
        }
        (None, None) => {}
    }

    let ours_allowed: Set = t.allowed.cpus.iter().copied().collect();
    let theirs_allowed: Set = h.allowed_cpus.intersection(&online).copied().collect();
    let same = |a: &Set, b: &Set| match allowed {
        AllowedCheck::Exact => a == b,
        AllowedCheck::Subset => !a.is_empty() && a.is_subset(b),
    };
    check(
        same(&ours_allowed, &theirs_allowed),
        "allowed CPUs",
        format!("{ours_allowed:?} from {:?}", t.allowed.sources),
        format!("{theirs_allowed:?}"),
    );
    let ours_an: Set = t.allowed.nodes.iter().copied().collect();
    check(
        same(&ours_an, &h.allowed_nodes),
        "allowed nodes",
        format!("{ours_an:?} from {:?}", t.allowed.sources),
        format!("{:?}", h.allowed_nodes),
    );
    errs
}

/// Each online CPU belongs, in hwloc's tree, to the node(s) whose cpuset is
/// the smallest one containing it. Where that is one node, it must be ours;
/// where several tie (a CPU-less node attached at the same place as a CPU
/// node, e.g. GPU or HBM memory), ours must be one of them and the others
/// CPU-less in ours.
pub fn check_nodes(
    t: &Topology,
    h: &Hwloc,
    online: &Set,
    check: &mut impl FnMut(bool, &str, String, String),
) {
    for &cpu in online {
        let containing: Vec<(&u32, &Set)> =
            h.nodes.iter().filter(|(_, s)| s.contains(&cpu)).collect();
        let Some(min) = containing.iter().map(|(_, s)| s.len()).min() else {
            check(
                t.cpu(cpu).and_then(|c| c.node).is_none(),
                &format!("node of cpu{cpu}"),
                format!("{:?}", t.cpu(cpu).and_then(|c| c.node)),
                "none".into(),
            );
            continue;
        };
        let cands: Vec<u32> = containing
            .iter()
            .filter(|(_, s)| s.len() == min)
            .map(|(&i, _)| i)
            .collect();
        let ours = t.cpu(cpu).and_then(|c| c.node);
        let ok = match ours {
            Some(n) if cands.contains(&n) => cands
                .iter()
                .filter(|&&o| o != n)
                .all(|&o| t.node(o).is_some_and(|x| x.cpus.is_empty())),
            _ => false,
        };
        check(
            ok,
            &format!("node of cpu{cpu}"),
            format!("{ours:?}"),
            format!("{cands:?}"),
        );
    }
    // And the other way round: a node with CPUs in ours has exactly the CPUs
    // hwloc gives it.
    for n in t.nodes.iter().filter(|n| !n.cpus.is_empty()) {
        let ours: Set = n.cpus.iter().copied().collect();
        let theirs = h.nodes.get(&n.os_index).cloned().unwrap_or_default();
        check(
            ours == theirs,
            &format!("CPUs of node {}", n.os_index),
            format!("{ours:?}"),
            format!("{theirs:?}"),
        );
    }
}
