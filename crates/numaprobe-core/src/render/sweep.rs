//! The cache-size sweep's renderings: the curve as a table (one row per
//! size, one column per page kind, their ratio when both were measured),
//! the analysis as sentences per cache level, and a long CSV (one row per
//! point, plateau, cache match and note). JSON is the model through
//! `to_json`. Renderers only format what the sweep measured and the
//! analysis concluded.

use super::table::{Align, Table};
use crate::model::sweep::{SweepPoint, SweepResult, TlbCost};
use crate::model::Format;
use crate::stats::flags::{star, STAR};
use crate::units::format_size;

fn ns(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.1}")
    }
}

impl SweepResult {
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Json => super::to_json(self),
            Format::Csv => self.long_table().to_csv(),
            Format::Table => self.text(false),
            Format::Markdown => self.text(true),
        }
    }

    fn title(&self) -> String {
        format!(
            "Latency against working-set size: CPU {} (node {}) -> memory node {}, random chase over {} B lines, ns per load (median){}",
            self.cpu,
            self.cpu_node,
            self.mem_node,
            self.stride_bytes,
            if self.complete { "" } else { " (INCOMPLETE)" }
        )
    }

    /// One row per size; a column per page kind (and 4k/thp when both).
    pub fn curve_table(&self) -> Table {
        let mut headers = vec!["size".to_string()];
        for k in &self.pages {
            headers.push(format!("{} ns", k.name()));
        }
        let ratio = self.pages.len() == 2;
        if ratio {
            headers.push(format!("{}/{}", self.pages[0].name(), self.pages[1].name()));
        }
        let mut t = Table::new(headers);
        for &size in &self.sizes {
            let found: Vec<Option<&SweepPoint>> = self
                .pages
                .iter()
                .map(|&k| {
                    self.points
                        .iter()
                        .find(|p| p.pages == k && p.size_bytes == size)
                })
                .collect();
            if found.iter().all(Option::is_none) {
                continue;
            }
            let vals: Vec<Option<f64>> = found.iter().map(|p| p.map(|p| p.ns)).collect();
            let mut row = vec![format_size(size)];
            row.extend(
                found
                    .iter()
                    .map(|p| p.map_or("-".into(), |p| format!("{}{}", ns(p.ns), star(p.flagged)))),
            );
            if ratio {
                row.push(match (vals[0], vals[1]) {
                    (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
                    _ => "-".into(),
                });
            }
            t.push(row);
        }
        t
    }

    /// The analysis as lines (without bullets or indentation).
    pub fn analysis_lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        let Some(a) = &self.analysis else {
            return out;
        };
        for c in &a.curves {
            for m in &c.matches {
                out.push(format!("{} pages: {}", c.pages.name(), m.text));
            }
            let levels: Vec<String> = c
                .plateaus
                .iter()
                .map(|p| {
                    format!(
                        "~{} ns {}-{}",
                        ns(p.ns),
                        format_size(p.from_bytes),
                        format_size(p.to_bytes)
                    )
                })
                .collect();
            out.push(format!(
                "{} pages: plateaus {}",
                c.pages.name(),
                if levels.is_empty() {
                    "none found".to_string()
                } else {
                    levels.join(", ")
                }
            ));
            // After the plateaus it qualifies, so a line reads figures first.
            if let Some(n) = &c.trust_note {
                out.push(format!("{} pages: {n}", c.pages.name()));
            }
        }
        let tlb = |c: &TlbCost| {
            format!(
                "{}: 4k {} ns vs thp {} ns ({:+.0} %)",
                format_size(c.size_bytes),
                ns(c.small_ns),
                ns(c.thp_ns),
                (c.small_ns / c.thp_ns - 1.0) * 100.0
            )
        };
        if let Some(c) = &a.tlb_largest {
            out.push(format!("TLB cost at the largest size, {}", tlb(c)));
        }
        match (&a.tlb_from, &a.tlb_largest) {
            (Some(c), _) => out.push(format!("4k pages stay slower than thp from {}", tlb(c))),
            (None, Some(_)) => {
                out.push("4k pages are not clearly slower than thp at the largest sizes".into())
            }
            _ => {}
        }
        out.push(format!(
            "a plateau is at least 3 points within {:.2}x of their median; a knee needs a step of at least {:.1}x",
            a.flat_ratio, a.step_ratio
        ));
        out
    }

    /// One line per flagged point: "4.8 MiB thp*: non-monotonic: ...".
    pub fn flag_lines(&self) -> Vec<String> {
        self.points
            .iter()
            .filter(|p| p.flagged)
            .map(|p| {
                format!(
                    "{} {}{STAR}: {}",
                    format_size(p.size_bytes),
                    p.pages.name(),
                    p.flags.join("; ")
                )
            })
            .collect()
    }

    fn text(&self, md: bool) -> String {
        let mut s = String::new();
        if md {
            s.push_str(&format!("## {}\n\n", self.title()));
            s.push_str(&self.curve_table().to_markdown());
        } else {
            s.push_str(&self.curve_table().with_title(self.title()).to_text());
        }
        let bullet = if md { "- " } else { "  " };
        let flags = self.flag_lines();
        if !flags.is_empty() {
            s.push('\n');
            for l in flags {
                s.push_str(&format!("{bullet}{l}\n"));
            }
        }
        let caches: Vec<String> = self
            .caches
            .iter()
            .map(|c| format!("{} {}", c.name, format_size(c.size_bytes)))
            .collect();
        s.push_str(&format!(
            "\nCaches the topology reports for CPU {}: {}\n",
            self.cpu,
            if caches.is_empty() {
                "none".to_string()
            } else {
                caches.join(", ")
            }
        ));
        if md {
            s.push('\n');
        }
        for l in self.analysis_lines() {
            s.push_str(&format!("{bullet}{l}\n"));
        }
        for p in &self.placement {
            let thp = p.thp_fraction.map_or(String::new(), |f| {
                format!(", {:.0} % in huge pages", f * 100.0)
            });
            s.push_str(&format!(
                "{bullet}{} buffer: {:.1} % on node {}{thp}\n",
                p.pages.name(),
                p.fraction_on_node * 100.0,
                self.mem_node
            ));
        }
        for n in &self.notes {
            s.push_str(&format!("{bullet}note: {n}\n"));
        }
        for f in &self.failed {
            s.push_str(&format!("{bullet}failed: {f}\n"));
        }
        s
    }

    /// Every point, plateau, cache match and note as one CSV table; the
    /// `row` column says which.
    pub fn long_table(&self) -> Table {
        let mut t = Table::new([
            "row",
            "pages",
            "size_bytes",
            "ns",
            "min_ns",
            "max_ns",
            "cv",
            "samples",
            "stop",
            "from_bytes",
            "to_bytes",
            "cache",
            "cache_bytes",
            "plateau",
            "text",
            "flagged",
            "flags",
        ])
        .with_align(vec![Align::Left; 17]);
        let row = |kind: &str| {
            let mut r = vec![String::new(); 17];
            r[0] = kind.to_string();
            r
        };
        for p in &self.points {
            let mut r = row("point");
            r[1] = p.pages.name().into();
            r[2] = p.size_bytes.to_string();
            r[3] = p.ns.to_string();
            r[4] = p.min_ns.to_string();
            r[5] = p.max_ns.to_string();
            r[6] = p.cv.to_string();
            r[7] = p.samples.to_string();
            r[8] = p.stop.name().into();
            r[15] = p.flagged.to_string();
            r[16] = p.flags.join("; ");
            t.push(r);
        }
        if let Some(a) = &self.analysis {
            for c in &a.curves {
                for (i, p) in c.plateaus.iter().enumerate() {
                    let mut r = row("plateau");
                    r[1] = c.pages.name().into();
                    r[3] = p.ns.to_string();
                    r[9] = p.from_bytes.to_string();
                    r[10] = p.to_bytes.to_string();
                    r[13] = i.to_string();
                    t.push(r);
                }
                for m in &c.matches {
                    let mut r = row("match");
                    r[1] = c.pages.name().into();
                    r[11] = m.cache.name.clone();
                    r[12] = m.cache.size_bytes.to_string();
                    r[13] = m.plateau.map_or(String::new(), |i| i.to_string());
                    r[14] = m.text.clone();
                    t.push(r);
                }
            }
        }
        if !self.complete {
            let mut r = row("note");
            r[14] = "incomplete: not every point was measured".into();
            t.push(r);
        }
        for n in self.notes.iter().chain(&self.failed) {
            let mut r = row("note");
            r[14] = n.clone();
            t.push(r);
        }
        t
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::sweep::CacheLevel;
    use crate::placement::PageKind;
    use crate::stats::StopReason;

    /// The complete, unanalysed sweep the model's tests make (the chart's
    /// and the analysis's tests use it too).
    pub(crate) use crate::model::sweep::tests::result;

    /// A two-page-kind sweep over an L1 and an L2, analysed (the report's
    /// tests use it too).
    pub(crate) fn sample() -> SweepResult {
        let sizes = crate::experiments::sweep::sizes(4 << 10, 64 << 20, 2);
        let mut points = Vec::new();
        for &k in &[PageKind::Small, PageKind::Thp] {
            for &s in &sizes {
                let base = if s <= 32 << 10 {
                    1.5
                } else if s <= 1 << 20 {
                    5.0
                } else {
                    60.0
                };
                let ns = if k == PageKind::Small && s > 8 << 20 {
                    base * 1.5
                } else {
                    base
                };
                points.push(SweepPoint {
                    size_bytes: s,
                    pages: k,
                    ns,
                    min_ns: ns,
                    max_ns: ns,
                    cv: 0.01,
                    samples: 5,
                    stop: StopReason::CvReached,
                    set_aside: Default::default(),
                    flagged: false,
                    flags: Vec::new(),
                });
            }
        }
        let mut r = result(
            sizes,
            2,
            vec![
                CacheLevel {
                    name: "L1d".into(),
                    size_bytes: 32 << 10,
                },
                CacheLevel {
                    name: "L2".into(),
                    size_bytes: 1 << 20,
                },
            ],
            points,
        );
        r.cpu = 1;
        crate::analysis::sweep_trust::finish(&mut r);
        r
    }

    #[test]
    fn a_flagged_point_is_starred_with_its_reason_in_every_format() {
        let mut r = sample();
        // A step down at 128 KiB (thp): it and the point before it flagged.
        let i = r
            .points
            .iter()
            .position(|p| p.pages == PageKind::Thp && p.size_bytes == 128 << 10)
            .unwrap();
        r.points[i].ns = 1.0;
        crate::analysis::sweep_trust::finish(&mut r);
        let text = r.render(Format::Table);
        assert!(text.contains("1.00*"), "{text}");
        assert!(
            text.contains("128 KiB thp*: non-monotonic: 1.0 ns at 128 KiB, faster than"),
            "{text}"
        );
        assert!(
            text.contains("thp pages: plateaus named from the"),
            "{text}"
        );
        // The note follows the plateaus it qualifies.
        let lines = r.analysis_lines();
        let at = |p: &str| lines.iter().position(|l| l.starts_with(p)).unwrap();
        assert_eq!(
            at("thp pages: plateaus named from the"),
            at("thp pages: plateaus ~") + 1,
            "{lines:?}"
        );
        let md = r.render(Format::Markdown);
        assert!(md.contains("- 128 KiB thp*: non-monotonic"), "{md}");
        let csv = r.render(Format::Csv);
        let row = csv
            .lines()
            .find(|l| l.starts_with(&format!("point,thp,{},", 128 << 10)))
            .unwrap();
        assert!(row.contains(",true,\"non-monotonic: 1.0 ns"), "{row}");
        let v: serde_json::Value = serde_json::from_str(&r.render(Format::Json)).unwrap();
        assert_eq!(v["points"][i]["flagged"], true);
        let id = v["points"][i]["flag_ids"][0].as_u64().unwrap() as usize;
        assert!(v["flag_texts"][id]
            .as_str()
            .unwrap()
            .starts_with("non-monotonic:"));
        assert_eq!(v["analysis"]["curves"][1]["untrusted_points"], 2);
        // The trusted points carry no star.
        assert!(!r.points[0].flagged && text.contains("1.50 "), "{text}");
    }

    #[test]
    fn every_format_shows_the_curve_and_the_matches() {
        let r = sample();
        let text = r.render(Format::Table);
        assert!(text.contains("4k ns"), "{text}");
        assert!(text.contains("4k/thp"), "{text}");
        assert!(text.contains("matches L1d (32 KiB)"), "{text}");
        assert!(text.contains("matches L2 (1 MiB)"), "{text}");
        assert!(
            text.contains("TLB cost at the largest size, 64 MiB"),
            "{text}"
        );
        let md = r.render(Format::Markdown);
        assert!(md.starts_with("## Latency against working-set size"));
        assert!(md.contains("- thp pages: plateau ~1.5 ns up to ~32 KiB, matches L1d"));
        let csv = r.render(Format::Csv);
        let points = csv.lines().filter(|l| l.starts_with("point,")).count();
        assert_eq!(points, r.points.len());
        assert!(csv
            .lines()
            .any(|l| l.starts_with("match,thp") && l.contains("L2")));
        let v: serde_json::Value = serde_json::from_str(&r.render(Format::Json)).unwrap();
        assert_eq!(v["command"], "latency-sweep");
        assert_eq!(v["points"].as_array().unwrap().len(), r.points.len());
        assert_eq!(
            v["analysis"]["curves"][1]["matches"][1]["cache"]["name"],
            "L2"
        );
        let back: SweepResult = serde_json::from_value(v).unwrap();
        assert_eq!(back.sizes, r.sizes);
    }

    #[test]
    fn a_sweep_has_its_points_within_its_sizes_and_page_kinds() {
        let ok = sample();
        crate::model::shape::Shape::check_shape(&ok).unwrap();
        let mut d = ok.clone();
        d.sizes.truncate(1);
        assert!(crate::model::shape::refusal(&d).contains("points for 1 sizes"));
        let mut d = ok.clone();
        d.pages.truncate(1);
        assert!(crate::model::shape::refusal(&d).contains("page kinds"));
        let mut d = ok;
        let c = &mut d.analysis.as_mut().unwrap().curves[0];
        let n = c.plateaus.len();
        c.matches[0].plateau = Some(3000);
        let e = crate::model::shape::refusal(&d);
        assert!(e.contains(&format!("names plateau 3000 of {n}")), "{e}");
    }
}
