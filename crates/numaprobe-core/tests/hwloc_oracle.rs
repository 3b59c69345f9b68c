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
//! smallest cpuset containing it (see `hwloc::check_nodes`).
//!
//! Missing hwloc is a failure, not a skip: `scripts/test` installs it.

mod common;
mod hwloc;

use hwloc::{compare, parse_bitmap, parse_hwloc, run_lstopo, AllowedCheck, Set};
use numaprobe_core::topology;

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
