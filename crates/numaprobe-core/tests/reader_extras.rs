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
