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

fn sweep_result(complete: bool) -> SweepResult {
    let mut r = crate::render::sweep::tests::sample();
    r.complete = complete;
    r
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
    /// Spend `secs` setting up on the fake clock, then stop before any
    /// step if the keeper says time is out.
    SetUp(f64),
}

struct Fake<'a> {
    now: &'a Cell<f64>,
    acts: [Act; 4],
    shares_seen: RefCell<Vec<f64>>,
    loaded_pairs: Option<Vec<(u32, u32)>>,
    c2c_pairs: Option<c2c::Pairs>,
    sweep_cfg: Option<sweep::SweepConfig>,
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
            Act::SetUp(secs) => {
                self.now.set(self.now.get() + secs);
                Ok(!p.out_of_time())
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
    fn sweep(
        &mut self,
        _t: &Topology,
        c: &sweep::SweepConfig,
        p: &mut dyn StepProgress,
    ) -> Result<SweepResult, ExperimentError> {
        self.sweep_cfg = Some(c.clone());
        self.steps(3, p).map(sweep_result)
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
    let nodes = [NodeSpec::gib(0)];
    build("/", &cpus, &nodes, None)
}

fn run_fake(
    topo: &Topology,
    budget_s: f64,
    start: f64,
    acts: [Act; 4],
) -> (Extras, Seen, Fake<'static>) {
    run_sized(topo, budget_s, start, acts, 16 << 20)
}

fn run_sized(
    topo: &Topology,
    budget_s: f64,
    start: f64,
    acts: [Act; 4],
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
        sweep_cfg: None,
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
        pages: crate::placement::PageKind::Thp,
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
        [
            Act::Fail,
            Act::Steps(3, 0.5),
            Act::Steps(2, 0.5),
            Act::Steps(1, 0.1),
        ],
    );
    assert_eq!(out.c2c.record.status, ExtraStatus::Failed);
    assert_eq!(out.c2c.record.reason.as_deref(), Some("the kernel said no"));
    assert!(out.c2c.result.is_none());
    assert_eq!(out.loaded_latency.record.status, ExtraStatus::Measured);
    assert_eq!(out.loaded_latency.record.steps_done, 3);
    assert_eq!(out.peak.record.status, ExtraStatus::Measured);
    assert!(out.peak.result.is_some());
    // c2c began with 40 s left: a fifth of it.
    assert_eq!(seen.started[0], (Extra::C2c, 8.0));
    assert_eq!(seen.finished.len(), 4);
    // The sweep: node 0 to its own memory, 4 KiB to 16 MiB (no cache in
    // this topology; the matrices' 16 MiB buffer caps it), the matrices'
    // page kind, two points per octave.
    assert_eq!(out.sweep.record.status, ExtraStatus::Measured);
    let c = fake.sweep_cfg.clone().unwrap();
    assert_eq!(c.range, Some((4 << 10, 16 << 20)));
    assert_eq!((c.cpu_node, c.mem_node), (Some(0), Some(0)));
    assert_eq!(c.pages, Some(vec![crate::placement::PageKind::Thp]));
    assert_eq!(c.points_per_octave, Some(2));
    // One node, no matrix: the local pair only.
    assert_eq!(fake.loaded_pairs, Some(vec![(0, 0)]));
    // The job's c2c is the summary by domain, one pair each.
    assert_eq!(fake.c2c_pairs, Some(c2c::Pairs::Domains));
    assert!(fake.shares_seen.borrow().is_empty());
}

#[test]
fn a_phase_stops_between_steps_when_its_share_is_spent() {
    let t = topo(2);
    // 8 s left: c2c gets 1.6 s, and its 10 steps of 0.5 s do not fit.
    let (out, _seen, fake) = run_fake(
        &t,
        10.0,
        2.0,
        [
            Act::Steps(10, 0.5),
            Act::Steps(1, 0.1),
            Act::Steps(1, 0.1),
            Act::Steps(1, 0.1),
        ],
    );
    let r = &out.c2c.record;
    assert_eq!(r.status, ExtraStatus::Partial);
    assert!(r.steps_done < 10 && r.steps_done >= 1, "{r:?}");
    assert_eq!(r.steps_planned, 10);
    assert!(r.elapsed_s <= r.share_s + 0.5 + 1e-9, "{r:?}");
    let why = r.reason.as_deref().unwrap();
    assert!(
        why.contains("share of the budget (1.6 s) was spent"),
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
fn a_share_spent_in_set_up_says_so_rather_than_after_0_of_0_steps() {
    let t = topo(2);
    // c2c's 1.6 s share goes on its set-up before it has planned a step.
    let (out, _seen, _fake) = run_fake(
        &t,
        10.0,
        2.0,
        [
            Act::SetUp(2.0),
            Act::Steps(1, 0.1),
            Act::Steps(1, 0.1),
            Act::Steps(1, 0.1),
        ],
    );
    let r = &out.c2c.record;
    assert_eq!(r.status, ExtraStatus::Partial);
    assert_eq!((r.steps_done, r.steps_planned), (0, 0));
    assert_eq!(
        r.reason.as_deref(),
        Some("its share of the budget (1.6 s) was spent before its first step")
    );
}

#[test]
fn no_time_left_skips_with_a_reason() {
    let t = topo(2);
    let (out, seen, _) = run_fake(
        &t,
        10.0,
        9.95,
        [
            Act::Steps(1, 0.1),
            Act::Steps(1, 0.1),
            Act::Steps(1, 0.1),
            Act::Steps(1, 0.1),
        ],
    );
    for r in out.records() {
        assert_eq!(r.status, ExtraStatus::Skipped);
        assert!(r.reason.unwrap().contains("budget does not reach it"));
    }
    assert!(seen.started.is_empty());
    assert_eq!(seen.finished.len(), 4);
}

#[test]
fn a_first_step_that_cannot_fit_its_share_is_not_started() {
    let t = topo(2);
    // 64 GiB per node at the assumed rates: minutes of set-up.
    let (out, seen, _) = run_sized(
        &t,
        60.0,
        0.0,
        [
            Act::Steps(1, 0.1),
            Act::Steps(1, 0.1),
            Act::Steps(1, 0.1),
            Act::Steps(1, 0.1),
        ],
        64 << 30,
    );
    assert_eq!(out.c2c.record.status, ExtraStatus::Measured);
    for r in [&out.loaded_latency.record, &out.peak.record] {
        assert_eq!(r.status, ExtraStatus::Skipped, "{r:?}");
        let why = r.reason.as_deref().unwrap();
        assert!(why.contains("its first step alone"), "{why}");
    }
    // c2c and the sweep have no buffer set-up to speak of.
    assert_eq!(seen.started.len(), 2);
    assert_eq!(out.sweep.record.status, ExtraStatus::Measured);
}

#[test]
fn one_allowed_cpu_skips_c2c_and_loaded_latency() {
    let t = topo(1);
    let (out, _, _) = run_fake(
        &t,
        60.0,
        0.0,
        [
            Act::Fail,
            Act::Steps(1, 0.1),
            Act::Steps(1, 0.1),
            Act::Steps(1, 0.1),
        ],
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

#[test]
fn the_sweep_stops_where_the_time_left_or_the_buffer_ends() {
    let t = topo(2);
    let ctx_at = |now: f64, latency_setup_s_per_gib: f64, size_per_node: u64| {
        let clock: &'static dyn Fn() -> f64 = Box::leak(Box::new(move || now));
        Context {
            topo: Box::leak(Box::new(t.clone())),
            latency: None,
            cpu_nodes: &[0],
            mem_nodes: &[0],
            clock,
            budget_s: 10.0,
            size_per_node,
            size_given: false,
            costs: crate::job::cost::CostModel {
                latency_setup_s_per_gib,
                ..crate::job::cost::CostModel::ASSUMED
            },
            pages: crate::placement::PageKind::Small,
        }
    };
    // Plenty of time: 16 MiB (no cache in this topology, so the floor).
    let (c, skip) = sweep_config(&ctx_at(0.0, 1.0, 1 << 30));
    assert!(skip.is_none());
    assert_eq!(c.range, Some((4 << 10, 16 << 20)));
    // 1 s left at 10 s/GiB: 16 MiB's set-up (3.4 x 0.16 s) is more than
    // half of it, 8 MiB's is not.
    let (c, _) = sweep_config(&ctx_at(9.0, 10.0, 1 << 30));
    assert_eq!(c.range, Some((4 << 10, 8 << 20)));
    // The matrices' buffer caps it.
    let (c, _) = sweep_config(&ctx_at(0.0, 1.0, 4 << 20));
    assert_eq!(c.range, Some((4 << 10, 4 << 20)));
    assert_eq!(c.pages, Some(vec![crate::placement::PageKind::Small]));
}

#[test]
fn a_first_step_bigger_than_the_share_borrows_from_the_later_phases() {
    let t = topo(2);
    // 2 GiB per node at the assumed rates: a streaming phase's first step
    // takes 3 s. 6 s left: loaded latency's part (3 s) and the peak's (3 s
    // of what is left then) are each too small alone, and both borrow.
    let (out, _, _) = run_sized(
        &t,
        10.0,
        4.0,
        [Act::Fail, Act::Fail, Act::Steps(1, 0.1), Act::Steps(1, 0.1)],
        2 << 30,
    );
    assert_eq!(out.loaded_latency.record.status, ExtraStatus::Failed);
    assert!((out.loaded_latency.record.share_s - 3.2).abs() < 1e-9);
    let p = &out.peak.record;
    assert_eq!(p.status, ExtraStatus::Measured, "{p:?}");
    assert!((p.share_s - 3.2).abs() < 1e-9, "{p:?}");
    // The sweep gets what is left after the peak's step.
    assert_eq!(out.sweep.record.status, ExtraStatus::Measured);
    assert!(
        (out.sweep.record.share_s - 5.9).abs() < 1e-9,
        "{:?}",
        out.sweep.record
    );
}

#[test]
fn a_c2c_with_failed_pairs_names_the_first_and_how_many() {
    let mut r = c2c_result(false);
    assert_eq!(r.failures(), None);
    r.failed = vec![
        crate::model::c2c::C2cFailed {
            a: 0,
            b: 1,
            reason: "shared: below the clock".into(),
        },
        crate::model::c2c::C2cFailed {
            a: 1,
            b: 0,
            reason: "shared: below the clock".into(),
        },
    ];
    assert_eq!(
        r.failures().as_deref(),
        Some("2 pair(s) failed (the first, CPU 0 -> CPU 1: shared: below the clock)")
    );
}
