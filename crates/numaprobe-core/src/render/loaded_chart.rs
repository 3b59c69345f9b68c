//! The loaded-latency chart: latency (ns, median) against achieved
//! bandwidth (GB/s), one line per curve (CPU node -> memory node, mix),
//! points at the measured delays, the knee circled. A flagged point is a
//! hollow grey circle with a star and its reason as a tooltip, never a dot
//! of its curve's colour, and the legend says so. Drawn with `plotters` in
//! the house style of `study_chart` (the bundled font from `chart`); the
//! flagged marks are SVG of their own, added over the picture, since
//! plotters gives an element no tooltip. Rendering goes to memory, the
//! caller decides where the SVG goes.

use super::chart::{self, FONT};
use crate::model::loaded::{Curve, LoadPoint, LoadedResult};
use crate::stats::flags::STAR;
use plotters::prelude::*;

const WIDTH: u32 = 900;
const HEIGHT: u32 = 560;

/// Line colours, first curve first (the study's shades plus spares).
const COLOURS: [RGBColor; 6] = [
    RGBColor(70, 110, 180),
    RGBColor(230, 150, 60),
    RGBColor(100, 170, 100),
    RGBColor(170, 90, 160),
    RGBColor(200, 70, 70),
    RGBColor(90, 90, 90),
];

#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error("nothing to draw: no curve has a measured point")]
    Empty,
    #[error("drawing the chart failed: {0}")]
    Draw(String),
}

fn draw_err<E: std::fmt::Debug>(e: E) -> ChartError {
    ChartError::Draw(format!("{e:?}"))
}

fn finite(p: &&LoadPoint) -> bool {
    p.bandwidth_gbs.is_finite() && p.latency_ns.is_finite()
}

fn finite_points(c: &Curve) -> Vec<(f64, f64)> {
    c.points
        .iter()
        .filter(finite)
        .map(|p| (p.bandwidth_gbs, p.latency_ns))
        .collect()
}

/// The flagged mark's grey: the colour of no curve.
const FLAG_GREY: RGBColor = RGBColor(107, 107, 107);

/// A flagged point's mark at pixel (`x`, `y`): a hollow grey circle, a
/// star, and the reason as the tooltip (text through [`crate::clean::html`]).
fn flag_mark(x: i32, y: i32, c: &Curve, p: &LoadPoint) -> String {
    let grey = "#6b6b6b";
    format!(
        "<g class=\"flagged\"><title>{}</title><circle cx=\"{x}\" cy=\"{y}\" r=\"5\" fill=\"white\" stroke=\"{grey}\" stroke-width=\"2\"/><text x=\"{}\" y=\"{}\" fill=\"{grey}\" font-family=\"sans-serif\" font-size=\"16\" font-weight=\"bold\">{STAR}</text></g>\n",
        crate::clean::html(&format!(
            "{}, delay {}: {:.1} ns{STAR}: {}",
            super::loaded::curve_title(c),
            super::loaded::delay_text(p),
            p.latency_ns,
            p.flags.join("; ")
        )),
        x + 6,
        y - 4
    )
}

/// Every curve of `r` in one SVG document.
pub fn svg(r: &LoadedResult) -> Result<String, ChartError> {
    let curves: Vec<&Curve> = r
        .curves
        .iter()
        .filter(|c| !finite_points(c).is_empty())
        .collect();
    if curves.is_empty() {
        return Err(ChartError::Empty);
    }
    chart::register_font().map_err(ChartError::Draw)?;
    let all: Vec<(f64, f64)> = curves.iter().flat_map(|c| finite_points(c)).collect();
    let x_max = all.iter().map(|p| p.0).fold(0.0f64, f64::max).max(1e-3) * 1.08;
    let y_max = all.iter().map(|p| p.1).fold(0.0f64, f64::max).max(1e-3) * 1.12;
    let mut out = String::new();
    let mut marks = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let mut ch = ChartBuilder::on(&root)
            .caption(
                "Loaded latency: latency against achieved bandwidth",
                (FONT, 17),
            )
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(0.0..x_max, 0.0..y_max)
            .map_err(draw_err)?;
        ch.configure_mesh()
            .x_desc("achieved bandwidth, GB/s (all threads)")
            .y_desc("latency, ns (median)")
            .label_style((FONT, 12))
            .axis_desc_style((FONT, 13))
            .draw()
            .map_err(draw_err)?;
        for (i, c) in curves.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let pts = finite_points(c);
            ch.draw_series(std::iter::once(PathElement::new(
                pts.clone(),
                colour.stroke_width(2),
            )))
            .map_err(draw_err)?
            .label(super::loaded::curve_title(c))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(2))
            });
            // Trusted points as dots of the curve's colour; flagged ones
            // get their own mark below, over every line.
            let trusted = c
                .points
                .iter()
                .filter(finite)
                .filter(|p| p.flags.is_empty());
            ch.draw_series(
                trusted.map(|p| Circle::new((p.bandwidth_gbs, p.latency_ns), 3, colour.filled())),
            )
            .map_err(draw_err)?;
            for p in c
                .points
                .iter()
                .filter(finite)
                .filter(|p| !p.flags.is_empty())
            {
                let (x, y) = ch.backend_coord(&(p.bandwidth_gbs, p.latency_ns));
                marks.push_str(&flag_mark(x, y, c, p));
            }
            if let Some(k) = c.knee.and_then(|k| c.points.get(k)) {
                ch.draw_series(std::iter::once(Circle::new(
                    (k.bandwidth_gbs, k.latency_ns),
                    8,
                    colour.stroke_width(2),
                )))
                .map_err(draw_err)?;
            }
        }
        if !marks.is_empty() {
            let hollow = FLAG_GREY.stroke_width(2);
            ch.draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
                .map_err(draw_err)?
                .label(format!(
                    "{STAR} flagged point, not trusted (its tooltip gives the reason)"
                ))
                .legend(move |(x, y)| Circle::new((x + 9, y), 5, hollow));
        }
        ch.configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .label_font((FONT, 12))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .draw()
            .map_err(draw_err)?;
        root.present().map_err(draw_err)?;
    }
    if let Some(end) = out.rfind("</svg>") {
        out.insert_str(end, &marks);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_curve_draws_as_svg_and_nothing_is_an_error() {
        let r = super::super::loaded::tests::doc();
        let s = svg(&r).unwrap();
        assert!(s.starts_with("<svg"), "{}", &s[..60.min(s.len())]);
        assert!(s.contains("memory node 0, read"));
        let mut empty = r.clone();
        empty.curves[0].points.clear();
        assert!(matches!(svg(&empty), Err(ChartError::Empty)));
    }

    #[test]
    fn a_flagged_point_is_a_hollow_grey_star_at_its_place_with_its_reason() {
        let mut r = super::super::loaded::tests::doc();
        let plain = svg(&r).unwrap();
        assert!(!plain.contains("flagged"), "no mark, no legend line");
        r.curves[0].points[1].flags = vec!["spread <wide>\u{1b}[31m".into()];
        let s = svg(&r).unwrap();
        let doc = roxmltree::Document::parse(&s).expect("the chart is well-formed XML");
        let marks = crate::render::flag_marks::flag_marks(doc.root());
        assert_eq!(marks.len(), 1, "{marks:?}");
        let m = &marks[0];
        assert_eq!(
            m.tip,
            "CPU node 0 -> memory node 0, read, delay 64: 104.0 ns*: spread <wide>\\u{1b}[31m"
        );
        assert_eq!(
            (m.star.as_str(), m.fill.as_str(), m.stroke.as_str()),
            ("*", "white", "#6b6b6b")
        );
        // Where plotters put the trusted dot it no longer draws.
        let at = (m.cx.as_str(), m.cy.as_str());
        let dot = format!("<circle cx=\"{}\" cy=\"{}\" r=\"3\"", at.0, at.1);
        assert!(plain.contains(&dot), "{dot} in {plain}");
        // On the curve's line, which runs through all three points.
        let line = doc
            .descendants()
            .filter(|n| n.has_tag_name("polyline") && n.attribute("stroke") == Some("#466EB4"))
            .filter_map(|n| n.attribute("points"))
            .map(|p| p.split_whitespace().collect::<Vec<_>>())
            .find(|p| p.len() == 3)
            .unwrap();
        assert_eq!(line[1], format!("{},{}", at.0, at.1));
        assert!(!s.contains(&dot), "{s}");
        assert!(s.contains("* flagged point, not trusted (its tooltip gives the reason)"));
        // The legend's hollow circle sits under the middle of the curve's
        // legend line.
        let legend_line: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("polyline") && n.attribute("stroke") == Some("#466EB4"))
            .filter_map(|n| n.attribute("points"))
            .map(|p| p.split_whitespace().collect::<Vec<_>>())
            .find(|p| p.len() == 2)
            .unwrap();
        let x = |p: &str| p.split(',').next().unwrap().parse::<i32>().unwrap();
        let middle = (x(legend_line[0]) + x(legend_line[1])) / 2;
        let legend_mark = doc
            .descendants()
            .find(|n| {
                n.has_tag_name("circle")
                    && n.attribute("stroke") == Some("#6B6B6B")
                    && n.attribute("fill") == Some("none")
            })
            .unwrap();
        assert_eq!(
            legend_mark.attribute("cx"),
            Some(middle.to_string().as_str())
        );
    }

    #[test]
    fn a_point_without_a_finite_figure_is_neither_dot_nor_mark() {
        let mut r = super::super::loaded::tests::doc();
        let dots = |s: &str| s.matches(" r=\"3\" ").count();
        let marks = |s: &str| s.matches("class=\"flagged\"").count();
        let plain = svg(&r).unwrap();
        assert_eq!((dots(&plain), marks(&plain)), (3, 0));
        // Either figure not finite, trusted or flagged: left off the chart.
        for (gbs, ns) in [(f64::INFINITY, 104.0), (8.0, f64::NAN)] {
            for flags in [vec![], vec!["unstable".to_string()]] {
                let p = &mut r.curves[0].points[1];
                (p.bandwidth_gbs, p.latency_ns, p.flags) = (gbs, ns, flags);
                let s = svg(&r).unwrap();
                assert_eq!((dots(&s), marks(&s)), (2, 0), "{gbs} GB/s, {ns} ns");
            }
        }
    }
}
