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

/// A measured figure as the colour scale sees it: its median and its
/// spread (one standard deviation, median x CV).
#[derive(Debug, Clone, Copy)]
pub(super) struct Noisy {
    pub value: f64,
    pub spread: f64,
}

impl Noisy {
    pub fn new(median: f64, cv: f64) -> Noisy {
        Noisy {
            value: median,
            spread: (median * cv).abs(),
        }
    }

    /// Whether the two differ by more than their spreads together.
    fn apart(self, o: Noisy) -> bool {
        (self.value - o.value).abs() > self.spread + o.spread
    }
}

/// A heatmap's colours: the best and worst trusted figures, and only when
/// they differ beyond their spreads. One figure, or figures all within
/// noise of each other, have no best or worst: they are drawn neutral,
/// never green against red for a difference the measurement cannot tell.
#[derive(Debug, Clone, Copy)]
pub(super) struct Scale {
    pub best: Noisy,
    pub worst: Noisy,
    lower_is_better: bool,
}

impl Scale {
    pub fn of(trusted: &[Noisy], lower_is_better: bool) -> Option<Scale> {
        let by = |a: &&Noisy, b: &&Noisy| a.value.total_cmp(&b.value);
        let lo = *trusted.iter().min_by(by)?;
        let hi = *trusted.iter().max_by(by)?;
        let (best, worst) = if lower_is_better { (lo, hi) } else { (hi, lo) };
        best.apart(worst).then_some(Scale {
            best,
            worst,
            lower_is_better,
        })
    }

    /// The colour of `f`: the best's when within its spread of the best,
    /// the worst's when within the worst's, else its place between them.
    pub fn colour(&self, f: Noisy) -> String {
        let t = if !f.apart(self.best) {
            0.0
        } else if !f.apart(self.worst) {
            1.0
        } else {
            let (lo, hi) = if self.lower_is_better {
                (self.best.value, self.worst.value)
            } else {
                (self.worst.value, self.best.value)
            };
            badness(f.value, lo, hi, self.lower_is_better)
        };
        super::page::scale_colour(t)
    }
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

#[cfg(test)]
mod scale_tests {
    use super::*;

    #[test]
    fn one_figure_or_figures_within_noise_get_no_colour() {
        assert!(Scale::of(&[Noisy::new(446.2, 0.3)], true).is_none());
        assert!(Scale::of(&[], true).is_none());
        // 155.5 against 156.7 ns with a few per cent of spread each.
        let close = [Noisy::new(155.5, 0.02), Noisy::new(156.7, 0.02)];
        assert!(Scale::of(&close, true).is_none());
        // Equal values with no spread have no best either.
        assert!(Scale::of(&[Noisy::new(5.0, 0.0), Noisy::new(5.0, 0.0)], false).is_none());
    }

    #[test]
    fn figures_apart_get_the_ends_and_a_close_one_shares_its_neighbours_colour() {
        let best = Noisy::new(100.0, 0.01);
        let worst = Noisy::new(200.0, 0.01);
        let s = Scale::of(&[worst, best], true).expect("apart beyond noise");
        assert_eq!(s.best.value, 100.0);
        let green = super::super::page::scale_colour(0.0);
        let red = super::super::page::scale_colour(1.0);
        assert_eq!(s.colour(best), green);
        assert_eq!(s.colour(worst), red);
        // 101 is within the best's spread: the same colour as the best.
        assert_eq!(s.colour(Noisy::new(101.0, 0.0)), green);
        assert_eq!(s.colour(Noisy::new(199.0, 0.0)), red);
        let mid = s.colour(Noisy::new(150.0, 0.0));
        assert!(mid != green && mid != red, "{mid}");
        // Higher is better (bandwidth): the ends swap.
        let s = Scale::of(&[worst, best], false).unwrap();
        assert_eq!(s.colour(worst), green);
        assert_eq!(s.colour(best), red);
    }
}
