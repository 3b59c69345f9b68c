//! The main job's per-line latency check of a node's memory. On a node that
//! holds several packages: uniform memory behind one bus or controller, or
//! memory the firmware interleaves across the sockets ("node interleave"
//! on, NUMA off)? On the one node of a one-package machine: one group of
//! pages, or two, as a virtual machine's memory on two of the host's nodes
//! gives? The per-line samples come from [`experiments::line_samples`],
//! the verdicts and their words from [`analysis::interleave`] and
//! [`analysis::host_nodes`]; this joins them for run.json, its notes and
//! the report.
//!
//! A machine of several nodes with one package each has nothing checked:
//! one package's memory cannot be interleaved across sockets, and a guest
//! given a NUMA layout has its nodes' memory placed by it. The check costs
//! one 32 MiB buffer per checked node and about 0.1 s of sampling on
//! hardware; the job keeps [`reserve_s`] of its budget for it.

use crate::analysis::host_nodes;
use crate::analysis::interleave::{self, Verdict};
use crate::experiments::line_samples::{self, LineSamples};
use crate::topology::Topology;
use serde::{Deserialize, Serialize};

/// A checked node's cost besides its buffer's set-up: the thread, its
/// pinning, [`line_samples::SAMPLES`] flushes and loads of a few
/// microseconds each at most, and the placement of the buffer.
pub const FIXED_S: f64 = 0.05;

/// Seconds of the budget the check needs on `topo`: per checked node, the
/// buffer's set-up at `setup_s_per_gib` (the job's calibrated rate of
/// touching memory) and [`FIXED_S`]; nothing on a machine with no node to
/// check. The job ends its extra phases that much before the budget, so
/// the check runs within it.
pub fn reserve_s(topo: &Topology, setup_s_per_gib: f64) -> f64 {
    let gib = line_samples::BUFFER_BYTES as f64 / (1u64 << 30) as f64;
    line_samples::nodes_to_check(topo).len() as f64 * (gib * setup_s_per_gib.max(0.0) + FIXED_S)
}

/// Fixed, so two runs sample the same lines of their buffers.
const SEED: u64 = 0x696e_7465_726c_6561; // "interlea"

/// One node's check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InterleaveCheck {
    pub node: u32,
    /// Packages whose CPUs the node holds.
    pub packages: Vec<i64>,
    /// The CPU that loaded every sampled line.
    pub cpu: Option<u32>,
    pub buffer_bytes: u64,
    pub seconds: f64,
    pub verdict: Verdict,
    /// Why the node was not sampled, when it was not.
    pub skipped: Option<String>,
    /// The verdict in words, with what to change.
    pub statement: String,
}

/// The statement for a node that was not sampled, and why.
fn not_checked(node: u32, packages: usize, why: &str) -> String {
    if packages > 1 {
        format!(
            "node {node} holds {packages} packages; uniform or interleaved memory not checked: {why}"
        )
    } else {
        format!(
            "node {node} holds one package; whether its memory answers in one group or two (memory on two host nodes) not checked: {why}"
        )
    }
}

/// Judge one node's samples: by the interleave test on a node of several
/// packages, by the one-package test ([`host_nodes`]) on a node of one.
pub fn judge(s: &LineSamples) -> InterleaveCheck {
    let packages = s.packages.len();
    let verdict = if packages > 1 {
        interleave::judge_packages(&s.samples_ns, packages)
    } else {
        host_nodes::judge(&s.samples_ns)
    };
    let statement = match &s.skipped {
        Some(why) => not_checked(s.node, packages, why),
        None if packages > 1 => interleave::explain(s.node, packages, &verdict),
        None => host_nodes::explain(s.node, s.buffer_bytes, &verdict),
    };
    InterleaveCheck {
        node: s.node,
        packages: s.packages.clone(),
        cpu: Some(s.cpu),
        buffer_bytes: s.buffer_bytes,
        seconds: s.seconds,
        verdict,
        skipped: s.skipped.clone(),
        statement,
    }
}

/// Check every node of `topo` that holds CPUs of several packages, and the
/// one node of a one-node, one-package machine
/// ([`line_samples::nodes_to_check`]). A node that cannot be sampled (its
/// memory cannot take the buffer, the clock is too coarse) is listed with
/// the reason; the run goes on.
pub fn check(topo: &Topology) -> Vec<InterleaveCheck> {
    line_samples::nodes_to_check(topo)
        .into_iter()
        .map(|node| {
            match line_samples::sample_node(
                topo,
                node,
                line_samples::BUFFER_BYTES,
                line_samples::SAMPLES,
                SEED,
            ) {
                Ok(s) => judge(&s),
                Err(e) => {
                    let packages = line_samples::packages_of_node(topo, node);
                    InterleaveCheck {
                        node,
                        statement: not_checked(node, packages.len(), &e.to_string()),
                        packages,
                        cpu: None,
                        buffer_bytes: line_samples::BUFFER_BYTES as u64,
                        seconds: 0.0,
                        verdict: Verdict::TooFew { samples: 0 },
                        skipped: Some(e.to_string()),
                    }
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    fn samples(node: u32, packages: Vec<i64>, ns: Vec<f64>, skipped: Option<&str>) -> LineSamples {
        LineSamples {
            node,
            cpu: 3,
            packages,
            buffer_bytes: 1 << 25,
            samples_ns: ns,
            clock_tick_ns: 0.4,
            skipped: skipped.map(String::from),
            seconds: 0.1,
        }
    }

    #[test]
    fn interleaved_lines_are_named_and_say_what_to_change() {
        // Every other line a hop away, as two-socket line interleaving gives.
        let mut r = SplitMix64::new(5);
        let ns: Vec<f64> = (0..2000)
            .map(|i| {
                let base = if i % 2 == 0 { 80.0 } else { 135.0 };
                base + (r.index(100) as f64) / 20.0
            })
            .collect();
        let c = judge(&samples(1, vec![0, 1], ns, None));
        assert_eq!(c.node, 1);
        assert!(
            matches!(c.verdict, Verdict::TwoModes { .. }),
            "{:?}",
            c.verdict
        );
        assert!(
            c.statement.contains("node 1 holds 2 packages"),
            "{}",
            c.statement
        );
        assert!(
            c.statement.contains("turn node interleaving off"),
            "{}",
            c.statement
        );
    }

    #[test]
    fn uniform_lines_are_uniform_memory() {
        let mut r = SplitMix64::new(6);
        let ns: Vec<f64> = (0..2000)
            .map(|_| 95.0 + r.index(60) as f64 / 10.0)
            .collect();
        let c = judge(&samples(0, vec![0, 1, 2, 3], ns, None));
        assert!(
            matches!(c.verdict, Verdict::OneMode { .. }),
            "{:?}",
            c.verdict
        );
        assert!(
            c.statement.contains("node 0 holds 4 packages"),
            "{}",
            c.statement
        );
        assert!(c.statement.contains("uniform memory"), "{}", c.statement);
    }

    #[test]
    fn a_skipped_node_says_why() {
        let c = judge(&samples(
            2,
            vec![0, 1],
            vec![],
            Some("the clock ticks every 40.0 ns"),
        ));
        assert_eq!(c.verdict, Verdict::TooFew { samples: 0 });
        assert_eq!(
            c.statement,
            "node 2 holds 2 packages; uniform or interleaved memory not checked: the clock ticks every 40.0 ns"
        );
    }

    #[test]
    fn a_node_of_one_package_is_judged_for_two_groups_of_pages() {
        // A one-node VM whose memory lies 40 : 60 on two host nodes.
        let mut r = SplitMix64::new(7);
        let ns: Vec<f64> = (0..4096)
            .map(|i| {
                let base = if i % 5 < 2 { 110.0 } else { 180.0 };
                base + r.index(100) as f64 / 10.0
            })
            .collect();
        let c = judge(&samples(0, vec![0], ns.clone(), None));
        assert!(
            matches!(c.verdict, Verdict::TwoModes { .. }),
            "{:?}",
            c.verdict
        );
        assert!(
            c.statement.starts_with(
                "node 0 holds one package, yet its memory answers in two groups: 40 % of 4096 lines"
            ),
            "{}",
            c.statement
        );
        // The same samples on two packages: the package count picks the
        // test, and the words are the interleave test's.
        let c2 = judge(&samples(0, vec![0, 1], ns, None));
        assert!(
            c2.statement
                .starts_with("node 0 holds 2 packages and its memory answers in two modes"),
            "{}",
            c2.statement
        );
        // One group on one package: one mode, and the words say so.
        let ns: Vec<f64> = (0..4096)
            .map(|_| 140.0 + r.index(60) as f64 / 10.0)
            .collect();
        let c = judge(&samples(0, vec![0], ns, None));
        assert!(matches!(c.verdict, Verdict::OneMode { .. }));
        assert!(
            c.statement.contains("answer in one group"),
            "{}",
            c.statement
        );
        // Not sampled: why, in the one-package words.
        let c = judge(&samples(
            0,
            vec![3],
            vec![],
            Some("the clock ticks every 40.0 ns"),
        ));
        assert_eq!(
            c.statement,
            "node 0 holds one package; whether its memory answers in one group or two (memory on two host nodes) not checked: the clock ticks every 40.0 ns"
        );
    }

    #[test]
    fn the_reserve_counts_each_checked_node() {
        use crate::topology::testing::{build, two_packages, CpuSpec, NodeSpec};
        // A node of two packages: one node to check.
        let one_node_two_packages = build(
            "/",
            &[CpuSpec::new(0, 0, 0, 0), CpuSpec::new(1, 1, 0, 0)],
            &[NodeSpec::gib(0)],
            None,
        );
        assert_eq!(
            line_samples::nodes_to_check(&one_node_two_packages),
            vec![0]
        );
        let per = 1.0 / 32.0 * 2.0 + FIXED_S;
        assert!((reserve_s(&one_node_two_packages, 2.0) - per).abs() < 1e-12);
        // One node of one package: the one-package check.
        let vm = build(
            "/",
            &[CpuSpec::new(0, 0, 0, 0), CpuSpec::new(1, 0, 1, 0)],
            &[NodeSpec::gib(0)],
            None,
        );
        assert_eq!(line_samples::one_package_node(&vm), Some(0));
        assert_eq!(line_samples::nodes_to_check(&vm), vec![0]);
        assert!((reserve_s(&vm, 2.0) - per).abs() < 1e-12);
        // Two nodes of one package each: nothing to check, nothing kept.
        let two = two_packages(None);
        assert_eq!(line_samples::one_package_node(&two), None);
        assert!(line_samples::nodes_to_check(&two).is_empty());
        assert_eq!(reserve_s(&two, 2.0), 0.0);
        // A rate that cannot be (negative) keeps the fixed part only.
        assert!((reserve_s(&vm, -1.0) - FIXED_S).abs() < 1e-12);
    }

    #[test]
    fn this_machine_checks_its_nodes_of_several_packages_or_its_one_node() {
        let topo = crate::topology::sysfs::read(std::path::Path::new("/")).unwrap();
        let nodes = line_samples::nodes_to_check(&topo);
        let checks = check(&topo);
        assert_eq!(checks.iter().map(|c| c.node).collect::<Vec<_>>(), nodes);
        for c in &checks {
            let packages = line_samples::packages_of_node(&topo, c.node).len();
            assert!(packages > 1 || topo.nodes.len() == 1);
            assert!(
                c.statement.starts_with(&format!("node {} holds", c.node)),
                "{}",
                c.statement
            );
        }
    }
}
