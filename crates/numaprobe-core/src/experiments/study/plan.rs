//! The planner: from a topology, its hop map and the user's choices to a list
//! of experiments, each a list of cases (one bar of the note's figures) run
//! under one background setting.
//!
//! Presets choose nodes generically, from hop counts derived from distance
//! levels (`hops.rs`), never from node numbers that happen to fit one machine:
//! "node 0" in the note becomes the first node with allowed CPUs, "1 hop away"
//! the nodes at the nearest remote level, and so on. When the machine cannot
//! host a case (one node, no 2-hop node, ...) the case is left out and one
//! note line says why; what can run still runs.

use super::background::{place_background, LoadLevel, Subscription};
use super::hops::{hop_words, HopMap};
use super::label::{
    all_mixes, case_label, mix_name, with_accesses, Access, Mix, ThreadSpec, MAX_MIX_THREADS,
};
use super::StudyError;
use crate::topology::Topology;
use std::collections::{BTreeSet, HashSet};

/// Most cases the myths search runs; the rest are listed in a note.
pub const MAX_MYTH_CASES: usize = 64;

pub use crate::model::study_plan::{CasePlan, ExperimentPlan, Preset, StudyPlan, ThreadPlan};

/// The user's choices that shape a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanOptions {
    pub mix: Mix,
    /// `--background`; None lets a preset sweep every level.
    pub load: Option<LoadLevel>,
    /// `--subscription`; None lets a preset use the note's (high, and full
    /// for the last crossfire figure).
    pub subscription: Option<Subscription>,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            mix: Mix::Fixed,
            load: None,
            subscription: None,
        }
    }
}

/// Resolve a label against the machine: its node must have allowed CPUs, its
/// core index must exist there, its memory node must be allowed.
pub fn resolve(topo: &Topology, hops: &HopMap, spec: ThreadSpec) -> Result<ThreadPlan, StudyError> {
    let label = spec.to_string();
    let cpu_nodes = topo.allowed_cpu_nodes();
    if !cpu_nodes.contains(&spec.node) {
        return Err(StudyError::NoSuchCpuNode {
            label,
            node: spec.node,
            valid: list(&cpu_nodes),
        });
    }
    let cores = crate::placement::binding::core_order(topo, spec.node);
    let cpu = *cores.get(spec.core).ok_or_else(|| StudyError::NoSuchCore {
        label: label.clone(),
        node: spec.node,
        cores: cores.len(),
    })?;
    let mems = topo.allowed_mem_nodes();
    if !mems.contains(&spec.mem) {
        return Err(StudyError::NoSuchMemNode {
            label,
            node: spec.mem,
            valid: list(&mems),
        });
    }
    let hops = hops.hops(spec.node, spec.mem).unwrap_or(0);
    Ok(ThreadPlan { spec, cpu, hops })
}

fn list(v: &[u32]) -> String {
    if v.is_empty() {
        return "none".into();
    }
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}

fn make_case(
    topo: &Topology,
    hops: &HopMap,
    specs: &[ThreadSpec],
    description: Option<&str>,
) -> Result<CasePlan, StudyError> {
    let threads = specs
        .iter()
        .map(|&s| resolve(topo, hops, s))
        .collect::<Result<Vec<_>, _>>()?;
    let mut seen = BTreeSet::new();
    for t in &threads {
        if !seen.insert(t.cpu) {
            return Err(StudyError::SharedCore {
                case: case_label(specs),
                cpu: t.cpu,
            });
        }
    }
    let hop_text = threads
        .iter()
        .map(|t| hop_words(t.hops))
        .collect::<Vec<_>>()
        .join("-");
    let description = match description {
        Some(d) if !d.is_empty() => format!("{d} {hop_text}"),
        _ => hop_text,
    };
    Ok(CasePlan {
        label: case_label(specs),
        description,
        threads,
    })
}

fn experiment(
    topo: &Topology,
    id: String,
    title: String,
    figure: Option<&str>,
    mix: String,
    (load, subscription): (LoadLevel, Subscription),
    cases: Vec<CasePlan>,
) -> ExperimentPlan {
    let fg: Vec<u32> = cases
        .iter()
        .flat_map(|c| c.threads.iter().map(|t| t.cpu))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    ExperimentPlan {
        id,
        title,
        figure: figure.map(str::to_string),
        mix,
        load,
        subscription,
        background: place_background(topo, &fg, load, subscription),
        cases,
        baseline: 0,
    }
}

/// The background settings an experiment family runs under: the user's one
/// choice, or the note's sweep with the user's subscription applied.
fn settings(
    opts: &PlanOptions,
    sweep: &[(LoadLevel, Subscription)],
) -> Vec<(LoadLevel, Subscription)> {
    if let Some(load) = opts.load {
        return vec![(load, opts.subscription.unwrap_or(Subscription::High))];
    }
    let mut out: Vec<(LoadLevel, Subscription)> = Vec::new();
    for &(l, s) in sweep {
        let s = opts.subscription.unwrap_or(s);
        if !out.contains(&(l, s)) {
            out.push((l, s));
        }
    }
    out
}

fn setting_id(load: LoadLevel, sub: Subscription) -> String {
    if load == LoadLevel::None {
        "idle".into()
    } else {
        format!("{}-{}", load.name(), sub.name())
    }
}

fn setting_words(load: LoadLevel, sub: Subscription) -> String {
    if load == LoadLevel::None {
        format!("on {}", load.wording())
    } else {
        format!("under {} ({})", load.wording(), sub.wording())
    }
}

/// The note's sweep of background settings (idle, then low to very high at
/// high subscription).
const SWEEP: [(LoadLevel, Subscription); 5] = [
    (LoadLevel::None, Subscription::High),
    (LoadLevel::Low, Subscription::High),
    (LoadLevel::Medium, Subscription::High),
    (LoadLevel::High, Subscription::High),
    (LoadLevel::VeryHigh, Subscription::High),
];

/// CPU nodes in the order presets prefer them for "node 0": nodes whose own
/// memory the process may use first (a cpuset can allow a node's CPUs but not
/// its memory, and then no local case can run there), each group ascending.
fn home_candidates(topo: &Topology) -> Vec<u32> {
    let mems = topo.allowed_mem_nodes();
    let (mut local, other): (Vec<u32>, Vec<u32>) = topo
        .allowed_cpu_nodes()
        .into_iter()
        .partition(|n| mems.contains(n));
    local.extend(other);
    local
}

/// CPU nodes whose own memory is allowed: where a thread can work locally.
fn local_cpu_nodes(topo: &Topology) -> Vec<u32> {
    let mems = topo.allowed_mem_nodes();
    topo.allowed_cpu_nodes()
        .into_iter()
        .filter(|n| mems.contains(n))
        .collect()
}

/// Plan a preset on this machine.
pub fn plan_preset(
    topo: &Topology,
    hops: &HopMap,
    preset: Preset,
    opts: &PlanOptions,
) -> Result<StudyPlan, StudyError> {
    let Some(&home) = home_candidates(topo).first() else {
        return Err(StudyError::NoCpus);
    };
    let mut plan = StudyPlan {
        preset: Some(preset),
        hop_map: hops.clone(),
        experiments: Vec::new(),
        notes: Vec::new(),
    };
    match preset {
        Preset::Hops => plan_hops(topo, hops, home, opts, &mut plan)?,
        Preset::Crossfire => plan_crossfire(topo, hops, opts, &mut plan)?,
        Preset::SameNode => plan_same_node(topo, hops, opts, &mut plan)?,
        Preset::Myths => plan_myths(topo, hops, opts, &mut plan)?,
    }
    Ok(plan)
}

/// The lowest allowed memory node at each hop count from `from`, nearest first.
fn nearest_per_hop(topo: &Topology, hops: &HopMap, from: u32) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for m in topo.allowed_mem_nodes() {
        let h = hops.hops(from, m).unwrap_or(0);
        if !out.iter().any(|&(hh, _)| hh == h) {
            out.push((h, m));
        }
    }
    out.sort();
    out
}

fn plan_hops(
    topo: &Topology,
    hops: &HopMap,
    home: u32,
    opts: &PlanOptions,
    plan: &mut StudyPlan,
) -> Result<(), StudyError> {
    let targets = nearest_per_hop(topo, hops, home);
    let max = targets.last().map(|&(h, _)| h).unwrap_or(0);
    if max < 2 {
        plan.notes.push(format!(
            "hops: node {home} has no memory node {} away on this machine ({} NUMA node(s)); running the {} case(s) it has",
            if max == 0 { "1 or 2 hops" } else { "2 hops" },
            topo.nodes.len(),
            targets
                .iter()
                .map(|&(h, _)| hop_words(h))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let hop_list = targets
        .iter()
        .map(|&(h, _)| h.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    // Figure 4 is the read-only thread, figures 3 and 5 the write-only one.
    for (access, figure) in [(Access::Read, "figure 4"), (Access::Write, "figures 3, 5")] {
        for setting in settings(opts, &[(LoadLevel::None, Subscription::High)]) {
            let cases = targets
                .iter()
                .map(|&(_, m)| {
                    let spec = ThreadSpec {
                        node: home,
                        core: 0,
                        access,
                        mem: m,
                    };
                    make_case(topo, hops, &[spec], None)
                })
                .collect::<Result<Vec<_>, _>>()?;
            let wording = super::label::wording(access);
            let title = format!(
                "{}{} thread running on node {home}, accessing data from {hop_list} hops away {}",
                wording[..1].to_uppercase(),
                &wording[1..],
                setting_words(setting.0, setting.1)
            );
            plan.experiments.push(experiment(
                topo,
                format!(
                    "hops-{}-{}",
                    access.letter(),
                    setting_id(setting.0, setting.1)
                ),
                title,
                (setting.0 == LoadLevel::None).then_some(figure),
                access.letter().to_string(),
                setting,
                cases,
            ));
        }
    }
    Ok(())
}

fn mixes_for(opts: &PlanOptions, default: &[&[Access]]) -> Vec<Vec<Access>> {
    match opts.mix {
        Mix::All => all_mixes(2),
        Mix::Fixed => default.iter().map(|m| m.to_vec()).collect(),
    }
}

const WW: &[Access] = &[Access::Write, Access::Write];
const RR: &[Access] = &[Access::Read, Access::Read];

fn plan_crossfire(
    topo: &Topology,
    hops: &HopMap,
    opts: &PlanOptions,
    plan: &mut StudyPlan,
) -> Result<(), StudyError> {
    let cpu_nodes = local_cpu_nodes(topo);
    let mems = topo.allowed_mem_nodes();
    let h = |a: u32, b: u32| hops.hops(a, b).unwrap_or(0);
    // A and B: CPU nodes 1 hop apart whose memory is allowed too (the note's
    // N0 and N1: each writes its own memory in the baseline, the other's in
    // the crossfire case).
    let pair = cpu_nodes.iter().find_map(|&a| {
        cpu_nodes
            .iter()
            .find(|&&b| b != a && h(a, b) == 1)
            .map(|&b| (a, b))
    });
    let Some((a, b)) = pair else {
        plan.notes.push(format!(
            "crossfire: needs two NUMA nodes with CPUs and memory 1 hop apart, this machine has {} such node(s); running the 0 Hop-0 Hop baseline only",
            cpu_nodes.len()
        ));
        // What runs anyway: both local threads, on two nodes when there are
        // two, else on two cores of one node.
        let base = match (cpu_nodes.first(), cpu_nodes.get(1)) {
            (Some(&x), Some(&y)) => vec![(x, 0usize, x), (y, 0, y)],
            (Some(&x), None) if crate::placement::binding::core_order(topo, x).len() >= 2 => {
                vec![(x, 0, x), (x, 1, x)]
            }
            _ => {
                // Still one line: the baseline cannot run either.
                if let Some(n) = plan.notes.last_mut() {
                    *n = n.replace(
                        "running the 0 Hop-0 Hop baseline only",
                        "and no two cores for the baseline either; nothing runs",
                    );
                }
                return Ok(());
            }
        };
        crossfire_experiments(topo, hops, opts, plan, &[(base, "")])?;
        return Ok(());
    };
    // C: a memory node 1 hop from B other than A (the note's N3), preferring
    // one far from A so the no-crossfire traffic takes another link.
    let c = mems
        .iter()
        .copied()
        .filter(|&c| c != a && c != b && h(b, c) == 1)
        .max_by_key(|&c| (h(a, c), std::cmp::Reverse(c)));
    let mut placements: Vec<Placement<'_>> = vec![(vec![(a, 0, a), (b, 0, b)], "")];
    match c {
        Some(c) => placements.push((vec![(a, 0, b), (b, 0, c)], "no crossfire")),
        None => plan.notes.push(format!(
            "crossfire: no memory node 1 hop from node {b} other than node {a}, so the no-crossfire case cannot run here"
        )),
    }
    placements.push((vec![(a, 0, b), (b, 0, a)], "crossfire"));
    crossfire_experiments(topo, hops, opts, plan, &placements)
}

/// Threads as (node, core index, memory node), and the case's description.
type Placement<'a> = (Vec<(u32, usize, u32)>, &'a str);

fn crossfire_experiments(
    topo: &Topology,
    hops: &HopMap,
    opts: &PlanOptions,
    plan: &mut StudyPlan,
    placements: &[Placement<'_>],
) -> Result<(), StudyError> {
    let sweep = [
        (LoadLevel::None, Subscription::High),
        (LoadLevel::Low, Subscription::High),
        (LoadLevel::Medium, Subscription::High),
        (LoadLevel::High, Subscription::High),
        (LoadLevel::VeryHigh, Subscription::High),
        (LoadLevel::VeryHigh, Subscription::Full),
    ];
    for setting in settings(opts, &sweep) {
        for mix in mixes_for(opts, &[WW]) {
            let cases = placements
                .iter()
                .map(|(threads, desc)| {
                    let specs: Vec<ThreadSpec> = threads
                        .iter()
                        .zip(&mix)
                        .map(|(&(node, core, mem), &access)| ThreadSpec {
                            node,
                            core,
                            access,
                            mem,
                        })
                        .collect();
                    make_case(topo, hops, &specs, Some(desc))
                })
                .collect::<Result<Vec<_>, _>>()?;
            // Claim a figure only when all three of its bars can run.
            let figure = match (mix.as_slice() == WW && placements.len() == 3, setting) {
                (true, (LoadLevel::None, _)) => Some("figure 6"),
                (true, (LoadLevel::Low, Subscription::High)) => Some("figure 7"),
                (true, (LoadLevel::VeryHigh, Subscription::High)) => Some("figure 8"),
                (true, (LoadLevel::VeryHigh, Subscription::Full)) => Some("figure 9"),
                _ => None,
            };
            let title = format!(
                "Crossfire 1 Hop-1 Hop case vs no crossfire 1 Hop-1 Hop case ({}) {}",
                mix_name(&mix),
                setting_words(setting.0, setting.1)
            );
            plan.experiments.push(experiment(
                topo,
                format!(
                    "crossfire-{}-{}",
                    mix_name(&mix),
                    setting_id(setting.0, setting.1)
                ),
                title,
                figure,
                mix_name(&mix),
                setting,
                cases,
            ));
        }
    }
    Ok(())
}

fn plan_same_node(
    topo: &Topology,
    hops: &HopMap,
    opts: &PlanOptions,
    plan: &mut StudyPlan,
) -> Result<(), StudyError> {
    let Some(home) = home_candidates(topo)
        .into_iter()
        .find(|&n| crate::placement::binding::core_order(topo, n).len() >= 2)
    else {
        plan.notes.push(
            "same-node: needs a NUMA node with two allowed cores, and no node has them".into(),
        );
        return Ok(());
    };
    let h = |m: u32| hops.hops(home, m).unwrap_or(0);
    // Memory placements of the two threads, one per distinct shape: each
    // thread's hop count, and whether both arrays share a node. Thread 1
    // takes the nearer memory, as in the note's figures.
    let mems = topo.allowed_mem_nodes();
    let mut shapes = HashSet::new();
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    let mut sorted = mems.clone();
    sorted.sort_by_key(|&m| (h(m), m));
    for (i, &m1) in sorted.iter().enumerate() {
        for &m2 in &sorted[i..] {
            if shapes.insert((h(m1), h(m2), m1 == m2)) {
                pairs.push((m1, m2));
            }
        }
    }
    pairs.sort_by_key(|&(m1, m2)| (h(m1), h(m2), m1 != m2));
    if pairs.len() == 1 {
        plan.notes.push(format!(
            "same-node: node {home} has no remote memory on this machine, so only the 0 Hop-0 Hop placement runs"
        ));
    }
    // Figure 10 is read-only on an idle system; figures 11-15 write-only at
    // every background level.
    for setting in settings(opts, &SWEEP) {
        let default_mixes: &[&[Access]] = if setting.0 == LoadLevel::None {
            &[RR, WW]
        } else {
            &[WW]
        };
        for mix in mixes_for(opts, default_mixes) {
            let cases = pairs
                .iter()
                .map(|&(m1, m2)| {
                    let specs = [
                        ThreadSpec {
                            node: home,
                            core: 0,
                            access: mix[0],
                            mem: m1,
                        },
                        ThreadSpec {
                            node: home,
                            core: 1,
                            access: mix[1],
                            mem: m2,
                        },
                    ];
                    make_case(topo, hops, &specs, None)
                })
                .collect::<Result<Vec<_>, _>>()?;
            let figure = match (mix_name(&mix).as_str(), setting) {
                ("rr", (LoadLevel::None, _)) => Some("figure 10"),
                ("ww", (LoadLevel::None, _)) => Some("figure 11"),
                ("ww", (LoadLevel::Low, Subscription::High)) => Some("figure 12"),
                ("ww", (LoadLevel::Medium, Subscription::High)) => Some("figure 13"),
                ("ww", (LoadLevel::High, Subscription::High)) => Some("figure 14"),
                ("ww", (LoadLevel::VeryHigh, Subscription::High)) => Some("figure 15"),
                _ => None,
            };
            let words = match mix_name(&mix).as_str() {
                "rr" => "Both read-only threads".to_string(),
                "ww" => "Both write-only threads".to_string(),
                m => format!("Both threads ({m})"),
            };
            let title = format!(
                "{words} running on node {home} (different cores) {}",
                setting_words(setting.0, setting.1)
            );
            plan.experiments.push(experiment(
                topo,
                format!(
                    "same-node-{}-{}",
                    mix_name(&mix),
                    setting_id(setting.0, setting.1)
                ),
                title,
                figure,
                mix_name(&mix),
                setting,
                cases,
            ));
        }
    }
    Ok(())
}

/// Two threads as (node, core index, memory node) each.
type TwoThreads = [(u32, usize, u32); 2];

fn plan_myths(
    topo: &Topology,
    hops: &HopMap,
    opts: &PlanOptions,
    plan: &mut StudyPlan,
) -> Result<(), StudyError> {
    let cpu_nodes = home_candidates(topo);
    let Some(&a) = cpu_nodes.first() else {
        return Err(StudyError::NoCpus);
    };
    let h = |x: u32, y: u32| hops.hops(x, y).unwrap_or(0);
    // Thread 1 on the first CPU node; thread 2 beside it (core 1) or on core
    // 0 of every other CPU node.
    let mut partners: Vec<(u32, usize)> = Vec::new();
    if crate::placement::binding::core_order(topo, a).len() >= 2 {
        partners.push((a, 1));
    }
    partners.extend(cpu_nodes.iter().filter(|&&b| b != a).map(|&b| (b, 0)));
    let mems = topo.allowed_mem_nodes();
    // Keep one placement per shape: two placements with the same hop counts
    // and the same sharing of nodes are the same experiment up to renaming
    // nodes (or swapping the two threads), so running both would only repeat
    // a figure.
    let shape_of = |(x, mx): (u32, u32), (y, my): (u32, u32)| {
        (
            x == y,
            h(x, y),
            h(x, mx),
            h(y, my),
            h(x, my),
            h(y, mx),
            mx == my,
            mx == y,
            my == x,
        )
    };
    let mut shapes = HashSet::new();
    let mut distinct: Vec<TwoThreads> = Vec::new();
    for &(b, cb) in &partners {
        for &m1 in &mems {
            for &m2 in &mems {
                let one = shape_of((a, m1), (b, m2));
                let swapped = shape_of((b, m2), (a, m1));
                if shapes.insert(one.min(swapped)) {
                    distinct.push([(a, 0, m1), (b, cb, m2)]);
                }
            }
        }
    }
    // Over the cap, deal placements from every hop class in turn, so both
    // myths keep cases to compare at every distance.
    let total = distinct.len();
    let placements: Vec<TwoThreads> = if total <= MAX_MYTH_CASES {
        distinct
    } else {
        let mut classes: std::collections::BTreeMap<(u32, Vec<u32>), Vec<TwoThreads>> =
            std::collections::BTreeMap::new();
        for p in distinct {
            let mut hs = vec![h(p[0].0, p[0].2), h(p[1].0, p[1].2)];
            hs.sort();
            classes.entry((hs.iter().sum(), hs)).or_default().push(p);
        }
        let mut queues: Vec<std::collections::VecDeque<_>> =
            classes.into_values().map(Into::into).collect();
        let mut out = Vec::with_capacity(MAX_MYTH_CASES);
        while out.len() < MAX_MYTH_CASES {
            let mut took = false;
            for q in &mut queues {
                if out.len() < MAX_MYTH_CASES {
                    if let Some(p) = q.pop_front() {
                        out.push(p);
                        took = true;
                    }
                }
            }
            if !took {
                break;
            }
        }
        plan.notes.push(format!(
            "myths: {total} distinct placements, running {MAX_MYTH_CASES} of them taken evenly from every hop class"
        ));
        out
    };
    if placements.is_empty() {
        plan.notes
            .push("myths: no two cores to place two threads on this machine".into());
        return Ok(());
    }
    let hop_pairs: BTreeSet<Vec<u32>> = placements
        .iter()
        .map(|p| {
            let mut v = vec![h(p[0].0, p[0].2), h(p[1].0, p[1].2)];
            v.sort();
            v
        })
        .collect();
    if placements.len() < 2 || hop_pairs.len() == placements.len() {
        plan.notes.push(format!(
            "myths: this machine ({} NUMA node(s)) has {} two-thread placement(s), too few to test the myths; running what it has",
            topo.nodes.len(),
            placements.len()
        ));
    }
    // Baseline: the placement with every thread local, when it exists.
    for setting in settings(opts, &[(LoadLevel::None, Subscription::High)]) {
        for mix in mixes_for(opts, &[WW]) {
            let mut cases = placements
                .iter()
                .map(|p| {
                    let specs: Vec<ThreadSpec> = p
                        .iter()
                        .zip(&mix)
                        .map(|(&(node, core, mem), &access)| ThreadSpec {
                            node,
                            core,
                            access,
                            mem,
                        })
                        .collect();
                    let crossfire = p[0].0 != p[1].0 && p[0].2 == p[1].0 && p[1].2 == p[0].0;
                    make_case(topo, hops, &specs, crossfire.then_some("crossfire"))
                })
                .collect::<Result<Vec<_>, _>>()?;
            // Run (and show) cases grouped by hop shape so equal-hop cases
            // stand side by side as in the note's figures.
            cases.sort_by_key(|c| {
                let mut hs = c.hops();
                hs.sort();
                (hs.iter().sum::<u32>(), hs)
            });
            let title = format!(
                "Hop myths: two {} threads in every distinct placement {}",
                if mix.as_slice() == WW {
                    "write-only".to_string()
                } else {
                    format!("({})", mix_name(&mix))
                },
                setting_words(setting.0, setting.1)
            );
            plan.experiments.push(experiment(
                topo,
                format!(
                    "myths-{}-{}",
                    mix_name(&mix),
                    setting_id(setting.0, setting.1)
                ),
                title,
                None,
                mix_name(&mix),
                setting,
                cases,
            ));
        }
    }
    Ok(())
}

/// Plan user-given cases (each a list of thread labels). With `Mix::All`
/// every case is run in every access combination: one experiment per
/// combination, or, for a single case, one experiment whose bars are the
/// combinations. The first case is the baseline.
pub fn plan_custom(
    topo: &Topology,
    hops: &HopMap,
    cases: &[Vec<ThreadSpec>],
    opts: &PlanOptions,
) -> Result<StudyPlan, StudyError> {
    if cases.is_empty() || cases.iter().any(Vec::is_empty) {
        return Err(StudyError::NoThreads);
    }
    let setting = settings(opts, &[(LoadLevel::None, Subscription::High)])[0];
    let mut plan = StudyPlan {
        preset: None,
        hop_map: hops.clone(),
        experiments: Vec::new(),
        notes: Vec::new(),
    };
    let sid = setting_id(setting.0, setting.1);
    let words = setting_words(setting.0, setting.1);
    let fixed_mix = |specs: &[ThreadSpec]| -> String {
        specs.iter().map(|t| t.access.letter()).collect::<String>()
    };
    match opts.mix {
        Mix::Fixed => {
            let built = cases
                .iter()
                .map(|c| make_case(topo, hops, c, None))
                .collect::<Result<Vec<_>, _>>()?;
            let mixes: BTreeSet<String> = cases.iter().map(|c| fixed_mix(c)).collect();
            let mix = if mixes.len() == 1 {
                mixes.into_iter().next().unwrap_or_default()
            } else {
                "mixed".into()
            };
            plan.experiments.push(experiment(
                topo,
                format!("custom-{sid}"),
                format!("Custom placements {words}"),
                None,
                mix,
                setting,
                built,
            ));
        }
        Mix::All => {
            let n = cases[0].len();
            if n > MAX_MIX_THREADS || cases.iter().any(|c| c.len() != n) {
                return Err(StudyError::MixShape {
                    max: MAX_MIX_THREADS,
                });
            }
            let mixes = all_mixes(n);
            if cases.len() == 1 {
                let built = mixes
                    .iter()
                    .map(|m| make_case(topo, hops, &with_accesses(&cases[0], m), None))
                    .collect::<Result<Vec<_>, _>>()?;
                plan.experiments.push(experiment(
                    topo,
                    format!("custom-all-{sid}"),
                    format!("Every access combination of one placement {words}"),
                    None,
                    "all".into(),
                    setting,
                    built,
                ));
            } else {
                for m in &mixes {
                    let built = cases
                        .iter()
                        .map(|c| make_case(topo, hops, &with_accesses(c, m), None))
                        .collect::<Result<Vec<_>, _>>()?;
                    plan.experiments.push(experiment(
                        topo,
                        format!("custom-{}-{sid}", mix_name(m)),
                        format!("Custom placements ({}) {words}", mix_name(m)),
                        None,
                        mix_name(m),
                        setting,
                        built,
                    ));
                }
            }
        }
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::study::label::parse_labels;
    use crate::experiments::study::testing::{quartet, synthetic};

    fn labels(e: &ExperimentPlan) -> Vec<&str> {
        e.cases.iter().map(|c| c.label.as_str()).collect()
    }

    fn idle() -> PlanOptions {
        PlanOptions {
            load: Some(LoadLevel::None),
            ..PlanOptions::default()
        }
    }

    #[test]
    fn hops_on_the_quartet_reach_0_1_and_2_hops() {
        let t = quartet();
        let hm = HopMap::from_topology(&t);
        let p = plan_preset(&t, &hm, Preset::Hops, &PlanOptions::default()).unwrap();
        assert!(p.notes.is_empty(), "{:?}", p.notes);
        assert_eq!(p.experiments.len(), 2);
        assert_eq!(labels(&p.experiments[0]), ["0.0.r.0", "0.0.r.1", "0.0.r.3"]);
        assert_eq!(labels(&p.experiments[1]), ["0.0.w.0", "0.0.w.1", "0.0.w.3"]);
        assert_eq!(p.experiments[1].cases[2].hops(), [2]);
        assert_eq!(p.experiments[1].figure.as_deref(), Some("figures 3, 5"));
    }

    #[test]
    fn crossfire_on_the_quartet_matches_figure_6() {
        let t = quartet();
        let hm = HopMap::from_topology(&t);
        let p = plan_preset(&t, &hm, Preset::Crossfire, &PlanOptions::default()).unwrap();
        assert!(p.notes.is_empty(), "{:?}", p.notes);
        // idle, low, medium, high, very-high at high subscription, very-high full.
        assert_eq!(p.experiments.len(), 6);
        let idle = &p.experiments[0];
        assert_eq!(
            labels(idle),
            ["0.0.w.0 1.0.w.1", "0.0.w.1 1.0.w.3", "0.0.w.1 1.0.w.0"]
        );
        assert_eq!(idle.cases[2].description, "crossfire 1 Hop-1 Hop");
        assert_eq!(idle.cases[1].description, "no crossfire 1 Hop-1 Hop");
        assert!(idle.background.cpus.is_empty());
        let last = p.experiments.last().unwrap();
        assert_eq!(last.figure.as_deref(), Some("figure 9"));
        // Full subscription: every core but the two foreground ones.
        assert_eq!(last.background.cpus.len(), 6);
        assert_eq!(p.experiments[4].background.cpus.len(), 5);
    }

    #[test]
    fn same_node_on_the_quartet_covers_every_memory_shape() {
        let t = quartet();
        let hm = HopMap::from_topology(&t);
        let p = plan_preset(&t, &hm, Preset::SameNode, &idle()).unwrap();
        assert_eq!(p.experiments.len(), 2); // rr (fig 10) and ww (fig 11)
        assert_eq!(
            labels(&p.experiments[1]),
            [
                "0.0.w.0 0.1.w.0",
                "0.0.w.0 0.1.w.1",
                "0.0.w.0 0.1.w.3",
                "0.0.w.1 0.1.w.1",
                "0.0.w.1 0.1.w.2",
                "0.0.w.1 0.1.w.3",
                "0.0.w.3 0.1.w.3",
            ]
        );
        let sweep = plan_preset(&t, &hm, Preset::SameNode, &PlanOptions::default()).unwrap();
        let figs: Vec<_> = sweep
            .experiments
            .iter()
            .filter_map(|e| e.figure.clone())
            .collect();
        assert_eq!(
            figs,
            [
                "figure 10",
                "figure 11",
                "figure 12",
                "figure 13",
                "figure 14",
                "figure 15"
            ]
        );
    }

    #[test]
    fn myths_on_the_quartet_include_crossfire_and_no_crossfire() {
        let t = quartet();
        let hm = HopMap::from_topology(&t);
        let p = plan_preset(&t, &hm, Preset::Myths, &PlanOptions::default()).unwrap();
        assert_eq!(p.experiments.len(), 1);
        let e = &p.experiments[0];
        assert!(e.cases.len() > 10 && e.cases.len() <= MAX_MYTH_CASES);
        assert!(e
            .cases
            .iter()
            .any(|c| c.description.starts_with("crossfire")));
        let l = labels(e);
        assert_eq!(l[0], "0.0.w.0 0.1.w.0");
        // Equal-hop placements on different links are all there.
        assert!(l.contains(&"0.0.w.1 1.0.w.0"));
        assert!(l
            .iter()
            .any(|x| x.starts_with("0.0.w.1 1.0.w.") && x != &"0.0.w.1 1.0.w.0"));
    }

    #[test]
    fn a_quartet_with_one_core_per_node_runs_all_but_same_node() {
        // The VM rig's Quartet: one CPU per node.
        let mut t = quartet();
        t.cpus.retain(|c| c.os_index % 2 == 0);
        for n in &mut t.nodes {
            n.cpus.retain(|c| c % 2 == 0);
        }
        let hm = HopMap::from_topology(&t);
        for preset in [Preset::Hops, Preset::Crossfire, Preset::Myths] {
            let p = plan_preset(&t, &hm, preset, &idle()).unwrap();
            assert!(p.notes.is_empty(), "{preset:?}: {:?}", p.notes);
            assert!(!p.experiments.is_empty());
        }
        let x = plan_preset(&t, &hm, Preset::Crossfire, &idle()).unwrap();
        assert_eq!(
            labels(&x.experiments[0]),
            ["0.0.w.0 1.0.w.1", "0.0.w.1 1.0.w.3", "0.0.w.1 1.0.w.0"]
        );
        let s = plan_preset(&t, &hm, Preset::SameNode, &idle()).unwrap();
        assert_eq!(s.notes.len(), 1);
        assert!(s.experiments.is_empty());
    }

    #[test]
    fn two_nodes_run_crossfire_without_the_no_crossfire_case() {
        let t = synthetic(2, 2, Some(vec![vec![10, 21], vec![21, 10]]));
        let hm = HopMap::from_topology(&t);
        let p = plan_preset(&t, &hm, Preset::Crossfire, &idle()).unwrap();
        assert_eq!(p.notes.len(), 1);
        assert!(p.notes[0].contains("no-crossfire case cannot run"));
        assert_eq!(
            labels(&p.experiments[0]),
            ["0.0.w.0 1.0.w.1", "0.0.w.1 1.0.w.0"]
        );
        let h = plan_preset(&t, &hm, Preset::Hops, &idle()).unwrap();
        assert_eq!(h.notes.len(), 1);
        assert_eq!(labels(&h.experiments[1]), ["0.0.w.0", "0.0.w.1"]);
    }

    #[test]
    fn one_node_says_so_once_and_runs_what_it_can() {
        let t = synthetic(1, 2, Some(vec![vec![10]]));
        let hm = HopMap::from_topology(&t);
        for preset in [Preset::Hops, Preset::Crossfire, Preset::Myths] {
            let p = plan_preset(&t, &hm, preset, &idle()).unwrap();
            assert_eq!(p.notes.len(), 1, "{preset:?}: {:?}", p.notes);
            assert!(!p.notes[0].contains('\n'));
            assert!(!p.experiments.is_empty());
        }
        let p = plan_preset(&t, &hm, Preset::SameNode, &PlanOptions::default()).unwrap();
        assert_eq!(labels(&p.experiments[0]), ["0.0.r.0 0.1.r.0"]);
        assert_eq!(p.experiments.len(), 6);
        let x = plan_preset(&t, &hm, Preset::Crossfire, &idle()).unwrap();
        assert_eq!(labels(&x.experiments[0]), ["0.0.w.0 0.1.w.0"]);
        assert_eq!(x.experiments[0].figure, None);
    }

    #[test]
    fn custom_labels_are_checked_against_the_machine() {
        let t = synthetic(2, 2, None);
        let hm = HopMap::from_topology(&t);
        let ok = parse_labels(&["0.0.w.1", "1.0.w.0"]).unwrap();
        let p = plan_custom(&t, &hm, std::slice::from_ref(&ok), &PlanOptions::default()).unwrap();
        assert_eq!(labels(&p.experiments[0]), ["0.0.w.1 1.0.w.0"]);
        let all = PlanOptions {
            mix: Mix::All,
            ..PlanOptions::default()
        };
        let p = plan_custom(&t, &hm, &[ok], &all).unwrap();
        assert_eq!(
            labels(&p.experiments[0]),
            [
                "0.0.r.1 1.0.r.0",
                "0.0.r.1 1.0.w.0",
                "0.0.w.1 1.0.r.0",
                "0.0.w.1 1.0.w.0"
            ]
        );
        let bad = |l: &[&str]| {
            plan_custom(
                &t,
                &hm,
                &[parse_labels(l).unwrap()],
                &PlanOptions::default(),
            )
            .unwrap_err()
            .to_string()
        };
        assert!(bad(&["5.0.w.0"]).contains("node 5 has no allowed CPUs (CPU nodes: 0, 1)"));
        assert!(bad(&["0.2.w.0"]).contains("node 0 has 2 allowed cores"));
        assert!(bad(&["0.0.w.7"]).contains("memory node 7"));
        assert!(bad(&["0.0.w.0", "0.0.r.1"]).contains("same core"));
    }
}
