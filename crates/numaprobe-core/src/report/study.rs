//! The study's result model (serde, the `numaprobe/1` JSON contract for
//! `numaprobe study`) and its text and Markdown exporters. The chart
//! lives in `study_chart.rs`, the CSV and Markdown's long tables in
//! `study_long.rs`. Exporters only format what the runner measured.

use super::table::Table;
use super::Format;
use crate::experiments::study::background::BackgroundDefinitions;
use crate::experiments::study::hops::HopMap;
use crate::experiments::study::label::{Access, Mix};
use crate::kernels::KernelSpec;
use crate::timer::TimerInfo;
use serde::{Deserialize, Serialize};

pub use crate::placement::PLACEMENT_THRESHOLD;

/// A whole `numaprobe study` document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyReport {
    /// Always `numaprobe/1`.
    pub schema: String,
    /// Always `study`.
    pub command: String,
    /// The preset's name, or None for user-given labels.
    pub preset: Option<String>,
    /// False while the run is still going (a file rewritten after every case)
    /// or when it was cut short.
    pub complete: bool,
    pub parameters: StudyParameters,
    /// What the background levels and subscriptions mean.
    pub background_definitions: BackgroundDefinitions,
    /// Hop counts used to plan and label the cases.
    pub hop_map: HopMap,
    /// One line per thing this machine could not host.
    pub notes: Vec<String>,
    pub experiments: Vec<ExperimentResult>,
    /// Contradictions of the note's two hop myths (preset `myths`).
    pub myths: Option<Vec<MythFindings>>,
}

/// Everything that produced the figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyParameters {
    /// Bytes of each foreground thread's array.
    pub size_bytes: u64,
    /// Distance between two touched elements: one element per cache line.
    pub stride_bytes: u64,
    /// Walks over the whole array per timed sample.
    pub passes: u32,
    /// Timed samples per case (after the warm-up ones).
    pub repeats: u32,
    /// Untimed samples run first and discarded.
    pub warmup: u32,
    pub mix: Mix,
    /// Page size backing the arrays (`4k`: the note's setting, no THP).
    pub pages: String,
    /// The foreground kernels (the background one is in
    /// `background_definitions.kernel`).
    pub kernels: Vec<KernelSpec>,
    /// The clock the samples were taken with.
    pub timer: TimerInfo,
    /// How `total` is formed from the threads' times.
    pub total_definition: String,
    /// How `percent` is formed.
    pub percent_definition: String,
    /// Fraction of pages on the intended node below which a thread is flagged.
    pub placement_threshold: f64,
}

/// Median, extremes, mean and CV of a set of seconds (the engine's summary;
/// every value in seconds, `cv` unitless).
pub use crate::stats::Summary as TimeSummary;

/// The background that ran during an experiment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackgroundResult {
    pub level: String,
    pub subscription: String,
    pub duty_percent: u32,
    pub period_us: u64,
    /// Allowed physical cores the foreground left free.
    pub remaining_cores: usize,
    /// Background threads that ran (one per CPU in `cpus`).
    pub threads: usize,
    pub cpus: Vec<u32>,
}

/// One figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentResult {
    pub id: String,
    pub title: String,
    pub figure: Option<String>,
    pub mix: String,
    pub background: BackgroundResult,
    /// Label of the case every `percent` is relative to.
    pub baseline: String,
    /// Cases finished so far, in plan order.
    pub cases: Vec<CaseResult>,
}

/// One bar: threads run together, repeated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseResult {
    pub label: String,
    pub description: String,
    /// Hops of each thread, in thread order.
    pub hops: Vec<u32>,
    pub threads: Vec<ThreadResult>,
    /// Every timed sample.
    pub samples: Vec<CaseSample>,
    /// Summary of the per-sample totals (sum of the threads' times).
    pub total: TimeSummary,
    /// Summary of the per-sample wall time (first start to last finish).
    pub wall: TimeSummary,
    /// Median total as a percentage of the baseline case's median total.
    pub percent: f64,
    /// Every thread ran on its CPU with its array on its node.
    pub placement_ok: bool,
}

/// One foreground thread of a case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadResult {
    pub label: String,
    pub node: u32,
    pub core: usize,
    pub access: Access,
    pub mem_node: u32,
    pub hops: u32,
    /// The CPU the thread was pinned to.
    pub cpu: u32,
    /// `sched_getcpu` agreed with `cpu` before and after the timed walks.
    pub cpu_verified: bool,
    /// Fraction of the array's pages found on `mem_node` (`move_pages`).
    pub pages_on_node: f64,
    pub placement_ok: bool,
    /// Summary of this thread's sample times.
    pub time: TimeSummary,
}

/// One repetition of a case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseSample {
    /// Each thread's time for its passes, in thread order.
    pub threads_s: Vec<f64>,
    /// Sum of `threads_s`: the note's "total time for both threads".
    pub total_s: f64,
    /// From the first thread's start to the last thread's end.
    pub wall_s: f64,
}

/// A case as a myth finding cites it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseRef {
    pub label: String,
    pub description: String,
    pub hops: Vec<u32>,
    pub total_s: f64,
    pub percent: f64,
}

/// Contradictions found in one experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MythFindings {
    pub experiment: String,
    /// How big a difference must be to count (vs. noise).
    pub threshold: String,
    /// "All equal hop cases take equal time": cases slower than the fastest
    /// case with the same hop counts.
    pub equal_hops: Vec<Contradiction>,
    /// "Greater hop distance always means slower time": cases with more hops
    /// that are faster than a case with fewer.
    pub more_hops_faster: Vec<Contradiction>,
}

/// Two cases whose times contradict a myth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contradiction {
    /// The faster case.
    pub faster: CaseRef,
    /// The slower case.
    pub slower: CaseRef,
    /// How much slower `slower` is, in percent of `faster`.
    pub difference_percent: f64,
}

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
        ["total s", "cv", "% of baseline", "pages on node"]
            .iter()
            .map(|s| s.to_string()),
    );
    let mut align = vec![super::table::Align::Left; 2];
    align.extend(std::iter::repeat_n(super::table::Align::Right, n + 4));
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
        "array {} MiB per thread, {} B stride, {} passes per sample, {} samples (+{} warm-up), medians; total = sum of the threads' times; % of the baseline's total{}",
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
pub(crate) mod tests {
    use super::*;
    use crate::experiments::study::background::BackgroundDefinitions;
    use crate::experiments::study::hops::HopMap;

    pub fn summary(m: f64) -> TimeSummary {
        TimeSummary {
            median: m,
            min: m * 0.98,
            max: m * 1.03,
            mean: m,
            cv: 0.01,
            n: 5,
        }
    }

    pub fn case(label: &str, hops: &[u32], times: &[f64], base_total: f64) -> CaseResult {
        let total: f64 = times.iter().sum();
        CaseResult {
            label: label.into(),
            description: hops
                .iter()
                .map(|h| format!("{h} Hop"))
                .collect::<Vec<_>>()
                .join("-"),
            hops: hops.to_vec(),
            threads: label
                .split(' ')
                .zip(times)
                .zip(hops)
                .map(|((l, &t), &h)| ThreadResult {
                    label: l.into(),
                    node: 0,
                    core: 0,
                    access: Access::Write,
                    mem_node: 0,
                    hops: h,
                    cpu: 0,
                    cpu_verified: true,
                    pages_on_node: 1.0,
                    placement_ok: true,
                    time: summary(t),
                })
                .collect(),
            samples: vec![CaseSample {
                threads_s: times.to_vec(),
                total_s: total,
                wall_s: times.iter().cloned().fold(0.0, f64::max),
            }],
            total: summary(total),
            wall: summary(total / 2.0),
            percent: total / base_total * 100.0,
            placement_ok: true,
        }
    }

    pub fn sample_report() -> StudyReport {
        let cases = vec![
            case("0.0.w.0 1.0.w.1", &[0, 0], &[0.5, 0.5], 1.0),
            case("0.0.w.1 1.0.w.3", &[1, 1], &[0.6, 0.55], 1.0),
            case("0.0.w.1 1.0.w.0", &[1, 1], &[0.8, 0.7], 1.0),
        ];
        StudyReport {
            schema: crate::SCHEMA.into(),
            command: "study".into(),
            preset: Some("crossfire".into()),
            complete: true,
            parameters: StudyParameters {
                size_bytes: 64 << 20,
                stride_bytes: 64,
                passes: 10,
                repeats: 5,
                warmup: 1,
                mix: Mix::Fixed,
                pages: "4k".into(),
                kernels: vec![crate::kernels::strided::spec(Access::Write, 64)],
                timer: crate::timer::TimerInfo {
                    source: crate::timer::ClockSource::MonotonicRaw,
                    tsc_hz: None,
                    overhead_ns: 20.0,
                    resolution_ns: 1.0,
                },
                total_definition: "sum".into(),
                percent_definition: "of baseline".into(),
                placement_threshold: PLACEMENT_THRESHOLD,
            },
            background_definitions: BackgroundDefinitions::current(),
            hop_map: HopMap::assumed(vec![0, 1, 2, 3]),
            notes: vec!["crossfire: something could not run".into()],
            experiments: vec![ExperimentResult {
                id: "crossfire-ww-idle".into(),
                title: "Crossfire 1 Hop-1 Hop case vs no crossfire".into(),
                figure: Some("figure 6".into()),
                mix: "ww".into(),
                background: BackgroundResult {
                    level: "none".into(),
                    subscription: "high".into(),
                    duty_percent: 0,
                    period_us: 1000,
                    remaining_cores: 6,
                    threads: 0,
                    cpus: vec![],
                },
                baseline: "0.0.w.0 1.0.w.1".into(),
                cases,
            }],
            myths: None,
        }
    }

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
        let md = r.render(Format::Markdown);
        assert!(md.contains("### Crossfire"));
        assert!(md.contains("| 0.0.w.1 1.0.w.3 |"));
    }
}

/// `numaprobe study --plan`: what would run, without measuring.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyPlanDocument {
    /// Always `numaprobe/1`.
    pub schema: String,
    /// Always `study-plan`.
    pub command: String,
    pub background_definitions: BackgroundDefinitions,
    pub plan: crate::experiments::study::StudyPlan,
}

impl StudyPlanDocument {
    pub fn new(plan: crate::experiments::study::StudyPlan) -> Self {
        StudyPlanDocument {
            schema: crate::SCHEMA.into(),
            command: "study-plan".into(),
            background_definitions: BackgroundDefinitions::current(),
            plan,
        }
    }

    pub fn render(&self, format: Format) -> String {
        let table = |e: &crate::experiments::study::plan::ExperimentPlan| {
            let mut t = Table::new(["case", "hops", "CPUs", "memory nodes"]).with_align(vec![
                super::table::Align::Left,
                super::table::Align::Left,
                super::table::Align::Left,
                super::table::Align::Left,
            ]);
            for c in &e.cases {
                t.push([
                    c.label.clone(),
                    c.description.clone(),
                    join(c.threads.iter().map(|t| t.cpu)),
                    join(c.threads.iter().map(|t| t.spec.mem)),
                ]);
            }
            t
        };
        let bg = |e: &crate::experiments::study::plan::ExperimentPlan| {
            format!(
                "background: {} ({} % duty), subscription {}: {} thread(s) on CPUs [{}] of {} free core(s)",
                e.load.name(),
                e.load.duty_percent(),
                e.subscription.name(),
                e.background.cpus.len(),
                join(e.background.cpus.iter().copied()),
                e.background.remaining_cores
            )
        };
        match format {
            Format::Json => super::to_json(self),
            Format::Csv => {
                let mut t = Table::new([
                    "experiment",
                    "background",
                    "subscription",
                    "background_cpus",
                    "case",
                    "hops",
                    "cpus",
                    "mem_nodes",
                ]);
                for e in &self.plan.experiments {
                    for c in &e.cases {
                        t.push([
                            e.id.clone(),
                            e.load.name().to_string(),
                            e.subscription.name().to_string(),
                            join(e.background.cpus.iter().copied()),
                            c.label.clone(),
                            c.description.clone(),
                            join(c.threads.iter().map(|t| t.cpu)),
                            join(c.threads.iter().map(|t| t.spec.mem)),
                        ]);
                    }
                }
                t.to_csv()
            }
            Format::Table | Format::Markdown => {
                let md = format == Format::Markdown;
                let mut out = String::new();
                for n in &self.plan.notes {
                    out.push_str(&format!("note: {n}\n"));
                }
                for e in &self.plan.experiments {
                    out.push('\n');
                    let head = format!(
                        "{} [{}]{}",
                        e.title,
                        e.id,
                        e.figure
                            .as_ref()
                            .map(|f| format!(" ({f} of the note)"))
                            .unwrap_or_default()
                    );
                    if md {
                        out.push_str(&format!("### {head}\n\n{}\n\n", bg(e)));
                        out.push_str(&table(e).to_markdown());
                    } else {
                        out.push_str(&format!("{head}\n{}\n", bg(e)));
                        out.push_str(&table(e).to_text());
                    }
                }
                out
            }
        }
    }
}

fn join(v: impl Iterator<Item = u32>) -> String {
    v.map(|x| x.to_string()).collect::<Vec<_>>().join(" ")
}
