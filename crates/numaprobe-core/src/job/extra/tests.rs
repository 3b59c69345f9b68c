//! The extra phases' bookkeeping with stand-in experiments: shares, skips,
//! failures and budget cuts, without measuring anything.

use super::*;
use crate::experiments::Progress;
use crate::stats::StopRule;
use std::cell::{Cell, RefCell};

// The results are built from JSON with only the keys every version of the
// documents has, so fields the experiments add (all `serde(default)`) do not
// break these tests.
fn from_json<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
    serde_json::from_value(v).expect("a valid document")
}

fn timer() -> serde_json::Value {
    serde_json::json!({"source": "monotonic_raw", "overhead_ns": 0.0, "resolution_ns": 1.0})
}

fn c2c_result(complete: bool) -> C2cResult {
    from_json(serde_json::json!({
        "schema": crate::SCHEMA, "unit": "ns", "cpus": [0, 1], "hitm": [], "shared": [],
        "pairs": [], "domains": [], "atomics": "loads and stores",
        "stop_rule": serde_json::to_value(StopRule::default()).unwrap(),
        "timer": timer(), "notes": [], "complete": complete
    }))
}

fn loaded_result(complete: bool) -> LoadedResult {
    from_json(serde_json::json!({
        "schema": crate::SCHEMA, "curves": [], "timer": timer(), "notes": [],
        "complete": complete
    }))
}

fn peak_result(complete: bool) -> PeakResult {
    from_json(serde_json::json!({
        "schema": crate::SCHEMA, "system": [], "nodes": [],
        "memory": {"source": "unknown", "devices": [], "theoretical_gbs": null, "findings": []},
        "achieved_fraction": null, "timer": timer(), "notes": [], "complete": complete
    }))
}

/// How a stand-in experiment behaves.
#[derive(Clone, Copy)]
enum Act {
    /// Fail at once with an error.
    Fail,
    /// Run `steps` steps of `secs` each on the fake clock, stopping when
    /// the keeper says time is out.
    Steps(usize, f64),
}

struct Fake<'a> {
    now: &'a Cell<f64>,
    acts: [Act; 3],
    shares_seen: RefCell<Vec<f64>>,
    loaded_pairs: Option<Vec<(u32, u32)>>,
    c2c_pairs: Option<c2c::Pairs>,
    rules: Vec<f64>,
}

impl Fake<'_> {
    /// Runs the steps; true when all ran.
    fn steps(&mut self, i: usize, p: &mut dyn StepProgress) -> Result<bool, ExperimentError> {
        match self.acts[i] {
            Act::Fail => Err(ExperimentError::Invalid("the kernel said no".into())),
            Act::Steps(n, secs) => {
                for s in 0..n {
                    if p.out_of_time() {
                        return Ok(false);
                    }
                    p.step_started(s, n, "step");
                    let r = p.rule_for_step(s, StopRule::default());
                    self.rules.push(r.budget.as_secs_f64());
                    self.now.set(self.now.get() + secs);
                    p.step_finished(s, n);
                }
                Ok(true)
            }
        }
    }
}

impl Experiments for Fake<'_> {
    fn c2c(
        &mut self,
        _t: &Topology,
        c: &c2c::C2cConfig,
        p: &mut dyn StepProgress,
    ) -> Result<C2cResult, ExperimentError> {
        self.c2c_pairs = Some(c.pairs);
        self.steps(0, p).map(c2c_result)
    }
    fn loaded(
        &mut self,
        _t: &Topology,
        c: &loaded::LoadedConfig,
        p: &mut dyn StepProgress,
    ) -> Result<LoadedResult, ExperimentError> {
        self.loaded_pairs = c.pairs.clone();
        self.steps(1, p).map(loaded_result)
    }
    fn peak(
        &mut self,
        _t: &Topology,
        _c: &peak::PeakConfig,
        p: &mut dyn StepProgress,
    ) -> Result<PeakResult, ExperimentError> {
        self.steps(2, p).map(peak_result)
    }
}

#[derive(Default)]
struct Seen {
    started: Vec<(Extra, f64)>,
    finished: Vec<ExtraRecord>,
}
impl Progress for Seen {}
impl Observer for Seen {
    fn extra_started(&mut self, e: Extra, share_s: f64) {
        self.started.push((e, share_s));
    }
    fn extra_finished(&mut self, r: &ExtraRecord) {
        self.finished.push(r.clone());
    }
}

/// A topology with two allowed CPUs on node 0 (`cpus` of them allowed).
fn topo(allowed: usize) -> Topology {
    use crate::topology::testing::{build, CpuSpec, NodeSpec};
    let cpus: Vec<CpuSpec> = (0..2)
        .map(|c| CpuSpec {
            allowed: (c as usize) < allowed,
            ..CpuSpec::new(c, 0, i64::from(c), 0)
        })
        .collect();
    let nodes = [NodeSpec {
        os_index: 0,
        memory_bytes: 1 << 30,
        free_bytes: 1 << 30,
        allowed: true,
    }];
    build("/", &cpus, &nodes, None)
}

fn run_fake(
    topo: &Topology,
    budget_s: f64,
    start: f64,
    acts: [Act; 3],
) -> (Extras, Seen, Fake<'static>) {
    run_sized(topo, budget_s, start, acts, 16 << 20)
}

fn run_sized(
    topo: &Topology,
    budget_s: f64,
    start: f64,
    acts: [Act; 3],
    size_per_node: u64,
) -> (Extras, Seen, Fake<'static>) {
    let now: &'static Cell<f64> = Box::leak(Box::new(Cell::new(start)));
    let clock = move || now.get();
    let mut fake = Fake {
        now,
        acts,
        shares_seen: RefCell::new(Vec::new()),
        loaded_pairs: None,
        c2c_pairs: None,
        rules: Vec::new(),
    };
    let mut seen = Seen::default();
    let ctx = Context {
        topo,
        latency: None,
        cpu_nodes: &[0],
        mem_nodes: &[0],
        clock: &clock,
        budget_s,
        size_per_node,
        size_given: true,
        costs: crate::job::cost::CostModel::ASSUMED,
    };
    let out = run(&ctx, &mut fake, &mut seen);
    (out, seen, fake)
}

#[test]
fn a_failing_experiment_is_recorded_and_the_next_phases_still_run() {
    let t = topo(2);
    let (out, seen, fake) = run_fake(
        &t,
        60.0,
        20.0,
        [Act::Fail, Act::Steps(3, 0.5), Act::Steps(2, 0.5)],
    );
    assert_eq!(out.c2c.record.status, ExtraStatus::Failed);
    assert_eq!(out.c2c.record.reason.as_deref(), Some("the kernel said no"));
    assert!(out.c2c.result.is_none());
    assert_eq!(out.loaded_latency.record.status, ExtraStatus::Measured);
    assert_eq!(out.loaded_latency.record.steps_done, 3);
    assert_eq!(out.peak.record.status, ExtraStatus::Measured);
    assert!(out.peak.result.is_some());
    // c2c began with 40 s left: a quarter of it.
    assert_eq!(seen.started[0], (Extra::C2c, 10.0));
    assert_eq!(seen.finished.len(), 3);
    // One node, no matrix: the local pair only.
    assert_eq!(fake.loaded_pairs, Some(vec![(0, 0)]));
    // The job's c2c is the summary by domain, one pair each.
    assert_eq!(fake.c2c_pairs, Some(c2c::Pairs::Domains));
    assert!(fake.shares_seen.borrow().is_empty());
}

#[test]
fn a_phase_stops_between_steps_when_its_share_is_spent() {
    let t = topo(2);
    // 8 s left: c2c gets 2 s, and its 10 steps of 0.5 s do not fit.
    let (out, _seen, fake) = run_fake(
        &t,
        10.0,
        2.0,
        [Act::Steps(10, 0.5), Act::Steps(1, 0.1), Act::Steps(1, 0.1)],
    );
    let r = &out.c2c.record;
    assert_eq!(r.status, ExtraStatus::Partial);
    assert!(r.steps_done < 10 && r.steps_done >= 1, "{r:?}");
    assert_eq!(r.steps_planned, 10);
    assert!(r.elapsed_s <= r.share_s + 0.5 + 1e-9, "{r:?}");
    let why = r.reason.as_deref().unwrap();
    assert!(
        why.contains("share of the budget (2.0 s) was spent"),
        "{why}"
    );
    assert!(out.c2c.result.as_ref().is_some_and(|x| !x.complete));
    // The rules shrank as the share ran out.
    assert!(fake.rules[1] <= fake.rules[0], "{:?}", fake.rules);
    // What c2c left goes to the later phases.
    assert_eq!(out.loaded_latency.record.status, ExtraStatus::Measured);
    assert!(!out.interrupted());
}

#[test]
fn no_time_left_skips_with_a_reason() {
    let t = topo(2);
    let (out, seen, _) = run_fake(
        &t,
        10.0,
        9.95,
        [Act::Steps(1, 0.1), Act::Steps(1, 0.1), Act::Steps(1, 0.1)],
    );
    for r in out.records() {
        assert_eq!(r.status, ExtraStatus::Skipped);
        assert!(r.reason.unwrap().contains("budget does not reach it"));
    }
    assert!(seen.started.is_empty());
    assert_eq!(seen.finished.len(), 3);
}

#[test]
fn a_first_step_that_cannot_fit_its_share_is_not_started() {
    let t = topo(2);
    // 64 GiB per node at the assumed rates: minutes of set-up.
    let (out, seen, _) = run_sized(
        &t,
        60.0,
        0.0,
        [Act::Steps(1, 0.1), Act::Steps(1, 0.1), Act::Steps(1, 0.1)],
        64 << 30,
    );
    assert_eq!(out.c2c.record.status, ExtraStatus::Measured);
    for r in [&out.loaded_latency.record, &out.peak.record] {
        assert_eq!(r.status, ExtraStatus::Skipped, "{r:?}");
        let why = r.reason.as_deref().unwrap();
        assert!(why.contains("its first step alone"), "{why}");
    }
    assert_eq!(seen.started.len(), 1);
}

#[test]
fn one_allowed_cpu_skips_c2c_and_loaded_latency() {
    let t = topo(1);
    let (out, _, _) = run_fake(
        &t,
        60.0,
        0.0,
        [Act::Fail, Act::Steps(1, 0.1), Act::Steps(1, 0.1)],
    );
    assert_eq!(out.c2c.record.status, ExtraStatus::Skipped);
    let why = out.c2c.record.reason.clone().unwrap();
    assert!(why.contains("two CPUs"), "{why}");
    // No CPU left beside the chase to load with.
    assert_eq!(out.loaded_latency.record.status, ExtraStatus::Skipped);
    let why = out.loaded_latency.record.reason.clone().unwrap();
    assert!(why.contains("two allowed CPUs"), "{why}");
    assert_eq!(out.peak.record.status, ExtraStatus::Measured);
}
