//! The loaded-latency chart: latency (ns, median) against achieved
//! bandwidth (GB/s), one line per curve (CPU node -> memory node, mix),
//! points at the measured delays, the knee circled. Drawn with `plotters`
//! in the house style of `study_chart` (the bundled font from `chart`);
//! rendering goes to memory, the caller decides where the SVG goes.

use super::chart::{self, FONT};
use crate::model::loaded::{Curve, LoadedResult};
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

fn finite_points(c: &Curve) -> Vec<(f64, f64)> {
    c.points
        .iter()
        .filter(|p| p.bandwidth_gbs.is_finite() && p.latency_ns.is_finite())
        .map(|p| (p.bandwidth_gbs, p.latency_ns))
        .collect()
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
            ch.draw_series(pts.iter().map(|&p| Circle::new(p, 3, colour.filled())))
                .map_err(draw_err)?;
            if let Some(k) = c.knee.and_then(|k| c.points.get(k)) {
                ch.draw_series(std::iter::once(Circle::new(
                    (k.bandwidth_gbs, k.latency_ns),
                    8,
                    colour.stroke_width(2),
                )))
                .map_err(draw_err)?;
            }
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
}
