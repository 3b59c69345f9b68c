//! The study's bar charts, shaped like the note's figures: one panel per
//! experiment, one stacked bar per case (the bar is the median total, split
//! into one segment per thread in proportion to the threads' medians and
//! labelled with the thread's hop count), the bar's percentage of the
//! baseline above it, the case's thread labels below it. Drawn with
//! `plotters`; the font and the PNG encoding come from `chart`, so no system
//! font is needed. Rendering goes to memory; the caller decides where the
//! bytes go.

use super::chart::{self, FONT};
use crate::model::hops::hop_words;
use crate::model::study::{CaseResult, ExperimentResult, StudyReport};
use crate::model::study_plan::{ExperimentPlan, StudyPlan};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error("nothing to draw: the study has no finished case")]
    Empty,
    #[error("drawing the chart failed: {0}")]
    Draw(String),
    #[error("encoding the PNG failed: {0}")]
    Png(String),
    #[error("a {0}x{1} pixel picture has more bytes than this machine can address; draw fewer cases or threads at once")]
    TooLarge(u32, u32),
    #[error("a {w}x{h} pixel chart ({} pixels) is past the {MAX_PIXELS} pixels numaprobe draws in one picture; the table, CSV and JSON hold every case: draw fewer cases or threads at once", u64::from(*w) * u64::from(*h))]
    PastBudget { w: u32, h: u32 },
}

/// The most pixels one chart may have: 32 million, 96 MiB of RGB while the
/// PNG is drawn. One experiment fits 450 one-thread bars (`(120 x 450 +
/// 160) x 590` pixels) or 439 two-thread bars (`52840 x 605`); the presets'
/// largest panel (`myths`, at most 64 cases) is 4.7 million. Past this a bar chart is no longer
/// read bar by bar, and its picture would cost memory in proportion to
/// cases times threads (1000 cases of 1000 threads: 5.6 GB).
pub const MAX_PIXELS: u64 = 32_000_000;

fn draw_err<E: std::fmt::Debug>(e: E) -> ChartError {
    ChartError::Draw(format!("{e:?}"))
}

const PANEL_HEIGHT: u32 = 560;
const MIN_WIDTH: u32 = 900;
const BAR_SLOT: u32 = 120;
const LINE_PX: u32 = 15;

/// Segment colours, thread 1 first (the note's two shades plus spares).
const THREAD_COLOURS: [RGBColor; 4] = [
    RGBColor(70, 110, 180),
    RGBColor(230, 150, 60),
    RGBColor(100, 170, 100),
    RGBColor(170, 90, 160),
];

fn register_font() -> Result<(), ChartError> {
    chart::register_font().map_err(ChartError::Draw)
}

fn drawn(report: &StudyReport) -> Vec<&ExperimentResult> {
    report
        .experiments
        .iter()
        .filter(|e| !e.cases.is_empty())
        .collect()
}

// The counts come from a document: pixel sizes saturate at u32::MAX
// instead of wrapping round to a small picture (or stopping with overflow
// checks on).
fn panel_width(e: &ExperimentResult) -> u32 {
    width_for(e.cases.len())
}

/// A panel's size from its number of cases and the most threads in one.
fn panel_size(cases: usize, max_threads: usize) -> (u32, u32) {
    let lines = u32::try_from(max_threads).map_or(u32::MAX, |n| n.saturating_add(1));
    (width_for(cases), height_for(lines))
}

/// Panels stacked vertically: the widest one's width, the heights summed.
fn stacked(panels: impl Iterator<Item = (u32, u32)>) -> (u32, u32) {
    panels.fold((MIN_WIDTH, 0u32), |(w, h), (pw, ph)| {
        (w.max(pw), h.saturating_add(ph))
    })
}

/// Refused past [`MAX_PIXELS`], before a pixel is allocated.
fn within_budget((w, h): (u32, u32)) -> Result<(), ChartError> {
    if u64::from(w) * u64::from(h) > MAX_PIXELS {
        return Err(ChartError::PastBudget { w, h });
    }
    Ok(())
}

fn planned_panels<'a>(
    experiments: impl Iterator<Item = &'a ExperimentPlan> + 'a,
) -> impl Iterator<Item = (u32, u32)> + 'a {
    experiments.filter(|e| !e.cases.is_empty()).map(|e| {
        let threads = e.cases.iter().map(|c| c.threads.len()).max().unwrap_or(0);
        panel_size(e.cases.len(), threads)
    })
}

/// Whether the whole study's chart (every experiment, one panel each) fits
/// [`MAX_PIXELS`], known from the plan before anything is measured: a run
/// draws at most the cases it planned.
pub fn plan_fits(plan: &StudyPlan) -> Result<(), ChartError> {
    within_budget(stacked(planned_panels(plan.experiments.iter())))
}

/// Whether every experiment's chart alone fits [`MAX_PIXELS`].
pub fn plan_fits_each(plan: &StudyPlan) -> Result<(), ChartError> {
    planned_panels(plan.experiments.iter())
        .try_for_each(|size| within_budget(stacked(std::iter::once(size))))
}

fn width_for(cases: usize) -> u32 {
    let cases = u32::try_from(cases).unwrap_or(u32::MAX);
    BAR_SLOT
        .saturating_mul(cases)
        .saturating_add(160)
        .max(MIN_WIDTH)
}

fn x_label_lines(e: &ExperimentResult) -> u32 {
    e.cases
        .iter()
        .map(|c| u32::try_from(c.threads.len()).map_or(u32::MAX, |n| n.saturating_add(1)))
        .max()
        .unwrap_or(1)
}

fn panel_height(e: &ExperimentResult) -> u32 {
    height_for(x_label_lines(e))
}

fn height_for(label_lines: u32) -> u32 {
    LINE_PX
        .saturating_mul(label_lines)
        .saturating_add(PANEL_HEIGHT)
}

/// Bytes of a `w` x `h` RGB picture, checked: sizes saturated at u32::MAX
/// multiply past a 64-bit count.
fn rgb_bytes(w: u32, h: u32) -> Result<usize, ChartError> {
    (w as usize)
        .checked_mul(h as usize)
        .and_then(|n| n.checked_mul(3))
        .ok_or(ChartError::TooLarge(w, h))
}

/// Size of the whole image: panels stacked vertically.
fn size(experiments: &[&ExperimentResult]) -> (u32, u32) {
    stacked(
        experiments
            .iter()
            .map(|e| (panel_width(e), panel_height(e))),
    )
}

/// The whole study as one SVG document.
pub fn svg(report: &StudyReport) -> Result<String, ChartError> {
    let experiments = drawn(report);
    if experiments.is_empty() {
        return Err(ChartError::Empty);
    }
    let size = size(&experiments);
    within_budget(size)?;
    register_font()?;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        draw_all(&root, &experiments)?;
        root.present().map_err(draw_err)?;
    }
    Ok(out)
}

/// The whole study as one PNG image.
pub fn png(report: &StudyReport) -> Result<Vec<u8>, ChartError> {
    let experiments = drawn(report);
    if experiments.is_empty() {
        return Err(ChartError::Empty);
    }
    let (w, h) = size(&experiments);
    within_budget((w, h))?;
    register_font()?;
    let mut rgb = vec![0u8; rgb_bytes(w, h)?];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        draw_all(&root, &experiments)?;
        root.present().map_err(draw_err)?;
    }
    chart::encode_png(&rgb, w, h).map_err(ChartError::Png)
}

/// One experiment alone, as SVG (for `--chart DIR`).
pub fn experiment_svg(report: &StudyReport, id: &str) -> Result<String, ChartError> {
    svg(&only(report, id))
}

/// One experiment alone, as PNG (for `--chart DIR`).
pub fn experiment_png(report: &StudyReport, id: &str) -> Result<Vec<u8>, ChartError> {
    png(&only(report, id))
}

fn only(report: &StudyReport, id: &str) -> StudyReport {
    let mut r = report.clone();
    r.experiments.retain(|e| e.id == id);
    r
}

fn draw_all<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    experiments: &[&ExperimentResult],
) -> Result<(), ChartError> {
    root.fill(&WHITE).map_err(draw_err)?;
    let mut rest = root.clone();
    for e in experiments {
        let h = panel_height(e);
        let (panel, below) = rest.split_vertically(h);
        draw_panel(&panel, e)?;
        rest = below;
    }
    Ok(())
}

fn mix_words(mix: &str) -> String {
    let words: Vec<&str> = mix
        .chars()
        .map(|c| match c {
            'r' => "read",
            'w' => "write",
            _ => "?",
        })
        .collect();
    if words.contains(&"?") || words.is_empty() {
        mix.to_string()
    } else {
        words.join("-")
    }
}

/// Segment heights of a case's bar: the bar is the median total; each
/// thread's segment is its share of it (its median over the sum of the
/// threads' medians). The median of sums is not the sum of medians, so
/// stacking raw medians would draw a bar that is not the case's total.
fn segments(c: &CaseResult) -> Vec<f64> {
    let sum: f64 = c.threads.iter().map(|t| t.time.median).sum();
    c.threads
        .iter()
        .map(|t| {
            if sum > 0.0 {
                c.total.median * t.time.median / sum
            } else {
                0.0
            }
        })
        .collect()
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    e: &ExperimentResult,
) -> Result<(), ChartError> {
    let n = e.cases.len();
    let y_max = e
        .cases
        .iter()
        .map(|c| c.total.median)
        .fold(0.0f64, f64::max)
        .max(1e-9)
        * 1.18;
    let caption = match &e.figure {
        Some(f) => format!("{} ({f})", e.title),
        None => e.title.clone(),
    };
    let label_lines = x_label_lines(e);
    // Enough decimals that the ticks of a short run (milliseconds) differ.
    let decimals = (1.0 - y_max.log10().floor()).clamp(2.0, 9.0) as usize;
    let mut chart = ChartBuilder::on(area)
        .caption(&caption, (FONT, 17))
        .margin(12)
        .x_label_area_size(LINE_PX * label_lines + 12)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..n as f64, 0f64..y_max)
        .map_err(draw_err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .x_label_formatter(&|_| String::new())
        .y_desc(format!(
            "Total time for both threads ({}), s",
            mix_words(&e.mix)
        ))
        .y_label_formatter(&|v| format!("{v:.decimals$}"))
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 13))
        .draw()
        .map_err(draw_err)?;

    let seg_font = (FONT, 11)
        .into_font()
        .color(&WHITE)
        .pos(Pos::new(HPos::Center, VPos::Center));
    let pct_font = (FONT, 13)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Bottom));
    let max_threads = e.cases.iter().map(|c| c.threads.len()).max().unwrap_or(0);
    for t in 0..max_threads {
        let colour = THREAD_COLOURS[t % THREAD_COLOURS.len()];
        let bars: Vec<Rectangle<(f64, f64)>> = e
            .cases
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let seg = segments(c);
                let below: f64 = seg.iter().take(t).sum();
                seg.get(t).map(|&h| {
                    Rectangle::new(
                        [(i as f64 + 0.18, below), (i as f64 + 0.82, below + h)],
                        colour.filled(),
                    )
                })
            })
            .collect();
        chart
            .draw_series(bars)
            .map_err(draw_err)?
            .label(format!("thread {}", t + 1))
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled()));
    }
    // Segment labels (hop counts), when the segment is tall enough to hold one.
    let px_per_s = (area.dim_in_pixel().1 as f64 - (LINE_PX * label_lines) as f64 - 80.0) / y_max;
    for (i, c) in e.cases.iter().enumerate() {
        let mut below = 0.0;
        for (th, h) in c.threads.iter().zip(segments(c)) {
            let mid = below + h / 2.0;
            if h * px_per_s >= 16.0 {
                chart
                    .draw_series(std::iter::once(Text::new(
                        hop_words(th.hops),
                        (i as f64 + 0.5, mid),
                        seg_font.clone(),
                    )))
                    .map_err(draw_err)?;
            }
            below += h;
        }
        let base = if c.label == e.baseline { " (base)" } else { "" };
        chart
            .draw_series(std::iter::once(Text::new(
                format!("{:.0}%{base}", c.percent),
                (i as f64 + 0.5, c.total.median + y_max * 0.01),
                pct_font.clone(),
            )))
            .map_err(draw_err)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font((FONT, 12))
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(draw_err)?;

    // x labels: one line per thread label, then the case's description, drawn
    // in pixels below the axis (plotters' tick labels are single-line).
    let label_font = (FONT, 12)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    for (i, c) in e.cases.iter().enumerate() {
        // backend_coord is in the whole image's pixels; `area` draws in the
        // panel's own, which start at its base pixel.
        let (bx, by) = area.get_base_pixel();
        let (px, py) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
        let (px, py) = (px - bx, py - by);
        let mut lines: Vec<String> = c.threads.iter().map(|t| t.label.clone()).collect();
        let hops: String = c
            .hops
            .iter()
            .map(|&h| format!("({})", hop_words(h)))
            .collect();
        lines.push(match c.description.split_once(' ') {
            Some((word, _)) if word.chars().all(|ch| ch.is_alphabetic()) && !word.is_empty() => {
                // "crossfire 1 Hop-1 Hop" -> "crossfire" (hops are in the bar)
                let tag = c
                    .description
                    .trim_end_matches(|ch: char| ch.is_ascii_digit() || " Hop-s".contains(ch));
                if tag.is_empty() {
                    hops
                } else {
                    tag.to_string()
                }
            }
            _ => hops,
        });
        for (k, line) in lines.iter().enumerate() {
            area.draw(&Text::new(
                line.clone(),
                (px, py + 6 + (k as u32 * LINE_PX) as i32),
                label_font.clone(),
            ))
            .map_err(draw_err)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::study::tests::sample_report;

    #[test]
    fn pixel_sizes_from_counts_past_32_bits_saturate() {
        assert_eq!(width_for(0), MIN_WIDTH);
        assert_eq!(width_for(10), 160 + 10 * BAR_SLOT);
        assert_eq!(width_for(usize::MAX), u32::MAX);
        // Wrapped round, this count would make a picture 160 px wide.
        assert_eq!(width_for((1usize << 32) / BAR_SLOT as usize + 1), u32::MAX);
        assert_eq!(height_for(2), PANEL_HEIGHT + 2 * LINE_PX);
        assert_eq!(height_for(u32::MAX), u32::MAX);
        assert_eq!(rgb_bytes(900, 560).unwrap(), 900 * 560 * 3);
        let e = rgb_bytes(u32::MAX, u32::MAX).unwrap_err().to_string();
        assert!(
            e.starts_with("a 4294967295x4294967295 pixel picture"),
            "{e}"
        );
    }

    #[test]
    fn png_has_the_signature_and_svg_is_an_svg_document() {
        let r = sample_report();
        let p = png(&r).unwrap();
        assert!(p.len() > 1000);
        assert_eq!(&p[..8], b"\x89PNG\r\n\x1a\n");
        let s = svg(&r).unwrap();
        let doc = roxmltree::Document::parse(&s).expect("well-formed SVG");
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        assert!(s.contains("0.0.w.1 1.0.w.0") || s.contains("0.0.w.1"));
        assert!(s.contains("150%"));
        let one = experiment_svg(&r, "crossfire-ww-idle").unwrap();
        assert!(one.contains("<rect"));
    }

    #[test]
    fn every_panel_labels_its_own_bars() {
        // Regression: the second panel's x labels were drawn at twice its
        // offset (image pixels added to the panel's own origin).
        let mut r = sample_report();
        let mut second = r.experiments[0].clone();
        second.id = "second".into();
        r.experiments.push(second);
        let s = svg(&r).unwrap();
        let doc = roxmltree::Document::parse(&s).unwrap();
        let ys: Vec<f64> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text") && n.text().map(str::trim) == Some("1.0.w.0"))
            .filter_map(|n| n.attribute("y").and_then(|y| y.parse().ok()))
            .collect();
        assert_eq!(ys.len(), 2, "{ys:?}");
        let panel = f64::from(PANEL_HEIGHT + LINE_PX * 3);
        let (_, height) = size(&drawn(&r));
        assert!(ys[0] < panel && ys[1] > panel, "{ys:?}");
        assert!(ys[1] < f64::from(height), "{ys:?} beyond the image");
    }

    fn with_cases(n: usize) -> StudyReport {
        let mut r = sample_report();
        let one = r.experiments[0].cases[0].clone();
        r.experiments[0].cases = vec![one; n];
        r
    }

    #[test]
    fn the_pixel_budget_is_held_at_its_edge() {
        // One experiment: 450 one-thread bars fit, 451 do not; 439
        // two-thread bars (a line more of labels below each) fit, 440 not.
        assert!(within_budget(panel_size(450, 1)).is_ok());
        assert!(within_budget(panel_size(439, 2)).is_ok());
        assert!(within_budget(panel_size(440, 2)).is_err());
        let e = within_budget(panel_size(451, 1)).unwrap_err().to_string();
        assert_eq!(
            e,
            "a 54280x590 pixel chart (32025200 pixels) is past the 32000000 pixels numaprobe draws in one picture; the table, CSV and JSON hold every case: draw fewer cases or threads at once"
        );
        // Threads lengthen the panel: one case of 2332 threads fits, 2333 not.
        assert!(within_budget(panel_size(1, 2332)).is_ok());
        assert!(within_budget(panel_size(1, 2333)).is_err());
        // 1000 cases of 1000 threads (5.6 GB of pixels) and counts past 32
        // bits are refused, not allocated.
        assert!(within_budget(panel_size(1000, 1000)).is_err());
        assert!(within_budget(panel_size(usize::MAX, usize::MAX)).is_err());
    }

    #[test]
    fn a_chart_past_the_budget_is_refused_before_a_pixel_is_allocated() {
        // The sample's cases have two threads.
        let (w, h) = size(&drawn(&with_cases(439)));
        assert!(u64::from(w) * u64::from(h) <= MAX_PIXELS);
        let r = with_cases(440);
        assert!(matches!(
            png(&r),
            Err(ChartError::PastBudget { w: 52960, h: 605 })
        ));
        assert!(matches!(svg(&r), Err(ChartError::PastBudget { .. })));
        // Two experiments of 300 cases fit alone, not stacked in one picture.
        let mut two = with_cases(300);
        let mut second = two.experiments[0].clone();
        second.id = "second".into();
        two.experiments.push(second);
        assert!(matches!(png(&two), Err(ChartError::PastBudget { .. })));
        assert!(experiment_svg(&two, "second").is_ok());
    }

    #[test]
    fn a_plan_is_checked_as_its_charts_would_be_drawn() {
        use crate::experiments::study::testing::synthetic;
        use crate::experiments::study::{parse_labels, plan_custom, HopMap, PlanOptions};
        let t = synthetic(2, 2, None);
        let hm = HopMap::from_topology(&t);
        let case = parse_labels(&["0.0.w.0", "1.0.w.1"]).unwrap();
        let plan = |n: usize| {
            plan_custom(&t, &hm, &vec![case.clone(); n], &PlanOptions::default()).unwrap()
        };
        assert!(plan_fits(&plan(439)).is_ok());
        assert!(plan_fits_each(&plan(439)).is_ok());
        assert!(matches!(
            plan_fits(&plan(440)),
            Err(ChartError::PastBudget { w: 52960, h: 605 })
        ));
        assert!(plan_fits_each(&plan(440)).is_err());
        let mut two = plan(300);
        let mut second = two.experiments[0].clone();
        second.id = "second".into();
        two.experiments.push(second);
        assert!(plan_fits(&two).is_err());
        assert!(plan_fits_each(&two).is_ok());
    }

    #[test]
    fn an_empty_study_is_an_error_not_a_blank_picture() {
        let mut r = sample_report();
        r.experiments[0].cases.clear();
        assert!(matches!(svg(&r), Err(ChartError::Empty)));
    }
}
