//! The runner: executes a `StudyPlan` on this machine and fills the result
//! model case by case.
//!
//! Per case, every foreground thread is pinned first (checked with
//! `sched_getcpu`), then allocates its array bound to its memory node,
//! touches it and asks `move_pages` where the pages are; only then do the
//! threads start walking, together (a barrier before every sample), so the
//! samples are concurrent as in the note. A background setting is started
//! before an experiment's first case and stopped after its last. Progress is
//! reported through a callback with the report as it stands, so a caller can
//! rewrite its output after every finished case.
//!
//! Memory is checked per node for a case's threads together (a
//! [`MemoryLedger`]), not thread by thread: threads that each pass their own
//! check could fail, or meet the OOM killer, together. Before an
//! experiment's background starts, every case's arrays plus the background
//! buffers are checked; before each case, its arrays are checked again
//! against what is left with the background running.

use super::background::{BackgroundDefinitions, BackgroundLoad, PERIOD_US};
use super::label::Mix;
use super::myths;
use super::plan::{CasePlan, ExperimentPlan, StudyPlan};
use super::StudyError;
use crate::experiments::barrier::Barrier;
use crate::kernels::strided;
use crate::model::study::{
    gbs, BackgroundResult, CaseResult, CaseSample, ExperimentResult, StudyParameters, StudyReport,
    ThreadResult, TimeSummary,
};
use crate::placement::{
    current_cpu, pin_current_thread, BufferSpec, LiveSystem, MemPolicy, MemoryLedger, NodeBuffer,
    PageKind, PlacementError, PLACEMENT_THRESHOLD,
};
use crate::stats::Summary;
use crate::timer::{Stamp, Timer};
use crate::topology::Topology;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Bytes between two touched elements: one element per cache line.
pub const STRIDE: usize = strided::LINE;

/// How much work each case does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunConfig {
    /// Bytes of each foreground thread's array (and of each background
    /// thread's buffer).
    pub size_bytes: usize,
    pub passes: u32,
    pub repeats: u32,
    pub warmup: u32,
    pub mix: Mix,
}

/// What the runner tells its caller while it works.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StudyEvent {
    /// An experiment is about to start its background and its first case.
    ExperimentStarted {
        index: usize,
        count: usize,
        id: String,
        background_threads: usize,
    },
    /// A case finished; the report passed along already holds it.
    CaseFinished {
        experiment: usize,
        case: usize,
        cases: usize,
        label: String,
    },
}

/// The empty report a plan will fill (also what is written before the first
/// case finishes).
pub fn new_report(plan: &StudyPlan, cfg: &RunConfig) -> StudyReport {
    StudyReport {
        schema: crate::SCHEMA.into(),
        command: "study".into(),
        preset: plan.preset.map(|p| p.name().to_string()),
        complete: false,
        parameters: StudyParameters {
            size_bytes: cfg.size_bytes as u64,
            stride_bytes: STRIDE as u64,
            passes: cfg.passes,
            repeats: cfg.repeats,
            warmup: cfg.warmup,
            mix: cfg.mix,
            pages: PageKind::Small.name().into(),
            kernels: vec![
                strided::spec(strided::Access::Read, STRIDE),
                strided::spec(strided::Access::Write, STRIDE),
            ],
            timer: Timer::get().info(),
            total_definition: "per sample, the sum of the foreground threads' times (the note's \"total time for both threads\"); `total` summarises those sums".into(),
            percent_definition: "100 x median total of the case / median total of the experiment's baseline case".into(),
            placement_threshold: PLACEMENT_THRESHOLD,
        },
        background_definitions: BackgroundDefinitions::current(),
        hop_map: plan.hop_map.clone(),
        notes: plan.notes.clone(),
        experiments: Vec::new(),
        myths: plan
            .preset
            .filter(|p| *p == super::Preset::Myths)
            .map(|_| Vec::new()),
    }
}

/// Run every experiment of `plan`, calling `progress` after each event with
/// the report so far. Returns the finished report (`complete: true`), or the
/// report so far (`complete: false`) when [`crate::cancel`] was requested.
pub fn run(
    topo: &Topology,
    plan: &StudyPlan,
    cfg: &RunConfig,
    mut progress: impl FnMut(&StudyReport, &StudyEvent),
) -> Result<StudyReport, StudyError> {
    let mut report = new_report(plan, cfg);
    let count = plan.experiments.len();
    let live = LiveSystem::read()?;
    let available = |node: u32| live.allocatable_bytes(node);
    for (index, e) in plan.experiments.iter().enumerate() {
        report.experiments.push(experiment_shell(e));
        let node_of = |cpu: u32| topo.cpu(cpu).and_then(|c| c.node);
        check_experiment_memory(e, cfg, node_of, available)?;
        let mut load = BackgroundLoad::start(&e.background.cpus, node_of, e.load, cfg.size_bytes)?;
        progress(
            &report,
            &StudyEvent::ExperimentStarted {
                index,
                count,
                id: e.id.clone(),
                background_threads: load.threads(),
            },
        );
        for (k, case) in e.cases.iter().enumerate() {
            if crate::cancel::requested() {
                // Interrupted: the report so far, `complete: false`.
                load.stop();
                return Ok(report);
            }
            // The background's buffers are in place: what is left now.
            case_ledger(case, cfg)?.check(available)?;
            let mut result = match run_case(case, cfg) {
                // The panic hook asked the process to stop: what finished
                // before is the report, as on Ctrl-C.
                Err(StudyError::ThreadPanicked) if crate::cancel::requested() => {
                    load.stop();
                    return Ok(report);
                }
                r => r?,
            };
            let exp = report
                .experiments
                .last_mut()
                .ok_or(StudyError::ThreadPanicked)?;
            let base = exp
                .cases
                .get(e.baseline)
                .map(|b| b.total.median)
                .unwrap_or(result.total.median);
            // The ratio first: a case against itself is then exactly 100.
            result.percent = if base > 0.0 {
                100.0 * (result.total.median / base)
            } else {
                100.0
            };
            exp.cases.push(result);
            progress(
                &report,
                &StudyEvent::CaseFinished {
                    experiment: index,
                    case: k,
                    cases: e.cases.len(),
                    label: case.label.clone(),
                },
            );
        }
        load.stop();
        if let (Some(findings), Some(exp)) = (report.myths.as_mut(), report.experiments.last()) {
            findings.push(myths::find(exp));
        }
    }
    // A stop requested during the last case cut that case short.
    report.complete = !crate::cancel::requested();
    Ok(report)
}

/// A case's foreground arrays, per node.
fn case_ledger(case: &CasePlan, cfg: &RunConfig) -> Result<MemoryLedger, PlacementError> {
    let mut ledger = MemoryLedger::new();
    for t in &case.threads {
        let spec = BufferSpec::new(cfg.size_bytes, MemPolicy::Bind(t.spec.mem), PageKind::Small);
        ledger.add(&spec, None, "foreground array")?;
    }
    Ok(ledger)
}

/// Error unless every case of `e`, together with the experiment's background
/// buffers, fits in what each node can give (`available`) before any of
/// them is allocated.
fn check_experiment_memory(
    e: &ExperimentPlan,
    cfg: &RunConfig,
    node_of: impl Fn(u32) -> Option<u32>,
    mut available: impl FnMut(u32) -> Result<u64, PlacementError>,
) -> Result<(), StudyError> {
    let background = if e.load == super::LoadLevel::None {
        &[][..]
    } else {
        &e.background.cpus[..]
    };
    for case in &e.cases {
        let mut ledger = case_ledger(case, cfg)?;
        for &cpu in background {
            let node = node_of(cpu).ok_or(StudyError::CpuWithoutNode(cpu))?;
            let spec = BufferSpec::new(cfg.size_bytes, MemPolicy::Bind(node), PageKind::Small);
            ledger.add(&spec, None, "background buffer")?;
        }
        ledger.check(&mut available)?;
    }
    Ok(())
}

fn experiment_shell(e: &ExperimentPlan) -> ExperimentResult {
    ExperimentResult {
        id: e.id.clone(),
        title: e.title.clone(),
        figure: e.figure.clone(),
        mix: e.mix.clone(),
        background: BackgroundResult {
            level: e.load.name().into(),
            subscription: e.subscription.name().into(),
            duty_percent: e.load.duty_percent(),
            period_us: PERIOD_US,
            remaining_cores: e.background.remaining_cores,
            threads: e.background.cpus.len(),
            cpus: e.background.cpus.clone(),
        },
        baseline: e
            .cases
            .get(e.baseline)
            .map(|c| c.label.clone())
            .unwrap_or_default(),
        cases: Vec::new(),
    }
}

/// What one foreground thread brings back.
struct ThreadOutcome {
    cpu_verified: bool,
    pages_on_node: f64,
    /// (start, end) of every sample, warm-up included.
    stamps: Vec<(Stamp, Stamp)>,
}

/// Run one case: all its threads together, `warmup + repeats` times.
pub fn run_case(case: &CasePlan, cfg: &RunConfig) -> Result<CaseResult, StudyError> {
    let n = case.threads.len();
    let rounds = (cfg.warmup + cfg.repeats) as usize;
    let barrier = Arc::new(Barrier::new(n));
    let failed = Arc::new(AtomicBool::new(false));
    // Raised by the first thread when the process is asked to stop
    // ([`crate::cancel`]); read by all after the round's barrier, so every
    // thread ends after the same round, the last one taken.
    let stop = Arc::new(AtomicBool::new(false));
    let warm = cfg.warmup as usize;
    let timer = *Timer::get();
    let handles: Vec<_> = case
        .threads
        .iter()
        .enumerate()
        .map(|(k, t)| {
            let (cpu, mem, access) = (t.cpu, t.spec.mem, t.spec.access);
            let (barrier, failed, stop) = (barrier.clone(), failed.clone(), stop.clone());
            let (size, passes) = (cfg.size_bytes, cfg.passes);
            std::thread::spawn(move || -> Result<Option<ThreadOutcome>, StudyError> {
                // A panic in this thread breaks the barrier: the others
                // never wait for it forever.
                let _guard = barrier.guard();
                // Pin before the first touch, so page tables and the first
                // write come from the measuring CPU.
                let setup = (|| -> Result<(NodeBuffer, f64), StudyError> {
                    pin_current_thread(&[cpu])?;
                    let spec = BufferSpec::new(size, MemPolicy::Bind(mem), PageKind::Small);
                    let mut buf = NodeBuffer::alloc(&spec)?;
                    buf.touch();
                    let check = buf.verify()?;
                    Ok((buf, check.fraction_on_intended))
                })();
                if setup.is_err() {
                    failed.store(true, Ordering::SeqCst);
                }
                // Every thread reaches this barrier, failed or not, so none
                // waits forever; after it all agree on whether to go on.
                // Broken: a thread panicked; its join says so.
                let whole = barrier.wait();
                let (mut buf, pages_on_node) = match setup {
                    Ok(s) if whole && !failed.load(Ordering::SeqCst) => s,
                    Ok(_) => return Ok(None),
                    Err(e) => return Err(e),
                };
                let mut stamps = Vec::with_capacity(rounds);
                let mut cpu_verified = current_cpu().map(|c| c == cpu).unwrap_or(false);
                for r in 0..rounds {
                    // One sample kept at least, then stop when asked.
                    if k == 0 && r > warm && crate::cancel::requested() {
                        stop.store(true, Ordering::SeqCst);
                    }
                    if !barrier.wait() || stop.load(Ordering::SeqCst) {
                        break;
                    }
                    crate::fault::panic_at(crate::fault::STUDY_WORKER);
                    let t0 = timer.now();
                    for _ in 0..passes {
                        // SAFETY: the whole buffer is ours, touched, page-aligned.
                        let x =
                            unsafe { strided::run(access, buf.as_mut_ptr(), buf.len(), STRIDE) };
                        std::hint::black_box(x);
                    }
                    let t1 = timer.now();
                    stamps.push((t0, t1));
                }
                cpu_verified &= current_cpu().map(|c| c == cpu).unwrap_or(false);
                Ok(Some(ThreadOutcome {
                    cpu_verified,
                    pages_on_node,
                    stamps,
                }))
            })
        })
        .collect();
    let mut outcomes = Vec::with_capacity(n);
    let mut first_err = None;
    for h in handles {
        match h.join() {
            Ok(Ok(Some(o))) => outcomes.push(o),
            Ok(Ok(None)) => {}
            Ok(Err(e)) => {
                first_err.get_or_insert(e);
            }
            Err(_) => {
                first_err.get_or_insert(StudyError::ThreadPanicked);
            }
        }
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    if outcomes.len() != n {
        return Err(StudyError::ThreadPanicked);
    }
    // Every thread took the same rounds (fewer than planned when stopped).
    let taken = outcomes.iter().map(|o| o.stamps.len()).min().unwrap_or(0);
    let samples: Vec<CaseSample> = (warm..taken)
        .map(|r| {
            let threads_s: Vec<f64> = outcomes
                .iter()
                .map(|o| timer.elapsed_ns(o.stamps[r].0, o.stamps[r].1) / 1e9)
                .collect();
            let start = outcomes.iter().map(|o| o.stamps[r].0).min();
            let end = outcomes.iter().map(|o| o.stamps[r].1).max();
            let wall_s = match (start, end) {
                (Some(s), Some(e)) => timer.elapsed_ns(s, e) / 1e9,
                _ => 0.0,
            };
            CaseSample {
                total_s: threads_s.iter().sum(),
                threads_s,
                wall_s,
            }
        })
        .collect();
    let summary = |v: Vec<f64>| -> TimeSummary { Summary::of(&v).unwrap_or_else(zero_summary) };
    // What a thread moves per sample: every line it touches, whole, per pass.
    let thread_bytes = (cfg.size_bytes / STRIDE) as u64 * strided::LINE as u64 * cfg.passes as u64;
    let threads: Vec<ThreadResult> = case
        .threads
        .iter()
        .zip(&outcomes)
        .enumerate()
        .map(|(k, (t, o))| ThreadResult {
            label: t.spec.to_string(),
            node: t.spec.node,
            core: t.spec.core,
            access: t.spec.access,
            mem_node: t.spec.mem,
            hops: t.hops,
            cpu: t.cpu,
            cpu_verified: o.cpu_verified,
            pages_on_node: o.pages_on_node,
            placement_ok: o.cpu_verified && o.pages_on_node >= PLACEMENT_THRESHOLD,
            time: summary(samples.iter().map(|s| s.threads_s[k]).collect()),
            bytes: thread_bytes,
            gbs: 0.0,
        })
        .map(|mut t| {
            t.gbs = gbs(t.bytes, t.time.median);
            t
        })
        .collect();
    let bytes = thread_bytes * threads.len() as u64;
    let wall = summary(samples.iter().map(|s| s.wall_s).collect());
    Ok(CaseResult {
        bytes,
        gbs: gbs(bytes, wall.median),
        label: case.label.clone(),
        description: case.description.clone(),
        hops: case.hops(),
        placement_ok: threads.iter().all(|t| t.placement_ok),
        threads,
        total: summary(samples.iter().map(|s| s.total_s).collect()),
        wall,
        samples,
        sketch: None,
        percent: 100.0,
    })
}

/// A summary of nothing: only reached with `repeats == 0`, which the CLI
/// refuses; kept so the library never panics on it.
fn zero_summary() -> TimeSummary {
    TimeSummary {
        median: 0.0,
        min: 0.0,
        max: 0.0,
        mean: 0.0,
        cv: 0.0,
        n: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::study::background::LoadLevel;
    use crate::experiments::study::{plan_preset, HopMap, PlanOptions, Preset};
    use crate::experiments::testing::live_topology;

    fn tiny() -> RunConfig {
        RunConfig {
            size_bytes: 1 << 20,
            passes: 1,
            repeats: 2,
            warmup: 1,
            mix: Mix::Fixed,
        }
    }

    #[test]
    fn same_node_runs_on_this_machine_with_checked_placement() {
        let topo = live_topology();
        let hops = HopMap::from_topology(&topo);
        let opts = PlanOptions {
            load: Some(LoadLevel::None),
            ..PlanOptions::default()
        };
        let plan = plan_preset(&topo, &hops, Preset::SameNode, &opts).unwrap();
        if plan.experiments.is_empty() {
            return; // a one-core machine: nothing to run, the note says so
        }
        let mut events = 0;
        let r = run(&topo, &plan, &tiny(), |partial, _| {
            assert!(!partial.complete);
            events += 1;
        })
        .unwrap();
        assert!(r.complete);
        assert!(events >= 2);
        let c = &r.experiments[0].cases[0];
        assert_eq!(c.samples.len(), 2);
        assert_eq!(c.threads.len(), 2);
        assert!((c.percent - 100.0).abs() < 1e-9);
        for t in &c.threads {
            assert!(t.cpu_verified, "{t:?}");
            assert!(t.pages_on_node >= PLACEMENT_THRESHOLD, "{t:?}");
        }
        let s = &c.samples[0];
        assert!((s.total_s - s.threads_s.iter().sum::<f64>()).abs() < 1e-12);
        // GB/s beside the times: every line of the 1 MiB array, once per
        // pass, per thread; over the median wall time (case) or the
        // thread's median time.
        assert_eq!(c.bytes, 2 << 20);
        assert!(c.gbs > 0.0);
        assert!((c.gbs - c.bytes as f64 / c.wall.median / 1e9).abs() < 1e-9 * c.gbs.max(1.0));
        for t in &c.threads {
            assert_eq!(t.bytes, 1 << 20);
            assert!((t.gbs - t.bytes as f64 / t.time.median / 1e9).abs() < 1e-9 * t.gbs.max(1.0));
        }
    }

    #[test]
    fn a_case_and_its_background_are_checked_together_per_node() {
        use crate::experiments::study::testing::synthetic;
        use crate::experiments::study::{parse_labels, Subscription};
        // 2 nodes x 4 cores; two threads write node 1, background on the
        // six remaining cores (three per node).
        let topo = synthetic(2, 4, None);
        let hops = HopMap::from_topology(&topo);
        let opts = PlanOptions {
            load: Some(LoadLevel::High),
            subscription: Some(Subscription::Full),
            ..PlanOptions::default()
        };
        let labels = parse_labels(&["0.0.w.1", "1.0.w.1"]).unwrap();
        let plan = crate::experiments::study::plan_custom(&topo, &hops, &[labels], &opts).unwrap();
        let e = &plan.experiments[0];
        assert_eq!(e.background.cpus.len(), 6);
        let cfg = RunConfig {
            size_bytes: 64 << 20,
            ..tiny()
        };
        let node_of = |c: u32| topo.cpu(c).and_then(|x| x.node);
        // Node 1 holds 2 arrays + 3 background buffers = 320 MiB.
        let fits = |n: u32| Ok(if n == 1 { 320 << 20 } else { 192 << 20 });
        check_experiment_memory(e, &cfg, node_of, fits).unwrap();
        let short = |n: u32| Ok(if n == 1 { 319 << 20 } else { 1 << 30 });
        let err = check_experiment_memory(e, &cfg, node_of, short)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "node 1 cannot hold 3 x background buffer + 2 x foreground array: 320 MiB in total, 319 MiB allocatable now"
        );
        // Without background load only the arrays count.
        let idle = ExperimentPlan {
            load: LoadLevel::None,
            ..e.clone()
        };
        check_experiment_memory(&idle, &cfg, node_of, |_| Ok(128 << 20)).unwrap();
        assert!(check_experiment_memory(&idle, &cfg, node_of, |_| Ok(127 << 20)).is_err());
    }

    #[test]
    fn background_load_starts_and_stops() {
        let topo = live_topology();
        let cpu = topo.allowed.cpus[0];
        let node_of = |c: u32| topo.cpu(c).and_then(|x| x.node);
        let mut load = BackgroundLoad::start(&[cpu], node_of, LoadLevel::Medium, 1 << 20).unwrap();
        assert_eq!(load.threads(), 1);
        std::thread::sleep(std::time::Duration::from_millis(5));
        load.stop();
        assert_eq!(load.threads(), 0);
        let idle = BackgroundLoad::start(&[cpu], node_of, LoadLevel::None, 1 << 20).unwrap();
        assert_eq!(idle.threads(), 0);
    }
}
