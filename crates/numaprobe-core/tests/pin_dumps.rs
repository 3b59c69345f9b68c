//! The binding strategies on every real machine in tests/fixtures/sysfs:
//! properties that must hold whatever the machine, checked for several
//! thread counts. No expectation names a machine.

mod common;

use numaprobe_core::analysis::binding::{bind, Binding, Request, Smt, Strategy};
use numaprobe_core::topology::{self, Topology};
use std::collections::{BTreeMap, BTreeSet};

type CoreKey = (Option<i64>, Option<i64>, Option<i64>, u32);

fn usable(t: &Topology, nodes: Option<&[u32]>) -> Vec<u32> {
    t.cpus
        .iter()
        .filter(|c| c.allowed && c.online)
        .filter(|c| nodes.is_none_or(|ns| c.node.is_some_and(|n| ns.contains(&n))))
        .map(|c| c.os_index)
        .collect()
}

fn core_of(t: &Topology, cpu: u32) -> CoreKey {
    t.core_key(t.cpu(cpu).unwrap())
}

fn package_of(t: &Topology, cpu: u32) -> Option<i64> {
    t.cpu(cpu).unwrap().package
}

fn run(t: &Topology, n: usize, s: Strategy, smt: Smt, nodes: Option<Vec<u32>>) -> Binding {
    bind(
        t,
        &Request {
            threads: n,
            strategy: s,
            smt,
            nodes,
        },
    )
    .unwrap_or_else(|e| panic!("{n} threads {s:?} {smt:?}: {e}"))
}

fn thread_counts(cpus: usize, cores: usize, packages: usize) -> Vec<usize> {
    let mut v = vec![
        1,
        2,
        3,
        packages,
        packages + 1,
        cores / 2,
        cores,
        cores + 1,
        cpus,
    ];
    v.retain(|&n| n >= 1 && n <= cpus);
    v.sort_unstable();
    v.dedup();
    v
}

fn check_machine(name: &str, t: &Topology, nodes: Option<Vec<u32>>) {
    let cpus = usable(t, nodes.as_deref());
    let allowed: BTreeSet<u32> = cpus.iter().copied().collect();
    let cores: BTreeSet<CoreKey> = cpus.iter().map(|&c| core_of(t, c)).collect();
    let packages: BTreeSet<Option<i64>> = cpus.iter().map(|&c| package_of(t, c)).collect();
    let cores_of_pkg = |p: Option<i64>| {
        cpus.iter()
            .filter(|&&c| package_of(t, c) == p)
            .map(|&c| core_of(t, c))
            .collect::<BTreeSet<_>>()
            .len()
    };
    for n in thread_counts(cpus.len(), cores.len(), packages.len()) {
        for s in [Strategy::Compact, Strategy::Scatter, Strategy::Balanced] {
            for smt in [Smt::Avoid, Smt::Use] {
                let ctx = format!("{name} nodes={nodes:?} n={n} {s:?} smt {smt:?}");
                let b = run(t, n, s, smt, nodes.clone());
                let got = b.cpus();
                // n threads, each on its own allowed CPU.
                assert_eq!(got.len(), n, "{ctx}");
                assert_eq!(
                    got.iter().collect::<BTreeSet<_>>().len(),
                    n,
                    "{ctx}: a CPU twice"
                );
                assert!(got.iter().all(|c| allowed.contains(c)), "{ctx}: {got:?}");
                // No core shared while a free core remains (compact with
                // --smt use shares on purpose).
                if !(s == Strategy::Compact && smt == Smt::Use) {
                    let used: BTreeSet<CoreKey> = got.iter().map(|&c| core_of(t, c)).collect();
                    assert_eq!(used.len(), n.min(cores.len()), "{ctx}: shared a core early");
                }
                match s {
                    Strategy::Scatter => {
                        // The first k threads span min(k, packages) packages.
                        for k in 1..=n {
                            let ps: BTreeSet<_> =
                                got[..k].iter().map(|&c| package_of(t, c)).collect();
                            assert_eq!(ps.len(), k.min(packages.len()), "{ctx}: first {k}");
                        }
                    }
                    Strategy::Compact if smt == Smt::Avoid && n <= cores.len() => {
                        // A package's cores are filled before the next.
                        let mut seen: Vec<Option<i64>> = Vec::new();
                        let mut count: BTreeMap<Option<i64>, usize> = BTreeMap::new();
                        for &c in &got {
                            let p = package_of(t, c);
                            if seen.last() != Some(&p) {
                                if let Some(&prev) = seen.last() {
                                    assert_eq!(
                                        count[&prev],
                                        cores_of_pkg(prev),
                                        "{ctx}: left package {prev:?} early"
                                    );
                                }
                                assert!(!seen.contains(&p), "{ctx}: came back to {p:?}");
                                seen.push(p);
                            }
                            *count.entry(p).or_insert(0) += 1;
                        }
                    }
                    Strategy::Balanced => {
                        // Per-package counts differ by at most one where
                        // every package has room.
                        let mut per: BTreeMap<Option<i64>, usize> = BTreeMap::new();
                        for &c in &got {
                            *per.entry(package_of(t, c)).or_insert(0) += 1;
                        }
                        let min_cap = packages.iter().map(|&p| cores_of_pkg(p)).min().unwrap();
                        if n <= min_cap * packages.len() && n <= cores.len() {
                            let lo = packages
                                .iter()
                                .map(|p| per.get(p).copied().unwrap_or(0))
                                .min()
                                .unwrap();
                            let hi = per.values().copied().max().unwrap();
                            assert!(hi - lo <= 1, "{ctx}: {per:?}");
                        }
                    }
                    _ => {}
                }
                // --membind names only nodes whose memory may be used.
                let mems = t.allowed_mem_nodes();
                assert!(!b.mem_nodes.is_empty(), "{ctx}");
                assert!(
                    b.mem_nodes.iter().all(|x| mems.contains(x)),
                    "{ctx}: {:?}",
                    b.mem_nodes
                );
                // When the naive first-N choice is a different set, it says why.
                let naive: BTreeSet<u32> = b.naive_cpus.iter().copied().collect();
                let chosen: BTreeSet<u32> = got.iter().copied().collect();
                assert_eq!(naive != chosen, !b.naive_problems.is_empty(), "{ctx}");
            }
        }
    }
    // Asking for more threads than allowed CPUs is an error, not a panic.
    assert!(bind(
        t,
        &Request {
            threads: cpus.len() + 1,
            strategy: Strategy::Scatter,
            smt: Smt::Use,
            nodes
        }
    )
    .is_err());
}

/// The same machine with its CPUs renumbered by `f`.
fn renumber(t: &Topology, f: impl Fn(u32) -> u32) -> Topology {
    let mut r = t.clone();
    for c in &mut r.cpus {
        c.os_index = f(c.os_index);
        c.smt_siblings = c.smt_siblings.iter().map(|&s| f(s)).collect();
        c.smt_siblings.sort_unstable();
    }
    r.cpus.sort_by_key(|c| c.os_index);
    for n in &mut r.nodes {
        n.cpus = n.cpus.iter().map(|&s| f(s)).collect();
        n.cpus.sort_unstable();
    }
    r.allowed.cpus = r.allowed.cpus.iter().map(|&s| f(s)).collect();
    for k in &mut r.caches {
        k.cpus = k.cpus.iter().map(|&s| f(s)).collect();
        k.cpus.sort_unstable();
    }
    r
}

/// Placement as structure: (package, node, core id, SMT rank) per thread.
type Shape = (Option<i64>, Option<u32>, Option<i64>, usize);

fn shape(b: &Binding) -> Vec<Shape> {
    b.places
        .iter()
        .map(|p| (p.package, p.node, p.core, p.smt_rank))
        .collect()
}

/// One unpack per dump (unpacking dominates the run time): the properties
/// of each strategy, then equivalence under renumbering.
#[test]
fn strategies_behave_as_defined_on_every_dump_whatever_the_numbering() {
    let names = common::fixture_names();
    assert!(names.len() >= 11);
    for name in names {
        let u = common::unpack(&name);
        let t = topology::read(&u.root).unwrap_or_else(|e| panic!("{name}: {e}"));
        check_machine(&name, &t, None);
        // Each node on its own: the first, second and last are enough to
        // exercise the restriction (the 64-node machine would be slow).
        let all = t.allowed_cpu_nodes();
        let some: BTreeSet<u32> = all.iter().take(2).chain(all.last()).copied().collect();
        for node in some {
            check_machine(&name, &t, Some(vec![node]));
            let b = run(&t, 1, Strategy::Scatter, Smt::Avoid, Some(vec![node]));
            assert_eq!(b.nodes(), vec![node]);
        }
        check_renumbered(&name, &t);
    }
}

/// Equivalent machines get equivalent placements whatever the numbering.
fn check_renumbered(name: &str, t: &Topology) {
    let max = t.cpus.iter().map(|c| c.os_index).max().unwrap_or(0);
    // Reverse the numbering, and swap neighbours (0<->1, 2<->3, ...).
    let reversed = renumber(t, |c| max - c);
    let swapped = renumber(t, |c| if c % 2 == 0 { (c + 1).min(max) } else { c - 1 });
    let n_cpus = usable(t, None).len();
    for other in [reversed, swapped] {
        if usable(&other, None).len() != n_cpus {
            continue; // the swap folded two CPUs onto one number
        }
        for n in [1, 2, 4, n_cpus / 2, n_cpus] {
            if n == 0 || n > n_cpus {
                continue;
            }
            for s in [Strategy::Compact, Strategy::Scatter, Strategy::Balanced] {
                let a = run(t, n, s, Smt::Avoid, None);
                let b = run(&other, n, s, Smt::Avoid, None);
                assert_eq!(shape(&a), shape(&b), "{name} n={n} {s:?}");
            }
        }
    }
}

/// The L2 domain of `cpu`: the CPUs of its L2 (data or unified) instance,
/// or the CPU alone where the dump lists no L2.
fn l2_of(t: &Topology, cpu: u32) -> Vec<u32> {
    t.caches
        .iter()
        .find(|k| k.level == 2 && k.kind != "Instruction" && k.cpus.contains(&cpu))
        .map_or(vec![cpu], |k| k.cpus.clone())
}

/// Scatter uses every L2 domain once before any twice (a Bulldozer compute
/// unit, a cluster: cores that share an L2 are not "apart"), and compact
/// fills one L2 domain's cores before the next; on every dump.
#[test]
fn scatter_spreads_over_l2_domains_and_compact_fills_them() {
    for name in common::fixture_names() {
        let u = common::unpack(&name);
        let t = topology::read(&u.root).unwrap_or_else(|e| panic!("{name}: {e}"));
        let cpus = usable(&t, None);
        if cpus.len() > 128 {
            continue; // the 256-CPU Altix: same shapes as the 64-CPU dumps, ten times the time
        }
        let domains: BTreeSet<Vec<u32>> = cpus.iter().map(|&c| l2_of(&t, c)).collect();
        let cores: BTreeSet<CoreKey> = cpus.iter().map(|&c| core_of(&t, c)).collect();
        let mut ks: Vec<usize> = vec![1, 2, 3, domains.len(), domains.len() + 1, cores.len()];
        ks.retain(|&k| k >= 1 && k <= cores.len());
        for k in ks {
            let b = run(&t, k, Strategy::Scatter, Smt::Avoid, None);
            let used: BTreeSet<Vec<u32>> = b.cpus().iter().map(|&c| l2_of(&t, c)).collect();
            assert_eq!(
                used.len(),
                k.min(domains.len()),
                "{name}: scatter of {k} doubles up in an L2 domain while another is unused: {:?}",
                b.cpus()
            );
            let b = run(&t, k, Strategy::Compact, Smt::Avoid, None);
            let mut per: BTreeMap<Vec<u32>, usize> = BTreeMap::new();
            for c in b.cpus() {
                *per.entry(l2_of(&t, c)).or_default() += 1;
            }
            let partial = per
                .iter()
                .filter(|(d, &n)| {
                    let cores_in: BTreeSet<CoreKey> = d
                        .iter()
                        .filter(|c| cpus.contains(c))
                        .map(|&c| core_of(&t, c))
                        .collect();
                    n < cores_in.len()
                })
                .count();
            assert!(
                partial <= 1,
                "{name}: compact of {k} leaves {partial} L2 domains part-filled: {:?}",
                b.cpus()
            );
        }
    }
}

/// hwloc's bitmap text (`0x00000010,0x0`) as CPU numbers.
fn hwloc_set(s: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for (k, w) in s.trim().split(',').rev().enumerate() {
        let w = w.trim().trim_start_matches("0x");
        let v = u32::from_str_radix(if w.is_empty() { "0" } else { w }, 16).unwrap();
        for bit in 0..32 {
            if v & (1 << bit) != 0 {
                out.push(k as u32 * 32 + bit);
            }
        }
    }
    out
}

/// `hwloc-distrib --single` on the 4-socket Opteron 6276 (Bulldozer:
/// two cores of a compute unit share an L2 and an FPU) against scatter:
/// the same number of L2 domains, per node, for each thread count (which
/// domains inside a node may differ: hwloc-distrib spaces them out, scatter
/// takes them in order). And CPUs 0 and 1 (one compute unit) are never
/// both in 16 threads.
#[test]
fn scatter_uses_as_many_l2_domains_per_node_as_hwloc_distrib() {
    let name = "64amd64-4s2n4ca2co";
    let u = common::unpack(name);
    let t = topology::read(&u.root).unwrap();
    for k in [4usize, 8, 16, 32, 48] {
        let out = std::process::Command::new("hwloc-distrib")
            .args(["--whole-system", "--single", &k.to_string()])
            .env("HWLOC_FSROOT", &u.root)
            .env("HWLOC_COMPONENTS", "-x86")
            .output()
            .expect("run hwloc-distrib (Debian package hwloc; scripts/test installs it)");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let theirs: Vec<u32> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .flat_map(hwloc_set)
            .collect();
        assert_eq!(theirs.len(), k, "{theirs:?}");
        let ours = run(&t, k, Strategy::Scatter, Smt::Avoid, None).cpus();
        let per_node = |cpus: &[u32]| -> BTreeMap<Option<u32>, (usize, usize)> {
            let mut m: BTreeMap<Option<u32>, (usize, BTreeSet<Vec<u32>>)> = BTreeMap::new();
            for &c in cpus {
                let e = m.entry(t.cpu(c).unwrap().node).or_default();
                e.0 += 1;
                e.1.insert(l2_of(&t, c));
            }
            m.into_iter().map(|(n, (c, d))| (n, (c, d.len()))).collect()
        };
        assert_eq!(
            per_node(&ours),
            per_node(&theirs),
            "{k} threads: ours {ours:?}, hwloc-distrib {theirs:?}"
        );
        if k == 16 {
            assert!(!(ours.contains(&0) && ours.contains(&1)), "{ours:?}");
        }
    }
}
