//! Renderers of lock and atomic contention (`model::locks::LocksResult`,
//! `numaprobe c2c --locks`): one table of runs (op, sharing, placement,
//! threads, Mops/s, ns/op) with a line saying which atomics ran, in text and
//! Markdown; one CSV row per run; the JSON document. A flagged row (its
//! spread, two modes, too few slices that held their CPU:
//! [`crate::stats::flags`]) carries the star after its figures and its
//! reasons under the table.

use crate::model::format::Format;
use crate::model::locks::LocksResult;
use crate::render::bullet_section;
use crate::render::table::{Align, Table};
use crate::stats::flags::star;
use crate::units::format_list;

/// The result in `format`.
pub fn render(r: &LocksResult, format: Format) -> String {
    super::in_format(r, format, text, csv)
}

/// "lse" -> what a reader needs to know about it.
pub fn atomics_line(r: &LocksResult) -> String {
    let what = match r.atomics.as_str() {
        "lse" => "arm64 LSE instructions: ldaddal, swpa",
        "load/store exclusive" => "arm64 load/store-exclusive loops: ldaxr/stlxr",
        "x86 lock" => "x86-64 lock xadd, xchg",
        other => other,
    };
    format!("atomics: {} ({what})", r.atomics)
}

fn cpus_text(cpus: &[u32], nodes: &[u32]) -> String {
    let mut distinct: Vec<u32> = nodes.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.is_empty() {
        format_list(cpus)
    } else {
        let names: Vec<String> = distinct.iter().map(u32::to_string).collect();
        let word = if distinct.len() == 1 { "node" } else { "nodes" };
        format!("{} ({word} {})", format_list(cpus), names.join(","))
    }
}

/// The table of runs, in run order.
pub fn runs_table(r: &LocksResult) -> Table {
    let mut t = Table::new([
        "op",
        "sharing",
        "placement",
        "threads",
        "Mops/s",
        "ns/op",
        "cv",
        "CPUs",
    ])
    .with_align(vec![
        Align::Left,
        Align::Left,
        Align::Left,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Left,
    ]);
    for x in &r.runs {
        let mark = star(x.flagged);
        t.push([
            x.op.clone(),
            x.sharing.clone(),
            x.placement.clone(),
            x.threads.to_string(),
            format!("{:.1}{mark}", x.ops_per_s / 1e6),
            format!("{:.1}{mark}", x.ns_per_op),
            format!("{:.1} %", x.cv * 100.0),
            cpus_text(&x.cpus, &x.nodes),
        ]);
    }
    for f in &r.failed {
        t.push([
            f.op.clone(),
            f.sharing.clone(),
            f.placement.clone(),
            f.cpus.len().to_string(),
            "failed".into(),
            "-".into(),
            "-".into(),
            format_list(&f.cpus),
        ]);
    }
    t
}

/// One line per flagged row: `spin_lock shared cross_node 2 threads*: unstable: ...`.
pub fn flagged_lines(r: &LocksResult) -> Vec<String> {
    r.runs
        .iter()
        .filter(|x| x.flagged)
        .map(|x| {
            format!(
                "{} {} {} {} thread(s){}: {}",
                x.op,
                x.sharing,
                x.placement,
                x.threads,
                star(true),
                x.flags.join("; ")
            )
        })
        .collect()
}

fn text(r: &LocksResult, md: bool) -> String {
    let head = format!(
        "numaprobe c2c --locks: {} run(s){}",
        r.runs.len(),
        if r.complete { "" } else { " (incomplete)" }
    );
    let mut out = if md {
        format!("## {head}\n\n{}\n\n", atomics_line(r))
    } else {
        format!("{head}\n{}\n\n", atomics_line(r))
    };
    let t = runs_table(r);
    out.push_str(&if md { t.to_markdown() } else { t.to_text() });
    let mut notes = vec![
        "ns/op is one thread's wall time per operation (threads / total rate); Mops/s is all threads together, median of the samples".to_string(),
        format!(
            "each sample is a {:.0} ms slice that all threads start together",
            r.slice_s * 1e3
        ),
    ];
    notes.extend(
        flagged_lines(r)
            .into_iter()
            .map(|f| format!("flagged: {f}")),
    );
    notes.extend(r.notes.iter().cloned());
    for f in &r.failed {
        notes.push(format!(
            "failed: {} {} {} on CPUs {}: {}",
            f.op,
            f.sharing,
            f.placement,
            format_list(&f.cpus),
            f.reason
        ));
    }
    out.push('\n');
    out.push_str(&bullet_section(md, "Notes", notes));
    out
}

fn csv(r: &LocksResult) -> String {
    let mut t = Table::new([
        "op",
        "sharing",
        "placement",
        "threads",
        "cpus",
        "nodes",
        "memory_node",
        "ops_per_s",
        "ns_per_op",
        "cv",
        "samples",
        "atomics",
        "failed",
        "flags",
        "set_aside",
    ]);
    let list = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(" ");
    for x in &r.runs {
        t.push([
            x.op.clone(),
            x.sharing.clone(),
            x.placement.clone(),
            x.threads.to_string(),
            list(&x.cpus),
            list(&x.nodes),
            x.memory_node.map(|n| n.to_string()).unwrap_or_default(),
            format!("{:.0}", x.ops_per_s),
            format!("{:.3}", x.ns_per_op),
            format!("{:.4}", x.cv),
            x.kept().to_string(),
            r.atomics.clone(),
            String::new(),
            x.flags.join("; "),
            x.set_aside.total().to_string(),
        ]);
    }
    for f in &r.failed {
        t.push([
            f.op.clone(),
            f.sharing.clone(),
            f.placement.clone(),
            f.cpus.len().to_string(),
            list(&f.cpus),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            "0".into(),
            r.atomics.clone(),
            f.reason.clone(),
            String::new(),
            String::new(),
        ]);
    }
    t.to_csv()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::locks::{LockFailed, LockRun};

    pub(crate) fn sample() -> LocksResult {
        LocksResult {
            schema: crate::SCHEMA.into(),
            atomics: "load/store exclusive".into(),
            runs: vec![LockRun {
                op: "spin_lock".into(),
                sharing: "shared".into(),
                placement: "cross_node".into(),
                cpus: vec![0, 4],
                nodes: vec![0, 1],
                memory_node: Some(0),
                threads: 2,
                ops_per_s: 12.5e6,
                ns_per_op: 160.0,
                cv: 0.012,
                samples: vec![12.5e6; 5],
                sketch: None,
                stop: "cv_reached".into(),
                set_aside: Default::default(),
                flagged: false,
                flags: vec![],
            }],
            failed: vec![LockFailed {
                op: "atomic_add".into(),
                sharing: "own_line".into(),
                placement: "cross_node".into(),
                cpus: vec![0, 4],
                reason: "lost updates".into(),
            }],
            stop_rule: None,
            slice_s: 0.02,
            timer: crate::timer::Timer::get().info(),
            notes: vec!["same_core skipped: no SMT".into()],
            complete: true,
            interrupted: false,
        }
    }

    #[test]
    fn every_format_says_which_atomics_ran_and_shows_each_run() {
        let r = sample();
        let t = render(&r, Format::Table);
        assert!(
            t.contains("atomics: load/store exclusive (arm64 load/store-exclusive loops: ldaxr"),
            "{t}"
        );
        assert!(t.contains("cross_node") && t.contains("12.5") && t.contains("160.0"));
        assert!(t.contains("0,4 (nodes 0,1)"), "{t}");
        assert!(t.contains("same_core skipped") && t.contains("failed: atomic_add own_line"));
        let md = render(&r, Format::Markdown);
        assert!(md.starts_with("## numaprobe c2c --locks") && md.contains("| spin_lock"));
        let csv = render(&r, Format::Csv);
        assert_eq!(csv.lines().count(), 3, "{csv}");
        assert!(csv.lines().nth(1).unwrap().contains("12500000"));
        let j: serde_json::Value = serde_json::from_str(&render(&r, Format::Json)).unwrap();
        assert_eq!(j["atomics"], "load/store exclusive");
        assert_eq!(j["runs"][0]["nodes"], serde_json::json!([0, 1]));
        let back: LocksResult = serde_json::from_value(j).unwrap();
        assert_eq!(back.runs, r.runs);
    }

    #[test]
    fn a_flagged_row_carries_its_star_and_reasons_in_every_format() {
        let mut r = sample();
        let samples = vec![
            12.5e6, 12.4e6, 12.6e6, 12.5e6, 24.9e6, 25.1e6, 25.0e6, 25.2e6,
        ];
        let m = crate::stats::Measured {
            summary: crate::stats::Summary::of(&samples).unwrap(),
            samples: samples.clone(),
            stop: crate::stats::StopReason::BudgetSpent,
            warmup_runs: 1,
            elapsed_s: 1.0,
            set_aside: crate::stats::SetAside {
                preempted: 3,
                shortened: 2,
                ..Default::default()
            },
        };
        let x = &mut r.runs[0];
        x.flags = m.flags("ops/s");
        x.flagged = !x.flags.is_empty();
        x.set_aside = m.set_aside;
        x.samples = samples;
        assert!(
            x.flags[1].starts_with("two modes: 12500000.0 ops/s (4 samples)"),
            "{:?}",
            x.flags
        );
        for format in [Format::Table, Format::Markdown] {
            let t = render(&r, format);
            assert!(t.contains("12.5*") && t.contains("160.0*"), "{t}");
            assert!(
                t.contains("flagged: spin_lock shared cross_node 2 thread(s)*: unstable: CV"),
                "{t}"
            );
        }
        let csv = render(&r, Format::Csv);
        assert!(
            csv.lines().next().unwrap().ends_with(",flags,set_aside"),
            "{csv}"
        );
        assert!(csv.lines().nth(1).unwrap().ends_with(",3"), "{csv}");
        assert!(
            csv.lines().nth(1).unwrap().contains("\"unstable: CV"),
            "{csv}"
        );
        let j: serde_json::Value = serde_json::from_str(&render(&r, Format::Json)).unwrap();
        assert_eq!(j["runs"][0]["flagged"], true);
        assert_eq!(j["runs"][0]["set_aside"]["preempted"], 3);
        let html = crate::render::html::locks::section(&crate::render::html::ReportInput {
            locks: vec![crate::render::html::Doc::new("locks.json", r)],
            ..Default::default()
        });
        assert!(html.contains("12.5*"), "{html}");
        assert!(
            html.contains(
                "<p class=\"warn\">Flagged: spin_lock shared cross_node 2 thread(s)*: unstable: CV"
            ),
            "{html}"
        );
        // An older document without the fields reads unflagged.
        let mut old = j.clone();
        for k in ["flagged", "flags", "set_aside"] {
            old["runs"][0].as_object_mut().unwrap().remove(k);
        }
        let back: LocksResult = serde_json::from_value(old).unwrap();
        assert!(!back.runs[0].flagged && flagged_lines(&back).is_empty());
    }

    #[test]
    fn a_lock_run_has_one_cpu_and_node_per_thread() {
        let ok = sample();
        crate::model::shape::Shape::check_shape(&ok).unwrap();
        let mut d = ok.clone();
        d.runs[0].threads = 3000;
        assert!(crate::model::shape::refusal(&d).contains("CPUs for 3000 threads"));
        let mut d = ok;
        d.runs[0].nodes = (0..3000).collect();
        assert!(crate::model::shape::refusal(&d).contains("nodes names 3000 nodes"));
    }
}
