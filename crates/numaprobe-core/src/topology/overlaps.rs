//! Nodes whose CPU lists overlap: which of them the model keeps.
//!
//! Linux gives every CPU one node, so overlapping node CPU lists come from
//! firmware that got its affinity table wrong, most often by putting every
//! CPU in every node. hwloc's rule (topology-linux.c, `look_sysfsnode`):
//! nodes are taken in ascending number, and a node whose CPUs intersect
//! those of a node already taken is left out entirely, memory and distances
//! with it. Keeping such nodes apart would multiply the machine: eight nodes
//! each claiming all CPUs and a share of memory look like eight local
//! memories per CPU, and their memory would be counted eight times over by
//! whoever sums it. A node with no CPU never intersects and is kept.

use std::collections::BTreeSet;

/// For each node (`listed[k]` is the CPU list of the k-th node, nodes in
/// ascending number): kept (true) or left out because a lower-numbered
/// kept node already lists one of its CPUs (false).
pub(crate) fn keep_first_listing(listed: &[Vec<u32>]) -> Vec<bool> {
    let mut taken: BTreeSet<u32> = BTreeSet::new();
    listed
        .iter()
        .map(|cpus| {
            if cpus.iter().any(|c| taken.contains(c)) {
                return false;
            }
            taken.extend(cpus);
            true
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cpu_in_every_node_keeps_the_first_node() {
        let all: Vec<u32> = (0..16).collect();
        let listed = vec![all.clone(); 8];
        let mut want = vec![false; 8];
        want[0] = true;
        assert_eq!(keep_first_listing(&listed), want);
    }

    #[test]
    fn disjoint_nodes_and_cpuless_nodes_are_all_kept() {
        let listed = vec![vec![0, 1], vec![], vec![2, 3], vec![]];
        assert_eq!(keep_first_listing(&listed), vec![true; 4]);
    }

    #[test]
    fn a_partial_overlap_drops_the_whole_later_node() {
        // Node 1 shares CPU 3 with node 0: all of node 1 goes, so CPUs 4-5
        // are in no node (hwloc attaches them to the machine); node 2 is
        // judged against the kept nodes only, so its CPU 4 does not clash.
        let listed = vec![vec![0, 1, 2, 3], vec![3, 4, 5], vec![4, 6]];
        assert_eq!(keep_first_listing(&listed), vec![true, false, true]);
    }
}
