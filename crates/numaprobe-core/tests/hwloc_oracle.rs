//! hwloc as an independent oracle: for every real machine's sysfs dump in
//! `tests/fixtures/sysfs`, our reader and `lstopo-no-graphics --whole-system
//! --of xml` (run with `HWLOC_FSROOT` on the same unpacked dump) must agree on
//! the online CPUs, their partition into packages, cores and NUMA nodes, the
//! set of node ids, the distance matrix, and what the process may use.
//!
//! `--whole-system` keeps CPUs and nodes outside the dump's cgroup in the tree,
//! so the objects' `cpuset` attributes are the online sets (ours: `online`);
//! the allowed sets are compared separately with the Machine object's
//! `allowed_cpuset` / `allowed_nodeset`. hwloc attaches a CPU-less node to the
//! object of its locality, so its `cpuset` is that locality, not CPUs of its
//! own; the node partition therefore assigns each CPU to the node(s) with the
//! smallest cpuset containing it (see `check_nodes`).
//!
//! Missing hwloc is a failure, not a skip: `scripts/test` installs it.

mod common;

use numaprobe_core::topology::{self, Topology};
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

type Set = BTreeSet<u32>;

/// What we take from hwloc's XML.
#[derive(Debug, Default)]
struct Hwloc {
    pus: Set,
    packages: Vec<Set>,
    cores: Vec<Set>,
    /// node os_index -> cpuset (locality for CPU-less nodes)
    nodes: BTreeMap<u32, Set>,
    /// (node ids in hwloc's order, row-major values)
    distances: Option<(Vec<u32>, Vec<u64>)>,
    allowed_cpus: Set,
    allowed_nodes: Set,
}

/// hwloc's bitmap text: comma-separated 32-bit hex words, most significant
/// first, an empty word meaning zero (`0xfc000000,,,,,,,0x00000101`).
fn parse_bitmap(s: &str) -> Result<Set, String> {
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

fn run_lstopo(root: &std::path::Path) -> String {
    let out = Command::new("lstopo-no-graphics")
        .args(["--whole-system", "--of", "xml"])
        .env("HWLOC_FSROOT", root)
        .env("HWLOC_KEEP_NVIDIA_GPU_NUMA_NODES", "1")
        // Keep the host's own settings from changing what hwloc reports.
        .env_remove("HWLOC_XMLFILE")
        .env_remove("HWLOC_COMPONENTS")
        .env_remove("HWLOC_PCI_LOCALITY")
        .output();
    match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        Ok(o) => panic!(
            "lstopo-no-graphics failed on {}: {}",
            root.display(),
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => panic!(
            "cannot run lstopo-no-graphics ({e}). The hwloc comparison needs it: \
             install the Debian package `hwloc` (scripts/test does this)"
        ),
    }
}

fn parse_hwloc(xml: &str) -> Result<Hwloc, String> {
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
            "Package" => h.packages.push(cpuset()?),
            "Core" => h.cores.push(cpuset()?),
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

fn partition<K: Ord>(t: &Topology, key: impl Fn(&topology::Cpu) -> K) -> BTreeSet<Set> {
    let mut m: BTreeMap<K, Set> = BTreeMap::new();
    for c in t.cpus.iter().filter(|c| c.online) {
        m.entry(key(c)).or_default().insert(c.os_index);
    }
    m.into_values().collect()
}

fn compare(name: &str, t: &Topology, h: &Hwloc) -> Vec<String> {
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

    let ours = partition(t, |c| c.package);
    let theirs: BTreeSet<Set> = h.packages.iter().cloned().collect();
    check(
        ours == theirs,
        "packages",
        format!("{ours:?}"),
        format!("{theirs:?}"),
    );

    let ours = partition(t, |c| t.core_key(c));
    let theirs: BTreeSet<Set> = h.cores.iter().cloned().collect();
    check(
        ours == theirs,
        "cores",
        format!("{ours:?}"),
        format!("{theirs:?}"),
    );

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
    check(
        ours_allowed == theirs_allowed,
        "allowed CPUs",
        format!("{ours_allowed:?} from {:?}", t.allowed.sources),
        format!("{theirs_allowed:?}"),
    );
    let ours_an: Set = t.allowed.nodes.iter().copied().collect();
    check(
        ours_an == h.allowed_nodes,
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
fn check_nodes(
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

#[test]
fn every_fixture_reads_like_hwloc_reads_it() {
    let names = common::fixture_names();
    assert!(names.len() >= 10, "fixtures missing: {names:?}");
    let mut errs = Vec::new();
    for name in &names {
        let u = common::unpack(name);
        let t = match topology::read(&u.root) {
            Ok(t) => t,
            Err(e) => {
                errs.push(format!("{name}: our reader failed: {e}"));
                continue;
            }
        };
        let h =
            parse_hwloc(&run_lstopo(&u.root)).unwrap_or_else(|e| panic!("{name}: hwloc XML: {e}"));
        assert!(!h.pus.is_empty(), "{name}: hwloc found no PU");
        errs.extend(compare(name, &t, &h));
    }
    assert!(
        errs.is_empty(),
        "{} disagreement(s) with hwloc:\n{}",
        errs.len(),
        errs.join("\n")
    );
}

#[test]
fn bitmap_parser_reads_hwloc_forms() {
    assert_eq!(parse_bitmap("0x0000000f").unwrap(), Set::from([0, 1, 2, 3]));
    assert_eq!(parse_bitmap("0x00000001,,0x0").unwrap(), Set::from([64]));
    assert_eq!(parse_bitmap("0x0").unwrap(), Set::new());
    assert!(parse_bitmap("0xf...f,0x1").is_err());
}
