//! The result model of `infer` (levels, hops, links, groups, findings, advice)
//! and its human renderings: tables for text/markdown/CSV and an ASCII drawing
//! of the inferred interconnect. The serde form is the JSON contract
//! documented in the README (`numaprobe/1`).

use super::table::{Align, Table};
use serde::{Deserialize, Serialize};

/// One performance level: cells whose values cannot be told apart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Level {
    /// `local` (a node's own memory) or `remote`.
    pub kind: String,
    /// Short name used in drawings and tables: `L` for local, then `A`, `B`, ...
    pub name: String,
    /// Median of the member cells, in the input's unit.
    pub value: f64,
    pub min: f64,
    pub max: f64,
    /// Directed cells `[requesting node, memory node]` (node numbers).
    pub members: Vec<[u32; 2]>,
    /// Hop counts found among the members (0 for local).
    pub hops: Vec<u32>,
    /// `value` over the local level's median: above 1 is slower for latency
    /// and distance, below 1 is less bandwidth. None without local cells.
    pub ratio_to_local: Option<f64>,
}

impl Level {
    /// The level's hop counts as text, `sep` between them (`1/2` in the
    /// drawings and advice, `1,2` in the levels table).
    pub fn hops_text(&self, sep: &str) -> String {
        self.hops
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(sep)
    }
}

/// A direct link of the inferred interconnect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Link {
    pub nodes: [u32; 2],
    /// Name of the level the link's pair belongs to.
    pub level: String,
    /// The pair's value (its better direction), in the input's unit.
    pub value: f64,
}

/// One tier of the node hierarchy: the groups that the pairs of `level`
/// and every better level join (sub-NUMA clusters, then sockets, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tier {
    /// The level whose pairs close these groups.
    pub level: String,
    /// That level's median value, in the input's unit.
    pub value: f64,
    /// A partition of all nodes (a node alone is a group of one).
    pub groups: Vec<Vec<u32>>,
}

/// One directed cell of the input with what the analysis made of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellInfo {
    pub cpu_node: u32,
    pub mem_node: u32,
    /// The measured (or firmware) value, in the input's unit.
    pub value: f64,
    /// The level it belongs to; None for a stray cell.
    pub level: Option<String>,
    pub hops: Option<u32>,
    pub distance: Option<u32>,
    /// Set aside as a disturbed measurement.
    pub stray: bool,
    /// Marked as untrustworthy by the measurement itself.
    pub flagged: bool,
}

/// Something the data show, in words, with the numbers behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// A stable identifier, e.g. `requester-dependent`, `slit-fewer-levels`.
    pub kind: String,
    pub text: String,
    pub data: serde_json::Value,
}

/// The whole inference: what `numaprobe infer --format json` writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Inference {
    pub schema: String,
    pub machine: Option<String>,
    /// `measurement` or `slit` (a firmware table analysed in its place).
    pub source: String,
    pub unit: String,
    /// `lower` (latency, distance) or `higher` (bandwidth) is better.
    pub better: String,
    /// Node numbers; `hops` rows and columns follow this order.
    pub nodes: Vec<u32>,
    pub levels: Vec<Level>,
    /// `hops[a][b]`: hops between `nodes[a]` and `nodes[b]`; null for a pair
    /// measured in neither direction.
    pub hops: Vec<Vec<Option<u32>>>,
    /// Direct links as node pairs.
    pub links: Vec<[u32; 2]>,
    /// The same links with their level and value.
    pub link_details: Vec<Link>,
    /// Groups of nodes joined by their fastest links (sub-NUMA clusters,
    /// sockets of a group); one group when there is no such structure.
    pub groups: Vec<Vec<u32>>,
    /// Nested groups, innermost first: tier k's groups are unions of tier
    /// k-1's. The last tier holds every node when the machine is connected.
    #[serde(default)]
    pub hierarchy: Vec<Tier>,
    /// `distance[a][b]`: the 1-based tier whose groups first hold both
    /// nodes (0 on the diagonal), so every pair across a group comes after
    /// every pair inside it; null for a pair measured in neither direction.
    #[serde(default)]
    pub distance: Vec<Vec<Option<u32>>>,
    /// Nodes with no CPU (no row in the input, or named CPU-less): memory
    /// only, never a place for threads.
    #[serde(default)]
    pub cpuless_nodes: Vec<u32>,
    /// Every cell of the input with its value, level, hops and distance.
    #[serde(default)]
    pub cells: Vec<CellInfo>,
    /// Cells set aside as stray measurements.
    pub stray_cells: Vec<[u32; 2]>,
    pub findings: Vec<Finding>,
    pub advice: Vec<Finding>,
}

impl Inference {
    pub fn level_of(&self, from: u32, to: u32) -> Option<&Level> {
        self.levels.iter().find(|l| l.members.contains(&[from, to]))
    }

    /// The groups as text: `[0,1] [2,3]` (the ASCII drawing and the advice).
    pub fn groups_text(&self) -> String {
        groups_text(&self.groups, false)
    }

    pub fn hops_between(&self, a: u32, b: u32) -> Option<u32> {
        let i = self.nodes.iter().position(|&n| n == a)?;
        let j = self.nodes.iter().position(|&n| n == b)?;
        self.hops[i][j]
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
                self.hops[i]
                    .iter()
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
        for c in &self.cells {
            let level = c
                .level
                .as_ref()
                .and_then(|n| self.levels.iter().find(|l| &l.name == n));
            let opt = |h: Option<u32>| h.map_or(String::new(), |h| h.to_string());
            t.push([
                c.cpu_node.to_string(),
                c.mem_node.to_string(),
                fmt_value(c.value),
                self.unit.clone(),
                c.level.clone().unwrap_or_default(),
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
                    .get(i)
                    .into_iter()
                    .flatten()
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
                l.level.clone(),
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
        // Adjacency grid: which pairs are linked and at which level.
        let w = self
            .nodes
            .iter()
            .map(|x| x.to_string().len())
            .max()
            .unwrap_or(1)
            .max(1);
        out.push_str(&format!("{:>w$} ", ""));
        for &b in &order {
            out.push_str(&format!(" {:>w$}", self.nodes[b]));
        }
        out.push('\n');
        for &a in &order {
            out.push_str(&format!("{:>w$} ", self.nodes[a]));
            for &b in &order {
                let c = if a == b {
                    "o".to_string()
                } else if let Some(l) = self.link_level(self.nodes[a], self.nodes[b]) {
                    l.to_string()
                } else {
                    match self.hops[a][b] {
                        Some(h) => h.to_string(),
                        None => "?".into(),
                    }
                };
                out.push_str(&format!(" {c:>w$}"));
            }
            out.push('\n');
        }
        out.push_str("o = the node itself; a letter = a direct link at that level; a digit = hops (no direct link)\n");
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
        out
    }

    fn link_level(&self, a: u32, b: u32) -> Option<&str> {
        self.link_details
            .iter()
            .find(|l| l.nodes == [a.min(b), a.max(b)])
            .map(|l| l.level.as_str())
    }

    /// Node indices ordered group by group, so a group sits together on the
    /// circle and its links are short.
    fn drawing_order(&self) -> Vec<usize> {
        let mut order = Vec::new();
        for g in &self.groups {
            for n in g {
                if let Some(i) = self.nodes.iter().position(|x| x == n) {
                    if !order.contains(&i) {
                        order.push(i);
                    }
                }
            }
        }
        for i in 0..self.nodes.len() {
            if !order.contains(&i) {
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

/// Groups as `[0,1] [2,3]`; with `skip_single`, groups of one node are left
/// out (and `(others alone)` said when there were some).
pub fn groups_text(groups: &[Vec<u32>], skip_single: bool) -> String {
    let shown: Vec<String> = groups
        .iter()
        .filter(|g| !skip_single || g.len() > 1)
        .map(|g| {
            format!(
                "[{}]",
                g.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
            )
        })
        .collect();
    let alone = skip_single && groups.iter().any(|g| g.len() == 1);
    let mut s = shown.join(" ");
    if alone {
        s.push_str(if shown.is_empty() {
            "(every node alone)"
        } else {
            " (others alone)"
        });
    }
    s
}

/// `0>1 1>0 ...`, cut after `max` cells with a count of the rest.
fn cells_summary(members: &[[u32; 2]], max: usize) -> String {
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

/// Numbers as people write them: 3 significant digits below 1000, integers
/// above.
pub fn fmt_value(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}
