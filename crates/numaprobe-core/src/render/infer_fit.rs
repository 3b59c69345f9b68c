//! The inference within a terminal and within summary.md
//! (`render::fit`): the levels, the drawing when it fits, the findings and
//! the advice, long lists folded or cut, for the main job's summary and
//! `numaprobe infer`'s table; the full tables are `render::infer`'s.

use super::fit::{self, Long};
use super::infer::{grid_left_out, title};
use super::table::Align;
use crate::model::infer::Inference;

impl Inference {
    /// [`Self::to_text`] within a terminal (`render::fit`) for the main
    /// job's summary: the grid and the node-by-node tables only when they
    /// fit its width (the levels table carries their hops), long lists of
    /// cells and groups cut, findings and advice wrapped; the report and
    /// `numaprobe infer` keep every figure.
    pub fn to_terminal(&self, advice: bool) -> String {
        self.fitted(
            advice,
            "the report has them all",
            "the report draws the interconnect",
        )
    }

    /// [`Self::to_terminal`] for `numaprobe infer`, whose rest is in its
    /// Markdown and whose picture is `--graph-svg`.
    pub fn to_terminal_alone(&self, advice: bool) -> String {
        self.fitted(
            advice,
            "--format markdown has them all",
            "--graph-svg FILE draws the interconnect",
        )
    }

    /// Within a terminal; a folded list says `whole`, a drawing too wide
    /// says `drawn`.
    fn fitted(&self, advice: bool, whole: &str, drawn_by: &str) -> String {
        let inf = self;
        let mut s = format!("{}\n\n", fit::cut(&title(inf), fit::WIDTH));
        let mut levels = inf.levels_table();
        if let Some(a) = levels.align.last_mut() {
            *a = Align::Left;
        }
        s.push_str(&fit::table(&levels, Long::Wrap, whole, String::new));
        s.push_str("\nInterconnect\n");
        let drawing = inf.ascii_drawing();
        let drawn = fit::fits(&drawing);
        if drawn {
            s.push_str(&drawing);
        } else {
            s.push_str(&format!(
                "{} nodes: too wide to draw on a terminal ({drawn_by})\n",
                inf.nodes.len()
            ));
            let mut legend = String::new();
            inf.legend(&mut legend);
            s.push_str(&fit::lines(&legend));
        }
        if drawn && grid_left_out(inf).is_none() {
            s.push('\n');
            s.push_str(&fit::table(
                &inf.hops_table(),
                Long::Wrap,
                whole,
                String::new,
            ));
            if inf.hierarchy.len() > 1 {
                s.push('\n');
                s.push_str(&fit::table(
                    &inf.distance_table(),
                    Long::Wrap,
                    whole,
                    String::new,
                ));
            }
        }
        if !inf.findings.is_empty() {
            s.push('\n');
            let t = Inference::findings_table(&inf.findings, "Findings");
            s.push_str(&fit::table(&t, Long::Wrap, whole, String::new));
        }
        if advice {
            s.push('\n');
            let t = Inference::findings_table(&inf.advice, "Advice");
            s.push_str(&fit::table(&t, Long::Wrap, whole, String::new));
        }
        s
    }

    /// summary.md's part: the levels, the drawing when it fits a page line,
    /// the findings and (with `advice`) the advice, within [`fit::WIDTH`];
    /// the report and `numaprobe infer --format markdown` keep every cell.
    pub fn to_summary_markdown(&self, advice: bool) -> String {
        let inf = self;
        let whole = "the report has them all";
        let mut s = format!("## {}\n\n", fit::cut(&title(inf), fit::WIDTH - 3));
        let mut levels = inf.levels_table();
        if let Some(a) = levels.align.last_mut() {
            *a = Align::Left;
        }
        s.push_str(&fit::markdown(&levels, whole, String::new));
        s.push_str("\n**Interconnect**\n\n");
        let drawing = inf.ascii_drawing();
        if fit::fits(&drawing) {
            s.push_str(&format!("```text\n{drawing}```\n"));
        } else {
            s.push_str(&format!(
                "{} nodes: too wide to draw on a page line (the report draws the interconnect)\n",
                inf.nodes.len()
            ));
            let mut legend = String::new();
            inf.legend(&mut legend);
            for l in legend.lines().map(str::trim).filter(|l| !l.is_empty()) {
                s.push('\n');
                s.push_str(&fit::paragraph("", l, 3));
            }
        }
        let mut lists = vec![(&inf.findings, "Findings")];
        if advice {
            lists.push((&inf.advice, "Advice"));
        }
        for (items, name) in lists {
            if !items.is_empty() {
                s.push('\n');
                let t = Inference::findings_table(items, name);
                s.push_str(&fit::markdown(&t, whole, String::new));
            }
        }
        s
    }
}
