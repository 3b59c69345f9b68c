//! The matrices as heatmaps: every measured matrix (latency, bandwidth),
//! the firmware's SLIT, and each inference's cells coloured by level.
//!
//! A heatmap is an HTML table (values stay text: selectable, searchable,
//! readable by a screen reader) with a background colour per cell. Headers
//! stick while the section scrolls, so a 64x64 matrix stays readable: row
//! and column node numbers never leave the view. Flagged cells carry a mark
//! and a dashed outline, and are listed under the table with their reasons
//! (a tooltip alone would hide them on paper and on touch screens).

use super::heat_table::{badness, heat_table, HeatCell, Noisy, Scale, COMPACT_COLUMNS};
use super::page::{escape, prose, scale_colour};
use super::ReportInput;
use crate::model::infer::fmt_value;
use crate::model::infer::Inference;
use crate::model::matrix::MatrixKind;
use crate::model::matrix::MatrixResult;
use crate::topology::Distances;

pub fn section(input: &ReportInput) -> String {
    let mut s = String::new();
    for m in &input.matrices {
        s.push_str(&matrix(&m.value, &m.file));
    }
    if let Some(t) = &input.topology {
        if let Some(d) = &t.value.distances {
            s.push_str(&slit(d, &t.file));
        }
    }
    for inf in &input.inferences {
        s.push_str(&levels(&inf.value, &inf.file));
    }
    for c in &input.c2c {
        s.push_str(&super::c2c::section(&c.value, &c.file));
    }
    s
}

/// A value for a cell: distances are whole numbers, measurements get the
/// digits their size warrants.
fn value_text(v: f64, unit: &str) -> String {
    if unit == "slit" || unit.is_empty() {
        format!("{v:.0}")
    } else {
        fmt_value(v)
    }
}

fn legend(best: f64, worst: f64, unit: &str) -> String {
    let u = if unit.is_empty() {
        String::new()
    } else {
        format!("&#160;{}", escape(unit))
    };
    format!(
        "<p class=\"legend\">colour: <span class=\"swatch\" style=\"background:{}\"></span>best {}{u} <span class=\"swatch\" style=\"background:{}\"></span>worst {}{u}; rows: CPU node, columns: memory node</p>\n",
        scale_colour(0.0),
        value_text(best, unit),
        scale_colour(1.0),
        value_text(worst, unit),
    )
}

fn matrix(m: &MatrixResult, file: &str) -> String {
    let lower = m.kind == MatrixKind::Latency;
    let name = match m.kind {
        MatrixKind::Latency => "Idle latency",
        MatrixKind::Bandwidth => "Bandwidth",
    };
    // The scale spans the trusted cells only, and needs two of them apart
    // beyond their spread: one cell, or cells within noise of each other,
    // have no best or worst, so they are drawn neutral.
    let trusted: Vec<Noisy> = m
        .cells
        .iter()
        .filter(|c| !c.flagged)
        .map(|c| Noisy::new(c.median, c.cv))
        .collect();
    let scale = Scale::of(&trusted, lower);
    let mut cells = Vec::new();
    for &r in &m.cpu_nodes {
        let mut row = Vec::new();
        for &c in &m.mem_nodes {
            let cell = m.cell(r, c);
            let failed = m.failed.iter().find(|f| f.cpu_node == r && f.mem_node == c);
            row.push(match (cell, failed) {
                (Some(x), _) => {
                    let mark = if x.flagged { "* \u{2691}" } else { "" };
                    HeatCell {
                        text: format!("{}{mark}", fmt_value(x.median)),
                        colour: scale
                            .filter(|_| !x.flagged)
                            .map(|sc| sc.colour(Noisy::new(x.median, x.cv))),
                        flagged: x.flagged,
                        title: format!(
                            "CPU node {r} -> memory node {c}: median {} {}, min {}, max {}, CV {:.1} %, {} samples, {:.1} % of pages on node {c}{}",
                            fmt_value(x.median),
                            m.unit,
                            fmt_value(x.min),
                            fmt_value(x.max),
                            100.0 * x.cv,
                            x.kept(),
                            100.0 * x.placement.fraction_on_intended,
                            if x.flags.is_empty() { String::new() } else { format!("; {}", x.flags.join("; ")) }
                        ),
                    }
                }
                (None, Some(f)) => HeatCell {
                    text: "failed".into(),
                    colour: None,
                    flagged: true,
                    title: f.reason.clone(),
                },
                (None, None) => HeatCell {
                    text: "\u{b7}".into(),
                    colour: None,
                    flagged: false,
                    title: "not measured".into(),
                },
            });
        }
        cells.push(row);
    }
    let mut s = format!(
        "<h3>{name} ({}){}, median <span class=\"note\">from {}{}</span></h3>\n",
        escape(&m.unit),
        m.buffer_words()
            .map(|b| format!(", {}", escape(&b).replace(' ', "&#160;")))
            .unwrap_or_default(),
        escape(file),
        if m.complete { "" } else { ", partial" }
    );
    if let Some(sc) = scale {
        s.push_str(&legend(sc.best.value, sc.worst.value, &m.unit));
    } else if !m.cells.is_empty() {
        s.push_str("<p class=\"legend\">colour: none, no two trusted cells differ beyond their spread; hatched: flagged (the reason is below and in the cell's tooltip); rows: CPU node, columns: memory node</p>\n");
    }
    s.push_str(&heat_table(
        &m.cpu_nodes,
        &m.mem_nodes,
        &cells,
        "CPU \\ mem",
    ));
    let flagged: Vec<String> = m
        .cells
        .iter()
        .filter(|c| c.flagged)
        .map(|c| {
            format!(
                "<li>* \u{2691} CPU node {} -> memory node {}: {} (placement {:.1}&#160;% on the intended node)</li>",
                c.cpu_node,
                c.mem_node,
                prose(&c.flags.join("; ")),
                100.0 * c.placement.fraction_on_intended
            )
        })
        .chain(m.failed.iter().map(|f| format!("<li>failed: {}</li>", prose(&f.to_string()))))
        .collect();
    if flagged.is_empty() {
        s.push_str(&format!(
            "<p class=\"legend\">Placement: every cell had at least {:.0}&#160;% of its pages on the intended node; no cell is flagged.</p>\n",
            100.0 * m.placement_threshold
        ));
    } else {
        s.push_str("<ul class=\"findings\">\n");
        s.push_str(&flagged.join("\n"));
        s.push_str("\n</ul>\n");
    }
    for n in &m.notes {
        s.push_str(&format!("<p class=\"note\">{}</p>\n", prose(n)));
    }
    s
}

fn slit(d: &Distances, file: &str) -> String {
    let all: Vec<f64> = d.matrix.iter().flatten().map(|&v| v as f64).collect();
    let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = all.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let cells: Vec<Vec<HeatCell>> = d
        .matrix
        .iter()
        .enumerate()
        .map(|(a, row)| {
            row.iter()
                .enumerate()
                .map(|(b, &v)| HeatCell {
                    text: v.to_string(),
                    // One node's table has no best or worst: neutral.
                    colour: (hi > lo).then(|| scale_colour(badness(v as f64, lo, hi, true))),
                    flagged: false,
                    title: format!(
                        "node {} -> node {}: distance {v}",
                        d.node_ids.get(a).copied().unwrap_or(0),
                        d.node_ids.get(b).copied().unwrap_or(0)
                    ),
                })
                .collect()
        })
        .collect();
    let mut s = format!(
        "<h3>Firmware distances (SLIT) <span class=\"note\">from {}</span></h3>\n",
        escape(file)
    );
    if hi > lo {
        s.push_str(&legend(lo, hi, "slit"));
    }
    s.push_str(&heat_table(&d.node_ids, &d.node_ids, &cells, "from \\ to"));
    s
}

/// An inference's cells coloured by their level (the groups the analysis
/// found), with each cell's value and level name.
fn levels(inf: &Inference, file: &str) -> String {
    if inf.cells.is_empty() {
        return String::new();
    }
    let mut rows: Vec<u32> = inf.cells.iter().map(|c| c.cpu_node).collect();
    rows.sort_unstable();
    rows.dedup();
    let mut cols: Vec<u32> = inf.cells.iter().map(|c| c.mem_node).collect();
    cols.sort_unstable();
    cols.dedup();
    let level_index = |name: &str| inf.levels.iter().position(|l| l.name == name);
    // Past a dozen columns the level's letter in every cell doubles the
    // table's width (64 columns no longer fit a laptop's window): the
    // colour and the tooltip carry the level, the cell its value.
    let wide = cols.len() > COMPACT_COLUMNS;
    // Levels are ordered best first: colour them on the same good-to-bad
    // scale as the value heatmaps.
    let steps = inf.levels.len().saturating_sub(1).max(1) as f64;
    let level_colour = |i: usize| scale_colour(i as f64 / steps);
    let cells: Vec<Vec<HeatCell>> = rows
        .iter()
        .map(|&r| {
            cols.iter()
                .map(|&c| {
                    match inf
                        .cells
                        .iter()
                        .find(|x| x.cpu_node == r && x.mem_node == c)
                    {
                        Some(x) => {
                            let lvl = x.level.as_deref().unwrap_or("stray");
                            HeatCell {
                                text: if wide {
                                    value_text(x.value, &inf.unit)
                                } else {
                                    format!("{} {lvl}", value_text(x.value, &inf.unit))
                                },
                                colour: x.level.as_deref().and_then(level_index).map(level_colour),
                                flagged: x.flagged || x.stray,
                                title: format!(
                                    "node {r} -> node {c}: {} {}, level {lvl}{}{}",
                                    value_text(x.value, &inf.unit),
                                    inf.unit,
                                    x.hops.map(|h| format!(", {h} hops")).unwrap_or_default(),
                                    if x.stray { ", set aside as stray" } else { "" }
                                ),
                            }
                        }
                        None => HeatCell {
                            text: "\u{b7}".into(),
                            colour: None,
                            flagged: false,
                            title: "no value".into(),
                        },
                    }
                })
                .collect()
        })
        .collect();
    let source = if inf.source == "slit" {
        "the firmware's SLIT"
    } else {
        "the measured matrix"
    };
    let mut s = format!(
        "<h3>Levels of {source} ({}) <span class=\"note\">from {}</span></h3>\n<p class=\"legend\">colour: level",
        escape(&inf.unit),
        escape(file)
    );
    for (i, l) in inf.levels.iter().enumerate() {
        s.push_str(&format!(
            "<span class=\"swatch\" style=\"background:{}\"></span>{} ({}, {})",
            level_colour(i),
            escape(&l.name),
            escape(&l.kind),
            value_text(l.value, &inf.unit)
        ));
    }
    s.push_str(if wide {
        "; dashed: stray or flagged cell; the level of a cell is in its tooltip</p>\n"
    } else {
        "; dashed: stray or flagged cell</p>\n"
    });
    s.push_str(&heat_table(&rows, &cols, &cells, "from \\ to"));
    s
}
