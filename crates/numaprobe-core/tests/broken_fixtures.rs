//! Bad input: broken copies of a real machine's dump. A malformed file that
//! decides the machine's shape must give an error naming that file and the
//! problem; a partial reading that still makes sense gives a warning and the
//! documented fallback; nothing panics.

mod common;

use numaprobe_core::topology::{self, TopologyError};
use std::path::Path;

/// Small and regular: 8 sockets, 8 nodes, 2 CPUs each, cpulist and cpumap.
const BASE: &str = "16amd64-8n2c";
const NODE: &str = "sys/devices/system/node";

fn write(root: &Path, rel: &str, content: &str) {
    std::fs::write(root.join(rel), content).expect("write into the unpacked copy");
}

/// The error's text, which must name `file` (a path ending) and say `what`.
fn assert_error_names(root: &Path, file: &str, what: &str) {
    match topology::read(root) {
        Ok(_) => panic!("{file}: expected an error, the read succeeded"),
        Err(e) => {
            let msg = e.to_string();
            assert!(
                matches!(e, TopologyError::Malformed { .. }),
                "{file}: not a Malformed error: {msg}"
            );
            assert!(
                msg.contains(&root.join(file).display().to_string()),
                "error does not name {file}: {msg}"
            );
            assert!(msg.contains(what), "error does not say `{what}`: {msg}");
        }
    }
}

#[test]
fn garbage_in_distance_names_the_file() {
    let u = common::unpack(BASE);
    let f = format!("{NODE}/node3/distance");
    write(&u.root, &f, "20 20 20 10 twenty 20 20 20\n");
    assert_error_names(&u.root, &f, "`twenty` is not a distance");
}

#[test]
fn wrong_size_distance_matrix_names_the_file() {
    let u = common::unpack(BASE);
    let f = format!("{NODE}/node1/distance");
    write(&u.root, &f, "20 10 20 20 20 20 20\n");
    assert_error_names(&u.root, &f, "7 distances for 8 online nodes");
}

#[test]
fn truncated_cpulist_names_the_file() {
    let u = common::unpack(BASE);
    let f = format!("{NODE}/node2/cpulist");
    // Cut mid-range: not even a list.
    write(&u.root, &f, "4-");
    assert_error_names(&u.root, &f, "not a number");
    // Cut after a complete number: a valid list, caught by the cpumap beside it.
    write(&u.root, &f, "4\n");
    assert_error_names(&u.root, &f, "but cpumap says 4-5");
}

#[test]
fn garbage_in_cpu_online_names_the_file() {
    let u = common::unpack(BASE);
    let f = "sys/devices/system/cpu/online";
    write(&u.root, f, "0-15,\n");
    assert_error_names(&u.root, f, "empty element");
}

#[test]
fn garbage_in_a_topology_id_names_the_file() {
    let u = common::unpack(BASE);
    let f = "sys/devices/system/cpu/cpu3/topology/physical_package_id";
    write(&u.root, f, "x1\n");
    assert_error_names(&u.root, f, "not an integer");
}

#[test]
fn missing_root_is_its_own_error() {
    let e = topology::read(Path::new("/nonexistent/numaprobe/root")).unwrap_err();
    assert!(matches!(e, TopologyError::NoRoot(_)), "{e}");
    assert!(e.to_string().contains("/nonexistent/numaprobe/root"));
}

#[test]
fn a_folder_without_sysfs_is_not_a_sysfs_root() {
    let dir = common::temp_dir("not-sysfs");
    std::fs::create_dir_all(dir.join("proc")).unwrap();
    let e = topology::read(&dir).unwrap_err();
    assert!(matches!(e, TopologyError::NotSysfs(_)), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn node_without_cpu_files_is_a_warning_and_memory_only() {
    let u = common::unpack(BASE);
    std::fs::remove_file(u.root.join(format!("{NODE}/node5/cpulist"))).unwrap();
    std::fs::remove_file(u.root.join(format!("{NODE}/node5/cpumap"))).unwrap();
    let t = topology::read(&u.root).expect("partial reading still makes sense");
    assert!(t.node(5).unwrap().cpus.is_empty());
    assert!(
        t.warnings.iter().any(|w| w.contains("node5")),
        "{:?}",
        t.warnings
    );
    // Its CPUs are still there, without a node, and said so.
    assert_eq!(t.cpu(10).unwrap().node, None);
    assert!(
        t.warnings.iter().any(|w| w.contains("10-11")),
        "{:?}",
        t.warnings
    );
}

#[test]
fn cpumap_alone_is_enough() {
    let u = common::unpack(BASE);
    for n in 0..8 {
        std::fs::remove_file(u.root.join(format!("{NODE}/node{n}/cpulist"))).unwrap();
    }
    let t = topology::read(&u.root).unwrap();
    assert_eq!(t.node(2).unwrap().cpus, vec![4, 5]);
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
}

#[test]
fn missing_online_files_fall_back_to_the_cpu_and_node_folders() {
    let u = common::unpack(BASE);
    std::fs::remove_file(u.root.join("sys/devices/system/cpu/online")).unwrap();
    std::fs::remove_file(u.root.join(format!("{NODE}/online"))).unwrap();
    let t = topology::read(&u.root).unwrap();
    assert_eq!(t.cpus.iter().filter(|c| c.online).count(), 16);
    assert_eq!(t.node_ids(), (0..8).collect::<Vec<_>>());
}

#[test]
fn empty_online_files_fall_back_to_the_folders() {
    let u = common::unpack(BASE);
    write(&u.root, "sys/devices/system/cpu/online", "\n");
    write(&u.root, &format!("{NODE}/online"), "\n");
    let t = topology::read(&u.root).unwrap();
    assert_eq!(t.cpus.iter().filter(|c| c.online).count(), 16);
    assert_eq!(t.nodes.len(), 8);
}

#[test]
fn garbage_in_a_cgroup_cpuset_names_the_file() {
    let u = common::unpack("16amd64-8n2c-cpusets");
    let f = "dev/cpuset/dummy/cpus";
    write(&u.root, f, "0-6,12-\n");
    assert_error_names(&u.root, f, "not a number");
}

#[test]
fn a_row_per_possible_node_is_cut_to_the_online_columns() {
    // offline-cpu0-node0: node0 is offline but node1/distance still has a
    // value for it.
    let u = common::unpack("offline-cpu0-node0");
    let t = topology::read(&u.root).unwrap();
    let d = t.distances.as_ref().unwrap();
    assert_eq!(d.node_ids, vec![1]);
    assert_eq!(d.matrix, vec![vec![10]]);
    assert!(
        t.warnings.iter().any(|w| w.contains("node1/distance")),
        "{:?}",
        t.warnings
    );
}

/// Files of CPUs other than cpu0 and cpu1 repeat what those two exercise;
/// leaving them out keeps the test quick.
fn is_repeat(root: &Path, p: &Path) -> bool {
    let rel = p
        .strip_prefix(root)
        .unwrap_or(p)
        .to_string_lossy()
        .into_owned();
    rel.strip_prefix("sys/devices/system/cpu/cpu")
        .and_then(|r| r.split('/').next())
        .and_then(|n| n.parse::<u32>().ok())
        .is_some_and(|n| n >= 2)
}

/// Every file of the dump replaced in turn by a few kinds of garbage: the
/// reader may refuse, but it must not panic.
#[test]
fn no_garbage_makes_the_reader_panic() {
    let u = common::unpack(BASE);
    let mut files = Vec::new();
    let mut stack = vec![u.root.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().filter_map(|e| e.ok()) {
            let p = e.path();
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                stack.push(p);
            } else if ft.is_file() && !is_repeat(&u.root, &p) {
                files.push(p);
            }
        }
    }
    assert!(files.len() > 50, "{}", files.len());
    let garbage: [&[u8]; 6] = [
        b"",
        b"\0\0\0",
        b"-1\n",
        b"99999999999999999999999\n",
        b"0-4294967295\n",
        b"\xff\xfe garbage, 1-,-3 \n",
    ];
    for f in &files {
        let original = std::fs::read(f).unwrap();
        for g in garbage {
            std::fs::write(f, g).unwrap();
            let _ = topology::read(&u.root);
        }
        std::fs::write(f, original).unwrap();
    }
}

#[test]
fn package_ids_that_contradict_the_masks_are_reported() {
    // Every CPU claims package -1 while the kernel's masks still split the
    // eight sockets: the ids are kept (they are what sysfs says) and the
    // contradiction is a warning.
    let u = common::unpack(BASE);
    for c in 0..16 {
        write(
            &u.root,
            &format!("sys/devices/system/cpu/cpu{c}/topology/physical_package_id"),
            "-1\n",
        );
    }
    let t = topology::read(&u.root).unwrap();
    assert!(t.cpus.iter().all(|c| c.package == Some(-1)));
    assert!(
        t.warnings
            .iter()
            .any(|w| w.contains("package_cpus says 0-1")),
        "{:?}",
        t.warnings
    );
}

#[test]
fn cgroup2_without_cpuset_files_in_the_leaf_uses_the_nearest_ancestor() {
    // On cgroup v2 a cgroup without the cpuset controller enabled is bound by
    // its parent's sets: move the leaf's files one level up.
    let u = common::unpack("32amd64-4s2n4c-cgroup2");
    let leaf = u.root.join("cgroup/unified/uid_2008/job_15389/step_0");
    let parent = u.root.join("cgroup/unified/uid_2008/job_15389");
    for f in ["cpuset.cpus.effective", "cpuset.mems.effective"] {
        std::fs::rename(leaf.join(f), parent.join(f)).unwrap();
    }
    write(&parent, "cpuset.cpus.effective", "8-15\n");
    let t = topology::read(&u.root).unwrap();
    assert_eq!(t.allowed.cpus, (8..16).collect::<Vec<_>>());
    assert_eq!(t.allowed.nodes, (0..6).collect::<Vec<_>>());
    assert_eq!(
        t.allowed.sources[0],
        "cgroup2:/cgroup/unified/uid_2008/job_15389/cpuset.cpus.effective"
    );
}

#[test]
fn cgroup2_without_the_cpuset_controller_restricts_nothing() {
    let u = common::unpack("32amd64-4s2n4c-cgroup2");
    write(
        &u.root,
        "cgroup/unified/cgroup.controllers",
        "cpu memory pids\n",
    );
    let t = topology::read(&u.root).unwrap();
    assert_eq!(t.allowed.cpus.len(), 32);
    assert!(t.allowed.sources.is_empty(), "{:?}", t.allowed.sources);
}
