//! `numaprobe study --plan` rendered: what would run, without measuring,
//! as text, Markdown, CSV or JSON.

use super::table::{Align, Table};
use crate::model::study::StudyPlanDocument;
use crate::model::study_plan::ExperimentPlan;
use crate::model::Format;

impl StudyPlanDocument {
    pub fn render(&self, format: Format) -> String {
        let table = |e: &ExperimentPlan| {
            let mut t = Table::new(["case", "hops", "CPUs", "memory nodes"]).with_align(vec![
                Align::Left,
                Align::Left,
                Align::Left,
                Align::Left,
            ]);
            for c in &e.cases {
                t.push([
                    c.label.clone(),
                    c.description.clone(),
                    join(c.threads.iter().map(|t| t.cpu)),
                    join(c.threads.iter().map(|t| t.spec.mem)),
                ]);
            }
            t
        };
        let bg = |e: &ExperimentPlan| {
            format!(
                "background: {} ({} % duty), subscription {}: {} thread(s) on CPUs [{}] of {} free core(s)",
                e.load.name(),
                e.load.duty_percent(),
                e.subscription.name(),
                e.background.cpus.len(),
                join(e.background.cpus.iter().copied()),
                e.background.remaining_cores
            )
        };
        match format {
            Format::Json => super::to_json(self),
            Format::Csv => {
                let mut t = Table::new([
                    "experiment",
                    "background",
                    "subscription",
                    "background_cpus",
                    "case",
                    "hops",
                    "cpus",
                    "mem_nodes",
                ]);
                for e in &self.plan.experiments {
                    for c in &e.cases {
                        t.push([
                            e.id.clone(),
                            e.load.name().to_string(),
                            e.subscription.name().to_string(),
                            join(e.background.cpus.iter().copied()),
                            c.label.clone(),
                            c.description.clone(),
                            join(c.threads.iter().map(|t| t.cpu)),
                            join(c.threads.iter().map(|t| t.spec.mem)),
                        ]);
                    }
                }
                t.to_csv()
            }
            Format::Table | Format::Markdown => {
                let md = format == Format::Markdown;
                let mut out = String::new();
                for n in &self.plan.notes {
                    out.push_str(&format!("note: {n}\n"));
                }
                for e in &self.plan.experiments {
                    out.push('\n');
                    let head = format!(
                        "{} [{}]{}",
                        e.title,
                        e.id,
                        e.figure
                            .as_ref()
                            .map(|f| format!(" ({f} of the note)"))
                            .unwrap_or_default()
                    );
                    if md {
                        out.push_str(&format!("### {head}\n\n{}\n\n", bg(e)));
                        out.push_str(&table(e).to_markdown());
                    } else {
                        out.push_str(&format!("{head}\n{}\n", bg(e)));
                        out.push_str(&table(e).to_text());
                    }
                }
                out
            }
        }
    }
}

fn join(v: impl Iterator<Item = u32>) -> String {
    v.map(|x| x.to_string()).collect::<Vec<_>>().join(" ")
}
