//! The cache-line transfer plan and run on this machine and built topologies.

use super::*;
use crate::experiments::StepProgress;
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
    // A loaded host may leave a partner thread off its CPU for seconds
    // (one waited past 2 s at load 15 on 2 CPUs); what is tested here is the
    // run, not how soon this host schedules it.
    p.timeout = Duration::from_secs(120);
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
