//! What the running kernel says right now about nodes, free memory, huge pages
//! and the process's allowed memory nodes: the facts a placement is checked
//! against *before* anything is mapped.
//!
//! This reads the live machine on purpose (not a `--sysfs-root` dump): a
//! placement can only happen here, and free memory must be fresh, not the
//! value from when the topology was read minutes ago.

use super::memory::{self, NodeMemory};
use super::PlacementError;
use crate::units::parse_list;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Largest node number our node masks can carry (1024 bits, like glibc's
/// `cpu_set_t` and libnuma's default mask).
pub(crate) const MAX_NODES: u32 = 1024;

/// A snapshot of the live machine's NUMA state.
#[derive(Debug, Clone)]
pub struct LiveSystem {
    /// Online NUMA nodes, ascending.
    pub online_nodes: Vec<u32>,
    /// Online CPUs per node (memory-only nodes map to an empty list).
    pub node_cpus: BTreeMap<u32, Vec<u32>>,
    /// Memory nodes this process may allocate on (`get_mempolicy(MPOL_F_MEMS_ALLOWED)`).
    pub mems_allowed: Vec<u32>,
    /// CPUs this process may run on (see [`super::allowed_cpus`]).
    pub cpus_allowed: Vec<u32>,
    /// `transparent_hugepage/enabled`: `always`, `madvise`, `never`; None if absent.
    pub thp_mode: Option<String>,
    root: PathBuf,
}

impl LiveSystem {
    /// Read the live machine (`/`).
    pub fn read() -> Result<Self, PlacementError> {
        Self::read_below(Path::new("/"))
    }

    pub(crate) fn read_below(root: &Path) -> Result<Self, PlacementError> {
        let node_dir = root.join("sys/devices/system/node");
        let online_nodes = match read_to_string(&node_dir.join("online")) {
            Ok(s) => parse_list(s.trim()).unwrap_or_else(|_| vec![0]),
            // A kernel built without NUMA has no node directory: everything is node 0.
            Err(_) => vec![0],
        };
        let mut node_cpus = BTreeMap::new();
        for &n in &online_nodes {
            let list = read_to_string(&node_dir.join(format!("node{n}/cpulist")))
                .ok()
                .and_then(|s| {
                    let s = s.trim();
                    if s.is_empty() {
                        Some(Vec::new())
                    } else {
                        parse_list(s).ok()
                    }
                })
                .unwrap_or_default();
            node_cpus.insert(n, list);
        }
        let thp_mode = read_to_string(&root.join("sys/kernel/mm/transparent_hugepage/enabled"))
            .ok()
            .and_then(|s| {
                // The active mode is the bracketed word: `always [madvise] never`.
                let a = s.find('[')?;
                let b = s[a..].find(']')?;
                Some(s[a + 1..a + b].to_string())
            });
        Ok(LiveSystem {
            online_nodes,
            node_cpus,
            mems_allowed: mems_allowed()?,
            cpus_allowed: super::allowed_cpus()?,
            thp_mode,
            root: root.to_path_buf(),
        })
    }

    /// Nodes that have at least one allowed CPU.
    pub fn allowed_cpu_nodes(&self) -> Vec<u32> {
        self.node_cpus
            .iter()
            .filter(|(_, cpus)| cpus.iter().any(|c| self.cpus_allowed.contains(c)))
            .map(|(&n, _)| n)
            .collect()
    }

    /// Allowed CPUs of `node`, ascending.
    pub fn allowed_cpus_of_node(&self, node: u32) -> Vec<u32> {
        self.node_cpus
            .get(&node)
            .map(|cpus| {
                cpus.iter()
                    .copied()
                    .filter(|c| self.cpus_allowed.contains(c))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The node a CPU belongs to.
    pub fn node_of_cpu(&self, cpu: u32) -> Option<u32> {
        self.node_cpus
            .iter()
            .find(|(_, cpus)| cpus.contains(&cpu))
            .map(|(&n, _)| n)
    }

    /// Error unless `node` exists and is an allowed memory node.
    pub fn check_mem_node(&self, node: u32) -> Result<(), PlacementError> {
        if node >= MAX_NODES {
            return Err(PlacementError::NodeTooLarge {
                node,
                limit: MAX_NODES - 1,
            });
        }
        if !self.online_nodes.contains(&node) {
            return Err(PlacementError::NoSuchNode {
                node,
                online: self.online_nodes.clone(),
            });
        }
        if !self.mems_allowed.contains(&node) {
            return Err(PlacementError::NodeNotAllowed {
                node,
                allowed: self.mems_allowed.clone(),
            });
        }
        Ok(())
    }

    /// Error unless `node` exists and has allowed CPUs (can run a thread).
    pub fn check_cpu_node(&self, node: u32) -> Result<(), PlacementError> {
        if !self.online_nodes.contains(&node) {
            return Err(PlacementError::NoSuchNode {
                node,
                online: self.online_nodes.clone(),
            });
        }
        if self.allowed_cpus_of_node(node).is_empty() {
            return Err(PlacementError::CpuLessNode {
                node,
                cpu_nodes: self.allowed_cpu_nodes(),
            });
        }
        Ok(())
    }

    /// What `node`'s memory can give a new allocation now, read fresh on
    /// every call from `/proc/zoneinfo` (see [`super::memory`]): free pages
    /// plus clean inactive file cache above the kernel's high watermark and
    /// lowmem reserve. A kernel whose zoneinfo does not list the node falls
    /// back to the node's `meminfo` with a fixed reserve.
    pub fn memory(&self, node: u32) -> Result<NodeMemory, PlacementError> {
        let zoneinfo = self.root.join("proc/zoneinfo");
        if let Ok(text) = read_to_string(&zoneinfo) {
            let zones = memory::parse_zoneinfo(&text);
            if let Some(m) = memory::node_memory(&zones, node, page_size())
                .map_err(|e| PlacementError::overflow(&zoneinfo, e))?
            {
                return Ok(m);
            }
        }
        let path = self
            .root
            .join(format!("sys/devices/system/node/node{node}/meminfo"));
        let text = read_to_string(&path)?;
        memory::node_memory_from_meminfo(&text, node)
            .map_err(|e| PlacementError::overflow(&path, e))
    }

    /// Bytes a new allocation on `node` can get now without an OOM kill or
    /// heavy reclaim ([`NodeMemory::allocatable`]).
    pub fn allocatable_bytes(&self, node: u32) -> Result<u64, PlacementError> {
        Ok(self.memory(node)?.allocatable)
    }

    /// The same for threads pinned to `cpus`, which also get the free pages
    /// on their own CPUs' per-CPU lists ([`NodeMemory::allocatable_on`]).
    pub fn allocatable_bytes_on(&self, node: u32, cpus: &[u32]) -> Result<u64, PlacementError> {
        Ok(self.memory(node)?.allocatable_on(cpus))
    }

    /// The memory cgroup limit that binds this process, read fresh (its
    /// usage moves with every buffer); None without one or when unreadable.
    pub fn cgroup_memory(&self) -> Option<crate::topology::CgroupMemory> {
        crate::topology::memory_limit(&self.root).ok().flatten()
    }

    /// Free huge pages of `page_size` bytes on `node` (0 when the size is not
    /// supported).
    pub fn free_huge_pages(&self, node: u32, page_size: u64) -> u64 {
        let path = self.root.join(format!(
            "sys/devices/system/node/node{node}/hugepages/hugepages-{}kB/free_hugepages",
            page_size / 1024
        ));
        read_to_string(&path)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0)
    }
}

/// Bytes per page, the unit of `/proc/zoneinfo`.
fn page_size() -> u64 {
    crate::pagesize::base()
}

fn read_to_string(path: &Path) -> Result<String, PlacementError> {
    std::fs::read_to_string(path).map_err(|source| PlacementError::Read {
        path: path.display().to_string(),
        source,
    })
}

/// The memory nodes the process may use, from the kernel's own view of the
/// cpuset (`get_mempolicy` with `MPOL_F_MEMS_ALLOWED`).
fn mems_allowed() -> Result<Vec<u32>, PlacementError> {
    const MPOL_F_MEMS_ALLOWED: libc::c_ulong = 1 << 2;
    let mut mask = [0u64; (MAX_NODES / 64) as usize];
    let mut mode: libc::c_int = 0;
    // SAFETY: the kernel writes at most `maxnode` bits into `mask`.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_get_mempolicy,
            &mut mode as *mut libc::c_int,
            mask.as_mut_ptr(),
            MAX_NODES as libc::c_ulong,
            std::ptr::null_mut::<libc::c_void>(),
            MPOL_F_MEMS_ALLOWED,
        )
    };
    if rc != 0 {
        let err = std::io::Error::last_os_error();
        // ENOSYS: a kernel without NUMA; node 0 is the only memory.
        if err.raw_os_error() == Some(libc::ENOSYS) {
            return Ok(vec![0]);
        }
        return Err(PlacementError::Sys {
            call: "get_mempolicy",
            source: err,
        });
    }
    Ok((0..MAX_NODES)
        .filter(|&n| mask[(n / 64) as usize] & (1 << (n % 64)) != 0)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_machine_has_node_zero_with_cpus() {
        let s = LiveSystem::read().unwrap();
        assert!(s.online_nodes.contains(&0));
        assert!(s.mems_allowed.contains(&0));
        // The kernel's mask only names nodes that exist.
        assert!(
            s.mems_allowed.iter().all(|n| s.online_nodes.contains(n)),
            "{:?} vs online {:?}",
            s.mems_allowed,
            s.online_nodes
        );
        assert!(!s.allowed_cpu_nodes().is_empty());
        let m = s.memory(0).unwrap();
        assert!(m.allocatable > 0);
        assert!(m.allocatable <= m.capacity);
        assert!(m.free > 0);
    }

    #[test]
    fn memory_is_read_from_zoneinfo_then_from_the_node_meminfo() {
        let root = std::env::temp_dir().join(format!("numaprobe-live-{}", std::process::id()));
        let node = root.join("sys/devices/system/node");
        std::fs::create_dir_all(node.join("node1")).unwrap();
        std::fs::create_dir_all(root.join("proc")).unwrap();
        std::fs::write(node.join("online"), "0-1\n").unwrap();
        std::fs::write(
            root.join("proc/zoneinfo"),
            "Node 0, zone   Normal\n  pages free     1000\n        min      100\n        low      125\n        high     150\n        managed  4000\n        protection: (0, 0, 0, 0)\n      nr_zone_inactive_file 10\n      nr_zone_write_pending 0\n",
        )
        .unwrap();
        std::fs::write(
            node.join("node1/meminfo"),
            "Node 1 MemTotal: 3200 kB\nNode 1 MemFree: 1000 kB\nNode 1 Inactive(file): 0 kB\n",
        )
        .unwrap();
        let thp = root.join("sys/kernel/mm/transparent_hugepage");
        std::fs::create_dir_all(&thp).unwrap();
        std::fs::write(thp.join("enabled"), "always [madvise] never\n").unwrap();
        let s = LiveSystem::read_below(&root).unwrap();
        assert_eq!(s.thp_mode.as_deref(), Some("madvise"));
        assert_eq!(s.online_nodes, [0, 1]);
        let ps = page_size();
        let m0 = s.memory(0).unwrap();
        assert_eq!(m0.allocatable, (1000 + 10 - 150) * ps);
        assert_eq!(s.allocatable_bytes(0).unwrap(), m0.allocatable);
        // Node 1 is not in zoneinfo: its meminfo, less 1/32 of its total.
        assert_eq!(s.allocatable_bytes(1).unwrap(), (1000 - 100) * 1024);
        // Neither: the error names the file.
        let e = s.memory(2).unwrap_err().to_string();
        assert!(e.contains("node2/meminfo"), "{e}");
        std::fs::remove_dir_all(&root).ok();
    }

    #[test]
    fn nodes_and_cpus_are_read_below_a_root() {
        let root = std::env::temp_dir().join(format!("numaprobe-cpus-{}", std::process::id()));
        let node = root.join("sys/devices/system/node");
        let allowed = crate::placement::allowed_cpus().unwrap();
        // Node 0 memory only, node 1 the first allowed CPU, node 2 the
        // rest and a CPU this process may not use.
        let rest: Vec<String> = allowed[1..].iter().map(u32::to_string).collect();
        let lists = [
            String::new(),
            allowed[0].to_string(),
            rest.into_iter()
                .chain(["4000".to_string()])
                .collect::<Vec<_>>()
                .join(","),
        ];
        for (n, list) in lists.iter().enumerate() {
            std::fs::create_dir_all(node.join(format!("node{n}"))).unwrap();
            std::fs::write(node.join(format!("node{n}/cpulist")), format!("{list}\n")).unwrap();
        }
        std::fs::write(node.join("online"), "0-2\n").unwrap();
        let pool = node.join("node1/hugepages/hugepages-2048kB");
        std::fs::create_dir_all(&pool).unwrap();
        std::fs::write(pool.join("free_hugepages"), "7\n").unwrap();
        let s = LiveSystem::read_below(&root).unwrap();
        assert_eq!(s.free_huge_pages(1, 2 << 20), 7);
        assert_eq!(s.free_huge_pages(1, 1 << 30), 0);
        std::fs::remove_dir_all(&root).ok();
        assert_eq!(s.online_nodes, [0, 1, 2]);
        assert_eq!(s.node_cpus[&0], Vec::<u32>::new());
        let cpu_nodes: Vec<u32> = if allowed.len() > 1 {
            vec![1, 2]
        } else {
            vec![1]
        };
        assert_eq!(s.allowed_cpu_nodes(), cpu_nodes);
        assert_eq!(s.allowed_cpus_of_node(1), [allowed[0]]);
        assert_eq!(s.allowed_cpus_of_node(2), allowed[1..]);
        assert!(s.allowed_cpus_of_node(0).is_empty());
        assert_eq!(s.node_of_cpu(allowed[0]), Some(1));
        assert_eq!(s.node_of_cpu(4000), Some(2));
        assert_eq!(s.node_of_cpu(5000), None);
        let e = s.check_cpu_node(0).unwrap_err().to_string();
        assert!(e.contains("node 0 has no allowed CPUs"), "{e}");
        s.check_cpu_node(1).unwrap();
        assert!(matches!(
            s.check_mem_node(MAX_NODES),
            Err(PlacementError::NodeTooLarge { limit: 1023, .. })
        ));
    }

    #[test]
    fn unknown_nodes_are_named() {
        let s = LiveSystem::read().unwrap();
        let e = s.check_mem_node(99).unwrap_err().to_string();
        assert!(e.contains("node 99 does not exist"), "{e}");
        assert!(e.contains("online nodes: "), "{e}");
        assert!(s.check_cpu_node(99).is_err());
    }
}
