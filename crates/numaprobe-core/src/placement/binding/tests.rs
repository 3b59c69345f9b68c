//! The binding strategies on built machines and on the RWTH Aachen blog's boxes.

use super::*;
use crate::topology::testing::{build, CpuSpec};
use crate::topology::Topology;

/// A machine from (cpu, package, core, node); CPUs sharing a package and
/// core are SMT siblings.
pub(crate) fn machine(cpus: &[(u32, i64, i64, u32)]) -> Topology {
    let specs: Vec<CpuSpec> = cpus
        .iter()
        .map(|&(os, pkg, core, node)| CpuSpec::new(os, pkg, core, node))
        .collect();
    build("/", &specs, &[], None)
}

/// The RWTH Aachen blog's Sun box: CPUs 0-3 package 0, 4-7 package 1, 8-15 siblings.
fn sun() -> Topology {
    let mut c = Vec::new();
    for os in 0..16u32 {
        let pkg = ((os % 8) / 4) as i64;
        c.push((os, pkg, (os % 4) as i64, pkg as u32));
    }
    machine(&c)
}

/// The RWTH Aachen blog's HP box: even CPUs package 1, odd package 0.
fn hp() -> Topology {
    let mut c = Vec::new();
    let cores = [0, 0, 2, 2, 1, 1, 3, 3];
    for os in 0..16u32 {
        let pkg = if os % 2 == 0 { 1 } else { 0 };
        c.push((os, pkg, cores[(os % 8) as usize], pkg as u32));
    }
    machine(&c)
}

fn req(n: usize, s: Strategy, smt: Smt) -> Request {
    Request {
        threads: n,
        strategy: s,
        smt,
        nodes: None,
    }
}

#[test]
fn scatter_matches_the_rwth_blog_on_both_boxes() {
    let b = bind(&sun(), &req(2, Strategy::Scatter, Smt::Avoid)).unwrap();
    assert_eq!(b.cpus(), vec![0, 4]);
    let b = bind(&hp(), &req(2, Strategy::Scatter, Smt::Avoid)).unwrap();
    assert_eq!(b.cpus(), vec![1, 0]);
    // Naive 0,1 on the Sun box is one package.
    let b = bind(&sun(), &req(2, Strategy::Scatter, Smt::Avoid)).unwrap();
    assert!(b.naive_problems[0].contains("all 2 threads on package 0"));
}

#[test]
fn compact_fills_a_package_and_warns_about_round_robin_numbering() {
    let b = bind(&hp(), &req(4, Strategy::Compact, Smt::Avoid)).unwrap();
    assert_eq!(b.packages(), vec![0]);
    assert!(b.naive_problems[0].contains("spread 4 threads over 2 packages"));
    let b = bind(&sun(), &req(2, Strategy::Compact, Smt::Use)).unwrap();
    assert_eq!(b.cpus(), vec![0, 8], "siblings side by side with --smt use");
}

#[test]
fn smt_avoid_falls_back_with_a_warning() {
    let b = bind(&sun(), &req(10, Strategy::Scatter, Smt::Avoid)).unwrap();
    assert_eq!(b.places.len(), 10);
    assert!(b.warnings[0].contains("only 8 cores"));
    let first8: BTreeSet<[i64; 2]> = b.places[..8]
        .iter()
        .map(|p| [p.package.unwrap(), p.core.unwrap()])
        .collect();
    assert_eq!(first8.len(), 8, "all cores before any sibling");
}

#[test]
fn balanced_gives_contiguous_even_blocks() {
    let b = bind(&sun(), &req(4, Strategy::Balanced, Smt::Avoid)).unwrap();
    assert_eq!(b.cpus(), vec![0, 1, 4, 5]);
    let b = bind(&sun(), &req(12, Strategy::Balanced, Smt::Use)).unwrap();
    let per_pkg: Vec<usize> = [0, 1]
        .iter()
        .map(|&k| b.places.iter().filter(|p| p.package == Some(k)).count())
        .collect();
    assert_eq!(per_pkg, vec![6, 6]);
}

#[test]
fn errors_name_the_value() {
    assert_eq!(
        bind(&sun(), &req(0, Strategy::Scatter, Smt::Use)),
        Err(BindError::ZeroThreads)
    );
    let e = bind(&sun(), &req(17, Strategy::Scatter, Smt::Use)).unwrap_err();
    assert!(e.to_string().contains("--threads 17: only 16 CPUs"));
    let mut r = req(1, Strategy::Scatter, Smt::Use);
    r.nodes = Some(vec![5]);
    assert!(bind(&sun(), &r)
        .unwrap_err()
        .to_string()
        .contains("node 5 does not exist"));
}

#[test]
fn cpulist_compresses_ranges() {
    assert_eq!(cpulist(&[3, 0, 1, 2, 8, 10, 11]), "0-3,8,10-11");
    assert_eq!(cpulist(&[]), "");
}
