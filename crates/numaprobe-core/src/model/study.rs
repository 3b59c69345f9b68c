//! The study's result model (serde, the `numaprobe/1` JSON contract for
//! `numaprobe study`) and the `--plan` document. The runner fills it; the
//! text, Markdown, CSV and chart renderings are in `render::study`,
//! `render::study_long`, `render::study_plan` and `render::study_chart`.

use super::background::BackgroundDefinitions;
use super::hops::HopMap;
use super::label::{Access, Mix};
use super::study_plan::StudyPlan;
use crate::kernels::KernelSpec;
use crate::stats::sketch::Sketch;
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
    /// Every timed sample; empty in a document that leaves them out (the
    /// default; `--keep-samples` keeps them), which has `sketch` instead.
    pub samples: Vec<CaseSample>,
    /// Present when `samples` is left out: how many there were and the
    /// quantiles of their totals (`total_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sketch: Option<Sketch>,
    /// Summary of the per-sample totals (sum of the threads' times).
    pub total: TimeSummary,
    /// Summary of the per-sample wall time (first start to last finish).
    pub wall: TimeSummary,
    /// Median total as a percentage of the baseline case's median total.
    pub percent: f64,
    /// Every thread ran on its CPU with its array on its node.
    pub placement_ok: bool,
    /// Bytes all threads move in one sample: the lines they touch (64 B
    /// each) times the passes. Write-allocate fetches and write-backs are
    /// not counted (as in `bandwidth`).
    #[serde(default)]
    pub bytes: u64,
    /// `bytes` over the median wall time: the case's throughput, GB/s
    /// (10^9 bytes/s); see [`gbs`].
    #[serde(default)]
    pub gbs: f64,
}

impl StudyReport {
    /// Each case's samples replaced by the sketch of their totals: the
    /// document a `study` writes unless told to keep them. The summaries,
    /// percentages and myths stay as they are (they were made from the
    /// samples).
    pub fn leave_out_samples(&mut self) {
        for c in self.experiments.iter_mut().flat_map(|e| &mut e.cases) {
            if !c.samples.is_empty() {
                let totals: Vec<f64> = c.samples.iter().map(|s| s.total_s).collect();
                c.sketch = Sketch::of(&totals);
                c.samples = Vec::new();
            }
        }
    }
}

/// GB/s (10^9 bytes per second) of `bytes` moved in `seconds`; 0 for no time.
pub fn gbs(bytes: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        bytes as f64 / seconds / 1e9
    } else {
        0.0
    }
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
    /// Bytes this thread moves in one sample (lines touched x 64 B x passes).
    #[serde(default)]
    pub bytes: u64,
    /// `bytes` over the thread's median time, GB/s.
    #[serde(default)]
    pub gbs: f64,
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

/// `numaprobe study --plan`: what would run, without measuring.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyPlanDocument {
    /// Always `numaprobe/1`.
    pub schema: String,
    /// Always `study-plan`.
    pub command: String,
    pub background_definitions: BackgroundDefinitions,
    pub plan: StudyPlan,
}

impl StudyPlanDocument {
    pub fn new(plan: StudyPlan) -> Self {
        StudyPlanDocument {
            schema: crate::SCHEMA.into(),
            command: "study-plan".into(),
            background_definitions: BackgroundDefinitions::current(),
            plan,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn samples_left_out_leave_the_sketch_of_their_totals_and_every_figure() {
        let mut r = sample_report();
        let c = &mut r.experiments[0].cases[1];
        c.samples.push(CaseSample {
            threads_s: vec![0.7, 0.6],
            total_s: 1.3,
            wall_s: 0.7,
        });
        let full = r.clone();
        r.leave_out_samples();
        for (a, b) in r.experiments[0]
            .cases
            .iter()
            .zip(&full.experiments[0].cases)
        {
            assert!(a.samples.is_empty());
            let s = a.sketch.as_ref().unwrap();
            assert_eq!(s.n, b.samples.len());
            let mut totals: Vec<f64> = b.samples.iter().map(|s| s.total_s).collect();
            totals.sort_by(f64::total_cmp);
            assert_eq!(s.quantiles, totals);
            assert_eq!(
                (&a.total, &a.wall, a.percent),
                (&b.total, &b.wall, b.percent)
            );
            assert_eq!(a.threads, b.threads);
        }
        let back: StudyReport = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        for (a, b) in back.experiments[0]
            .cases
            .iter()
            .zip(&r.experiments[0].cases)
        {
            assert_eq!((&a.samples, &a.sketch), (&b.samples, &b.sketch));
        }
        // Kept, the samples are written and no sketch.
        let v = serde_json::to_value(&full).unwrap();
        assert!(v["experiments"][0]["cases"][1].get("sketch").is_none());
        assert_eq!(
            v["experiments"][0]["cases"][1]["samples"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
    }

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
                    bytes: 64 << 20,
                    gbs: gbs(64 << 20, t),
                })
                .collect(),
            samples: vec![CaseSample {
                threads_s: times.to_vec(),
                total_s: total,
                wall_s: times.iter().cloned().fold(0.0, f64::max),
            }],
            sketch: None,
            total: summary(total),
            wall: summary(total / 2.0),
            percent: total / base_total * 100.0,
            placement_ok: true,
            bytes: (64 << 20) * times.len() as u64,
            gbs: gbs((64 << 20) * times.len() as u64, total / 2.0),
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
}
