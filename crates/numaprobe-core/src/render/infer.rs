//! The inference's human renderings: tables of levels, hops, cells,
//! distances, hierarchy, links and findings (for text, Markdown and CSV) and
//! an ASCII drawing of the inferred interconnect. Reads only the model.

use super::table::{Align, Table};
use crate::model::infer::{fmt_value, groups_text, Finding, Inference, LevelName, Members};
use std::collections::HashMap;

/// Up to this many nodes the terminal gets the adjacency grid and the
/// node-by-node tables: 64 columns of a few characters fill a wide
/// terminal. Past it they are left out with a sentence, as the report
/// leaves out its picture (`graph::left_out`); Markdown, CSV and JSON keep
/// every figure.
pub const MAX_GRID_NODES: usize = 64;

/// Why the grid and node tables are not drawn, or None when they are.
pub fn grid_left_out(inf: &Inference) -> Option<String> {
    let n = inf.nodes.len();
    (n > MAX_GRID_NODES).then(|| {
        format!(
            "too many nodes to draw: {n} nodes (the grid and the node-by-node tables are drawn for up to {MAX_GRID_NODES}); the levels above, --format csv and --format json have every pair\n"
        )
    })
}

impl Inference {
    /// The inference as text: levels, drawing, hops, the distance view of
    /// nested groups, findings and (with `advice`) the advice.
    pub fn to_text(&self, advice: bool) -> String {
        let inf = self;
        let mut s = format!("{}\n\n", title(inf));
        s.push_str(&inf.levels_table().to_text());
        s.push_str("\nInterconnect\n");
        s.push_str(&inf.ascii_drawing());
        s.push('\n');
        let grid = grid_left_out(inf).is_none();
        if grid {
            s.push_str(&inf.hops_table().to_text());
        }
        // Nested groups: the distance view orders pairs by the group they share.
        if grid && inf.hierarchy.len() > 1 {
            s.push('\n');
            s.push_str(&inf.distance_table().to_text());
        }
        if !inf.findings.is_empty() {
            s.push('\n');
            s.push_str(&Inference::findings_table(&inf.findings, "Findings").to_text());
        }
        if advice {
            s.push('\n');
            s.push_str(&Inference::findings_table(&inf.advice, "Advice").to_text());
        }
        s
    }

    /// Markdown keeps what the JSON has: levels, drawing, hops, distance,
    /// hierarchy, links, memory-only nodes, stray cells, findings and (with
    /// `advice`) the advice, and every cell.
    pub fn to_markdown(&self, advice: bool) -> String {
        let inf = self;
        let mut s = format!("## {}\n\n", title(inf));
        s.push_str(&inf.levels_table().to_markdown());
        s.push_str("\n**Interconnect**\n\n```text\n");
        s.push_str(&inf.ascii_drawing());
        s.push_str("```\n\n");
        s.push_str(&inf.hops_table().to_markdown());
        if !inf.distance.is_empty() {
            s.push('\n');
            s.push_str(&inf.distance_table().to_markdown());
        }
        if !inf.hierarchy.is_empty() {
            s.push('\n');
            s.push_str(&inf.hierarchy_table().to_markdown());
        }
        if !inf.link_details.is_empty() {
            s.push('\n');
            s.push_str(&inf.links_table().to_markdown());
        }
        if inf.groups.len() > 1 {
            s.push_str(&format!("\nGroups: {}\n", inf.groups_text()));
        }
        if !inf.cpuless_nodes.is_empty() {
            s.push_str(&format!(
                "\nMemory-only nodes (no CPUs): {}\n",
                inf.cpuless_nodes
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !inf.stray_cells.is_empty() {
            s.push_str(&format!(
                "\nStray cells (left out): {}\n",
                inf.stray_cells
                    .iter()
                    .map(|[a, b]| format!("{a}>{b}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !inf.findings.is_empty() {
            s.push('\n');
            s.push_str(&Inference::findings_table(&inf.findings, "Findings").to_markdown());
        }
        if advice {
            s.push('\n');
            s.push_str(&Inference::findings_table(&inf.advice, "Advice").to_markdown());
        }
        if !inf.cells.is_empty() {
            s.push('\n');
            s.push_str(&inf.cells_table().with_title("Cells").to_markdown());
        }
        s
    }

    /// Levels as a table: name, kind, value, range, hops, members.
    pub fn levels_table(&self) -> Table {
        let mut t = Table::new([
            "level", "kind", "value", "min", "max", "x local", "hops", "cells",
        ])
        .with_title(format!(
            "Performance levels ({}, {} is better)",
            self.unit, self.better
        ));
        for l in &self.levels {
            t.push([
                l.name.clone(),
                l.kind.clone(),
                fmt_value(l.value),
                fmt_value(l.min),
                fmt_value(l.max),
                l.ratio_to_local.map_or("-".into(), |r| format!("{r:.2}")),
                l.hops_text(","),
                cells_summary(&l.members, 12),
            ]);
        }
        t
    }

    /// The hop matrix as a table.
    pub fn hops_table(&self) -> Table {
        let mut headers = vec!["hops".to_string()];
        headers.extend(self.nodes.iter().map(u32::to_string));
        let mut t = Table::new(headers).with_title("Hops between nodes");
        for (i, n) in self.nodes.iter().enumerate() {
            let mut row = vec![n.to_string()];
            row.extend(
                self.hops
                    .row(i)
                    .map(|h| h.map_or("?".into(), |h| h.to_string())),
            );
            t.push(row);
        }
        t
    }

    /// Findings (or advice) as a two-column table.
    pub fn findings_table(items: &[Finding], title: &str) -> Table {
        let mut t = Table::new(["kind", "text"])
            .with_title(title)
            .with_align(vec![Align::Left, Align::Left]);
        for f in items {
            t.push([f.kind.clone(), f.text.clone()]);
        }
        t
    }

    /// One flat CSV: a row per directed cell with its measured value, level,
    /// hops and distance, under the column names of the matrices
    /// (`cpu_node,mem_node`), so a spreadsheet can pivot it.
    pub fn cells_table(&self) -> Table {
        let mut t = Table::new([
            "cpu_node",
            "mem_node",
            "value",
            "unit",
            "level",
            "kind",
            "level_value",
            "x_local",
            "hops",
            "distance",
            "stray",
            "flagged",
        ]);
        let by_name: HashMap<&str, &crate::model::infer::Level> =
            self.levels.iter().map(|l| (l.name.as_str(), l)).collect();
        for c in &self.cells {
            let level = c.level.as_deref().and_then(|n| by_name.get(n).copied());
            let opt = |h: Option<u32>| h.map_or(String::new(), |h| h.to_string());
            t.push([
                c.cpu_node.to_string(),
                c.mem_node.to_string(),
                fmt_value(c.value),
                self.unit.clone(),
                c.level.as_deref().unwrap_or_default().to_string(),
                level.map_or(String::new(), |l| l.kind.clone()),
                level.map_or(String::new(), |l| fmt_value(l.value)),
                level
                    .and_then(|l| l.ratio_to_local)
                    .map_or(String::new(), |r| format!("{r:.3}")),
                opt(c.hops),
                opt(c.distance),
                c.stray.to_string(),
                c.flagged.to_string(),
            ]);
        }
        t
    }

    /// The distance (tier) matrix as a table.
    pub fn distance_table(&self) -> Table {
        let mut headers = vec!["distance".to_string()];
        headers.extend(self.nodes.iter().map(u32::to_string));
        let mut t = Table::new(headers)
            .with_title("Distance between nodes (tier of the smallest group holding both)");
        for (i, n) in self.nodes.iter().enumerate() {
            let mut row = vec![n.to_string()];
            row.extend(
                self.distance
                    .row(i)
                    .map(|h| h.map_or("?".into(), |h| h.to_string())),
            );
            t.push(row);
        }
        t
    }

    /// The nested groups, one row per tier.
    pub fn hierarchy_table(&self) -> Table {
        let mut t = Table::new(["tier", "level", "value", "groups"])
            .with_title("Groups within groups (innermost first)")
            .with_align(vec![Align::Right, Align::Left, Align::Right, Align::Left]);
        for (i, tier) in self.hierarchy.iter().enumerate() {
            t.push([
                (i + 1).to_string(),
                tier.level.clone(),
                fmt_value(tier.value),
                groups_text(&tier.groups, true),
            ]);
        }
        t
    }

    /// The direct links with their level and value.
    pub fn links_table(&self) -> Table {
        let mut t = Table::new(["link", "level", "value"]).with_title("Direct links");
        for l in &self.link_details {
            t.push([
                format!("{}-{}", l.nodes[0], l.nodes[1]),
                l.level.to_string(),
                fmt_value(l.value),
            ]);
        }
        t
    }

    /// An ASCII drawing of the interconnect: nodes on a circle, links drawn
    /// with the letter of their level, and a legend. Up to 12 nodes are drawn
    /// as a picture; every machine also gets the adjacency grid below it.
    pub fn ascii_drawing(&self) -> String {
        let mut out = String::new();
        let n = self.nodes.len();
        let order = self.drawing_order();
        // A picture helps while it stays readable: a few nodes, not a
        // near-complete graph (whose picture is a solid blob).
        if (2..=12).contains(&n) && !self.links.is_empty() && self.links.len() <= 2 * n {
            out.push_str(&self.circle_picture(&order));
            out.push('\n');
        }
        if let Some(why) = grid_left_out(self) {
            out.push_str(&why);
        } else {
            self.grid(&order, &mut out);
        }
        self.legend(&mut out);
        out
    }

    /// The adjacency grid: which pairs are linked and at which level.
    fn grid(&self, order: &[usize], out: &mut String) {
        let link_level: HashMap<[u32; 2], LevelName> = self
            .link_details
            .iter()
            .map(|l| (l.nodes, l.level))
            .collect();
        let w = self
            .nodes
            .iter()
            .map(|x| x.to_string().len())
            .max()
            .unwrap_or(1)
            .max(1);
        out.push_str(&format!("{:>w$} ", ""));
        for &b in order {
            out.push_str(&format!(" {:>w$}", self.nodes[b]));
        }
        out.push('\n');
        for &a in order {
            out.push_str(&format!("{:>w$} ", self.nodes[a]));
            for &b in order {
                let (x, y) = (self.nodes[a], self.nodes[b]);
                let c = if a == b {
                    "o".to_string()
                } else if let Some(l) = link_level.get(&[x.min(y), x.max(y)]) {
                    l.to_string()
                } else {
                    match self.hops.get(a, b) {
                        Some(h) => h.to_string(),
                        None => "?".into(),
                    }
                };
                out.push_str(&format!(" {c:>w$}"));
            }
            out.push('\n');
        }
        out.push_str("o = the node itself; a letter = a direct link at that level; a digit = hops (no direct link)\n");
    }

    /// What the drawing's letters and groups mean.
    pub(super) fn legend(&self, out: &mut String) {
        if !self.on_package.is_empty() {
            out.push_str(&format!(
                "0 = the same package: {} are sub-NUMA clusters, with no link between them\n",
                groups_text(&self.on_package, false)
            ));
        }
        for l in self.levels.iter().filter(|l| l.kind == "remote") {
            out.push_str(&format!(
                "  {} = {} {} ({}-{}){}\n",
                l.name,
                fmt_value(l.value),
                self.unit,
                fmt_value(l.min),
                fmt_value(l.max),
                l.ratio_to_local
                    .map_or(String::new(), |r| format!(", {r:.2}x local"))
            ));
        }
        if self.groups.len() > 1 {
            out.push_str(&format!("groups: {}\n", self.groups_text()));
        }
        if self.hierarchy.len() > 1 {
            let tiers: Vec<String> = self
                .hierarchy
                .iter()
                .map(|t| format!("{}: {}", t.level, groups_text(&t.groups, true)))
                .collect();
            out.push_str(&format!("groups within groups: {}\n", tiers.join(" < ")));
        }
        if !self.cpuless_nodes.is_empty() {
            out.push_str(&format!(
                "memory-only nodes (no CPUs): {}\n",
                self.cpuless_nodes
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            ));
        }
    }

    /// Node indices ordered group by group, so a group sits together on the
    /// circle and its links are short.
    fn drawing_order(&self) -> Vec<usize> {
        let index: HashMap<u32, usize> = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, &n)| (n, i))
            .collect();
        let mut placed = vec![false; self.nodes.len()];
        let mut order = Vec::new();
        for n in self.groups.iter().flatten() {
            if let Some(&i) = index.get(n) {
                if !std::mem::replace(&mut placed[i], true) {
                    order.push(i);
                }
            }
        }
        for (i, p) in placed.iter().enumerate() {
            if !p {
                order.push(i);
            }
        }
        order
    }

    fn circle_picture(&self, order: &[usize]) -> String {
        let (w, h) = (56usize, 19usize);
        let mut grid = vec![vec![' '; w]; h];
        let n = order.len();
        let (cx, cy) = ((w as f64 - 1.0) / 2.0, (h as f64 - 1.0) / 2.0);
        let (rx, ry) = (cx - 4.0, cy - 1.0);
        let mut pos = vec![(0usize, 0usize); self.nodes.len()];
        for (k, &i) in order.iter().enumerate() {
            // Start at the top, clockwise; terminal cells are about twice as
            // tall as wide, hence the separate radii.
            // Two nodes sit side by side rather than one above the other.
            let start = if n == 2 { 1.0 } else { -0.5 };
            let t = std::f64::consts::PI * (2.0 * k as f64 / n as f64 + start);
            let x = (cx + rx * t.cos()).round() as usize;
            let y = (cy + ry * t.sin()).round() as usize;
            pos[i] = (x.min(w - 1), y.min(h - 1));
        }
        for l in &self.link_details {
            let (Some(a), Some(b)) = (
                self.nodes.iter().position(|&x| x == l.nodes[0]),
                self.nodes.iter().position(|&x| x == l.nodes[1]),
            ) else {
                continue;
            };
            let ch = l.level.chars().next().unwrap_or('*').to_ascii_lowercase();
            draw_line(&mut grid, pos[a], pos[b], ch);
        }
        for (i, &(x, y)) in pos.iter().enumerate() {
            let label = format!("[{}]", self.nodes[i]);
            let start = x.saturating_sub(label.len() / 2);
            for (k, c) in label.chars().enumerate() {
                if let Some(cell) = grid[y].get_mut(start + k) {
                    *cell = c;
                }
            }
        }
        let lines: Vec<String> = grid
            .into_iter()
            .map(|row| row.into_iter().collect::<String>().trim_end().to_string())
            .filter(|l| !l.is_empty())
            .collect();
        lines.join("\n") + "\n"
    }
}
/// `0>1 1>0 ...`, cut after `max` cells with a count of the rest.
fn cells_summary(members: &Members, max: usize) -> String {
    let mut s: Vec<String> = members
        .iter()
        .take(max)
        .map(|[a, b]| format!("{a}>{b}"))
        .collect();
    if members.len() > max {
        s.push(format!("... (+{})", members.len() - max));
    }
    s.join(" ")
}

/// Bresenham line with the link's letter, leaving the end points for labels.
fn draw_line(grid: &mut [Vec<char>], from: (usize, usize), to: (usize, usize), ch: char) {
    let (mut x0, mut y0) = (from.0 as i64, from.1 as i64);
    let (x1, y1) = (to.0 as i64, to.1 as i64);
    let dx = (x1 - x0).abs();
    let dy = -(y1 - y0).abs();
    let sx = if x0 < x1 { 1 } else { -1 };
    let sy = if y0 < y1 { 1 } else { -1 };
    let mut err = dx + dy;
    loop {
        if let Some(cell) = grid
            .get_mut(y0 as usize)
            .and_then(|r| r.get_mut(x0 as usize))
        {
            if *cell == ' ' {
                *cell = ch;
            } else if *cell != ch {
                *cell = '+';
            }
        }
        if x0 == x1 && y0 == y1 {
            break;
        }
        let e2 = 2 * err;
        if e2 >= dy {
            err += dy;
            x0 += sx;
        }
        if e2 <= dx {
            err += dx;
            y0 += sy;
        }
    }
}

pub(super) fn title(inf: &Inference) -> String {
    let what = if inf.source == "slit" {
        "firmware SLIT (no measurement)"
    } else {
        "measurement"
    };
    match &inf.machine {
        Some(m) => format!("{m}: {what}, {} ({} is better)", inf.unit, inf.better),
        None => format!("{what}, {} ({} is better)", inf.unit, inf.better),
    }
}
