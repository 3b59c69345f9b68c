//! Tests of the HTML report's drawings and sections, on the fixtures of
//! `tests.rs`: a 64-node matrix and interconnect, memory-only nodes and PCI
//! devices, the loaded and sweep curves, the banner, the peak sentence and
//! how words wrap.

use super::*;

#[test]
fn a_64_node_matrix_scrolls_inside_its_section_with_every_value() {
    let nodes: Vec<u32> = (0..64).collect();
    let mut m = crate::model::matrix::MatrixResult::new(
        MatrixKind::Bandwidth,
        nodes.clone(),
        nodes.clone(),
        crate::stats::StopRule::default(),
        sample().timer,
    );
    for &r in &nodes {
        for &c in &nodes {
            m.push(cell(r, c, 10.0 + (r as f64) + (c as f64) / 100.0, 1.0));
        }
    }
    let input = ReportInput {
        matrices: vec![Doc::new("bandwidth.json", m)],
        ..full_input()
    };
    let page = render(&input);
    let doc = parse(&page);
    let table = section(&doc, "matrices")
        .descendants()
        .find(|n| n.has_tag_name("table"))
        .unwrap();
    assert_eq!(table.attribute("class"), Some("heat compact"));
    assert_eq!(table.parent().unwrap().attribute("class"), Some("scroll"));
    let cells: Vec<String> = table
        .descendants()
        .filter(|n| n.has_tag_name("td"))
        .map(text_of)
        .collect();
    assert_eq!(cells.len(), 64 * 64);
    assert!(cells.contains(&"73.63".to_string()), "cell 63->63");
    // Higher is better for bandwidth: the largest value is the green end.
    let best = table
        .descendants()
        .find(|n| n.has_tag_name("td") && text_of(*n) == "73.63")
        .unwrap();
    assert!(best.attribute("style").unwrap().contains("hsl(130,"));
}

#[test]
fn memory_only_nodes_and_pci_devices_are_drawn_in_their_node() {
    use crate::topology::testing::NodeSpec;
    use crate::topology::PciDevice;
    let cpus = [CpuSpec::new(0, 0, 0, 0), CpuSpec::new(1, 0, 1, 0)];
    let nodes = [
        NodeSpec {
            os_index: 0,
            memory_bytes: 8 << 30,
            free_bytes: 4 << 30,
            allowed: true,
        },
        NodeSpec {
            os_index: 3,
            memory_bytes: 16 << 30,
            free_bytes: 16 << 30,
            allowed: true,
        },
    ];
    let mut t = build("/", &cpus, &nodes, None);
    let dev = |address: &str, node: Option<u32>| PciDevice {
        address: address.into(),
        kind: "network".into(),
        class: "0x020000".into(),
        vendor: Some("0x8086".into()),
        device: Some("0x1521".into()),
        numa_node: node,
    };
    t.pci_devices = vec![dev("0000:3b:00.0", Some(0)), dev("0000:5e:00.0", None)];
    let input = ReportInput {
        topology: Some(Doc::new("topo.json", t)),
        ..ReportInput::default()
    };
    let page = render(&input);
    let doc = parse(&page);
    let texts: Vec<&str> = section(&doc, "topology")
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .collect();
    assert!(texts.contains(&"Node 3 \u{b7} 16 GiB"), "{texts:?}");
    assert!(texts.contains(&"memory only (no CPUs)"), "{texts:?}");
    assert!(texts.contains(&"PCI network 0000:3b:00.0"), "{texts:?}");
    assert!(
        texts.contains(&"1 PCI device without node locality (table below)"),
        "{texts:?}"
    );
    // The table lists both, with the node or `unknown`.
    let cells: Vec<String> = section(&doc, "topology")
        .descendants()
        .filter(|n| n.has_tag_name("td"))
        .map(text_of)
        .collect();
    assert!(cells.contains(&"unknown".to_string()), "{cells:?}");
}

#[test]
fn the_loaded_section_draws_the_curve_with_its_knee() {
    let page = render(&full_input());
    let doc = parse(&page);
    let s = section(&doc, "loaded");
    assert!(s.descendants().any(|n| n.has_tag_name("svg")));
    let text = text_of(s);
    assert!(text.contains("CPU node 0 -> memory node 0, read"), "{text}");
    assert!(text.contains("knee at delay 0"), "{text}");
    assert!(text.contains("loaded-latency.json"), "{text}");
}

#[test]
fn the_sweep_section_draws_the_curve_and_says_what_matched() {
    let page = render(&full_input());
    let doc = parse(&page);
    let s = section(&doc, "sweep");
    assert!(s.descendants().any(|n| n.has_tag_name("svg")));
    assert!(s.descendants().any(|n| n.has_tag_name("table")));
    let text = text_of(s);
    assert!(text.contains("CPU 1 (node 0) -> memory node 0"), "{text}");
    assert!(text.contains("plateaus"), "{text}");
    assert!(text.contains("sweep.json"), "{text}");
    // Without a sweep the absent line says how to add one.
    let empty = render(&ReportInput::default());
    let doc = parse(&empty);
    let absent = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("absent"))
        .unwrap();
    assert!(absent
        .descendants()
        .any(|n| n.attribute("id") == Some("sweep")));
    assert!(text_of(absent).contains("latency --sweep"));
}

#[test]
fn the_section_bar_can_wrap_between_links() {
    // Every link is nowrap; without whitespace between them the bar is one
    // unbreakable run, and with twelve sections wider than a laptop window.
    let page = render(&full_input());
    let nav = &page[page.find("<nav>").unwrap()..page.find("</nav>").unwrap()];
    assert_eq!(nav.matches("<a ").count(), SECTIONS.len());
    assert!(!nav.contains("</a><a"), "{nav}");
}

/// A main job whose sweep spent its share is complete: no banner, and the
/// provenance table says which phase is partial by budget; an interrupted
/// one is incomplete and the banner says what was interrupted.
#[test]
fn the_banner_says_what_run_json_status_says() {
    use crate::model::run_status::{PhaseShortfall, RunStatus, Shortfall};
    let short = |phase: &str, shortfall, reason: &str| PhaseShortfall {
        phase: phase.into(),
        shortfall,
        reason: reason.into(),
    };
    let mut input = full_input();
    // The sweep's own document says it is partial.
    input.complete = false;
    input.run_status = Some(RunStatus::of(vec![short(
        "cache sweep",
        Shortfall::Budget,
        "its share of the budget (0.3 s) was spent after 5 of 21 steps",
    )]));
    let page = render(&input);
    assert!(!page.contains("partial result"));
    assert!(
        !page.contains("id=\"status\""),
        "no banner on a complete run"
    );
    // The provenance table says which phase its budget share cut short.
    assert!(page.contains(
        "ran as far as the budget allowed; cut short by the budget: cache sweep (its share of the \
         budget (0.3&#160;s) was spent after 5 of 21 steps)</td>"
    ));
    input.run_status = Some(RunStatus::of(vec![short(
        "bandwidth",
        Shortfall::Interrupted,
        "cut short <after> 2 of 4 planned cells",
    )]));
    let page = render(&input);
    assert!(page.contains(
        "<p class=\"warn\" id=\"status\">This run is incomplete; stopped by an interruption: bandwidth (cut short &lt;after&gt; \
         2 of 4 planned cells).</p>"
    ));
    // Nothing short of its plan: no banner, and the provenance row says so.
    input.run_status = Some(RunStatus::of(vec![]));
    let page = render(&input);
    assert!(!page.contains("This run is"));
    assert!(page.contains("complete: every phase ran its whole plan"));
}

/// The main job measures the peak without reading SMBIOS: the sentence
/// says so and how to get the figure, never "unknown ( gives no speed".
#[test]
fn a_peak_without_a_memory_population_says_why_in_a_whole_sentence() {
    let mut r = peak();
    r.memory = Default::default();
    let page = render(&ReportInput {
        peaks: vec![Doc::new("peak.json", r)],
        ..full_input()
    });
    let doc = parse(&page);
    let text = text_of(section(&doc, "peak"));
    assert!(
        text.contains(
            "Theoretical DRAM peak: not computed: the memory population (SMBIOS) was not read"
        ),
        "{text}"
    );
    assert!(!text.contains("( gives"), "{text}");
    assert!(page.contains("<code>numaprobe peak --memory-only</code>"));
}

/// Sixty-four nodes: the levels and groups are there, the picture is not,
/// and one line says why.
#[test]
fn a_64_node_interconnect_is_not_drawn_and_the_page_says_why() {
    let n = 64;
    let rows: Vec<String> = (0..n)
        .map(|i| {
            let r: Vec<String> = (0..n)
                .map(|j| {
                    if i == j {
                        "10".to_string()
                    } else if i / 4 == j / 4 {
                        "16".to_string()
                    } else {
                        "22".to_string()
                    }
                })
                .collect();
            format!("[{}]", r.join(","))
        })
        .collect();
    let doc = format!("{{\"unit\": \"slit\", \"matrix\": [{}]}}", rows.join(","));
    let inf = crate::analysis::analyse_with_advice(&crate::analysis::parse(&doc, None).unwrap());
    assert!(crate::render::graph::left_out(&inf).is_some());
    assert!(
        crate::render::graph::left_out(&inference()).is_none(),
        "two nodes are drawn"
    );
    let page = render(&ReportInput {
        inferences: vec![Doc::new("infer-latency.json", inf)],
        ..full_input()
    });
    let doc = parse(&page);
    let s = section(&doc, "interconnect");
    assert!(!s.descendants().any(|n| n.has_tag_name("svg")));
    let text = text_of(s);
    assert!(
        text.contains("No interconnect picture: 64 nodes and"),
        "{text}"
    );
}

/// A word with a hyphen or a slash stays on one line; a plain word needs
/// nothing; a word too long for any column may break anywhere.
#[test]
fn words_keep_hyphens_and_slashes_on_one_line() {
    assert_eq!(
        page::words("numaprobe run --size 64MiB"),
        "numaprobe run <span class=\"nw\">--size</span> 64MiB"
    );
    assert_eq!(
        page::words("2026-11-27T10:00:00Z\tok"),
        "<span class=\"nw\">2026-11-27T10:00:00Z</span>\tok"
    );
    let places = format!("OMP_PLACES=\"{}\"", vec!["{0}"; 20].join(","));
    assert_eq!(
        page::words(&places),
        format!("<span class=\"long\">{places}</span>")
    );
    assert_eq!(page::words(""), "");
    // The limit: LONG_WORD characters stay whole, one more may break. An
    // escaped `&` counts as one character short of its entity's length
    // (the `;` is not counted), near enough for a limit.
    let at = format!("a-{}", "b".repeat(page::LONG_WORD - 2));
    assert_eq!(page::words(&at), format!("<span class=\"nw\">{at}</span>"));
    let past = format!("{at}c");
    assert_eq!(
        page::words(&past),
        format!("<span class=\"long\">{past}</span>")
    );
    let amp = format!("a&amp;{}", "b".repeat(page::LONG_WORD - 5));
    assert_eq!(
        page::words(&amp),
        format!("<span class=\"nw\">{amp}</span>")
    );
}

/// A figure stays on one line with its unit, whatever punctuation follows
/// the unit; a number before a word that is not a unit, and code between
/// backticks, keep their plain spaces.
#[test]
fn figures_keep_their_units_on_one_line() {
    assert_eq!(
        page::figures("CV 28.5 %, 146.4 to 365.4 ns; (0.9 s) 8 GB/s."),
        "CV 28.5&#160;%, 146.4 to 365.4&#160;ns; (0.9&#160;s) 8&#160;GB/s."
    );
    assert_eq!(
        page::figures("after 21 of 25 steps at 3 % ns"),
        "after 21 of 25 steps at 3&#160;% ns"
    );
    assert_eq!(
        page::figures("level A: 2 x 256 MiB"),
        "level A: 2 x 256&#160;MiB"
    );
    assert_eq!(
        page::code_spans("run `numaprobe peak -n 2 s` in 5 s"),
        "run <code>numaprobe peak -n 2 s</code> in 5&#160;s"
    );
    assert_eq!(page::prose("a < 5 % b"), "a &lt; 5&#160;% b");
    // In a table cell the figure is one word that no column breaks.
    let mut t = crate::render::table::Table::new(["cv"]);
    t.push(["13.0 %"]);
    assert!(page::table(&t).contains("<span class=\"nw\">13.0&#160;%</span>"));
    // And in a table's title.
    let t = crate::render::table::Table::new(["cv"]).with_title("placement 100.0 %");
    assert!(page::table(&t).contains("<h3>placement 100.0&#160;%</h3>"));
}

/// Every chart scales to the page: a viewBox, and a box that neither
/// scrolls nor keeps the picture's own width (at 800 px a fixed 900 px
/// chart lost its last points). Only the topology drawing scrolls.
#[test]
fn every_chart_has_a_viewbox_and_scales_to_the_page() {
    let page = render(&full_input());
    let doc = parse(&page);
    let mut charts = 0;
    for svg in doc.descendants().filter(|n| n.has_tag_name("svg")) {
        if svg.attribute("class") == Some("topology") {
            continue;
        }
        charts += 1;
        assert!(
            svg.attribute("viewBox").is_some(),
            "no viewBox: {:?}",
            svg.attribute("class")
        );
        let class = svg.parent_element().and_then(|p| p.attribute("class"));
        assert_eq!(class, Some("figure"), "a chart's box: {class:?}");
    }
    // The loaded-latency, sweep and study charts at least.
    assert!(charts >= 3, "{charts} charts");
}

/// Every figure in the report's prose and cells keeps its unit on its own
/// line: a plain space between "5.7" and "MiB" lets a narrow window put
/// the unit alone at the start of the next line (the sweep's plateaus,
/// the flag lines and the subtitle went through plain escaping once).
#[test]
fn no_figure_is_separated_from_its_unit_by_a_breaking_space() {
    let page = render(&full_input());
    let doc = parse(&page);
    let mut split = Vec::new();
    for n in doc.descendants().filter(|n| n.is_text()) {
        let inside_code = n.ancestors().any(|a| {
            ["code", "pre", "svg", "style", "script", "title"].contains(&a.tag_name().name())
        });
        if inside_code {
            continue;
        }
        let text = n.text().unwrap_or("");
        let words: Vec<&str> = text.split(' ').collect();
        for w in words.windows(2) {
            let unit = w[1].trim_end_matches([',', ';', '.', ')', ':', '*']);
            if w[0].ends_with(|c: char| c.is_ascii_digit()) && page::UNITS.contains(&unit) {
                let parent = n.parent().map(|p| p.tag_name().name()).unwrap_or("");
                let section = n
                    .ancestors()
                    .find_map(|a| a.attribute("id").filter(|_| a.has_tag_name("section")))
                    .unwrap_or("?");
                split.push(format!("{} {} (a {parent} in {section})", w[0], w[1]));
            }
        }
    }
    assert!(split.is_empty(), "{split:?}");
    // The sweep's plateaus are among the figures checked.
    let sweep = text_of(section(&doc, "sweep"));
    assert!(sweep.contains("\u{a0}ns"), "{sweep}");
}
