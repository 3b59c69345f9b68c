//! The fleet's families (`numaprobe_fleet_*`): each node's state (how its
//! run ended, one series per state, exactly one of them 1), whether it is
//! configured like the fleet's baseline group, its outliers (only for a
//! node with figures: a node lost, drained or not run exports none, never
//! zeros as if measured), and when the fleet ran.

use super::{gauge, single, times, Family};
use crate::model::fleet::{FleetNode, FleetReport, NodeStatus};
use crate::model::provenance::Provenance;
use std::collections::BTreeMap;

/// Every state a node can be in, in the order written. `drained` is an
/// unavailable node that Slurm had drained (an administrator's or a health
/// check's doing), kept apart from one that was down or reserved.
pub(super) const STATES: [&str; 8] = [
    "ok",
    "partial",
    "incomplete",
    "timed_out",
    "failed",
    "lost",
    "unavailable",
    "drained",
];

/// The node's state, one of [`STATES`].
pub(super) fn state(n: &FleetNode) -> &'static str {
    match n.status {
        NodeStatus::Ok => "ok",
        NodeStatus::Partial => "partial",
        NodeStatus::Incomplete => "incomplete",
        NodeStatus::TimedOut => "timed_out",
        NodeStatus::Failed => "failed",
        NodeStatus::Lost => "lost",
        NodeStatus::Unavailable if n.drained() => "drained",
        NodeStatus::Unavailable => "unavailable",
    }
}

/// The node's configuration against the fleet: `baseline` in the group the
/// others are compared with, `odd` in a group that differs from it,
/// `unknown` without a report.
pub(super) fn configuration(f: &FleetReport, n: &FleetNode) -> &'static str {
    match n.group.and_then(|g| f.groups.get(g)) {
        None => "unknown",
        Some(g) if g.differs.is_empty() => "baseline",
        Some(_) => "odd",
    }
}

pub(super) fn families(f: &FleetReport, p: Option<&Provenance>) -> Vec<Family> {
    let (start, end) = times(p);
    let mut per_node: BTreeMap<&str, usize> = BTreeMap::new();
    for o in &f.outliers {
        *per_node.entry(o.node.as_str()).or_insert(0) += 1;
    }
    let mut status = Family::new(
        "numaprobe_fleet_node_status",
        "The node's state in the fleet: 1 for its state (ok, partial, incomplete, timed_out, failed, lost, unavailable, drained), 0 for the others.",
    );
    let mut config = Family::new(
        "numaprobe_fleet_node_configuration",
        "The node's configuration against the fleet's baseline group: 1 for baseline, odd (configured unlike the baseline) or unknown (no report), 0 for the others.",
    );
    let mut flag = Family::new(
        "numaprobe_fleet_node_outlier",
        "1 when a measured figure of the node lies far from the fleet's median, else 0; only nodes with figures; group is its signature group, numbered from 1 (the largest) as in fleet.md.",
    );
    let mut count = Family::new(
        "numaprobe_fleet_node_outlier_metrics",
        "How many of the node's measured figures lie far from the fleet's median; only nodes with figures.",
    );
    for n in &f.nodes {
        let node = || ("node", n.name.clone());
        let now = state(n);
        for s in STATES {
            status.push(vec![node(), ("status", s.to_string())], gauge(s == now));
        }
        let is = configuration(f, n);
        for c in ["baseline", "odd", "unknown"] {
            config.push(
                vec![node(), ("configuration", c.to_string())],
                gauge(c == is),
            );
        }
        let (Some(group), false) = (n.group, n.values.is_empty()) else {
            continue;
        };
        // Numbered from 1, as fleet.md prints the group and --group takes it.
        let labels = vec![node(), ("group", (group + 1).to_string())];
        let k = per_node.get(n.name.as_str()).copied().unwrap_or(0);
        flag.push(labels.clone(), gauge(k > 0));
        count.push(labels, k as f64);
    }
    vec![
        single(
            "numaprobe_fleet_start_timestamp_seconds",
            "When the numaprobe fleet that wrote the exported document started, in seconds since the epoch.",
            start.map(|t| t as f64),
        ),
        single(
            "numaprobe_fleet_end_timestamp_seconds",
            "When the numaprobe fleet wrote the exported document, in seconds since the epoch.",
            end.map(|t| t as f64),
        ),
        single(
            "numaprobe_fleet_complete",
            "1 when every node of the fleet sent a complete report and the fleet was not stopped, else 0.",
            Some(gauge(f.complete)),
        ),
        status,
        config,
        flag,
        count,
        single(
            "numaprobe_fleet_groups",
            "Signature groups of the fleet (1 when every node is alike).",
            Some(f.groups.len() as f64),
        ),
    ]
}
