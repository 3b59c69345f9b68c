//! `numaprobe latency`: the idle-latency matrix (CPU node x memory node) by a
//! dependent pointer chase. Options are taken as strings and parsed here so
//! that a bad value is one line naming the value and what is valid (exit 2).

mod args;
mod sweep;

pub use args::Args;

use super::measure;
use crate::output::usage;
use anyhow::Context;
use numaprobe_core::experiments::latency::{self, LatencyConfig};
use numaprobe_core::experiments::{LiveGauge, MemoryGauge};
use numaprobe_core::kernels::ChasePattern;
use numaprobe_core::placement::{LiveSystem, PlacementError};
use numaprobe_core::units;

fn config(a: &Args) -> anyhow::Result<LatencyConfig> {
    if a.sweep_points.is_some() {
        return Err(usage("--sweep-points: only applies with --sweep"));
    }
    if a.chart_svg.is_some() {
        return Err(usage("--chart-svg: only applies with --sweep"));
    }
    let window = match a.tlb_window.as_deref() {
        None => None,
        Some(s) => match s.trim().parse::<usize>() {
            Ok(n) if (1..=1 << 20).contains(&n) => Some(n),
            _ => {
                return Err(usage(format!(
                    "--tlb-window: invalid value '{s}' (valid: a number of 4 KiB pages from 1 to 1048576)"
                )))
            }
        },
    };
    let pattern = match a.pattern.as_deref().map(str::to_ascii_lowercase).as_deref() {
        None | Some("random") => ChasePattern::Random {
            window_pages: window,
        },
        Some("stride") => {
            if window.is_some() {
                return Err(usage("--tlb-window: only applies to --pattern random"));
            }
            ChasePattern::Stride
        }
        Some(_) => {
            return Err(usage(format!(
                "--pattern: invalid value '{}' (valid: random, stride)",
                a.pattern.as_deref().unwrap_or_default()
            )))
        }
    };
    let stride = match a.stride.as_deref() {
        None => None,
        Some(s) => {
            let v = units::parse_size(s).map_err(|e| usage(format!("--stride: {e}")))?;
            if v < 8 || v % 8 != 0 || v > 1 << 30 {
                return Err(usage(format!(
                    "--stride: invalid value '{s}' (valid: a multiple of 8 bytes from 8 to 1GiB, e.g. 64 or 128)"
                )));
            }
            Some(v)
        }
    };
    Ok(LatencyConfig {
        cpu_nodes: measure::node_list("--cpu-nodes", &a.nodes.cpu_nodes)?,
        cpus: measure::node_list("--cpus", &a.cpus)?,
        mem_nodes: measure::node_list("--mem-nodes", &a.nodes.mem_nodes)?,
        size: measure::size("--size", &a.size)?,
        stride,
        pattern: Some(pattern),
        pages: measure::pages(&a.page_size.pages)?,
        rule: Some(measure::rule(
            &a.sampling.time_budget,
            &a.sampling.cv_target,
        )?),
        seed: None,
    })
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.sweep.is_some() {
        return sweep::run(&args);
    }
    let cfg = config(&args)?;
    // Measurements run on this machine: no `--sysfs-root` here.
    let topo = measure::live_topology(std::path::Path::new("/"))?;
    let plan = latency::plan(&topo, &cfg).map_err(measure::experiment_error)?;
    let mut progress = measure::CellProgress::new(args.out.sink(), args.out.format())
        .named("latency")
        .keep_samples(args.samples.keep_samples);
    let result = latency::run_with(&plan, &mut progress, &mut gauge()?)
        .map_err(anyhow::Error::new)
        .context("latency measurement failed")?;
    // Every finished cell reaches every output first; then the failures.
    progress.finish(&result)?;
    for w in result.trust_summaries() {
        eprintln!("numaprobe: warning: {w}");
    }
    match result.failure_summary(plan.cells.len()) {
        Some(line) => Err(anyhow::anyhow!(line)),
        None => Ok(()),
    }
}

/// The live machine's memory figures, except for the cell the test-only
/// fault switch names (`numaprobe_core::fault::full_cell`: a one-node
/// machine cannot make one cell fail and not the others).
pub(super) struct Gauge {
    live: LiveGauge,
    full_cell: Option<usize>,
}

impl MemoryGauge for Gauge {
    fn allocatable(&mut self, cell: usize, node: u32, cpus: &[u32]) -> Result<u64, PlacementError> {
        if self.full_cell == Some(cell) {
            return Ok(0);
        }
        self.live.allocatable(cell, node, cpus)
    }
}

pub(super) fn gauge() -> anyhow::Result<Gauge> {
    let full_cell = numaprobe_core::fault::full_cell().map_err(usage)?;
    Ok(Gauge {
        live: LiveGauge(LiveSystem::read().context("reading the live machine")?),
        full_cell,
    })
}
