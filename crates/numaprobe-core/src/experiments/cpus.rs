//! The measuring CPUs a user chose (`--cpus LIST`), resolved once for every
//! experiment that takes them (latency, bandwidth, the sweep; c2c and locks
//! can reuse it): each CPU checked against the topology (it exists, this
//! process may run on it, it belongs to a NUMA node) and grouped by node, so
//! an experiment asks "which chosen CPUs are on node i" instead of taking
//! the node's first core.
//!
//! Errors are `ExperimentError::Invalid` with one line naming the bad CPU and
//! the valid ones: the CLI turns them into exit 2 before any thread starts.

use super::ExperimentError;
use crate::topology::Topology;
use crate::units::format_list;
use std::collections::BTreeMap;

/// CPUs chosen by the user, checked, by NUMA node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChosenCpus {
    /// As listed (ascending, without repeats: a list parses that way).
    pub cpus: Vec<u32>,
    /// Node -> its chosen CPUs, ascending.
    pub by_node: BTreeMap<u32, Vec<u32>>,
}

/// Check `cpus` against the topology and group them by node. An empty list,
/// a CPU that does not exist, one this process may not use, or one without a
/// node is an error naming it and the allowed CPUs.
pub fn resolve(topo: &Topology, cpus: &[u32]) -> Result<ChosenCpus, ExperimentError> {
    let allowed: Vec<u32> = topo
        .cpus
        .iter()
        .filter(|c| c.allowed)
        .map(|c| c.os_index)
        .collect();
    if cpus.is_empty() {
        return Err(ExperimentError::Invalid(format!(
            "--cpus: no CPU given (allowed CPUs: {})",
            format_list(&allowed)
        )));
    }
    let mut by_node: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    let mut list: Vec<u32> = Vec::new();
    for &c in cpus {
        let Some(cpu) = topo.cpu(c) else {
            return Err(ExperimentError::Invalid(format!(
                "--cpus: CPU {c} does not exist on this machine (allowed CPUs: {})",
                format_list(&allowed)
            )));
        };
        if !cpu.allowed {
            return Err(ExperimentError::Invalid(format!(
                "--cpus: CPU {c} is not allowed for this process (allowed CPUs: {})",
                format_list(&allowed)
            )));
        }
        let Some(node) = cpu.node else {
            return Err(ExperimentError::Invalid(format!(
                "--cpus: CPU {c} belongs to no NUMA node, so no row can be measured from it"
            )));
        };
        if !list.contains(&c) {
            list.push(c);
            by_node.entry(node).or_default().push(c);
        }
    }
    list.sort_unstable();
    for v in by_node.values_mut() {
        v.sort_unstable();
    }
    Ok(ChosenCpus {
        cpus: list,
        by_node,
    })
}

impl ChosenCpus {
    /// Nodes holding at least one chosen CPU, ascending.
    pub fn nodes(&self) -> Vec<u32> {
        self.by_node.keys().copied().collect()
    }

    /// The chosen CPUs on `node` (empty when none).
    pub fn on_node(&self, node: u32) -> &[u32] {
        self.by_node.get(&node).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The CPU nodes (rows) a matrix measures from. Without `--cpu-nodes`
    /// (`asked` None) the rows are the nodes of the chosen CPUs: `--cpus 5`
    /// alone measures from CPU 5's node only. With `--cpu-nodes`, every asked
    /// node must hold a chosen CPU (an error names the first that does not),
    /// because measuring it from another CPU than the user chose would be a
    /// silent substitution.
    pub fn rows(&self, asked: Option<&[u32]>) -> Result<Vec<u32>, ExperimentError> {
        match asked {
            None => Ok(self.nodes()),
            Some(rows) => {
                for &n in rows {
                    if self.on_node(n).is_empty() {
                        return Err(ExperimentError::Invalid(format!(
                            "--cpus {}: none of these CPUs is on node {n}, which --cpu-nodes asks to measure from (nodes of the listed CPUs: {})",
                            format_list(&self.cpus),
                            format_list(&self.nodes())
                        )));
                    }
                }
                Ok(rows.to_vec())
            }
        }
    }

    /// The one CPU a single-threaded measurement (the chase) runs on for
    /// `node`: the chosen CPU of that node; more than one on one node is an
    /// error, since only one can run the chase and a matrix has one row per
    /// node.
    pub fn single_on(&self, node: u32) -> Result<u32, ExperimentError> {
        match self.on_node(node) {
            [one] => Ok(*one),
            [] => Err(ExperimentError::Invalid(format!(
                "--cpus {}: no listed CPU is on node {node}",
                format_list(&self.cpus)
            ))),
            many => Err(ExperimentError::Invalid(format!(
                "--cpus {}: CPUs {} are all on node {node}; the chase runs on one CPU per node, list one of them",
                format_list(&self.cpus),
                format_list(many)
            ))),
        }
    }

    /// The note a result carries: which CPUs measured, per node.
    pub fn note(&self) -> String {
        let per: Vec<String> = self
            .by_node
            .iter()
            .map(|(n, c)| format!("node {n}: CPU {}", format_list(c)))
            .collect();
        format!("measuring CPUs chosen with --cpus ({})", per.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::testing::{build, CpuSpec, NodeSpec};

    /// Two nodes of two cores with two SMT threads each; CPU 7 not allowed.
    fn two_nodes() -> Topology {
        let mut cpus = Vec::new();
        for c in 0..8u32 {
            let node = c / 4;
            cpus.push(CpuSpec {
                allowed: c != 7,
                ..CpuSpec::new(c, i64::from(node), i64::from(c % 4 / 2), node)
            });
        }
        let nodes = [0, 1].map(NodeSpec::gib);
        build("/", &cpus, &nodes, None)
    }

    #[test]
    fn cpus_are_grouped_by_node() {
        let t = two_nodes();
        let c = resolve(&t, &[5, 1, 4]).unwrap();
        assert_eq!(c.cpus, vec![1, 4, 5]);
        assert_eq!(c.nodes(), vec![0, 1]);
        assert_eq!(c.on_node(1), &[4, 5]);
        assert_eq!(c.single_on(0).unwrap(), 1);
        let e = c.single_on(1).unwrap_err().to_string();
        assert!(e.contains("CPUs 4-5 are all on node 1"), "{e}");
        assert!(
            c.note().contains("node 0: CPU 1; node 1: CPU 4-5"),
            "{}",
            c.note()
        );
    }

    #[test]
    fn a_cpu_not_allowed_or_missing_names_the_allowed_ones() {
        let t = two_nodes();
        let e = resolve(&t, &[7]).unwrap_err().to_string();
        assert_eq!(
            e,
            "--cpus: CPU 7 is not allowed for this process (allowed CPUs: 0-6)"
        );
        let e = resolve(&t, &[42]).unwrap_err().to_string();
        assert!(e.contains("CPU 42 does not exist"), "{e}");
        assert!(e.contains("allowed CPUs: 0-6"), "{e}");
    }

    #[test]
    fn rows_follow_the_cpus_or_must_hold_one() {
        let t = two_nodes();
        let c = resolve(&t, &[5]).unwrap();
        assert_eq!(c.rows(None).unwrap(), vec![1]);
        assert_eq!(c.rows(Some(&[1])).unwrap(), vec![1]);
        let e = c.rows(Some(&[0, 1])).unwrap_err().to_string();
        assert!(e.contains("none of these CPUs is on node 0"), "{e}");
    }
}
