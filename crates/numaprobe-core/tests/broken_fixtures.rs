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

/// The files of a dump's `sys/devices/system` and `proc` (cpu0 and cpu1
/// only, see `is_repeat`).
fn sweep_files(root: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![root.join("sys/devices/system"), root.join("proc")];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.filter_map(|e| e.ok()) {
            let p = e.path();
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                stack.push(p);
            } else if ft.is_file() && !is_repeat(root, &p) {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// Every file replaced in turn by `garbage`: the reader may refuse, but it
/// must not panic, and an empty file is never a failed read (it reads as
/// missing, with hwloc's fallback).
fn sweep(name: &str, garbage: &[&[u8]]) -> usize {
    let u = common::unpack(name);
    let files = sweep_files(&u.root);
    let mut empty_fails = Vec::new();
    for f in &files {
        let original = std::fs::read(f).unwrap();
        for &g in garbage {
            std::fs::write(f, g).unwrap();
            let got = topology::read(&u.root);
            if g.is_empty() {
                if let Err(e) = got {
                    empty_fails.push(format!("{}: {e}", f.display()));
                }
            }
        }
        std::fs::write(f, original).unwrap();
    }
    assert!(
        empty_fails.is_empty(),
        "{name}: an empty file failed the read:\n{}",
        empty_fails.join("\n")
    );
    files.len()
}

#[test]
fn no_garbage_makes_the_reader_panic() {
    let garbage: [&[u8]; 6] = [
        b"",
        b"\0\0\0",
        b"-1\n",
        b"99999999999999999999999\n",
        b"0-4294967295\n",
        b"\xff\xfe garbage, 1-,-3 \n",
    ];
    assert!(sweep(BASE, &garbage) > 50);
}

/// The same sweep, empty files only, over the dumps whose files are odd
/// (old kernels, no `/proc`, -1 ids, edited masks, no `node/`): where a
/// reader trips. (All dumps with six kinds of garbage take minutes.)
#[test]
fn no_empty_file_fails_the_read_on_the_odd_dumps() {
    for name in [
        "24em64t-2n6c2t+2mic.olddriver",
        "28em64t-2s2n7c-buggycoresiblings",
        "2i386-2c-nohugepage",
        "40intel64-4n10c+pci-conflicts",
        "4ia64-4s",
        "8amd64-4n2c",
        "8em64t-2s4c-asymcaches",
        "8em64t-4c2t",
        "8ia64-4s2c",
        "memorysidecaches",
        "offline-cpu0-node0",
    ] {
        assert!(sweep(name, &[b""]) > 10, "{name}");
    }
}

#[test]
fn unknown_package_ids_still_give_the_masks_packages() {
    // Every CPU claims package -1 (POWER, s390, old Itanium kernels) while
    // the kernel's masks still split the eight sockets: the masks make the
    // packages, numbered in order of their lowest CPU; -1 stays the label.
    let u = common::unpack(BASE);
    for c in 0..16 {
        write(
            &u.root,
            &format!("sys/devices/system/cpu/cpu{c}/topology/physical_package_id"),
            "-1\n",
        );
    }
    let t = topology::read(&u.root).unwrap();
    assert!(t.cpus.iter().all(|c| c.package_id == Some(-1)));
    for c in &t.cpus {
        let mask_pkg = c.os_index / 2;
        assert_eq!(c.package, Some(mask_pkg as i64), "cpu{}", c.os_index);
    }
    assert!(
        t.warnings.iter().any(|w| w.contains("-1")),
        "{:?}",
        t.warnings
    );
}

#[test]
fn repeated_package_ids_still_give_the_masks_packages() {
    // Two sockets per id: the masks still tell the eight apart.
    let u = common::unpack(BASE);
    for c in 0..16u32 {
        write(
            &u.root,
            &format!("sys/devices/system/cpu/cpu{c}/topology/physical_package_id"),
            &format!("{}\n", c / 4),
        );
    }
    let t = topology::read(&u.root).unwrap();
    let keys: std::collections::BTreeSet<i64> = t.cpus.iter().filter_map(|c| c.package).collect();
    assert_eq!(keys.len(), 8, "{keys:?}");
    assert_eq!(t.cpu(2).unwrap().package_id, Some(0));
    assert_ne!(t.cpu(2).unwrap().package, t.cpu(0).unwrap().package);
    assert!(
        t.warnings.iter().any(|w| w.contains("repeated")),
        "{:?}",
        t.warnings
    );
}

#[test]
fn empty_attribute_files_give_warnings_and_hwlocs_fallbacks() {
    let u = common::unpack(BASE);
    let cpu = "sys/devices/system/cpu";
    // cpuN/online only counts when the global list is missing.
    std::fs::remove_file(u.root.join(format!("{cpu}/online"))).unwrap();
    write(&u.root, &format!("{cpu}/cpu5/online"), "");
    write(&u.root, &format!("{cpu}/cpu6/online"), "0\n");
    write(&u.root, &format!("{cpu}/cpu7/topology/core_id"), "\n");
    for c in 0..16 {
        let d = format!("{cpu}/cpu{c}/cache/index2");
        if u.root.join(&d).is_dir() {
            write(&u.root, &format!("{d}/size"), "");
        }
    }
    write(&u.root, &format!("{NODE}/node4/distance"), "\n");
    let t = topology::read(&u.root).expect("empty files are not errors");
    assert!(t.cpu(5).unwrap().online, "empty online reads as online");
    assert!(!t.cpu(6).unwrap().online);
    assert_eq!(t.cpu(7).unwrap().core, None);
    assert!(t.distances.is_none(), "empty distance: no SLIT");
    let l2: Vec<_> = t.caches.iter().filter(|c| c.level == 2).collect();
    assert!(!l2.is_empty() && l2.iter().all(|c| c.size_bytes.is_none()));
    for what in [
        "cpu*/online: empty or unreadable for CPUs 5",
        "cpu*/topology/core_id: empty or unreadable for CPUs 7",
        "node4/distance: empty",
        "cpu*/cache/index2/size: empty or unreadable for CPUs 0-",
    ] {
        assert!(
            t.warnings.iter().any(|w| w.contains(what)),
            "no warning `{what}`: {:?}",
            t.warnings
        );
    }
}

#[test]
fn an_unreadable_file_reads_as_missing_with_a_warning() {
    // A folder where a file should be fails to read on every user (root
    // included, unlike a permission bit).
    let u = common::unpack(BASE);
    let f = u.root.join(format!("{NODE}/node2/meminfo"));
    std::fs::remove_file(&f).unwrap();
    std::fs::create_dir(&f).unwrap();
    let t = topology::read(&u.root).expect("an unreadable file is not an error");
    assert_eq!(t.node(2).unwrap().memory_bytes, 0);
    assert!(
        t.warnings
            .iter()
            .any(|w| w.contains("node2/meminfo: empty or unreadable")),
        "{:?}",
        t.warnings
    );
}

/// A dump is someone else's folder: a FIFO planted where a file should be
/// would block the read for ever (SIGTERM included); it reads as missing,
/// with the fallback's warning, and the read ends.
#[test]
fn a_fifo_in_a_dump_reads_as_missing_without_a_hang() {
    use std::os::unix::ffi::OsStrExt;
    let u = common::unpack(BASE);
    let f = u.root.join(format!("{NODE}/node0/distance"));
    std::fs::remove_file(&f).unwrap();
    let c = std::ffi::CString::new(f.as_os_str().as_bytes()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let (tx, rx) = std::sync::mpsc::channel();
    let root = u.root.clone();
    std::thread::spawn(move || {
        let _ = tx.send(topology::read(&root).map(|t| (t.distances.is_some(), t.warnings)));
    });
    // Generous: the read takes milliseconds; a hang never ends.
    let (slit, warnings) = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the read of a dump with a FIFO in it hangs")
        .expect("a FIFO is read as missing, not an error");
    assert!(!slit, "no SLIT without node0's row");
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("node0/distance: empty or unreadable")),
        "{warnings:?}"
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
