//! The picture of an inferred interconnect for the report: nodes on a
//! circle (grouped nodes side by side), direct links drawn thicker the
//! faster they are and labelled with their value, one colour per level.
//! The same drawing code renders SVG (text) and PNG (pixels, returned as
//! bytes) via plotters; the font and the PNG encoding come from `chart`.

use super::chart::{self, FONT};
use crate::model::infer::{fmt_value, Inference};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    #[error("cannot draw the graph: {0}")]
    Draw(String),
    #[error("no font for the graph's text: {0}")]
    Font(String),
    #[error("encoding the graph's PNG failed: {0}")]
    Png(String),
}

const SIZE: (u32, u32) = (800, 640);

/// Colours for levels A, B, C, ... (fast to slow); cycled beyond.
const PALETTE: [RGBColor; 6] = [
    RGBColor(0x1b, 0x9e, 0x77),
    RGBColor(0x75, 0x70, 0xb3),
    RGBColor(0xd9, 0x5f, 0x02),
    RGBColor(0xe7, 0x29, 0x8a),
    RGBColor(0x66, 0xa6, 0x1e),
    RGBColor(0xa6, 0x76, 0x1d),
];

fn register_font() -> Result<(), GraphError> {
    chart::register_font().map_err(GraphError::Font)
}

/// Up to this many nodes the interconnect is drawn: on an 800-pixel circle
/// 16 nodes sit about 130 px apart, room for a label each.
pub const MAX_NODES: usize = 16;
/// Up to this many direct links: each link carries a label, and past about
/// three links a node (a 16-node mesh has 120) the lines and labels cover
/// each other.
pub const MAX_LINKS: usize = 48;

/// Why the interconnect is not drawn, as one sentence, or `None` when a
/// picture helps: one node has no interconnect, and past [`MAX_NODES`]
/// nodes or [`MAX_LINKS`] links the drawing is a tangle (the report shows
/// the hierarchy of groups and the links table instead). Whoever writes the
/// picture asks this first, so no unreadable SVG or PNG is written.
pub fn left_out(inf: &Inference) -> Option<String> {
    let (nodes, links) = (inf.nodes.len(), inf.link_details.len());
    if nodes < 2 {
        return Some("No interconnect picture: fewer than two nodes.".into());
    }
    if nodes > MAX_NODES || links > MAX_LINKS {
        return Some(format!(
            "No interconnect picture: {nodes} nodes and {links} direct links would be a tangle (it is drawn for up to {MAX_NODES} nodes and {MAX_LINKS} links); the groups and the links table say the same."
        ));
    }
    None
}

/// The graph as an SVG document.
pub fn render_svg(inf: &Inference) -> Result<String, GraphError> {
    register_font()?;
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, SIZE).into_drawing_area();
        draw(&root, inf)?;
        root.present()
            .map_err(|e| GraphError::Draw(e.to_string()))?;
    }
    Ok(buf)
}

/// The graph as the bytes of a PNG image (the caller writes them).
pub fn render_png(inf: &Inference) -> Result<Vec<u8>, GraphError> {
    register_font()?;
    let mut rgb = vec![0u8; SIZE.0 as usize * SIZE.1 as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, SIZE).into_drawing_area();
        draw(&root, inf)?;
        root.present()
            .map_err(|e| GraphError::Draw(e.to_string()))?;
    }
    chart::encode_png(&rgb, SIZE.0, SIZE.1).map_err(GraphError::Png)
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    inf: &Inference,
) -> Result<(), GraphError> {
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| GraphError::Draw(e.to_string());
    root.fill(&WHITE).map_err(err)?;
    let (w, h) = (SIZE.0 as f64, SIZE.1 as f64);
    let title = match &inf.machine {
        Some(m) => format!("{} ({})", shorten(m, 70), inf.unit),
        None => format!("Inferred interconnect ({})", inf.unit),
    };
    root.draw(&Text::new(
        title,
        (20, 14),
        (FONT, 18).into_font().color(&BLACK),
    ))
    .map_err(err)?;

    // Node positions: a circle, group by group.
    let mut order: Vec<u32> = inf.groups.iter().flatten().copied().collect();
    for n in &inf.nodes {
        if !order.contains(n) {
            order.push(*n);
        }
    }
    let n = order.len().max(1);
    let (cx, cy, r) = (w / 2.0, h / 2.0 + 10.0, (w.min(h) / 2.0 - 110.0).max(60.0));
    let pos = |node: u32| -> (i32, i32) {
        let k = order.iter().position(|&x| x == node).unwrap_or(0);
        let start = if n == 2 { 1.0 } else { -0.5 };
        let t = std::f64::consts::PI * (2.0 * k as f64 / n as f64 + start);
        ((cx + r * t.cos()) as i32, (cy + r * t.sin()) as i32)
    };

    let remote: Vec<&crate::model::infer::Level> =
        inf.levels.iter().filter(|l| l.kind == "remote").collect();
    let level_index = |name: &str| remote.iter().position(|l| l.name == name).unwrap_or(0);
    // Links: the fastest level thickest.
    let nlev = remote.len().max(1);
    for l in &inf.link_details {
        let li = level_index(&l.level);
        let color = PALETTE[li % PALETTE.len()];
        let width = (2 + 2 * (nlev - li)) as u32;
        let (a, b) = (pos(l.nodes[0]), pos(l.nodes[1]));
        root.draw(&PathElement::new(
            vec![a, b],
            ShapeStyle {
                color: color.to_rgba(),
                filled: false,
                stroke_width: width,
            },
        ))
        .map_err(err)?;
        // Labels sit 40 % of the way from the first node rather than at the
        // middle, so the labels of two crossing diagonals do not overlap.
        let mid = (a.0 + (b.0 - a.0) * 2 / 5, a.1 + (b.1 - a.1) * 2 / 5);
        // Label on a white patch so crossing links stay readable.
        root.draw(&Rectangle::new(
            [(mid.0 - 28, mid.1 - 9), (mid.0 + 28, mid.1 + 9)],
            WHITE.mix(0.85).filled(),
        ))
        .map_err(err)?;
        root.draw(&Text::new(
            fmt_value(l.value),
            mid,
            (FONT, 15)
                .into_font()
                .color(&color)
                .pos(Pos::new(HPos::Center, VPos::Center)),
        ))
        .map_err(err)?;
    }
    // Nodes.
    for &node in &order {
        let p = pos(node);
        root.draw(&Circle::new(p, 22, RGBColor(0x33, 0x33, 0x33).filled()))
            .map_err(err)?;
        root.draw(&Text::new(
            node.to_string(),
            p,
            (FONT, 18)
                .into_font()
                .color(&WHITE)
                .pos(Pos::new(HPos::Center, VPos::Center)),
        ))
        .map_err(err)?;
    }
    // Legend: local, then each remote level with its value and hops.
    let mut y = h as i32 - 20 - 18 * (remote.len() as i32 + 1);
    if let Some(local) = inf.levels.iter().find(|l| l.kind == "local") {
        root.draw(&Text::new(
            format!("local: {} {}", fmt_value(local.value), inf.unit),
            (20, y),
            (FONT, 14).into_font().color(&BLACK),
        ))
        .map_err(err)?;
    }
    for (i, l) in remote.iter().enumerate() {
        y += 18;
        // A level no direct link belongs to (sub-NUMA clusters of one
        // package, pairs reached through others) gets no colour swatch: no
        // line in the picture has its colour.
        let drawn = inf.link_details.iter().any(|d| d.level == l.name);
        if drawn {
            let color = PALETTE[i % PALETTE.len()];
            root.draw(&Rectangle::new([(20, y + 2), (34, y + 12)], color.filled()))
                .map_err(err)?;
        }
        let hops = l.hops_text("/");
        let why = match (drawn, l.hops.as_slice()) {
            (true, _) => "",
            (false, [0]) => ", same package: no link",
            (false, _) => ", no direct link",
        };
        root.draw(&Text::new(
            format!(
                "level {}: {} {} ({}-{}), {} hop(s){}{why}",
                l.name,
                fmt_value(l.value),
                inf.unit,
                fmt_value(l.min),
                fmt_value(l.max),
                hops,
                l.ratio_to_local
                    .map_or(String::new(), |r| format!(", {r:.2}x local"))
            ),
            (40, y),
            (FONT, 14).into_font().color(&BLACK),
        ))
        .map_err(err)?;
    }
    Ok(())
}

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        s.chars().take(max - 1).collect::<String>() + "…"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{analyse, parse};

    fn sample() -> Inference {
        analyse(
            &parse(
                r#"{"unit":"ns","machine":"square","matrix":[[100,135,170,135],[135,100,135,170],[170,135,100,135],[135,170,135,100]]}"#,
                None,
            )
            .unwrap(),
        )
    }

    /// Two packages of two sub-NUMA clusters each: the clusters of a
    /// package (level A) share no link; only the links across packages
    /// (level B) are drawn, and the legend says why A has no line.
    #[test]
    fn sub_numa_pairs_are_not_drawn_as_links() {
        let inf = analyse(
            &parse(
                r#"{"unit":"ns","matrix":[[77.7,81.7,135,134],[81.6,77.5,137,134],[135,136,73.5,82.1],[130,134,81.7,78.5]]}"#,
                None,
            )
            .unwrap(),
        );
        let a = inf.levels.iter().find(|l| l.name == "A").unwrap();
        assert_eq!(a.hops, vec![0]);
        assert!(inf.link_details.iter().all(|l| l.level == "B"));
        let svg = render_svg(&inf).unwrap();
        let hex = |c: RGBColor| format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
        assert!(
            !svg.contains(&hex(PALETTE[0])),
            "nothing in level A's colour"
        );
        assert!(svg.contains(&hex(PALETTE[1])), "level B's links drawn");
        assert!(svg.contains("same package: no link"), "the legend says why");
    }

    #[test]
    fn svg_has_a_node_label_and_link_values() {
        let svg = render_svg(&sample()).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("\n135.0\n"), "link value drawn");
        assert!(svg.contains("\n3\n"), "node label drawn");
    }

    /// Drawn from 2 to MAX_NODES nodes and up to MAX_LINKS links; one past
    /// either limit, or one node, is left out with its reason.
    #[test]
    fn the_picture_is_left_out_past_either_limit() {
        let base = sample();
        let with = |nodes: usize, links: usize| {
            let mut inf = base.clone();
            inf.nodes = (0..nodes as u32).collect();
            let link = base.link_details.iter().next().unwrap();
            inf.link_details = vec![link; links].into();
            left_out(&inf)
        };
        assert_eq!(with(4, 4), None);
        assert_eq!(with(2, 1), None);
        assert_eq!(with(MAX_NODES, MAX_LINKS), None);
        let why = with(MAX_NODES + 1, 20).unwrap();
        assert_eq!(
            why,
            "No interconnect picture: 17 nodes and 20 direct links would be a tangle (it is drawn for up to 16 nodes and 48 links); the groups and the links table say the same."
        );
        let why = with(8, MAX_LINKS + 1).unwrap();
        assert!(why.contains("8 nodes and 49 direct links"), "{why}");
        assert_eq!(
            with(1, 0).as_deref(),
            Some("No interconnect picture: fewer than two nodes.")
        );
        assert!(with(0, 0).is_some());
    }

    #[test]
    fn png_is_rendered_with_text() {
        let bytes = render_png(&sample()).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
    }
}
