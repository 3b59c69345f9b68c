//! The trust families' tests: for every figure family, a flagged figure's
//! `_flagged` series is 1 and its `_flag_info` series carries its reason,
//! an unflagged figure's is 0 with no info series; a hostile reason comes
//! out one clean, valid line, and a long one clipped.

use super::tests::{lines_of, value};
use super::text::escape_label;
use super::trust::{reason, NO_REASON, REASON_MAX};
use super::*;
use crate::model::c2c::{C2cPair, C2cResult, Domain, DomainSummary, Figure};
use crate::model::matrix::tests as mt;

/// `{a="x",b="y"}` of (name, value) pairs, values plain (no escaping).
fn braces(labels: &[(&str, String)]) -> String {
    let inner: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
    format!("{{{}}}", inner.join(","))
}

/// The family `name`'s trust for one flagged and one unflagged figure:
/// `_flagged` 1 and 0, and one `_flag_info` series, the flagged one's, with
/// `reason` (as written in the file) after its labels.
fn assert_trust(
    t: &str,
    name: &str,
    flagged: &[(&str, String)],
    trusted: &[(&str, String)],
    reason: &str,
) {
    assert_eq!(
        value(t, &format!("{name}_flagged{}", braces(flagged))),
        1.0,
        "{name}"
    );
    assert_eq!(
        value(t, &format!("{name}_flagged{}", braces(trusted))),
        0.0,
        "{name}"
    );
    let mut with = flagged.to_vec();
    with.push(("reason", reason.to_string()));
    assert_eq!(
        lines_of(t, &format!("{name}_flag_info")),
        [format!("{name}_flag_info{} 1", braces(&with))],
        "{name} in\n{t}"
    );
}

fn l(pairs: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
    pairs.iter().map(|(k, v)| (*k, v.to_string())).collect()
}

fn flags(s: &str) -> Vec<String> {
    vec![s.to_string()]
}

fn figure(median: f64, why: Option<&str>) -> Figure {
    Figure {
        median,
        min: median,
        max: median,
        cv: 0.01,
        samples: vec![median; 5],
        sketch: None,
        stop: None,
        set_aside: Default::default(),
        flagged: why.is_some(),
        flags: why.map(flags).unwrap_or_default(),
    }
}

fn c2c() -> C2cResult {
    let pairs = vec![
        C2cPair {
            a: 0,
            b: 1,
            node_a: 0,
            node_b: 0,
            domain: Domain::SameL3,
            hitm: Some(figure(80.0, Some("two modes: 31 ns and 158 ns"))),
            shared: Some(figure(40.0, None)),
        },
        C2cPair {
            a: 1,
            b: 0,
            node_a: 0,
            node_b: 0,
            domain: Domain::SameL3,
            hitm: Some(figure(81.0, None)),
            shared: None,
        },
    ];
    C2cResult {
        schema: crate::SCHEMA.into(),
        unit: "ns".into(),
        cpus: vec![0, 1],
        hitm: vec![vec![None, Some(80.0)], vec![Some(81.0), None]],
        shared: vec![vec![None, Some(40.0)], vec![None, None]],
        domains: DomainSummary::of_pairs(&pairs),
        pairs,
        atomics: "loads and stores".into(),
        hitm_lines: Some("one line".into()),
        platform_atomics: None,
        stop_rule: Default::default(),
        timer: crate::timer::Timer::get().info(),
        notes: vec![],
        failed: vec![],
        complete: true,
        interrupted: false,
    }
}

fn peak() -> crate::model::peak::PeakResult {
    let mut r = crate::experiments::peak::memory_only(Default::default());
    r.system.push(crate::model::peak::SystemPeak {
        mix: "read".into(),
        threads: 2,
        gbs: 30.0,
        placement: 1.0,
        samples: 5,
        cv: 0.16,
        sum_of_nodes_alone_gbs: None,
        flags: flags("unstable: CV 16.5 %"),
        flagged: true,
        set_aside: Default::default(),
    });
    r.nodes.push(crate::model::peak::NodePeak {
        node: 0,
        mix: "read".into(),
        threads: 2,
        gbs: 29.0,
        concurrent: true,
        cpus: vec![0, 1],
        placement: 1.0,
        cv: 0.01,
        flags: vec![],
        flagged: false,
        set_aside: Default::default(),
    });
    r
}

fn policy() -> crate::model::policy::PolicyReport {
    use crate::experiments::policy::{empty_report, plan, PolicyConfig, Threads};
    use crate::model::policy::PolicyKind;
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
        for (i, o) in c.policies.iter_mut().enumerate() {
            o.throughput = crate::stats::Summary::of(&[12.5 + i as f64]);
        }
    }
    r.cases[0].policies[1].flags = flags("unstable: CV 12.0 %");
    r
}

fn tune() -> crate::model::tune::TuneReport {
    use crate::experiments::tune::{plan, report, Meta, Outcome};
    use crate::model::tune::{Failure, Run};
    use crate::topology::testing::{build, CpuSpec, NodeSpec};
    let cpus = [CpuSpec::new(0, 0, 0, 0), CpuSpec::new(1, 1, 0, 1)];
    let nodes = [0, 1].map(NodeSpec::gib);
    let p = plan(&build("/", &cpus, &nodes, None), 2, false).unwrap();
    let run = |round, wall_s| Run {
        round,
        wall_s,
        exit_status: Some(0),
        signal: None,
        ok: true,
        memory_last: None,
        memory_peak: None,
        memory_samples: 0,
        others_busy_cpus: None,
        cpu_s: None,
    };
    let mut outcomes: Vec<Outcome> = (0..p.candidates.len())
        .map(|i| Outcome {
            runs: (0..3).map(|k| run(k, 1.0 + i as f64)).collect(),
            failure: None,
        })
        .collect();
    outcomes[2].failure = Some(Failure {
        round: 0,
        status: "exit status 3".into(),
        stderr_tail: String::new(),
    });
    let mut r = report(
        &p,
        &outcomes,
        Meta {
            command: vec!["./app".into()],
            threads_from: "--threads".into(),
            runs_requested: 3,
            rounds_completed: 3,
            complete: true,
        },
    );
    r.candidates[1].flags = flags("two modes: 1.0 s and 2.0 s");
    r
}

/// Every family with trust, one figure flagged and one not in each.
fn everything() -> Exported {
    let mut lat = mt::sample();
    for c in &mut lat.cells {
        c.flagged = (c.cpu_node, c.mem_node) == (0, 1);
        c.flags = if c.flagged {
            flags("placement: 50 % of pages on node 1")
        } else {
            vec![]
        };
    }
    let mut sweep = crate::render::sweep::tests::sample();
    sweep.points[0].flagged = true;
    sweep.points[0].flags = flags("non-monotonic: 1.3 x faster than 4 KiB");
    let mut loaded = crate::render::loaded::tests::doc();
    loaded.curves[0].points[1].flags = flags("busy: 1.5 other CPUs busy beside it");
    let mut locks = crate::render::locks::tests::sample();
    let mut second = locks.runs[0].clone();
    second.threads = 1;
    second.placement = "single".into();
    second.cpus = vec![0];
    locks.runs.push(second);
    locks.runs[0].flagged = true;
    locks.runs[0].flags = flags("unstable: CV 40.0 %");
    Exported {
        latency: Some(lat),
        peak: Some(peak()),
        sweep: Some(sweep),
        loaded: Some(loaded),
        c2c: Some(c2c()),
        locks: Some(locks),
        policy: Some(policy()),
        tune: Some(tune()),
        complete: true,
        ..Exported::default()
    }
}

#[test]
fn every_figure_family_has_its_flag_and_a_flagged_figure_its_reason() {
    let e = everything();
    let t = prometheus(&e);
    assert_trust(
        &t,
        "numaprobe_cell",
        &l(&[("matrix", "latency"), ("cpu_node", "0"), ("mem_node", "1")]),
        &l(&[("matrix", "latency"), ("cpu_node", "0"), ("mem_node", "0")]),
        "placement: 50 % of pages on node 1",
    );
    assert_trust(
        &t,
        "numaprobe_peak",
        &l(&[("scope", "system"), ("node", ""), ("mix", "read")]),
        &l(&[("scope", "node"), ("node", "0"), ("mix", "read")]),
        "unstable: CV 16.5 %",
    );
    let s = e.sweep.as_ref().unwrap();
    let point = |i: usize| {
        let p = &s.points[i];
        vec![
            ("cpu_node", s.cpu_node.to_string()),
            ("mem_node", s.mem_node.to_string()),
            ("pages", p.pages.name().to_string()),
            ("size_bytes", p.size_bytes.to_string()),
        ]
    };
    assert_trust(
        &t,
        "numaprobe_sweep_point",
        &point(0),
        &point(1),
        "non-monotonic: 1.3 x faster than 4 KiB",
    );
    assert_trust(
        &t,
        "numaprobe_loaded_point",
        &l(&[
            ("cpu_node", "0"),
            ("mem_node", "0"),
            ("mix", "read"),
            ("delay", "64"),
        ]),
        &l(&[
            ("cpu_node", "0"),
            ("mem_node", "0"),
            ("mix", "read"),
            ("delay", "idle"),
        ]),
        "busy: 1.5 other CPUs busy beside it",
    );
    assert_trust(
        &t,
        "numaprobe_c2c",
        &l(&[
            ("a", "0"),
            ("b", "1"),
            ("domain", "same L3"),
            ("kind", "hitm"),
        ]),
        &l(&[
            ("a", "1"),
            ("b", "0"),
            ("domain", "same L3"),
            ("kind", "hitm"),
        ]),
        "two modes: 31 ns and 158 ns",
    );
    assert_trust(
        &t,
        "numaprobe_locks",
        &l(&[
            ("op", "spin_lock"),
            ("sharing", "shared"),
            ("placement", "cross_node"),
            ("threads", "2"),
            ("cpus", "0,4"),
        ]),
        &l(&[
            ("op", "spin_lock"),
            ("sharing", "shared"),
            ("placement", "single"),
            ("threads", "1"),
            ("cpus", "0"),
        ]),
        "unstable: CV 40.0 %",
    );
    let case = e.policy.as_ref().unwrap().cases[0].case.name();
    assert_trust(
        &t,
        "numaprobe_policy",
        &l(&[("case", case), ("policy", "unpinned")]),
        &l(&[("case", case), ("policy", "first-touch")]),
        "unstable: CV 12.0 %",
    );
    let cands = &e.tune.as_ref().unwrap().candidates;
    assert_trust(
        &t,
        "numaprobe_tune",
        &[("candidate", cands[1].label.clone())],
        &[("candidate", cands[0].label.clone())],
        "two modes: 1.0 s and 2.0 s",
    );
}

#[test]
fn the_figures_beside_the_flags_are_in_base_units_and_a_row_without_one_is_absent() {
    let e = everything();
    let t = prometheus(&e);
    assert_eq!(
        value(
            &t,
            "numaprobe_peak_bandwidth_bytes_per_second{scope=\"system\",node=\"\",mix=\"read\"}"
        ),
        30e9
    );
    assert_eq!(
        value(
            &t,
            "numaprobe_c2c_seconds{a=\"0\",b=\"1\",domain=\"same L3\",kind=\"hitm\"}"
        ),
        80e-9
    );
    assert_eq!(
        value(
            &t,
            "numaprobe_peak_bandwidth_bytes_per_second{scope=\"node\",node=\"0\",mix=\"read\"}"
        ),
        29e9
    );
    assert_eq!(
        value(
            &t,
            "numaprobe_loaded_latency_seconds{cpu_node=\"0\",mem_node=\"0\",mix=\"read\",delay=\"64\"}"
        ),
        104.0 / 1e9
    );
    // Pair 1 -> 0 has no read-shared figure: no series, flagged or not.
    assert!(!t.contains("a=\"1\",b=\"0\",domain=\"same L3\",kind=\"shared\""));
    assert_eq!(
        value(
            &t,
            "numaprobe_locks_ops_per_second{op=\"spin_lock\",sharing=\"shared\",placement=\"cross_node\",threads=\"2\",cpus=\"0,4\"}"
        ),
        12.5e6
    );
    let p = e.policy.as_ref().unwrap();
    for c in &p.cases {
        assert_eq!(
            value(
                &t,
                &format!(
                    "numaprobe_policy_throughput_bytes_per_second{{case=\"{}\",policy=\"unpinned\"}}",
                    c.case.name()
                )
            ),
            13.5e9
        );
    }
    let cands = &e.tune.as_ref().unwrap().candidates;
    assert_eq!(
        value(
            &t,
            &format!(
                "numaprobe_tune_wall_seconds{{candidate=\"{}\"}}",
                cands[1].label
            )
        ),
        2.0
    );
    // The failed candidate has no figure, so no flag either.
    let failed = format!("{{candidate=\"{}\"}}", cands[2].label);
    assert!(!t.contains(&failed), "{t}");
    assert_eq!(
        lines_of(&t, "numaprobe_tune_flagged").len(),
        cands.len() - 1
    );
    // No series twice, and every family has one label set.
    let mut seen = std::collections::BTreeSet::new();
    for line in t.lines().filter(|l| !l.starts_with('#')) {
        assert!(seen.insert(line.rsplit_once(' ').unwrap().0), "{line}");
    }
}

#[test]
fn nothing_flagged_writes_no_info_family() {
    let mut e = everything();
    e.peak.as_mut().unwrap().system[0].flagged = false;
    let t = prometheus(&e);
    assert!(!t.contains("numaprobe_peak_flag_info"), "{t}");
    assert_eq!(
        lines_of(&t, "numaprobe_peak_flagged")
            .iter()
            .filter(|l| l.ends_with(" 0"))
            .count(),
        2
    );
}

/// A sample line is `name{k="v",...} value` with only the format's
/// escapes (`\\`, `\"`, `\n`) in a value, and nothing a terminal acts on.
fn assert_valid(text: &str) {
    for line in text.lines() {
        assert!(!line.chars().any(crate::clean::is_unsafe), "{line:?}");
        if line.starts_with('#') {
            continue;
        }
        let (series, v) = line.rsplit_once(' ').unwrap();
        assert!(v.parse::<f64>().unwrap().is_finite(), "{line}");
        let Some((_, mut rest)) = series.split_once('{') else {
            continue;
        };
        loop {
            let (_, after) = rest.split_once("=\"").expect(line);
            let mut chars = after.char_indices();
            let end = loop {
                match chars.next().expect(line) {
                    (_, '\\') => {
                        let (_, e) = chars.next().expect(line);
                        assert!(matches!(e, '\\' | '"' | 'n'), "{line}");
                    }
                    (i, '"') => break i,
                    _ => {}
                }
            };
            rest = &after[end + 1..];
            match rest.strip_prefix(',') {
                Some(r) => rest = r,
                None => {
                    assert_eq!(rest, "}", "{line}");
                    break;
                }
            }
        }
    }
}

#[test]
fn a_hostile_reason_comes_out_as_one_clean_valid_line() {
    let mut e = everything();
    let hostile = "a\u{1b}[31m\r\u{fffe}\"q\"\nz\\";
    e.c2c.as_mut().unwrap().pairs[0]
        .hitm
        .as_mut()
        .unwrap()
        .flags = vec![hostile.into()];
    e.peak.as_mut().unwrap().system[0].mix = "re\u{1b}ad\u{202e}".into();
    let t = prometheus(&e);
    assert_valid(&t);
    let info = lines_of(&t, "numaprobe_c2c_flag_info");
    assert_eq!(
        info,
        ["numaprobe_c2c_flag_info{a=\"0\",b=\"1\",domain=\"same L3\",kind=\"hitm\",reason=\"a\\\\u{1b}[31m\\\\r\\\\u{fffe}\\\"q\\\"\\\\nz\\\\\"} 1"]
    );
    // Every label goes through the same cleaning, not only a reason.
    assert!(
        t.contains("numaprobe_peak_flagged{scope=\"system\",node=\"\",mix=\"re\\\\u{1b}ad\\\\u{202e}\"} 1\n"),
        "{t}"
    );
}

#[test]
fn a_reason_joins_the_flags_clips_a_long_one_and_names_a_missing_one() {
    assert_eq!(
        reason(&["unstable: CV 12.0 %".into(), "two modes".into()]),
        "unstable: CV 12.0 %; two modes"
    );
    let long = reason(&["x".repeat(REASON_MAX + 760)]);
    assert_eq!(long, format!("{}...", "x".repeat(REASON_MAX)));
    assert_eq!(reason(&["x".repeat(REASON_MAX)]), "x".repeat(REASON_MAX));
    assert_eq!(reason(&[]), NO_REASON);
    // A figure flagged without words still says it is, never reason="".
    let mut e = everything();
    e.c2c.as_mut().unwrap().pairs[0]
        .hitm
        .as_mut()
        .unwrap()
        .flags = vec![];
    let t = prometheus(&e);
    assert!(
        t.contains(&format!(",kind=\"hitm\",reason=\"{NO_REASON}\"}} 1\n")),
        "{t}"
    );
    // A label value past the cap is clipped in the exposition too.
    let mut e = everything();
    e.c2c.as_mut().unwrap().pairs[0]
        .hitm
        .as_mut()
        .unwrap()
        .flags = vec!["y".repeat(5000)];
    let t = prometheus(&e);
    let info = lines_of(&t, "numaprobe_c2c_flag_info");
    assert!(
        info[0].ends_with(&format!("reason=\"{}...\"}} 1", "y".repeat(REASON_MAX))),
        "{}",
        info[0]
    );
}

#[test]
fn a_label_value_is_cleaned_before_it_is_escaped() {
    assert_eq!(
        escape_label("\u{1b}\r\u{fffe}"),
        "\\\\u{1b}\\\\r\\\\u{fffe}"
    );
    assert_eq!(escape_label("a\"b\\c\nd"), "a\\\"b\\\\c\\\\nd");
    assert_eq!(escape_label("Größe 日本"), "Größe 日本");
}
