//! The main job's answer for a NUMA node that holds several packages:
//! uniform memory behind one bus or controller, or memory the firmware
//! interleaves across the sockets ("node interleave" on, NUMA off)? The
//! per-line samples come from [`experiments::line_samples`], the verdict
//! and its words from [`analysis::interleave`]; this joins the two for
//! run.json, its notes and the report.
//!
//! Only nodes with CPUs of two or more packages are checked: one package's
//! memory cannot be interleaved across sockets. The check costs one 32 MiB
//! buffer per such node and about 0.1 s of sampling on hardware.

use crate::analysis::interleave::{self, Verdict};
use crate::experiments::line_samples::{self, LineSamples};
use crate::topology::Topology;
use serde::{Deserialize, Serialize};

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
    format!(
        "node {node} holds {packages} packages; uniform or interleaved memory not checked: {why}"
    )
}

/// Judge one node's samples.
pub fn judge(s: &LineSamples) -> InterleaveCheck {
    let verdict = interleave::judge_packages(&s.samples_ns, s.packages.len());
    let statement = match &s.skipped {
        Some(why) => not_checked(s.node, s.packages.len(), why),
        None => interleave::explain(s.node, s.packages.len(), &verdict),
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

/// Check every node of `topo` that holds CPUs of several packages (none on
/// most machines: one node per package). A node that cannot be sampled
/// (its memory cannot take the buffer, the clock is too coarse) is listed
/// with the reason; the run goes on.
pub fn check(topo: &Topology) -> Vec<InterleaveCheck> {
    line_samples::multi_package_nodes(topo)
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
    fn one_package_per_node_checks_nothing() {
        // This machine's nodes: each one package (the development machine and
        // CI have one node and one package), so no node is sampled.
        let topo = crate::topology::sysfs::read(std::path::Path::new("/")).unwrap();
        let multi = line_samples::multi_package_nodes(&topo);
        assert_eq!(check(&topo).len(), multi.len());
        for n in multi {
            assert!(line_samples::packages_of_node(&topo, n).len() > 1);
        }
    }
}
