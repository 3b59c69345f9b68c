//! Which nodes the main job's interleave check samples, on real machines'
//! sysfs dumps: a node holding several packages (a front-side-bus Xeon, or
//! firmware that interleaves memory), never a node of one package.

mod common;

use numaprobe_core::experiments::line_samples::{multi_package_nodes, packages_of_node};
use numaprobe_core::topology::sysfs;

#[test]
fn the_four_socket_front_side_bus_xeon_is_one_node_of_four_packages() {
    let u = common::unpack("16em64t-4s2c2t-offlines");
    let topo = sysfs::read(&u.root).unwrap();
    let multi = multi_package_nodes(&topo);
    assert_eq!(multi.len(), 1, "{multi:?}");
    assert_eq!(packages_of_node(&topo, multi[0]).len(), 4);
}

#[test]
fn a_node_per_package_is_not_checked() {
    // Eight Opteron nodes of two cores: each node is one package's.
    let u = common::unpack("16amd64-8n2c");
    let topo = sysfs::read(&u.root).unwrap();
    assert_eq!(topo.allowed_cpu_nodes().len(), 8);
    assert!(multi_package_nodes(&topo).is_empty());
    for n in topo.allowed_cpu_nodes() {
        assert_eq!(packages_of_node(&topo, n).len(), 1, "node {n}");
    }
}
