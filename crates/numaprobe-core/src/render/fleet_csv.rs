//! The fleet report as CSV: one line per node and metric (long form), with
//! the fleet's median and how far the node is off, so a script can sort and
//! filter a thousand nodes without reading the JSON.
//!
//! Written line by line into one string, the metric and outlier looked up
//! by index: a fleet of 2,000 nodes x 2,000 cells is 4 million lines, and
//! the output grows linearly with the report (every field is either a
//! figure, a bounded name, or the node's reason, which the analysis clips
//! to `analysis::fleet::MAX_REASON` characters).

use crate::model::fleet::{FleetReport, MetricStats};
use crate::render::table::csv_record;
use std::collections::HashMap;

const HEADERS: [&str; 11] = [
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
];

pub fn to_csv(r: &FleetReport) -> String {
    let metrics: HashMap<&str, &MetricStats> =
        r.metrics.iter().map(|m| (m.id.as_str(), m)).collect();
    let outliers = r.outlier_cells();
    let mut out = String::new();
    csv_record(&mut out, HEADERS);
    for n in &r.nodes {
        let group = n.group.map(|g| (g + 1).to_string()).unwrap_or_default();
        let status = super::fleet_table::status_name(n.status);
        // Why the node is not ok, on each of its lines, so a filter on one
        // metric still sees it.
        let why = n.reason.as_deref().unwrap_or("");
        if n.values.is_empty() {
            csv_record(
                &mut out,
                [
                    n.name.as_str(),
                    status,
                    &group,
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    why,
                ],
            );
        }
        for (id, v) in &n.values {
            let (unit, median, mad, off) = match metrics.get(id.as_str()) {
                Some(m) => (
                    m.unit.as_str(),
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
            let outlier = outliers.contains(&(n.name.as_str(), id.as_str()));
            csv_record(
                &mut out,
                [
                    n.name.as_str(),
                    status,
                    &group,
                    id,
                    &format!("{v:.4}"),
                    unit,
                    &median,
                    &mad,
                    &off,
                    if outlier { "true" } else { "false" },
                    why,
                ],
            );
        }
    }
    out
}
