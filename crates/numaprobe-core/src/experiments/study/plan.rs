//! The planner: from a topology, its hop map and the user's choices to a list
//! of experiments, each a list of cases (one bar of the note's figures) run
//! under one background setting. This file holds what every plan is built
//! from (cases, experiments, background settings, the home node) and the
//! custom plan; the presets are in `presets.rs`.
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
    all_mixes, case_label, mix_name, with_accesses, Mix, ThreadSpec, MAX_MIX_THREADS,
};
use super::StudyError;
use crate::topology::Topology;
use std::collections::BTreeSet;

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

pub(super) fn list(v: &[u32]) -> String {
    if v.is_empty() {
        return "none".into();
    }
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}

pub(super) fn make_case(
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

pub(super) fn experiment(
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
pub(super) fn settings(
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

pub(super) fn setting_id(load: LoadLevel, sub: Subscription) -> String {
    if load == LoadLevel::None {
        "idle".into()
    } else {
        format!("{}-{}", load.name(), sub.name())
    }
}

pub(super) fn setting_words(load: LoadLevel, sub: Subscription) -> String {
    if load == LoadLevel::None {
        format!("on {}", load.wording())
    } else {
        format!("under {} ({})", load.wording(), sub.wording())
    }
}

/// The note's sweep of background settings (idle, then low to very high at
/// high subscription).
pub(super) const SWEEP: [(LoadLevel, Subscription); 5] = [
    (LoadLevel::None, Subscription::High),
    (LoadLevel::Low, Subscription::High),
    (LoadLevel::Medium, Subscription::High),
    (LoadLevel::High, Subscription::High),
    (LoadLevel::VeryHigh, Subscription::High),
];

/// CPU nodes in the order presets prefer them for "node 0": nodes whose own
/// memory the process may use first (a cpuset can allow a node's CPUs but not
/// its memory, and then no local case can run there), each group ascending.
pub(super) fn home_candidates(topo: &Topology) -> Vec<u32> {
    let mems = topo.allowed_mem_nodes();
    let (mut local, other): (Vec<u32>, Vec<u32>) = topo
        .allowed_cpu_nodes()
        .into_iter()
        .partition(|n| mems.contains(n));
    local.extend(other);
    local
}

/// CPU nodes whose own memory is allowed: where a thread can work locally.
pub(super) fn local_cpu_nodes(topo: &Topology) -> Vec<u32> {
    let mems = topo.allowed_mem_nodes();
    topo.allowed_cpu_nodes()
        .into_iter()
        .filter(|n| mems.contains(n))
        .collect()
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
    use super::super::presets::plan_preset;
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
