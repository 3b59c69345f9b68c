//! The result model of `numaprobe fleet`: many nodes' main-job reports
//! compared. Which nodes share a topology and firmware signature (and how
//! the others differ), per measured cell the fleet's median and spread
//! (MAD) with the nodes that lie far off it, and the nodes that sent no
//! usable report, with why. Plain serde data; `analysis::fleet` fills it and
//! the `render::fleet_*` renderers read it.

use crate::model::ranking::Better;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A metric's id (`latency 0->1`), one allocation shared by every node that
/// measured it: a fleet of 2,000 nodes of 2,000 cells holds 2,000 ids, not
/// 4 million copies of them. Written and read as the plain string.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MetricId(Arc<str>);

impl MetricId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for MetricId {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

/// Looked up by `&str` (`values.get("latency 0->1")`): the derived order
/// is the order of the strings, as `Borrow` requires.
impl std::borrow::Borrow<str> for MetricId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&str> for MetricId {
    fn from(s: &str) -> Self {
        MetricId(s.into())
    }
}

impl From<String> for MetricId {
    fn from(s: String) -> Self {
        MetricId(s.into())
    }
}

impl std::fmt::Display for MetricId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for MetricId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for MetricId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(MetricId::from)
    }
}

/// What a node's run came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeStatus {
    /// A complete report.
    Ok,
    /// A complete report in which a measurement was skipped or cut short
    /// (the budget did not reach it, a cell failed): compared for what it
    /// holds, named with what is missing.
    Partial,
    /// A report with `complete: false` (interrupted, or its time ran out):
    /// compared for what it holds, listed with why.
    Incomplete,
    /// The run was stopped because it outlived its time.
    TimedOut,
    /// No usable report: the run failed, or its report could not be read.
    Failed,
    /// Gone while it ran: nothing came from it for the grace period (its
    /// slurmd or the machine died); the launcher gave up on it.
    Lost,
    /// Not run: Slurm reported it drained, down, reserved or not
    /// responding before launch, and the fleet went on without it.
    Unavailable,
}

impl NodeStatus {
    /// The node's run did not come to a usable end (failed, timed out, lost,
    /// never run, interrupted): what `numaprobe fleet` exits 4 for.
    pub fn is_failure(self) -> bool {
        !matches!(self, NodeStatus::Ok | NodeStatus::Partial)
    }
}

/// One node of the fleet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetNode {
    pub name: String,
    pub status: NodeStatus,
    /// Why the node is not `ok`, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Index into `FleetReport::groups` (None for a node without a report).
    pub group: Option<usize>,
    /// The node's figure per metric id (`latency 0->1`), as measured.
    pub values: BTreeMap<MetricId, f64>,
    /// Cells the node's run could not measure, in words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_cells: Vec<String>,
    /// Measurements the node skipped or cut short, in words
    /// (`bandwidth not measured (budget)`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_measured: Vec<String>,
    /// Figures of `values` this node's report does not trust (flagged:
    /// spread, placement), by metric id, with why: they set no fleet median
    /// and make no outlier.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub untrusted: BTreeMap<MetricId, String>,
    /// Each figure's noise on this node (its samples' standard deviation,
    /// in the metric's unit), by metric id, where the report says: a node
    /// is an outlier only beyond it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub noise: BTreeMap<MetricId, f64>,
}

impl FleetNode {
    /// Not run because Slurm had the node drained or draining (an
    /// administrator's drain or a health check's), as its reason says:
    /// `not run: Slurm reported it drained ...`, the Slurm state first.
    pub fn drained(&self) -> bool {
        self.status == NodeStatus::Unavailable
            && self.reason.as_deref().is_some_and(|r| {
                r.split_once("Slurm reported it ")
                    .is_some_and(|(_, state)| state.starts_with("drain"))
            })
    }
}

/// The parts of a node's description that identical nodes share. Figures
/// that drift a little between identical machines (memory a kernel keeps
/// for itself) are rounded so they do not split a fleet.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Signature {
    pub cpu_model: String,
    pub packages: usize,
    pub numa_nodes: usize,
    /// NUMA nodes with CPUs per package: 2 or 4 on one package means SNC or
    /// NPS is on.
    pub nodes_per_package: usize,
    pub cpus: usize,
    /// CPUs the run was allowed to use (affinity, cgroup): fewer than `cpus`
    /// on one node means a different restriction there.
    pub allowed_cpus: usize,
    /// The CPU numbering class (`numbering.packages` / `numbering.smt`).
    pub numbering: String,
    /// The firmware's SLIT, row by row (empty without one).
    pub slit: Vec<Vec<u32>>,
    /// Transparent huge pages: `always`, `madvise`, `never`, or empty.
    pub thp: String,
    pub kernel: String,
    /// Memory per NUMA node in GiB, rounded to the nearest GiB.
    pub memory_gib: Vec<u64>,
    /// Last-level cache size in bytes.
    pub llc_bytes: u64,
}

impl Signature {
    /// The signature's fields as (name, value) in words, for naming what
    /// differs between two signatures.
    pub fn fields(&self) -> Vec<(&'static str, String)> {
        let slit = if self.slit.is_empty() {
            "none".to_string()
        } else {
            self.slit
                .iter()
                .map(|r| {
                    r.iter()
                        .map(|v| v.to_string())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect::<Vec<_>>()
                .join(" / ")
        };
        let mem = self
            .memory_gib
            .iter()
            .map(|g| format!("{g} GiB"))
            .collect::<Vec<_>>()
            .join(", ");
        vec![
            ("cpu_model", self.cpu_model.clone()),
            ("packages", self.packages.to_string()),
            ("numa_nodes", self.numa_nodes.to_string()),
            ("nodes_per_package", self.nodes_per_package.to_string()),
            ("cpus", self.cpus.to_string()),
            ("allowed_cpus", self.allowed_cpus.to_string()),
            ("numbering", self.numbering.clone()),
            ("slit", slit),
            ("thp", self.thp.clone()),
            ("kernel", self.kernel.clone()),
            ("memory_per_node", mem),
            ("llc_bytes", self.llc_bytes.to_string()),
        ]
    }

    /// A field of [`Signature::fields`] in a reader's words, as every
    /// report and check prints it (`allowed_cpus` is "allowed CPUs");
    /// fleet.json keeps the field's name. A name this version does not
    /// know is printed as it is.
    pub fn field_words(field: &str) -> &str {
        match field {
            "cpu_model" => "CPU model",
            "packages" => "packages",
            "numa_nodes" => "NUMA nodes",
            "nodes_per_package" => "NUMA nodes per package",
            "cpus" => "CPUs",
            "allowed_cpus" => "allowed CPUs",
            "numbering" => "CPU numbering",
            "slit" => "SLIT",
            "thp" => "transparent huge pages",
            "kernel" => "kernel",
            "memory_per_node" => "memory per node",
            "llc_bytes" => "last-level cache bytes",
            other => other,
        }
    }
}

/// Nodes that share one signature.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignatureGroup {
    pub signature: Signature,
    pub nodes: Vec<String>,
    /// How this group differs from the largest group (empty for that one).
    pub differs: Vec<FieldDiff>,
}

/// One field in which a group differs from the fleet's largest group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldDiff {
    pub field: String,
    /// This group's value.
    pub value: String,
    /// The largest group's value.
    pub majority: String,
}

/// One measured figure across the fleet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricStats {
    /// `latency 0->1`: the kind, CPU node and memory node of the cell.
    pub id: String,
    pub unit: String,
    pub better: Better,
    /// Nodes with a value for it.
    pub count: usize,
    pub median: f64,
    /// Median absolute deviation from the median (unscaled).
    pub mad: f64,
    pub min: f64,
    pub max: f64,
}

/// A node whose figure lies far from the fleet's median.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outlier {
    pub node: String,
    pub metric: String,
    pub unit: String,
    pub value: f64,
    pub median: f64,
    /// (value - median) / (1.4826 * MAD): how many robust standard
    /// deviations off (None when the MAD is zero).
    pub robust_z: Option<f64>,
    /// (value - median) / median, in percent.
    pub off_percent: f64,
    /// True when the value is on the bad side (slower or less bandwidth).
    pub worse: bool,
}

/// The thresholds an outlier is judged by (recorded in the report).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OutlierRule {
    /// A value at least this many robust standard deviations off...
    pub min_robust_z: f64,
    /// ...and at least this many percent off the median is an outlier.
    pub min_off_percent: f64,
    /// Fewer nodes with a value than this: no outliers are judged.
    pub min_nodes: usize,
}

impl Default for OutlierRule {
    fn default() -> Self {
        // 3.5 is Iglewicz and Hoaglin's cut-off for the modified z-score;
        // the 5 % floor keeps a fleet of near-identical nodes (tiny MAD)
        // from flagging differences nobody would act on.
        OutlierRule {
            min_robust_z: 3.5,
            min_off_percent: 5.0,
            min_nodes: 3,
        }
    }
}

/// Everything `numaprobe fleet` found: `fleet.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetReport {
    pub schema: String,
    /// Every node, in name order.
    pub nodes: Vec<FleetNode>,
    /// Signature groups, largest first.
    pub groups: Vec<SignatureGroup>,
    /// Per metric, in id order.
    pub metrics: Vec<MetricStats>,
    /// Outliers, farthest off first.
    pub outliers: Vec<Outlier>,
    pub rule: OutlierRule,
    /// Remarks on the fleet as a whole.
    pub notes: Vec<String>,
    /// False when a node failed, timed out, was lost or not run, sent an
    /// incomplete report, or the fleet itself was stopped by a signal.
    pub complete: bool,
}

impl FleetReport {
    /// The nodes that are not `ok`.
    pub fn troubled(&self) -> impl Iterator<Item = &FleetNode> {
        self.nodes.iter().filter(|n| n.status != NodeStatus::Ok)
    }

    /// The (node, metric) pairs judged outliers, to look up per cell
    /// without searching the list (a fleet has nodes x metrics cells).
    pub fn outlier_cells(&self) -> std::collections::HashSet<(&str, &str)> {
        self.outliers
            .iter()
            .map(|o| (o.node.as_str(), o.metric.as_str()))
            .collect()
    }

    /// No group is the largest: the first two are equally large, and group
    /// 0 is the baseline only by the tie rule
    /// ([`crate::analysis::fleet::signature::group`]).
    pub fn baseline_tied(&self) -> bool {
        self.groups.len() > 1 && self.groups[0].nodes.len() == self.groups[1].nodes.len()
    }

    /// The nodes configured unlike the baseline group (group 0): every
    /// node of the other groups.
    pub fn odd_config(&self, node: &FleetNode) -> bool {
        node.group.is_some_and(|g| g > 0)
    }

    /// The nodes whose run did not come to a usable end.
    pub fn failures(&self) -> impl Iterator<Item = &FleetNode> {
        self.nodes.iter().filter(|n| n.status.is_failure())
    }

    /// What the fleet found that someone should look at although every node
    /// reported: outliers, signature groups beside the largest, nodes with a
    /// measurement missing. Empty when the fleet is uniform.
    pub fn findings(&self) -> Vec<String> {
        let mut f = Vec::new();
        if !self.outliers.is_empty() {
            let nodes: std::collections::BTreeSet<&str> =
                self.outliers.iter().map(|o| o.node.as_str()).collect();
            let nodes: Vec<String> = nodes.into_iter().map(String::from).collect();
            f.push(format!(
                "{} outlier figure(s) on {}",
                self.outliers.len(),
                crate::units::some_names(&nodes, 4)
            ));
        }
        for g in self.groups.iter().skip(1) {
            let fields: Vec<&str> = g
                .differs
                .iter()
                .map(|d| Signature::field_words(&d.field))
                .collect();
            f.push(format!(
                "{} configured unlike the largest group ({})",
                crate::units::some_names(&g.nodes, 4),
                fields.join(", ")
            ));
        }
        for n in self
            .nodes
            .iter()
            .filter(|n| n.status == NodeStatus::Partial)
        {
            f.push(format!(
                "{}: {}",
                n.name,
                n.reason.as_deref().unwrap_or("a measurement missing")
            ));
        }
        f
    }
}
/// How one node's run ended: `fleet-node.json` in its folder, written by
/// `numaprobe fleet-node` (or by `numaprobe fleet` for a node that never
/// said).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeRunStatus {
    pub node: String,
    /// `numaprobe run`'s exit status (None when killed by a signal or never started).
    pub exit_status: Option<i32>,
    pub signal: Option<i32>,
    /// The run outlived its time and was stopped.
    pub timed_out: bool,
    /// Why the run could not start, when it could not.
    pub error: Option<String>,
    /// The last lines of the run's stderr.
    pub stderr_tail: Vec<String>,
    pub elapsed_s: f64,
    /// Not run: Slurm's state and reason for the node before launch
    /// (`drained: maintenance`), written by `numaprobe fleet`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// Given up on while it ran: nothing came from it for the grace
    /// period (its slurmd, slurmstepd or the machine died).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lost: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field a signature has is printed in words: a field added
    /// without them would show its JSON name in the reports.
    #[test]
    fn every_signature_field_has_words_and_an_unknown_one_keeps_its_name() {
        let words: Vec<&str> = Signature::default()
            .fields()
            .iter()
            .map(|(f, _)| Signature::field_words(f))
            .collect();
        assert_eq!(
            words,
            [
                "CPU model",
                "packages",
                "NUMA nodes",
                "NUMA nodes per package",
                "CPUs",
                "allowed CPUs",
                "CPU numbering",
                "SLIT",
                "transparent huge pages",
                "kernel",
                "memory per node",
                "last-level cache bytes"
            ]
        );
        assert_eq!(Signature::field_words("gpu_count"), "gpu_count");
    }
}
