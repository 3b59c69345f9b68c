//! What this process may use: the cgroup cpuset (v1, v2 or the old `cpuset`
//! file system) found the way hwloc finds it, and on the live machine the
//! affinity mask too.
//!
//! On a dump, everything comes from the dump's own files: `proc/mounts` says
//! where the cpuset hierarchy is mounted (a cgroup2 mount counts only when its
//! `cgroup.controllers` offers `cpuset`), `proc/self/cgroup` (else the older
//! `proc/self/cpuset`) says which cgroup the process was in, and that cgroup's
//! folder holds the sets: `cpuset.cpus.effective` / `cpuset.mems.effective` on
//! v2, `[cpuset.]cpus` / `[cpuset.]mems` on v1. `sched_getaffinity` is asked
//! only when the root is `/`: on a dump it would describe the wrong machine.
//!
//! The memory controller is found the same way ([`memory_limit`]): its
//! limit and usage (`memory.max` and `memory.current` on v2,
//! `memory.limit_in_bytes` and `memory.usage_in_bytes` on v1) in the
//! process's cgroup and every ancestor up to the mount, since a parent's
//! limit binds its children too (Slurm's ConstrainRAMSpace sets it on the
//! job's folder, a container runtime on the container's).

use super::cpulist::parse_list;
use super::fs::{Fs, TopologyError};
use super::Allowed;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Hierarchy {
    /// cgroup v2 mounted at the path.
    V2(String),
    /// cgroup v1 cpuset (or the `cpuset` file system) at the path; the files
    /// are named `<prefix>cpus` and `<prefix>mems`.
    V1 { mount: String, prefix: &'static str },
}

pub(crate) fn read_allowed(
    fs: &Fs,
    live: bool,
    online: &[u32],
    nodes: &[u32],
    warnings: &mut Vec<String>,
) -> Result<Allowed, TopologyError> {
    let mut cpus: BTreeSet<u32> = online.iter().copied().collect();
    let mut mems: BTreeSet<u32> = nodes.iter().copied().collect();
    let mut sources = Vec::new();

    if let Some((cpu_rel, mem_rel, label)) = find_cpuset_files(fs, warnings)? {
        for (rel, set, what) in [(cpu_rel, &mut cpus, "CPU"), (mem_rel, &mut mems, "node")] {
            let Some(rel) = rel else { continue };
            let Some(list) = fs.list_opt(&rel)? else {
                continue;
            };
            let inter: BTreeSet<u32> = set
                .intersection(&list.into_iter().collect())
                .copied()
                .collect();
            if inter.is_empty() {
                // A process always has somewhere to run and allocate; an
                // empty intersection means the file is stale, not a prison.
                warnings.push(format!(
                    "{}: allows no online {what}; ignored",
                    fs.path(&rel).display()
                ));
                continue;
            }
            *set = inter;
            sources.push(format!("{label}:/{}", rel.trim_start_matches('/')));
        }
    }

    if live {
        match affinity() {
            Some(mask) => {
                let inter: BTreeSet<u32> = cpus.intersection(&mask).copied().collect();
                if !inter.is_empty() {
                    cpus = inter;
                }
                sources.push("sched_getaffinity".into());
            }
            None => {
                warnings.push("sched_getaffinity failed; the affinity mask is not applied".into())
            }
        }
        // The kernel's own view of the task's cpuset mems, which also covers
        // cpusets applied by means other than the cgroup we found.
        if let Some(status) = fs.read_opt("proc/self/status")? {
            if let Some(list) = status
                .lines()
                .find_map(|l| l.strip_prefix("Mems_allowed_list:"))
                .and_then(|v| parse_list(v).ok())
            {
                let inter: BTreeSet<u32> = mems
                    .intersection(&list.into_iter().collect())
                    .copied()
                    .collect();
                if !inter.is_empty() {
                    mems = inter;
                    sources.push("/proc/self/status:Mems_allowed_list".into());
                }
            }
        }
    }

    Ok(Allowed {
        cpus: cpus.into_iter().collect(),
        nodes: mems.into_iter().collect(),
        sources,
    })
}

/// Locate the cpus and mems files of the process's cpuset cgroup, relative to
/// the root, with a label for `Allowed.sources`. `None`: no cpuset hierarchy.
#[allow(clippy::type_complexity)]
fn find_cpuset_files(
    fs: &Fs,
    warnings: &mut Vec<String>,
) -> Result<Option<(Option<String>, Option<String>, &'static str)>, TopologyError> {
    let Some(mounts) = fs.read_opt("proc/mounts")? else {
        return Ok(None);
    };
    let Some(h) = find_hierarchy(fs, &mounts, "cpuset")? else {
        return Ok(None);
    };
    let path = match cgroup_path(fs, &h, "cpuset")? {
        Some(p) => p,
        None => {
            warnings.push(
                "a cpuset cgroup is mounted but proc/self/cgroup and proc/self/cpuset do not say which one applies; no cgroup restriction applied".into(),
            );
            return Ok(None);
        }
    };
    let (mount, cpus_name, mems_name, label) = match &h {
        Hierarchy::V2(m) => (
            m.clone(),
            "cpuset.cpus.effective".to_string(),
            "cpuset.mems.effective".to_string(),
            "cgroup2",
        ),
        Hierarchy::V1 { mount, prefix } => (
            mount.clone(),
            format!("{prefix}cpus"),
            format!("{prefix}mems"),
            "cgroup",
        ),
    };
    let dir = join_rel(&mount, &path);
    let cpus = find_up(fs, &mount, &dir, &cpus_name);
    let mems = find_up(fs, &mount, &dir, &mems_name);
    if cpus.is_none() && mems.is_none() {
        warnings.push(format!(
            "{}: cgroup folder without {cpus_name} or {mems_name}; no cgroup restriction applied",
            fs.path(&dir).display()
        ));
    }
    Ok(Some((cpus, mems, label)))
}

/// The mount of the hierarchy that holds `controller` (`cpuset`, `memory`).
fn find_hierarchy(
    fs: &Fs,
    mounts: &str,
    controller: &str,
) -> Result<Option<Hierarchy>, TopologyError> {
    for line in mounts.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 4 {
            continue;
        }
        let mnt = unescape_mount(f[1]);
        let opts: Vec<&str> = f[3].split(',').collect();
        match f[2] {
            "cgroup2" => {
                // A cgroup2 mount without the controller restricts
                // nothing (v1 may hold the controller instead).
                let ctrl = fs.read_opt(&join_rel(&mnt, "cgroup.controllers"))?;
                if ctrl.is_some_and(|c| c.split_whitespace().any(|w| w == controller)) {
                    return Ok(Some(Hierarchy::V2(mnt)));
                }
            }
            "cgroup" if opts.contains(&controller) => {
                let prefix = if opts.contains(&"noprefix") {
                    ""
                } else {
                    "cpuset."
                };
                return Ok(Some(Hierarchy::V1 { mount: mnt, prefix }));
            }
            "cpuset" if controller == "cpuset" => {
                return Ok(Some(Hierarchy::V1 {
                    mount: mnt,
                    prefix: "",
                }))
            }
            _ => {}
        }
    }
    Ok(None)
}

/// The process's cgroup path in the hierarchy `h` of `controller`.
fn cgroup_path(fs: &Fs, h: &Hierarchy, controller: &str) -> Result<Option<String>, TopologyError> {
    if let Some(text) = fs.read_opt("proc/self/cgroup")? {
        for line in text.lines() {
            let mut parts = line.splitn(3, ':');
            let (Some(id), Some(ctrls), Some(path)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            let hit = match h {
                Hierarchy::V2(_) => id == "0" && ctrls.is_empty(),
                Hierarchy::V1 { .. } => ctrls.split(',').any(|c| c == controller),
            };
            if hit {
                return Ok(Some(path.trim().to_string()));
            }
        }
    }
    if controller != "cpuset" {
        return Ok(None);
    }
    Ok(fs
        .read_opt("proc/self/cpuset")?
        .map(|s| s.trim().to_string())
        .filter(|s| s.starts_with('/')))
}

/// The memory limit that binds this process: of its memory cgroup and the
/// ancestors, the one with the least room left.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CgroupMemory {
    /// 2 for cgroup v2, 1 for the v1 memory controller.
    pub version: u8,
    /// The limit's file as the described machine names it, e.g.
    /// `/sys/fs/cgroup/system.slice/job.scope/memory.max`.
    pub path: String,
    pub limit_bytes: u64,
    /// What the group (all its processes and their page cache) holds now.
    pub usage_bytes: u64,
    /// Of `usage_bytes`, the page cache on the inactive list (memory.stat's
    /// `inactive_file`; v1 `total_inactive_file`): the kernel reclaims it
    /// before it counts the group as full, so a job that read many files
    /// is not out of room because of them (the working set of kubelet and
    /// cAdvisor is the same difference).
    #[serde(default)]
    pub inactive_file_bytes: u64,
}

impl CgroupMemory {
    /// "960 MiB of 1 GiB used, 768 MiB of it inactive page cache".
    pub fn usage_text(&self) -> String {
        use crate::units::format_size;
        let cache = if self.inactive_file_bytes > 0 {
            format!(
                ", {} of it inactive page cache",
                format_size(self.inactive_file_bytes)
            )
        } else {
            String::new()
        };
        format!(
            "{} of {} used{cache}",
            format_size(self.usage_bytes),
            format_size(self.limit_bytes)
        )
    }

    /// Bytes the group can still take before its limit: reclaim of its own
    /// page cache, then the OOM killer, happen past it.
    pub fn headroom(&self) -> u64 {
        let working_set = self.usage_bytes.saturating_sub(self.inactive_file_bytes);
        self.limit_bytes.saturating_sub(working_set)
    }
}

/// v1 writes "no limit" as the largest page-aligned counter (about 2^63);
/// anything past 2^60 bytes is no limit on any machine.
const NO_LIMIT: u64 = 1 << 60;

/// The memory cgroup limit of the process described below `root` (`/` on
/// the live machine), or None when no memory controller limits it. Files
/// that are missing or unparsable count as no limit at their level.
pub fn memory_limit(root: &Path) -> Result<Option<CgroupMemory>, TopologyError> {
    let fs = Fs::new(root);
    let Some(mounts) = fs.read_opt("proc/mounts")? else {
        return Ok(None);
    };
    let Some(h) = find_hierarchy(&fs, &mounts, "memory")? else {
        return Ok(None);
    };
    let Some(path) = cgroup_path(&fs, &h, "memory")? else {
        return Ok(None);
    };
    let (mount, version, max_name, cur_name, inactive_key) = match &h {
        Hierarchy::V2(m) => (
            m.clone(),
            2,
            "memory.max",
            "memory.current",
            "inactive_file",
        ),
        Hierarchy::V1 { mount, .. } => (
            mount.clone(),
            1,
            "memory.limit_in_bytes",
            "memory.usage_in_bytes",
            "total_inactive_file",
        ),
    };
    let inactive = |dir: &str| -> Result<u64, TopologyError> {
        Ok(fs
            .read_opt(&join_rel(dir, "memory.stat"))?
            .and_then(|t| stat_value(&t, inactive_key))
            .unwrap_or(0))
    };
    let number = |rel: &str| -> Result<Option<u64>, TopologyError> {
        Ok(fs.read_opt(rel)?.and_then(|t| t.trim().parse::<u64>().ok()))
    };
    let mount_rel = mount.trim_matches('/').to_string();
    let mut dir = join_rel(&mount, &path);
    let mut best: Option<CgroupMemory> = None;
    loop {
        let max_rel = join_rel(&dir, max_name);
        // `max` (v2's "no limit") does not parse and is skipped.
        if let (Some(limit), Some(usage)) = (number(&max_rel)?, number(&join_rel(&dir, cur_name))?)
        {
            let here = CgroupMemory {
                version,
                path: format!("/{max_rel}"),
                limit_bytes: limit,
                usage_bytes: usage,
                inactive_file_bytes: inactive(&dir)?.min(usage),
            };
            if limit < NO_LIMIT && best.as_ref().is_none_or(|b| here.headroom() < b.headroom()) {
                best = Some(here);
            }
        }
        if dir.len() <= mount_rel.len() || !dir.starts_with(&mount_rel) {
            break;
        }
        match dir.rfind('/') {
            Some(i) if i >= mount_rel.len() => dir.truncate(i),
            _ => dir = mount_rel.clone(),
        }
    }
    Ok(best)
}

/// The value of `key` in a memory.stat text (`key value` per line).
fn stat_value(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

/// The file `name` in `dir` or, failing that, in the nearest ancestor up to
/// the mount point: on cgroup v2 a cgroup without the cpuset controller
/// enabled is bound by its parent's sets.
fn find_up(fs: &Fs, mount: &str, dir: &str, name: &str) -> Option<String> {
    // Both relative to the root, without leading or trailing slashes, so
    // that the prefix test below compares like with like.
    let mount = mount.trim_matches('/');
    let mut d = dir.trim_matches('/').to_string();
    loop {
        let rel = join_rel(&d, name);
        if fs.exists(&rel) {
            return Some(rel);
        }
        if d.len() <= mount.len() || !d.starts_with(mount) {
            return None;
        }
        match d.rfind('/') {
            Some(i) if i >= mount.len() => d.truncate(i),
            _ => d = mount.to_string(),
        }
    }
}

/// Join two absolute paths of the described machine into one relative to the
/// root: `/sys/fs/cgroup` + `/a/b` → `sys/fs/cgroup/a/b`.
fn join_rel(a: &str, b: &str) -> String {
    let a = a.trim_matches('/');
    let b = b.trim_matches('/');
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a}/{b}"),
    }
}

/// `/proc/mounts` escapes blanks in paths as octal (`\040`). An escape past
/// a byte (`\777`) is no escape and stays as written, rather than being
/// cut to the byte it would wrap to.
fn unescape_mount(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let escape = (b[i] == b'\\' && i + 3 < b.len())
            .then(|| &b[i + 1..i + 4])
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)))
            .and_then(|d| {
                let v = d.iter().fold(0u32, |v, c| v * 8 + u32::from(c - b'0'));
                u8::try_from(v).ok()
            });
        if let Some(v) = escape {
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// This process's affinity mask. The buffer grows until the kernel accepts
/// it, so machines with more CPUs than `cpu_set_t` holds (1024) work too.
fn affinity() -> Option<BTreeSet<u32>> {
    let mut words = 1024 / 64;
    while words <= (1 << 20) / 64 {
        let mut buf = vec![0u64; words];
        // SAFETY: the pointer and length describe `buf`, which outlives the
        // call; the kernel writes at most `len` bytes into it.
        let rc = unsafe {
            libc::sched_getaffinity(0, words * 8, buf.as_mut_ptr() as *mut libc::cpu_set_t)
        };
        if rc == 0 {
            let mut set = BTreeSet::new();
            for (w, v) in buf.iter().enumerate() {
                for bit in 0..64 {
                    if v & (1u64 << bit) != 0 {
                        set.insert((w * 64 + bit) as u32);
                    }
                }
            }
            return Some(set);
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL) {
            return None;
        }
        words *= 2;
    }
    None
}

#[cfg(test)]
#[path = "cgroup_tests.rs"]
mod tests;
