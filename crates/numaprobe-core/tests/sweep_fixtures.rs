//! The sweep's analysis and the `--cpus` resolution on real machines'
//! descriptions: cache sizes read from a dump (Xeon Gold 6230 with Optane
//! memory mode: L1d, L2, L3 and a 96 GiB memory-side cache) against
//! constructed latency curves, and chosen CPUs checked against dumps with
//! many nodes and with a cgroup that limits the CPUs.

mod common;

use numaprobe_core::analysis::sweep::analyse_curve;
use numaprobe_core::experiments::cpus;
use numaprobe_core::experiments::sweep::{caches_of, sizes};
use numaprobe_core::placement::PageKind;
use numaprobe_core::topology;

/// A curve from 4 KiB to 512 GiB, 4 points per octave: `levels` are
/// (last size, ns), `last` beyond; a deterministic +-4 % wobble on top.
fn curve(levels: &[(u64, f64)], last: f64) -> Vec<(u64, f64)> {
    sizes(4 << 10, 512 << 30, 4)
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let ns = levels.iter().find(|l| s <= l.0).map_or(last, |l| l.1);
            (s, ns * [1.0, 1.04, 0.97, 1.02, 0.96][i % 5])
        })
        .collect()
}

#[test]
fn the_knees_of_a_cascade_lake_curve_match_its_caches() {
    let u = common::unpack("memorysidecaches");
    let t = topology::read(&u.root).unwrap();
    let cpu = t.allowed_core_cpus_of_node(0)[0];
    let caches = caches_of(&t, cpu, 0);
    let names: Vec<&str> = caches.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["L1d", "L2", "L3", "memory-side"]);
    // Where a random chase starts missing: a little before each cache is
    // full; DRAM (the memory-side cache) then Optane behind it.
    let c = curve(
        &[
            (28 << 10, 1.2),
            (640 << 10, 4.5),
            (20 << 20, 18.0),
            (64 << 30, 85.0),
        ],
        350.0,
    );
    let a = analyse_curve(PageKind::Thp, &c, &caches, 512 << 30);
    assert_eq!(a.plateaus.len(), 5, "{:?}", a.plateaus);
    for (i, m) in a.matches.iter().enumerate() {
        assert_eq!(m.plateau, Some(i), "{}", m.text);
    }
    assert!(
        a.matches[1].text.ends_with("matches L2 (1 MiB)"),
        "{}",
        a.matches[1].text
    );
    assert!(
        a.matches[3].text.starts_with("plateau ~85 ns up to ~")
            && a.matches[3].text.ends_with("matches memory-side (96 GiB)"),
        "{}",
        a.matches[3].text
    );
}

#[test]
fn a_curve_without_an_l3_step_or_far_memory_says_no_knee() {
    let u = common::unpack("memorysidecaches");
    let t = topology::read(&u.root).unwrap();
    let caches = caches_of(&t, t.allowed_core_cpus_of_node(0)[0], 0);
    // L2 straight to DRAM, flat to the end: no L3 and no memory-side knee.
    let c = curve(&[(28 << 10, 1.2), (640 << 10, 4.5)], 85.0);
    let a = analyse_curve(PageKind::Thp, &c, &caches, 512 << 30);
    assert_eq!(a.matches[0].plateau, Some(0));
    assert_eq!(a.matches[1].plateau, Some(1));
    assert_eq!(a.matches[2].text, "no knee near L3 (27.5 MiB)");
    assert_eq!(a.matches[3].text, "no knee near memory-side (96 GiB)");
    // A 1.2x bump at the L3 size is noise, not a level.
    let c = curve(&[(28 << 10, 1.2), (640 << 10, 4.5), (20 << 20, 70.0)], 85.0);
    let a = analyse_curve(PageKind::Thp, &c, &caches, 512 << 30);
    assert_eq!(a.matches[2].plateau, None, "{}", a.matches[2].text);
}

#[test]
fn chosen_cpus_resolve_to_their_nodes_on_an_eight_node_machine() {
    let u = common::unpack("64amd64-4s2n4ca2co");
    let t = topology::read(&u.root).unwrap();
    let node1 = t.allowed_cpus_of_node(1);
    let second = node1[1];
    let c = cpus::resolve(&t, &[second]).unwrap();
    assert_eq!(c.nodes(), vec![1]);
    assert_eq!(c.single_on(1).unwrap(), second);
    assert_eq!(c.rows(None).unwrap(), vec![1]);
    let e = c.rows(Some(&[0, 1])).unwrap_err().to_string();
    assert!(e.contains("none of these CPUs is on node 0"), "{e}");
    // One CPU on each of two nodes: two rows, each from its own CPU.
    let first0 = t.allowed_cpus_of_node(0)[0];
    let c = cpus::resolve(&t, &[first0, second]).unwrap();
    assert_eq!(c.rows(None).unwrap(), vec![0, 1]);
    assert_eq!(c.on_node(0), &[first0]);
}

#[test]
fn a_cpu_outside_the_cgroup_is_refused_naming_the_allowed_ones() {
    let u = common::unpack("32amd64-4s2n4c-cgroup2");
    let t = topology::read(&u.root).unwrap();
    let outside = t
        .cpus
        .iter()
        .find(|c| !c.allowed)
        .expect("the cgroup leaves some CPUs out")
        .os_index;
    let e = cpus::resolve(&t, &[outside]).unwrap_err().to_string();
    let allowed: Vec<u32> = t
        .cpus
        .iter()
        .filter(|c| c.allowed)
        .map(|c| c.os_index)
        .collect();
    assert_eq!(
        e,
        format!(
            "--cpus: CPU {outside} is not allowed for this process (allowed CPUs: {})",
            numaprobe_core::units::format_list(&allowed)
        )
    );
}
