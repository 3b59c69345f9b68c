//! Which of the main job's figures a busy machine touched, named: the
//! system check says before measuring that the load may move the figures;
//! this says after it which ones were starred for memory traffic from other
//! tasks (`crate::beside`) and which had samples set aside, their thread
//! having lost its CPU (`crate::held`): "load average 8.34 on 2 CPUs: 12 of
//! 16 latency cells and the system peak are starred for memory traffic
//! from other tasks". The sentence goes among run.json's notes (so into
//! the summary, summary.md and report.html), the names into its
//! `busy_figures`.

use crate::model::c2c::C2cResult;
use crate::model::loaded::LoadedResult;
use crate::model::matrix::{MatrixKind, MatrixResult};
use crate::model::peak::PeakResult;
use crate::model::run::BusyFigures;
use crate::model::sweep::SweepResult;
use crate::system_check::{self, SystemCheck};

/// The figures of a run, as measured (any may be missing).
#[derive(Default, Clone, Copy)]
pub struct Figures<'a> {
    pub latency: Option<&'a MatrixResult>,
    pub bandwidth: Option<&'a MatrixResult>,
    pub c2c: Option<&'a C2cResult>,
    pub loaded: Option<&'a LoadedResult>,
    pub peak: Option<&'a PeakResult>,
    pub sweep: Option<&'a SweepResult>,
}

/// One figure: its name, whether it is starred for other tasks' memory
/// traffic, whether samples of it were set aside.
struct Figure {
    name: String,
    traffic: bool,
    set_aside: bool,
}

impl Figure {
    fn new(name: String, flags: &[String], set_aside: &crate::stats::SetAside) -> Figure {
        Figure {
            name,
            traffic: flags.iter().any(|f| f.starts_with("memory traffic")),
            set_aside: set_aside.total() > 0,
        }
    }
}

/// A kind of figure: its name in the singular and plural, and its figures.
struct Family {
    one: &'static str,
    many: &'static str,
    figures: Vec<Figure>,
}

fn matrix(m: &MatrixResult) -> Family {
    let (one, many, kind) = match m.kind {
        MatrixKind::Latency => ("latency cell", "latency cells", "latency"),
        MatrixKind::Bandwidth => ("bandwidth cell", "bandwidth cells", "bandwidth"),
    };
    Family {
        one,
        many,
        figures: m
            .cells
            .iter()
            .map(|c| {
                let name = format!("{kind} {}->{}", c.cpu_node, c.mem_node);
                Figure::new(name, &c.flags, &c.set_aside)
            })
            .collect(),
    }
}

fn c2c(r: &C2cResult) -> Family {
    let mut figures = Vec::new();
    for p in &r.pairs {
        for (state, f) in [("hitm", &p.hitm), ("shared", &p.shared)] {
            if let Some(f) = f {
                let name = format!("c2c CPUs {}-{} {state}", p.a, p.b);
                figures.push(Figure::new(name, &f.flags, &f.set_aside));
            }
        }
    }
    Family {
        one: "c2c figure",
        many: "c2c figures",
        figures,
    }
}

fn loaded(r: &LoadedResult) -> Family {
    let mut figures = Vec::new();
    for c in &r.curves {
        for p in &c.points {
            let load = match p.delay {
                Some(d) => format!("delay {d}"),
                None => "idle".into(),
            };
            let name = format!(
                "loaded latency {}->{} {} {load}",
                c.cpu_node, c.mem_node, c.mix
            );
            figures.push(Figure::new(name, &p.flags, &p.set_aside));
        }
    }
    Family {
        one: "loaded-latency point",
        many: "loaded-latency points",
        figures,
    }
}

fn peaks(r: &PeakResult) -> [Family; 2] {
    let system = r
        .system
        .iter()
        .map(|s| Figure::new(format!("system peak {}", s.mix), &s.flags, &s.set_aside))
        .collect();
    let nodes = r
        .nodes
        .iter()
        .map(|n| {
            let when = if n.concurrent {
                "with every node"
            } else {
                "alone"
            };
            let name = format!("node {} peak {} {when}", n.node, n.mix);
            Figure::new(name, &n.flags, &n.set_aside)
        })
        .collect();
    [
        Family {
            one: "system peak",
            many: "system peak figures",
            figures: system,
        },
        Family {
            one: "node peak figure",
            many: "node peak figures",
            figures: nodes,
        },
    ]
}

fn sweep(r: &SweepResult) -> Family {
    Family {
        one: "cache sweep point",
        many: "cache sweep points",
        figures: r
            .points
            .iter()
            .map(|p| {
                let name = format!(
                    "cache sweep {} {}",
                    crate::units::format_size(p.size_bytes),
                    p.pages
                );
                Figure::new(name, &p.flags, &p.set_aside)
            })
            .collect(),
    }
}

/// "12 of 16 latency cells and the system peak": the families with a
/// figure that `pick` chooses, each counted against all its figures (one
/// of one is "the" figure); None when no figure is chosen.
fn counted(families: &[Family], pick: fn(&Figure) -> bool) -> Option<String> {
    let parts: Vec<String> = families
        .iter()
        .filter_map(|f| {
            let k = f.figures.iter().filter(|x| pick(x)).count();
            let n = f.figures.len();
            match k {
                0 => None,
                1 if n == 1 => Some(format!("the {}", f.one)),
                _ => Some(format!("{k} of {n} {}", f.many)),
            }
        })
        .collect();
    match parts.as_slice() {
        [] => None,
        [one] => Some(one.clone()),
        [first @ .., last] => Some(format!("{} and {last}", first.join(", "))),
    }
}

/// Whether `words` ("the system peak", "12 of 16 latency cells") name one
/// figure alone.
fn one_figure(words: &str) -> bool {
    words.starts_with("the ") && !words.contains(" and ") && !words.contains(", ")
}

/// The figures other tasks touched, with the sentence that names them after
/// what the system check found (`check`; a run without one says only
/// what happened while it measured); None when no figure was touched.
pub fn of(figures: &Figures, check: Option<&SystemCheck>) -> Option<BusyFigures> {
    let mut families = Vec::new();
    families.extend(figures.latency.map(matrix));
    families.extend(figures.bandwidth.map(matrix));
    families.extend(figures.c2c.map(c2c));
    families.extend(figures.loaded.map(loaded));
    if let Some(p) = figures.peak {
        families.extend(peaks(p));
    }
    families.extend(figures.sweep.map(sweep));
    let names = |pick: fn(&Figure) -> bool| -> Vec<String> {
        families
            .iter()
            .flat_map(|f| f.figures.iter())
            .filter(|x| pick(x))
            .map(|x| x.name.clone())
            .collect()
    };
    let memory_traffic = names(|x| x.traffic);
    let set_aside = names(|x| x.set_aside);
    let mut said = Vec::new();
    if let Some(w) = counted(&families, |x| x.traffic) {
        let verb = if one_figure(&w) { "is" } else { "are" };
        said.push(format!(
            "{w} {verb} starred for memory traffic from other tasks"
        ));
    }
    if let Some(w) = counted(&families, |x| x.set_aside) {
        said.push(format!(
            "{w} had samples set aside, their measuring thread having lost its CPU (preempted or off it), and {} made of the samples that held it",
            if one_figure(&w) { "is" } else { "are" }
        ));
    }
    if said.is_empty() {
        return None;
    }
    let head = match check {
        Some(c) => format!("system check: {}", system_check::busy_headline(c)),
        None => "while the run measured".into(),
    };
    let during = if head.contains("quiet when the run began") {
        "; during the run "
    } else {
        ": "
    };
    Some(BusyFigures {
        statement: format!(
            "{head}{during}{}; run.json's busy_figures names each figure; a quieter machine, or a comparison with a quieter run, tells what the load did to them",
            said.join("; ")
        ),
        memory_traffic,
        set_aside,
    })
}

#[cfg(test)]
#[path = "busy_figures_tests.rs"]
mod tests;
