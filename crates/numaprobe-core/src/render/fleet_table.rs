//! The fleet report as tables, for the terminal (`to_text`) and as Markdown
//! (`to_markdown`, the `fleet.md` summary): nodes in trouble, outliers
//! farthest off first, signature groups with what differs, then every
//! metric's median and spread.

use crate::model::fleet::{FleetReport, NodeStatus, Outlier, Signature, SignatureGroup};
use crate::render::table::Table;

/// A status in words.
pub fn status_name(s: NodeStatus) -> &'static str {
    match s {
        NodeStatus::Ok => "ok",
        NodeStatus::Partial => "partial",
        NodeStatus::Incomplete => "incomplete",
        NodeStatus::TimedOut => "timed out",
        NodeStatus::Failed => "failed",
        NodeStatus::Lost => "lost",
        NodeStatus::Unavailable => "unavailable",
    }
}

/// A figure with three significant digits or so, the way the matrices show them.
pub fn fig(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// "+31.2 % (8.4 MADs)": how far off an outlier is.
pub fn how_far(o: &Outlier) -> String {
    let z = match o.robust_z {
        Some(z) => format!("{:.1} robust SDs", z.abs()),
        None => "the others agree exactly".into(),
    };
    format!("{:+.1} % ({z})", o.off_percent)
}
fn troubled_table(r: &FleetReport) -> Option<Table> {
    let mut t = Table::new(["node", "status", "why"]);
    for n in r.troubled() {
        t.push([
            n.name.clone(),
            status_name(n.status).to_string(),
            n.reason.clone().unwrap_or_default(),
        ]);
    }
    r.troubled().next().is_some().then_some(t)
}

fn outlier_table(r: &FleetReport) -> Table {
    let mut t = Table::new(["node", "metric", "value", "fleet median", "off", "worse"]);
    for o in &r.outliers {
        t.push([
            o.node.clone(),
            o.metric.clone(),
            format!("{} {}", fig(o.value), o.unit),
            format!("{} {}", fig(o.median), o.unit),
            how_far(o),
            if o.worse { "yes" } else { "no" }.to_string(),
        ]);
    }
    t
}

/// What sets group `i` (0-based, largest first) apart from the largest
/// group, as the table and the HTML page both say it.
pub fn differs_text(i: usize, g: &SignatureGroup, tied: bool) -> String {
    if i == 0 && tied {
        return "(baseline by the tie rule: as large as group 2, first by name)".to_string();
    }
    if i == 0 {
        return "(largest group)".to_string();
    }
    g.differs
        .iter()
        .map(|d| {
            let field = Signature::field_words(&d.field);
            format!("{field}: {} (group 1: {})", d.value, d.majority)
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn group_table(r: &FleetReport) -> Table {
    let mut t = Table::new(["group", "nodes", "count", "differs from group 1"]);
    for (i, g) in r.groups.iter().enumerate() {
        let differs = differs_text(i, g, r.baseline_tied());
        t.push([
            (i + 1).to_string(),
            crate::units::some_names(&g.nodes, 12),
            g.nodes.len().to_string(),
            differs,
        ]);
    }
    t
}

fn metric_table(r: &FleetReport) -> Table {
    let mut t = Table::new(["metric", "unit", "nodes", "median", "MAD", "min", "max"]);
    for m in &r.metrics {
        t.push([
            m.id.clone(),
            m.unit.clone(),
            m.count.to_string(),
            fig(m.median),
            fig(m.mad),
            fig(m.min),
            fig(m.max),
        ]);
    }
    t
}

/// The headline: how many nodes, how many fine, groups and outliers.
pub fn headline(r: &FleetReport) -> String {
    let count = |s: NodeStatus| r.nodes.iter().filter(|n| n.status == s).count();
    let bad = r.failures().count();
    let odd: std::collections::BTreeSet<&str> =
        r.outliers.iter().map(|o| o.node.as_str()).collect();
    format!(
        "{} nodes: {} ok, {} with a measurement missing, {bad} failed, timed out, lost, not run or incomplete; {} signature group(s); {} outlier figure(s) on {} node(s){}",
        r.nodes.len(),
        count(NodeStatus::Ok),
        count(NodeStatus::Partial),
        r.groups.len(),
        r.outliers.len(),
        odd.len(),
        if r.complete {
            ""
        } else {
            " (incomplete)"
        }
    )
}

pub fn to_text(r: &FleetReport) -> String {
    let mut s = format!("Fleet: {}\n", headline(r));
    if let Some(t) = troubled_table(r) {
        s.push_str("\nNodes not ok\n");
        s.push_str(&t.to_text());
    }
    s.push_str("\nOutliers (median and MAD across the fleet)\n");
    if r.outliers.is_empty() {
        s.push_str("none\n");
    } else {
        s.push_str(&outlier_table(r).to_text());
    }
    s.push_str("\nSignature groups (topology and firmware)\n");
    s.push_str(&group_table(r).to_text());
    s.push_str("\nMetrics\n");
    s.push_str(&metric_table(r).to_text());
    for n in &r.notes {
        s.push_str(&format!("Note: {n}\n"));
    }
    s
}

pub fn to_markdown(r: &FleetReport) -> String {
    let mut s = format!("# numaprobe fleet\n\n{}\n", headline(r));
    if let Some(t) = troubled_table(r) {
        s.push_str("\n## Nodes not ok\n\n");
        s.push_str(&t.to_markdown());
    }
    s.push_str("\n## Outliers\n\n");
    if r.outliers.is_empty() {
        s.push_str("No node lies far from the fleet's median.\n");
    } else {
        s.push_str(&format!(
            "A figure at least {} robust standard deviations (1.4826 x MAD) and {} % from the fleet's median.\n\n",
            r.rule.min_robust_z, r.rule.min_off_percent
        ));
        s.push_str(&outlier_table(r).to_markdown());
    }
    s.push_str("\n## Signature groups\n\n");
    s.push_str(&group_table(r).to_markdown());
    s.push_str("\n## Metrics\n\n");
    s.push_str(&metric_table(r).to_markdown());
    for n in &r.notes {
        s.push_str(&format!("\n> {n}\n"));
    }
    s
}
