//! The cache-size sweep as an SVG picture: latency (log y) against
//! working-set size (log x), one line per page kind, a dashed vertical line
//! at each cache size the topology reports, the plateaus the analysis
//! found as grey bands, and each flagged point as a hollow grey circle with
//! a star and its reason as a tooltip (never a dot of its curve's colour: a
//! flagged figure is not drawn like a trusted one). Plain SVG text (no
//! fonts to embed, no library): the picture only draws what the document
//! holds; every text from it goes through [`crate::clean::html`].

use crate::clean::html as esc;
use crate::model::sweep::{PageKind, SweepPoint, SweepResult};
use crate::stats::flags::STAR;
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

/// The flagged mark: neutral grey, the colour of no curve.
pub const FLAG_GREY: &str = "#6b6b6b";

/// A flagged point's hollow circle, its star and its reason as the
/// tooltip, at (`x`, `y`).
fn flag_mark(x: f64, y: f64, p: &SweepPoint) -> String {
    format!(
        "<g class=\"flagged\"><title>{}</title><circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"4.5\" fill=\"white\" stroke=\"{FLAG_GREY}\" stroke-width=\"1.8\"/><text x=\"{:.1}\" y=\"{:.1}\" fill=\"{FLAG_GREY}\" font-size=\"14\" font-weight=\"bold\">{STAR}</text></g>\n",
        esc(&format!(
            "{} {} pages, {:.2} ns{STAR}: {}",
            format_size(p.size_bytes),
            p.pages.name(),
            p.ns,
            p.flags.join("; ")
        )),
        x + 5.0,
        y - 3.0
    )
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
    // Plateaus of the last page kind's curve, as bands; the legend names it.
    let banded = r.analysis.as_ref().and_then(|a| a.curves.last());
    if let Some(c) = banded {
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
    // One line per page kind, with its legend; flagged points marked.
    let mut rows = 0usize;
    let mut marks = String::new();
    for &k in &r.pages {
        let curve: Vec<&SweepPoint> = r.curve(k).into_iter().filter(|p| p.ns > 0.0).collect();
        if curve.is_empty() {
            continue;
        }
        let pts: Vec<String> = curve
            .iter()
            .map(|p| format!("{:.1},{:.1}", fx(p.size_bytes as f64), fy(p.ns)))
            .collect();
        s.push_str(&format!(
            "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\" points=\"{}\"/>\n",
            colour(k),
            pts.join(" ")
        ));
        for p in curve.iter().filter(|p| p.flagged) {
            marks.push_str(&flag_mark(fx(p.size_bytes as f64), fy(p.ns), p));
        }
        let ly = TOP + 30.0 + 16.0 * rows as f64;
        rows += 1;
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
    // The marks over every line, so no curve hides one.
    s.push_str(&marks);
    if let Some(c) = banded.filter(|c| !c.plateaus.is_empty()) {
        let ly = TOP + 30.0 + 16.0 * rows as f64;
        rows += 1;
        s.push_str(&format!(
            "<rect x=\"{}\" y=\"{}\" width=\"20\" height=\"10\" fill=\"#eeeeee\" stroke=\"#cccccc\"/><text x=\"{}\" y=\"{}\">plateaus of {} pages, from trusted points only</text>\n",
            LEFT + 10.0,
            ly - 5.0,
            LEFT + 35.0,
            ly + 4.0,
            c.pages.name()
        ));
    }
    if !marks.is_empty() {
        let ly = TOP + 30.0 + 16.0 * rows as f64;
        s.push_str(&format!(
            "<circle cx=\"{}\" cy=\"{ly}\" r=\"4.5\" fill=\"white\" stroke=\"{FLAG_GREY}\" stroke-width=\"1.8\"/><text x=\"{}\" y=\"{}\">{STAR} flagged point, not trusted (its tooltip gives the reason)</text>\n",
            LEFT + 20.0,
            LEFT + 35.0,
            ly + 4.0
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

    #[test]
    fn hostile_text_is_cleaned_as_everywhere_else_and_a_flagged_point_is_marked() {
        let sizes = [4u64 << 10, 64 << 10, 1 << 20];
        let point = |i: usize, s: u64, flags: Vec<String>| SweepPoint {
            size_bytes: s,
            pages: PageKind::Small,
            ns: 2.0 * (i + 1) as f64,
            min_ns: 1.0,
            max_ns: 2.0,
            cv: 0.01,
            samples: 3,
            stop: StopReason::CvReached,
            set_aside: Default::default(),
            flagged: !flags.is_empty(),
            flags,
        };
        let hostile = "L2\u{202e}<b>\u{1b}[31m\u{fffe}&\r";
        let mut points: Vec<SweepPoint> = sizes
            .iter()
            .enumerate()
            .map(|(i, &s)| point(i, s, if i == 1 { vec![hostile.into()] } else { vec![] }))
            .collect();
        // A flagged point with no time has no place on the chart: no mark.
        let mut zero = point(0, 1 << 20, vec!["failed".into()]);
        (zero.pages, zero.ns) = (PageKind::Thp, 0.0);
        points.push(zero);
        let caches = vec![CacheLevel {
            name: hostile.into(),
            size_bytes: 64 << 10,
        }];
        let mut r = crate::render::sweep::tests::result(sizes.to_vec(), 1, caches, points);
        r.pages = vec![PageKind::Small, PageKind::Thp];
        let s = svg(&r);
        let cleaned = crate::clean::html(hostile);
        assert_eq!(cleaned, "L2\\u{202e}&lt;b&gt;\\u{1b}[31m\\u{fffe}&amp;\\r");
        assert!(s.contains(&format!(">{cleaned} 64 KiB</text>")), "{s}");
        assert!(
            !s.chars().any(|c| crate::clean::is_unsafe(c) && c != '\n'),
            "{s:?}"
        );
        let doc = roxmltree::Document::parse(&s).expect("the chart is well-formed XML");
        let marks = crate::render::flag_marks::flag_marks(doc.root());
        assert_eq!(marks.len(), 1, "{marks:?}");
        let m = &marks[0];
        assert_eq!(
            m.tip,
            "64 KiB 4k pages, 4.00 ns*: L2\\u{202e}<b>\\u{1b}[31m\\u{fffe}&\\r"
        );
        assert_eq!(
            (m.star.as_str(), m.fill.as_str(), m.stroke.as_str()),
            ("*", "white", FLAG_GREY)
        );
        // At the point: 64 KiB is the middle of the x axis.
        let cx: f64 = m.cx.parse().unwrap();
        assert!((cx - (LEFT + (W - LEFT - RIGHT) / 2.0)).abs() < 0.1, "{cx}");
        assert!(s.contains("* flagged point, not trusted (its tooltip gives the reason)"));
        // Without a flag: no mark and no legend line for one.
        for p in &mut r.points {
            p.flagged = false;
            p.flags.clear();
        }
        let s = svg(&r);
        assert!(!s.contains("flagged"), "{s}");
    }

    #[test]
    fn the_legend_has_a_row_each_for_the_curves_the_plateaus_and_the_flag() {
        let mut r = crate::render::sweep::tests::sample();
        let legend = |r: &SweepResult| -> Vec<(String, f64)> {
            let s = svg(r);
            let doc = roxmltree::Document::parse(&s).unwrap();
            doc.descendants()
                .filter(|n| n.has_tag_name("text") && n.attribute("x") == Some("105"))
                .map(|n| {
                    let y = n.attribute("y").unwrap().parse().unwrap();
                    (n.text().unwrap().to_string(), y)
                })
                .collect()
        };
        let rows = |texts: &[&str]| -> Vec<(String, f64)> {
            texts
                .iter()
                .enumerate()
                .map(|(i, t)| (t.to_string(), TOP + 34.0 + 16.0 * i as f64))
                .collect()
        };
        let curves = ["4k pages", "thp pages"];
        let bands = "plateaus of thp pages, from trusted points only";
        let flag = "* flagged point, not trusted (its tooltip gives the reason)";
        assert_eq!(legend(&r), rows(&[curves[0], curves[1], bands]));
        let i = r
            .points
            .iter()
            .position(|p| p.pages == PageKind::Thp && p.size_bytes == 128 << 10)
            .unwrap();
        r.points[i].ns = 1.0;
        crate::analysis::sweep_trust::finish(&mut r);
        assert_eq!(legend(&r), rows(&[curves[0], curves[1], bands, flag]));
        // No plateau: no band and no row for one.
        for c in &mut r.analysis.as_mut().unwrap().curves {
            c.plateaus.clear();
        }
        assert_eq!(legend(&r), rows(&[curves[0], curves[1], flag]));
    }
}
