//! `analysis::compare` on real machines' sysfs dumps: the differences it
//! names between two dumps are the ones the dumps really have (a cpuset
//! that takes CPUs and nodes away, an offline CPU; two different machines),
//! a dump equals itself, and `check` of a saved topology or binding against
//! another dump names each moved or missing CPU.

mod common;

use numaprobe_core::analysis::binding::{self, Request, Smt, Strategy};
use numaprobe_core::analysis::compare::{self, check, topo};
use numaprobe_core::model::diff::{Difference, Section};
use numaprobe_core::model::pin::PinReport;
use numaprobe_core::topology::{self, Topology};

fn read(name: &str) -> (common::Unpacked, Topology) {
    let u = common::unpack(name);
    let t = topology::read(&u.root).unwrap_or_else(|e| panic!("{name}: {e}"));
    (u, t)
}

/// A dump as `check` sees it: its kernel unknown, no measurements.
fn this(t: &Topology) -> check::This<'_> {
    check::This {
        topology: t,
        kernel: None,
        measured: None,
    }
}

fn item<'a>(d: &'a [Difference], item: &str) -> &'a Difference {
    d.iter()
        .find(|x| x.item == item)
        .unwrap_or_else(|| panic!("no difference {item:?} in {d:#?}"))
}

#[test]
fn every_dump_equals_itself() {
    for name in ["16amd64-8n2c", "64amd64-4s2n4ca2co"] {
        let (_u, t) = read(name);
        let d = topo::topology(&t, &t, topo::ALL);
        assert!(d.is_empty(), "{name}: {d:#?}");
    }
}

#[test]
fn a_cpuset_and_an_offline_cpu_are_named() {
    // The same Opteron machine dumped twice: once whole, once inside a
    // cpuset with CPU 4 offline (hwloc's 16amd64-8n2c(-cpusets)).
    let (_a, a) = read("16amd64-8n2c");
    let (_b, b) = read("16amd64-8n2c-cpusets");
    let d = topo::topology(&a, &b, topo::ALL);
    let cpu4 = item(&d, "CPU 4");
    assert_eq!(cpu4.section, Section::Cpus);
    assert!(cpu4.a.starts_with("package 2, core 0, node 2"), "{cpu4:?}");
    assert_eq!(cpu4.b, "offline");
    assert_eq!(item(&d, "online CPUs").b, "0-3,5-15");
    // What the cpuset allows is read from the dump, not written here: it
    // must be a strict subset of the whole machine's, without CPU 4.
    let allowed = item(&d, "allowed CPUs");
    assert_eq!(allowed.a, "0-15");
    assert_ne!(allowed.b, allowed.a);
    assert!(!b.allowed.cpus.contains(&4));
    assert_eq!(
        allowed.b,
        numaprobe_core::units::format_list(&b.allowed.cpus)
    );
    assert_eq!(item(&d, "node 2: CPUs").b, "5");
    // Nothing of the firmware differs: same SLIT, same packages count.
    assert!(!d.iter().any(|x| x.section == Section::Slit), "{d:#?}");
    assert!(!d.iter().any(|x| x.item == "packages"), "{d:#?}");
}

#[test]
fn two_machines_differ_in_packages_nodes_and_slit() {
    let (_a, a) = read("8amd64-4n2c");
    let (_b, b) = read("16amd64-8n2c");
    let d = topo::topology(&a, &b, topo::ALL);
    assert_eq!(
        (
            item(&d, "packages").a.as_str(),
            item(&d, "packages").b.as_str()
        ),
        ("4", "8")
    );
    assert_eq!(item(&d, "NUMA nodes").b, "0-7");
    assert!(d.iter().any(|x| x.section == Section::Slit), "{d:#?}");
}

#[test]
fn check_a_saved_topology_against_another_dump() {
    let (_a, a) = read("16amd64-8n2c");
    let (_b, b) = read("16amd64-8n2c-cpusets");
    let dir = common::TempDir::new("check-topo");
    let saved = dir.path().join("t.json");
    std::fs::write(&saved, numaprobe_core::render::topo::to_json(&a)).unwrap();
    let expect = compare::load(&saved, &compare::EXPECT).unwrap();
    let same = check::check(&expect, &this(&a), &check::Options::default()).unwrap();
    assert!(same.matches, "{:#?}", same.differences);
    let r = check::check(&expect, &this(&b), &check::Options::default()).unwrap();
    assert!(!r.matches);
    assert_eq!(r.expect_kind, "topo");
    assert_eq!(item(&r.differences, "CPU 4").b, "offline");
    // check leaves memory and firmware to diff.
    assert!(r
        .differences
        .iter()
        .all(|d| check::sections().contains(&d.section)));
}

#[test]
fn check_a_saved_binding_against_another_dump() {
    let (_a, a) = read("16amd64-8n2c");
    let (_b, b) = read("16amd64-8n2c-cpusets");
    let req = Request {
        threads: 16,
        strategy: Strategy::Scatter,
        smt: Smt::Use,
        nodes: None,
    };
    let bind = binding::bind(&a, &req).unwrap();
    let pin = PinReport::new(&req, &bind);
    let dir = common::TempDir::new("check-pin");
    let saved = dir.path().join("p.json");
    std::fs::write(&saved, numaprobe_core::render::to_json(&pin)).unwrap();
    let expect = compare::load(&saved, &compare::EXPECT).unwrap();
    assert!(
        check::check(&expect, &this(&a), &check::Options::default())
            .unwrap()
            .matches
    );
    let r = check::check(&expect, &this(&b), &check::Options::default()).unwrap();
    assert_eq!(r.expect_kind, "pin");
    // Every CPU of the binding that the cpuset takes away is named, and
    // only those: each line is a binding difference naming its CPU.
    let named: Vec<u32> = r
        .differences
        .iter()
        .map(|d| d.item.rsplit(' ').next().unwrap().parse().unwrap())
        .collect();
    let gone: Vec<u32> = pin
        .cpus
        .iter()
        .copied()
        .filter(|c| !b.allowed.cpus.contains(c))
        .collect();
    let mut named_sorted = named.clone();
    named_sorted.sort_unstable();
    let mut gone_sorted = gone.clone();
    gone_sorted.sort_unstable();
    assert_eq!(named_sorted, gone_sorted, "{:#?}", r.differences);
    let cpu4 = r
        .differences
        .iter()
        .find(|d| d.item.ends_with("CPU 4"))
        .unwrap();
    assert_eq!(cpu4.b, "offline");
}
