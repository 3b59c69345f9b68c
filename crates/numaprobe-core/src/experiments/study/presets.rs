//! The four presets of the study, each the experiments of one part of AMD
//! 40555: `hops` (latency and bandwidth by hop count), `crossfire` (two
//! threads whose traffic crosses), `same-node` (threads sharing one node's
//! memory controller) and `myths` (the note's claims, tested). Nodes are
//! chosen from the hop map, never by number (see `plan.rs`).

use super::background::{LoadLevel, Subscription};
use super::hops::{hop_words, HopMap};
use super::label::{all_mixes, mix_name, Access, Mix, ThreadSpec};
use super::plan::*;
use super::StudyError;
use crate::topology::Topology;
use std::collections::{BTreeSet, HashSet};

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
        push_experiments(
            topo,
            plan,
            "hops",
            settings(opts, &[(LoadLevel::None, Subscription::High)]),
            |_| vec![vec![access]],
            |mix| {
                targets
                    .iter()
                    .map(|&(_, m)| make_case(topo, hops, &specs(&[(home, 0, m)], mix), None))
                    .collect()
            },
            |_, setting| {
                let wording = super::label::wording(access);
                let title = format!(
                    "{}{} thread running on node {home}, accessing data from {hop_list} hops away {}",
                    wording[..1].to_uppercase(),
                    &wording[1..],
                    setting_words(setting.0, setting.1)
                );
                (title, (setting.0 == LoadLevel::None).then_some(figure))
            },
        )?;
    }
    Ok(())
}

/// A background setting: its load and subscription.
type Setting = (LoadLevel, Subscription);

/// A preset's experiments, one per background setting and thread mix,
/// built alike: the cases of the mix, named `<preset>-<mix>-<setting>`.
/// A preset says only what differs: its settings, its mixes at a setting,
/// the cases of a mix, and an experiment's title and figure.
fn push_experiments(
    topo: &Topology,
    plan: &mut StudyPlan,
    preset: &str,
    settings: Vec<Setting>,
    mixes: impl Fn(Setting) -> Vec<Vec<Access>>,
    cases: impl Fn(&[Access]) -> Result<Vec<CasePlan>, StudyError>,
    words: impl Fn(&[Access], Setting) -> (String, Option<&'static str>),
) -> Result<(), StudyError> {
    for setting in settings {
        for mix in mixes(setting) {
            let cases = cases(&mix)?;
            let (title, figure) = words(&mix, setting);
            plan.experiments.push(experiment(
                topo,
                format!(
                    "{preset}-{}-{}",
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

/// Threads as (node, core index, memory node), given the mix's accesses
/// in turn.
fn specs(threads: &[(u32, usize, u32)], mix: &[Access]) -> Vec<ThreadSpec> {
    threads
        .iter()
        .zip(mix)
        .map(|(&(node, core, mem), &access)| ThreadSpec {
            node,
            core,
            access,
            mem,
        })
        .collect()
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
    push_experiments(
        topo,
        plan,
        "crossfire",
        settings(opts, &sweep),
        |_| mixes_for(opts, &[WW]),
        |mix| {
            placements
                .iter()
                .map(|(threads, desc)| make_case(topo, hops, &specs(threads, mix), Some(desc)))
                .collect()
        },
        |mix, setting| {
            // Claim a figure only when all three of its bars can run.
            let figure = match (mix == WW && placements.len() == 3, setting) {
                (true, (LoadLevel::None, _)) => Some("figure 6"),
                (true, (LoadLevel::Low, Subscription::High)) => Some("figure 7"),
                (true, (LoadLevel::VeryHigh, Subscription::High)) => Some("figure 8"),
                (true, (LoadLevel::VeryHigh, Subscription::Full)) => Some("figure 9"),
                _ => None,
            };
            let title = format!(
                "Crossfire 1 Hop-1 Hop case vs no crossfire 1 Hop-1 Hop case ({}) {}",
                mix_name(mix),
                setting_words(setting.0, setting.1)
            );
            (title, figure)
        },
    )
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
    push_experiments(
        topo,
        plan,
        "same-node",
        settings(opts, &SWEEP),
        |setting| {
            let default_mixes: &[&[Access]] = if setting.0 == LoadLevel::None {
                &[RR, WW]
            } else {
                &[WW]
            };
            mixes_for(opts, default_mixes)
        },
        |mix| {
            pairs
                .iter()
                .map(|&(m1, m2)| {
                    make_case(
                        topo,
                        hops,
                        &specs(&[(home, 0, m1), (home, 1, m2)], mix),
                        None,
                    )
                })
                .collect()
        },
        |mix, setting| {
            let figure = match (mix_name(mix).as_str(), setting) {
                ("rr", (LoadLevel::None, _)) => Some("figure 10"),
                ("ww", (LoadLevel::None, _)) => Some("figure 11"),
                ("ww", (LoadLevel::Low, Subscription::High)) => Some("figure 12"),
                ("ww", (LoadLevel::Medium, Subscription::High)) => Some("figure 13"),
                ("ww", (LoadLevel::High, Subscription::High)) => Some("figure 14"),
                ("ww", (LoadLevel::VeryHigh, Subscription::High)) => Some("figure 15"),
                _ => None,
            };
            let words = match mix_name(mix).as_str() {
                "rr" => "Both read-only threads".to_string(),
                "ww" => "Both write-only threads".to_string(),
                m => format!("Both threads ({m})"),
            };
            let title = format!(
                "{words} running on node {home} (different cores) {}",
                setting_words(setting.0, setting.1)
            );
            (title, figure)
        },
    )
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
    push_experiments(
        topo,
        plan,
        "myths",
        settings(opts, &[(LoadLevel::None, Subscription::High)]),
        |_| mixes_for(opts, &[WW]),
        |mix| {
            let mut cases = placements
                .iter()
                .map(|p| {
                    let crossfire = p[0].0 != p[1].0 && p[0].2 == p[1].0 && p[1].2 == p[0].0;
                    make_case(topo, hops, &specs(p, mix), crossfire.then_some("crossfire"))
                })
                .collect::<Result<Vec<_>, _>>()?;
            // Run (and show) cases grouped by hop shape so equal-hop cases
            // stand side by side as in the note's figures.
            cases.sort_by_key(|c| {
                let mut hs = c.hops();
                hs.sort();
                (hs.iter().sum::<u32>(), hs)
            });
            Ok(cases)
        },
        |mix, setting| {
            let title = format!(
                "Hop myths: two {} threads in every distinct placement {}",
                if mix == WW {
                    "write-only".to_string()
                } else {
                    format!("({})", mix_name(mix))
                },
                setting_words(setting.0, setting.1)
            );
            (title, None)
        },
    )
}
