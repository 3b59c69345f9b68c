//! The fleet report as one self-contained HTML page (`fleet.html`): a
//! node x metric heatmap with the odd nodes first, the nodes without a
//! complete report, the signature groups and the outliers. Inline CSS only:
//! no script, no font, nothing fetched, so it opens from a cluster's login
//! node copied anywhere.
//!
//! Odd nodes come first: those not ok, then those configured unlike the
//! baseline group (every node of another signature group), then outliers,
//! farthest off first. A cell's colour is how far the node is from the
//! fleet's median on that metric, on the bad side in red and the good side
//! in blue, full colour at `FULL_SCALE_PERCENT`; an outlier's cell is
//! outlined. A node configured unlike the baseline is not tinted at all:
//! its figures differ because the machine does, which is neither better
//! nor worse.

use super::fleet_table::{fig, headline, how_far, status_name};
use crate::model::fleet::{FleetNode, FleetReport, NodeStatus};
use crate::model::ranking::Better;
use std::collections::BTreeMap;

/// The deviation drawn in full colour.
const FULL_SCALE_PERCENT: f64 = 25.0;
/// Rows drawn in the heatmap; the rest (all of them ordinary nodes, since odd
/// ones come first) are in fleet.csv.
const MAX_ROWS: usize = 400;

/// A foreign string (a node name, a reason) as HTML: control characters,
/// non-characters and bidi overrides escaped visibly, then the entities.
fn esc(s: &str) -> String {
    crate::clean::html(s)
}

/// Background for a deviation in percent, `worse` telling its side.
fn colour(off_percent: f64, worse: bool) -> String {
    let a = (off_percent.abs() / FULL_SCALE_PERCENT).min(1.0);
    let (r, g, b) = if worse { (214, 39, 40) } else { (31, 119, 180) };
    format!("rgba({r},{g},{b},{a:.2})")
}

pub fn to_html(r: &FleetReport) -> String {
    let mut s = String::from("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
    s.push_str(super::html::CSP);
    s.push_str(
        "<title>numaprobe fleet</title>\n<style>\n\
body{font-family:sans-serif;margin:1.5em;color:#222}\n\
table{border-collapse:collapse;margin:.5em 0 1.5em}\n\
th,td{border:1px solid #ccc;padding:2px 6px;font-size:13px;text-align:left}\n\
td.v{text-align:right;font-variant-numeric:tabular-nums}\n\
td.out{outline:2px solid #000;outline-offset:-2px;font-weight:bold}\n\
th.m{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap}\n\
.bad{color:#b00}\n.key span{display:inline-block;padding:2px 8px;margin-right:4px}\n\
</style></head><body>\n<h1>numaprobe fleet</h1>\n",
    );
    s.push_str(&format!("<p>{}</p>\n", esc(&headline(r))));

    // Odd nodes first: not ok, then configured unlike the baseline group,
    // then the most outlying, then by name (the report's order).
    let mut worst: BTreeMap<&str, f64> = BTreeMap::new();
    for o in &r.outliers {
        let z = o.robust_z.map_or(f64::INFINITY, f64::abs);
        let e = worst.entry(o.node.as_str()).or_insert(0.0);
        *e = e.max(z);
    }
    let mut order: Vec<usize> = (0..r.nodes.len()).collect();
    order.sort_by(|&a, &b| {
        let (na, nb) = (&r.nodes[a], &r.nodes[b]);
        let trouble = |n: &FleetNode| n.status != NodeStatus::Ok;
        trouble(nb)
            .cmp(&trouble(na))
            .then_with(|| r.odd_config(nb).cmp(&r.odd_config(na)))
            .then_with(|| {
                let za = worst.get(na.name.as_str()).copied().unwrap_or(-1.0);
                let zb = worst.get(nb.name.as_str()).copied().unwrap_or(-1.0);
                zb.total_cmp(&za)
            })
            .then(a.cmp(&b))
    });

    s.push_str("<h2>Heatmap: every node against the fleet's median</h2>\n");
    s.push_str(&format!(
        "<p class=\"key\"><span style=\"background:{}\">worse by {FULL_SCALE_PERCENT} %+</span>\
<span style=\"background:{}\">better by {FULL_SCALE_PERCENT} %+</span> outlined: outlier. \
Untinted: a node configured unlike group 1, whose figures are not judged against the others'. \
Hover a cell for its value.</p>\n",
        colour(FULL_SCALE_PERCENT, true),
        colour(FULL_SCALE_PERCENT, false)
    ));
    s.push_str("<table><tr><th>node</th><th>status</th><th>group</th>");
    for m in &r.metrics {
        s.push_str(&format!(
            "<th class=\"m\">{} ({})</th>",
            esc(&m.id),
            esc(&m.unit)
        ));
    }
    s.push_str("</tr>\n");
    let outliers = r.outlier_cells();
    for &i in order.iter().take(MAX_ROWS) {
        let n = &r.nodes[i];
        let odd = r.odd_config(n);
        let cls = if n.status == NodeStatus::Ok && !odd {
            ""
        } else {
            " class=\"bad\""
        };
        let status = if odd {
            format!("{}, configured unlike group 1", status_name(n.status))
        } else {
            status_name(n.status).to_string()
        };
        s.push_str(&format!(
            "<tr><td{cls}>{}</td><td{cls}>{status}</td><td>{}</td>",
            esc(&n.name),
            n.group.map(|g| (g + 1).to_string()).unwrap_or_default()
        ));
        for m in &r.metrics {
            let Some(v) = n.values.get(m.id.as_str()) else {
                s.push_str("<td class=\"v\">&ndash;</td>");
                continue;
            };
            let off = if m.median != 0.0 {
                (v - m.median) / m.median.abs() * 100.0
            } else {
                0.0
            };
            let worse = match m.better {
                Better::Lower => *v > m.median,
                Better::Higher => *v < m.median,
            };
            let out = outliers.contains(&(n.name.as_str(), m.id.as_str()));
            // An odd configuration's figures are shown, never tinted.
            let (style, judged) = if odd {
                (String::new(), "; configured unlike group 1: not judged")
            } else {
                (format!(" style=\"background:{}\"", colour(off, worse)), "")
            };
            s.push_str(&format!(
                "<td class=\"v{}\"{style} title=\"{} {}: {} {} (median {}, {:+.1} %{judged})\">{}</td>",
                if out { " out" } else { "" },
                esc(&n.name),
                esc(&m.id),
                fig(*v),
                esc(&m.unit),
                fig(m.median),
                off,
                fig(*v)
            ));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
    if r.nodes.len() > MAX_ROWS {
        s.push_str(&format!(
            "<p>{} more nodes, none of them odd, are in fleet.csv and fleet.json.</p>\n",
            r.nodes.len() - MAX_ROWS
        ));
    }

    let troubled: Vec<_> = r.troubled().collect();
    if !troubled.is_empty() {
        s.push_str("<h2>Nodes not ok: failed, lost, not run, or a measurement missing</h2>\n<table><tr><th>node</th><th>status</th><th>why</th></tr>\n");
        for n in troubled {
            s.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                esc(&n.name),
                status_name(n.status),
                esc(n.reason.as_deref().unwrap_or(""))
            ));
        }
        s.push_str("</table>\n");
    }

    s.push_str("<h2>Outliers</h2>\n");
    if r.outliers.is_empty() {
        s.push_str("<p>No node lies far from the fleet's median.</p>\n");
    } else {
        s.push_str("<table><tr><th>node</th><th>metric</th><th>value</th><th>fleet median</th><th>off</th></tr>\n");
        for o in &r.outliers {
            s.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td class=\"v\">{} {}</td><td class=\"v\">{} {}</td><td{}>{}</td></tr>\n",
                esc(&o.node),
                esc(&o.metric),
                fig(o.value),
                esc(&o.unit),
                fig(o.median),
                esc(&o.unit),
                if o.worse { " class=\"bad\"" } else { "" },
                esc(&how_far(o))
            ));
        }
        s.push_str("</table>\n");
    }

    s.push_str("<h2>Signature groups</h2>\n<table><tr><th>group</th><th>nodes</th><th>differs from group 1</th></tr>\n");
    for (i, g) in r.groups.iter().enumerate() {
        let differs = super::fleet_table::differs_text(i, g, r.baseline_tied());
        s.push_str(&format!(
            "<tr><td>{}</td><td>{} ({})</td><td>{}</td></tr>\n",
            i + 1,
            esc(&crate::units::some_names(&g.nodes, 12)),
            g.nodes.len(),
            esc(&differs)
        ));
    }
    s.push_str("</table>\n");
    for n in &r.notes {
        s.push_str(&format!("<p>Note: {}</p>\n", esc(n)));
    }
    s.push_str("</body></html>\n");
    s
}
