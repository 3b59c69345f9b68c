//! One node's report read into a [`FleetNode`]: its status and reason, each
//! measured cell's figure with its trust and noise, its failed cells, what
//! it lacks (`not_measured`) and its signature. Nothing here compares a
//! node with another: that is the fleet's judgement in `mod.rs`.

use super::run_doc::{Phase, Phases, RunDoc};
use super::signature;
use crate::analysis::compare::trust;
use crate::model::document::{Head, Kind};
use crate::model::fleet::{FleetNode, MetricId, NodeStatus, Signature};
use crate::model::lax::{Lax, Node};
use crate::model::matrix::MatrixKind;
use crate::model::ranking::Better;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Characters of a node's `reason` kept: it is written on each of the
/// node's lines of `fleet.csv` and in every table, so a reason as long as
/// its input would multiply the report's size by the node's metrics. The
/// whole of what is missing stays in `failed_cells` and `not_measured`,
/// written once.
pub const MAX_REASON: usize = 240;
/// Characters of one failed cell's reason kept (as `not_measured` keeps).
const MAX_CELL_REASON: usize = 120;

/// `s` cut to `max` characters, saying how much was left out.
fn clip(s: &str, max: usize) -> String {
    let total = s.chars().count();
    if total <= max {
        return s.to_string();
    }
    let kept: String = s.chars().take(max).collect();
    format!("{kept}... ({} more characters)", total - max)
}

/// What the launcher (or the folder) knows about one node.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeInput {
    pub name: String,
    /// The node's `run.json`, when it sent one.
    pub run_json: Option<String>,
    /// How the node's run ended, when not normally: a failed or timed-out
    /// run may still have sent a (partial) report, which is then compared.
    pub failure: Option<(NodeStatus, String)>,
}

/// Reads the nodes one after another, holding each metric's id once for
/// all of them: every node's figures share it.
#[derive(Default)]
pub(super) struct Reader {
    /// Every metric met so far, with its unit and which way is better.
    pub(super) units: BTreeMap<MetricId, (&'static str, Better)>,
    /// The id of the cell being read, its buffer kept between cells.
    name: String,
}

impl Reader {
    /// The node as its report (or its failure) tells it, its group not yet
    /// set; with its signature when it sent a run document to read one from.
    pub(super) fn read(&mut self, input: &NodeInput) -> (FleetNode, Option<Signature>) {
        let mut node = FleetNode {
            name: input.name.clone(),
            status: NodeStatus::Ok,
            reason: None,
            group: None,
            values: BTreeMap::new(),
            failed_cells: Vec::new(),
            not_measured: Vec::new(),
            untrusted: BTreeMap::new(),
            noise: BTreeMap::new(),
        };
        if let Some((status, why)) = &input.failure {
            node.status = *status;
            node.reason = Some(clip(why, MAX_REASON));
        }
        let doc = match &input.run_json {
            None => {
                if node.status == NodeStatus::Ok {
                    node.status = NodeStatus::Failed;
                    node.reason = Some("sent no run.json".into());
                }
                return (node, None);
            }
            // Read loosely (a node's partial report still counts) into
            // the shapes the fleet uses, straight from the text: its kind
            // first, from its top level only, then its figures, every other
            // field skipped unbuilt. Both bounded by its size.
            Some(text) => match read_run(text.as_bytes()) {
                Ok(Some(d)) => d,
                Ok(None) => {
                    fail(
                        &mut node,
                        "run.json holds no topology: not a main-job report",
                    );
                    return (node, None);
                }
                Err(e) => {
                    fail(&mut node, &format!("run.json is not valid JSON: {e}"));
                    return (node, None);
                }
            },
        };
        if node.status == NodeStatus::Ok && doc.complete.copied() == Some(false) {
            node.status = NodeStatus::Incomplete;
            node.reason =
                Some("the report says complete: false (interrupted or out of time)".into());
        }
        for (mk, kind, better) in [
            (MatrixKind::Latency, "latency", Better::Lower),
            (MatrixKind::Bandwidth, "bandwidth", Better::Higher),
        ] {
            let m = doc.part(kind);
            let unit = mk.unit();
            // A matrix in another unit cannot be compared with the fleet's,
            // and its unit string would be repeated in every cell of the
            // report: refused, named with a short quote of what it says.
            let m = match m {
                Node::Null => continue,
                Node::Other => None,
                Node::Obj(p) => Some(p),
            };
            match m.and_then(|p| p.unit.get()) {
                Some(u) if u == unit => {}
                other => {
                    let said =
                        other.map_or_else(|| "none".to_string(), |u| format!("{:?}", clip(u, 16)));
                    fail(
                        &mut node,
                        &format!("{kind} unit {said} is not {unit}: its figures are not compared"),
                    );
                    continue;
                }
            }
            let Some(m) = m else { continue };
            for c in m.cells.0.iter().filter_map(Node::get) {
                let (Some(cpu), Some(mem), Some(v)) =
                    (c.cpu_node.copied(), c.mem_node.copied(), c.median.copied())
                else {
                    continue;
                };
                self.name.clear();
                let _ = write!(self.name, "{kind} {cpu}->{mem}");
                let id = match self.units.get_key_value(self.name.as_str()) {
                    Some((id, _)) => id.clone(),
                    None => {
                        let id = MetricId::from(self.name.as_str());
                        self.units.insert(id.clone(), (unit, better));
                        id
                    }
                };
                // A cell whose trust fields cannot be read is judged on
                // what it has: no flags, no spread.
                let evidence = c.evidence();
                if let Some(why) = trust::cell_trust(&evidence) {
                    node.untrusted.insert(id.clone(), why);
                }
                if evidence.noise() > 0.0 {
                    node.noise.insert(id.clone(), evidence.noise());
                }
                node.values.insert(id, v);
            }
            for f in &m.failed.0 {
                let f = f.or_empty();
                let at = |n: &Lax<u64>| n.copied().map_or_else(|| "?".into(), |n| n.to_string());
                node.failed_cells.push(format!(
                    "{kind} {}->{}: {}",
                    at(&f.cpu_node),
                    at(&f.mem_node),
                    clip(
                        f.reason.get().map_or("failed", String::as_str),
                        MAX_CELL_REASON
                    )
                ));
            }
        }
        node.not_measured = not_measured(&doc);
        if node.status == NodeStatus::Ok
            && !(node.not_measured.is_empty() && node.failed_cells.is_empty())
        {
            node.status = NodeStatus::Partial;
            let mut why = node.not_measured.clone();
            why.extend(node.failed_cells.iter().map(|c| format!("{c} (failed)")));
            node.reason = Some(clip(&why.join("; "), MAX_REASON));
        }
        let signature = signature::of_parts(&doc.topology, &doc.provenance);
        (node, Some(signature))
    }
}

/// The matrices a report lacks or holds only in part, in words: `bandwidth not measured (budget)`,
/// `latency partial (interrupted)` (failed cells are in `failed_cells`). The
/// reason comes from the report's `status` (which names each phase that
/// fell short, and why) or else its `plan`; a missing matrix neither
/// explains is still named.
pub fn not_measured(doc: &RunDoc) -> Vec<String> {
    let mut out = Vec::new();
    let phases_of = |n: &Node<Phases>| n.get().map(|p| p.phases.0.clone()).unwrap_or_default();
    let (status, plan) = (phases_of(&doc.status), phases_of(&doc.plan));
    fn text(s: &Lax<String>) -> Option<&str> {
        s.get().map(String::as_str)
    }
    for kind in ["latency", "bandwidth"] {
        let find = |phases: &[Node<Phase>]| {
            phases
                .iter()
                .filter_map(Node::get)
                .find(|p| text(&p.phase) == Some(kind))
                .cloned()
        };
        let why = find(&status).map(|p| match text(&p.shortfall) {
            Some("budget") => "budget".to_string(),
            Some("interrupted") => "interrupted".to_string(),
            Some("failed") => "failed".to_string(),
            _ => text(&p.reason)
                .unwrap_or("no reason given")
                .chars()
                .take(120)
                .collect(),
        });
        // Reports without a `status` still carry the plan, whose phase says
        // how much of it was covered and why.
        let why = why.or_else(|| {
            let p = find(&plan)?;
            if text(&p.coverage) == Some("full") {
                return None;
            }
            let reason = text(&p.reason).unwrap_or("");
            Some(if reason.contains("budget") {
                "budget".to_string()
            } else {
                reason.chars().take(120).collect()
            })
        });
        if doc.part(kind).is_null() {
            out.push(format!(
                "{kind} not measured ({})",
                why.unwrap_or_else(|| "the report does not say why".into())
            ));
            continue;
        }
        if let Some(why) = why {
            out.push(format!("{kind} partial ({why})"));
        }
    }
    out
}

/// A node's report as the fleet reads it: None when it is valid JSON but no
/// run document (told from its top level alone, as every reader tells it).
fn read_run(bytes: &[u8]) -> Result<Option<RunDoc>, serde_json::Error> {
    if Head::read(bytes)?.kind() != Some(Kind::Run) {
        return Ok(None);
    }
    crate::model::bounded::from_slice(bytes).map(Some)
}

fn fail(node: &mut FleetNode, why: &str) {
    node.status = NodeStatus::Failed;
    let why = match node.reason.take() {
        Some(r) => format!("{r}; {why}"),
        None => why.to_string(),
    };
    node.reason = Some(clip(&why, MAX_REASON));
}
