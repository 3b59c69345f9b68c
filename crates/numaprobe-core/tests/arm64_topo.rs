//! Arm64 topology end to end on sysfs trees written here the way an arm64
//! kernel lays them out from the PPTT: clusters (`cluster_id`,
//! `cluster_cpus_list`), heterogeneous cores (`cpu_capacity`), a
//! system-level cache shared across clusters and packages, a CPU-less node
//! (HBM or GPU memory), and a cpuinfo without `model name` but with MIDR
//! fields. The x86 dumps in tests/fixtures have none of this.

mod common;

use numaprobe_core::analysis::binding::{bind, Request, Smt, Strategy};
use numaprobe_core::render::topo;
use numaprobe_core::topology::{self, clusters, Topology};
use std::path::Path;

fn write(root: &Path, rel: &str, content: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, content).unwrap();
}

fn list(v: &[u32]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(",")
        + "\n"
}

/// One CPU of the tree: its package, cluster id, cluster members, package
/// members, capacity; `slc` is the CPUs sharing the level-3 cache.
struct ArmCpu {
    pkg: u32,
    cluster: u32,
    cluster_cpus: Vec<u32>,
    pkg_cpus: Vec<u32>,
    capacity: u32,
}

fn write_tree(root: &Path, cpus: &[ArmCpu], slc: &[u32], nodes: &[(u32, Vec<u32>, u64)]) {
    let n = cpus.len() as u32;
    let c = "sys/devices/system/cpu";
    write(root, &format!("{c}/possible"), &format!("0-{}\n", n - 1));
    write(root, &format!("{c}/online"), &format!("0-{}\n", n - 1));
    for (i, cpu) in cpus.iter().enumerate() {
        let d = format!("{c}/cpu{i}");
        let t = format!("{d}/topology");
        write(
            root,
            &format!("{t}/physical_package_id"),
            &format!("{}\n", cpu.pkg),
        );
        write(root, &format!("{t}/core_id"), &format!("{i}\n"));
        write(
            root,
            &format!("{t}/cluster_id"),
            &format!("{}\n", cpu.cluster),
        );
        write(
            root,
            &format!("{t}/cluster_cpus_list"),
            &list(&cpu.cluster_cpus),
        );
        write(root, &format!("{t}/core_cpus_list"), &format!("{i}\n"));
        write(
            root,
            &format!("{t}/package_cpus_list"),
            &list(&cpu.pkg_cpus),
        );
        write(
            root,
            &format!("{d}/cpu_capacity"),
            &format!("{}\n", cpu.capacity),
        );
        let own = format!("{i}\n");
        for (k, (level, kind, size, shared)) in [
            (1, "Data", "64K", own.clone()),
            (1, "Instruction", "64K", own.clone()),
            (2, "Unified", "1024K", own.clone()),
            (3, "Unified", "32768K", list(slc)),
        ]
        .into_iter()
        .enumerate()
        {
            let x = format!("{d}/cache/index{k}");
            write(root, &format!("{x}/level"), &format!("{level}\n"));
            write(root, &format!("{x}/type"), &format!("{kind}\n"));
            write(root, &format!("{x}/size"), &format!("{size}\n"));
            write(root, &format!("{x}/coherency_line_size"), "64\n");
            write(root, &format!("{x}/shared_cpu_list"), &shared);
        }
    }
    let ids: Vec<u32> = nodes.iter().map(|n| n.0).collect();
    write(root, "sys/devices/system/node/online", &list(&ids));
    write(root, "sys/devices/system/node/possible", &list(&ids));
    for (id, cpus, gib) in nodes {
        let d = format!("sys/devices/system/node/node{id}");
        write(
            root,
            &format!("{d}/cpulist"),
            &format!("{}\n", list(cpus).trim()),
        );
        let kb = gib << 20;
        write(
            root,
            &format!("{d}/meminfo"),
            &format!("Node {id} MemTotal: {kb} kB\nNode {id} MemFree: {kb} kB\n"),
        );
        let dist: Vec<String> = ids
            .iter()
            .map(|o| if o == id { "10" } else { "30" }.to_string())
            .collect();
        write(root, &format!("{d}/distance"), &(dist.join(" ") + "\n"));
    }
    // arm64's cpuinfo: no `model name`, the MIDR's fields instead.
    let mut info = String::new();
    for i in 0..n {
        info.push_str(&format!(
            "processor\t: {i}\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n\n"
        ));
    }
    write(root, "proc/cpuinfo", &info);
}

/// One package of 8 CPUs: a LITTLE cluster {0,2,4,6} (capacity 446) and a
/// big one {1,3,5,7} (1024), numbered alternately so "the first 4 CPU
/// numbers" straddle both; an L3 shared by all 8; node 1 holds memory and
/// no CPU (HBM, or a GPU's memory on Grace-Hopper).
fn dynamiq(root: &Path) -> Topology {
    let all: Vec<u32> = (0..8).collect();
    let cpus: Vec<ArmCpu> = (0..8u32)
        .map(|i| ArmCpu {
            pkg: 0,
            cluster: i % 2,
            cluster_cpus: (0..8).filter(|x| x % 2 == i % 2).collect(),
            pkg_cpus: all.clone(),
            capacity: if i % 2 == 0 { 446 } else { 1024 },
        })
        .collect();
    write_tree(root, &cpus, &all, &[(0, all.clone(), 8), (1, vec![], 16)]);
    topology::read(root).unwrap()
}

/// Two packages of two 2-core clusters each (cluster ids repeat across
/// packages), one node per package, and a system-level cache shared by
/// all 8 CPUs, across both packages.
fn two_packages(root: &Path) -> Topology {
    let all: Vec<u32> = (0..8).collect();
    let cpus: Vec<ArmCpu> = (0..8u32)
        .map(|i| ArmCpu {
            pkg: i / 4,
            cluster: (i / 2) % 2,
            cluster_cpus: vec![i / 2 * 2, i / 2 * 2 + 1],
            pkg_cpus: (i / 4 * 4..i / 4 * 4 + 4).collect(),
            capacity: 1024,
        })
        .collect();
    write_tree(
        root,
        &cpus,
        &all,
        &[(0, vec![0, 1, 2, 3], 8), (1, vec![4, 5, 6, 7], 8)],
    );
    topology::read(root).unwrap()
}

fn req(threads: usize, strategy: Strategy) -> Request {
    Request {
        threads,
        strategy,
        smt: Smt::Avoid,
        nodes: None,
    }
}

#[test]
fn clusters_and_capacities_are_read() {
    let d = common::TempDir::new("arm64-dynamiq");
    let t = dynamiq(d.path());
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    let c3 = t.cpu(3).unwrap();
    assert_eq!(c3.cluster, Some(1));
    assert_eq!(c3.cluster_cpus, [1, 3, 5, 7]);
    assert_eq!(c3.capacity, Some(1024));
    assert_eq!(t.cpu(2).unwrap().capacity, Some(446));
    assert_eq!(t.cpu_model.as_deref(), Some("ARM Neoverse-N1"));
    let cl = clusters::clusters(&t);
    assert_eq!(cl.len(), 2);
    assert_eq!((cl[0].cpus.as_slice(), cl[0].cores), (&[0, 2, 4, 6][..], 4));
    // The CPU-less node is there, with its memory.
    assert!(t.node(1).unwrap().cpus.is_empty());
    assert_eq!(t.node(1).unwrap().memory_bytes, 16 << 30);
}

#[test]
fn topo_shows_clusters_heterogeneity_and_the_shared_l3() {
    let d = common::TempDir::new("arm64-topo");
    let t = dynamiq(d.path());
    let text = topo::to_text(&t);
    assert!(text.contains("CPU model: ARM Neoverse-N1"), "{text}");
    assert!(
        text.contains(
            "big.LITTLE / heterogeneous: capacities 1024 (cpus 1,3,5,7), 446 (cpus 0,2,4,6)"
        ),
        "{text}"
    );
    assert!(text.contains("Clusters"), "{text}");
    assert!(text.contains("(1 without CPUs)"), "{text}");
    let md = topo::to_markdown(&t);
    assert!(md.contains("**Cores**: big.LITTLE / heterogeneous"), "{md}");
    assert!(md.contains("Clusters"), "{md}");
    let json: serde_json::Value = serde_json::from_str(&topo::to_json(&t)).unwrap();
    assert_eq!(
        json["cpus"][5]["cluster_cpus"],
        serde_json::json!([1, 3, 5, 7])
    );
    assert_eq!(json["cpus"][0]["capacity"], 446);
    assert_eq!(json["clusters"][1]["cpus"], serde_json::json!([1, 3, 5, 7]));
    assert_eq!(json["clusters"][1]["capacities"], serde_json::json!([1024]));
    assert_eq!(json["capacities"][0]["capacity"], 1024);
    assert_eq!(
        json["capacities"][1]["cpus"],
        serde_json::json!([0, 2, 4, 6])
    );
    let csv = topo::cpu_table(&t).to_csv();
    assert!(csv.lines().nth(1).unwrap().contains(",0,446,"), "{csv}");
    let l3: Vec<_> = t.caches.iter().filter(|c| c.level == 3).collect();
    assert_eq!(l3.len(), 1);
    assert_eq!(l3[0].cpus, (0..8).collect::<Vec<_>>());
}

#[test]
fn compact_fills_one_cluster_and_scatter_spreads_over_clusters() {
    let d = common::TempDir::new("arm64-bind");
    let t = dynamiq(d.path());
    let b = bind(&t, &req(4, Strategy::Compact)).unwrap();
    assert_eq!(b.cpus(), [0, 2, 4, 6], "one cluster first, not CPUs 0-3");
    assert!(
        b.naive_problems[0].contains("CPUs 0-3 would spread 4 threads over 2 clusters"),
        "{:?}",
        b.naive_problems
    );
    let b = bind(&t, &req(2, Strategy::Scatter)).unwrap();
    let cl: Vec<i64> = b
        .cpus()
        .iter()
        .map(|&c| t.cpu(c).unwrap().cluster.unwrap())
        .collect();
    assert_eq!(cl, [0, 1], "two threads, two clusters");
}

#[test]
fn a_system_level_cache_spans_packages_and_scatter_uses_every_cluster() {
    let d = common::TempDir::new("arm64-slc");
    let t = two_packages(d.path());
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    let l3: Vec<_> = t.caches.iter().filter(|c| c.level == 3).collect();
    assert_eq!(l3.len(), 1, "one system-level cache");
    assert_eq!(l3[0].cpus, (0..8).collect::<Vec<_>>());
    let text = topo::to_text(&t);
    assert!(text.contains("Clusters"), "{text}");
    assert!(!text.contains("heterogeneous"), "{text}");
    // Cluster ids repeat across packages: four clusters, not two.
    assert_eq!(clusters::clusters(&t).len(), 4);
    let b = bind(&t, &req(4, Strategy::Scatter)).unwrap();
    let mut got = b.cpus();
    got.sort_unstable();
    assert_eq!(got, [0, 2, 4, 6], "one thread per cluster");
    let b = bind(&t, &req(2, Strategy::Compact)).unwrap();
    assert_eq!(b.cpus(), [0, 1], "one cluster first");
}

#[test]
fn documents_without_the_new_fields_still_load() {
    let d = common::TempDir::new("arm64-old-json");
    let t = dynamiq(d.path());
    let mut v: serde_json::Value = serde_json::from_str(&topo::to_json(&t)).unwrap();
    for c in v["cpus"].as_array_mut().unwrap() {
        let o = c.as_object_mut().unwrap();
        o.remove("cluster_cpus");
        o.remove("capacity");
        o.remove("cluster");
    }
    let top = v.as_object_mut().unwrap();
    top.remove("clusters");
    top.remove("capacities");
    let back: numaprobe_core::model::topo::TopoReport = serde_json::from_value(v).unwrap();
    assert!(back
        .cpus
        .iter()
        .all(|c| c.capacity.is_none() && c.cluster_cpus.is_empty()));
}

#[test]
fn scatter_names_the_cluster_the_first_cpu_numbers_share() {
    // Clusters 0-3 and 4-7 in one package: CPUs 0,1 are one cluster.
    let d = common::TempDir::new("arm64-contiguous");
    let all: Vec<u32> = (0..8).collect();
    let cpus: Vec<ArmCpu> = (0..8u32)
        .map(|i| ArmCpu {
            pkg: 0,
            cluster: i / 4,
            cluster_cpus: (i / 4 * 4..i / 4 * 4 + 4).collect(),
            pkg_cpus: all.clone(),
            capacity: 1024,
        })
        .collect();
    write_tree(d.path(), &cpus, &all, &[(0, all.clone(), 8)]);
    let t = topology::read(d.path()).unwrap();
    let b = bind(&t, &req(2, Strategy::Scatter)).unwrap();
    assert_eq!(b.cpus(), [0, 4]);
    assert_eq!(
        b.naive_problems,
        ["CPUs 0-1 would use only 1 cluster(s), sharing their caches; scatter uses 2"]
    );
}
