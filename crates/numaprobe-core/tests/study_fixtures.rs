//! The study's preset planners on real machines' sysfs dumps: every preset
//! plans without error on every dump, only on CPUs and memory nodes the
//! process may use, with hop counts from the dump's own distance levels; and
//! the machines with known shapes get the cases the note's figures need.

mod common;

use numaprobe_core::experiments::study::{
    plan_preset, HopMap, LoadLevel, PlanOptions, Preset, StudyPlan,
};
use numaprobe_core::topology::{read, Topology};
use std::collections::BTreeSet;

fn check_invariants(name: &str, topo: &Topology, hops: &HopMap, plan: &StudyPlan) {
    let mems = topo.allowed_mem_nodes();
    for e in &plan.experiments {
        assert!(!e.cases.is_empty(), "{name} {}: empty experiment", e.id);
        let mut fg = BTreeSet::new();
        for c in &e.cases {
            let mut cpus = BTreeSet::new();
            for t in &c.threads {
                let cpu = topo.cpu(t.cpu).expect("planned CPU exists");
                assert!(cpu.allowed, "{name} {}: CPU {} not allowed", c.label, t.cpu);
                assert_eq!(cpu.node, Some(t.spec.node), "{name} {}", c.label);
                assert!(mems.contains(&t.spec.mem), "{name} {}", c.label);
                assert_eq!(Some(t.hops), hops.hops(t.spec.node, t.spec.mem));
                assert!(cpus.insert(t.cpu), "{name} {}: shared core", c.label);
                fg.insert(t.cpu);
            }
        }
        for b in &e.background.cpus {
            assert!(
                !fg.contains(b),
                "{name} {}: background on a foreground CPU",
                e.id
            );
            assert!(topo.cpu(*b).is_some_and(|c| c.allowed));
        }
        if e.load == LoadLevel::None {
            assert!(e.background.cpus.is_empty());
        }
    }
    for n in &plan.notes {
        assert!(!n.contains('\n'), "{name}: a note is one line");
    }
}

fn plan_all(name: &str, topo: &Topology) -> Vec<StudyPlan> {
    let hops = HopMap::from_topology(topo);
    Preset::ALL
        .iter()
        .map(|&p| {
            let plan = plan_preset(topo, &hops, p, &PlanOptions::default())
                .unwrap_or_else(|e| panic!("{name} {p:?}: {e}"));
            check_invariants(name, topo, &hops, &plan);
            plan
        })
        .collect()
}

fn labels(plan: &StudyPlan, experiment: usize) -> Vec<String> {
    plan.experiments[experiment]
        .cases
        .iter()
        .map(|c| c.label.clone())
        .collect()
}

/// The dumps whose shapes matter to the study (unpacking and reading all of
/// them takes tens of seconds on a busy 2-core machine; the topology reader's
/// own tests read every one): a Quartet-like 8-node Opteron, a flat SLIT, a
/// cpuset that allows a node's CPUs but not its memory, CPU-less memory nodes,
/// an offline node 0, and 64 nodes with 5 distance levels.
const DUMPS: [&str; 6] = [
    "64amd64-4s2n4ca2co",
    "16amd64-8n2c",
    "16amd64-8n2c-cpusets",
    "nvidiagpunumanodes",
    "offline-cpu0-node0",
    "256ia64-64n2s2c",
];

#[test]
fn every_preset_plans_on_the_dumps() {
    for name in DUMPS {
        let dump = common::unpack(name);
        let topo = match read(&dump.root) {
            Ok(t) => t,
            Err(e) => panic!("{name}: {e}"),
        };
        let plans = plan_all(name, &topo);
        let hops = HopMap::from_topology(&topo);
        match name {
            // 8 nodes (2 per package), SLIT 10/16/22: the Quartet's shape.
            "64amd64-4s2n4ca2co" => {
                assert_eq!(hops.max_hops(), 2);
                assert!(plans[0].notes.is_empty(), "{:?}", plans[0].notes);
                let w = labels(&plans[0], 1);
                assert_eq!(w.len(), 3, "0, 1 and 2 hops: {w:?}");
                assert!(plans[1].notes.is_empty(), "{:?}", plans[1].notes);
                let x = &plans[1].experiments[0];
                assert_eq!(x.cases.len(), 3);
                assert_eq!(x.cases[2].description, "crossfire 1 Hop-1 Hop");
                assert_eq!(x.cases[1].hops(), [1, 1]);
            }
            // Flat SLIT (10/20): everything remote is 1 hop, so no 2-hop case.
            "16amd64-8n2c" => {
                assert_eq!(hops.max_hops(), 1);
                assert_eq!(plans[0].notes.len(), 1);
                assert!(plans[0].notes[0].contains("2 hops"));
                assert_eq!(plans[1].experiments[0].cases.len(), 3);
            }
            // The cgroup limits CPUs and memory nodes: the invariants above
            // already prove nothing outside them is planned.
            "16amd64-8n2c-cpusets" => {
                assert!(!plans[2].experiments.is_empty());
            }
            // CPU-less GPU memory nodes: never a thread's node, may be memory.
            "nvidiagpunumanodes" => {
                for p in &plans {
                    for e in &p.experiments {
                        for c in &e.cases {
                            for t in &c.threads {
                                assert!(t.spec.node < 250, "{}", c.label);
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

#[test]
fn the_dumps_named_here_exist() {
    let all = common::fixture_names();
    for name in DUMPS {
        assert!(all.iter().any(|n| n == name), "{name} missing");
    }
}
