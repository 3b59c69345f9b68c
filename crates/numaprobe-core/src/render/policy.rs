//! Renderers of a policy comparison (`model::policy::PolicyReport`): a
//! table per data case (text and Markdown), one CSV row per case and policy,
//! and the JSON document (which carries the top-level `"rankings"`). They
//! only format what was measured and advised.

use crate::model::format::Format;
use crate::model::policy::{CaseResult, PolicyReport};
use crate::render::bullet_section;
use crate::render::table::Align;
use crate::render::table::Table;
use crate::stats::flags::{star, STAR};
use crate::units::format_size;

/// The report in `format`.
pub fn render(r: &PolicyReport, format: Format) -> String {
    super::in_format(r, format, text, csv)
}

fn range(o: &crate::stats::Summary) -> String {
    format!("{:.2}-{:.2}", o.min, o.max)
}

fn case_table(r: &PolicyReport, c: &CaseResult) -> Table {
    let ranking = r
        .rankings
        .iter()
        .find(|k| k.title.starts_with(c.case.name()));
    let mut t = Table::new([
        "policy",
        "GB/s",
        "range",
        "ms/pass",
        "rounds",
        "pages per node",
        "as promised",
    ])
    .with_title(format!("{} data: {}", c.case.name(), c.description))
    .with_align(vec![
        Align::Left,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Left,
        Align::Right,
    ]);
    // Best first, as the ranking orders them.
    let mut order: Vec<&crate::model::policy::PolicyOutcome> = c.policies.iter().collect();
    if let Some(k) = ranking {
        order.sort_by_key(|o| {
            k.entries
                .iter()
                .position(|e| e.label == o.policy.name())
                .unwrap_or(usize::MAX)
        });
    }
    for o in order {
        let (g, rg, ms, n) = match (&o.throughput, &o.time) {
            (Some(s), Some(tm)) => (
                format!("{:.2}{}", s.median, star(!o.flags.is_empty())),
                range(s),
                format!("{:.2}", tm.median * 1e3),
                s.n.to_string(),
            ),
            _ => ("-".into(), "-".into(), "-".into(), "0".into()),
        };
        let (pages, promised) = match &o.placement {
            Some(d) => (
                d.shares_text(),
                match d.match_fraction {
                    Some(m) => format!("{:.1} %{}", m * 100.0, if d.flagged { " !" } else { "" }),
                    None => "no promise".into(),
                },
            ),
            None => (
                o.skipped
                    .as_deref()
                    .map(|_| "skipped (see notes)".to_string())
                    .or_else(|| o.failures.first().cloned())
                    .unwrap_or_default(),
                "-".into(),
            ),
        };
        t.push([o.policy.name().to_string(), g, rg, ms, n, pages, promised]);
    }
    t
}

/// How many samples were set aside for a thread that lost its CPU, and
/// that `n` counts the rest; None when every sample held.
fn set_aside_note(r: &PolicyReport) -> Option<String> {
    let (total, aside) = r
        .cases
        .iter()
        .flat_map(|c| &c.policies)
        // A document's `left_out` counts may be anything: summed saturating.
        .fold((0usize, 0usize), |(t, a), o| {
            (
                t.saturating_add(o.sample_count()),
                a.saturating_add(o.set_aside_count()),
            )
        });
    (aside > 0).then(|| {
        format!(
            "{aside} of {total} samples set aside: a thread lost its CPU or started late during them, so they timed the scheduler (`left_out.set_aside` in the JSON, each sample's `set_aside` with --keep-samples); n counts the rest, and the verdicts use only those"
        )
    })
}

fn text(r: &PolicyReport, md: bool) -> String {
    let p = &r.parameters;
    let mut out = String::new();
    let head = format!(
        "numaprobe policy: {} threads ({}) {} {} of data ({} pages, {}), {} round(s){}",
        p.threads.len(),
        p.threads
            .iter()
            .map(|s| format!("{}@{}", s.cpu, s.node))
            .collect::<Vec<_>>()
            .join(" "),
        p.op,
        format_size(p.size_bytes),
        p.pages,
        p.vector_width.name(),
        p.rounds,
        if r.complete { "" } else { " (incomplete)" }
    );
    if md {
        out.push_str(&format!("## {head}\n\n"));
    } else {
        out.push_str(&head);
        out.push_str("\n\n");
    }
    for c in &r.cases {
        let t = case_table(r, c);
        out.push_str(&if md { t.to_markdown() } else { t.to_text() });
        out.push('\n');
    }
    let bullet = if md { "- " } else { "  " };
    if !r.advice.is_empty() {
        out.push_str(&bullet_section(
            md,
            "Advice",
            r.advice.iter().map(|a| &a.text),
        ));
        out.push('\n');
    }
    let w = &r.weights;
    if !w.kernel.is_empty() || !w.derived.is_empty() || w.skip_reason.is_some() {
        out.push_str(if md {
            "### Weighted interleave\n\n"
        } else {
            "Weighted interleave:\n"
        });
        let fmt = |v: &[crate::model::policy::NodeWeight]| {
            v.iter()
                .map(|x| format!("node {}: {}", x.node, x.weight))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if let Some(s) = &w.skip_reason {
            out.push_str(&format!("{bullet}{s}\n"));
        }
        if !w.kernel.is_empty() {
            let with = if r.measured(crate::model::policy::PolicyKind::Weighted) {
                "measured with"
            } else {
                "weighted interleave not measured"
            };
            out.push_str(&format!(
                "{bullet}kernel weights ({with}): {}\n",
                fmt(&w.kernel)
            ));
        }
        if !w.derived.is_empty() {
            out.push_str(&format!(
                "{bullet}derived weights: {} ({})\n",
                fmt(&w.derived),
                w.derived_from.as_deref().unwrap_or("")
            ));
        }
        if !w.reproduce.is_empty() {
            out.push_str(&format!("{bullet}to reproduce:\n"));
            for l in &w.reproduce {
                out.push_str(&if md {
                    format!("  - `{l}`\n")
                } else {
                    format!("      {l}\n")
                });
            }
        }
        out.push('\n');
    }
    let mut notes: Vec<String> = r.notes.clone();
    notes.extend(set_aside_note(r));
    for c in &r.cases {
        for o in c.policies.iter().filter(|o| !o.flags.is_empty()) {
            notes.push(format!(
                "{STAR} {} data, {}: {}; it takes no part in the advice",
                c.case.name(),
                o.policy.name(),
                o.flags.join("; ")
            ));
        }
    }
    notes.extend(p.definitions.iter().cloned());
    out.push_str(&bullet_section(md, "Notes", notes));
    out
}

fn csv(r: &PolicyReport) -> String {
    let mut t = Table::new([
        "case",
        "policy",
        "rounds",
        "gbps_median",
        "gbps_min",
        "gbps_max",
        "gbps_cv",
        "seconds_per_pass_median",
        "pages",
        "pages_per_node",
        "placement_match",
        "skipped",
        "failures",
    ]);
    for c in &r.cases {
        for o in &c.policies {
            let s = o.throughput.as_ref();
            let f = |v: Option<f64>| v.map(|x| format!("{x:.4}")).unwrap_or_default();
            t.push([
                c.case.name().to_string(),
                o.policy.name().to_string(),
                o.sample_count().to_string(),
                f(s.map(|s| s.median)),
                f(s.map(|s| s.min)),
                f(s.map(|s| s.max)),
                f(s.map(|s| s.cv)),
                o.time
                    .as_ref()
                    .map(|t| format!("{:.6}", t.median))
                    .unwrap_or_default(),
                o.placement
                    .as_ref()
                    .map(|d| d.pages.to_string())
                    .unwrap_or_default(),
                o.placement
                    .as_ref()
                    .map(|d| {
                        d.per_node
                            .iter()
                            .map(|(n, p)| format!("{n}:{p}"))
                            .collect::<Vec<_>>()
                            .join(";")
                    })
                    .unwrap_or_default(),
                f(o.placement.as_ref().and_then(|d| d.match_fraction)),
                o.skipped.clone().unwrap_or_default(),
                o.failures.join("; "),
            ]);
        }
    }
    t.to_csv()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::experiments::policy::{empty_report, plan, PolicyConfig, Threads};
    use crate::model::policy::{PolicyKind, PolicyOutcome, PolicySample};

    /// A one-sample report of the live machine (the HTML report's tests
    /// use it too).
    pub(crate) fn doc() -> PolicyReport {
        let topo = crate::experiments::testing::live_topology();
        let p = plan(
            &topo,
            &PolicyConfig {
                size: Some(4 << 20),
                threads: Some(Threads::Total(1)),
                policies: Some(vec![PolicyKind::FirstTouch, PolicyKind::Unpinned]),
                ..Default::default()
            },
        )
        .unwrap();
        let mut r = empty_report(&p);
        for c in &mut r.cases {
            let o = &mut c.policies[0];
            o.samples.push(PolicySample {
                round: 1,
                passes: 3,
                seconds_per_pass: 0.01,
                gbps: 12.5,
                placement_match: Some(1.0),
                cpus: vec![0],
                set_aside: None,
            });
            o.summarise();
            // Every page where first touch promised it.
            let check = crate::placement::PlacementCheck {
                pages: 1024,
                page_size: 4096,
                per_node: [(0, 1024)].into_iter().collect(),
                not_present: 0,
                intended_nodes: vec![0],
                fraction_on_intended: 1.0,
                thp_fraction: None,
            };
            o.placement = Some(crate::experiments::policy::distribution(
                &[check],
                Some([(0, 1.0)].into_iter().collect()),
            ));
        }
        crate::analysis::policy::finish(&mut r);
        r
    }

    #[test]
    fn a_set_aside_sample_is_kept_in_the_json_but_out_of_the_summary_and_said_once() {
        let mut r = doc();
        assert!(!render(&r, Format::Table).contains("set aside"));
        let o = &mut r.cases[0].policies[0];
        let mut stretched = o.samples[0].clone();
        stretched.gbps = 1.0;
        stretched.set_aside = Some("preempted".into());
        o.samples.push(stretched.clone());
        o.summarise();
        let s = o.throughput.as_ref().unwrap();
        assert_eq!(
            (s.n, s.median),
            (1, 12.5),
            "the stretched sample decides nothing"
        );
        // With none held, the set-aside samples are all there is.
        o.samples.remove(0);
        o.summarise();
        assert_eq!(o.throughput.as_ref().unwrap().median, 1.0);
        assert!(
            o.flags[0].starts_with(
                "preempted: a thread lost its CPU or started late in every one of 1 samples"
            ),
            "{:?}",
            o.flags
        );
        crate::analysis::policy::finish(&mut r);
        assert!(
            r.advice
                .iter()
                .all(|a| !a.text.starts_with("independent data")),
            "the flagged policy was the case's only figure: no advice for it: {:?}",
            r.advice
        );
        assert!(r
            .advice
            .iter()
            .any(|a| a.text.starts_with("shared data: only first-touch")));
        let t = render(&r, Format::Table);
        assert!(
            t.contains("1.00*") && t.contains("* independent data, first-touch: preempted"),
            "{t}"
        );
        let o = &mut r.cases[0].policies[0];
        o.samples
            .insert(0, doc().cases[0].policies[0].samples[0].clone());
        o.summarise();
        assert!(o.flags.is_empty());
        let t = render(&r, Format::Table);
        assert_eq!(t.matches("1 of 3 samples set aside").count(), 1, "{t}");
        let v: serde_json::Value = serde_json::from_str(&render(&r, Format::Json)).unwrap();
        assert_eq!(
            v["cases"][0]["policies"][0]["samples"][1]["set_aside"],
            "preempted"
        );
        assert!(v["cases"][0]["policies"][0]["samples"][0]
            .get("set_aside")
            .is_none());
    }

    #[test]
    fn samples_left_out_keep_the_summaries_counts_and_note() {
        let mut r = doc();
        let o = &mut r.cases[0].policies[0];
        let mut stretched = o.samples[0].clone();
        stretched.gbps = 1.0;
        stretched.set_aside = Some("preempted".into());
        o.samples.push(stretched);
        o.summarise();
        let (table, csv) = (render(&r, Format::Table), render(&r, Format::Csv));
        let mut slim = r.clone();
        slim.leave_out_samples();
        let o = &slim.cases[0].policies[0];
        assert!(o.samples.is_empty());
        let l = o.left_out.as_ref().unwrap();
        assert_eq!((l.samples, l.set_aside), (2, 1));
        assert_eq!(
            l.gbps.as_ref().unwrap().quantiles,
            vec![12.5],
            "held samples only"
        );
        assert_eq!((o.sample_count(), o.set_aside_count()), (2, 1));
        // Read back, summarised again (as `check` and `report` do), the
        // figures, the counts and the note are those of the samples.
        let mut back: PolicyReport = serde_json::from_str(&render(&slim, Format::Json)).unwrap();
        back.cases
            .iter_mut()
            .flat_map(|c| &mut c.policies)
            .for_each(PolicyOutcome::summarise);
        assert_eq!(back, slim);
        assert_eq!(render(&back, Format::Table), table);
        assert_eq!(render(&back, Format::Csv), csv);
        assert!(table.contains("1 of 3 samples set aside"), "{table}");
        // An outcome without samples has nothing to leave out.
        let mut empty = r.cases[0].policies[1].clone();
        empty.leave_out_samples();
        assert!(empty.left_out.is_none());
        // Counts past the largest integer, two outcomes of them: the note
        // says the most there can be, where the sum wrapped or stopped.
        let mut hostile = slim.clone();
        let twin = hostile.cases[0].policies[0].clone();
        hostile.cases[0].policies.push(twin);
        for o in &mut hostile.cases[0].policies {
            o.samples.clear();
            o.left_out = Some(crate::model::policy::LeftOut {
                samples: usize::MAX,
                set_aside: usize::MAX,
                gbps: None,
            });
        }
        let note = set_aside_note(&hostile).unwrap();
        let most = usize::MAX;
        assert!(
            note.starts_with(&format!("{most} of {most} samples set aside")),
            "{note}"
        );
    }

    #[test]
    fn json_carries_rankings_and_schema() {
        let s = render(&doc(), Format::Json);
        let v: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(v["schema"], "numaprobe/1");
        assert_eq!(v["command"], "policy");
        let k = v["rankings"].as_array().unwrap();
        assert_eq!(k.len(), 2);
        assert_eq!(k[0]["entries"][0]["label"], "first-touch");
        assert_eq!(k[0]["entries"][1]["ranked"], false);
    }

    #[test]
    fn csv_has_a_row_per_case_and_policy_and_text_a_table_per_case() {
        let r = doc();
        let csv = render(&r, Format::Csv);
        assert_eq!(csv.lines().count(), 1 + 2 * 2);
        assert!(csv
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("independent,first-touch,1,12.5000"));
        let t = render(&r, Format::Table);
        assert!(t.contains("independent data:"), "{t}");
        assert!(t.contains("shared data:"), "{t}");
        assert!(t.contains("Advice:"), "{t}");
        let md = render(&r, Format::Markdown);
        assert!(md.contains("| policy |"), "{md}");
    }
}
