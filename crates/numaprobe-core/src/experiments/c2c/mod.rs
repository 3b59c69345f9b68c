//! Cache-line transfer between CPUs: ping-pong on one line between two
//! pinned threads, the line modified by the other side (HITM) or held clean
//! by it (read-shared; see `kernels::pingpong`), for pairs of the chosen
//! CPUs.
//!
//! Which pairs: up to [`ALL_PAIRS_MAX`] CPUs (the allowed ones, or `cpus`
//! when given), every ordered pair, so the matrices are full (a HITM round
//! trip started by a and by b should agree, and both are flagged when they
//! do not: [`directions`]; the read-shared transfer has a
//! direction: `a` holds the line, `b` reads it). More CPUs than that:
//! one representative pair per sharing domain the machine has
//! ([`domains::Domains::representatives`]: an SMT sibling pair, two cores
//! of one L2 or cluster, two L2s of one L3, two L3s of one node, two nodes
//! of one package, two packages), each measured in both directions, so a
//! 256-CPU machine measures a dozen ordered pairs, not 65 000. [`Pairs`]
//! forces either choice: the main job asks for the domains alone, so its
//! summary is complete in a few pairs whatever the machine's size.
//!
//! The time: `total_budget` is shared out evenly over the pairs and the
//! line states measured; each pair and state samples under that per-pair
//! rule. Between pairs the run checks cancellation and the caller's time
//! ([`super::StepProgress::out_of_time`]) and returns what it has.
//!
//! This file is the plan; `run.rs` measures it.

mod directions;
pub mod domains;
mod run;

pub use run::{run, run_with};

use super::ExperimentError;
pub use crate::kernels::pingpong::HitmLines;
use crate::kernels::pingpong::{self};
use crate::model::c2c::Domain;
use crate::placement::PlacementError;
use crate::stats::StopRule;
use crate::topology::Topology;
use std::time::Duration;

pub use domains::Domains;

/// Up to this many CPUs every ordered pair is measured; above it,
/// representatives per domain.
pub const ALL_PAIRS_MAX: usize = 16;
/// Default total time of a run.
pub const DEFAULT_TOTAL: Duration = Duration::from_secs(4);
/// The least a pair and state samples for, whatever the total.
pub const MIN_PAIR_BUDGET: Duration = Duration::from_millis(2);

/// Which line states to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum States {
    Hitm,
    Shared,
    #[default]
    Both,
}

impl States {
    pub fn hitm(self) -> bool {
        matches!(self, States::Hitm | States::Both)
    }
    pub fn shared(self) -> bool {
        matches!(self, States::Shared | States::Both)
    }
    fn count(self) -> u32 {
        self.hitm() as u32 + self.shared() as u32
    }
    /// `hitm`, `shared`, `both`; None for anything else.
    pub fn parse(s: &str) -> Option<States> {
        match s.trim().to_ascii_lowercase().as_str() {
            "hitm" | "modified" => Some(States::Hitm),
            "shared" | "read-shared" | "clean" => Some(States::Shared),
            "both" | "all" => Some(States::Both),
            _ => None,
        }
    }
}

/// Which pairs of the chosen CPUs to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pairs {
    /// Every ordered pair up to [`ALL_PAIRS_MAX`] CPUs, the domains above.
    #[default]
    Auto,
    /// Every ordered pair, however many CPUs.
    All,
    /// One representative pair per sharing domain, both directions.
    Domains,
}

impl Pairs {
    /// `auto`, `all`, `domains`; None for anything else.
    pub fn parse(s: &str) -> Option<Pairs> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Some(Pairs::Auto),
            "all" => Some(Pairs::All),
            "domains" | "domain" | "representatives" => Some(Pairs::Domains),
            _ => None,
        }
    }
}

/// What the user asked for; `None` means "the default".
#[derive(Debug, Clone, Default)]
pub struct C2cConfig {
    /// The CPUs to measure between; default: every allowed CPU on small
    /// machines, representatives per sharing domain on big ones.
    pub cpus: Option<Vec<u32>>,
    /// The rule of each pair and state; default: from `total_budget`.
    pub rule: Option<StopRule>,
    /// The whole run's time, shared out over pairs and states when `rule`
    /// is not given. Default [`DEFAULT_TOTAL`].
    pub total_budget: Option<Duration>,
    /// CV at which a pair stops early (default 1 %), when `rule` is not given.
    pub cv_target: Option<f64>,
    /// Default: both.
    pub states: Option<States>,
    /// How long a thread waits for its partner; default
    /// [`pingpong::DEFAULT_TIMEOUT`].
    pub timeout: Option<Duration>,
    pub pairs: Pairs,
    /// Lines of the HITM round trips; default one.
    pub hitm_lines: HitmLines,
}

/// Everything resolved and checked.
#[derive(Debug, Clone)]
pub struct C2cPlan {
    pub cpus: Vec<u32>,
    /// Ordered pairs (a, b) in run order.
    pub pairs: Vec<(u32, u32)>,
    pub rule: StopRule,
    /// Domain of each pair, in `pairs` order.
    pub domains: Vec<Domain>,
    /// Node of each CPU of `cpus`.
    pub nodes: Vec<u32>,
    pub states: States,
    pub hitm_lines: HitmLines,
    pub timeout: Duration,
    /// True when representatives were chosen (the matrices are sparse).
    pub representatives: bool,
    pub notes: Vec<String>,
}

impl C2cPlan {
    /// Steps reported to [`StepProgress`], one per pair.
    pub fn steps(&self) -> usize {
        self.pairs.len()
    }
}

/// Resolve the CPUs and pairs against the topology (nothing runs here).
/// A CPU that is not allowed (or not online) is an error naming the
/// allowed ones.
pub fn plan(topo: &Topology, cfg: &C2cConfig) -> Result<C2cPlan, ExperimentError> {
    let allowed: Vec<u32> = topo
        .cpus
        .iter()
        .filter(|c| c.allowed && c.online)
        .map(|c| c.os_index)
        .collect();
    let asked = match &cfg.cpus {
        Some(v) => {
            let mut v = v.clone();
            v.sort_unstable();
            v.dedup();
            if let Some(&bad) = v.iter().find(|c| !allowed.contains(c)) {
                return Err(PlacementError::CpuNotAllowed {
                    cpu: bad,
                    allowed: allowed.clone(),
                }
                .into());
            }
            v
        }
        None => allowed.clone(),
    };
    if asked.len() < 2 {
        return Err(ExperimentError::Invalid(format!(
            "c2c needs two CPUs to move a line between; {} given (allowed CPUs: {})",
            asked.len(),
            crate::units::format_list(&allowed)
        )));
    }
    let doms = Domains::new(topo);
    let states = cfg.states.unwrap_or_default();
    let mut notes = Vec::new();
    let representatives = match cfg.pairs {
        Pairs::Auto => asked.len() > ALL_PAIRS_MAX,
        Pairs::All => false,
        Pairs::Domains => true,
    };
    let mut pairs = Vec::new();
    let mut domains = Vec::new();
    if representatives {
        for (d, a, b) in doms.representatives(&asked) {
            pairs.extend([(a, b), (b, a)]);
            domains.extend([d, d]);
        }
        notes.push(if cfg.pairs == Pairs::Domains {
            format!(
                "{} CPUs: one representative pair per sharing domain, both directions, as asked (--pairs all measures every pair)",
                asked.len()
            )
        } else {
            format!(
                "{} CPUs: one representative pair per sharing domain, both directions (up to {ALL_PAIRS_MAX} CPUs every pair is measured; --cpus or --pairs all chooses)",
                asked.len()
            )
        });
    } else {
        for &a in &asked {
            for &b in &asked {
                if a != b {
                    pairs.push((a, b));
                    domains.push(doms.of(a, b).unwrap_or(Domain::CrossPackage));
                }
            }
        }
    }
    let mut cpus: Vec<u32> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
    cpus.sort_unstable();
    cpus.dedup();
    let nodes = cpus
        .iter()
        .map(|&c| topo.cpu(c).and_then(|c| c.node).unwrap_or(0))
        .collect();
    let rule = cfg.rule.unwrap_or_else(|| {
        let total = cfg.total_budget.unwrap_or(DEFAULT_TOTAL);
        let share = total / (pairs.len() as u32 * states.count()).max(1);
        StopRule {
            warmup: 1,
            min_samples: 5,
            max_samples: 100_000,
            cv_target: cfg.cv_target.unwrap_or(0.01),
            budget: share.max(MIN_PAIR_BUDGET),
        }
    });
    Ok(C2cPlan {
        cpus,
        pairs,
        rule,
        domains,
        nodes,
        states,
        hitm_lines: cfg.hitm_lines,
        timeout: cfg.timeout.unwrap_or(pingpong::DEFAULT_TIMEOUT),
        representatives,
        notes,
    })
}

#[cfg(test)]
mod tests;
