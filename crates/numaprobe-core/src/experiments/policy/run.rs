//! Running a policy plan: rounds interleaved across policies (round r runs
//! every policy once, in an order rotated by r, so drift hits all alike),
//! each sample with freshly placed data.
//!
//! A sample: the data is placed the way the policy says (each pinned thread
//! touches its own data; or one thread on the chosen node touches all of it;
//! or the range is mbind-ed to interleave / weighted interleave / preferred
//! before the threads touch it; or unpinned threads touch their own), the
//! pages are counted with `move_pages` right after placement (what the policy
//! produced, before NUMA balancing may move anything), one untimed-for-the-
//! result pass sizes the sample, and the timed passes follow. All threads
//! start at one barrier; the time is the span from the first start to the
//! last end. Every touching thread first resets its own memory policy to the
//! default, so a policy numaprobe was started under (e.g. `numactl -i all
//! numaprobe policy`) cannot blur first touch.
//!
//! A sample in which a thread lost its CPU, or started late, is set aside
//! (`PolicySample::set_aside`), as a team's is. It is not shortened, as the
//! samples of other figures are when many are lost: a sample is a round's
//! only one for its policy, sized once by its own warm-up pass, and the
//! next sample of that policy comes a whole round later, on data placed
//! afresh. Shortening one policy's samples and not another's would rank
//! samples of unequal length (fewer passes, so more of each is the first
//! pass's page walks) against each other; the rounds already spread the
//! losses over every policy alike, and an outcome none of whose samples
//! held is flagged.
//!
//! A policy's figure is also starred when other tasks kept CPUs busy beside
//! its samples ([`crate::beside`]): the mean over the samples its figure is
//! made of, each judged by its own reading or, too short for the tick
//! counters, the run's so far (`beside::beside_step`, as `mark_step` judges
//! a step).

use super::busy::Beside;
use super::document::empty_report;
use super::promise::{distribution, expected_share};
use super::PolicyPlan;
use crate::experiments::barrier::Barrier;
use crate::experiments::team::TeamSample;
use crate::experiments::{ExperimentError, NoProgress};
use crate::held::{Hold, Lost, Probe};
use crate::kernels::stream::{self, Streams};
use crate::model::policy::{DataCase, Distribution, PolicyKind, PolicyReport, PolicySample};
use crate::placement::{
    allowed_cpus, current_cpu, pin_current_thread, set_current_affinity, BufferSpec, MemPolicy,
    NodeBuffer, PlacementCheck, TaskPolicy,
};
use crate::timer::{Stamp, Timer};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// Observer of a running comparison; empty defaults.
pub trait PolicyProgress {
    /// Sample `index` (0-based) of `total` starts; `label` says which.
    fn sample_started(&mut self, _index: usize, _total: usize, _label: &str) {}
    /// A sample finished (or failed); `partial` holds everything so far.
    fn sample_finished(&mut self, _partial: &PolicyReport) {}
}

impl PolicyProgress for NoProgress {}

/// One sample of a plan: which round, data case (its index in the plan's
/// cases) and policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub round: u32,
    pub case: usize,
    pub policy: PolicyKind,
}

/// The plan's samples in the order [`run`] measures them: round after
/// round, every data case, every runnable policy in an order turned by one
/// each round. Steps of one case and policy cost alike; the cases and
/// policies do not (a shared array is streamed whole by every thread; a
/// serial initialiser touches all the data alone).
pub fn steps(plan: &PolicyPlan) -> Vec<Step> {
    let runnable = plan.runnable();
    let mut out = Vec::with_capacity(plan.rounds as usize * plan.cases.len() * runnable.len());
    for round in 0..plan.rounds {
        for case in 0..plan.cases.len() {
            for k in 0..runnable.len() {
                out.push(Step {
                    round,
                    case,
                    policy: runnable[(k + round as usize) % runnable.len()],
                });
            }
        }
    }
    out
}

/// Measure every round of the plan. A sample that fails is recorded in its
/// policy's `failures` and the run goes on; a stop request ends the run
/// after the sample in progress.
pub fn run(
    plan: &PolicyPlan,
    progress: &mut dyn PolicyProgress,
) -> Result<PolicyReport, ExperimentError> {
    let timer = *Timer::get();
    let mut report = empty_report(plan);
    let steps = steps(plan);
    let total = steps.len();
    let phase = crate::beside::Watch::start();
    let mut beside = Beside::default();
    for (index, step) in steps.into_iter().enumerate() {
        if crate::cancel::requested() {
            report.interrupted = true;
            break;
        }
        let case = plan.cases[step.case];
        progress.sample_started(
            index,
            total,
            &format!(
                "round {}/{}: {} data, {}",
                step.round + 1,
                plan.rounds,
                case.name(),
                step.policy.name()
            ),
        );
        let outcome = report.cases[step.case]
            .policies
            .iter_mut()
            .find(|o| o.policy == step.policy)
            .expect("every runnable policy has an outcome");
        let watch = crate::beside::Watch::start();
        match measure(plan, case, step.policy, &timer) {
            Ok((mut sample, dist)) => {
                sample.round = step.round + 1;
                let others = crate::beside::beside_step(watch, phase);
                beside.add_sample(outcome, step.case, sample, dist, others);
            }
            Err(e) => outcome.failures.push(failure(step.round, &e)),
        }
        progress.sample_finished(&report);
    }
    settle(&mut report, crate::cancel::requested());
    Ok(report)
}

/// A failed sample in its policy's `failures`: the round counted from 1,
/// as the progress line counts it, then why.
fn failure(round: u32, e: &ExperimentError) -> String {
    format!("round {}: {e}", round + 1)
}

/// The run's end: interrupted when a stop was asked for at any time
/// (`cancel` read at the end too: a request during the last sample),
/// complete only when not interrupted and no sample of any policy failed.
fn settle(report: &mut PolicyReport, cancel: bool) {
    report.interrupted |= cancel;
    report.complete = !report.interrupted
        && report
            .cases
            .iter()
            .all(|c| c.policies.iter().all(|p| p.failures.is_empty()));
}

/// What the workers share with the coordinating thread.
struct Shared {
    barrier: Barrier,
    /// Among the workers only: the shared case's slice hand-over.
    inner: Barrier,
    stop: AtomicBool,
    reps: AtomicU64,
    ready: Mutex<Vec<bool>>,
    stamps: Mutex<Vec<(Stamp, Stamp)>>,
    /// Per worker: its hold on its CPU over its last sample.
    holds: Mutex<Vec<Hold>>,
}

/// One worker's job.
struct Job {
    index: usize,
    /// None: not pinned.
    cpu: Option<u32>,
    /// Independent data placed before the worker starts (serial).
    given: Option<NodeBuffer>,
    /// Independent data the worker maps and touches itself.
    spec: Option<BufferSpec>,
    /// The shared array: base address and length of each slice.
    shared: Option<(usize, usize)>,
}

struct WorkerOut {
    check: Option<PlacementCheck>,
    cpu: u32,
    bytes_per_pass: u64,
}

fn touch_range(base: *mut u8, len: usize) {
    let mut off = 0;
    while off < len {
        // SAFETY: inside the caller's slice of a live mapping; volatile so a
        // write really faults the page in (a read would map the zero page).
        unsafe { std::ptr::write_volatile(base.add(off), 0) };
        off += 4096;
    }
}

fn worker(
    mut job: Job,
    plan: &PolicyPlan,
    timer: &Timer,
    sh: &Shared,
) -> Result<WorkerOut, ExperimentError> {
    // A panic anywhere below breaks the barriers: nobody waits for us forever.
    let _guards = (sh.barrier.guard(), sh.inner.guard());
    let threads = plan.threads.len();
    let setup = std::panic::catch_unwind(std::panic::AssertUnwindSafe(
        || -> Result<(Option<NodeBuffer>, Option<PlacementCheck>), ExperimentError> {
            match job.cpu {
                Some(cpu) => {
                    pin_current_thread(&[cpu])?;
                }
                // Anywhere the process may run (the process's mask, read
                // once at start), whatever the spawning thread's own mask.
                None => set_current_affinity(&allowed_cpus()?)?,
            }
            TaskPolicy::new(&MemPolicy::FirstTouch)?
                .apply()
                .map_err(|source| crate::placement::PlacementError::Sys {
                    call: "set_mempolicy",
                    source,
                })?;
            if let Some((base, per)) = job.shared {
                touch_range((base + job.index * per) as *mut u8, per);
                return Ok((None, None));
            }
            let mut buf = match (job.given.take(), &job.spec) {
                (Some(b), _) => b,
                (None, Some(spec)) => {
                    let mut b = NodeBuffer::alloc(spec)?;
                    b.touch();
                    b
                }
                (None, None) => return Err(ExperimentError::Invalid("worker without data".into())),
            };
            let check = buf.verify()?;
            let _ = buf.as_mut_ptr();
            Ok((Some(buf), Some(check)))
        },
    ))
    .unwrap_or(Err(ExperimentError::Panicked));
    if setup.is_ok() {
        if let Ok(mut v) = sh.ready.lock() {
            v[job.index] = true;
        }
    }
    sh.barrier.wait(); // ready
    let (mut own, check) = match setup {
        Ok(x) => x,
        Err(e) => {
            sh.barrier.wait(); // the coordinator's stop
            return Err(e);
        }
    };
    let per = plan.per_thread() as usize;
    let mine: Option<Streams> = own
        .as_mut()
        .map(|b| Streams::split(plan.op, b.as_mut_ptr(), per.min(b.len())));
    let slices: Vec<Streams> = match job.shared {
        Some((base, per)) => (0..threads)
            .map(|k| {
                let s = (job.index + k) % threads;
                Streams::split(plan.op, (base + s * per) as *mut u8, per)
            })
            .collect(),
        None => Vec::new(),
    };
    let bytes_per_pass = match &mine {
        Some(s) => s.bytes_per_pass(plan.op),
        None => slices.iter().map(|s| s.bytes_per_pass(plan.op)).sum(),
    };
    loop {
        // start (or stop); a broken barrier (a thread panicked) stops too
        if !sh.barrier.wait() || sh.stop.load(Ordering::SeqCst) {
            break;
        }
        crate::fault::panic_at(crate::fault::POLICY_WORKER);
        let reps = sh.reps.load(Ordering::SeqCst);
        let held = Probe::start();
        let a = timer.now();
        'sample: for _ in 0..reps {
            match &mine {
                // SAFETY: the arrays lie inside our buffer, page-aligned; the
                // width was checked in the plan.
                Some(s) => {
                    std::hint::black_box(unsafe { stream::run(plan.op, plan.width, s) });
                }
                None => {
                    for s in &slices {
                        // Every thread moves to its next slice together:
                        // no slice is ever streamed by two threads at once.
                        // Broken: a thread panicked and the hand-over
                        // order is gone; stop before two threads share a slice.
                        if !sh.inner.wait() {
                            break 'sample;
                        }
                        // SAFETY: a slice of the live shared mapping, this
                        // thread's alone until the next barrier.
                        std::hint::black_box(unsafe { stream::run(plan.op, plan.width, s) });
                    }
                }
            }
        }
        let b = timer.now();
        let hold = held.stop();
        if let Ok(mut v) = sh.stamps.lock() {
            v[job.index] = (a, b);
        }
        if let Ok(mut v) = sh.holds.lock() {
            v[job.index] = hold;
        }
        sh.barrier.wait(); // done
    }
    Ok(WorkerOut {
        check,
        cpu: current_cpu().unwrap_or(u32::MAX),
        bytes_per_pass,
    })
}

/// Place the data of one initialiser-touched buffer from `cpu` with the
/// default policy (what a program's main thread does).
fn serial_buffer(cpu: u32, len: usize, plan: &PolicyPlan) -> Result<NodeBuffer, ExperimentError> {
    let spec = BufferSpec::new(len, MemPolicy::FirstTouch, plan.pages);
    std::thread::spawn(move || -> Result<NodeBuffer, ExperimentError> {
        pin_current_thread(&[cpu])?;
        TaskPolicy::new(&MemPolicy::FirstTouch)?
            .apply()
            .map_err(|source| crate::placement::PlacementError::Sys {
                call: "set_mempolicy",
                source,
            })?;
        let mut b = NodeBuffer::alloc(&spec)?;
        b.touch();
        Ok(b)
    })
    .join()
    .map_err(|_| ExperimentError::Panicked)?
}

fn measure(
    plan: &PolicyPlan,
    case: DataCase,
    policy: PolicyKind,
    timer: &Timer,
) -> Result<(PolicySample, Distribution), ExperimentError> {
    let t = plan.threads.len();
    let per = plan.per_thread() as usize;
    let serial_cpu = plan.serial_cpu;
    // The shared array: one mapping, touched by the workers (or by the
    // serial initialiser).
    let shared_buf: Option<NodeBuffer> = match (case, policy) {
        (DataCase::Shared, PolicyKind::Serial) => Some(serial_buffer(
            serial_cpu.ok_or(ExperimentError::NoCpuNodes)?,
            per * t,
            plan,
        )?),
        (DataCase::Shared, _) => Some(NodeBuffer::alloc(&BufferSpec::new(
            per * t,
            plan.mem_policy(policy),
            plan.pages,
        ))?),
        _ => None,
    };
    let mut jobs = Vec::with_capacity(t);
    for (i, slot) in plan.threads.iter().enumerate() {
        let cpu = (policy != PolicyKind::Unpinned).then_some(slot.cpu);
        let mut job = Job {
            index: i,
            cpu,
            given: None,
            spec: None,
            shared: None,
        };
        match (case, &shared_buf) {
            (DataCase::Shared, Some(b)) => {
                job.shared = Some((b.as_ptr() as usize, per));
            }
            _ if policy == PolicyKind::Serial => {
                job.given = Some(serial_buffer(
                    serial_cpu.ok_or(ExperimentError::NoCpuNodes)?,
                    per,
                    plan,
                )?);
            }
            _ => {
                job.spec = Some(BufferSpec::new(per, plan.mem_policy(policy), plan.pages));
            }
        }
        jobs.push(job);
    }
    let sh = Shared {
        barrier: Barrier::new(t + 1),
        inner: Barrier::new(t),
        stop: AtomicBool::new(false),
        reps: AtomicU64::new(1),
        ready: Mutex::new(vec![false; t]),
        stamps: Mutex::new(vec![(Stamp(0), Stamp(0)); t]),
        holds: Mutex::new(vec![Hold::default(); t]),
    };
    let (outs, timing) = std::thread::scope(|s| {
        let handles: Vec<_> = jobs
            .into_iter()
            .map(|job| {
                let sh = &sh;
                s.spawn(move || worker(job, plan, timer, sh))
            })
            .collect();
        // A panic on this side breaks the barrier too: no worker waits
        // for a coordinator that is gone.
        let _guard = sh.barrier.guard();
        // every worker placed its data (or failed)
        let ready = sh.barrier.wait()
            && sh
                .ready
                .lock()
                .map(|v| v.iter().all(|&r| r))
                .unwrap_or(false);
        let timing = if ready {
            // None: the barrier broke (a worker panicked; its join says so).
            let sample = |reps: u64| -> Option<(f64, Option<Lost>)> {
                sh.reps.store(reps, Ordering::SeqCst);
                if !(sh.barrier.wait() && sh.barrier.wait()) {
                    return None;
                }
                let st = sh.stamps.lock().map(|v| v.clone()).unwrap_or_default();
                let a = st.iter().map(|x| x.0).min().unwrap_or(Stamp(0));
                let b = st.iter().map(|x| x.1).max().unwrap_or(Stamp(0));
                // A worker that lost its CPU, or started late, stretched the
                // span: the sample times the scheduler, not the policy.
                let team = TeamSample {
                    stamps: st.iter().map(|&(a, b)| (a, b, 0)).collect(),
                    holds: sh.holds.lock().map(|v| v.clone()).unwrap_or_default(),
                };
                Some((timer.elapsed_ns(a, b).max(1.0), team.lost(timer)))
            };
            // The warm-up pass sizes the sample; it is not a result.
            sample(1).and_then(|(warm, _)| {
                let reps = ((plan.sample_target_s * 1e9 / warm).ceil() as u64).clamp(1, 100_000);
                Some((reps, sample(reps)?))
            })
        } else {
            None
        };
        sh.stop.store(true, Ordering::SeqCst);
        sh.barrier.wait();
        let outs: Vec<Result<WorkerOut, ExperimentError>> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(ExperimentError::Panicked)))
            .collect();
        (outs, timing)
    });
    let mut ok = Vec::with_capacity(t);
    for o in outs {
        ok.push(o?);
    }
    let (reps, (span_ns, lost)) =
        timing.ok_or_else(|| ExperimentError::Invalid("a thread could not set up".into()))?;
    let mut checks: Vec<PlacementCheck> = ok.iter().filter_map(|o| o.check.clone()).collect();
    if let Some(b) = &shared_buf {
        checks.push(b.verify()?);
    }
    let bytes: u64 = ok.iter().map(|o| o.bytes_per_pass).sum();
    let dist = distribution(&checks, expected_share(plan, policy));
    let sample = PolicySample {
        round: 0,
        passes: reps,
        seconds_per_pass: span_ns / 1e9 / reps as f64,
        gbps: (bytes * reps) as f64 / span_ns,
        placement_match: dist.match_fraction,
        cpus: ok.iter().map(|o| o.cpu).collect(),
        set_aside: lost.map(|l| l.words().to_string()),
    };
    Ok((sample, dist))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::policy::{plan, PolicyConfig, Threads};
    use crate::experiments::testing;
    use crate::kernels::StreamOp;

    fn small(op: StreamOp) -> PolicyConfig {
        PolicyConfig {
            size: Some(4 << 20),
            op: Some(op),
            threads: Some(Threads::Total(
                2.min(testing::live_topology().allowed_cpus_of_node(0).len()),
            )),
            rounds: Some(2),
            sample_target_s: Some(0.002),
            ..Default::default()
        }
    }

    #[test]
    fn the_steps_run_every_case_and_policy_once_a_round_in_a_turning_order() {
        let topo = testing::live_topology();
        let mut cfg = small(StreamOp::Read);
        cfg.rounds = Some(3);
        let p = plan(&topo, &cfg).unwrap();
        let runnable = p.runnable();
        let s = steps(&p);
        assert_eq!(s.len(), 3 * p.cases.len() * runnable.len());
        let per_round = p.cases.len() * runnable.len();
        for (i, st) in s.iter().enumerate() {
            assert_eq!(st.round as usize, i / per_round, "{i}");
            assert_eq!(st.case, (i % per_round) / runnable.len(), "{i}");
            let k = i % runnable.len();
            assert_eq!(
                st.policy,
                runnable[(k + st.round as usize) % runnable.len()],
                "{i}"
            );
        }
        // Each round holds every case and policy exactly once.
        for round in s.chunks(per_round) {
            for c in 0..p.cases.len() {
                for &k in &runnable {
                    let n = round
                        .iter()
                        .filter(|x| x.case == c && x.policy == k)
                        .count();
                    assert_eq!(n, 1, "{c} {k:?}");
                }
            }
        }
    }

    #[test]
    fn every_policy_and_case_is_measured_and_its_pages_counted() {
        let topo = testing::live_topology();
        for op in [StreamOp::Read, StreamOp::Triad] {
            let p = plan(&topo, &small(op)).unwrap();
            let r = run(&p, &mut NoProgress).unwrap();
            assert_eq!(r.cases.len(), 2);
            for c in &r.cases {
                for o in &c.policies {
                    if let Some(why) = &o.skipped {
                        assert_eq!(o.policy, PolicyKind::Weighted, "{why}");
                        assert!(o.samples.is_empty());
                        continue;
                    }
                    assert!(o.failures.is_empty(), "{:?}", o.failures);
                    assert_eq!(o.samples.len(), 2, "{:?} {:?}", c.case, o.policy);
                    // One sample a round, numbered from 1 as the progress
                    // line and a failure number it.
                    let rounds: Vec<u32> = o.samples.iter().map(|s| s.round).collect();
                    assert_eq!(rounds, (1..=p.rounds).collect::<Vec<_>>());
                    let d = o.placement.as_ref().unwrap();
                    let want_pages = (p.per_thread() * p.threads.len() as u64) / 4096;
                    assert_eq!(d.pages, want_pages, "{:?} {:?}", c.case, o.policy);
                    assert_eq!(d.not_present, 0);
                    assert_eq!(d.per_node.values().sum::<u64>(), d.pages);
                    if o.policy != PolicyKind::Unpinned {
                        // One memory node here: every promise is kept whole.
                        if p.mem_nodes.len() == 1 {
                            assert_eq!(d.match_fraction, Some(1.0), "{:?}", o.policy);
                        }
                    } else {
                        assert_eq!(d.match_fraction, None);
                    }
                    assert_eq!(
                        d.buffers as usize,
                        if c.case == DataCase::Shared {
                            1
                        } else {
                            p.threads.len()
                        }
                    );
                    assert!(o.throughput.unwrap().median > 0.0);
                }
            }
            assert!(r.complete);
        }
    }

    #[test]
    fn a_run_is_complete_only_when_not_interrupted_and_no_sample_failed() {
        let topo = testing::live_topology();
        let p = plan(&topo, &small(StreamOp::Read)).unwrap();
        let settled = |interrupted: bool, failed: bool, cancel: bool| {
            let mut r = empty_report(&p);
            r.interrupted = interrupted;
            if failed {
                let e = ExperimentError::Invalid("a thread could not set up".into());
                r.cases[0].policies[0].failures.push(failure(0, &e));
            }
            settle(&mut r, cancel);
            (r.complete, r.interrupted)
        };
        assert_eq!(settled(false, false, false), (true, false));
        // A stop asked for during the last sample, after the last check.
        assert_eq!(settled(false, false, true), (false, true));
        // One asked for between samples stays said.
        assert_eq!(settled(true, false, false), (false, true));
        assert_eq!(settled(false, true, false), (false, false));
    }

    #[test]
    fn a_failed_sample_names_its_round_as_the_progress_counts_it() {
        let e = ExperimentError::Invalid("a thread could not set up".into());
        // Step rounds count from 0; the progress line and failures from 1.
        assert_eq!(failure(0, &e), format!("round 1: {e}"));
        assert_eq!(failure(2, &e), format!("round 3: {e}"));
    }

    #[test]
    fn a_stop_request_before_the_first_sample_gives_an_incomplete_empty_report() {
        // The cancel flag is process-wide and only ever set: test the
        // decision on a report instead of raising it here (other tests run
        // in this process).
        let topo = testing::live_topology();
        let p = plan(&topo, &small(StreamOp::Read)).unwrap();
        let r = empty_report(&p);
        assert!(!r.complete);
        assert!(r
            .cases
            .iter()
            .all(|c| c.policies.iter().all(|o| o.samples.is_empty())));
    }
}
