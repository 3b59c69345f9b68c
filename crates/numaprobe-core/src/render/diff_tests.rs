//! Tests of what `diff` and `check` show and of the drain reason
//! `check --slurm-drain` writes: the words, counts and forms a user or an
//! administrator reads.

use super::*;
use crate::model::diff::{Section, Verdict};

fn report(differences: Vec<Difference>) -> CheckReport {
    CheckReport {
        schema: crate::SCHEMA.into(),
        expect: "t.json".into(),
        expect_kind: "topo".into(),
        root: "/".into(),
        measured: None,
        checked: vec!["memory".into()],
        matches: differences.is_empty(),
        differences,
        sections: vec![],
        notes: vec![],
    }
}

/// Every form of a check shows a document's hostile value as visible
/// escapes: no ESC, CR or bidi override reaches the terminal or a file.
#[test]
fn a_hostile_value_reaches_no_form_of_a_check_raw() {
    let thp = Difference {
        section: Section::Thp,
        item: "transparent huge pages".into(),
        a: "\u{1b}[31mmadvise\r\u{202e}".into(),
        b: "never".into(),
    };
    let mut r = report(vec![thp]);
    r.expect = "a\nb.json".into();
    for f in [Format::Table, Format::Markdown, Format::Csv] {
        let out = check(&r, f);
        assert!(
            !out.contains(['\u{1b}', '\r', '\u{202e}']),
            "{f:?}: {out:?}"
        );
        assert!(
            out.contains("\\u{1b}[31mmadvise\\r\\u{202e}"),
            "{f:?}: {out}"
        );
    }
    assert!(check(&r, Format::Table).contains("a\\nb.json"));
    let reason = drain_reason(&r).unwrap();
    assert!(
        reason.contains("\\u{1b}[31mmadvise\\r\\u{202e}"),
        "{reason}"
    );
}

#[test]
fn the_drain_reason_is_the_first_difference_and_how_many_more() {
    assert_eq!(drain_reason(&report(vec![])), None);
    let mem = Difference::new(Section::Memory, "node 1: memory", "96 GiB", "64 GiB");
    let thp = Difference::new(Section::Thp, "transparent huge pages", "always", "never");
    let cpus = Difference::new(Section::Allowed, "allowed CPUs", "0-1", "0");
    assert_eq!(
        drain_reason(&report(vec![mem.clone()])).unwrap(),
        "node 1: memory 96 GiB!=64 GiB [numaprobe]"
    );
    assert_eq!(
        drain_reason(&report(vec![thp, mem.clone(), mem])).unwrap(),
        "thp always!=never (+2 more) [numaprobe]"
    );
    // What differs is within the 20 characters `sinfo -R` shows.
    let r = drain_reason(&report(vec![cpus])).unwrap();
    assert_eq!(
        r.chars().take(20).collect::<String>(),
        "allowed CPUs 0-1!=0 "
    );
    // Long values are cut, control characters never reach Slurm, and
    // the mark survives the cut.
    let long = Difference::new(Section::Pci, "PCI 0000:00:01.0", "x".repeat(500), "a\nb");
    let r = drain_reason(&report(vec![long.clone(), long])).unwrap();
    assert_eq!(r.chars().count(), DRAIN_REASON_MAX);
    assert!(r.ends_with("... (+1 more) [numaprobe]"), "{r}");
    assert!(!r.chars().any(char::is_control));
    assert!(is_numaprobe_drain(&r));
    // An item of up to 16 characters leads as it is, a longer one
    // that does not name its section is named by the section.
    let at16 = Difference::new(Section::Caches, "L3 size of node0", "32", "16");
    let at17 = Difference::new(Section::Caches, "L3 size of node01", "32", "16");
    let model = Difference::new(Section::Machine, "CPU model", "A", "B");
    assert_eq!(
        drain_reason(&report(vec![at16])).unwrap(),
        "L3 size of node0 32!=16 [numaprobe]"
    );
    assert_eq!(
        drain_reason(&report(vec![at17])).unwrap(),
        "caches 32!=16 [numaprobe]"
    );
    assert_eq!(
        drain_reason(&report(vec![model])).unwrap(),
        "CPU model A!=B [numaprobe]"
    );
    // A reason exactly as long as the limit is not cut.
    let full = Difference::new(Section::Machine, "CPU model", "x".repeat(135), "y");
    let r = drain_reason(&report(vec![full])).unwrap();
    assert_eq!(r.chars().count(), DRAIN_REASON_MAX);
    assert!(
        r.starts_with("CPU model xxx") && r.ends_with("x!=y [numaprobe]"),
        "{r}"
    );
}

#[test]
fn numaprobe_knows_its_own_drains_and_no_one_else_s() {
    for own in [
        "allowed CPUs 0-1!=0 [numaprobe]",
        "thp always!=never (+2 more) [numaprobe] [root@2026-11-27T20:01:02]",
        "numaprobe: allowed CPUs: expected 0-1, found 0",
        "  numaprobe: x [slurm@2026-11-27T20:01:02]",
    ] {
        assert!(is_numaprobe_drain(own), "{own}");
    }
    for other in [
        "admin: fan check",
        "numaprobe check",
        "[numaprobe] first, then the admin's words",
        "fan [numaprobe] x [root@now]",
        "",
    ] {
        assert!(!is_numaprobe_drain(other), "{other}");
    }
    assert_eq!(without_stamp("a b [root@2026-11-27T20:01:02]"), "a b");
    assert_eq!(without_stamp("a [numaprobe]"), "a [numaprobe]");
    assert_eq!(without_stamp("a [x@y]  "), "a");
    assert_eq!(without_stamp("[x@y]"), "[x@y]");
}

fn side(median: f64) -> crate::model::diff::CellSide {
    crate::model::diff::CellSide {
        median,
        min: median,
        max: median,
        samples: 5,
    }
}

fn cell(median_a: f64, verdict: Verdict, p: Option<f64>) -> CellDiff {
    CellDiff {
        kind: "latency".into(),
        cpu_node: 0,
        mem_node: 1,
        unit: "ns".into(),
        a: Some(side(median_a)),
        b: Some(side(median_a * 1.5)),
        change: Some(median_a * 0.5),
        change_pct: Some(50.0),
        ci_low_pct: Some(-1.0),
        ci_high_pct: Some(3.0),
        p_value: p,
        verdict,
        reason: None,
        notes: vec![],
    }
}

fn origin_of(path: &str, complete: bool) -> Origin {
    Origin {
        path: path.into(),
        kind: "report".into(),
        documents: vec!["run.json".into(), "latency.json".into()],
        hostname: Some("h1".into()),
        kernel: Some("6.1".into()),
        start: Some("2026-11-27T20:01:02Z".into()),
        complete,
        runs: Vec::new(),
    }
}

fn diff_report(differences: Vec<Difference>, cells: Vec<CellDiff>) -> DiffReport {
    let mut r = DiffReport {
        schema: crate::SCHEMA.into(),
        a: origin_of("a", true),
        b: origin_of("b", false),
        criteria: crate::model::diff::Criteria {
            alpha: 0.05,
            threshold_pct: 5.0,
            resamples: 1000,
            seed: 42,
        },
        differences,
        cells,
        notes: vec![],
        summary: Default::default(),
    };
    r.summarise();
    r
}

/// The one-line answer of a diff: "equal" alone when nothing was
/// compared, otherwise the differences and the counts of the verdicts
/// that occur, none that do not.
#[test]
fn a_diff_s_answer_names_what_differs_and_only_the_verdicts_seen() {
    assert_eq!(summary_line(&diff_report(vec![], vec![])), "equal");
    let same = vec![cell(80.0, Verdict::Unchanged, Some(0.5))];
    assert_eq!(
        summary_line(&diff_report(vec![], same)),
        "equal: cells: 1 unchanged"
    );
    let mem = Difference::new(Section::Memory, "node 1: memory", "96 GiB", "64 GiB");
    let cells = vec![
        cell(80.0, Verdict::Worse, Some(0.0004)),
        cell(80.0, Verdict::Unchanged, Some(0.5)),
        cell(80.0, Verdict::Unchanged, Some(0.5)),
    ];
    assert_eq!(
        summary_line(&diff_report(vec![mem.clone()], cells)),
        "different: 1 topology/firmware/parameter difference; cells: 1 worse, 2 unchanged"
    );
    assert_eq!(
        summary_line(&diff_report(vec![mem.clone(), mem], vec![])),
        "different: 2 topology/firmware/parameter differences"
    );
}

/// What a diff shows of each side and each cell: where the sides came
/// from (a partial one said so), the criteria only when cells were
/// compared, medians to four significant places, the change, its
/// interval, the p-value (below 0.001 as "<0.001") and the verdict.
#[test]
fn a_diff_shows_each_side_and_each_cell_with_its_verdict() {
    let mem = Difference::new(Section::Memory, "node 1: memory", "96 GiB", "64 GiB");
    let cells = vec![
        cell(123.456, Verdict::Worse, Some(0.0004)),
        cell(12.5, Verdict::Unchanged, Some(0.001)),
        CellDiff {
            ci_low_pct: None,
            p_value: None,
            b: None,
            reason: Some("failed in B".into()),
            notes: vec!["flagged".into()],
            ..cell(40.0, Verdict::OnlyA, None)
        },
    ];
    let mut r = diff_report(vec![mem], cells);
    r.notes = vec!["host names differ".into()];
    let text = diff(&r, Format::Table);
    assert!(
        text.starts_with(
            "A: a (report: run.json, latency.json; host h1; kernel 6.1; 2026-11-27T20:01:02Z)\n\
             B: b (report: run.json, latency.json; host h1; kernel 6.1; 2026-11-27T20:01:02Z; partial)\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("p < 0.05 and the medians differ by more than 5 %"),
        "{text}"
    );
    assert!(text.contains("seed 0x2a"), "{text}");
    assert!(text.contains("\nDifferences (1)\n"), "{text}");
    assert!(
        text.contains("memory   node 1: memory  96 GiB  64 GiB"),
        "{text}"
    );
    assert!(text.contains("\nCells\n"), "{text}");
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("latency")).collect();
    assert_eq!(rows.len(), 3, "{text}");
    for (row, words) in rows.iter().zip([
        [
            "123.5 ns (n=5)",
            "185.2 ns (n=5)",
            "+50.0 %",
            "-1.0 .. +3.0 %",
            "<0.001",
            "worse",
        ],
        [
            "12.50 ns (n=5)",
            "18.75 ns (n=5)",
            "+50.0 %",
            "-1.0 .. +3.0 %",
            "0.001",
            "unchanged",
        ],
        [
            "40.00 ns (n=5)",
            "-",
            "+50.0 %",
            "-",
            "only_a",
            "failed in B; flagged",
        ],
    ]) {
        for w in words {
            assert!(row.contains(w), "{w:?} not in {row:?}");
        }
    }
    assert!(!rows[1].contains("<0.001"), "{}", rows[1]);
    assert!(text.ends_with("\nnote: host names differ\n\ndifferent: 1 topology/firmware/parameter difference; cells: 1 worse, 1 only in A, 1 unchanged\n"), "{text}");

    // Nothing compared: no criteria, no empty headings, no stray blank lines.
    let mut bare = diff_report(vec![], vec![]);
    bare.a.complete = true;
    bare.b.complete = true;
    let text = diff(&bare, Format::Table);
    for absent in [
        "Mann-Whitney",
        "Differences",
        "Cells",
        "note:",
        "partial",
        "\n\n\n",
    ] {
        assert!(!text.contains(absent), "{absent:?} in {text:?}");
    }
    assert!(text.ends_with("\n\nequal\n"), "{text:?}");
    let md = diff(&bare, Format::Markdown);
    for absent in ["## Differences", "## Cells", "## Notes"] {
        assert!(!md.contains(absent), "{absent:?} in {md}");
    }
    assert!(md.contains("**equal**"), "{md}");

    let md = diff(&r, Format::Markdown);
    assert!(md.starts_with("# numaprobe diff\n\n- A: a (report"), "{md}");
    for present in [
        "## Differences",
        "| memory | node 1: memory | 96 GiB | 64 GiB |",
        "## Cells",
        "| worse |",
        "## Notes\n\n- host names differ\n",
        "**different: 1 topology",
    ] {
        assert!(md.contains(present), "{present:?} not in {md}");
    }

    let csv = diff(&r, Format::Csv);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 5, "{csv}");
    assert!(lines[0].starts_with("row,section,item,a,b,kind,"), "{csv}");
    assert!(
        lines[1].starts_with("difference,memory,node 1: memory,96 GiB,64 GiB,"),
        "{csv}"
    );
    assert!(
        lines[2].starts_with("cell,,,,,latency,0,1,ns,123.456,"),
        "{csv}"
    );
    assert!(lines[2].ends_with(",0.0004,worse,"), "{csv}");
    assert!(lines[4].ends_with(",,only_a,failed in B"), "{csv}");

    let json = diff(&r, Format::Json);
    let back: DiffReport = serde_json::from_str(&json).unwrap();
    assert_eq!(back.summary, r.summary);
    assert_eq!(back.differences, r.differences);
    assert_eq!(back.cells.len(), 3);
}

/// A check's answer names the machine, the saved file and its kind,
/// and how many differences it found.
#[test]
fn a_check_s_answer_says_whether_the_machine_matches_and_how_far_not() {
    let mem = Difference::new(Section::Memory, "node 1: memory", "96 GiB", "64 GiB");
    let cpus = Difference::new(Section::Allowed, "allowed CPUs", "0-1", "0");
    assert_eq!(
        check_summary(&report(vec![])),
        "this machine matches t.json (topo)"
    );
    assert_eq!(
        check_summary(&report(vec![mem.clone()])),
        "this machine differs from t.json (topo): 1 difference"
    );
    let mut nothing = report(vec![]);
    nothing.checked.clear();
    nothing.notes = vec!["bandwidth not compared: measured with other parameters".into()];
    assert_eq!(
        check_summary(&nothing),
        "nothing of this machine was compared with t.json (topo); the notes say why"
    );
    assert!(check(&nothing, Format::Table).ends_with("\nchecked: nothing\n"));
    // Left out by the user (`--only`, `--skip`): no note to point to.
    nothing.notes.clear();
    assert_eq!(
        check_summary(&nothing),
        "nothing of this machine was compared with t.json (topo)"
    );
    let mut r = report(vec![mem, cpus]);
    r.checked = vec!["memory".into(), "allowed CPUs".into()];
    assert_eq!(
        check_summary(&r),
        "this machine differs from t.json (topo): 2 differences"
    );
    assert_eq!(
        check(&r, Format::Table),
        "memory: node 1: memory: expected 96 GiB, found 64 GiB\n\
         allowed: allowed CPUs: expected 0-1, found 0\n\
         this machine differs from t.json (topo): 2 differences\n\
         checked: memory; allowed CPUs\n"
    );
    let md = check(&r, Format::Markdown);
    assert!(
        md.starts_with(
            "# numaprobe check\n\n**this machine differs from t.json (topo): 2 differences**\n\n\
             Checked:\n\n- memory\n- allowed CPUs\n\n## Differences\n\n"
        ),
        "{md}"
    );
    assert!(md.contains("| allowed | allowed CPUs | 0-1 | 0 |"), "{md}");
    assert!(!check(&report(vec![]), Format::Markdown).contains("## Differences"));
    // What was not compared is on the Markdown page, a line each.
    assert!(!md.contains("## Notes"), "{md}");
    let mut noted = report(vec![]);
    noted.notes = vec![
        "bandwidth not compared: measured with other parameters (threads: expected 2, found 1)"
            .into(),
    ];
    assert!(
        check(&noted, Format::Markdown).ends_with(
            "\n## Notes\n\n- bandwidth not compared: measured with other parameters (threads: expected 2, found 1)\n"
        )
    );
    assert_eq!(
        check(&r, Format::Csv),
        "section,item,expected,found\nmemory,node 1: memory,96 GiB,64 GiB\nallowed,allowed CPUs,0-1,0\n"
    );
    let back: CheckReport = serde_json::from_str(&check(&r, Format::Json)).unwrap();
    assert_eq!(back.differences, r.differences);
}

/// The answer names what was held against the saved file: a dump by the
/// folder given, the measured document alone when only cells were
/// compared, this machine with it when the machine was read too.
#[test]
fn a_check_s_answer_names_the_dump_or_the_measured_document() {
    let mut r = report(vec![]);
    r.root = "dumps/half".into();
    assert_eq!(check_summary(&r), "dumps/half matches t.json (topo)");
    r.root = "/".into();
    r.measured = Some("b.json".into());
    r.sections = vec![Section::Memory, Section::Latency];
    assert_eq!(
        check_summary(&r),
        "this machine (measured: b.json) matches t.json (topo)"
    );
    r.sections = vec![Section::Latency, Section::Bandwidth];
    assert_eq!(check_summary(&r), "b.json matches t.json (topo)");
    r.sections = vec![Section::Memory];
    r.expect_kind = "latency".into();
    assert_eq!(check_summary(&r), "b.json matches t.json (latency)");
    r.expect_kind = "bandwidth".into();
    assert_eq!(check_summary(&r), "b.json matches t.json (bandwidth)");
    r.expect_kind = "report".into();
    r.sections = vec![];
    assert_eq!(
        check_summary(&r),
        "this machine (measured: b.json) matches t.json (report)"
    );
    let json = check(&r, Format::Json);
    let back: CheckReport = serde_json::from_str(&json).unwrap();
    assert_eq!(back.measured.as_deref(), Some("b.json"));
    // Without measurements the field is left out, and older documents
    // without it still read.
    r.measured = None;
    let json = check(&r, Format::Json);
    assert!(!json.contains("\"measured\""), "{json}");
    let back: CheckReport = serde_json::from_str(&json).unwrap();
    assert_eq!(back.measured, None);
}
