//! Renderers of a loaded-latency result (`model::loaded::LoadedResult`): a
//! table per curve (delay, achieved GB/s, latency median/p90/p99, the knee
//! marked, the peak under it) as text and Markdown, one CSV row per point,
//! and the JSON document. They only format what was measured.

use crate::model::format::Format;
use crate::model::loaded::{Curve, LoadPoint, LoadedResult};
use crate::render::bullet_section;
use crate::render::table::{Align, Table};
use crate::stats::flags::{star, STAR};
use crate::units::{format_list, format_size};

/// The result in `format`.
pub fn render(r: &LoadedResult, format: Format) -> String {
    super::in_format(r, format, text, csv)
}

/// `idle` or the delay.
pub fn delay_text(p: &LoadPoint) -> String {
    match p.delay {
        None => "idle".into(),
        Some(d) => d.to_string(),
    }
}

/// `CPU node 0 -> memory node 1, read`.
pub fn curve_title(c: &Curve) -> String {
    format!(
        "CPU node {} -> memory node {}, {}",
        c.cpu_node, c.mem_node, c.mix
    )
}

fn ns(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.1}")
    } else {
        "-".into()
    }
}

/// One curve as a table (text, Markdown and the HTML report use it).
pub fn curve_table(c: &Curve) -> Table {
    let mut t = Table::new([
        "delay",
        "threads",
        "GB/s",
        "latency ns",
        "p90 ns",
        "p99 ns",
        "x idle",
        "point",
    ])
    .with_title(format!(
        "{}: chase on CPU {}, load on {} {}, {} per thread ({} pages), placement {:.1} %",
        curve_title(c),
        c.chase_cpu,
        if c.load_cpus.len() == 1 {
            "CPU"
        } else {
            "CPUs"
        },
        format_list(&c.load_cpus),
        format_size(c.size_bytes),
        c.pages,
        c.placement * 100.0
    ))
    .with_align(vec![
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Left,
    ]);
    let idle = c.points.first().filter(|p| p.delay.is_none());
    for (i, p) in c.points.iter().enumerate() {
        let mut mark = Vec::new();
        if c.knee == Some(i) {
            mark.push("knee".to_string());
        }
        if p.bandwidth_gbs == c.peak_gbs && c.peak_gbs > 0.0 {
            mark.push("peak".to_string());
        }
        // Latency against the idle point's; the idle point is 1 by
        // definition, so it is left blank.
        let ratio = match (idle, p.delay) {
            (Some(idle), Some(_)) if idle.latency_ns > 0.0 => {
                format!("{:.2}", p.latency_ns / idle.latency_ns)
            }
            _ => String::new(),
        };
        t.push([
            delay_text(p),
            (p.load_threads + 1).to_string(),
            format!("{:.2}", p.bandwidth_gbs),
            format!("{}{}", ns(p.latency_ns), star(!p.flags.is_empty())),
            ns(p.p90_ns),
            ns(p.p99_ns),
            ratio,
            mark.join(" "),
        ]);
    }
    t
}

/// One line per flagged point of a curve, `* delay 800: why`, for under
/// its table: the starred latency's reasons.
pub fn flagged_lines(c: &Curve) -> Vec<String> {
    c.points
        .iter()
        .filter(|p| !p.flags.is_empty())
        .map(|p| format!("{STAR} delay {}: {}", delay_text(p), p.flags.join("; ")))
        .collect()
}

/// One line under a curve's table: its knee and peak.
pub fn summary_line(c: &Curve) -> String {
    let knee = match c.knee.and_then(|i| c.points.get(i)) {
        Some(p) => format!(
            "knee at delay {} ({:.2} GB/s, {} ns)",
            delay_text(p),
            p.bandwidth_gbs,
            ns(p.latency_ns)
        ),
        None if c.points.first().is_some_and(|p| !p.flags.is_empty()) => {
            "no knee: the idle point is flagged, so there is nothing to compare with".into()
        }
        None if c.points.iter().any(|p| !p.flags.is_empty()) => {
            "no knee among the trusted points (latency stayed under 1.10 x idle)".into()
        }
        None => "no knee (latency stayed under 1.10 x idle)".into(),
    };
    // The peak is taken from trusted points only: none, none to give.
    if c.peak_gbs > 0.0 {
        format!("{knee}; peak {:.2} GB/s", c.peak_gbs)
    } else {
        format!("{knee}; no peak: no point is trusted")
    }
}

fn text(r: &LoadedResult, md: bool) -> String {
    let mut out = String::new();
    let head = format!(
        "numaprobe loaded-latency: {} curve(s){}{}",
        r.curves.len(),
        if r.vector.is_empty() {
            String::new()
        } else {
            format!(", {} read kernel", r.vector)
        },
        if r.complete { "" } else { " (incomplete)" }
    );
    if md {
        out.push_str(&format!("## {head}\n\n"));
    } else {
        out.push_str(&head);
        out.push_str("\n\n");
    }
    for c in &r.curves {
        let t = curve_table(c);
        out.push_str(&if md { t.to_markdown() } else { t.to_text() });
        out.push_str(&format!("{}\n", summary_line(c)));
        for l in flagged_lines(c) {
            out.push_str(&format!("{}{l}\n", if md { "- " } else { "" }));
        }
        out.push('\n');
    }
    if !r.failed.is_empty() {
        out.push_str(&bullet_section(md, "Failed", &r.failed));
        out.push('\n');
    }
    let fixed = [
        "delay: idle work between groups of lines of each load thread (larger is lighter; idle: no load thread); threads counts the chase",
        "GB/s: every thread's bytes (the chase's lines x 64 B included) over a sample's time, median of the samples; latency: median, p90 and p99 of short windows of dependent loads",
        "knee: the first point at 1.10 x the idle latency or more",
    ];
    let notes = fixed
        .iter()
        .map(|s| s.to_string())
        .chain(r.notes.iter().cloned());
    out.push_str(&bullet_section(md, "Notes", notes));
    out
}

fn csv(r: &LoadedResult) -> String {
    let mut t = Table::new([
        "cpu_node",
        "mem_node",
        "mix",
        "chase_cpu",
        "load_cpus",
        "delay",
        "load_threads",
        "bandwidth_gbs",
        "latency_ns",
        "p90_ns",
        "p99_ns",
        "knee",
        "peak_gbs",
        "placement",
        "flags",
    ]);
    for c in &r.curves {
        for (i, p) in c.points.iter().enumerate() {
            t.push([
                c.cpu_node.to_string(),
                c.mem_node.to_string(),
                c.mix.clone(),
                c.chase_cpu.to_string(),
                format_list(&c.load_cpus),
                p.delay
                    .map(|d| d.to_string())
                    .unwrap_or_else(|| "idle".into()),
                p.load_threads.to_string(),
                format!("{:.4}", p.bandwidth_gbs),
                format!("{:.3}", p.latency_ns),
                format!("{:.3}", p.p90_ns),
                format!("{:.3}", p.p99_ns),
                (c.knee == Some(i)).to_string(),
                format!("{:.4}", c.peak_gbs),
                format!("{:.4}", c.placement),
                p.flags.join("; "),
            ]);
        }
    }
    t.to_csv()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn doc() -> LoadedResult {
        let pt = |delay: Option<u32>, gbs: f64, lat: f64| LoadPoint {
            delay,
            bandwidth_gbs: gbs,
            latency_ns: lat,
            p90_ns: lat * 1.1,
            p99_ns: lat * 1.4,
            load_threads: if delay.is_some() { 1 } else { 0 },
            windows: 50,
            stop: None,
            set_aside: Default::default(),
            others_busy_cpus: None,
            flags: Vec::new(),
        };
        let mut r = LoadedResult {
            schema: "numaprobe/1".into(),
            curves: vec![Curve {
                cpu_node: 0,
                mem_node: 0,
                mix: "read".into(),
                chase_cpu: 0,
                load_cpus: vec![1],
                points: vec![
                    pt(None, 0.6, 100.0),
                    pt(Some(64), 8.0, 104.0),
                    pt(Some(0), 12.0, 140.0),
                ],
                knee: None,
                peak_gbs: 0.0,
                placement: 1.0,
                size_bytes: 4 << 20,
                pages: "4k".into(),
            }],
            timer: crate::timer::Timer::get().info(),
            rule: None,
            vector: "avx2".into(),
            notes: vec!["a note".into()],
            failed: vec![],
            complete: true,
            interrupted: false,
        };
        crate::analysis::loaded::finish(&mut r);
        r
    }

    #[test]
    fn the_table_marks_knee_and_peak_and_csv_has_a_row_per_point() {
        let r = doc();
        let t = render(&r, Format::Table);
        assert!(t.contains("CPU node 0 -> memory node 0, read"), "{t}");
        assert!(t.contains("1.40  knee peak"), "{t}");
        // Every column has a heading.
        let head = t.lines().find(|l| l.contains("p99 ns")).unwrap();
        assert!(head.trim_end().ends_with("x idle  point"), "{head}");
        assert!(
            t.contains("knee at delay 0 (12.00 GB/s, 140.0 ns); peak 12.00 GB/s"),
            "{t}"
        );
        assert!(t.contains("a note"), "{t}");
        let csv = render(&r, Format::Csv);
        assert_eq!(csv.lines().count(), 1 + 3);
        assert!(csv
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("0,0,read,0,1,idle,0,0.6000"));
        let md = render(&r, Format::Markdown);
        assert!(md.contains("| delay |"), "{md}");
        let v: serde_json::Value = serde_json::from_str(&render(&r, Format::Json)).unwrap();
        assert_eq!(v["schema"], "numaprobe/1");
        assert_eq!(v["curves"][0]["knee"], 2);
    }

    #[test]
    fn a_flagged_point_is_starred_its_reason_under_the_table_and_in_the_csv() {
        let mut r = doc();
        let t = render(&r, Format::Table);
        assert!(!t.contains('*'), "a trusted curve carries no star: {t}");
        assert!(render(&r, Format::Csv)
            .lines()
            .nth(1)
            .unwrap()
            .ends_with(','));
        r.curves[0].points[1].flags = vec!["preempted in 80 % of samples".into()];
        let t = render(&r, Format::Table);
        assert!(t.contains("104.0*"), "{t}");
        assert!(!t.contains("100.0*") && !t.contains("140.0*"), "{t}");
        assert!(
            t.contains("* delay 64: preempted in 80 % of samples"),
            "{t}"
        );
        let md = render(&r, Format::Markdown);
        assert!(md.contains("- * delay 64: preempted"), "{md}");
        let csv = render(&r, Format::Csv);
        assert!(csv.lines().next().unwrap().ends_with(",flags"), "{csv}");
        assert!(
            csv.lines()
                .nth(2)
                .unwrap()
                .ends_with(",preempted in 80 % of samples"),
            "{csv}"
        );
        assert!(csv.lines().nth(3).unwrap().ends_with(','), "{csv}");
        let line = crate::render::run_extra::loaded_line(&r);
        assert!(!line.contains('*'), "idle and knee are trusted: {line}");
        r.curves[0].points[0].flags = vec!["unstable".into()];
        let line = crate::render::run_extra::loaded_line(&r);
        assert!(line.contains("idle 100* ns"), "{line}");
    }

    #[test]
    fn a_curve_without_a_knee_says_whether_flags_kept_it_from_one() {
        let mut c = doc().curves.remove(0);
        let flag = vec!["preempted".to_string()];
        c.points[0].flags = flag.clone();
        crate::analysis::loaded::finish_curve(&mut c);
        let line = summary_line(&c);
        assert!(
            line.starts_with("no knee: the idle point is flagged"),
            "{line}"
        );
        c.points[0].flags.clear();
        c.points[2].flags = flag;
        crate::analysis::loaded::finish_curve(&mut c);
        let line = summary_line(&c);
        assert!(
            line.starts_with("no knee among the trusted points"),
            "{line}"
        );
        c.points[2].flags.clear();
        crate::analysis::loaded::finish_curve(&mut c);
        assert!(summary_line(&c).starts_with("knee at delay 0"));
        assert!(summary_line(&c).contains("; peak "));
        // No trusted point: no peak either, never a peak of 0 GB/s.
        for p in &mut c.points {
            p.flags = vec!["preempted".to_string()];
        }
        crate::analysis::loaded::finish_curve(&mut c);
        let line = summary_line(&c);
        assert!(line.ends_with("; no peak: no point is trusted"), "{line}");
        let r = LoadedResult {
            curves: vec![c],
            ..doc()
        };
        let line = crate::render::run_extra::loaded_line(&r);
        assert!(line.contains("no trusted peak"), "{line}");
        assert!(!line.contains("peak 0"), "{line}");
    }

    #[test]
    fn the_load_cpus_are_counted_in_the_curve_title() {
        let mut r = doc();
        let title = |r: &LoadedResult| curve_table(&r.curves[0]).title.unwrap_or_default();
        assert!(title(&r).contains("load on CPU 1,"), "{}", title(&r));
        r.curves[0].load_cpus = vec![1, 2];
        assert!(title(&r).contains("load on CPUs 1-2,"), "{}", title(&r));
    }

    #[test]
    fn a_loaded_curve_has_its_knee_among_its_points() {
        let ok = doc();
        crate::model::shape::Shape::check_shape(&ok).unwrap();
        let mut d = ok.clone();
        d.curves[0].knee = Some(3000);
        assert!(crate::model::shape::refusal(&d).contains("knee 3000 of"));
        let mut d = ok;
        d.curves[0].points[0].load_threads = 3000;
        assert!(crate::model::shape::refusal(&d).contains("a point has 3000 load threads"));
    }
}
