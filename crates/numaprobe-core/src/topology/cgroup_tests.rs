//! The cgroup reading's tests: mount paths, memory limits and headroom of v1 and v2 hierarchies, the live affinity.

use super::*;

#[test]
fn joins_and_unescapes_mount_paths() {
    assert_eq!(join_rel("/sys/fs/cgroup", "/a/b"), "sys/fs/cgroup/a/b");
    assert_eq!(join_rel("/dev/cpuset", "/"), "dev/cpuset");
    assert_eq!(unescape_mount("/mnt/a\\040b"), "/mnt/a b");
    assert_eq!(unescape_mount("/mnt/\\377"), "/mnt/\u{fffd}");
    assert_eq!(unescape_mount("/mnt/a\\777b\\400"), "/mnt/a\\777b\\400");
}

use crate::topology::testing::root_with;

const V2_MOUNTS: &str = "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n";

#[test]
fn v2_limit_is_the_tightest_of_the_group_and_its_ancestors() {
    let d = root_with(&[
        ("proc/mounts", V2_MOUNTS),
        ("proc/self/cgroup", "0::/slurm/job_7/step_0\n"),
        ("sys/fs/cgroup/cgroup.controllers", "cpuset cpu memory\n"),
        // The job's folder holds the limit; the step's has none.
        ("sys/fs/cgroup/slurm/job_7/step_0/memory.max", "max\n"),
        ("sys/fs/cgroup/slurm/job_7/step_0/memory.current", "1000\n"),
        ("sys/fs/cgroup/slurm/job_7/memory.max", "2147483648\n"),
        ("sys/fs/cgroup/slurm/job_7/memory.current", "536870912\n"),
        // A looser limit higher up does not win.
        ("sys/fs/cgroup/slurm/memory.max", "68719476736\n"),
        ("sys/fs/cgroup/slurm/memory.current", "1073741824\n"),
    ]);
    let m = memory_limit(d.path()).unwrap().expect("a limit");
    assert_eq!(m.version, 2);
    assert_eq!(m.path, "/sys/fs/cgroup/slurm/job_7/memory.max");
    assert_eq!(m.limit_bytes, 2 << 30);
    assert_eq!(m.usage_bytes, 512 << 20);
    assert_eq!(m.headroom(), (2 << 30) - (512 << 20));
}

#[test]
fn v2_without_memory_controller_or_limit_is_no_limit() {
    let no_ctrl = root_with(&[
        ("proc/mounts", V2_MOUNTS),
        ("proc/self/cgroup", "0::/a\n"),
        ("sys/fs/cgroup/cgroup.controllers", "cpuset cpu\n"),
        ("sys/fs/cgroup/a/memory.max", "1048576\n"),
        ("sys/fs/cgroup/a/memory.current", "0\n"),
    ]);
    assert_eq!(memory_limit(no_ctrl.path()).unwrap(), None);
    let unlimited = root_with(&[
        ("proc/mounts", V2_MOUNTS),
        ("proc/self/cgroup", "0::/a\n"),
        ("sys/fs/cgroup/cgroup.controllers", "memory\n"),
        ("sys/fs/cgroup/a/memory.max", "max\n"),
        ("sys/fs/cgroup/a/memory.current", "4096\n"),
    ]);
    assert_eq!(memory_limit(unlimited.path()).unwrap(), None);
    let empty = root_with(&[]);
    assert_eq!(memory_limit(empty.path()).unwrap(), None);
}

#[test]
fn v1_memory_controller_and_its_no_limit_value() {
    let files = |limit: &'static str| {
        vec![
            (
                "proc/mounts",
                "cgroup /sys/fs/cgroup/cpuset cgroup rw,cpuset 0 0\ncgroup /sys/fs/cgroup/memory cgroup rw,nosuid,memory 0 0\n",
            ),
            (
                "proc/self/cgroup",
                "5:cpuset:/\n4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n",
            ),
            ("sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes", limit),
            ("sys/fs/cgroup/memory/docker/abc/memory.usage_in_bytes", "104857600\n"),
            ("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n"),
            ("sys/fs/cgroup/memory/memory.usage_in_bytes", "5000000000\n"),
        ]
    };
    let d = root_with(&files("268435456\n"));
    let m = memory_limit(d.path()).unwrap().expect("a limit");
    assert_eq!(m.version, 1);
    assert_eq!(
        m.path,
        "/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes"
    );
    assert_eq!(m.headroom(), (256 << 20) - (100 << 20));
    let none = root_with(&files("9223372036854771712\n"));
    assert_eq!(memory_limit(none.path()).unwrap(), None);
}

#[test]
fn usage_above_the_limit_leaves_no_headroom() {
    let m = CgroupMemory {
        version: 2,
        path: "/x".into(),
        limit_bytes: 10,
        usage_bytes: 12,
        inactive_file_bytes: 0,
    };
    assert_eq!(m.headroom(), 0);
    // Inactive page cache is room: the kernel takes it back first.
    let cached = CgroupMemory {
        inactive_file_bytes: 5,
        ..m
    };
    assert_eq!(cached.headroom(), 3);
}

#[test]
fn inactive_page_cache_counts_as_room_v2_and_v1() {
    let d = root_with(&[
        ("proc/mounts", V2_MOUNTS),
        ("proc/self/cgroup", "0::/job\n"),
        ("sys/fs/cgroup/cgroup.controllers", "memory\n"),
        ("sys/fs/cgroup/job/memory.max", "1073741824\n"),
        ("sys/fs/cgroup/job/memory.current", "1006632960\n"),
        (
            "sys/fs/cgroup/job/memory.stat",
            "anon 100\nfile 900\nactive_file 1\ninactive_file 805306368\n",
        ),
    ]);
    let m = memory_limit(d.path()).unwrap().expect("a limit");
    assert_eq!(m.inactive_file_bytes, 768 << 20);
    // 960 MiB used of 1 GiB, 768 MiB of it inactive cache: 832 MiB room.
    assert_eq!(m.headroom(), 832 << 20);
    let v1 = root_with(&[
        (
            "proc/mounts",
            "cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n",
        ),
        ("proc/self/cgroup", "4:memory:/c\n"),
        ("sys/fs/cgroup/memory/c/memory.limit_in_bytes", "1000\n"),
        ("sys/fs/cgroup/memory/c/memory.usage_in_bytes", "900\n"),
        (
            "sys/fs/cgroup/memory/c/memory.stat",
            "inactive_file 1\ntotal_inactive_file 400\n",
        ),
    ]);
    let m = memory_limit(v1.path()).unwrap().expect("a limit");
    assert_eq!((m.inactive_file_bytes, m.headroom()), (400, 500));
    // A stat that says more than the usage is capped at the usage.
    assert_eq!(
        stat_value("x 1\ninactive_file 7\n", "inactive_file"),
        Some(7)
    );
    assert_eq!(stat_value("inactive_filex 7\n", "inactive_file"), None);
}

#[test]
fn live_affinity_is_readable() {
    let set = affinity().expect("sched_getaffinity works for this process");
    assert!(!set.is_empty());
}
