//! `numaprobe report DIR` and the report.html that `numaprobe run` writes,
//! as a user meets them: the page of a 64-node, 256-CPU machine's dump
//! (every section, every CPU number, the 64x64 SLIT as a scrolling
//! heatmap), rebuilding after adding a document with rankings, the
//! manifest, and one-line errors for a folder that is not a report.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use cli::{numaprobe_in as numaprobe, ok, usage_error};
use common::TempDir;

/// Sections a run on a dump has data for; the others are named on one line.
const SECTIONS: [&str; 6] = [
    "machine",
    "topology",
    "matrices",
    "interconnect",
    "findings",
    "binding",
];

fn parse(page: &str) -> roxmltree::Document<'_> {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    roxmltree::Document::parse_with_options(page, opts).expect("report.html is well-formed")
}

fn section<'a, 'i>(doc: &'a roxmltree::Document<'i>, id: &str) -> roxmltree::Node<'a, 'i> {
    doc.descendants()
        .find(|n| n.has_tag_name("section") && n.attribute("id") == Some(id))
        .unwrap_or_else(|| panic!("section {id} missing"))
}

#[test]
fn a_run_on_a_256_cpu_dump_writes_a_page_that_shows_all_of_it() {
    let u = common::unpack("256ia64-64n2s2c");
    let root = u.root.to_str().unwrap();
    ok(&numaprobe(
        &["run", "--sysfs-root", root, "--report-dir", "r"],
        u.tmp.path(),
    ));
    let dir = u.tmp.path().join("r");
    let page = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let manifest = std::fs::read_to_string(dir.join(".numaprobe-manifest")).unwrap();
    assert!(manifest.lines().any(|l| l == "report.html"), "{manifest}");
    let doc = parse(&page);
    for id in SECTIONS {
        section(&doc, id);
    }
    // Nothing was measured on another machine's dump: no empty boxes, one
    // line naming what is absent.
    let absent = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("absent"))
        .expect("the line naming what is absent");
    for id in ["study", "rankings", "locks", "loaded", "sweep"] {
        assert!(
            absent.descendants().any(|n| n.attribute("id") == Some(id)),
            "{id} is not named"
        );
    }
    // 64 nodes: no interconnect picture, and the page says why in a line.
    let inter = section(&doc, "interconnect");
    assert!(!inter.descendants().any(|n| n.has_tag_name("svg")));
    assert!(page.contains("64 nodes and"), "the reason is given");
    // Every CPU number is drawn in the topology picture, which scrolls
    // inside its section.
    let topo = section(&doc, "topology");
    let svg = topo
        .descendants()
        .find(|n| n.has_tag_name("svg"))
        .expect("a topology picture");
    assert!(svg
        .parent()
        .unwrap()
        .attribute("class")
        .unwrap()
        .contains("scroll"));
    let numbers: std::collections::BTreeSet<u32> = svg
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text()?.parse().ok())
        .collect();
    assert!(
        (0..256).all(|c| numbers.contains(&c)),
        "CPU numbers missing"
    );
    // 64 nodes of this machine, 2 packages in each.
    let titles: Vec<&str> = svg
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .collect();
    assert_eq!(titles.iter().filter(|t| t.starts_with("Node ")).count(), 64);
    assert_eq!(
        titles.iter().filter(|t| t.starts_with("Package ")).count(),
        128
    );
    // The 64x64 SLIT as a compact heatmap in a scrolling box.
    let heat = section(&doc, "matrices")
        .descendants()
        .find(|n| n.has_tag_name("table"))
        .unwrap();
    assert_eq!(heat.attribute("class"), Some("heat compact"));
    assert_eq!(heat.parent().unwrap().attribute("class"), Some("scroll"));
    assert_eq!(
        heat.descendants().filter(|n| n.has_tag_name("td")).count(),
        64 * 64
    );
    // summary.md links the page; 64 nodes are past the interconnect
    // picture's limit, so no graph is written or linked.
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("(report.html)"), "{summary}");
    assert!(!summary.contains("(graph-latency.svg)"), "{summary}");
    assert!(!dir.join("graph-latency.svg").exists());
    assert!(!dir.join("graph-latency.png").exists());
}

#[test]
fn report_rebuilds_the_page_with_what_was_added_to_the_folder() {
    let u = common::unpack("8amd64-4n2c");
    let root = u.root.to_str().unwrap();
    ok(&numaprobe(
        &["run", "--sysfs-root", root, "--report-dir", "r"],
        u.tmp.path(),
    ));
    let dir = u.tmp.path().join("r");
    let before = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(!before.contains("class=\"ranking\""));
    let rankings = serde_json::json!({
        "schema": "numaprobe/1",
        "rankings": [{
            "title": "policy <compare>", "unit": "GB/s", "better": "higher",
            "entries": [
                {"label": "interleave", "median": 30.5, "min": 29.0, "max": 31.0,
                 "samples": 5, "note": null, "ranked": true},
                {"label": "bind 0", "median": 12.25, "min": 12.0, "max": 13.0,
                 "samples": 5, "note": null, "ranked": true}
            ]
        }]
    });
    std::fs::write(dir.join("policy.json"), rankings.to_string()).unwrap();
    let o = numaprobe(&["report", "r"], u.tmp.path());
    ok(&o);
    let page = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let doc = parse(&page);
    let texts: Vec<&str> = section(&doc, "rankings")
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .collect();
    // Best first for a higher-is-better figure.
    let first = texts.iter().position(|t| *t == "interleave").unwrap();
    let second = texts.iter().position(|t| *t == "bind 0").unwrap();
    assert!(first < second, "{texts:?}");
    assert!(page.contains("policy &lt;compare&gt;"));
    // --output elsewhere leaves the folder's page alone.
    ok(&numaprobe(
        &["report", "r", "--output", "copy.html"],
        u.tmp.path(),
    ));
    assert_eq!(
        std::fs::read_to_string(u.tmp.path().join("copy.html")).unwrap(),
        page
    );
    // The next run removes the page with the rest of the last run's files.
    ok(&numaprobe(
        &[
            "run",
            "--sysfs-root",
            root,
            "--report-dir",
            "r",
            "--no-measure",
        ],
        u.tmp.path(),
    ));
    assert!(
        dir.join("report.html").exists(),
        "the new run writes its own"
    );
    assert!(
        dir.join("policy.json").exists(),
        "not numaprobe's to remove"
    );
}

#[test]
fn a_folder_that_is_not_a_report_is_a_one_line_error() {
    let t = TempDir::new("report-errors");
    let err = usage_error(&numaprobe(&["report", "missing"], t.path()));
    assert!(
        err.contains("missing") && err.contains("no such file or folder"),
        "{err}"
    );
    std::fs::create_dir(t.path().join("empty")).unwrap();
    let err = usage_error(&numaprobe(&["report", "empty"], t.path()));
    assert!(err.contains("no numaprobe JSON document"), "{err}");
    // Someone else's JSON does not make a report either.
    std::fs::write(t.path().join("empty/other.json"), "{\"a\": 1}").unwrap();
    let err = usage_error(&numaprobe(&["report", "empty"], t.path()));
    assert!(err.contains("no numaprobe JSON document"), "{err}");
    assert!(!t.path().join("empty/report.html").exists());
    // A file is read as one document: something else is named as such.
    std::fs::write(t.path().join("file"), "x").unwrap();
    let err = usage_error(&numaprobe(&["report", "file"], t.path()));
    assert!(err.contains("file: not JSON"), "{err}");
    assert!(!t.path().join("file.html").exists());
    // A numaprobe document that does not parse is named.
    std::fs::write(
        t.path().join("empty/bad.json"),
        "{\"schema\": \"numaprobe/1\", \"rankings\": [{\"title\": 3}]}",
    )
    .unwrap();
    let err = usage_error(&numaprobe(&["report", "empty"], t.path()));
    assert!(err.contains("bad.json"), "{err}");
}
