//! Parts of the reader the dumps exercise little or not at all, tried on
//! copies of a dump with files added or taken away: a kernel without NUMA,
//! memory tiers, the THP mode, HMAT figures.

mod common;

use numaprobe_core::topology;
use std::path::Path;

fn write(root: &Path, rel: &str, content: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, content).unwrap();
}

#[test]
fn a_kernel_without_numa_is_one_node_with_proc_meminfo() {
    let u = common::unpack("16amd64-8n2c");
    std::fs::remove_dir_all(u.root.join("sys/devices/system/node")).unwrap();
    write(
        &u.root,
        "proc/meminfo",
        "MemTotal:  1024 kB\nMemFree:  512 kB\n",
    );
    let t = topology::read(&u.root).unwrap();
    assert_eq!(t.node_ids(), vec![0]);
    assert_eq!(t.nodes[0].cpus, (0..16).collect::<Vec<_>>());
    assert_eq!(t.nodes[0].memory_bytes, 1024 * 1024);
    assert_eq!(t.nodes[0].free_bytes, 512 * 1024);
    assert!(t.distances.is_none());
    assert!(t.cpus.iter().all(|c| c.node == Some(0)));
    assert!(t.warnings.iter().any(|w| w.contains("one NUMA node")));
}

#[test]
fn memory_tiers_and_thp_mode_are_read() {
    let u = common::unpack("16amd64-8n2c");
    let tiers = "sys/devices/virtual/memory_tiering";
    write(&u.root, &format!("{tiers}/memory_tier4/nodelist"), "0-5\n");
    write(&u.root, &format!("{tiers}/memory_tier22/nodelist"), "6-7\n");
    write(
        &u.root,
        "sys/kernel/mm/transparent_hugepage/enabled",
        "[always] madvise never\n",
    );
    let t = topology::read(&u.root).unwrap();
    assert_eq!(t.memory_tiers.len(), 2);
    assert_eq!(t.memory_tiers[0].id, 4);
    assert_eq!(t.memory_tiers[0].nodes, (0..6).collect::<Vec<_>>());
    assert_eq!(t.memory_tiers[1].nodes, vec![6, 7]);
    assert_eq!(t.thp_mode.as_deref(), Some("always"));
}

#[test]
fn hmat_figures_are_read_and_zero_means_not_given() {
    let u = common::unpack("memorysidecaches");
    let d = "sys/devices/system/node/node2/access1/initiators";
    write(&u.root, &format!("{d}/read_latency"), "150\n");
    write(&u.root, &format!("{d}/write_latency"), "0\n");
    write(&u.root, &format!("{d}/read_bandwidth"), "40000\n");
    std::fs::create_dir_all(u.root.join(format!("{d}/node0"))).unwrap();
    let t = topology::read(&u.root).unwrap();
    let h = t
        .hmat
        .iter()
        .find(|h| h.node == 2 && h.access_class == 1)
        .expect("access1 of node 2");
    assert_eq!(h.initiators, vec![0]);
    assert_eq!(h.read_latency_ns, Some(150));
    assert_eq!(h.write_latency_ns, None);
    assert_eq!(h.read_bandwidth_mbps, Some(40000));
    assert_eq!(h.write_bandwidth_mbps, None);
    // The dump's own access0 entries are all zeros: present, figures null.
    let h0 = t
        .hmat
        .iter()
        .find(|h| h.node == 2 && h.access_class == 0)
        .unwrap();
    assert_eq!(h0.initiators, vec![2]);
    assert_eq!(h0.read_latency_ns, None);
}

#[test]
fn pci_devices_carry_kind_and_node() {
    let u = common::unpack("40intel64-2g2n4c+pcilocality");
    let t = topology::read(&u.root).unwrap();
    let ib = t
        .pci_devices
        .iter()
        .find(|d| d.address == "0000:43:00.0")
        .unwrap();
    assert_eq!(ib.kind, "network");
    assert_eq!(ib.numa_node, Some(2));
    let vga = t.pci_devices.iter().find(|d| d.kind == "gpu").unwrap();
    assert_eq!(vga.numa_node, None, "numa_node -1 reads as unknown");
}

/// Firmware listing every CPU in every node: read as hwloc reads it, one
/// node (the lowest-numbered) with every CPU and its own memory, the other
/// nodes left out with their memory and distances, and one warning. On this
/// same tree (the 16amd64-8n2c dump with every node's `cpulist` `0-15` and
/// `cpumap` `0000ffff`), `lstopo-no-graphics --input DIR` (hwloc 2.9.0,
/// Debian 12, 2026-11-27) prints `Machine (8190MB total)` and one
/// `NUMANode L#0 (P#0 8190MB)` above the 8 packages.
#[test]
fn every_cpu_in_every_node_reads_as_hwloc_does() {
    let u = common::unpack("16amd64-8n2c");
    let node = "sys/devices/system/node";
    for n in 0..8 {
        write(&u.root, &format!("{node}/node{n}/cpulist"), "0-15\n");
        write(&u.root, &format!("{node}/node{n}/cpumap"), "0000ffff\n");
    }
    let t = topology::read(&u.root).expect("overlapping masks are readable");
    assert_eq!(t.node_ids(), vec![0]);
    assert_eq!(t.nodes[0].cpus, (0..16).collect::<Vec<u32>>());
    assert_eq!(
        t.nodes[0].memory_bytes,
        8386704 * 1024,
        "node 0's own memory only"
    );
    assert!(t.cpus.iter().all(|c| c.node == Some(0)));
    let packages: std::collections::BTreeSet<i64> =
        t.cpus.iter().filter_map(|c| c.package).collect();
    assert_eq!(packages.len(), 8, "packages are not touched");
    let d = t.distances.as_ref().expect("node 0's own distance");
    assert_eq!(
        (d.node_ids.clone(), d.matrix.clone()),
        (vec![0], vec![vec![10]])
    );
    let w: Vec<&String> = t
        .warnings
        .iter()
        .filter(|w| w.contains("lower-numbered node already lists"))
        .collect();
    assert_eq!(w.len(), 1, "{:?}", t.warnings);
    assert!(
        w[0].contains("nodes 1-7") && w[0].contains("1 NUMA node"),
        "{}",
        w[0]
    );

    // Only nodes 4 and 5 claim each other's CPUs: node 5 goes (its CPUs
    // 10-11 are in no node, as hwloc leaves them under the machine), the
    // distance table loses its row and column, the rest is untouched.
    let u = common::unpack("16amd64-8n2c");
    write(&u.root, &format!("{node}/node5/cpulist"), "8-11\n");
    write(&u.root, &format!("{node}/node5/cpumap"), "00000f00\n");
    let t = topology::read(&u.root).unwrap();
    assert_eq!(t.node_ids(), vec![0, 1, 2, 3, 4, 6, 7]);
    assert_eq!(t.cpu(10).unwrap().node, None);
    assert_eq!(t.cpu(8).unwrap().node, Some(4));
    let d = t.distances.as_ref().unwrap();
    assert_eq!(d.node_ids, vec![0, 1, 2, 3, 4, 6, 7]);
    assert!(d.matrix.iter().all(|r| r.len() == 7));
}

#[test]
fn memory_side_caches_are_read_and_queried_per_node() {
    let u = common::unpack("memorysidecaches");
    let t = topology::read(&u.root).unwrap();
    assert!(!t.memory_side_caches.is_empty());
    for n in t.node_ids() {
        let on_disk = u
            .root
            .join(format!("sys/devices/system/node/node{n}/memory_side_cache"));
        let levels = std::fs::read_dir(&on_disk)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .filter(|e| e.file_name().to_string_lossy().starts_with("index"))
                    .count()
            })
            .unwrap_or(0);
        let got = t.memory_side_cache(n);
        assert_eq!(got.len(), levels, "node {n}");
        for c in got {
            assert_eq!(c.node, n);
            let size: u64 = std::fs::read_to_string(on_disk.join(format!("index{}/size", c.level)))
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            assert_eq!(c.size_bytes, Some(size));
        }
    }
    // A machine without them answers with nothing.
    let u = common::unpack("16amd64-8n2c");
    let t = topology::read(&u.root).unwrap();
    assert!(t.memory_side_cache(0).is_empty());
}

#[test]
fn memory_side_cache_codes_and_empty_values() {
    let u = common::unpack("16amd64-8n2c");
    let d = "sys/devices/system/node/node1/memory_side_cache/index1";
    write(&u.root, &format!("{d}/size"), "\n");
    write(&u.root, &format!("{d}/line_size"), "64\n");
    write(&u.root, &format!("{d}/indexing"), "0\n");
    write(&u.root, &format!("{d}/write_policy"), "1\n");
    let t = topology::read(&u.root).unwrap();
    let c = t.memory_side_cache(1);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].size_bytes, None, "empty size is unknown");
    assert_eq!(c[0].line_size, Some(64));
    assert_eq!(c[0].indexing, "direct-mapped");
    assert_eq!(c[0].write_policy, "write-through");
    assert!(
        t.warnings.iter().any(|w| w.contains("index1/size")),
        "{:?}",
        t.warnings
    );
}

#[test]
fn cpu_model_comes_from_proc_cpuinfo_under_the_root() {
    let u = common::unpack("16amd64-8n2c");
    let text = std::fs::read_to_string(u.root.join("proc/cpuinfo")).unwrap();
    let first = text
        .lines()
        .find_map(|l| {
            l.split_once(':')
                .filter(|(k, _)| k.trim() == "model name")
                .map(|(_, v)| v.split_whitespace().collect::<Vec<_>>().join(" "))
        })
        .unwrap();
    let t = topology::read(&u.root).unwrap();
    assert_eq!(t.cpu_model.as_deref(), Some(first.as_str()));
    write(
        &u.root,
        "proc/cpuinfo",
        "processor : 0\nmodel name : A\n\nprocessor : 1\nmodel name : B\n",
    );
    assert_eq!(
        topology::read(&u.root).unwrap().cpu_model.as_deref(),
        Some("A / B")
    );
    std::fs::remove_file(u.root.join("proc/cpuinfo")).unwrap();
    assert_eq!(topology::read(&u.root).unwrap().cpu_model, None);
}
