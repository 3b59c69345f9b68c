//! `numaprobe c2c`: cache-line transfer latency between CPUs (HITM and
//! read-shared ping-pong), and with `--locks` lock/atomic contention
//! (`locks.rs`). Options are strings parsed here so a bad value is one
//! line naming it and what is valid (exit 2), before any thread starts.

mod args;
mod locks;

pub use args::Args;

use super::measure;
use super::progress::StepLine;
use crate::output::{usage, PartialFile};
use anyhow::Context;
use numaprobe_core::experiments::c2c::{self, C2cConfig, HitmLines, Pairs, States};
use numaprobe_core::model::c2c::C2cResult;
use numaprobe_core::render::c2c::render;
use numaprobe_core::units;
use std::time::Duration;

fn config(a: &Args) -> anyhow::Result<C2cConfig> {
    let states = match a.state.as_deref() {
        None => None,
        Some(s) => Some(States::parse(s).ok_or_else(|| {
            usage(format!(
                "--state: invalid value '{s}' (valid: hitm, shared, both)"
            ))
        })?),
    };
    let total_budget = match a.sampling.time_budget.as_deref() {
        None => None,
        Some(s) => {
            let d = units::parse_duration(s).map_err(|e| usage(format!("--time-budget: {e}")))?;
            if d < Duration::from_millis(1) {
                return Err(usage(format!(
                    "--time-budget: '{s}' is too short; give at least 1ms"
                )));
            }
            Some(d)
        }
    };
    let pairs = match a.pairs.as_deref() {
        None => Pairs::Auto,
        Some(s) => Pairs::parse(s).ok_or_else(|| {
            usage(format!(
                "--pairs: invalid value '{s}' (valid: all, domains, auto)"
            ))
        })?,
    };
    let hitm_lines = match a.hitm_lines.as_deref() {
        None => HitmLines::One,
        Some(s) => HitmLines::parse(s)
            .ok_or_else(|| usage(format!("--hitm-lines: invalid value '{s}' (valid: 1, 2)")))?,
    };
    let cv_target = a
        .sampling
        .cv_target
        .as_deref()
        .map(|s| units::parse_fraction(s).map_err(|e| usage(format!("--cv-target: {e}"))))
        .transpose()?;
    Ok(C2cConfig {
        cpus: measure::node_list("--cpus", &a.cpus)?,
        states,
        total_budget,
        cv_target,
        pairs,
        hitm_lines,
        ..C2cConfig::default()
    })
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.locks {
        return locks::run(&args);
    }
    let cfg = config(&args)?;
    let topo = measure::live_topology(std::path::Path::new("/"))?;
    let plan = c2c::plan(&topo, &cfg).map_err(measure::experiment_error)?;
    // One step per pair, sampled for the budget in each state asked for.
    let mut progress = StepLine::new(
        "c2c",
        Some(
            plan.rule.budget.as_secs_f64()
                * (plan.states.hitm() as u8 + plan.states.shared() as u8) as f64,
        ),
    );
    let sink = args.out.sink();
    let format = args.out.format();
    let keep = args.samples.keep_samples;
    let written = |r: &C2cResult| {
        measure::written(r, keep, C2cResult::leave_out_samples, |r| render(r, format))
    };
    // The file is rewritten after every pair.
    let mut file = PartialFile::new(&sink);
    let result = c2c::run_with(&plan, &mut progress, &mut |partial| {
        file.save(|| written(partial))
    })
    .map_err(anyhow::Error::new)
    .context("c2c measurement failed")?;
    progress.line.clear();
    file.end()?;
    sink.write(&written(&result))?;
    if !result.failed.is_empty() && !result.interrupted {
        return Err(anyhow::anyhow!(
            "{} of {} pair(s) could not be measured; see `failed` in the output",
            result.failed.len(),
            plan.pairs.len()
        ));
    }
    Ok(())
}
