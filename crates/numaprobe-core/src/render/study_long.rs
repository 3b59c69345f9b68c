//! The long forms of a study report: the CSV (one loadable table with every
//! case, thread, sample, note and myth finding) and the Markdown per-thread
//! tables, so those formats keep what the JSON has.
//!
//! The CSV's `row` column says what a line is (doc/commands/study.md):
//! `case` (one bar: `median_s`..`n` summarise the per-sample totals, `wall_*`
//! the wall times, `bytes` what all threads touch per sample and `gbs` that
//! over the median wall time), `thread` (one foreground thread of a case: its label,
//! placement, time summary, `bytes` and `gbs` over its median time), `sample` (one timed repetition: `total_s`,
//! `wall_s`, `threads_s` = the threads' times in thread order, space
//! separated), `note` (`note` holds the text), `myth` (a contradiction: the
//! slower case in `case`, the faster in `faster_case`). Fields that do not
//! apply to a row are empty; every line has every field.

use super::table::{Align, Table};
use crate::model::study::{CaseResult, ExperimentResult, StudyReport, TimeSummary};

/// The CSV columns, in order.
pub const CSV_COLUMNS: [&str; 45] = [
    "row",
    "experiment",
    "figure",
    "mix",
    "background",
    "subscription",
    "duty_percent",
    "period_us",
    "background_threads",
    "background_cpus",
    "remaining_cores",
    "baseline",
    "case",
    "description",
    "hops",
    "thread",
    "label",
    "access",
    "cpu",
    "node",
    "core",
    "mem_node",
    "cpu_verified",
    "pages_on_node",
    "placement_ok",
    "sample",
    "median_s",
    "min_s",
    "max_s",
    "mean_s",
    "cv",
    "n",
    "wall_median_s",
    "wall_min_s",
    "wall_max_s",
    "percent",
    "bytes",
    "gbs",
    "total_s",
    "wall_s",
    "threads_s",
    "myth",
    "faster_case",
    "difference_percent",
    "note",
];

fn col(name: &str) -> usize {
    CSV_COLUMNS
        .iter()
        .position(|c| *c == name)
        .unwrap_or(CSV_COLUMNS.len() - 1)
}

/// A row being filled by column name.
struct Row(Vec<String>);

impl Row {
    fn new(kind: &str) -> Row {
        let mut r = Row(vec![String::new(); CSV_COLUMNS.len()]);
        r.set("row", kind);
        r
    }
    fn set(&mut self, name: &str, value: impl ToString) -> &mut Row {
        self.0[col(name)] = value.to_string();
        self
    }
    fn experiment(&mut self, e: &ExperimentResult) -> &mut Row {
        let b = &e.background;
        self.set("experiment", &e.id)
            .set("figure", e.figure.clone().unwrap_or_default())
            .set("mix", &e.mix)
            .set("background", &b.level)
            .set("subscription", &b.subscription)
            .set("duty_percent", b.duty_percent)
            .set("period_us", b.period_us)
            .set("background_threads", b.threads)
            .set("background_cpus", join(&b.cpus))
            .set("remaining_cores", b.remaining_cores)
            .set("baseline", &e.baseline)
    }
    fn case(&mut self, c: &CaseResult) -> &mut Row {
        self.set("case", &c.label)
            .set("description", &c.description)
            .set("hops", join(&c.hops))
    }
    fn summary(&mut self, s: &TimeSummary) -> &mut Row {
        self.set("median_s", s.median)
            .set("min_s", s.min)
            .set("max_s", s.max)
            .set("mean_s", s.mean)
            .set("cv", s.cv)
            .set("n", s.n)
    }
}

fn join<T: ToString>(v: &[T]) -> String {
    v.iter().map(T::to_string).collect::<Vec<_>>().join(" ")
}

fn access_name(a: &crate::model::label::Access) -> String {
    match serde_json::to_value(a) {
        Ok(serde_json::Value::String(s)) => s,
        _ => format!("{a:?}"),
    }
}

impl StudyReport {
    /// Everything as one CSV-ready table (see the module comment).
    pub fn long_table(&self) -> Table {
        let mut rows: Vec<Row> = Vec::new();
        if !self.complete {
            let mut r = Row::new("note");
            r.set("note", "incomplete: not every case has been measured");
            rows.push(r);
        }
        for n in &self.notes {
            let mut r = Row::new("note");
            r.set("note", n);
            rows.push(r);
        }
        for e in &self.experiments {
            for c in &e.cases {
                let mut r = Row::new("case");
                r.experiment(e)
                    .case(c)
                    .summary(&c.total)
                    .set("wall_median_s", c.wall.median)
                    .set("wall_min_s", c.wall.min)
                    .set("wall_max_s", c.wall.max)
                    .set("percent", c.percent)
                    .set("bytes", c.bytes)
                    .set("gbs", c.gbs)
                    .set("placement_ok", c.placement_ok);
                rows.push(r);
                for (i, t) in c.threads.iter().enumerate() {
                    let mut r = Row::new("thread");
                    r.experiment(e)
                        .case(c)
                        .set("hops", t.hops)
                        .set("thread", i + 1)
                        .set("label", &t.label)
                        .set("access", access_name(&t.access))
                        .set("cpu", t.cpu)
                        .set("node", t.node)
                        .set("core", t.core)
                        .set("mem_node", t.mem_node)
                        .set("cpu_verified", t.cpu_verified)
                        .set("pages_on_node", t.pages_on_node)
                        .set("placement_ok", t.placement_ok)
                        .set("bytes", t.bytes)
                        .set("gbs", t.gbs)
                        .summary(&t.time);
                    rows.push(r);
                }
                for (i, s) in c.samples.iter().enumerate() {
                    let mut r = Row::new("sample");
                    r.experiment(e)
                        .case(c)
                        .set("sample", i + 1)
                        .set("total_s", s.total_s)
                        .set("wall_s", s.wall_s)
                        .set("threads_s", join(&s.threads_s));
                    rows.push(r);
                }
            }
        }
        for f in self.myths.iter().flatten() {
            for (myth, list) in [
                ("equal_hops", &f.equal_hops),
                ("more_hops_faster", &f.more_hops_faster),
            ] {
                for c in list {
                    let mut r = Row::new("myth");
                    r.set("experiment", &f.experiment)
                        .set("case", &c.slower.label)
                        .set("description", &c.slower.description)
                        .set("hops", join(&c.slower.hops))
                        .set("total_s", c.slower.total_s)
                        .set("percent", c.slower.percent)
                        .set("myth", myth)
                        .set("faster_case", &c.faster.label)
                        .set("difference_percent", c.difference_percent)
                        .set("note", format!("a difference counts when {}", f.threshold));
                    rows.push(r);
                }
            }
        }
        let mut t = Table::new(CSV_COLUMNS);
        for r in rows {
            t.push(r.0);
        }
        t
    }
}

/// Markdown: one row per foreground thread of every case, with where it ran,
/// where its memory was, and its time's spread; then the case totals' spread.
pub fn thread_table(e: &ExperimentResult) -> Table {
    let mut t = Table::new([
        "case",
        "thread",
        "access",
        "cpu",
        "node",
        "mem node",
        "hops",
        "median s",
        "min s",
        "max s",
        "cv",
        "samples",
        "pages on node",
        "verified",
        "GB/s",
    ]);
    let mut align = vec![Align::Right; 15];
    align[0] = Align::Left;
    align[1] = Align::Left;
    align[2] = Align::Left;
    t.align = align;
    for c in &e.cases {
        for th in &c.threads {
            t.push([
                c.label.clone(),
                th.label.clone(),
                access_name(&th.access),
                th.cpu.to_string(),
                th.node.to_string(),
                th.mem_node.to_string(),
                th.hops.to_string(),
                format!("{:.4}", th.time.median),
                format!("{:.4}", th.time.min),
                format!("{:.4}", th.time.max),
                format!("{:.1}%", th.time.cv * 100.0),
                th.time.n.to_string(),
                format!(
                    "{:.1}%{}",
                    th.pages_on_node * 100.0,
                    if th.placement_ok { "" } else { " !" }
                ),
                th.cpu_verified.to_string(),
                format!("{:.2}", th.gbs),
            ]);
        }
    }
    t
}

/// Markdown: each case's totals and wall times over all of its samples.
pub fn total_table(e: &ExperimentResult) -> Table {
    let mut t = Table::new([
        "case",
        "total median s",
        "min s",
        "max s",
        "mean s",
        "cv",
        "samples",
        "wall median s",
        "wall min s",
        "wall max s",
        "% of baseline",
        "GB/s",
    ]);
    for c in &e.cases {
        t.push([
            c.label.clone(),
            format!("{:.4}", c.total.median),
            format!("{:.4}", c.total.min),
            format!("{:.4}", c.total.max),
            format!("{:.4}", c.total.mean),
            format!("{:.1}%", c.total.cv * 100.0),
            c.total.n.to_string(),
            format!("{:.4}", c.wall.median),
            format!("{:.4}", c.wall.min),
            format!("{:.4}", c.wall.max),
            format!("{:.1}%", c.percent),
            format!("{:.2}", c.gbs),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::study::tests::sample_report;
    use crate::model::Format;
    use crate::render::table::read_csv;

    fn column<'a>(rows: &'a [Vec<String>], name: &str) -> Vec<&'a str> {
        let i = col(name);
        rows[1..].iter().map(|r| r[i].as_str()).collect()
    }

    #[test]
    fn csv_loads_with_cases_threads_samples_notes_and_myths() {
        let mut r = sample_report();
        r.experiments[0].cases[0].threads[0].label = "0.0.w.0, \"odd\"".into();
        let f = crate::experiments::study::myths::find(&r.experiments[0]);
        r.myths = Some(vec![f]);
        let rows = read_csv(&r.render(Format::Csv));
        assert_eq!(rows[0], CSV_COLUMNS);
        assert!(rows.iter().all(|x| x.len() == CSV_COLUMNS.len()));
        let kinds = column(&rows, "row");
        let count = |k: &str| kinds.iter().filter(|x| **x == k).count();
        // 1 note, 3 cases of 2 threads and 1 sample each, 1 contradiction.
        assert_eq!(
            (
                count("note"),
                count("case"),
                count("thread"),
                count("sample"),
                count("myth")
            ),
            (1, 3, 6, 3, 1)
        );
        let case3 = kinds.iter().rposition(|k| *k == "case").unwrap();
        assert_eq!(column(&rows, "case")[case3], "0.0.w.1 1.0.w.0");
        assert_eq!(column(&rows, "percent")[case3], "150");
        assert_eq!(column(&rows, "subscription")[case3], "high");
        assert_eq!(column(&rows, "background")[case3], "none");
        assert_eq!(column(&rows, "baseline")[case3], "0.0.w.0 1.0.w.1");
        assert_eq!(column(&rows, "n")[case3], "5");
        assert_eq!(column(&rows, "threads_s")[case3 + 3], "0.8 0.7");
        assert_eq!(column(&rows, "label")[2], "0.0.w.0, \"odd\"");
        assert_eq!(column(&rows, "access")[2], "write");
        assert_eq!(column(&rows, "median_s")[case3 + 1], "0.8");
        let myth = kinds.iter().position(|k| *k == "myth").unwrap();
        assert_eq!(column(&rows, "myth")[myth], "equal_hops");
        assert_eq!(column(&rows, "faster_case")[myth], "0.0.w.1 1.0.w.3");
    }

    #[test]
    fn markdown_has_threads_totals_and_samples() {
        let md = sample_report().render(Format::Markdown);
        assert!(
            md.contains("| 0.0.w.1 1.0.w.0 | 1.0.w.0 | write | 0 | 0 | 0 | 1 | 0.7000 |"),
            "{md}"
        );
        assert!(
            md.contains("| 0.0.w.1 1.0.w.0 | 1.5000 | 1.4700 | 1.5450 |"),
            "{md}"
        );
        assert!(md.contains("150.0%"), "{md}");
    }
}
