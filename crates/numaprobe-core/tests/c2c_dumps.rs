//! The c2c planner on every real machine in tests/fixtures/sysfs: the
//! pairs it chooses, as properties that hold whatever the machine (no
//! expectation names a CPU number).

mod common;

use numaprobe_core::experiments::c2c::{self, C2cConfig, Domains, Pairs, ALL_PAIRS_MAX};
use numaprobe_core::model::c2c::Domain;
use numaprobe_core::topology::{self, Topology};
use std::collections::BTreeSet;

fn allowed(t: &Topology) -> Vec<u32> {
    t.cpus
        .iter()
        .filter(|c| c.allowed && c.online)
        .map(|c| c.os_index)
        .collect()
}

/// Every domain some pair of `cpus` shares (by brute force over the pairs).
fn present(d: &Domains, cpus: &[u32]) -> BTreeSet<Domain> {
    let mut out = BTreeSet::new();
    for (i, &a) in cpus.iter().enumerate() {
        for &b in &cpus[i + 1..] {
            out.insert(d.of(a, b).unwrap());
            if out.len() == Domain::ALL.len() {
                return out;
            }
        }
    }
    out
}

fn check(name: &str, t: &Topology) {
    let cpus = allowed(t);
    let p = c2c::plan(t, &C2cConfig::default());
    if cpus.len() < 2 {
        assert!(p.is_err(), "{name}");
        return;
    }
    let p = p.unwrap_or_else(|e| panic!("{name}: {e}"));
    let set: BTreeSet<u32> = cpus.iter().copied().collect();
    // CPUs are allowed, pairs are of two CPUs, the CPU list is the pairs'.
    assert!(p.cpus.iter().all(|c| set.contains(c)), "{name}");
    assert!(p.pairs.iter().all(|(a, b)| a != b), "{name}");
    let from_pairs: BTreeSet<u32> = p.pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
    assert_eq!(from_pairs, p.cpus.iter().copied().collect(), "{name}");
    let d = Domains::new(t);
    for (&(a, b), &dom) in p.pairs.iter().zip(&p.domains) {
        assert_eq!(d.of(a, b), Some(dom), "{name}: {a}-{b}");
        // Symmetric, and never closer than the topology says.
        assert_eq!(d.of(b, a), Some(dom), "{name}");
        let (ca, cb) = (t.cpu(a).unwrap(), t.cpu(b).unwrap());
        if ca.package != cb.package {
            assert_eq!(dom, Domain::CrossPackage, "{name}");
        } else if ca.node != cb.node {
            assert_eq!(
                dom,
                Domain::SamePackage,
                "{name}: cross-node pairs are labelled so"
            );
        }
        if dom == Domain::SameCore {
            assert!(ca.smt_siblings.contains(&b), "{name}");
        }
    }
    if cpus.len() <= ALL_PAIRS_MAX {
        assert!(!p.representatives);
        assert_eq!(p.pairs.len(), cpus.len() * (cpus.len() - 1), "{name}");
        // Asked for (as the main job asks), the domains alone.
        let q = c2c::plan(
            t,
            &C2cConfig {
                pairs: Pairs::Domains,
                ..C2cConfig::default()
            },
        )
        .unwrap();
        check_representatives(name, t, &q, &cpus);
        return;
    }
    check_representatives(name, t, &p, &cpus);
    // --pairs all: every ordered pair, however big the machine.
    let all = c2c::plan(
        t,
        &C2cConfig {
            pairs: Pairs::All,
            ..C2cConfig::default()
        },
    )
    .unwrap();
    assert!(!all.representatives, "{name}");
    assert_eq!(all.pairs.len(), cpus.len() * (cpus.len() - 1), "{name}");
    // --cpus narrows the choice to the given CPUs.
    let some: Vec<u32> = cpus.iter().step_by(2).copied().collect();
    let q = c2c::plan(
        t,
        &C2cConfig {
            cpus: Some(some.clone()),
            ..C2cConfig::default()
        },
    )
    .unwrap();
    assert!(q.cpus.iter().all(|c| some.contains(c)), "{name}");
}

/// Representatives: every domain the machine has gets a pair, in both
/// directions, and nothing else is measured.
fn check_representatives(name: &str, t: &Topology, p: &c2c::C2cPlan, cpus: &[u32]) {
    assert!(p.representatives, "{name}");
    let d = Domains::new(t);
    let want = present(&d, cpus);
    let got: BTreeSet<Domain> = p.domains.iter().copied().collect();
    assert_eq!(got, want, "{name}");
    assert_eq!(p.pairs.len(), 2 * want.len(), "{name}");
    for (&(a, b), &dom) in p.pairs.iter().zip(&p.domains) {
        assert!(p.pairs.contains(&(b, a)), "{name}: {a}-{b} one way only");
        assert_eq!(d.of(a, b), Some(dom), "{name}: {a}-{b}");
    }
}

fn check_dump(name: &str) {
    let u = common::unpack(name);
    let t = topology::read(&u.root).unwrap_or_else(|e| panic!("{name}: {e}"));
    check(name, &t);
}

// One test per dump, so they unpack in parallel: unpacking dominates. The
// big machines (representatives) and small ones with SMT (every pair).

#[test]
fn altix_256_cpus_64_nodes() {
    check_dump("256ia64-64n2s2c");
}

#[test]
fn opteron_64_cpus_4_packages_8_nodes() {
    check_dump("64amd64-4s2n4ca2co");
}

#[test]
fn xeon_96_cpus_4_packages() {
    check_dump("96em64t-4no4pa3ca2co");
}

#[test]
fn xeon_28_cpus_with_buggy_core_siblings() {
    check_dump("28em64t-2s2n7c-buggycoresiblings");
}

#[test]
fn small_smt_machine_gets_every_pair() {
    check_dump("8em64t-4c2t");
}

#[test]
fn a_cpu_outside_the_allowed_set_of_a_dump_is_refused() {
    let u = common::unpack("16amd64-8n2c-cpusets");
    let t = topology::read(&u.root).unwrap();
    let cpus = allowed(&t);
    let outside = t
        .cpus
        .iter()
        .map(|c| c.os_index)
        .find(|c| !cpus.contains(c))
        .expect("a cpuset dump leaves some CPU out");
    let e = c2c::plan(
        &t,
        &C2cConfig {
            cpus: Some(vec![cpus[0], outside]),
            ..C2cConfig::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains(&format!("CPU {outside} is not allowed")), "{e}");
}
