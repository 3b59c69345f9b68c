//! Tests of the HTML report: the page parses as XML (XHTML-compatible),
//! every section is there, figures appear in it, text from documents is
//! escaped, and a 64-node matrix and a 256-CPU machine stay inside their
//! sections (the real 256-CPU dump is read in `tests/report_html.rs`).

use super::*;
use crate::model::matrix::tests::{cell, sample};
use crate::model::matrix::MatrixKind;
use crate::model::provenance::Budget;
use crate::model::ranking::{Better, RankEntry};
use crate::topology::testing::{build, CpuSpec};

#[path = "sections_tests.rs"]
mod sections;

#[path = "flags_tests.rs"]
mod flags;

fn provenance(host: &str) -> Provenance {
    Provenance {
        version: "0.1.0".into(),
        command_line: vec!["numaprobe".into(), "run".into(), "--label=<x>".into()],
        hostname: host.into(),
        cpu_model: "Test CPU".into(),
        kernel: "6.1.0".into(),
        platform: crate::platform::Platform::default(),
        start: "2026-11-23T10:00:00Z".into(),
        end: "2026-11-23T10:01:00Z".into(),
        budget: Some(Budget {
            option: "--budget".into(),
            seconds: 60.0,
        }),
        complete: true,
        footprint: None,
        system_check: None,
    }
}

/// Two packages of two cores with two threads each, one node per package,
/// SMT siblings numbered far apart.
fn topology() -> Topology {
    let mut cpus = Vec::new();
    for pkg in 0..2i64 {
        for core in 0..2i64 {
            let first = (pkg * 2 + core) as u32;
            cpus.push(CpuSpec::new(first, pkg, core, pkg as u32));
            cpus.push(CpuSpec::new(first + 4, pkg, core, pkg as u32));
        }
    }
    build("/", &cpus, &[], Some(vec![vec![10, 21], vec![21, 10]]))
}

fn ranking() -> Ranking {
    let e = |label: &str, median: f64, ranked: bool| RankEntry {
        label: label.into(),
        median,
        min: median * 0.9,
        max: median * 1.2,
        samples: 5,
        note: (!ranked).then(|| "needs Linux 6.9".to_string()),
        ranked,
        flags: Vec::new(),
    };
    Ranking {
        title: "Placement policies".into(),
        unit: "s".into(),
        better: Better::Lower,
        entries: vec![
            e("interleave", 2.5, true),
            e("bind", 1.25, true),
            e("weighted", 0.0, false),
        ],
    }
}

fn inference() -> Inference {
    let doc = r#"{"unit": "ns", "matrix": [[90, 140], [141, 91]]}"#;
    crate::analysis::analyse_with_advice(&crate::analysis::parse(doc, None).unwrap())
}

fn full_input() -> ReportInput {
    let mut m = sample();
    m.kind = MatrixKind::Latency;
    ReportInput {
        title: "rep".into(),
        provenance: vec![Doc::new("run.json", provenance("node-a"))],
        topology: Some(Doc::new("topo.json", topology())),
        matrices: vec![Doc::new("latency.json", m)],
        inferences: vec![Doc::new("infer-latency.json", inference())],
        studies: vec![Doc::new(
            "study.json",
            crate::model::study::tests::sample_report(),
        )],
        rankings: vec![Doc::new("policy.json", ranking())],
        locks: vec![Doc::new(
            "locks.json",
            crate::render::locks::tests::sample(),
        )],
        loaded: vec![Doc::new(
            "loaded-latency.json",
            crate::render::loaded::tests::doc(),
        )],
        sweeps: vec![Doc::new(
            "sweep.json",
            crate::render::sweep::tests::sample(),
        )],
        bindings: Vec::new(),
        c2c: Vec::new(),
        peaks: vec![Doc::new("peak.json", peak())],
        notes: vec!["a note".into()],
        complete: true,
        run_status: None,
        files: vec!["graph-latency.svg".into(), "odd#name?.md".into()],
    }
}

/// A measured peak with the mixed-DIMM fixture's population: every table of
/// the peak section, and names with characters to escape.
fn peak() -> crate::model::peak::PeakResult {
    let text = include_str!("../../../../../tests/fixtures/smbios/mixed-hpe.txt");
    let mem = crate::smbios::from_dmidecode(text, "mixed-hpe.txt").unwrap();
    let mut r = crate::experiments::peak::memory_only(Default::default());
    r.system.push(crate::model::peak::SystemPeak {
        flagged: false,
        set_aside: Default::default(),
        mix: "read".into(),
        threads: 2,
        gbs: 80.0,
        placement: 1.0,
        samples: 5,
        cv: 0.01,
        sum_of_nodes_alone_gbs: Some(90.0),
        flags: vec![],
    });
    r.nodes.push(crate::model::peak::NodePeak {
        flagged: false,
        set_aside: Default::default(),
        node: 0,
        mix: "read".into(),
        threads: 2,
        gbs: 45.0,
        concurrent: false,
        cpus: vec![0, 1],
        placement: 1.0,
        cv: 0.01,
        flags: vec!["<&>".into()],
    });
    crate::experiments::peak::set_memory(&mut r, mem);
    r
}

fn parse(page: &str) -> roxmltree::Document<'_> {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    roxmltree::Document::parse_with_options(page, opts).expect("the page is well-formed XML")
}

fn section<'a, 'i>(doc: &'a roxmltree::Document<'i>, id: &str) -> roxmltree::Node<'a, 'i> {
    doc.descendants()
        .find(|n| n.has_tag_name("section") && n.attribute("id") == Some(id))
        .unwrap_or_else(|| panic!("section {id} missing"))
}

fn text_of(n: roxmltree::Node) -> String {
    n.descendants()
        .filter(|d| d.is_text())
        .filter_map(|d| d.text())
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn page_is_well_formed_with_every_section_and_no_script_or_remote_resource() {
    let page = render(&full_input());
    let doc = parse(&page);
    for (id, heading, _) in SECTIONS {
        let s = section(&doc, id);
        let h2 = s.children().find(|n| n.has_tag_name("h2")).unwrap();
        assert_eq!(h2.text(), Some(heading));
    }
    assert!(doc.descendants().all(|n| !n.has_tag_name("script")));
    for n in doc.descendants().filter(|n| n.is_element()) {
        for a in n.attributes() {
            let v = a.value();
            assert!(
                !(v.contains("http:") || v.contains("https:") || v.starts_with("//")),
                "remote reference {}={v}",
                a.name()
            );
        }
        assert!(
            n.attribute("src").is_none(),
            "nothing is loaded from elsewhere"
        );
    }
    // Each picture is inline SVG.
    for id in ["topology", "interconnect", "study", "rankings"] {
        assert!(
            section(&doc, id)
                .descendants()
                .any(|n| n.has_tag_name("svg")),
            "{id} has no picture"
        );
    }
}

#[test]
fn figures_appear_in_their_sections() {
    let page = render(&full_input());
    let doc = parse(&page);
    let machine = text_of(section(&doc, "machine"));
    for want in [
        "node-a",
        "Test CPU",
        "6.1.0",
        "--budget 60\u{a0}s",
        "a note",
    ] {
        assert!(machine.contains(want), "{want} not in {machine}");
    }
    let topo = text_of(section(&doc, "topology"));
    for cpu in 0..8 {
        // Every CPU number is drawn in its own box.
        assert!(
            section(&doc, "topology")
                .descendants()
                .any(|n| n.has_tag_name("text") && n.text() == Some(&cpu.to_string())),
            "CPU {cpu} not drawn"
        );
    }
    assert!(
        topo.contains("Package 0") && topo.contains("Node 1"),
        "{topo}"
    );
    let heat = section(&doc, "matrices");
    let cells: Vec<String> = heat
        .descendants()
        .filter(|n| n.has_tag_name("td"))
        .map(text_of)
        .collect();
    assert!(cells.iter().any(|c| c == "90.00"), "{cells:?}");
    // Cell 0->1 has half its pages elsewhere: flagged in the cell and below.
    assert!(cells.iter().any(|c| c == "140.2* \u{2691}"), "{cells:?}");
    let flagged: Vec<_> = heat
        .descendants()
        .filter(|n| n.has_tag_name("td") && n.attribute("class") == Some("flag none"))
        .collect();
    assert_eq!(flagged.len(), 1);
    // Hatched and neutral: never a colour of the good-to-bad scale.
    assert_eq!(flagged[0].attribute("style"), None);
    assert!(text_of(heat).contains("placement 50.0\u{a0}% on the intended node"));
    // Unmeasured cells say so.
    assert!(cells.iter().any(|c| c == "\u{b7}"));
    let levels = text_of(section(&doc, "interconnect"));
    assert!(
        levels.contains("local") && levels.contains("remote"),
        "{levels}"
    );
    let rankings = text_of(section(&doc, "rankings"));
    assert!(rankings.contains("1.250 s") && rankings.contains("needs Linux 6.9"));
    let findings = text_of(section(&doc, "findings"));
    assert!(findings.contains("Advice"), "{findings}");
    // Links to the files beside the page stay relative, odd names encoded.
    let hrefs: Vec<&str> = section(&doc, "binding")
        .descendants()
        .filter_map(|n| n.attribute("href"))
        .collect();
    assert_eq!(hrefs, ["./graph-latency.svg", "./odd%23name%3F.md"]);
}

#[test]
fn text_from_documents_is_escaped() {
    let mut input = full_input();
    let evil = "<script>alert(1)</script>&\"'";
    input.title = evil.into();
    input.provenance[0].value.hostname = evil.into();
    input.notes = vec![evil.into()];
    input.rankings[0].value.entries[0].label = evil.into();
    input.rankings[0].value.title = evil.into();
    if let Some(t) = &mut input.topology {
        t.value.cpu_model = Some(evil.into());
        t.value.warnings = vec![evil.into()];
    }
    input.files = vec![evil.into()];
    let page = render(&input);
    assert!(!page.contains("<script"), "markup got through");
    let doc = parse(&page);
    assert!(doc.descendants().all(|n| !n.has_tag_name("script")));
    // The text survives as text.
    let all = text_of(doc.root());
    assert!(all.matches(evil).count() >= 6, "{all}");
}

/// A folder with nothing but a topology: the sections without data are
/// one line naming them (each name keeps its section's id, so links land),
/// not a stack of boxes each saying it is empty; the how-to is folded.
#[test]
fn sections_without_data_collapse_into_one_line() {
    let input = ReportInput {
        topology: Some(Doc::new("topo.json", topology())),
        complete: true,
        ..ReportInput::default()
    };
    let page = render(&input);
    let doc = parse(&page);
    let sections: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("section"))
        .filter_map(|n| n.attribute("id"))
        .collect();
    // The SLIT of the topology is a matrix; the machine section always
    // says what it knows.
    assert_eq!(sections, ["machine", "topology", "matrices"]);
    let absent = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("absent"))
        .expect("the line naming what is absent");
    let line = absent.children().find(|n| n.has_tag_name("p")).unwrap();
    let named: Vec<&str> = line
        .children()
        .filter(|n| n.has_tag_name("span"))
        .filter_map(|n| n.attribute("id"))
        .collect();
    assert_eq!(
        named,
        [
            "peak",
            "interconnect",
            "findings",
            "study",
            "locks",
            "loaded",
            "sweep",
            "rankings",
            "binding"
        ]
    );
    let text = text_of(line);
    assert!(text.starts_with("Nothing in this folder for:"), "{text}");
    assert!(text.contains("Cache-size sweep"), "{text}");
    let details = absent
        .children()
        .find(|n| n.has_tag_name("details"))
        .unwrap();
    assert_eq!(details.attribute("open"), None, "the how-to is folded");
    assert!(text_of(details).contains("numaprobe study --output DIR/study.json"));
    // The bar links only to sections that are drawn.
    let nav = &page[page.find("<nav>").unwrap()..page.find("</nav>").unwrap()];
    assert_eq!(nav.matches("<a ").count(), 3, "{nav}");
    assert!(!page.contains("partial"), "nothing says it is partial");
    // A full folder has no such line.
    assert!(!render(&full_input()).contains("id=\"absent\""));
    // A document that says it is partial, without a run.json: the banner.
    let page = render(&ReportInput {
        complete: false,
        ..input
    });
    assert!(page.contains("<p class=\"warn\" id=\"status\">This report holds a partial result"));
}

#[test]
fn a_heatmap_of_one_flagged_cell_is_hatched_neutral_without_best_or_worst() {
    // The trial's 446.2 ns idle latency, starred: one cell, flagged.
    let mut input = full_input();
    let m = &mut input.matrices[0].value;
    let mut c = m.cells[0].clone();
    c.median = 446.2;
    c.flagged = true;
    c.flags = vec!["unstable: CV 41.7 %".into()];
    m.cells = vec![c];
    let page = render(&input);
    let doc = parse(&page);
    let heat = section(&doc, "matrices");
    let text = text_of(heat);
    assert!(
        !text.contains("best 446") && !text.contains("worst 446"),
        "{text}"
    );
    assert!(text.contains("colour: none"), "{text}");
    assert!(text.contains("unstable: CV 41.7\u{a0}%"), "{text}");
    // The heading states the buffer the figure was chased over.
    let bytes = input.matrices[0].value.cells[0].params.size_bytes;
    let size = crate::units::format_size(bytes).replace(' ', "\u{a0}");
    assert!(
        text.contains(&format!("Idle latency (ns), {size}\u{a0}buffer, median")),
        "{text}"
    );
    let tds: Vec<_> = heat
        .descendants()
        .filter(|n| n.has_tag_name("td") && n.attribute("class") == Some("flag none"))
        .collect();
    assert_eq!(tds.len(), 1);
    assert_eq!(tds[0].attribute("style"), None);
    assert!(text_of(tds[0]).starts_with("446.2*"), "{}", text_of(tds[0]));
    // A single trusted cell is neutral too: no scale to place it on.
    input.matrices[0].value.cells[0].flagged = false;
    input.matrices[0].value.cells[0].flags.clear();
    let page = render(&input);
    let doc = parse(&page);
    let heat = section(&doc, "matrices");
    assert!(!text_of(heat).contains("best 446"));
    let cell = heat
        .descendants()
        .find(|n| n.has_tag_name("td") && text_of(*n).starts_with("446.2"))
        .unwrap();
    assert_eq!(cell.attribute("style"), None);
}

#[test]
fn a_flagged_ranking_entry_is_listed_with_its_reason() {
    let mut input = full_input();
    input.rankings[0].value.entries[1].flags = vec!["unstable: CV 31.0 %".into()];
    let page = render(&input);
    let doc = parse(&page);
    let rankings = text_of(section(&doc, "rankings"));
    assert!(
        rankings.contains("bind*: unstable: CV 31.0\u{a0}%"),
        "{rankings}"
    );
    assert!(rankings.contains("1.250* s"), "{rankings}");
    assert!(!rankings.contains("interleave*"), "{rankings}");
}
