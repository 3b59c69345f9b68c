//! `numaprobe c2c`: cache-line transfer latency between CPUs (HITM and
//! read-shared ping-pong), and with `--locks` lock/atomic contention
//! (`c2c_locks.rs`). Options are strings parsed here so a bad value is one
//! line naming it and what is valid (exit 2), before any thread starts.

use super::measure;
use super::progress::StepLine;
use crate::cli::OutputArgs;
use crate::output::{usage, PartialFile};
use anyhow::Context;
use numaprobe_core::experiments::c2c::{self, C2cConfig, HitmLines, Pairs, States};
use numaprobe_core::render::c2c::render;
use numaprobe_core::units;
use std::time::Duration;

#[derive(clap::Args, Debug)]
#[command(after_long_help = "How it measures:\n\n\
Two threads, pinned to the two CPUs of a pair (checked with sched_getcpu before and after), \
move one cache line between their caches. HITM: ping-pong on one line with plain loads and \
stores; the first CPU writes n, the second spins until it sees n and writes n + 1, and so on; \
64 round trips are timed between two clock reads and the figure is round trip / 2. \
Read-shared: the first CPU flushes 64 lines from every cache and reads them (clean in its \
cache), the second chases them in a random cycle; the figure is the time per load. Every line \
is alone in its 128-byte pair and the control lines are on another page, so no prefetcher \
brings a line early.\n\n\
Up to 16 CPUs every ordered pair is measured (a matrix); on bigger machines one pair per \
sharing domain the topology shows (SMT siblings, an L2 or cluster, an L3, a node, a package, \
across packages), both directions; --pairs all or --pairs domains forces either. The time budget is shared over the pairs and states; a \
pair stops early when its CV is below --cv-target. A thread that waits 2 s for its partner \
(de-scheduled) fails that pair, and the run goes on.")]
pub struct Args {
    /// CPUs to measure between, as a list like 0-3,8. Default: every allowed CPU on small machines, representatives of each sharing domain on big ones
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Which pairs: all (every ordered pair), domains (one pair per sharing domain, both directions) or auto. Default: auto (all up to 16 CPUs, domains above)
    #[arg(long, value_name = "WHICH")]
    pub pairs: Option<String>,
    /// Lines of the HITM round trips: 1 (both CPUs write one line) or 2 (each writes its own and reads the other's: core-to-core-latency's read-write method, for comparing with it). Default: 1
    #[arg(long, value_name = "N")]
    pub hitm_lines: Option<String>,
    /// Line state: hitm (last written by the other CPU), shared (held clean by the other CPU) or both. Default: both
    #[arg(long, value_name = "STATE")]
    pub state: Option<String>,
    /// Time for the whole run, shared over the pairs and states, e.g. 4s or 500ms. Default: 4s
    #[arg(long, value_name = "DURATION")]
    pub time_budget: Option<String>,
    /// Stop a pair early once the CV of its samples is below this, e.g. 1% or 0.01. Default: 1%
    #[arg(long, value_name = "CV")]
    pub cv_target: Option<String>,
    /// Measure lock and atomic contention instead of the pair matrix
    #[arg(long)]
    pub locks: bool,
    #[command(flatten)]
    pub locks_args: super::c2c_locks::LocksArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

fn config(a: &Args) -> anyhow::Result<C2cConfig> {
    let states = match a.state.as_deref() {
        None => None,
        Some(s) => Some(States::parse(s).ok_or_else(|| {
            usage(format!(
                "--state: invalid value '{s}' (valid: hitm, shared, both)"
            ))
        })?),
    };
    let total_budget = match a.time_budget.as_deref() {
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
        return super::c2c_locks::run(&args);
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
    // The file is rewritten after every pair.
    let mut file = PartialFile::new(&sink);
    let result = c2c::run_with(&plan, &mut progress, &mut |partial| {
        file.save(|| render(partial, format))
    })
    .map_err(anyhow::Error::new)
    .context("c2c measurement failed")?;
    progress.line.clear();
    file.end()?;
    args.out.sink().write(&render(&result, args.out.format()))?;
    if !result.failed.is_empty() && !result.interrupted {
        return Err(anyhow::anyhow!(
            "{} of {} pair(s) could not be measured; see `failed` in the output",
            result.failed.len(),
            plan.pairs.len()
        ));
    }
    Ok(())
}
