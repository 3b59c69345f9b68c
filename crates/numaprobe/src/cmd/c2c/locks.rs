//! `numaprobe c2c --locks`: lock and atomic contention as threads and
//! placement grow. Options are strings parsed here so a bad value is one
//! line naming it and the valid ones (exit 2) before any thread starts. An
//! interrupted measurement writes the runs it finished (`complete: false`).

use super::args::Args;
use crate::cmd::measure;
use crate::cmd::progress::StepLine;
use crate::output::{usage, PartialFile};
use anyhow::Context;
use numaprobe_core::experiments::locks::{
    self, AtomicsChoice, LockOp, LocksConfig, Placement, Sharing,
};
use numaprobe_core::model::locks::LocksResult;
use numaprobe_core::render::locks::render;
use numaprobe_core::units;
use std::path::Path;
use std::time::Duration;

fn config(a: &Args) -> anyhow::Result<LocksConfig> {
    let l = &a.locks_args;
    let threads = measure::list(
        "--threads",
        &l.threads,
        |w| {
            w.parse::<usize>()
                .ok()
                .filter(|&n| (1..=1 << 16).contains(&n))
        },
        "whole numbers from 1, e.g. 1,2,4",
    )?;
    let atomics = match l.atomics.as_deref() {
        None => AtomicsChoice::Auto,
        Some(s) => AtomicsChoice::parse(s).ok_or_else(|| {
            usage(format!(
                "--atomics: invalid value '{s}' (valid: {})",
                AtomicsChoice::NAMES
            ))
        })?,
    };
    let mut rule = locks::default_rule();
    if let Some(s) = l.locks_time.as_deref() {
        let d = units::parse_duration(s).map_err(|e| usage(format!("--locks-time: {e}")))?;
        if d < Duration::from_millis(5) || d > Duration::from_secs(600) {
            return Err(usage(format!(
                "--locks-time: '{s}' is out of range (valid: 5ms to 10min)"
            )));
        }
        rule.budget = d;
    }
    Ok(LocksConfig {
        cpus: measure::node_list("--cpus", &a.cpus)?,
        rule: Some(rule),
        threads,
        placements: measure::list(
            "--placement",
            &l.placement,
            Placement::parse,
            Placement::NAMES,
        )?,
        ops: measure::list("--ops", &l.ops, LockOp::parse, LockOp::NAMES)?,
        sharing: measure::list("--sharing", &l.sharing, Sharing::parse, Sharing::NAMES)?,
        atomics,
        cpu_has_lse: None,
    })
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let cfg = config(args)?;
    if cfg.cpus.is_some() && cfg.placements.is_some() {
        return Err(usage(
            "--placement: not with --cpus (the given CPUs are the placement)",
        ));
    }
    let topo = measure::live_topology(Path::new("/"))?;
    let plan = locks::plan(&topo, &cfg).map_err(|e| match (&args.locks_args.atomics, e) {
        (Some(a), e) if e.to_string().contains("asked for, but this CPU has") => {
            usage(format!("--atomics {a}: {e}"))
        }
        (_, e) => measure::experiment_error(e),
    })?;
    let sink = args.out.sink();
    let format = args.out.format();
    measure::notes_to_stderr(&sink, format, &plan.notes);
    let mut progress = StepLine::new("locks", Some(plan.rule.budget.as_secs_f64()));
    // The file is rewritten after every run.
    let keep = args.samples.keep_samples;
    let written = |r: &LocksResult| {
        measure::written(r, keep, LocksResult::leave_out_samples, |r| {
            render(r, format)
        })
    };
    let mut file = PartialFile::new(&sink);
    let result = locks::run_with(&plan, &mut progress, &mut |partial| {
        file.save(|| written(partial))
    })
    .map_err(anyhow::Error::new)
    .context("lock measurement failed")?;
    progress.line.clear();
    file.end()?;
    sink.write(&written(&result))?;
    if !result.failed.is_empty() && !result.interrupted {
        return Err(anyhow::anyhow!(
            "{} run(s) failed: {}",
            result.failed.len(),
            result.failed[0].reason
        ));
    }
    Ok(())
}
