//! Cache-line transfer between CPUs: ping-pong on one line between two
//! pinned threads, the line modified by the other side (HITM) or held clean
//! by it (read-shared; see `kernels::pingpong`), for pairs of the chosen
//! CPUs.
//!
//! Which pairs: up to [`ALL_PAIRS_MAX`] CPUs (the allowed ones, or `cpus`
//! when given), every ordered pair, so the matrices are full (a HITM round
//! trip started by a and by b should agree; the read-shared transfer has a
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
//! ([`StepProgress::out_of_time`]) and returns what it has.

pub mod domains;

use super::{ExperimentError, StepProgress};
pub use crate::kernels::pingpong::HitmLines;
use crate::kernels::pingpong::{self, LineState, PairMeasure};
use crate::model::c2c::{C2cFailed, C2cPair, C2cResult, Domain, DomainSummary, Figure};
use crate::placement::PlacementError;
use crate::stats::StopRule;
use crate::timer::Timer;
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

fn figure(m: &PairMeasure) -> Figure {
    let s = &m.measured.summary;
    Figure {
        median: s.median,
        min: s.min,
        max: s.max,
        cv: s.cv,
        samples: m.measured.samples.clone(),
        stop: Some(m.measured.stop),
    }
}

/// Measure every pair of the plan, in order.
pub fn run(plan: &C2cPlan, progress: &mut dyn StepProgress) -> Result<C2cResult, ExperimentError> {
    run_with(plan, progress, &mut |_| {})
}

/// [`run`], handing the result so far to `partial` after every pair (the
/// command rewrites `--output` with it, so a killed run keeps its pairs).
pub fn run_with(
    plan: &C2cPlan,
    progress: &mut dyn StepProgress,
    partial: &mut dyn FnMut(&C2cResult),
) -> Result<C2cResult, ExperimentError> {
    let timer = Timer::get();
    let n = plan.cpus.len();
    let idx = |c: u32| plan.cpus.iter().position(|&x| x == c);
    let node = |c: u32| idx(c).map(|i| plan.nodes[i]).unwrap_or(0);
    let mut r = C2cResult {
        schema: "numaprobe/1".into(),
        unit: "ns".into(),
        cpus: plan.cpus.clone(),
        hitm: vec![vec![None; n]; n],
        shared: vec![vec![None; n]; n],
        pairs: Vec::new(),
        domains: Vec::new(),
        atomics: "loads and stores".into(),
        hitm_lines: plan
            .states
            .hitm()
            .then(|| plan.hitm_lines.name().to_string()),
        platform_atomics: crate::platform::Platform::live().atomics,
        stop_rule: plan.rule,
        timer: timer.info(),
        notes: plan.notes.clone(),
        failed: Vec::new(),
        complete: false,
        interrupted: false,
    };
    let total = plan.pairs.len();
    let mut done = 0;
    for (i, (&(a, b), &d)) in plan.pairs.iter().zip(&plan.domains).enumerate() {
        progress.step_started(i, total, &format!("CPU {a} -> CPU {b} ({})", d.name()));
        if crate::cancel::requested() {
            r.interrupted = true;
            break;
        }
        if progress.out_of_time() {
            r.notes.push(format!(
                "stopped after {i} of {total} pairs: the time given to c2c was spent"
            ));
            break;
        }
        // A step samples once per line state: the caller's rule is for the
        // whole step, so it is asked for all states and split between them
        // (asking for one state's would let a budget keeper plan half of
        // what the step takes).
        let n = plan.states.count().max(1);
        let step = progress.rule_for_step(
            i,
            StopRule {
                budget: plan.rule.budget * n,
                ..plan.rule
            },
        );
        let rule = StopRule {
            budget: (step.budget / n).max(MIN_PAIR_BUDGET),
            ..step
        };
        let mut reasons = Vec::new();
        let mut one = |state: LineState, name: &str| -> Option<Figure> {
            match pingpong::measure_pair(a, b, state, plan.hitm_lines, &rule, plan.timeout) {
                Ok(m) => Some(figure(&m)),
                Err(e) => {
                    reasons.push(format!("{name}: {e}"));
                    None
                }
            }
        };
        let hitm = plan
            .states
            .hitm()
            .then(|| one(LineState::Hitm, "hitm"))
            .flatten();
        // A stop asked for during HITM leaves the pair's other state out.
        let shared = (plan.states.shared() && !crate::cancel::requested())
            .then(|| one(LineState::Shared, "shared"))
            .flatten();
        if !reasons.is_empty() {
            r.failed.push(C2cFailed {
                a,
                b,
                reason: reasons.join("; "),
            });
        }
        if hitm.is_some() || shared.is_some() {
            if let (Some(x), Some(y)) = (idx(a), idx(b)) {
                r.hitm[x][y] = hitm.as_ref().map(|f| f.median);
                r.shared[x][y] = shared.as_ref().map(|f| f.median);
            }
            r.pairs.push(C2cPair {
                a,
                b,
                node_a: node(a),
                node_b: node(b),
                domain: d,
                hitm,
                shared,
            });
        }
        done += 1;
        r.domains = DomainSummary::of_pairs(&r.pairs);
        partial(&r);
        progress.step_finished(i, total);
    }
    r.interrupted |= crate::cancel::requested();
    r.domains = DomainSummary::of_pairs(&r.pairs);
    r.complete = !r.interrupted && done == total && r.failed.is_empty();
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::{testing, NoProgress};

    fn quick() -> C2cConfig {
        C2cConfig {
            rule: Some(StopRule {
                warmup: 1,
                min_samples: 3,
                max_samples: 20,
                cv_target: 0.0,
                budget: Duration::from_millis(5),
            }),
            ..C2cConfig::default()
        }
    }

    #[test]
    fn every_ordered_pair_of_this_machine_is_measured() {
        let topo = testing::live_topology();
        let p = plan(&topo, &quick());
        let allowed = crate::placement::allowed_cpus().unwrap();
        if allowed.len() < 2 {
            assert!(p.is_err());
            return;
        }
        let mut p = p.unwrap();
        // Two pairs are enough to test the run on a machine of any size.
        p.pairs.truncate(2);
        p.domains.truncate(2);
        let r = run(&p, &mut NoProgress).unwrap();
        assert!(r.complete, "{:?}", r.failed);
        assert_eq!(r.pairs.len(), 2);
        for pair in &r.pairs {
            let h = pair.hitm.as_ref().unwrap();
            let s = pair.shared.as_ref().unwrap();
            assert!(h.median > 0.0 && h.median.is_finite());
            assert!(s.median > 0.0 && s.median.is_finite());
            let (x, y) = (
                r.cpus.iter().position(|&c| c == pair.a).unwrap(),
                r.cpus.iter().position(|&c| c == pair.b).unwrap(),
            );
            assert_eq!(r.hitm[x][y], Some(h.median));
        }
        assert!(!r.domains.is_empty());
        assert_eq!(r.atomics, "loads and stores");
    }

    #[test]
    fn a_cpu_not_allowed_is_named_with_the_allowed_ones() {
        let topo = testing::live_topology();
        let cfg = C2cConfig {
            cpus: Some(vec![0, 4095]),
            ..quick()
        };
        let e = plan(&topo, &cfg).unwrap_err().to_string();
        assert!(e.contains("CPU 4095 is not allowed"), "{e}");
        assert!(e.contains("allowed CPUs: "), "{e}");
        let cfg = C2cConfig {
            cpus: Some(vec![0]),
            ..quick()
        };
        assert!(plan(&topo, &cfg).is_err());
    }

    /// Stops before the second pair as a budget-keeping caller would.
    struct OutOfTimeAfterOne(usize);
    impl StepProgress for OutOfTimeAfterOne {
        fn step_finished(&mut self, _i: usize, _t: usize) {
            self.0 += 1;
        }
        fn out_of_time(&self) -> bool {
            self.0 >= 1
        }
    }

    /// Records the rule each step asks for and cuts it to 4 ms.
    struct Cut(Vec<Duration>);
    impl StepProgress for Cut {
        fn rule_for_step(&mut self, _i: usize, planned: StopRule) -> StopRule {
            self.0.push(planned.budget);
            StopRule {
                budget: Duration::from_millis(4),
                ..planned
            }
        }
    }

    #[test]
    fn a_step_asks_a_budget_keeper_for_every_state_it_samples() {
        let topo = testing::live_topology();
        let Ok(mut p) = plan(&topo, &quick()) else {
            return;
        };
        p.pairs.truncate(1);
        p.domains.truncate(1);
        let mut cut = Cut(Vec::new());
        let r = run(&p, &mut cut).unwrap();
        // Both states: twice one state's budget asked for the step.
        assert_eq!(cut.0, vec![p.rule.budget * 2]);
        assert!(r.pairs[0].hitm.is_some());
        // The clean state is measured, or refused with its reason where the
        // clock costs more than a sample (an emulated CPU).
        assert!(
            r.pairs[0].shared.is_some()
                || r.failed
                    .iter()
                    .any(|f| f.reason.contains("reading the clock")),
            "{:?}",
            r.failed
        );
    }

    #[test]
    fn out_of_time_between_pairs_gives_a_partial_result() {
        let topo = testing::live_topology();
        let Ok(mut p) = plan(&topo, &quick()) else {
            return;
        };
        p.states = States::Hitm;
        p.pairs.truncate(2);
        p.domains.truncate(2);
        if p.pairs.len() < 2 {
            return;
        }
        let r = run(&p, &mut OutOfTimeAfterOne(0)).unwrap();
        assert_eq!(r.pairs.len(), 1);
        assert!(!r.complete && !r.interrupted);
        assert!(r.pairs[0].shared.is_none());
    }

    #[test]
    fn every_pair_hands_on_the_result_so_far() {
        let topo = testing::live_topology();
        let Ok(mut p) = plan(&topo, &quick()) else {
            return;
        };
        p.states = States::Hitm;
        p.pairs.truncate(2);
        p.domains.truncate(2);
        let mut seen = Vec::new();
        let r = run_with(&p, &mut NoProgress, &mut |partial| {
            seen.push((partial.pairs.len(), partial.complete, partial.domains.len()))
        })
        .unwrap();
        let n = p.pairs.len();
        assert_eq!(seen.len(), n);
        for (i, &(pairs, complete, domains)) in seen.iter().enumerate() {
            assert_eq!(pairs, i + 1);
            assert!(!complete && domains >= 1);
        }
        assert!(r.complete);
    }

    /// `n` CPUs, one core each, on two packages (one node each); the
    /// CPUs in `offline` are online = false, `barred` not allowed.
    fn machine(n: u32, offline: &[u32], barred: &[u32]) -> Topology {
        use crate::topology::testing::{build, CpuSpec};
        let cpus: Vec<CpuSpec> = (0..n)
            .map(|c| {
                let pkg = i64::from(c >= n / 2);
                CpuSpec {
                    allowed: !barred.contains(&c),
                    ..CpuSpec::new(c, pkg, i64::from(c), pkg as u32)
                }
            })
            .collect();
        let mut t = build("/", &cpus, &[], None);
        for c in &mut t.cpus {
            c.online = !offline.contains(&c.os_index);
        }
        t
    }

    #[test]
    fn pairs_parse_and_choose_every_pair_or_one_per_domain() {
        assert_eq!(Pairs::parse(" Domains "), Some(Pairs::Domains));
        assert_eq!(Pairs::parse("all"), Some(Pairs::All));
        assert_eq!(Pairs::parse("auto"), Some(Pairs::Auto));
        assert_eq!(Pairs::parse("some"), None);
        let with = |t: &Topology, pairs| {
            plan(
                t,
                &C2cConfig {
                    pairs,
                    ..C2cConfig::default()
                },
            )
            .unwrap()
        };
        // Up to ALL_PAIRS_MAX CPUs auto is every ordered pair; one more and
        // it is one pair per domain (here two: same package, cross package).
        let at = machine(ALL_PAIRS_MAX as u32, &[], &[]);
        let p = with(&at, Pairs::Auto);
        assert!(!p.representatives);
        assert_eq!(p.pairs.len(), ALL_PAIRS_MAX * (ALL_PAIRS_MAX - 1));
        let over = machine(ALL_PAIRS_MAX as u32 + 2, &[], &[]);
        let p = with(&over, Pairs::Auto);
        assert!(p.representatives);
        assert_eq!(p.pairs.len(), 4, "{:?}", p.pairs);
        assert!(!p.notes[0].contains("as asked"), "{}", p.notes[0]);
        // Forced either way.
        let p = with(&over, Pairs::All);
        assert!(!p.representatives);
        assert_eq!(p.pairs.len(), 18 * 17);
        let p = with(&at, Pairs::Domains);
        assert!(p.representatives);
        assert_eq!(p.pairs.len(), 4);
        assert!(p.notes[0].contains("as asked"), "{}", p.notes[0]);
    }

    #[test]
    fn only_cpus_both_online_and_allowed_are_measured() {
        let t = machine(4, &[1], &[2]);
        let p = plan(&t, &C2cConfig::default()).unwrap();
        assert_eq!(p.cpus, vec![0, 3]);
        let e = plan(
            &t,
            &C2cConfig {
                cpus: Some(vec![0, 1]),
                ..C2cConfig::default()
            },
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("CPU 1 is not allowed"), "{e}");
    }

    #[test]
    fn the_budget_is_shared_over_pairs_and_states() {
        let topo = testing::live_topology();
        let cfg = C2cConfig {
            total_budget: Some(Duration::from_secs(8)),
            ..C2cConfig::default()
        };
        let Ok(p) = plan(&topo, &cfg) else {
            return;
        };
        let per = Duration::from_secs(8) / (2 * p.pairs.len() as u32);
        assert_eq!(p.rule.budget, per.max(MIN_PAIR_BUDGET));
        // One state: the pairs share it all.
        let t = machine(4, &[], &[]);
        let p = plan(
            &t,
            &C2cConfig {
                total_budget: Some(Duration::from_secs(6)),
                states: Some(States::Hitm),
                ..C2cConfig::default()
            },
        )
        .unwrap();
        assert_eq!(p.rule.budget, Duration::from_secs(6) / 12);
        assert_eq!(States::parse("HITM"), Some(States::Hitm));
        assert_eq!(States::parse("nope"), None);
    }
}
