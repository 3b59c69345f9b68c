//! Renderers of `numaprobe diff` and `numaprobe check`: aligned text, CSV
//! (one table, its `row` column saying what a line holds), Markdown and the
//! JSON contract. They read only `model::diff`.

use crate::clean;
use crate::model::diff::{CellDiff, CheckReport, DiffReport, Difference, Origin, Section};
use crate::model::format::Format;
use crate::render::table::Align;
use crate::render::table::Table;

/// A diff in the chosen format.
pub fn diff(r: &DiffReport, format: Format) -> String {
    match format {
        Format::Json => crate::render::to_json(r),
        Format::Csv => diff_csv(r).to_csv(),
        Format::Markdown => diff_markdown(r),
        Format::Table => diff_text(r),
    }
}

/// A check in the chosen format.
pub fn check(r: &CheckReport, format: Format) -> String {
    match format {
        Format::Json => crate::render::to_json(r),
        Format::Csv => differences_table(&r.differences, "expected", "found").to_csv(),
        Format::Markdown => check_markdown(r),
        Format::Table => check_text(r),
    }
}

fn origin(o: &Origin) -> String {
    let mut parts = vec![format!("{}: {}", o.kind, o.documents.join(", "))];
    if let Some(h) = &o.hostname {
        parts.push(format!("host {h}"));
    }
    if let Some(k) = &o.kernel {
        parts.push(format!("kernel {k}"));
    }
    if let Some(s) = &o.start {
        parts.push(s.clone());
    }
    if !o.complete {
        parts.push("partial".into());
    }
    shown(&format!("{} ({})", o.path, parts.join("; ")))
}

/// A document's text (a path, a host name, an item, a value, a note) as one
/// clean line of the text and Markdown forms; the tables clean their cells
/// themselves.
fn shown(s: &str) -> String {
    clean::line(s, crate::render::table::CELL_MAX)
}

fn criteria(r: &DiffReport) -> String {
    let c = &r.criteria;
    let noise = if r.a.runs.is_empty() && r.b.runs.is_empty() {
        "twice their samples' standard deviations in quadrature"
    } else {
        "twice the sides' noises in quadrature; a side of several runs: the spread of their medians"
    };
    format!(
        "a cell changed when Mann-Whitney U gives p < {} and the medians differ by more than {} % (the minimum effect) and more than the runs' noise ({noise}), both cells trusted and both runs measured under like conditions; 95 % interval: bootstrap of the median difference, {} resamples, seed {:#x}",
        c.alpha, c.threshold_pct, c.resamples, c.seed
    )
}

/// The one-line answer.
pub fn summary_line(r: &DiffReport) -> String {
    let s = &r.summary;
    let mut parts = Vec::new();
    if s.differences > 0 {
        parts.push(format!(
            "{} topology/firmware/parameter difference{}",
            s.differences,
            if s.differences == 1 { "" } else { "s" }
        ));
    }
    let counts = [
        (s.worse, "worse"),
        (s.better, "better"),
        (s.only_a, "only in A"),
        (s.only_b, "only in B"),
        (s.inconclusive, "inconclusive"),
        (s.within_noise, "within noise"),
        (s.negligible, "negligible"),
        (s.unchanged, "unchanged"),
    ];
    let cells: Vec<String> = counts
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, w)| format!("{n} {w}"))
        .collect();
    if !cells.is_empty() {
        parts.push(format!("cells: {}", cells.join(", ")));
    }
    format!(
        "{}{}{}",
        if s.equal { "equal" } else { "different" },
        if parts.is_empty() { "" } else { ": " },
        parts.join("; ")
    )
}

fn differences_table(d: &[Difference], a: &str, b: &str) -> Table {
    let mut t = Table::new(["section", "item", a, b]).with_align(vec![Align::Left; 4]);
    for x in d {
        t.push([
            x.section.name().to_string(),
            x.item.clone(),
            x.a.clone(),
            x.b.clone(),
        ]);
    }
    t
}

fn num(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |p| format!("{p:+.1} %"))
}

fn interval(c: &CellDiff) -> String {
    match (c.ci_low_pct, c.ci_high_pct) {
        (Some(l), Some(h)) => format!("{l:+.1} .. {h:+.1} %"),
        _ => "-".into(),
    }
}

fn p_value(c: &CellDiff) -> String {
    c.p_value.map_or("-".into(), |p| {
        if p < 0.001 {
            "<0.001".into()
        } else {
            format!("{p:.3}")
        }
    })
}

fn cells_table(r: &DiffReport) -> Table {
    let mut t = Table::new([
        "kind",
        "cpu",
        "mem",
        "A median",
        "B median",
        "change",
        "95 % interval",
        "p",
        "verdict",
        "notes",
    ]);
    t.align[8] = Align::Left;
    t.align[9] = Align::Left;
    for c in &r.cells {
        let side = |s: &Option<crate::model::diff::CellSide>| {
            s.as_ref().map_or("-".into(), |s| {
                format!("{} {} (n={})", num(s.median), c.unit, s.samples)
            })
        };
        t.push([
            c.kind.clone(),
            c.cpu_node.to_string(),
            c.mem_node.to_string(),
            side(&c.a),
            side(&c.b),
            pct(c.change_pct),
            interval(c),
            p_value(c),
            c.verdict.name().to_string(),
            c.reason
                .iter()
                .chain(&c.notes)
                .cloned()
                .collect::<Vec<_>>()
                .join("; "),
        ]);
    }
    t
}

fn diff_text(r: &DiffReport) -> String {
    let mut out = format!("A: {}\nB: {}\n", origin(&r.a), origin(&r.b));
    if !r.cells.is_empty() {
        out.push_str(&format!("{}\n", criteria(r)));
    }
    if !r.differences.is_empty() {
        out.push_str(&format!("\nDifferences ({})\n", r.differences.len()));
        out.push_str(&differences_table(&r.differences, "A", "B").to_text());
    }
    if !r.cells.is_empty() {
        out.push_str("\nCells\n");
        out.push_str(&cells_table(r).to_text());
    }
    for n in &r.notes {
        out.push_str(&format!("\nnote: {}", shown(n)));
    }
    if !r.notes.is_empty() {
        out.push('\n');
    }
    out.push_str(&format!("\n{}\n", summary_line(r)));
    out
}

fn diff_markdown(r: &DiffReport) -> String {
    let mut out = format!(
        "# numaprobe diff\n\n- A: {}\n- B: {}\n- {}\n\n**{}**\n",
        origin(&r.a),
        origin(&r.b),
        criteria(r),
        summary_line(r)
    );
    if !r.differences.is_empty() {
        out.push_str("\n## Differences\n\n");
        out.push_str(&differences_table(&r.differences, "A", "B").to_markdown());
    }
    if !r.cells.is_empty() {
        out.push_str("\n## Cells\n\n");
        out.push_str(&cells_table(r).to_markdown());
    }
    if !r.notes.is_empty() {
        out.push_str("\n## Notes\n\n");
        for n in &r.notes {
            out.push_str(&format!("- {}\n", shown(n)));
        }
    }
    out
}

/// One table for CSV: `row` is `difference` or `cell`; a difference fills
/// section/item/a/b, a cell the columns from `kind` on.
fn diff_csv(r: &DiffReport) -> Table {
    let mut t = Table::new([
        "row",
        "section",
        "item",
        "a",
        "b",
        "kind",
        "cpu_node",
        "mem_node",
        "unit",
        "a_median",
        "b_median",
        "a_samples",
        "b_samples",
        "change",
        "change_pct",
        "ci_low_pct",
        "ci_high_pct",
        "p_value",
        "verdict",
        "reason",
    ]);
    let f = |v: Option<f64>| v.map_or(String::new(), |x| format!("{x}"));
    for d in &r.differences {
        let mut row = vec![
            "difference".to_string(),
            d.section.name().into(),
            d.item.clone(),
            d.a.clone(),
            d.b.clone(),
        ];
        row.resize(20, String::new());
        t.push(row);
    }
    for c in &r.cells {
        let (am, an) = c.a.as_ref().map_or((None, String::new()), |s| {
            (Some(s.median), s.samples.to_string())
        });
        let (bm, bn) = c.b.as_ref().map_or((None, String::new()), |s| {
            (Some(s.median), s.samples.to_string())
        });
        t.push([
            "cell".to_string(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            c.kind.clone(),
            c.cpu_node.to_string(),
            c.mem_node.to_string(),
            c.unit.clone(),
            f(am),
            f(bm),
            an,
            bn,
            f(c.change),
            f(c.change_pct),
            f(c.ci_low_pct),
            f(c.ci_high_pct),
            f(c.p_value),
            c.verdict.name().into(),
            c.reason.clone().unwrap_or_default(),
        ]);
    }
    t
}

/// One line per difference: what the saved file says, what was found.
fn check_lines(r: &CheckReport) -> String {
    r.differences
        .iter()
        .map(|d| {
            format!(
                "{}: {}: expected {}, found {}\n",
                d.section.name(),
                shown(&d.item),
                shown(&d.a),
                shown(&d.b)
            )
        })
        .collect()
}

/// A check's one-line answer: what was compared, with what, and how many
/// differences.
pub fn check_summary(r: &CheckReport) -> String {
    let (what, expect, kind) = (compared(r), shown(&r.expect), shown(&r.expect_kind));
    // Every section left out (each one's note says why: measured with other
    // parameters, not given): no difference found is not a match.
    if r.matches && r.checked.is_empty() {
        let why = if r.notes.is_empty() {
            ""
        } else {
            "; the notes say why"
        };
        format!("nothing of {what} was compared with {expect} ({kind}){why}")
    } else if r.matches {
        format!("{what} matches {expect} ({kind})")
    } else {
        let n = r.differences.len();
        format!(
            "{what} differs from {expect} ({kind}): {n} difference{}",
            if n == 1 { "" } else { "s" }
        )
    }
}

/// What a check held against the expectation, in the user's words: this
/// machine (the system root), or the dump `--sysfs-root` named; with
/// `--measured` its document too, alone when only cells were compared (a
/// matrix expectation, or `--only latency,bandwidth`), since then nothing
/// of the machine itself was read.
fn compared(r: &CheckReport) -> String {
    let machine = if r.root == "/" {
        "this machine".to_string()
    } else {
        shown(&r.root)
    };
    let Some(measured) = &r.measured else {
        return machine;
    };
    let cells_only = matches!(r.expect_kind.as_str(), "latency" | "bandwidth")
        || (!r.sections.is_empty()
            && r.sections
                .iter()
                .all(|s| matches!(s, Section::Latency | Section::Bandwidth)));
    if cells_only {
        shown(measured)
    } else {
        format!("{machine} (measured: {})", shown(measured))
    }
}

/// The longest drain reason written: `sinfo -R` and `scontrol show node`
/// show it whole on one line.
pub const DRAIN_REASON_MAX: usize = 160;

/// What ends every drain reason `check --slurm-drain` writes: how a drain
/// is known to be numaprobe's (by the check, to replace its own reason; by
/// `fleet`, to say who drained a node).
pub const DRAIN_MARK: &str = "[numaprobe]";

/// Items up to this long lead a drain reason as they are; a longer one
/// ("transparent huge pages") is named by its section ("thp").
const SHORT_ITEM: usize = 16;

/// The reason a differing node is drained with (`check --slurm-drain`):
/// the first difference first, so that the 20 characters `sinfo -R` shows
/// say what differs (`allowed CPUs 0-1!=0`: expected, then found), `(+N
/// more)` when there are more, then [`DRAIN_MARK`]; at most
/// [`DRAIN_REASON_MAX`] characters, no control characters. None when the
/// machine matches.
pub fn drain_reason(r: &CheckReport) -> Option<String> {
    let first = r.differences.first()?;
    let section = first.section.name();
    let what = if first.item.chars().count() <= SHORT_ITEM
        || first.item.to_ascii_lowercase().contains(section)
    {
        first.item.as_str()
    } else {
        section
    };
    let tail = match r.differences.len() - 1 {
        0 => format!(" {DRAIN_MARK}"),
        n => format!(" (+{n} more) {DRAIN_MARK}"),
    };
    let line = clean::line(
        &format!("{what} {}!={}", first.a, first.b),
        clean::UNCLIPPED,
    );
    let room = DRAIN_REASON_MAX - tail.chars().count();
    let body = if line.chars().count() > room {
        let mut cut: String = line.chars().take(room - 3).collect();
        cut.push_str("...");
        cut
    } else {
        line
    };
    Some(body + &tail)
}

/// Whether a node's drain reason is numaprobe's own: one that
/// [`drain_reason`] wrote (it ends with [`DRAIN_MARK`], before the
/// `[user@time]` stamp `scontrol show node` adds), or one in the form
/// numaprobe 0.1.0 wrote (`numaprobe: ...`).
pub fn is_numaprobe_drain(reason: &str) -> bool {
    let r = reason.trim();
    r.starts_with("numaprobe:") || without_stamp(r).ends_with(DRAIN_MARK)
}

/// A drain reason without the ` [user@time]` stamp that `scontrol show
/// node` puts after it (`sinfo`'s `%E` has none).
pub fn without_stamp(reason: &str) -> &str {
    let r = reason.trim_end();
    match r.rfind(" [") {
        Some(i) if r.ends_with(']') && r[i..].contains('@') => r[..i].trim_end(),
        _ => r,
    }
}

fn check_text(r: &CheckReport) -> String {
    let mut out = check_lines(r);
    out.push_str(&format!(
        "{}\nchecked: {}\n",
        check_summary(r),
        if r.checked.is_empty() {
            "nothing".to_string()
        } else {
            r.checked.join("; ")
        }
    ));
    out
}

fn check_markdown(r: &CheckReport) -> String {
    let mut out = format!(
        "# numaprobe check\n\n**{}**\n\nChecked:\n\n",
        check_summary(r)
    );
    for c in &r.checked {
        out.push_str(&format!("- {c}\n"));
    }
    if !r.differences.is_empty() {
        out.push_str("\n## Differences\n\n");
        out.push_str(&differences_table(&r.differences, "expected", "found").to_markdown());
    }
    // What was not compared belongs in the saved page too, not only on
    // stderr: a section left unjudged is part of the answer.
    if !r.notes.is_empty() {
        out.push_str("\n## Notes\n\n");
        for n in &r.notes {
            out.push_str(&format!("- {}\n", shown(n)));
        }
    }
    out
}

#[cfg(test)]
#[path = "diff_tests.rs"]
mod tests;
