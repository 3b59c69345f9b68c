//! A [`Ranking`] as an SVG picture: one horizontal bar per alternative,
//! best first, the median as the bar and the min-max spread as a whisker,
//! unranked (failed) entries last and grey. Hand-written SVG (no font
//! needed: the viewer draws the text), so it inlines in the HTML report and
//! stands alone as a file.

use crate::model::ranking::{Better, RankEntry, Ranking};
use crate::render::html::escape;

const ROW: f64 = 26.0;
const BAR_AREA: f64 = 420.0;
const TOP: f64 = 34.0;
/// Pixels per character of the 12 px labels, generous, for the layout.
const CHAR: f64 = 7.0;
/// Longer labels are cut (the whole label stays in the bar's tooltip).
const MAX_LABEL: usize = 48;

/// Entries best first: ranked by median in the ranking's direction (ties
/// keep their order), then the unranked ones in their order.
pub fn sorted(r: &Ranking) -> Vec<&RankEntry> {
    let mut ranked: Vec<&RankEntry> = r
        .entries
        .iter()
        .filter(|e| e.ranked && e.median.is_finite())
        .collect();
    ranked.sort_by(|a, b| {
        let o = a.median.total_cmp(&b.median);
        match r.better {
            Better::Lower => o,
            Better::Higher => o.reverse(),
        }
    });
    let rest = r
        .entries
        .iter()
        .filter(|e| !(e.ranked && e.median.is_finite()));
    ranked.into_iter().chain(rest).collect()
}

fn short(label: &str) -> String {
    if label.chars().count() <= MAX_LABEL {
        label.to_string()
    } else {
        let mut s: String = label.chars().take(MAX_LABEL - 1).collect();
        s.push('\u{2026}');
        s
    }
}

fn num(v: f64) -> String {
    crate::model::infer::fmt_value(v)
}

/// The ranking as a standalone SVG element.
pub fn svg(r: &Ranking) -> String {
    let entries = sorted(r);
    let label_w = entries
        .iter()
        .map(|e| short(&e.label).chars().count())
        .max()
        .unwrap_or(4) as f64
        * CHAR
        + 34.0;
    let width = label_w + BAR_AREA + 150.0;
    let height = TOP + ROW * entries.len().max(1) as f64 + 26.0;
    let top_value = entries
        .iter()
        .flat_map(|e| [e.max, e.median])
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    let scale = if top_value > 0.0 {
        BAR_AREA / top_value
    } else {
        0.0
    };
    let x0 = label_w;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"ranking\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"sans-serif\" font-size=\"12\" role=\"img\" aria-label=\"{}\">\n",
        escape(&r.title)
    );
    s.push_str(&format!(
        "<text x=\"4\" y=\"16\" font-size=\"13\" font-weight=\"bold\">{} ({}; {} is better)</text>\n",
        escape(&r.title),
        escape(&r.unit),
        match r.better {
            Better::Lower => "lower",
            Better::Higher => "higher",
        }
    ));
    if entries.is_empty() {
        s.push_str(&format!(
            "<text x=\"4\" y=\"{:.0}\" fill=\"#5b6475\">no entries</text>\n",
            TOP + 14.0
        ));
    }
    let mut rank = 0;
    for (i, e) in entries.iter().enumerate() {
        let y = TOP + ROW * i as f64;
        let ok = e.ranked && e.median.is_finite();
        let place = if ok {
            rank += 1;
            format!("{rank}.")
        } else {
            "\u{2013}".to_string()
        };
        s.push_str(&format!(
            "<g><title>{}: median {} {u}, min {}, max {}, {} samples{}</title>\n",
            escape(&e.label),
            num(e.median),
            num(e.min),
            num(e.max),
            e.samples,
            e.note
                .iter()
                .chain(&e.flags)
                .map(|n| format!("; {}", escape(n)))
                .collect::<String>(),
            u = escape(&r.unit)
        ));
        s.push_str(&format!(
            "<text x=\"4\" y=\"{:.1}\" fill=\"#5b6475\">{place}</text><text x=\"28\" y=\"{:.1}\">{}</text>\n",
            y + 16.0,
            y + 16.0,
            escape(&short(&e.label))
        ));
        let flagged = !e.flags.is_empty();
        if ok {
            let w = (e.median * scale).max(1.0);
            // A flagged figure is never drawn in the winner's colour: grey,
            // as the heatmaps draw a flagged cell.
            let fill = if flagged {
                "#9aa0aa"
            } else if rank == 1 {
                "#2e8b57"
            } else {
                "#5b8db8"
            };
            s.push_str(&format!(
                "<rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"16\" fill=\"{fill}\" />\n",
                y + 4.0
            ));
            if e.min.is_finite() && e.max.is_finite() && e.max > e.min {
                let (a, b) = (x0 + e.min * scale, x0 + e.max * scale);
                let my = y + 12.0;
                s.push_str(&format!(
                    "<path d=\"M{a:.1} {my:.1}H{b:.1}M{a:.1} {:.1}V{:.1}M{b:.1} {:.1}V{:.1}\" stroke=\"#1d2330\" stroke-width=\"1.3\" fill=\"none\" />\n",
                    my - 5.0,
                    my + 5.0,
                    my - 5.0,
                    my + 5.0
                ));
            }
            let tx = x0 + e.median.max(e.max) * scale + 6.0;
            s.push_str(&format!(
                "<text x=\"{tx:.1}\" y=\"{:.1}\">{}{} {}</text>\n",
                y + 16.0,
                num(e.median),
                crate::stats::flags::star(flagged),
                escape(&r.unit)
            ));
        } else {
            s.push_str(&format!(
                "<rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{BAR_AREA:.0}\" height=\"16\" fill=\"#eceef1\" /><text x=\"{:.1}\" y=\"{:.1}\" fill=\"#5b6475\">not ranked{}</text>\n",
                y + 4.0,
                x0 + 6.0,
                y + 16.0,
                e.note
                    .as_ref()
                    .map(|n| format!(": {}", escape(&short(n))))
                    .unwrap_or_default()
            ));
        }
        s.push_str("</g>\n");
    }
    let axis_y = TOP + ROW * entries.len().max(1) as f64 + 4.0;
    s.push_str(&format!(
        "<path d=\"M{x0:.1} {TOP:.0}V{axis_y:.1}H{:.1}\" stroke=\"#9aa1ad\" fill=\"none\" /><text x=\"{x0:.1}\" y=\"{:.1}\" fill=\"#5b6475\">0</text><text x=\"{:.1}\" y=\"{:.1}\" fill=\"#5b6475\" text-anchor=\"end\">{} {}</text>\n",
        x0 + BAR_AREA,
        axis_y + 16.0,
        x0 + BAR_AREA,
        axis_y + 16.0,
        num(top_value),
        escape(&r.unit)
    ));
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(label: &str, median: f64, ranked: bool) -> RankEntry {
        RankEntry {
            label: label.into(),
            median,
            min: median * 0.9,
            max: median * 1.1,
            samples: 5,
            note: (!ranked).then(|| "failed: <oops>".to_string()),
            ranked,
            flags: Vec::new(),
        }
    }

    #[test]
    fn best_first_in_the_ranking_direction_unranked_last() {
        let mut r = Ranking {
            title: "t".into(),
            unit: "s".into(),
            better: Better::Lower,
            entries: vec![
                entry("slow", 3.0, true),
                entry("broken", 0.0, false),
                entry("fast", 1.0, true),
            ],
        };
        let order: Vec<&str> = sorted(&r).iter().map(|e| e.label.as_str()).collect();
        assert_eq!(order, ["fast", "slow", "broken"]);
        r.better = Better::Higher;
        let order: Vec<&str> = sorted(&r).iter().map(|e| e.label.as_str()).collect();
        assert_eq!(order, ["slow", "fast", "broken"]);
    }

    #[test]
    fn svg_is_xml_with_every_label_escaped() {
        let r = Ranking {
            title: "policy <b>".into(),
            unit: "GB/s".into(),
            better: Better::Higher,
            entries: vec![entry("bind:0 & <x>", 12.5, true), entry("gone", 0.0, false)],
        };
        let s = svg(&r);
        let doc = roxmltree::Document::parse(&s).expect("well-formed SVG");
        let texts: Vec<String> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text().map(String::from))
            .collect();
        assert!(texts.iter().any(|t| t == "bind:0 & <x>"), "{texts:?}");
        assert!(texts.iter().any(|t| t.contains("12.50 GB/s")), "{texts:?}");
        assert!(texts
            .iter()
            .any(|t| t.contains("not ranked: failed: <oops>")));
        assert!(!s.contains("<b>") && !s.contains("<oops>"));
    }

    #[test]
    fn a_flagged_entry_is_starred_grey_and_says_why() {
        let mut best = entry("first", 20.0, true);
        best.flags = vec!["unstable: CV 30.0 %".into()];
        let r = Ranking {
            title: "t".into(),
            unit: "GB/s".into(),
            better: Better::Higher,
            entries: vec![best, entry("second", 10.0, true)],
        };
        let s = svg(&r);
        let doc = roxmltree::Document::parse(&s).expect("well-formed SVG");
        let fills: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("rect"))
            .filter_map(|n| n.attribute("fill"))
            .collect();
        // The best figure is flagged: grey, never the winner's green; the
        // trusted second keeps its plain colour.
        assert_eq!(fills, ["#9aa0aa", "#5b8db8"]);
        let texts: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text") || n.has_tag_name("title"))
            .filter_map(|n| n.text())
            .collect();
        assert!(texts.contains(&"20.00* GB/s"), "{texts:?}");
        assert!(texts.contains(&"10.00 GB/s"), "{texts:?}");
        assert!(
            texts
                .iter()
                .any(|t| t.starts_with("first: median") && t.ends_with("; unstable: CV 30.0 %")),
            "{texts:?}"
        );
        // Unflagged, the best is green.
        let mut plain = r.clone();
        plain.entries[0].flags.clear();
        assert!(svg(&plain).contains("fill=\"#2e8b57\""));
    }
}
