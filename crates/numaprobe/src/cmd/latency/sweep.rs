//! `numaprobe latency --sweep [FROM-TO]`: latency against working-set size
//! on one CPU and one memory node, per page kind, with the knees matched to
//! the caches the topology reports. `latency/mod.rs` hands its arguments
//! here when `--sweep` is given; the options are parsed here (bad values:
//! one line, exit 2, before any thread starts), the measurement is
//! `experiments::sweep`, the reading `analysis::sweep`, the output
//! `render::sweep`.

use super::args::Args;
use crate::cmd::measure;
use crate::cmd::progress::StepLine;
use crate::output::{usage, PartialFile};
use anyhow::Context;
use numaprobe_core::analysis;
use numaprobe_core::experiments::sweep::{self, SweepConfig};
use numaprobe_core::placement::PageKind;
use numaprobe_core::units;

/// Options of the matrix that a sweep does not take: naming them is an
/// error rather than silently ignored.
fn refuse_matrix_options(a: &Args) -> anyhow::Result<()> {
    for (given, name, why) in [
        (
            a.size.is_some(),
            "--size",
            "the sweep chooses the sizes; give the range to --sweep, e.g. --sweep 4K-1G",
        ),
        (
            a.pattern.is_some(),
            "--pattern",
            "the sweep chases a random chain",
        ),
        (
            a.stride.is_some(),
            "--stride",
            "the sweep chases every 64-byte line",
        ),
        (
            a.tlb_window.is_some(),
            "--tlb-window",
            "the sweep separates the TLB by page size (--pages both)",
        ),
    ] {
        if given {
            return Err(usage(format!("{name} does not apply with --sweep: {why}")));
        }
    }
    Ok(())
}

/// One node from `--cpu-nodes`/`--mem-nodes` (the sweep has one of each).
fn one_node(opt: &str, v: &Option<String>) -> anyhow::Result<Option<u32>> {
    match measure::node_list(opt, v)? {
        None => Ok(None),
        Some(l) if l.len() == 1 => Ok(Some(l[0])),
        Some(l) => Err(usage(format!(
            "{opt}: '{}' names {} nodes; the sweep measures one node pair, give one",
            v.as_deref().unwrap_or_default(),
            l.len()
        ))),
    }
}

/// `--pages` for the sweep: 4k, thp, 2m, 1g or both (4k and thp).
fn pages(v: &Option<String>) -> anyhow::Result<Option<Vec<PageKind>>> {
    match v.as_deref().map(|s| s.trim().to_ascii_lowercase()) {
        None => Ok(None),
        Some(s) if s == "both" => Ok(Some(vec![PageKind::Small, PageKind::Thp])),
        Some(s) => numaprobe_core::placement::PageKind::parse_arg(&s)
            .map(|k| Some(vec![k]))
            .map_err(|_| {
                usage(format!(
                    "--pages: invalid value '{}' (valid with --sweep: 4k, thp, 2m, 1g, both)",
                    v.as_deref().unwrap_or_default()
                ))
            }),
    }
}

pub fn config(a: &Args) -> anyhow::Result<SweepConfig> {
    refuse_matrix_options(a)?;
    let range = match a.sweep.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(s) => Some(sweep::parse_range(s).map_err(usage)?),
    };
    let points = match a.sweep_points.as_deref() {
        None => None,
        Some(s) => match s.trim().parse::<u32>() {
            Ok(n) if (1..=64).contains(&n) => Some(n),
            _ => {
                return Err(usage(format!(
                    "--sweep-points: invalid value '{s}' (valid: 1 to 64 points per octave)"
                )))
            }
        },
    };
    let mut rule = measure::rule(&a.sampling.time_budget, &a.sampling.cv_target)?;
    if a.sampling.time_budget.is_none() {
        rule.budget = sweep::default_rule().budget;
    }
    Ok(SweepConfig {
        range,
        points_per_octave: points,
        cpu_node: one_node("--cpu-nodes", &a.nodes.cpu_nodes)?,
        mem_node: one_node("--mem-nodes", &a.nodes.mem_nodes)?,
        cpus: measure::node_list("--cpus", &a.cpus)?,
        pages: pages(&a.page_size.pages)?,
        rule: Some(rule),
        seed: None,
    })
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let cfg = config(args)?;
    // The chart's folder must exist: checked before anything is measured.
    if let Some(p) = &args.chart_svg {
        let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
        if dir.is_some_and(|d| !d.is_dir()) {
            return Err(usage(format!(
                "--chart-svg {}: its folder does not exist",
                p.display()
            )));
        }
    }
    let topo = measure::live_topology(std::path::Path::new("/"))?;
    let plan = sweep::plan(&topo, &cfg).map_err(measure::experiment_error)?;
    // Timed here before the total is stated: a constant rate is another
    // machine's (or this one at another load).
    let started = std::time::Instant::now();
    let (rates, timed) = match sweep::calibrate(&plan) {
        Ok(r) if r.measured => {
            let t = format!("set-up timed here at {:.1} s per GiB", r.setup_s_per_gib);
            (r, t)
        }
        Ok(r) => (r, "set-up not timed".to_string()),
        // Interrupted while timing too: the sweep then stops before its
        // first point and writes what an interrupted sweep writes.
        Err(e) => {
            let r = sweep::SweepRates::fallback();
            let t = format!(
                "set-up not timed ({e}): {:.0} s per GiB assumed",
                r.setup_s_per_gib
            );
            (r, t)
        }
    };
    let costs = plan.step_costs_at(&rates);
    // The time spent timing is part of what the user waits for.
    let total = started.elapsed().as_secs_f64() + costs.iter().sum::<f64>();
    // Stopped while timing: no plan to state, the sweep ends at once.
    if !numaprobe_core::cancel::requested() {
        eprintln!(
            "numaprobe: latency sweep: {} points ({} to {}, {}; {timed}), planned {}",
            plan.steps(),
            units::format_size(plan.sizes[0]),
            units::format_size(*plan.sizes.last().unwrap_or(&0)),
            plan.pages
                .iter()
                .map(|k| format!("{} pages", k.name()))
                .collect::<Vec<_>>()
                .join(" and "),
            crate::cmd::progress::duration_text(total)
        );
    }
    let mut progress = StepLine::planned("latency sweep", costs).restating();
    let (sink, format) = (args.out.sink(), args.out.format());
    // The file is rewritten after every point, analysed as far as it goes.
    let mut file = PartialFile::new(&sink);
    let result = sweep::run_with(&plan, &mut progress, &mut |partial| {
        file.save(|| {
            let mut r = partial.clone();
            analysis::sweep_trust::finish(&mut r);
            r.render(format)
        })
    });
    progress.line.clear();
    let mut result = result
        .map_err(anyhow::Error::new)
        .context("latency sweep failed")?;
    analysis::sweep_trust::finish(&mut result);
    file.end()?;
    sink.write(&result.render(format))?;
    if let Some(p) = &args.chart_svg {
        crate::safe_dir::write_file(
            p,
            numaprobe_core::render::sweep_chart::svg(&result).as_bytes(),
        )?;
    }
    if result.failed.is_empty() {
        Ok(())
    } else {
        Err(anyhow::anyhow!(
            "{} of the sweep could not be measured: {}",
            if result.failed.len() == 1 {
                "a part"
            } else {
                "parts"
            },
            result.failed.join("; ")
        ))
    }
}
