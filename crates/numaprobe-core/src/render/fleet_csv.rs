//! The fleet report as CSV: one line per node and metric (long form), with
//! the fleet's median and how far the node is off, so a script can sort and
//! filter a thousand nodes without reading the JSON.

use crate::model::fleet::FleetReport;
use crate::render::table::Table;

pub fn to_csv(r: &FleetReport) -> String {
    let mut t = Table::new([
        "node",
        "status",
        "group",
        "metric",
        "value",
        "unit",
        "fleet_median",
        "fleet_mad",
        "off_percent",
        "outlier",
        "why",
    ]);
    for n in &r.nodes {
        let group = n.group.map(|g| (g + 1).to_string()).unwrap_or_default();
        let status = super::fleet_table::status_name(n.status).to_string();
        // Why the node is not ok, on each of its lines, so a filter on one
        // metric still sees it.
        let why = n.reason.clone().unwrap_or_default();
        if n.values.is_empty() {
            t.push([
                n.name.clone(),
                status.clone(),
                group.clone(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                why.clone(),
            ]);
        }
        for (id, v) in &n.values {
            let m = r.metrics.iter().find(|m| &m.id == id);
            let outlier = r
                .outliers
                .iter()
                .any(|o| o.node == n.name && &o.metric == id);
            let (unit, median, mad, off) = match m {
                Some(m) => (
                    m.unit.clone(),
                    format!("{:.4}", m.median),
                    format!("{:.4}", m.mad),
                    if m.median != 0.0 {
                        format!("{:.2}", (v - m.median) / m.median.abs() * 100.0)
                    } else {
                        String::new()
                    },
                ),
                None => Default::default(),
            };
            t.push([
                n.name.clone(),
                status.clone(),
                group.clone(),
                id.clone(),
                format!("{v:.4}"),
                unit,
                median,
                mad,
                off,
                outlier.to_string(),
                why.clone(),
            ]);
        }
    }
    t.to_csv()
}
