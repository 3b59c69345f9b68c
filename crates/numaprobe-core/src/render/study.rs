//! The study's text and Markdown renderings (CSV through the long table of
//! `study_long.rs`, the chart in `study_chart.rs`). Renderers only format
//! what the runner measured.

use super::table::Table;
use crate::model::study::{CaseResult, ExperimentResult, MythFindings, StudyReport};
use crate::model::Format;

impl StudyReport {
    /// Render in a text format (JSON through `to_json`, the rest through
    /// `Table`).
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Json => super::to_json(self),
            Format::Csv => self.long_table().to_csv(),
            Format::Table => self.text(false),
            Format::Markdown => self.text(true),
        }
    }

    fn text(&self, markdown: bool) -> String {
        let mut out = String::new();
        for n in &self.notes {
            out.push_str(&format!("note: {n}\n"));
        }
        if !self.notes.is_empty() {
            out.push('\n');
        }
        for (i, e) in self.experiments.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            let t = experiment_table(e);
            if markdown {
                out.push_str(&format!("### {}\n\n", heading(e)));
                out.push_str(&background_line(e));
                out.push_str("\n\n");
                out.push_str(&t.to_markdown());
                out.push_str(&format!(
                    "\nThreads (mix {}, baseline `{}`):\n\n",
                    e.mix, e.baseline
                ));
                out.push_str(&super::study_long::thread_table(e).to_markdown());
                out.push_str("\nTotals and wall times over the samples:\n\n");
                out.push_str(&super::study_long::total_table(e).to_markdown());
            } else {
                out.push_str(&heading(e));
                out.push('\n');
                out.push_str(&background_line(e));
                out.push('\n');
                out.push_str(&t.to_text());
            }
        }
        if let Some(findings) = &self.myths {
            out.push('\n');
            out.push_str(&myths_text(findings, markdown));
        }
        out.push_str(&footer(self, markdown));
        out
    }
}

fn heading(e: &ExperimentResult) -> String {
    match &e.figure {
        Some(f) => format!("{} [{}] ({f} of the note)", e.title, e.id),
        None => format!("{} [{}]", e.title, e.id),
    }
}

fn background_line(e: &ExperimentResult) -> String {
    let b = &e.background;
    if b.level == "none" {
        format!(
            "background: none (idle; {} free core(s) left unused)",
            b.remaining_cores
        )
    } else {
        format!(
            "background: {} ({} % duty per {} us), subscription {}: {} thread(s) on {} free core(s){}",
            b.level,
            b.duty_percent,
            b.period_us,
            b.subscription,
            b.threads,
            b.remaining_cores,
            if b.threads == 0 {
                " (no core left for background threads: ran idle)"
            } else {
                ""
            }
        )
    }
}

/// Seconds with 4 significant-ish decimals: the note's axis is in seconds.
fn secs(s: f64) -> String {
    format!("{s:.4}")
}

/// The table of one experiment: the note's figure as numbers.
pub fn experiment_table(e: &ExperimentResult) -> Table {
    let n = e.cases.iter().map(|c| c.threads.len()).max().unwrap_or(0);
    let mut headers: Vec<String> = vec!["case".into(), "hops".into()];
    for i in 1..=n {
        headers.push(format!("thread {i} s"));
    }
    headers.extend(
        ["total s", "cv", "% of baseline", "GB/s", "pages on node"]
            .iter()
            .map(|s| s.to_string()),
    );
    let mut align = vec![super::table::Align::Left; 2];
    align.extend(std::iter::repeat_n(super::table::Align::Right, n + 5));
    let mut t = Table::new(headers).with_align(align);
    for c in &e.cases {
        let mut row = vec![c.label.clone(), c.description.clone()];
        for i in 0..n {
            row.push(
                c.threads
                    .get(i)
                    .map(|t| secs(t.time.median))
                    .unwrap_or_default(),
            );
        }
        row.push(secs(c.total.median));
        row.push(format!("{:.1}%", c.cv_percent()));
        let base = if c.label == e.baseline { " (base)" } else { "" };
        row.push(format!("{:.0}%{base}", c.percent));
        row.push(format!("{:.2}", c.gbs));
        let worst = c
            .threads
            .iter()
            .map(|t| t.pages_on_node)
            .fold(1.0f64, f64::min);
        let flag = if c.placement_ok { "" } else { " !" };
        row.push(format!("{:.0}%{flag}", worst * 100.0));
        t.push(row);
    }
    t
}

impl CaseResult {
    fn cv_percent(&self) -> f64 {
        self.total.cv * 100.0
    }
}

fn myths_text(findings: &[MythFindings], markdown: bool) -> String {
    let mut out = String::new();
    for f in findings {
        let title = format!(
            "Hop myths in [{}] (a difference counts when {})",
            f.experiment, f.threshold
        );
        if markdown {
            out.push_str(&format!("### {title}\n\n"));
        } else {
            out.push_str(&title);
            out.push('\n');
        }
        for (myth, list) in [
            ("Myth: all equal hop cases take equal time", &f.equal_hops),
            (
                "Myth: greater hop distance always means slower time",
                &f.more_hops_faster,
            ),
        ] {
            let verdict = if list.is_empty() {
                "no contradicting case found".to_string()
            } else {
                format!("{} contradicting case(s)", list.len())
            };
            if markdown {
                out.push_str(&format!("**{myth}**: {verdict}\n\n"));
            } else {
                out.push_str(&format!("{myth}: {verdict}\n"));
            }
            if list.is_empty() {
                continue;
            }
            let mut t = Table::new([
                "faster case",
                "hops",
                "total s",
                "%",
                "slower case",
                "hops",
                "total s",
                "%",
                "slower by",
            ]);
            t.align = vec![
                super::table::Align::Left,
                super::table::Align::Left,
                super::table::Align::Right,
                super::table::Align::Right,
                super::table::Align::Left,
                super::table::Align::Left,
                super::table::Align::Right,
                super::table::Align::Right,
                super::table::Align::Right,
            ];
            for c in list {
                t.push([
                    c.faster.label.clone(),
                    c.faster.description.clone(),
                    secs(c.faster.total_s),
                    format!("{:.0}%", c.faster.percent),
                    c.slower.label.clone(),
                    c.slower.description.clone(),
                    secs(c.slower.total_s),
                    format!("{:.0}%", c.slower.percent),
                    format!("{:.1}%", c.difference_percent),
                ]);
            }
            out.push_str(&if markdown {
                t.to_markdown()
            } else {
                t.to_text()
            });
            out.push('\n');
        }
    }
    out
}

fn footer(r: &StudyReport, markdown: bool) -> String {
    let p = &r.parameters;
    let line = format!(
        "array {} MiB per thread, {} B stride, {} passes per sample, {} samples (+{} warm-up), medians; total = sum of the threads' times; % of the baseline's total; GB/s = bytes all threads touch per sample (whole 64 B lines, write-allocate not counted) / median wall time{}",
        p.size_bytes as f64 / (1024.0 * 1024.0),
        p.stride_bytes,
        p.passes,
        p.repeats,
        p.warmup,
        if r.complete { "" } else { "; INCOMPLETE run" }
    );
    if markdown {
        format!("\n_{line}_\n")
    } else {
        format!("\n{line}\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::study::tests::sample_report;

    #[test]
    fn json_has_the_contract_keys() {
        let r = sample_report();
        let v: serde_json::Value = serde_json::from_str(&r.render(Format::Json)).unwrap();
        assert_eq!(v["schema"], "numaprobe/1");
        assert_eq!(v["command"], "study");
        let c = &v["experiments"][0]["cases"][2];
        assert!(c["total"]["median"].as_f64().unwrap() > 1.4);
        assert!((c["percent"].as_f64().unwrap() - 150.0).abs() < 1e-9);
        assert_eq!(c["samples"][0]["threads_s"].as_array().unwrap().len(), 2);
        assert_eq!(
            v["background_definitions"]["levels"][4]["name"],
            "very-high"
        );
        assert_eq!(v["parameters"]["stride_bytes"], 64);
        // GB/s beside the times: bytes over the median wall time.
        let gbs = c["gbs"].as_f64().unwrap();
        let want = c["bytes"].as_f64().unwrap() / c["wall"]["median"].as_f64().unwrap() / 1e9;
        assert!(gbs > 0.0 && (gbs - want).abs() < 1e-9, "{gbs} {want}");
        assert!(c["threads"][0]["gbs"].as_f64().unwrap() > 0.0);
        // Round trip: the document reads back into the model (floats may
        // differ in the last bit, so compare structure, not bits).
        let back: StudyReport = serde_json::from_value(v).unwrap();
        assert_eq!(back.experiments[0].cases.len(), 3);
        assert_eq!(back.experiments[0].baseline, r.experiments[0].baseline);
        assert_eq!(back.background_definitions, r.background_definitions);
    }

    #[test]
    fn myth_findings_are_listed_with_both_cases() {
        let mut r = sample_report();
        let f = crate::experiments::study::myths::find(&r.experiments[0]);
        r.myths = Some(vec![f]);
        let text = r.render(Format::Table);
        assert!(text.contains("Myth: all equal hop cases take equal time: 1 contradicting case(s)"));
        assert!(text.contains(
            "Myth: greater hop distance always means slower time: no contradicting case found"
        ));
        assert!(
            text.contains("0.0.w.1 1.0.w.3") && text.contains("30.4%"),
            "{text}"
        );
        let v: serde_json::Value = serde_json::from_str(&r.render(Format::Json)).unwrap();
        let c = &v["myths"][0]["equal_hops"][0];
        assert_eq!(c["slower"]["label"], "0.0.w.1 1.0.w.0");
        assert!(c["faster"]["total_s"].as_f64().unwrap() > 1.0);
        let md = r.render(Format::Markdown);
        assert!(md.contains("**Myth: all equal hop cases take equal time**"));
    }

    #[test]
    fn text_markdown_and_csv_show_every_case() {
        let r = sample_report();
        let text = r.render(Format::Table);
        assert!(text.starts_with("note: crossfire"));
        assert!(text.contains("figure 6 of the note"));
        assert!(text.contains("0.0.w.1 1.0.w.0"));
        assert!(text.contains("150%"));
        assert!(text.contains("100% (base)"));
        assert!(text.contains("GB/s"), "{text}");
        let c = &r.experiments[0].cases[2];
        assert!(text.contains(&format!("{:.2}", c.gbs)), "{text}");
        let md = r.render(Format::Markdown);
        assert!(md.contains("### Crossfire"));
        assert!(md.contains("| 0.0.w.1 1.0.w.3 |"));
    }
}
