//! The report's cache-line transfer part (`numaprobe c2c`), shown in the
//! matrices section: the HITM and read-shared matrices as heatmaps (rows
//! "from", columns "to") when every pair was measured, else the pair list,
//! then the median per sharing domain.

use super::heat_table::{heat_table, HeatCell, Noisy, Scale};
use super::page::{escape, prose, scale_colour, table};
use crate::model::c2c::{C2cResult, Figure};
use crate::render::c2c::{domain_table, figure_of, flagged_lines, is_square, starred};
use crate::render::table::Table;
use crate::stats::flags::star;

fn heat(r: &C2cResult, m: &[Vec<Option<f64>>], state: &str) -> String {
    if m.iter().flatten().flatten().next().is_none() {
        return String::new();
    }
    let figure = |a: u32, b: u32| -> Option<&Figure> { figure_of(r, a, b, state == "HITM") };
    // Coloured by the trusted figures, and only where they differ beyond
    // their spread (155.5 against 156.7 ns is one colour, not two).
    let noisy = |a: u32, b: u32, v: f64| Noisy::new(v, figure(a, b).map_or(0.0, |f| f.cv));
    let trusted: Vec<Noisy> = r
        .cpus
        .iter()
        .enumerate()
        .flat_map(|(i, &a)| {
            r.cpus.iter().enumerate().filter_map(move |(j, &b)| {
                let v = m[i][j]?;
                (!figure(a, b).is_some_and(|f| f.flagged)).then(|| noisy(a, b, v))
            })
        })
        .collect();
    let scale = Scale::of(&trusted, true);
    let cells: Vec<Vec<HeatCell>> = r
        .cpus
        .iter()
        .enumerate()
        .map(|(i, &a)| {
            r.cpus
                .iter()
                .enumerate()
                .map(|(j, &b)| match m[i][j] {
                    Some(v) => {
                        let flagged = figure(a, b).is_some_and(|f| f.flagged);
                        HeatCell {
                            text: format!("{v:.1}{}", star(flagged)),
                            // A flagged figure is never drawn in the
                            // scale's colours: its place on it is not known.
                            colour: scale
                                .filter(|_| !flagged)
                                .map(|sc| sc.colour(noisy(a, b, v))),
                            flagged,
                            title: match figure(a, b) {
                                Some(f) => format!(
                                    "CPU {a} -> CPU {b}, {state}: median {:.1} ns, min {:.1}, max {:.1}, CV {:.1} %, {} samples, {} set aside{}",
                                    f.median,
                                    f.min,
                                    f.max,
                                    100.0 * f.cv,
                                    f.kept(),
                                    f.set_aside.total(),
                                    if f.flags.is_empty() {
                                        String::new()
                                    } else {
                                        format!("; {}", f.flags.join("; "))
                                    }
                                ),
                                None => format!("CPU {a} -> CPU {b}: {v:.1} ns"),
                            },
                        }
                    }
                    None => HeatCell {
                        text: "\u{b7}".into(),
                        colour: None,
                        flagged: r.failed.iter().any(|f| f.a == a && f.b == b),
                        title: if i == j {
                            "the same CPU".into()
                        } else {
                            "not measured".into()
                        },
                    },
                })
                .collect()
        })
        .collect();
    let mut s = match scale {
        Some(sc) => format!(
            "<p class=\"legend\">{state}, median ns one way: <span class=\"swatch\" style=\"background:{}\"></span>{:.1} <span class=\"swatch\" style=\"background:{}\"></span>{:.1}; rows: from, columns: to</p>\n",
            scale_colour(0.0),
            sc.best.value,
            scale_colour(1.0),
            sc.worst.value
        ),
        None => format!("<p class=\"legend\">{state}, median ns one way; colour: none, no two trusted pairs differ beyond their spread; rows: from, columns: to</p>\n"),
    };
    s.push_str(&heat_table(&r.cpus, &r.cpus, &cells, "from \\ to"));
    s
}

/// The c2c part of the matrices section, for one document.
pub fn section(r: &C2cResult, file: &str) -> String {
    let mut s = format!(
        "<h3>Cache-line transfer between CPUs (ns one way) <span class=\"note\">from {}{}</span></h3>\n",
        escape(file),
        if r.complete { "" } else { ", partial" }
    );
    let hitm = match r.hitm_lines.as_deref() {
        Some("two lines") => {
            "each CPU writes its own line and reads the other's (two lines, round trip / 2)"
        }
        _ => "a line last written by the other CPU (ping-pong, round trip / 2)",
    };
    s.push_str(&format!("<p class=\"legend\">HITM: {hitm}. Read-shared: a line the first CPU holds clean, read by the second (time per load).</p>\n"));
    if is_square(r) {
        s.push_str(&heat(r, &r.hitm, "HITM"));
        s.push_str(&heat(r, &r.shared, "read-shared"));
    } else if !r.pairs.is_empty() {
        let mut t = Table::new(["from", "to", "domain", "HITM ns", "shared ns"]);
        for p in &r.pairs {
            t.push([
                format!("CPU {} (node {})", p.a, p.node_a),
                format!("CPU {} (node {})", p.b, p.node_b),
                p.domain.name().to_string(),
                starred(p.hitm.as_ref()),
                starred(p.shared.as_ref()),
            ]);
        }
        s.push_str(&table(&t));
    }
    if !r.domains.is_empty() {
        s.push_str(&table(&domain_table(
            r,
            "By sharing domain (median of the pairs' medians)",
        )));
    }
    let flagged = flagged_lines(r);
    if !flagged.is_empty() {
        s.push_str("<ul class=\"findings\">\n");
        for f in &flagged {
            s.push_str(&format!("<li>flagged: {}</li>\n", prose(f)));
        }
        s.push_str("</ul>\n");
    }
    if !r.failed.is_empty() {
        s.push_str("<ul class=\"findings\">\n");
        for f in &r.failed {
            s.push_str(&format!(
                "<li>failed: CPU {} -> CPU {}: {}</li>\n",
                f.a,
                f.b,
                prose(&f.reason)
            ));
        }
        s.push_str("</ul>\n");
    }
    for n in &r.notes {
        s.push_str(&format!("<p class=\"note\">{}</p>\n", prose(n)));
    }
    s
}

#[cfg(test)]
mod tests {
    use crate::model::c2c::{C2cPair, C2cResult, Domain, DomainSummary, Figure};
    use crate::render::html::{render, Doc, ReportInput};
    use crate::stats::StopRule;
    use crate::timer::{ClockSource, TimerInfo};

    fn fig(m: f64) -> Option<Figure> {
        Some(Figure {
            median: m,
            min: m,
            max: m,
            cv: 0.0,
            samples: vec![m; 3],
            sketch: None,
            stop: None,
            set_aside: Default::default(),
            flagged: false,
            flags: vec![],
        })
    }

    #[test]
    fn the_page_shows_the_heatmap_and_the_domains_and_stays_well_formed() {
        let pairs = vec![
            C2cPair {
                a: 0,
                b: 1,
                node_a: 0,
                node_b: 0,
                domain: Domain::SameL3,
                hitm: fig(55.5),
                shared: fig(40.0),
            },
            C2cPair {
                a: 1,
                b: 0,
                node_a: 0,
                node_b: 0,
                domain: Domain::SameL3,
                hitm: fig(57.5),
                shared: fig(41.0),
            },
        ];
        let r = C2cResult {
            schema: "numaprobe/1".into(),
            unit: "ns".into(),
            cpus: vec![0, 1],
            hitm: vec![vec![None, Some(55.5)], vec![Some(57.5), None]],
            shared: vec![vec![None, Some(40.0)], vec![Some(41.0), None]],
            domains: DomainSummary::of_pairs(&pairs),
            pairs,
            atomics: "loads and stores".into(),
            hitm_lines: Some("one line".into()),
            platform_atomics: None,
            stop_rule: StopRule::default(),
            timer: TimerInfo {
                source: ClockSource::Tsc,
                tsc_hz: None,
                overhead_ns: 1.0,
                resolution_ns: 1.0,
            },
            notes: vec!["a <note>".into()],
            failed: vec![],
            complete: true,
            interrupted: false,
        };
        let mut two = r.clone();
        two.hitm_lines = Some("two lines".into());
        assert!(super::section(&two, "c2c.json").contains("(two lines, round trip / 2)"));
        assert!(!super::section(&r, "c2c.json").contains("two lines"));
        let page = render(&ReportInput {
            c2c: vec![Doc::new("c2c.json", r)],
            complete: true,
            ..ReportInput::default()
        });
        let opts = roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        };
        roxmltree::Document::parse_with_options(&page, opts).expect("well-formed");
        assert!(page.contains("Cache-line transfer between CPUs"), "{page}");
        assert!(page.contains(">55.5<"), "{page}");
        assert!(page.contains("same L3"), "{page}");
        assert!(page.contains("a &lt;note&gt;") || page.contains("a &#60;note&#62;"));
        assert!(!page.contains("No matrix in this folder"));
    }

    #[test]
    fn a_flagged_pair_is_starred_uncoloured_and_explained() {
        let mut f = fig(158.0).unwrap();
        f.flagged = true;
        f.flags = vec!["unstable: CV 71.8 %, max/min 5.12".into()];
        let pair = |a, b, hitm| C2cPair {
            a,
            b,
            node_a: 0,
            node_b: 0,
            domain: Domain::SameL3,
            hitm,
            shared: None,
        };
        let pairs = vec![pair(0, 1, Some(f)), pair(1, 0, fig(31.0))];
        let r = C2cResult {
            schema: "numaprobe/1".into(),
            unit: "ns".into(),
            cpus: vec![0, 1],
            hitm: vec![vec![None, Some(158.0)], vec![Some(31.0), None]],
            shared: vec![vec![None, None], vec![None, None]],
            domains: DomainSummary::of_pairs(&pairs),
            pairs,
            atomics: "loads and stores".into(),
            hitm_lines: None,
            platform_atomics: None,
            stop_rule: StopRule::default(),
            timer: TimerInfo {
                source: ClockSource::Tsc,
                tsc_hz: None,
                overhead_ns: 1.0,
                resolution_ns: 1.0,
            },
            notes: vec![],
            failed: vec![],
            complete: true,
            interrupted: false,
        };
        let s = super::section(&r, "c2c.json");
        let cell = |text: &str| {
            let end = s.find(&format!(">{text}</td>")).expect(text);
            s[..end].rsplit("<td").next().unwrap().to_string()
        };
        let flagged = cell("158.0*");
        assert!(flagged.contains("class=\"flag none\""), "{flagged}");
        assert!(!flagged.contains("background"), "{flagged}");
        assert!(flagged.contains("unstable: CV 71.8 %"), "{flagged}");
        // The one trusted pair has no other to be better or worse than:
        // neutral, and the legend says why.
        let good = cell("31.0");
        assert!(!good.contains("background"), "{good}");
        assert!(!good.contains("flag"), "{good}");
        assert!(s.contains("colour: none, no two trusted pairs differ beyond their spread"));
        assert!(
            s.contains(
                "<li>flagged: CPU 0 -&gt; CPU 1, HITM 158.0&#160;ns*: unstable: CV 71.8&#160;%"
            ),
            "{s}"
        );
        assert!(s.contains(">158.0*<") && s.contains("same L3"), "{s}");
    }
}
