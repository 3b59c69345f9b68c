//! Tests that a flagged figure is never drawn like a trusted one in the
//! report: for the loaded-latency, sweep, peak, locks and rankings
//! sections, a document with a flagged and a trusted figure shows the star,
//! the reason, and the neutral grey of a flagged mark, never a colour of
//! the good-to-bad scale; the same document unflagged shows none of it.

use super::*;
use crate::render::flag_marks::flag_marks;

/// A colour of the good-to-bad scale (`page::scale_colour`) anywhere in
/// the markup.
fn scaled(markup: &str) -> bool {
    markup.contains("hsl(")
}

/// The section's markup as written (attributes included).
fn markup_of(page: &str, id: &str) -> String {
    let start = page.find(&format!("<section id=\"{id}\">")).unwrap();
    let end = start + page[start..].find("</section>").unwrap();
    page[start..end].to_string()
}

#[test]
fn a_flagged_loaded_point_is_hollow_grey_starred_and_its_reason_given() {
    let mut input = full_input();
    let trusted = render(&input);
    let doc = parse(&trusted);
    let s = section(&doc, "loaded");
    assert!(flag_marks(s).is_empty(), "a trusted curve has no mark");
    let text = text_of(s);
    assert!(
        !text.contains("flagged point") && !text.contains('*'),
        "{text}"
    );
    input.loaded[0].value.curves[0].points[1].flags = vec!["preempted in 80 % of samples".into()];
    let page = render(&input);
    let doc = parse(&page);
    let s = section(&doc, "loaded");
    let text = text_of(s);
    // The table's star and the reason under it.
    assert!(text.contains("104.0*"), "{text}");
    assert!(
        !text.contains("100.0*") && !text.contains("140.0*"),
        "{text}"
    );
    let reason = s
        .descendants()
        .find(|n| n.has_tag_name("p") && n.attribute("class") == Some("note flag"))
        .map(text_of)
        .unwrap();
    assert_eq!(reason, "* delay 64: preempted in 80\u{a0}% of samples");
    // The chart: one hollow grey mark with a star and the reason as its
    // tooltip, and the legend says what it means.
    let marks = flag_marks(s);
    assert_eq!(marks.len(), 1, "{marks:?}");
    let m = &marks[0];
    assert_eq!(
        m.tip,
        "CPU node 0 -> memory node 0, read, delay 64: 104.0 ns*: preempted in 80 % of samples"
    );
    assert_eq!(
        (m.fill.as_str(), m.stroke.as_str(), m.star.as_str()),
        ("white", "#6b6b6b", "*")
    );
    assert!(
        text.contains("* flagged point, not trusted (its tooltip gives the reason)"),
        "{text}"
    );
    // The flagged point has no dot of its curve's colour; the others keep
    // theirs.
    let dots = |page: &str| {
        markup_of(page, "loaded")
            .lines()
            .filter(|l| l.starts_with("<circle") && l.contains("fill=\"#466EB4\""))
            .count()
    };
    assert_eq!((dots(&trusted), dots(&page)), (3, 2));
    assert!(!scaled(&markup_of(&page, "loaded")));
}

/// The sample sweep with a step down at 128 KiB of thp pages: that point
/// and the one before it flagged.
fn flagged_sweep() -> crate::model::sweep::SweepResult {
    let mut r = crate::render::sweep::tests::sample();
    let i = r
        .points
        .iter()
        .position(|p| p.pages == PageKind::Thp && p.size_bytes == 128 << 10)
        .unwrap();
    r.points[i].ns = 1.0;
    crate::analysis::sweep_trust::finish(&mut r);
    r
}

use crate::model::sweep::PageKind;

#[test]
fn a_flagged_sweep_point_is_hollow_grey_starred_and_the_plateaus_say_whose() {
    let mut input = full_input();
    let trusted = render(&input);
    let doc = parse(&trusted);
    let s = section(&doc, "sweep");
    assert!(flag_marks(s).is_empty(), "a trusted curve has no mark");
    let text = text_of(s);
    assert!(
        !text.contains("flagged point") && !text.contains('*'),
        "{text}"
    );
    assert!(
        text.contains("plateaus of thp pages, from trusted points only"),
        "{text}"
    );
    input.sweeps[0].value = flagged_sweep();
    let flagged = input.sweeps[0]
        .value
        .points
        .iter()
        .filter(|p| p.flagged)
        .count();
    assert_eq!(flagged, 2);
    let page = render(&input);
    let doc = parse(&page);
    let s = section(&doc, "sweep");
    let text = text_of(s);
    assert!(text.contains("1.00*"), "{text}");
    assert!(
        text.contains("128\u{a0}KiB thp*: non-monotonic: 1.0\u{a0}ns at 128\u{a0}KiB"),
        "{text}"
    );
    // Which points the plateaus were named from.
    assert!(
        text.contains("thp pages: plateaus named from the"),
        "{text}"
    );
    assert!(
        text.contains("plateaus of thp pages, from trusted points only"),
        "{text}"
    );
    let marks = flag_marks(s);
    assert_eq!(marks.len(), flagged, "{marks:?}");
    for m in &marks {
        assert!(
            m.tip.contains(" thp pages, ") && m.tip.contains("*: "),
            "{}",
            m.tip
        );
        assert_eq!(
            (m.fill.as_str(), m.stroke.as_str(), m.star.as_str()),
            ("white", crate::render::sweep_chart::FLAG_GREY, "*")
        );
    }
    assert!(marks.iter().any(|m| m
        .tip
        .starts_with("128 KiB thp pages, 1.00 ns*: non-monotonic: 1.0 ns")));
    assert!(
        text.contains("* flagged point, not trusted (its tooltip gives the reason)"),
        "{text}"
    );
    assert!(!scaled(&markup_of(&page, "sweep")));
}

fn system(gbs: f64, flags: &[&str]) -> crate::model::peak::SystemPeak {
    crate::model::peak::SystemPeak {
        flagged: !flags.is_empty(),
        set_aside: Default::default(),
        mix: if flags.is_empty() { "write" } else { "read" }.into(),
        threads: 2,
        gbs,
        placement: 1.0,
        samples: 5,
        cv: 0.01,
        sum_of_nodes_alone_gbs: Some(90.0),
        flags: flags.iter().map(|f| f.to_string()).collect(),
    }
}

#[test]
fn a_flagged_peak_is_starred_with_its_reason_and_no_colour() {
    let mut input = full_input();
    let p = &mut input.peaks[0].value;
    p.system = vec![system(80.0, &["unstable: CV 16.5 %"]), system(70.0, &[])];
    p.nodes[0].flags = vec!["two modes: 40.0 and 45.0 GB/s".into()];
    p.nodes[0].flagged = true;
    let page = render(&input);
    let doc = parse(&page);
    let s = section(&doc, "peak");
    let cells: Vec<String> = s
        .descendants()
        .filter(|n| n.has_tag_name("td"))
        .map(text_of)
        .collect();
    assert!(cells.contains(&"80.00*".to_string()), "{cells:?}");
    assert!(cells.contains(&"70.00".to_string()), "{cells:?}");
    assert!(cells.contains(&"45.00*".to_string()), "{cells:?}");
    let reasons: Vec<String> = s
        .descendants()
        .filter(|n| n.has_tag_name("p") && n.attribute("class") == Some("note flag"))
        .map(text_of)
        .collect();
    assert_eq!(
        reasons,
        [
            "system read*: unstable: CV 16.5\u{a0}%",
            "node 0 read alone*: two modes: 40.0 and 45.0\u{a0}GB/s"
        ]
    );
    let markup = markup_of(&page, "peak");
    assert!(!scaled(&markup) && !markup.contains("style="), "{markup}");
    // Trusted, nothing is starred and no reason is given.
    let p = &mut input.peaks[0].value;
    p.system = vec![system(70.0, &[])];
    p.nodes[0].flags.clear();
    p.nodes[0].flagged = false;
    let page = render(&input);
    let markup = markup_of(&page, "peak");
    assert!(
        !markup.contains("note flag") && !markup.contains("*<"),
        "{markup}"
    );
}

#[test]
fn a_flagged_lock_run_is_starred_with_its_reason_and_no_colour() {
    let mut input = full_input();
    let r = &mut input.locks[0].value;
    let mut flagged = r.runs[0].clone();
    flagged.op = "atomic_add".into();
    flagged.ops_per_s = 30e6;
    flagged.ns_per_op = 66.0;
    flagged.flagged = true;
    flagged.flags = vec!["unstable: CV 12.0 %".into()];
    r.runs.push(flagged);
    let page = render(&input);
    let doc = parse(&page);
    let s = section(&doc, "locks");
    let rows: Vec<Vec<String>> = s
        .descendants()
        .filter(|n| n.has_tag_name("tr"))
        .map(|tr| {
            tr.children()
                .filter(|c| c.has_tag_name("td"))
                .map(text_of)
                .collect()
        })
        .filter(|r: &Vec<String>| !r.is_empty())
        .collect();
    let row = |op: &str| rows.iter().find(|r| r[0] == op && r[3] == "2").unwrap();
    assert_eq!(row("spin_lock")[4..6], ["12.5", "160.0"]);
    assert_eq!(row("atomic_add")[4..6], ["30.0*", "66.0*"]);
    let warn: Vec<String> = s
        .descendants()
        .filter(|n| n.has_tag_name("p") && n.attribute("class") == Some("warn"))
        .map(text_of)
        .collect();
    assert!(
        warn.contains(
            &"Flagged: atomic_add shared cross_node 2 thread(s)*: unstable: CV 12.0\u{a0}%"
                .to_string()
        ),
        "{warn:?}"
    );
    assert!(
        !warn.iter().any(|w| w.contains("spin_lock")),
        "the trusted run has no flag line: {warn:?}"
    );
    let markup = markup_of(&page, "locks");
    assert!(!scaled(&markup) && !markup.contains("style="), "{markup}");
}

#[test]
fn a_flagged_winner_is_a_grey_bar_and_no_bar_takes_the_winners_green() {
    let bars = |page: &str| -> Vec<String> {
        let doc = parse(page);
        let s = section(&doc, "rankings");
        s.descendants()
            .filter(|n| n.has_tag_name("rect"))
            .filter_map(|n| n.attribute("fill").map(str::to_string))
            .collect()
    };
    let mut input = full_input();
    assert_eq!(
        bars(&render(&input))[..2],
        ["#2e8b57", "#5b8db8"],
        "trusted: the best is green"
    );
    // bind (1.25 s, lower is better) ranks first.
    input.rankings[0].value.entries[1].flags = vec!["unstable: CV 31.0 %".into()];
    let page = render(&input);
    assert_eq!(bars(&page)[..2], ["#9aa0aa", "#5b8db8"]);
    let doc = parse(&page);
    let text = text_of(section(&doc, "rankings"));
    assert!(text.contains("bind*: unstable: CV 31.0\u{a0}%"), "{text}");
    assert!(!scaled(&markup_of(&page, "rankings")));
}

#[test]
fn a_flagged_policy_reaches_the_rankings_with_its_reason() {
    let mut r = crate::render::policy::tests::doc();
    r.cases[0].policies[0].flags = vec!["two modes: 6.0 and 12.5 GB/s".into()];
    let input = ReportInput {
        rankings: r
            .rankings()
            .into_iter()
            .map(|k| Doc::new("policy.json", k))
            .collect(),
        ..ReportInput::default()
    };
    let page = render(&input);
    let doc = parse(&page);
    let s = section(&doc, "rankings");
    let text = text_of(s);
    let name = r.cases[0].policies[0].policy.name();
    assert!(
        text.contains(&format!("{name}*: two modes: 6.0 and 12.5\u{a0}GB/s")),
        "{text}"
    );
    assert!(text.contains("12.50* GB/s"), "{text}");
    let tips: Vec<String> = s
        .descendants()
        .filter(|n| n.has_tag_name("title"))
        .map(text_of)
        .collect();
    assert!(
        tips.iter()
            .any(|t| t.ends_with("; two modes: 6.0 and 12.5 GB/s")),
        "{tips:?}"
    );
}

/// A policy whose pages were not where it promises them (the placement
/// check's match below 99 %) measured another placement than its name:
/// its bar is the flagged grey, starred, its tooltip and the section's
/// list say why; the same policy with its promise kept is the winner's
/// green, without a star.
#[test]
fn a_policy_that_broke_its_page_promise_is_a_grey_starred_bar_with_why() {
    let page_of = |kept: bool| {
        let mut r = crate::render::policy::tests::doc();
        for c in &mut r.cases {
            let d = c.policies[0].placement.as_mut().unwrap();
            d.pages = 1000;
            d.per_node = if kept {
                [(0, 1000)].into_iter().collect()
            } else {
                [(0, 900), (1, 100)].into_iter().collect()
            };
            d.match_fraction = Some(if kept { 1.0 } else { 0.9 });
            d.flagged = !kept;
        }
        let input = ReportInput {
            rankings: r
                .rankings()
                .into_iter()
                .map(|k| Doc::new("policy.json", k))
                .collect(),
            ..ReportInput::default()
        };
        render(&input)
    };
    // (fill of each bar, its figure's text, its tooltip) in the section.
    let bars = |page: &str| -> Vec<(String, String, String)> {
        let doc = parse(page);
        let s = section(&doc, "rankings");
        s.descendants()
            .filter(|g| g.has_tag_name("g"))
            .filter_map(|g| {
                let rect = g.children().find(|c| c.has_tag_name("rect"))?;
                let texts: Vec<String> = g
                    .children()
                    .filter(|c| c.has_tag_name("text"))
                    .map(text_of)
                    .collect();
                let title = g.children().find(|c| c.has_tag_name("title"))?;
                Some((
                    rect.attribute("fill")?.to_string(),
                    texts.last()?.clone(),
                    text_of(title),
                ))
            })
            .collect()
    };
    let why = "pages not where the policy promises: 90.0 % of them as promised, < 99 % (0: 90 %, 1: 10 %)";
    let page = page_of(false);
    let broken = bars(&page);
    // Each case: first-touch measured (12.5 GB/s), unpinned not run.
    assert_eq!(broken.len(), 4, "{broken:?}");
    for (fill, figure, tip) in [&broken[0], &broken[2]] {
        assert_eq!(fill, "#9aa0aa", "{broken:?}");
        assert_eq!(figure, "12.50* GB/s");
        assert!(tip.starts_with("first-touch: median 12.50 GB/s"), "{tip}");
        assert!(tip.ends_with(&format!("; {why}")), "{tip}");
    }
    let doc = parse(&page);
    let text = text_of(section(&doc, "rankings"));
    assert!(
        text.contains("first-touch*: pages not where the policy promises: 90.0"),
        "{text}"
    );
    assert!(!scaled(&markup_of(&page, "rankings")));
    // The promise kept: the winner's green, no star, no reason.
    let page = page_of(true);
    let kept = bars(&page);
    for (fill, figure, tip) in [&kept[0], &kept[2]] {
        assert_eq!(fill, "#2e8b57", "{kept:?}");
        assert_eq!(figure, "12.50 GB/s");
        assert!(!tip.contains("promises"), "{tip}");
    }
    assert!(!page.contains("pages not where"));
}
