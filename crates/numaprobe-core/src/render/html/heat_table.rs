//! One heatmap table: node numbers as sticky row and column headers, a
//! background colour per cell from how good its value is, flagged cells
//! marked. The matrices' heatmaps and the c2c section both draw with it.

use super::page::escape;

/// Above this many columns the table is drawn compact (smaller type).
pub(super) const COMPACT_COLUMNS: usize = 12;

/// One heatmap cell: (text, background, flagged, tooltip).
pub(super) struct HeatCell {
    pub text: String,
    pub colour: Option<String>,
    pub flagged: bool,
    pub title: String,
}

pub(super) fn heat_table(
    rows: &[u32],
    cols: &[u32],
    cells: &[Vec<HeatCell>],
    corner: &str,
) -> String {
    let compact = if cols.len() > COMPACT_COLUMNS {
        " compact"
    } else {
        ""
    };
    let mut s = format!(
        "<div class=\"scroll\"><table class=\"heat{compact}\">\n<thead><tr><th class=\"corner\">{}</th>",
        escape(corner)
    );
    for c in cols {
        s.push_str(&format!("<th>{c}</th>"));
    }
    s.push_str("</tr></thead>\n<tbody>\n");
    for (r, row) in rows.iter().zip(cells) {
        s.push_str(&format!("<tr><th>{r}</th>"));
        for c in row {
            let mut class = Vec::new();
            if c.flagged {
                class.push("flag");
            }
            if c.colour.is_none() || c.flagged {
                class.push("none");
            }
            let class = if class.is_empty() {
                String::new()
            } else {
                format!(" class=\"{}\"", class.join(" "))
            };
            // A flagged cell is never drawn in a colour of the scale, good or
            // bad: its value is not the machine's. It is hatched, neutral.
            let style = c
                .colour
                .as_ref()
                .filter(|_| !c.flagged)
                .map(|col| format!(" style=\"background:{col}\""))
                .unwrap_or_default();
            s.push_str(&format!(
                "<td{class}{style} title=\"{}\">{}</td>",
                escape(&c.title),
                escape(&c.text)
            ));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody></table></div>\n");
    s
}

/// Position of `v` between `lo` and `hi` on the good-to-bad scale.
pub(super) fn badness(v: f64, lo: f64, hi: f64, lower_is_better: bool) -> f64 {
    if hi <= lo {
        return 0.0;
    }
    let t = (v - lo) / (hi - lo);
    if lower_is_better {
        t
    } else {
        1.0 - t
    }
}
