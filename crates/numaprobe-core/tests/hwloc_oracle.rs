//! hwloc as an independent oracle: for every real machine's sysfs dump in
//! `tests/fixtures/sysfs`, our reader and `lstopo-no-graphics --whole-system
//! --of xml` (run with `HWLOC_FSROOT` on the same unpacked dump) must agree on
//! the online CPUs, their partition into packages, cores and NUMA nodes, the
//! set of node ids, the distance matrix, the cache instances, and what the
//! process may use.
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
    /// (cpuset, os_index = physical_package_id, None when hwloc has none).
    packages: Vec<(Set, Option<i64>)>,
    cores: Vec<Set>,
    /// (level, "Data"/"Instruction"/"Unified", cpuset) of every CPU cache.
    caches: BTreeSet<(u32, String, Set)>,
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

/// hwloc's reading of the dump at `root`, or of this machine for `None`.
fn run_lstopo(root: Option<&std::path::Path>) -> String {
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

fn partition<K: Ord>(t: &Topology, key: impl Fn(&topology::Cpu) -> K) -> BTreeSet<Set> {
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
enum AllowedCheck {
    Exact,
    Subset,
}

fn compare(name: &str, t: &Topology, h: &Hwloc, allowed: AllowedCheck) -> Vec<String> {
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
        let h = parse_hwloc(&run_lstopo(Some(&u.root)))
            .unwrap_or_else(|e| panic!("{name}: hwloc XML: {e}"));
        assert!(!h.pus.is_empty(), "{name}: hwloc found no PU");
        errs.extend(compare(name, &t, &h, AllowedCheck::Exact));
    }
    assert!(
        errs.is_empty(),
        "{} disagreement(s) with hwloc:\n{}",
        errs.len(),
        errs.join("\n")
    );
}

/// The machine the tests run on is one more real machine, with a real
/// kernel's files rather than a dump's.
#[test]
fn this_machine_reads_like_hwloc_reads_it() {
    let t = topology::read(std::path::Path::new("/")).expect("read this machine");
    let h = parse_hwloc(&run_lstopo(None)).expect("hwloc XML of this machine");
    let errs = compare("this machine", &t, &h, AllowedCheck::Subset);
    assert!(errs.is_empty(), "{}", errs.join("\n"));
}

#[test]
fn bitmap_parser_reads_hwloc_forms() {
    assert_eq!(parse_bitmap("0x0000000f").unwrap(), Set::from([0, 1, 2, 3]));
    assert_eq!(parse_bitmap("0x00000001,,0x0").unwrap(), Set::from([64]));
    assert_eq!(parse_bitmap("0x0").unwrap(), Set::new());
    assert!(parse_bitmap("0xf...f,0x1").is_err());
}

type SynthCpu = (u32, i64, i64, i64, u32);

/// A made-up machine written as a sysfs tree, for layouts the dumps do not
/// have: the same comparison with hwloc then checks the reader's rules rather
/// than the dumps it was tried on.
struct Synth {
    /// (os_index, package id, die id, core id, node) of every online CPU.
    cpus: Vec<SynthCpu>,
    /// Offline CPUs: listed in `possible`, `online` says no, no topology folder.
    offline: Vec<u32>,
    /// Every node, CPU-less ones included.
    nodes: Vec<u32>,
}

fn mask(ids: &[u32], words: usize) -> String {
    let mut w = vec![0u32; words];
    for &i in ids {
        w[(i / 32) as usize] |= 1 << (i % 32);
    }
    w.iter()
        .rev()
        .map(|v| format!("{v:08x}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The kernel's list form; an empty set is an empty line (our formatter
/// writes `-` for people).
fn list(ids: &[u32]) -> String {
    numaprobe_core::topology::cpulist::format_ranges(ids, "")
}

impl Synth {
    fn write(&self, root: &std::path::Path) {
        let w = |rel: &str, text: String| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text + "\n").unwrap();
        };
        let online: Vec<u32> = {
            let mut v: Vec<u32> = self.cpus.iter().map(|c| c.0).collect();
            v.sort_unstable();
            v
        };
        let mut all = online.clone();
        all.extend(&self.offline);
        all.sort_unstable();
        let max = *all.last().unwrap();
        let words = (max as usize / 32) + 1;
        let cpu = "sys/devices/system/cpu";
        w(&format!("{cpu}/possible"), format!("0-{max}"));
        w(&format!("{cpu}/present"), list(&all));
        w(&format!("{cpu}/online"), list(&online));
        for &o in &self.offline {
            w(&format!("{cpu}/cpu{o}/online"), "0".into());
        }
        let group = |f: &dyn Fn(&SynthCpu) -> bool| -> Vec<u32> {
            let mut v: Vec<u32> = self.cpus.iter().filter(|c| f(c)).map(|c| c.0).collect();
            v.sort_unstable();
            v
        };
        for c in &self.cpus {
            let t = format!("{cpu}/cpu{}/topology", c.0);
            let sib = group(&|o| (o.1, o.2, o.3) == (c.1, c.2, c.3));
            let die = group(&|o| (o.1, o.2) == (c.1, c.2));
            let pkg = group(&|o| o.1 == c.1);
            w(&format!("{cpu}/cpu{}/online", c.0), "1".into());
            w(&format!("{t}/physical_package_id"), c.1.to_string());
            w(&format!("{t}/die_id"), c.2.to_string());
            w(&format!("{t}/core_id"), c.3.to_string());
            w(&format!("{t}/thread_siblings"), mask(&sib, words));
            w(&format!("{t}/thread_siblings_list"), list(&sib));
            w(&format!("{t}/core_cpus"), mask(&sib, words));
            w(&format!("{t}/core_cpus_list"), list(&sib));
            w(&format!("{t}/die_cpus"), mask(&die, words));
            w(&format!("{t}/die_cpus_list"), list(&die));
            w(&format!("{t}/core_siblings"), mask(&pkg, words));
            w(&format!("{t}/core_siblings_list"), list(&pkg));
            w(&format!("{t}/package_cpus"), mask(&pkg, words));
            w(&format!("{t}/package_cpus_list"), list(&pkg));
        }
        let node = "sys/devices/system/node";
        w(&format!("{node}/online"), list(&self.nodes));
        w(&format!("{node}/possible"), list(&self.nodes));
        for (i, &n) in self.nodes.iter().enumerate() {
            let cpus = group(&|o| o.4 == n);
            w(&format!("{node}/node{n}/cpulist"), list(&cpus));
            w(&format!("{node}/node{n}/cpumap"), mask(&cpus, words));
            w(
                &format!("{node}/node{n}/meminfo"),
                format!("Node {n} MemTotal: 8388608 kB\nNode {n} MemFree: 4194304 kB"),
            );
            let row: Vec<String> = self
                .nodes
                .iter()
                .enumerate()
                .map(|(j, _)| {
                    if i == j {
                        "10".to_string()
                    } else {
                        (20 + 5 * i.abs_diff(j)).to_string()
                    }
                })
                .collect();
            w(&format!("{node}/node{n}/distance"), row.join(" "));
        }
    }
}

/// `packages` x `dies` x `cores` x `threads`, numbered in one of three ways:
/// `consecutive` (SMT threads adjacent), `far` (all first threads, then all
/// second threads) or `round-robin` (consecutive cores alternate packages,
/// SMT threads far). `pkg_ids` gives the sysfs package ids; nodes per die.
fn layout(
    pkg_ids: &[i64],
    dies: u32,
    cores: u32,
    threads: u32,
    order: &str,
    node_ids: &[u32],
) -> Vec<SynthCpu> {
    let p = pkg_ids.len() as u32;
    let total_cores = p * dies * cores;
    let mut out = Vec::new();
    for pi in 0..p {
        for d in 0..dies {
            for c in 0..cores {
                for t in 0..threads {
                    let gc = (pi * dies + d) * cores + c; // global core, package-major
                    let os = match order {
                        "consecutive" => gc * threads + t,
                        "far" => t * total_cores + gc,
                        _ => t * total_cores + (c * p * dies + pi * dies + d),
                    };
                    let node = node_ids[((pi * dies + d) as usize) % node_ids.len()];
                    out.push((os, pkg_ids[pi as usize], d as i64, c as i64, node));
                }
            }
        }
    }
    out
}

#[test]
fn made_up_layouts_read_like_hwloc_reads_them() {
    // (name, machine, expected numbering: packages, smt, stride)
    type Case = (
        &'static str,
        Synth,
        (&'static str, &'static str, Option<u32>),
    );
    let cases: Vec<Case> = vec![
        (
            // The RWTH Aachen blog's HP Nehalem-EP: cpu0 on package 1, round-robin.
            "hp-nehalem",
            Synth {
                cpus: layout(&[1, 0], 1, 4, 2, "round-robin", &[1, 0]),
                offline: vec![],
                nodes: vec![0, 1],
            },
            ("round-robin", "far", Some(8)),
        ),
        (
            // The RWTH Aachen blog's Sun Nehalem-EP: the same chips, numbered the other way.
            "sun-nehalem",
            Synth {
                cpus: layout(&[0, 1], 1, 4, 2, "far", &[0, 1]),
                offline: vec![],
                nodes: vec![0, 1],
            },
            ("consecutive", "far", Some(8)),
        ),
        (
            // A package id the kernel does not know (-1), as virtual machines
            // and some arm64 firmware give.
            "unknown-package-id",
            Synth {
                cpus: layout(&[-1], 1, 4, 2, "consecutive", &[0]),
                offline: vec![],
                nodes: vec![0],
            },
            ("single-package", "adjacent", Some(1)),
        ),
        (
            // Multi-die packages with odd ids, core ids repeating per die,
            // a node per die plus a CPU-less memory node.
            "dies-odd-ids",
            Synth {
                cpus: layout(&[36, 100], 2, 3, 2, "consecutive", &[0, 1, 2, 3]),
                offline: vec![],
                nodes: vec![0, 1, 2, 3, 7],
            },
            ("consecutive", "adjacent", Some(1)),
        ),
        (
            // Sparse node ids, node 0 memory-only, offline CPUs past the end.
            "sparse-nodes-offline",
            Synth {
                cpus: layout(&[0, 1, 2, 3], 1, 2, 2, "far", &[8, 16, 24, 32]),
                offline: vec![16, 17, 40],
                nodes: vec![0, 8, 16, 24, 32],
            },
            ("consecutive", "far", Some(8)),
        ),
        (
            // More than 64 CPUs: masks span several 32-bit words.
            "two-words",
            Synth {
                cpus: layout(&[0, 1], 1, 20, 2, "round-robin", &[0, 1]),
                offline: vec![],
                nodes: vec![0, 1],
            },
            ("round-robin", "far", Some(40)),
        ),
    ];
    let mut errs = Vec::new();
    for (name, m, (packages, smt, stride)) in &cases {
        let dir = common::temp_dir(name);
        m.write(&dir);
        let t = topology::read(&dir).unwrap_or_else(|e| panic!("{name}: {e}"));
        let n = &t.numbering;
        if (n.packages.as_str(), n.smt.as_str(), n.smt_stride) != (*packages, *smt, *stride) {
            errs.push(format!(
                "{name}: numbering {n:?}, expected {packages} {smt} {stride:?}"
            ));
        }
        let h = parse_hwloc(&run_lstopo(Some(&dir))).unwrap_or_else(|e| panic!("{name}: {e}"));
        errs.extend(compare(name, &t, &h, AllowedCheck::Exact));
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(errs.is_empty(), "{}", errs.join("\n"));
}
