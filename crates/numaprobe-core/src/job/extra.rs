//! The main job's extra phases, after the latency and bandwidth matrices:
//! a c2c summary by sharing domain, one loaded-latency curve per distinct
//! level of the measured latency matrix, the system peak, and a short
//! cache-size sweep from the first CPU node's first core. Each phase
//! gets its share of what is left of the budget ([`super::extra_plan`]) and
//! runs its experiment through a [`StepKeeper`] that shortens the steps and
//! stops the experiment between steps when the share is spent. A phase ends
//! measured, partial (share spent or interrupted), skipped (with a reason:
//! the machine cannot do it, the budget does not reach it) or failed (the
//! experiment's error); a failure never stops the phases after it.
//!
//! The experiments are called through [`Experiments`], so the phases'
//! bookkeeping is tested with stand-ins; [`Live`] is the real thing.

use super::extra_plan::{self, share_s, MIN_EXTRA_S};
use super::keeper::Observer;
use super::step_keeper::StepKeeper;
use crate::experiments::{c2c, loaded, peak, sweep, ExperimentError, StepProgress};
use crate::model::c2c::C2cResult;
use crate::model::extra::{Extra, ExtraOutcome, ExtraRecord, ExtraStatus};
use crate::model::loaded::LoadedResult;
use crate::model::matrix::MatrixResult;
use crate::model::peak::PeakResult;
use crate::model::sweep::SweepResult;
use crate::topology::Topology;

/// The experiments the extra phases run.
pub trait Experiments {
    fn c2c(
        &mut self,
        topo: &Topology,
        cfg: &c2c::C2cConfig,
        progress: &mut dyn StepProgress,
    ) -> Result<C2cResult, ExperimentError>;
    fn loaded(
        &mut self,
        topo: &Topology,
        cfg: &loaded::LoadedConfig,
        progress: &mut dyn StepProgress,
    ) -> Result<LoadedResult, ExperimentError>;
    fn peak(
        &mut self,
        topo: &Topology,
        cfg: &peak::PeakConfig,
        progress: &mut dyn StepProgress,
    ) -> Result<PeakResult, ExperimentError>;
    fn sweep(
        &mut self,
        topo: &Topology,
        cfg: &sweep::SweepConfig,
        progress: &mut dyn StepProgress,
    ) -> Result<SweepResult, ExperimentError>;
}

/// The experiments of the library: plan, then run.
pub struct Live;

impl Experiments for Live {
    fn c2c(
        &mut self,
        topo: &Topology,
        cfg: &c2c::C2cConfig,
        progress: &mut dyn StepProgress,
    ) -> Result<C2cResult, ExperimentError> {
        c2c::run(&c2c::plan(topo, cfg)?, progress)
    }
    fn loaded(
        &mut self,
        topo: &Topology,
        cfg: &loaded::LoadedConfig,
        progress: &mut dyn StepProgress,
    ) -> Result<LoadedResult, ExperimentError> {
        loaded::run(&loaded::plan(topo, cfg)?, progress)
    }
    fn peak(
        &mut self,
        topo: &Topology,
        cfg: &peak::PeakConfig,
        progress: &mut dyn StepProgress,
    ) -> Result<PeakResult, ExperimentError> {
        peak::run(&peak::plan(topo, cfg)?, progress)
    }
    fn sweep(
        &mut self,
        topo: &Topology,
        cfg: &sweep::SweepConfig,
        progress: &mut dyn StepProgress,
    ) -> Result<SweepResult, ExperimentError> {
        let mut r = sweep::run(&sweep::plan(topo, cfg)?, progress)?;
        crate::analysis::sweep_trust::finish(&mut r);
        Ok(r)
    }
}

/// The phases as they ended.
#[derive(Debug, Clone)]
pub struct Extras {
    pub c2c: ExtraOutcome<C2cResult>,
    pub loaded_latency: ExtraOutcome<LoadedResult>,
    pub peak: ExtraOutcome<PeakResult>,
    pub sweep: ExtraOutcome<SweepResult>,
}

impl Extras {
    pub fn records(&self) -> Vec<ExtraRecord> {
        vec![
            self.c2c.record.clone(),
            self.loaded_latency.record.clone(),
            self.peak.record.clone(),
            self.sweep.record.clone(),
        ]
    }

    /// Some phase was stopped by a cancel (its result says `interrupted`,
    /// or it was skipped because of it).
    pub fn interrupted(&self) -> bool {
        self.c2c.result.as_ref().is_some_and(|r| r.interrupted)
            || self
                .loaded_latency
                .result
                .as_ref()
                .is_some_and(|r| r.interrupted)
            || self.peak.result.as_ref().is_some_and(|r| r.interrupted)
            || self.sweep.result.as_ref().is_some_and(|r| r.interrupted)
            || self
                .records()
                .iter()
                .any(|r| r.reason.as_deref() == Some(INTERRUPTED_BEFORE))
    }
}

/// The reason of a phase a cancel came before.
pub(crate) const INTERRUPTED_BEFORE: &str = "interrupted before it started";
/// How the reason of a phase the budget did not reach begins.
pub(crate) const BUDGET_NOT_REACHED: &str = "the budget does not reach it";
/// How the reason of a phase stopped by its spent share begins.
pub(crate) const SHARE_SPENT: &str = "its share of the budget";

/// What the extras need of the job.
pub struct Context<'a> {
    pub topo: &'a Topology,
    /// The measured latency matrix, for the loaded-latency pairs.
    pub latency: Option<&'a MatrixResult>,
    pub cpu_nodes: &'a [u32],
    pub mem_nodes: &'a [u32],
    /// Seconds since the job's budget clock started.
    pub clock: &'a dyn Fn() -> f64,
    pub budget_s: f64,
    /// Buffer bytes per node: the matrices' buffer, for the estimate of a
    /// phase's first step and, when `size_given`, as the experiments' size.
    pub size_per_node: u64,
    /// The matrices' size was given (`--size`) or cut to keep the budget:
    /// loaded latency and peak then spread it over their threads instead
    /// of taking their own default.
    pub size_given: bool,
    /// The job's cost model, for the first step's estimate.
    pub costs: super::cost::CostModel,
    /// The matrices' page kind (the sweep's).
    pub pages: crate::placement::PageKind,
}

/// Seconds the first step of a streaming phase costs at least with
/// `bytes` in buffers: their set-up and a warm-up plus the three samples a
/// median needs, each at least one pass (the job's calibrated rates).
pub fn first_step_s(costs: &super::cost::CostModel, bytes: u64) -> f64 {
    let gib = bytes as f64 / (1u64 << 30) as f64;
    gib * (costs.bandwidth_setup_s_per_gib + 4.0 * costs.pass_s_per_gib)
}

/// `total` bytes spread over `threads`, in whole 2 MiB pages, at least one.
fn per_thread(total: u64, threads: usize) -> u64 {
    const STEP: u64 = 2 << 20;
    (total / threads.max(1) as u64 / STEP * STEP).max(STEP)
}

/// What a result says of its completeness.
trait Ends {
    fn complete(&self) -> bool;
    fn interrupted(&self) -> bool;
    /// Why steps failed, where the result keeps that (c2c's failed pairs).
    fn failures(&self) -> Option<String> {
        None
    }
}

macro_rules! ends {
    ($t:ty) => {
        impl Ends for $t {
            fn complete(&self) -> bool {
                self.complete
            }
            fn interrupted(&self) -> bool {
                self.interrupted
            }
        }
    };
}

impl Ends for C2cResult {
    fn complete(&self) -> bool {
        self.complete
    }
    fn interrupted(&self) -> bool {
        self.interrupted
    }
    fn failures(&self) -> Option<String> {
        let f = self.failed.first()?;
        Some(format!(
            "{} pair(s) failed (the first, CPU {} -> CPU {}: {})",
            self.failed.len(),
            f.a,
            f.b,
            f.reason
        ))
    }
}
ends!(LoadedResult);
ends!(PeakResult);
ends!(SweepResult);

/// Run c2c, loaded latency, peak and the sweep in that order, each in its
/// share.
pub fn run(ctx: &Context, exps: &mut dyn Experiments, observer: &mut dyn Observer) -> Extras {
    let cpus = ctx.topo.cpus.iter().filter(|c| c.allowed).count();
    let c2c_skip = (cpus < 2)
        .then(|| format!("{cpus} allowed CPU: a cache line needs two CPUs to move between"));
    let c2c = phase(ctx, Extra::C2c, observer, c2c_skip, 0.0, &mut |p| {
        // The summary by domain is what the job shows: one pair per
        // domain, so it is complete in a few steps on any machine.
        let cfg = c2c::C2cConfig {
            pairs: c2c::Pairs::Domains,
            ..c2c::C2cConfig::default()
        };
        exps.c2c(ctx.topo, &cfg, p)
    });
    // A curve needs a CPU to chase and at least one to load on its node.
    let threads = |n: u32| ctx.topo.allowed_cpus_of_node(n).len();
    let loading: Vec<u32> = ctx
        .cpu_nodes
        .iter()
        .copied()
        .filter(|&n| threads(n) >= 2)
        .collect();
    let pairs = extra_plan::loaded_pairs(
        ctx.latency,
        &loading,
        ctx.mem_nodes,
        ctx.topo.distances.as_ref(),
    );
    let loaded_skip = if loading.is_empty() {
        Some("no CPU node has two allowed CPUs (one to chase, one or more to load)".to_string())
    } else {
        pairs
            .is_empty()
            .then(|| "no node pair with an allowed CPU and memory to load".to_string())
    };
    let most = pairs.iter().map(|p| threads(p.0)).max().unwrap_or(1);
    let cfg = loaded::LoadedConfig {
        pairs: Some(pairs),
        size: ctx.size_given.then(|| per_thread(ctx.size_per_node, most)),
        ..Default::default()
    };
    let first = first_step_s(&ctx.costs, ctx.size_per_node);
    let loaded_latency = phase(
        ctx,
        Extra::LoadedLatency,
        observer,
        loaded_skip,
        first,
        &mut |p| exps.loaded(ctx.topo, &cfg, p),
    );
    // The concurrent run gives each node's figure as well; each node alone
    // is `numaprobe peak`'s to measure.
    let streaming: Vec<u32> = ctx
        .cpu_nodes
        .iter()
        .copied()
        .filter(|n| ctx.mem_nodes.contains(n))
        .collect();
    let most = streaming.iter().map(|&n| threads(n)).max().unwrap_or(1);
    let cfg = peak::PeakConfig {
        per_node: false,
        size: ctx.size_given.then(|| per_thread(ctx.size_per_node, most)),
        ..Default::default()
    };
    let first = first_step_s(
        &ctx.costs,
        ctx.size_per_node
            .saturating_mul(streaming.len().max(1) as u64),
    );
    let peak = phase(ctx, Extra::Peak, observer, None, first, &mut |p| {
        exps.peak(ctx.topo, &cfg, p)
    });
    let (cfg, sweep_skip) = sweep_config(ctx);
    let sweep = phase(ctx, Extra::Sweep, observer, sweep_skip, 0.0, &mut |p| {
        exps.sweep(ctx.topo, &cfg, p)
    });
    Extras {
        c2c,
        loaded_latency,
        peak,
        sweep,
    }
}

/// The job's sweep: from the first CPU node's first core to its own
/// memory, 4 KiB to four times the largest cache that CPU has (at least
/// 16 MiB, so memory is reached; at most 1 GiB), never past the matrices'
/// buffer, which is known to fit, and no further than the time left allows:
/// the points' set-up (at the calibrated rate, about 3.4 x the largest
/// point's at two points per octave) within half of it, since the keeper
/// can stop only between points and the last point is the dearest. One
/// page kind (the matrices'), two points per octave. Skipped (with the
/// reason) when no CPU node has memory of its own.
fn sweep_config(ctx: &Context) -> (sweep::SweepConfig, Option<String>) {
    let Some(&node) = ctx.cpu_nodes.iter().find(|n| ctx.mem_nodes.contains(n)) else {
        return (
            sweep::SweepConfig::default(),
            Some("no CPU node has memory of its own to sweep".into()),
        );
    };
    let largest = ctx
        .topo
        .allowed_cpus_of_node(node)
        .first()
        .map(|&cpu| {
            ctx.topo
                .caches
                .iter()
                .filter(|c| c.cpus.contains(&cpu))
                .filter_map(|c| c.size_bytes)
                .max()
                .unwrap_or(0)
        })
        .unwrap_or(0);
    const FROM: u64 = 4 << 10;
    let left_s = ctx.budget_s - (ctx.clock)();
    let affordable = |bytes: u64| {
        let gib = bytes as f64 / (1u64 << 30) as f64;
        3.4 * (ctx.costs.fixed_s + gib * ctx.costs.latency_setup_s_per_gib) <= left_s / 2.0
    };
    let mut to = (4 * largest)
        .clamp(16 << 20, 1 << 30)
        .min(ctx.size_per_node);
    while to > 2 * FROM && !affordable(to) {
        to /= 2;
    }
    let to = to.max(2 * FROM);
    let cfg = sweep::SweepConfig {
        range: Some((FROM, to)),
        points_per_octave: Some(2),
        cpu_node: Some(node),
        mem_node: Some(node),
        pages: Some(vec![ctx.pages]),
        ..sweep::SweepConfig::default()
    };
    (cfg, None)
}

/// How far a phase got when it was stopped. A phase stopped during its
/// set-up has not yet said how many steps it plans, and "after 0 of 0
/// steps" would read as a phase with nothing to do.
fn so_far(done: usize, total: usize) -> String {
    if done == 0 {
        "before its first step".into()
    } else {
        format!("after {done} of {total} steps")
    }
}

/// One phase: its share, the skip conditions, the experiment through a
/// step keeper, and its status.
fn phase<T: Ends>(
    ctx: &Context,
    extra: Extra,
    observer: &mut dyn Observer,
    skip: Option<String>,
    first_step_s: f64,
    call: &mut dyn FnMut(&mut dyn StepProgress) -> Result<T, ExperimentError>,
) -> ExtraOutcome<T> {
    let i = Extra::ALL.iter().position(|&e| e == extra).unwrap_or(0);
    let later = &Extra::ALL[i + 1..];
    let began = (ctx.clock)();
    let left = ctx.budget_s - began;
    let mut share = share_s(extra, later, left);
    // A part too small for the first step takes what that step needs from
    // the later phases' parts, when what is left allows: every phase gets
    // to measure something before a later one (the sweep adapts its range
    // to the time it gets) takes time it could not use.
    let least = first_step_s + MIN_EXTRA_S;
    if share < least && left >= least {
        share = least;
    }
    let skipped = |reason: String, observer: &mut dyn Observer| {
        let o = ExtraOutcome::without(extra, ExtraStatus::Skipped, reason, share);
        observer.extra_finished(&o.record);
        o
    };
    if crate::cancel::requested() {
        return skipped(INTERRUPTED_BEFORE.into(), observer);
    }
    if let Some(reason) = skip {
        return skipped(reason, observer);
    }
    if share < MIN_EXTRA_S {
        return skipped(
            format!(
                "{BUDGET_NOT_REACHED}: {:.2} s of it left for this phase, at least {MIN_EXTRA_S} s needed",
                share.max(0.0)
            ),
            observer,
        );
    }
    if share < first_step_s + MIN_EXTRA_S {
        // The keeper can stop an experiment only between steps: a first
        // step that cannot fit would overrun the budget.
        return skipped(
            format!(
                "{BUDGET_NOT_REACHED}: {share:.1} s of it left for this phase, and its first step alone (buffers set up, a warm-up and 3 samples) takes about {first_step_s:.1} s here"
            ),
            observer,
        );
    }
    observer.extra_started(extra, share);
    let clock = ctx.clock;
    let mut keeper = StepKeeper::new(
        &mut *observer,
        Box::new(move || clock() - began),
        extra,
        share,
    )
    .in_job(began, ctx.budget_s);
    let result = call(&mut keeper);
    let (done, total) = keeper.steps();
    let spent = keeper.out_of_time();
    drop(keeper);
    let (status, reason, result) = match result {
        Ok(r) if r.complete() => (ExtraStatus::Measured, None, Some(r)),
        Ok(r) => {
            let why = if r.interrupted() {
                format!("interrupted {}", so_far(done, total))
            } else if spent {
                let rest = if done == 0 {
                    ""
                } else {
                    "; the rest were skipped"
                };
                format!(
                    "{SHARE_SPENT} ({share:.1} s) was spent {}{rest}",
                    so_far(done, total)
                )
            } else if let Some(f) = r.failures() {
                format!("{done} of {total} steps measured; {f}")
            } else {
                format!("{done} of {total} steps measured (the result's notes say why)")
            };
            (ExtraStatus::Partial, Some(why), Some(r))
        }
        Err(e) => (ExtraStatus::Failed, Some(e.to_string()), None),
    };
    let record = ExtraRecord {
        phase: extra,
        status,
        reason,
        share_s: share,
        elapsed_s: (ctx.clock)() - began,
        steps_planned: total,
        steps_done: done,
    };
    observer.extra_finished(&record);
    ExtraOutcome { record, result }
}

#[cfg(test)]
mod tests;
