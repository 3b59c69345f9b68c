//! The cache-size sweep as an SVG picture: latency (log y) against
//! working-set size (log x), one line per page kind, a dashed vertical line
//! at each cache size the topology reports, and the plateaus the analysis
//! found as grey bands. Plain SVG text (no fonts to embed, no library): the
//! picture only draws what the document holds.

use crate::model::sweep::{PageKind, SweepResult};
use crate::units::format_size;

const W: f64 = 760.0;
const H: f64 = 420.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 50.0;

fn colour(k: PageKind) -> &'static str {
    match k {
        PageKind::Small => "#d62728",
        PageKind::Thp => "#1f77b4",
        PageKind::Huge2M => "#2ca02c",
        PageKind::Huge1G => "#9467bd",
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The SVG document of `r` (an empty frame with a note when it has no point).
pub fn svg(r: &SweepResult) -> String {
    let xs: Vec<f64> = r.points.iter().map(|p| p.size_bytes as f64).collect();
    let ys: Vec<f64> = r.points.iter().map(|p| p.ns).filter(|v| *v > 0.0).collect();
    let (x0, x1) = (
        xs.iter().cloned().fold(f64::INFINITY, f64::min).max(1.0),
        xs.iter().cloned().fold(0.0, f64::max).max(2.0),
    );
    let (y0, y1) = (
        ys.iter().cloned().fold(f64::INFINITY, f64::min).max(0.01) / 1.2,
        ys.iter().cloned().fold(0.0, f64::max).max(0.02) * 1.2,
    );
    let (x0, x1) = if x0 < x1 { (x0, x1) } else { (x1 / 2.0, x1) };
    let (y0, y1) = if y0 < y1 { (y0, y1) } else { (y1 / 2.0, y1) };
    let pw = W - LEFT - RIGHT;
    let ph = H - TOP - BOTTOM;
    let fx = |v: f64| LEFT + (v.ln() - x0.ln()) / (x1.ln() - x0.ln()) * pw;
    let fy = |v: f64| TOP + ph - (v.max(y0).ln() - y0.ln()) / (y1.ln() - y0.ln()) * ph;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"{W}\" height=\"{H}\" fill=\"white\"/>\n"
    );
    s.push_str(&format!(
        "<text x=\"{LEFT}\" y=\"20\" font-size=\"13\">{}</text>\n",
        esc(&format!(
            "Latency against working-set size: CPU {} (node {}) -> memory node {}{}",
            r.cpu,
            r.cpu_node,
            r.mem_node,
            if r.complete { "" } else { " (incomplete)" }
        ))
    ));
    if r.points.is_empty() {
        s.push_str("<text x=\"80\" y=\"200\">no point measured</text>\n</svg>\n");
        return s;
    }
    // Plateaus of the first curve with an analysis, as bands.
    if let Some(c) = r.analysis.as_ref().and_then(|a| a.curves.last()) {
        for p in &c.plateaus {
            let (a, b) = (fx(p.from_bytes as f64), fx(p.to_bytes as f64));
            s.push_str(&format!(
                "<rect x=\"{a:.1}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{ph}\" fill=\"#eeeeee\"/>\n",
                (b - a).max(1.0)
            ));
        }
    }
    // Axes and decade/octave ticks.
    s.push_str(&format!(
        "<line x1=\"{LEFT}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n<line x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{}\" stroke=\"black\"/>\n",
        TOP + ph,
        LEFT + pw,
        TOP + ph,
        TOP + ph
    ));
    let mut t = 1u64 << (63 - (x0 as u64).max(1).leading_zeros());
    while (t as f64) <= x1 {
        if (t as f64) >= x0 {
            let x = fx(t as f64);
            s.push_str(&format!(
                "<line x1=\"{x:.1}\" y1=\"{}\" x2=\"{x:.1}\" y2=\"{}\" stroke=\"black\"/><text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                TOP + ph,
                TOP + ph + 4.0,
                TOP + ph + 16.0,
                esc(&format_size(t))
            ));
        }
        t = t.saturating_mul(4);
        if t == u64::MAX {
            break;
        }
    }
    let mut v = 10f64.powf(y0.log10().floor());
    while v <= y1 {
        for m in [1.0, 2.0, 5.0] {
            let y = v * m;
            if y >= y0 && y <= y1 {
                let py = fy(y);
                s.push_str(&format!(
                    "<line x1=\"{}\" y1=\"{py:.1}\" x2=\"{LEFT}\" y2=\"{py:.1}\" stroke=\"black\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n",
                    LEFT - 4.0,
                    LEFT - 6.0,
                    py + 4.0,
                    if y < 10.0 { format!("{y}") } else { format!("{y:.0}") }
                ));
            }
        }
        v *= 10.0;
    }
    s.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">working set</text>\n<text x=\"16\" y=\"{:.1}\" transform=\"rotate(-90 16 {:.1})\" text-anchor=\"middle\">ns per load</text>\n",
        LEFT + pw / 2.0,
        H - 8.0,
        TOP + ph / 2.0,
        TOP + ph / 2.0
    ));
    // Cache sizes.
    for c in &r.caches {
        let size = c.size_bytes as f64;
        if size < x0 || size > x1 {
            continue;
        }
        let x = fx(size);
        s.push_str(&format!(
            "<line x1=\"{x:.1}\" y1=\"{TOP}\" x2=\"{x:.1}\" y2=\"{}\" stroke=\"#888888\" stroke-dasharray=\"4 3\"/><text x=\"{:.1}\" y=\"{}\" fill=\"#555555\">{}</text>\n",
            TOP + ph,
            x + 3.0,
            TOP + 12.0,
            esc(&format!("{} {}", c.name, format_size(c.size_bytes)))
        ));
    }
    // One line per page kind, with its legend.
    for (i, &k) in r.pages.iter().enumerate() {
        let pts: Vec<String> = r
            .curve(k)
            .iter()
            .filter(|p| p.ns > 0.0)
            .map(|p| format!("{:.1},{:.1}", fx(p.size_bytes as f64), fy(p.ns)))
            .collect();
        if pts.is_empty() {
            continue;
        }
        s.push_str(&format!(
            "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\" points=\"{}\"/>\n",
            colour(k),
            pts.join(" ")
        ));
        let ly = TOP + 30.0 + 16.0 * i as f64;
        s.push_str(&format!(
            "<line x1=\"{}\" y1=\"{ly}\" x2=\"{}\" y2=\"{ly}\" stroke=\"{}\" stroke-width=\"2\"/><text x=\"{}\" y=\"{}\">{} pages</text>\n",
            LEFT + 10.0,
            LEFT + 30.0,
            colour(k),
            LEFT + 35.0,
            ly + 4.0,
            k.name()
        ));
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sweep::{CacheLevel, SweepPoint};
    use crate::stats::StopReason;

    #[test]
    fn the_chart_has_a_line_per_page_kind_and_the_cache_sizes() {
        let sizes = [4u64 << 10, 64 << 10, 1 << 20, 16 << 20];
        let mut points = Vec::new();
        for k in [PageKind::Small, PageKind::Thp] {
            for (i, &s) in sizes.iter().enumerate() {
                points.push(SweepPoint {
                    size_bytes: s,
                    pages: k,
                    ns: 1.5 * 3f64.powi(i as i32),
                    min_ns: 1.0,
                    max_ns: 2.0,
                    cv: 0.01,
                    samples: 3,
                    stop: StopReason::CvReached,
                    set_aside: Default::default(),
                    flagged: false,
                    flags: Vec::new(),
                });
            }
        }
        let caches = vec![CacheLevel {
            name: "L2".into(),
            size_bytes: 1 << 20,
        }];
        let r = crate::render::sweep::tests::result(sizes.to_vec(), 1, caches, points);
        let s = svg(&r);
        assert!(s.starts_with("<svg"));
        assert!(s.trim_end().ends_with("</svg>"));
        assert_eq!(s.matches("<polyline").count(), 2);
        assert!(s.contains("L2 1 MiB"));
        assert!(s.contains("4k pages") && s.contains("thp pages"));
        assert!(!s.contains("NaN") && !s.contains("inf"));
    }
}
