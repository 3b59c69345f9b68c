//! The kernel's memory-policy interface in one place: the modes of
//! `<linux/mempolicy.h>`, node masks, and a task policy that can be applied
//! in a child between `fork` and `exec` (prepared before the fork, so the
//! child only makes a syscall and never allocates).
//!
//! `NodeBuffer` uses the masks for `mbind` on its own range; `policy` and
//! `tune` use [`TaskPolicy`] for the threads of a whole process.

use super::live::MAX_NODES;
use super::{MemPolicy, PlacementError};
use std::path::Path;

// libc does not export these.
pub(crate) const MPOL_DEFAULT: libc::c_int = 0;
pub(crate) const MPOL_PREFERRED: libc::c_int = 1;
pub(crate) const MPOL_BIND: libc::c_int = 2;
pub(crate) const MPOL_INTERLEAVE: libc::c_int = 3;
/// Linux 6.9 and later; older kernels answer EINVAL.
pub(crate) const MPOL_WEIGHTED_INTERLEAVE: libc::c_int = 6;

/// Words of a node mask wide enough for every node id below `MAX_NODES`.
pub(crate) const MASK_WORDS: usize = (MAX_NODES / 64) as usize;

/// The bitmask the mempolicy syscalls take, with `maxnode` to pass beside it.
pub(crate) fn node_mask(nodes: &[u32]) -> Result<[libc::c_ulong; MASK_WORDS], PlacementError> {
    let mut mask = [0 as libc::c_ulong; MASK_WORDS];
    for &n in nodes {
        if n >= MAX_NODES {
            return Err(PlacementError::NodeTooLarge {
                node: n,
                limit: MAX_NODES - 1,
            });
        }
        mask[(n / 64) as usize] |= 1 << (n % 64);
    }
    Ok(mask)
}

/// `maxnode` for a mask of [`MASK_WORDS`] words: the kernel decrements it
/// before reading, hence the + 1.
pub(crate) const MAXNODE: libc::c_ulong = (MAX_NODES + 1) as libc::c_ulong;

/// The syscall mode and node set of a policy (first touch: the default
/// policy, no nodes).
pub(crate) fn mode_and_nodes(policy: &MemPolicy) -> (libc::c_int, Vec<u32>) {
    match policy {
        MemPolicy::Bind(n) => (MPOL_BIND, vec![*n]),
        MemPolicy::Interleave(ns) => (MPOL_INTERLEAVE, ns.clone()),
        MemPolicy::WeightedInterleave(ns) => (MPOL_WEIGHTED_INTERLEAVE, ns.clone()),
        MemPolicy::Preferred(n) => (MPOL_PREFERRED, vec![*n]),
        MemPolicy::FirstTouch => (MPOL_DEFAULT, vec![]),
    }
}

/// A process-wide (`set_mempolicy`) policy, its mask built ahead of time.
#[derive(Debug, Clone)]
pub struct TaskPolicy {
    mode: libc::c_int,
    mask: [libc::c_ulong; MASK_WORDS],
    empty: bool,
}

impl TaskPolicy {
    pub fn new(policy: &MemPolicy) -> Result<Self, PlacementError> {
        let (mode, nodes) = mode_and_nodes(policy);
        if mode != MPOL_DEFAULT && nodes.is_empty() {
            return Err(PlacementError::EmptyNodeSet);
        }
        Ok(TaskPolicy {
            mode,
            mask: node_mask(&nodes)?,
            empty: nodes.is_empty(),
        })
    }

    /// `MPOL_BIND` to a set of nodes (`MemPolicy::Bind` names one): pages
    /// come from the allocating thread's node when it is in the set, else
    /// from the nearest node of the set. `tune`'s "local bind" of threads
    /// spread over several nodes.
    pub fn bind_nodes(nodes: &[u32]) -> Result<Self, PlacementError> {
        if nodes.is_empty() {
            return Err(PlacementError::EmptyNodeSet);
        }
        Ok(TaskPolicy {
            mode: MPOL_BIND,
            mask: node_mask(nodes)?,
            empty: false,
        })
    }

    /// Set the calling thread's policy (inherited by the threads and children
    /// it creates afterwards, and kept across `exec`). Async-signal-safe: no
    /// allocation, one syscall, so it may run in a `pre_exec` hook.
    pub fn apply(&self) -> std::io::Result<()> {
        let (mask, maxnode) = if self.empty {
            (std::ptr::null(), 0)
        } else {
            (self.mask.as_ptr(), MAXNODE)
        };
        // SAFETY: the kernel reads at most `maxnode - 1` bits of `mask`,
        // which has MASK_WORDS words; a null mask with maxnode 0 is valid
        // for MPOL_DEFAULT.
        let rc = unsafe { libc::syscall(libc::SYS_set_mempolicy, self.mode, mask, maxnode) };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

/// The kernel's weighted-interleave weights (`/sys/kernel/mm/mempolicy/
/// weighted_interleave/nodeN`, below `root`), by node; None when the
/// kernel has no weighted interleave (before Linux 6.9).
pub fn weighted_interleave_weights(root: &Path) -> Option<Vec<(u32, u32)>> {
    let dir = root.join("sys/kernel/mm/mempolicy/weighted_interleave");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let name = entry.file_name();
        let Some(node) = name.to_str().and_then(|s| s.strip_prefix("node")) else {
            continue;
        };
        let (Ok(node), Some(w)) = (
            node.parse::<u32>(),
            std::fs::read_to_string(entry.path())
                .ok()
                .and_then(|s| s.trim().parse::<u32>().ok()),
        ) else {
            continue;
        };
        out.push((node, w));
    }
    out.sort_unstable();
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mask_sets_the_bits_of_its_nodes_across_words() {
        let m = node_mask(&[0, 3, 64, 130]).unwrap();
        assert_eq!(m[0], 0b1001);
        assert_eq!(m[1], 1);
        assert_eq!(m[2], 1 << 2);
        assert!(m[3..].iter().all(|&w| w == 0));
    }

    #[test]
    fn mask_refuses_a_node_beyond_the_limit() {
        assert!(matches!(
            node_mask(&[MAX_NODES]),
            Err(PlacementError::NodeTooLarge { node, .. }) if node == MAX_NODES
        ));
    }

    #[test]
    fn modes_follow_the_kernel_header() {
        assert_eq!(mode_and_nodes(&MemPolicy::Bind(2)), (2, vec![2]));
        assert_eq!(mode_and_nodes(&MemPolicy::Preferred(1)), (1, vec![1]));
        assert_eq!(mode_and_nodes(&MemPolicy::Interleave(vec![0, 1])).0, 3);
        assert_eq!(mode_and_nodes(&MemPolicy::WeightedInterleave(vec![0])).0, 6);
        assert_eq!(mode_and_nodes(&MemPolicy::FirstTouch), (0, vec![]));
    }

    #[test]
    fn an_empty_interleave_is_refused_and_default_needs_no_nodes() {
        assert!(matches!(
            TaskPolicy::new(&MemPolicy::Interleave(vec![])),
            Err(PlacementError::EmptyNodeSet)
        ));
        assert!(TaskPolicy::new(&MemPolicy::FirstTouch).is_ok());
    }

    #[test]
    fn default_and_bind_to_node_zero_apply_to_this_thread() {
        // Node 0 exists on every Linux machine with memory; run on a thread
        // of its own so the test thread's policy is untouched.
        std::thread::spawn(|| {
            TaskPolicy::new(&MemPolicy::Bind(0))
                .unwrap()
                .apply()
                .unwrap();
            TaskPolicy::new(&MemPolicy::FirstTouch)
                .unwrap()
                .apply()
                .unwrap();
        })
        .join()
        .unwrap();
    }

    #[test]
    fn weights_are_read_by_node_and_absent_without_the_folder() {
        let d = std::env::temp_dir().join(format!("np-wi-{}", std::process::id()));
        let w = d.join("sys/kernel/mm/mempolicy/weighted_interleave");
        std::fs::create_dir_all(&w).unwrap();
        std::fs::write(w.join("node1"), "3\n").unwrap();
        std::fs::write(w.join("node0"), "1\n").unwrap();
        std::fs::write(w.join("README"), "x").unwrap();
        assert_eq!(weighted_interleave_weights(&d), Some(vec![(0, 1), (1, 3)]));
        std::fs::remove_dir_all(&d).unwrap();
        assert_eq!(weighted_interleave_weights(&d), None);
    }
}
