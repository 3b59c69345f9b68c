//! Renderers of a cache-line transfer result (`model::c2c::C2cResult`):
//! the matrices (HITM and read-shared, rows "from", columns "to") where
//! every pair of the CPUs was measured, else the list of pairs; then the
//! summary per sharing domain, failures and notes. Text, Markdown, CSV
//! (one row per measured pair) and JSON. A flagged figure (its spread, two
//! modes, too few held samples: [`crate::stats::flags`]) carries the star
//! after its value and its reasons under the tables.

use crate::model::c2c::{C2cPair, C2cResult, Figure};
use crate::model::format::Format;
use crate::render::table::{Align, Table};
use crate::stats::flags::star;

/// The result in `format`.
pub fn render(r: &C2cResult, format: Format) -> String {
    super::in_format(r, format, text, csv)
}

fn ns(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.1}")).unwrap_or_else(|| "-".into())
}

/// A figure's median with its star when flagged; `-` for none.
pub(crate) fn starred(f: Option<&Figure>) -> String {
    f.map(|f| format!("{:.1}{}", f.median, star(f.flagged)))
        .unwrap_or_else(|| "-".into())
}

/// The pair's figure of one state (`hitm`: HITM, else read-shared).
pub(crate) fn figure_of(r: &C2cResult, a: u32, b: u32, hitm: bool) -> Option<&Figure> {
    let p = r.pairs.iter().find(|p| p.a == a && p.b == b)?;
    if hitm {
        p.hitm.as_ref()
    } else {
        p.shared.as_ref()
    }
}

/// One line per flagged figure: `CPU 0 -> CPU 1, HITM 158.0 ns*: unstable: ...`.
pub fn flagged_lines(r: &C2cResult) -> Vec<String> {
    let one = |p: &C2cPair, f: Option<&Figure>, state: &str| -> Option<String> {
        let f = f.filter(|f| f.flagged)?;
        Some(format!(
            "CPU {} -> CPU {}, {state} {:.1} ns{}: {}",
            p.a,
            p.b,
            f.median,
            star(true),
            f.flags.join("; ")
        ))
    };
    r.pairs
        .iter()
        .flat_map(|p| {
            [
                one(p, p.hitm.as_ref(), "HITM"),
                one(p, p.shared.as_ref(), "read-shared"),
            ]
        })
        .flatten()
        .collect()
}

fn range(f: Option<&Figure>) -> String {
    f.map(|f| format!("{:.1}-{:.1}", f.min, f.max))
        .unwrap_or_else(|| "-".into())
}

/// True when every ordered pair of `cpus` was measured or tried: a matrix
/// then says everything; otherwise (representatives) most cells would be
/// empty and the pair list reads better.
pub fn is_square(r: &C2cResult) -> bool {
    let n = r.cpus.len();
    n >= 2 && r.pairs.len() + r.failed.len() >= n * (n - 1)
}

fn matrix(r: &C2cResult, m: &[Vec<Option<f64>>], hitm: bool, title: &str) -> Table {
    let mut headers = vec!["from \\ to".to_string()];
    headers.extend(r.cpus.iter().map(|c| format!("CPU {c}")));
    let mut t = Table::new(headers).with_title(title);
    for (i, row) in m.iter().enumerate() {
        let mut cells = vec![format!("CPU {}", r.cpus[i])];
        for (j, v) in row.iter().enumerate() {
            let flagged = figure_of(r, r.cpus[i], r.cpus[j], hitm).is_some_and(|f| f.flagged);
            cells.push(if i == j {
                "\u{b7}".into()
            } else {
                format!("{}{}", ns(*v), star(flagged && v.is_some()))
            });
        }
        t.push(cells);
    }
    t
}

fn pair_list(r: &C2cResult) -> Table {
    let mut t = Table::new([
        "from",
        "to",
        "nodes",
        "domain",
        "HITM ns",
        "range",
        "shared ns",
        "range",
    ])
    .with_title("Pairs, median ns one way (from: starts the round trip / holds the clean line)")
    .with_align(vec![
        Align::Right,
        Align::Right,
        Align::Left,
        Align::Left,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
    ]);
    for p in &r.pairs {
        t.push([
            format!("CPU {}", p.a),
            format!("CPU {}", p.b),
            format!("{} -> {}", p.node_a, p.node_b),
            p.domain.name().to_string(),
            starred(p.hitm.as_ref()),
            range(p.hitm.as_ref()),
            starred(p.shared.as_ref()),
            range(p.shared.as_ref()),
        ]);
    }
    t
}

/// The median per sharing domain under `title` (the report's page says it
/// in fewer words).
pub(crate) fn domain_table(r: &C2cResult, title: &str) -> Table {
    let mut t = Table::new(["domain", "pairs", "HITM ns", "shared ns"]).with_title(title);
    for d in &r.domains {
        t.push([
            d.domain.name().to_string(),
            d.pairs.to_string(),
            format!("{}{}", ns(d.hitm_ns), star(d.hitm_flagged > 0)),
            format!("{}{}", ns(d.shared_ns), star(d.shared_flagged > 0)),
        ]);
    }
    t
}

fn text(r: &C2cResult, md: bool) -> String {
    let render_table = |t: &Table| if md { t.to_markdown() } else { t.to_text() };
    let mut out = String::new();
    let head = format!(
        "numaprobe c2c: cache-line transfer between {} CPUs, ns one way (HITM: round trip / 2), {}{}{}",
        r.cpus.len(),
        r.atomics,
        match r.platform_atomics {
            Some(crate::platform::Atomics::Lse) => ", machine atomics: LSE",
            Some(crate::platform::Atomics::LoadStoreExclusive) => {
                ", machine atomics: load/store exclusive"
            }
            None => "",
        },
        if r.complete { "" } else { " (incomplete)" }
    );
    if md {
        out.push_str(&format!("## {head}\n\n"));
    } else {
        out.push_str(&head);
        out.push_str("\n\n");
    }
    let any = |m: &[Vec<Option<f64>>]| m.iter().flatten().any(Option::is_some);
    if is_square(r) {
        if any(&r.hitm) {
            let title = match r.hitm_lines.as_deref() {
                Some("two lines") => "HITM: each CPU writes its own line and reads the other's (two lines), median ns one way (row starts the round trip)",
                _ => "HITM: line last written by the other CPU, median ns one way (row starts the round trip)",
            };
            out.push_str(&render_table(&matrix(r, &r.hitm, true, title)));
            out.push('\n');
        }
        if any(&r.shared) {
            out.push_str(&render_table(&matrix(
                r,
                &r.shared,
                false,
                "Read-shared: line held clean by the row CPU, read by the column CPU, median ns per load",
            )));
            out.push('\n');
        }
    } else if !r.pairs.is_empty() {
        out.push_str(&render_table(&pair_list(r)));
        out.push('\n');
    }
    if !r.domains.is_empty() {
        out.push_str(&render_table(&domain_table(
            r,
            "By sharing domain: median of the pairs' medians, ns one way",
        )));
        out.push('\n');
    }
    if r.pairs.is_empty() && r.failed.is_empty() {
        out.push_str("No pair was measured.\n\n");
    }
    let bullet = if md { "- " } else { "  " };
    let flagged = flagged_lines(r);
    if !flagged.is_empty() {
        out.push_str(&format!(
            "{} figure(s) not to be trusted as they are ({} after the figure):\n",
            flagged.len(),
            star(true)
        ));
        for f in &flagged {
            out.push_str(&format!("{bullet}{f}\n"));
        }
        out.push('\n');
    }
    if !r.failed.is_empty() {
        out.push_str("Failed pairs:\n");
        for f in &r.failed {
            out.push_str(&format!(
                "{bullet}CPU {} -> CPU {}: {}\n",
                f.a, f.b, f.reason
            ));
        }
        out.push('\n');
    }
    if !r.notes.is_empty() {
        out.push_str("Notes:\n");
        for n in &r.notes {
            out.push_str(&format!("{bullet}{n}\n"));
        }
        out.push('\n');
    }
    out.push_str(&format!(
        "Each pair and state sampled up to {:.3} s (stop at CV {:.1} %); clock: {}.\n",
        r.stop_rule.budget.as_secs_f64(),
        100.0 * r.stop_rule.cv_target,
        r.timer.source.describe()
    ));
    out
}

fn csv(r: &C2cResult) -> String {
    let mut t = Table::new([
        "a",
        "b",
        "node_a",
        "node_b",
        "domain",
        "hitm_ns",
        "hitm_min_ns",
        "hitm_max_ns",
        "hitm_cv",
        "shared_ns",
        "shared_min_ns",
        "shared_max_ns",
        "shared_cv",
        "hitm_flags",
        "shared_flags",
        "hitm_set_aside",
        "shared_set_aside",
    ]);
    let cols = |f: Option<&Figure>| -> [String; 4] {
        match f {
            Some(f) => [
                format!("{:.3}", f.median),
                format!("{:.3}", f.min),
                format!("{:.3}", f.max),
                format!("{:.5}", f.cv),
            ],
            None => Default::default(),
        }
    };
    for p in &r.pairs {
        let mut row = vec![
            p.a.to_string(),
            p.b.to_string(),
            p.node_a.to_string(),
            p.node_b.to_string(),
            serde_json::to_value(p.domain)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
        ];
        row.extend(cols(p.hitm.as_ref()));
        row.extend(cols(p.shared.as_ref()));
        let flags = |f: Option<&Figure>| f.map(|f| f.flags.join("; ")).unwrap_or_default();
        let aside = |f: Option<&Figure>| {
            f.map(|f| f.set_aside.total().to_string())
                .unwrap_or_default()
        };
        row.extend([
            flags(p.hitm.as_ref()),
            flags(p.shared.as_ref()),
            aside(p.hitm.as_ref()),
            aside(p.shared.as_ref()),
        ]);
        t.push(row);
    }
    t.to_csv()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::c2c::{C2cFailed, C2cPair, Domain, DomainSummary};
    use crate::stats::StopRule;
    use crate::timer::{ClockSource, TimerInfo};

    fn fig(m: f64) -> Figure {
        Figure {
            median: m,
            min: m - 1.0,
            max: m + 2.0,
            cv: 0.01,
            samples: vec![m - 1.0, m, m + 2.0],
            sketch: None,
            stop: None,
            set_aside: Default::default(),
            flagged: false,
            flags: vec![],
        }
    }

    fn result(cpus: Vec<u32>, pairs: Vec<(u32, u32, Domain, f64)>) -> C2cResult {
        let n = cpus.len();
        let mut hitm = vec![vec![None; n]; n];
        let mut shared = vec![vec![None; n]; n];
        let at = |c: u32| cpus.iter().position(|&x| x == c).unwrap();
        let pairs: Vec<C2cPair> = pairs
            .into_iter()
            .map(|(a, b, d, v)| {
                hitm[at(a)][at(b)] = Some(v);
                shared[at(a)][at(b)] = Some(v / 2.0);
                C2cPair {
                    a,
                    b,
                    node_a: 0,
                    node_b: if d == Domain::CrossPackage { 1 } else { 0 },
                    domain: d,
                    hitm: Some(fig(v)),
                    shared: Some(fig(v / 2.0)),
                }
            })
            .collect();
        C2cResult {
            schema: "numaprobe/1".into(),
            unit: "ns".into(),
            domains: DomainSummary::of_pairs(&pairs),
            cpus,
            hitm,
            shared,
            pairs,
            atomics: "loads and stores".into(),
            hitm_lines: Some("one line".into()),
            platform_atomics: None,
            stop_rule: StopRule::default(),
            timer: TimerInfo {
                source: ClockSource::Tsc,
                tsc_hz: Some(2e9),
                overhead_ns: 10.0,
                resolution_ns: 0.5,
            },
            notes: vec!["a note".into()],
            failed: vec![],
            complete: true,
            interrupted: false,
        }
    }

    #[test]
    fn a_full_set_of_pairs_reads_as_two_matrices_and_a_domain_table() {
        let r = result(
            vec![0, 1],
            vec![(0, 1, Domain::SameL3, 52.25), (1, 0, Domain::SameL3, 50.0)],
        );
        let t = render(&r, Format::Table);
        assert!(
            t.starts_with("numaprobe c2c: cache-line transfer between 2 CPUs"),
            "{t}"
        );
        assert!(t.contains("HITM: line last written"), "{t}");
        assert!(t.contains("Read-shared: line held clean"), "{t}");
        // Row CPU 0: the diagonal, then 0 -> 1.
        let row = t.lines().find(|l| l.starts_with("CPU 0")).unwrap();
        assert!(row.contains('\u{b7}') && row.contains("52.2"), "{row}");
        assert!(t.contains("same L3"), "{t}");
        assert!(t.contains("a note"), "{t}");
        let md = render(&r, Format::Markdown);
        assert!(md.starts_with("## numaprobe c2c"), "{md}");
        assert!(md.contains("| CPU 0 |"), "{md}");
        let csv = render(&r, Format::Csv);
        let mut lines = csv.lines();
        assert!(lines
            .next()
            .unwrap()
            .starts_with("a,b,node_a,node_b,domain,hitm_ns"));
        assert!(
            lines.next().unwrap().starts_with("0,1,0,0,same_l3,52.250"),
            "{csv}"
        );
        let v: serde_json::Value = serde_json::from_str(&render(&r, Format::Json)).unwrap();
        assert_eq!(v["schema"], "numaprobe/1");
        assert_eq!(v["platform_atomics"], serde_json::Value::Null);
        assert_eq!(v["domains"][0]["domain"], "same_l3");
    }

    /// The pair: a HITM figure of 8 samples in two groups, 31
    /// and 158 ns, 5 more set aside for the partner's preemption.
    fn bimodal() -> Figure {
        let samples = vec![31.0, 31.2, 30.9, 31.1, 158.0, 157.5, 158.3, 158.1];
        let m = crate::stats::Measured {
            summary: crate::stats::Summary::of(&samples).unwrap(),
            samples,
            stop: crate::stats::StopReason::BudgetSpent,
            warmup_runs: 1,
            elapsed_s: 0.1,
            set_aside: crate::stats::SetAside {
                preempted: 5,
                shortened: 1,
                ..Default::default()
            },
        };
        Figure::of(&m)
    }

    #[test]
    fn a_flagged_pair_carries_its_star_and_reasons_in_every_format() {
        let f = bimodal();
        assert!(f.flagged);
        assert_eq!(f.set_aside.preempted, 5);
        assert!(f.flags[0].starts_with("unstable: CV"), "{:?}", f.flags);
        assert!(
            f.flags[1].starts_with("two modes: 31.1 ns (4 samples) and 158.1 ns (4 samples)"),
            "{:?}",
            f.flags
        );
        let mut r = result(
            vec![0, 1],
            vec![(0, 1, Domain::SameL3, 94.6), (1, 0, Domain::SameL3, 31.0)],
        );
        r.pairs[0].hitm = Some(Figure { median: 94.6, ..f });
        r.domains = DomainSummary::of_pairs(&r.pairs);
        assert_eq!(
            (r.domains[0].hitm_flagged, r.domains[0].shared_flagged),
            (1, 0)
        );
        for format in [Format::Table, Format::Markdown] {
            let t = render(&r, format);
            let row = t
                .lines()
                .find(|l| l.contains("CPU 0") && l.contains("94.6"))
                .unwrap();
            assert!(row.contains("94.6*"), "{row}");
            // The reverse pair and the read-shared figures hold.
            assert!(!t.contains("31.0*") && !t.contains("47.3*"), "{t}");
            assert!(
                t.contains("1 figure(s) not to be trusted as they are (* after the figure):"),
                "{t}"
            );
            assert!(
                t.contains("CPU 0 -> CPU 1, HITM 94.6 ns*: unstable: CV"),
                "{t}"
            );
            assert!(
                t.contains("two modes: 31.1 ns (4 samples) and 158.1 ns"),
                "{t}"
            );
            let domain = t
                .lines()
                .find(|l| l.contains("same L3") && l.contains('2'))
                .unwrap();
            assert!(domain.contains('*'), "{domain}");
        }
        let csv = render(&r, Format::Csv);
        let rows: Vec<&str> = csv.lines().collect();
        assert!(rows[0].ends_with(",hitm_flags,shared_flags,hitm_set_aside,shared_set_aside"));
        assert!(rows[1].contains(",\"unstable: CV"), "{csv}");
        assert!(rows[1].ends_with(",5,0"), "{csv}");
        assert!(rows[2].ends_with(",,,0,0"), "{csv}");
        let v: serde_json::Value = serde_json::from_str(&render(&r, Format::Json)).unwrap();
        assert_eq!(v["pairs"][0]["hitm"]["flagged"], true);
        assert_eq!(v["pairs"][0]["hitm"]["set_aside"]["preempted"], 5);
        assert_eq!(v["pairs"][1]["hitm"]["flagged"], false);
        assert_eq!(v["domains"][0]["hitm_flagged"], 1);
        // A document without the fields (an older one) still reads, unflagged.
        let mut old = v.clone();
        for p in old["pairs"].as_array_mut().unwrap() {
            for k in ["flagged", "flags", "set_aside"] {
                p["hitm"].as_object_mut().unwrap().remove(k);
            }
        }
        let back: C2cResult = serde_json::from_value(old).unwrap();
        assert!(!back.pairs[0].hitm.as_ref().unwrap().flagged);
        assert!(flagged_lines(&back).is_empty());
    }

    #[test]
    fn the_hitm_title_says_which_method_ran() {
        let mut r = result(
            vec![0, 1],
            vec![(0, 1, Domain::SameL3, 140.0), (1, 0, Domain::SameL3, 141.0)],
        );
        assert!(!render(&r, Format::Table).contains("(two lines)"));
        r.hitm_lines = Some("two lines".into());
        let t = render(&r, Format::Table);
        assert!(
            t.contains("HITM: each CPU writes its own line and reads the other's (two lines)"),
            "{t}"
        );
    }

    #[test]
    fn representatives_read_as_a_pair_list_with_failures() {
        let mut r = result(
            vec![0, 1, 64, 128],
            vec![
                (0, 1, Domain::SameCore, 20.0),
                (1, 0, Domain::SameCore, 21.0),
                (0, 128, Domain::CrossPackage, 140.0),
                (128, 0, Domain::CrossPackage, 150.0),
            ],
        );
        r.failed.push(C2cFailed {
            a: 0,
            b: 64,
            reason: "hitm: CPU 0 waited 2s".into(),
        });
        r.complete = false;
        let t = render(&r, Format::Table);
        assert!(!t.contains("from \\ to"), "{t}");
        assert!(t.contains("Pairs, median ns one way"), "{t}");
        assert!(t.contains("0 -> 1"), "{t}");
        assert!(t.contains("cross package"), "{t}");
        assert!(t.contains("CPU 0 -> CPU 64: hitm: CPU 0 waited 2s"), "{t}");
        assert!(t.lines().next().unwrap().ends_with("(incomplete)"));
        let summary: Vec<&DomainSummary> = r.domains.iter().collect();
        assert_eq!(summary.len(), 2);
        assert_eq!(summary[1].hitm_ns, Some(145.0));
    }
}
