//! Lock and atomic contention (AMD 40555 §3.5): threads on chosen CPUs
//! update a shared counter by atomic add and under a spin lock, or their own
//! counters on one line or on their own lines.
//!
//! This file is the plan: which CPUs each placement strategy takes from the
//! topology (SMT siblings of one core, cores sharing one L3, cores of one
//! node, cores spread over nodes), which thread counts each allows, and how
//! the read-modify-writes will run (LSE or exclusive loops on arm64). A
//! strategy the machine cannot satisfy is skipped with a note. The runner is
//! `run.rs`.

use crate::experiments::ExperimentError;
use crate::kernels::atomics::Rmw;
use crate::stats::StopRule;
use crate::topology::Topology;
use crate::units::format_list;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// What the threads do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockOp {
    AtomicAdd,
    SpinLock,
}

impl LockOp {
    pub const ALL: [LockOp; 2] = [LockOp::AtomicAdd, LockOp::SpinLock];
    pub const NAMES: &'static str = "atomic_add, spin_lock";
    pub fn name(self) -> &'static str {
        match self {
            LockOp::AtomicAdd => "atomic_add",
            LockOp::SpinLock => "spin_lock",
        }
    }
    pub fn parse(s: &str) -> Option<LockOp> {
        match s.trim().to_ascii_lowercase().replace('-', "_").as_str() {
            "atomic_add" | "add" | "atomic" => Some(LockOp::AtomicAdd),
            "spin_lock" | "spin" | "lock" => Some(LockOp::SpinLock),
            _ => None,
        }
    }
}

/// Where the counters are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sharing {
    /// One counter (and one lock) for all threads.
    Shared,
    /// Each thread its own counter, packed into one cache line.
    FalseSharing,
    /// Each thread its own counter on its own line (two lines apart, out of
    /// reach of adjacent-line prefetchers).
    OwnLine,
}

impl Sharing {
    pub const ALL: [Sharing; 3] = [Sharing::Shared, Sharing::FalseSharing, Sharing::OwnLine];
    pub const NAMES: &'static str = "shared, false_sharing, own_line";
    pub fn name(self) -> &'static str {
        match self {
            Sharing::Shared => "shared",
            Sharing::FalseSharing => "false_sharing",
            Sharing::OwnLine => "own_line",
        }
    }
    pub fn parse(s: &str) -> Option<Sharing> {
        match s.trim().to_ascii_lowercase().replace('-', "_").as_str() {
            "shared" => Some(Sharing::Shared),
            "false_sharing" | "false" => Some(Sharing::FalseSharing),
            "own_line" | "own" | "padded" => Some(Sharing::OwnLine),
            _ => None,
        }
    }
}

/// How the threads are placed when no CPUs are given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    SameCore,
    SameL3,
    SameNode,
    CrossNode,
}

impl Placement {
    pub const ALL: [Placement; 4] = [
        Placement::SameCore,
        Placement::SameL3,
        Placement::SameNode,
        Placement::CrossNode,
    ];
    pub const NAMES: &'static str = "same_core, same_l3, same_node, cross_node";
    pub fn name(self) -> &'static str {
        match self {
            Placement::SameCore => "same_core",
            Placement::SameL3 => "same_l3",
            Placement::SameNode => "same_node",
            Placement::CrossNode => "cross_node",
        }
    }
    pub fn parse(s: &str) -> Option<Placement> {
        match s.trim().to_ascii_lowercase().replace('-', "_").as_str() {
            "same_core" | "smt" => Some(Placement::SameCore),
            "same_l3" | "l3" => Some(Placement::SameL3),
            "same_node" | "node" => Some(Placement::SameNode),
            "cross_node" | "cross" => Some(Placement::CrossNode),
            _ => None,
        }
    }
}

/// Which read-modify-writes to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AtomicsChoice {
    /// The best the CPU has (LSE where present on arm64).
    #[default]
    Auto,
    /// arm64 LSE instructions; refused where the CPU lacks them.
    Lse,
    /// arm64 load/store-exclusive loops (every arm64 CPU has them).
    LoadStoreExclusive,
}

impl AtomicsChoice {
    pub const NAMES: &'static str = "auto, lse, llsc";
    pub fn parse(s: &str) -> Option<AtomicsChoice> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Some(AtomicsChoice::Auto),
            "lse" => Some(AtomicsChoice::Lse),
            "llsc" | "ll/sc" | "exclusive" | "ldxr" => Some(AtomicsChoice::LoadStoreExclusive),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct LocksConfig {
    /// Explicit CPUs; default: placements chosen from the topology.
    pub cpus: Option<Vec<u32>>,
    pub rule: Option<StopRule>,
    /// Thread counts; default 1, 2, 4, ... up to what each placement allows.
    pub threads: Option<Vec<usize>>,
    /// Default: every placement the machine can satisfy.
    pub placements: Option<Vec<Placement>>,
    /// Default: both.
    pub ops: Option<Vec<LockOp>>,
    /// Default: all three.
    pub sharing: Option<Vec<Sharing>>,
    pub atomics: AtomicsChoice,
    /// Whether the CPU has LSE; None: ask the platform (arm64's hwcap).
    /// Given by tests to plan for a CPU without (or with) LSE.
    pub cpu_has_lse: Option<bool>,
}

#[derive(Debug, Clone)]
pub struct LocksPlan {
    pub rule: StopRule,
    /// (op, sharing, placement, cpus) in run order.
    pub runs: Vec<(String, String, String, Vec<u32>)>,
    /// How the read-modify-writes run.
    pub rmw: Rmw,
    /// Node of every CPU the runs use.
    pub node_of: BTreeMap<u32, u32>,
    /// Placements skipped, thread counts a placement cannot hold.
    pub notes: Vec<String>,
}

impl LocksPlan {
    pub fn steps(&self) -> usize {
        self.runs.len()
    }
}

/// The default sampling of one run: 200 ms, a CV of 2 % ends it early. A
/// contended counter's rate is steady within a few per cent once the
/// threads run; the figure is about scaling, not the last per cent.
pub fn default_rule() -> StopRule {
    StopRule {
        warmup: 1,
        min_samples: 5,
        max_samples: 1000,
        cv_target: 0.02,
        budget: Duration::from_millis(200),
    }
}

/// The length of one timed slice: a tenth of the run's budget, between
/// 1 ms (hundreds of thousands of operations even fully contended) and
/// 100 ms.
pub fn slice_of(rule: &StopRule) -> Duration {
    Duration::from_secs_f64((rule.budget.as_secs_f64() / 10.0).clamp(1e-3, 0.1))
}

/// One allowed online CPU per physical core, grouped by core, in CPU order:
/// (core's first allowed CPU, all its allowed CPUs).
fn cores(topo: &Topology, cpus: &[u32]) -> Vec<Vec<u32>> {
    let mut by_core: BTreeMap<_, Vec<u32>> = BTreeMap::new();
    let mut order = Vec::new();
    for &c in cpus {
        let Some(cpu) = topo.cpu(c) else { continue };
        let key = topo.core_key(cpu);
        if !by_core.contains_key(&key) {
            order.push(key);
        }
        by_core.entry(key).or_default().push(c);
    }
    order
        .into_iter()
        .map(|k| by_core.remove(&k).unwrap_or_default())
        .collect()
}

fn usable_cpus(topo: &Topology) -> Vec<u32> {
    topo.cpus
        .iter()
        .filter(|c| c.allowed && c.online && topo.allowed.cpus.contains(&c.os_index))
        .map(|c| c.os_index)
        .collect()
}

/// The instances of the L3 (the last-level cache where there is no L3) as
/// CPU sets, and the level used.
fn llc_sets(topo: &Topology) -> Option<(u32, Vec<Vec<u32>>)> {
    let levels: BTreeSet<u32> = topo
        .caches
        .iter()
        .filter(|c| c.kind != "Instruction")
        .map(|c| c.level)
        .collect();
    let level = if levels.contains(&3) {
        3
    } else {
        *levels.iter().next_back()?
    };
    let sets: Vec<Vec<u32>> = topo
        .caches
        .iter()
        .filter(|c| c.level == level && c.kind != "Instruction")
        .map(|c| c.cpus.clone())
        .collect();
    Some((level, sets))
}

/// Interleave lists: first of each, then second of each, ...
fn round_robin(lists: &[Vec<u32>]) -> Vec<u32> {
    let mut out = Vec::new();
    let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
    for i in 0..longest {
        for l in lists {
            if let Some(&c) = l.get(i) {
                out.push(c);
            }
        }
    }
    out
}

/// The CPUs a placement uses, in the order threads take them (its maximum
/// thread count is their number), or why the machine cannot satisfy it.
pub fn placement_cpus(topo: &Topology, p: Placement) -> Result<Vec<u32>, String> {
    let usable = usable_cpus(topo);
    let node_of = |c: u32| topo.cpu(c).and_then(|x| x.node);
    let firsts = |cpus: &[u32]| -> Vec<u32> { cores(topo, cpus).iter().map(|g| g[0]).collect() };
    match p {
        Placement::SameCore => cores(topo, &usable)
            .into_iter()
            .find(|g| g.len() >= 2)
            .ok_or_else(|| "no core has two allowed SMT siblings (no SMT, or SMT off)".into()),
        Placement::SameL3 => {
            let (level, sets) = llc_sets(topo).ok_or("the caches are not known")?;
            let best = sets
                .iter()
                .map(|s| {
                    let mine: Vec<u32> = s.iter().copied().filter(|c| usable.contains(c)).collect();
                    firsts(&mine)
                })
                .max_by_key(Vec::len)
                .unwrap_or_default();
            if best.len() < 2 {
                return Err(format!(
                    "no L{level} cache is shared by two cores this process may use"
                ));
            }
            Ok(best)
        }
        Placement::SameNode => {
            let mut best: Vec<u32> = Vec::new();
            for n in topo.allowed_cpu_nodes() {
                let mine: Vec<u32> = usable
                    .iter()
                    .copied()
                    .filter(|&c| node_of(c) == Some(n))
                    .collect();
                // Spread over the node's L3s, so two threads are in
                // different L3s where the node has several.
                let per_l3: Vec<Vec<u32>> = match llc_sets(topo) {
                    Some((_, sets)) => {
                        let mut groups: Vec<Vec<u32>> = sets
                            .iter()
                            .map(|s| {
                                firsts(
                                    &mine
                                        .iter()
                                        .copied()
                                        .filter(|c| s.contains(c))
                                        .collect::<Vec<_>>(),
                                )
                            })
                            .filter(|g| !g.is_empty())
                            .collect();
                        let covered: BTreeSet<u32> = groups.iter().flatten().copied().collect();
                        let rest: Vec<u32> = firsts(&mine)
                            .into_iter()
                            .filter(|c| !covered.contains(c))
                            .collect();
                        if !rest.is_empty() {
                            groups.push(rest);
                        }
                        groups
                    }
                    None => vec![firsts(&mine)],
                };
                let order = round_robin(&per_l3);
                if order.len() > best.len() {
                    best = order;
                }
            }
            if best.len() < 2 {
                return Err("no node has two cores this process may use".into());
            }
            Ok(best)
        }
        Placement::CrossNode => {
            let per_node: Vec<Vec<u32>> = topo
                .allowed_cpu_nodes()
                .into_iter()
                .map(|n| {
                    firsts(
                        &usable
                            .iter()
                            .copied()
                            .filter(|&c| node_of(c) == Some(n))
                            .collect::<Vec<_>>(),
                    )
                })
                .filter(|g| !g.is_empty())
                .collect();
            if per_node.len() < 2 {
                return Err("only one node has CPUs this process may use".into());
            }
            Ok(round_robin(&per_node))
        }
    }
}

/// 1, 2, 4, ... below `max`, and `max`.
fn default_counts(max: usize) -> Vec<usize> {
    let mut v = Vec::new();
    let mut n = 1;
    while n < max {
        v.push(n);
        n *= 2;
    }
    v.push(max);
    v
}

pub fn plan(topo: &Topology, cfg: &LocksConfig) -> Result<LocksPlan, ExperimentError> {
    let lse = cfg
        .cpu_has_lse
        .unwrap_or_else(crate::kernels::atomics::cpu_has_lse);
    let best = Rmw::best(lse);
    let rmw = match cfg.atomics {
        AtomicsChoice::Auto => best,
        AtomicsChoice::Lse if Rmw::Lse.runs_here(lse) => Rmw::Lse,
        AtomicsChoice::LoadStoreExclusive if Rmw::LoadStoreExclusive.runs_here(lse) => {
            Rmw::LoadStoreExclusive
        }
        asked => {
            let what = if asked == AtomicsChoice::Lse {
                "LSE atomics"
            } else {
                "load/store-exclusive loops"
            };
            let valid = if cfg!(target_arch = "aarch64") {
                "auto, llsc"
            } else {
                "auto"
            };
            return Err(ExperimentError::Invalid(format!(
                "{what} asked for, but this CPU has {} (valid here: {valid})",
                best.name()
            )));
        }
    };
    let ops = cfg.ops.clone().unwrap_or(LockOp::ALL.to_vec());
    let sharing = cfg.sharing.clone().unwrap_or(Sharing::ALL.to_vec());
    if ops.is_empty() || sharing.is_empty() {
        return Err(ExperimentError::Invalid(
            "nothing to run: no operation or no sharing".into(),
        ));
    }
    if let Some(t) = &cfg.threads {
        if t.is_empty() || t.contains(&0) {
            return Err(ExperimentError::Invalid(
                "thread counts must be whole numbers from 1".into(),
            ));
        }
    }
    let usable = usable_cpus(topo);
    let mut notes = Vec::new();
    // (placement name, CPUs in the order threads take them)
    let mut groups: Vec<(String, Vec<u32>)> = Vec::new();
    match &cfg.cpus {
        Some(list) => {
            let mut seen = BTreeSet::new();
            for &c in list {
                if !usable.contains(&c) {
                    return Err(ExperimentError::Invalid(format!(
                        "CPU {c} is not one this process may use (allowed: {})",
                        format_list(&usable)
                    )));
                }
                if !seen.insert(c) {
                    return Err(ExperimentError::Invalid(format!(
                        "CPU {c} is given twice; each thread needs its own CPU"
                    )));
                }
            }
            if list.is_empty() {
                return Err(ExperimentError::Invalid("no CPU given".into()));
            }
            groups.push(("cpus".into(), list.clone()));
        }
        None => {
            for p in cfg.placements.clone().unwrap_or(Placement::ALL.to_vec()) {
                match placement_cpus(topo, p) {
                    Ok(cpus) => groups.push((p.name().into(), cpus)),
                    Err(why) => notes.push(format!("{} skipped: {why}", p.name())),
                }
            }
            if groups.is_empty() {
                return Err(ExperimentError::Invalid(format!(
                    "no placement asked for can be satisfied here ({})",
                    notes.join("; ")
                )));
            }
        }
    }
    let widest = groups.iter().map(|(_, c)| c.len()).max().unwrap_or(0);
    if let Some(t) = &cfg.threads {
        if let Some(&too) = t.iter().find(|&&n| n > widest) {
            return Err(ExperimentError::Invalid(format!(
                "{too} threads, but the widest placement here holds {widest} (one thread per CPU)"
            )));
        }
    }
    let given = cfg.cpus.is_some();
    // (placement, cpus) in order; a one-thread baseline once, first.
    let mut shapes: Vec<(String, Vec<u32>)> = Vec::new();
    let mut baseline = false;
    for (name, cpus) in &groups {
        let counts = match &cfg.threads {
            Some(t) => t.clone(),
            None => default_counts(cpus.len()),
        };
        for n in counts {
            if n > cpus.len() {
                notes.push(format!(
                    "{name}: {n} threads skipped, it holds {} ({})",
                    cpus.len(),
                    format_list(&cpus[..])
                ));
                continue;
            }
            if n == 1 && !given {
                // One thread contends with nobody: the same in every placement.
                if !baseline {
                    baseline = true;
                    shapes.insert(0, ("single".into(), vec![cpus[0]]));
                }
                continue;
            }
            let these = &cpus[..n];
            if let Some((first, _)) = shapes.iter().find(|(_, c)| c.as_slice() == these) {
                // Two strategies that pick the same CPUs here measure the same.
                notes.push(format!(
                    "{name}: {n} threads would run on the same CPUs as {first} ({}), not repeated",
                    format_list(these)
                ));
                continue;
            }
            shapes.push((name.clone(), these.to_vec()));
        }
    }
    let mut runs = Vec::new();
    for op in &ops {
        for (i, sh) in sharing.iter().enumerate() {
            for (name, cpus) in &shapes {
                // The baseline's sharing does not matter: once per op.
                if cpus.len() == 1 && i > 0 {
                    continue;
                }
                runs.push((
                    op.name().into(),
                    sh.name().into(),
                    name.clone(),
                    cpus.clone(),
                ));
            }
        }
    }
    let node_of = topo
        .cpus
        .iter()
        .filter_map(|c| Some((c.os_index, c.node?)))
        .collect();
    Ok(LocksPlan {
        rule: cfg.rule.unwrap_or_else(default_rule),
        runs,
        rmw,
        node_of,
        notes,
    })
}
