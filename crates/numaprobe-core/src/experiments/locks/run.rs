//! The runner of lock and atomic contention: for each planned run, the
//! threads are pinned (checked with `sched_getcpu`), the counters placed by
//! the first thread's first touch (checked with `move_pages`), and each
//! sample is one timed slice that all threads start together at a barrier.
//! After every slice the counters must equal the operations the threads
//! counted: a lost update fails the run rather than give a figure. Each
//! thread reads its own CPU hold around its slice ([`crate::held`]): a
//! sample counts only when every thread held its CPU ([`slices_taken`]),
//! and the slices shorten when many are lost
//! ([`crate::stats::repeat_held`]).

use super::plan::{slice_of, LocksPlan};
use crate::experiments::barrier::Barrier;
use crate::experiments::{ExperimentError, StepProgress};
use crate::held::{Lost, Probe};
use crate::kernels::atomics::{atomic_add_loop, spin_lock_loop, Rmw};
use crate::model::locks::{LockFailed, LockRun, LocksResult};
use crate::placement::{
    current_cpu, pin_current_thread, BufferSpec, MemPolicy, NodeBuffer, PageKind,
};
use crate::stats::Taken;
use crate::timer::{Stamp, Timer};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Bytes from one thread's counter to the next on their own lines: two
/// lines, so the adjacent-line prefetcher does not pair them.
const OWN_STRIDE: usize = 128;

/// Where thread `i`'s lock word and counter are, as byte offsets.
fn slot(sharing: &str, op: &str, i: usize) -> (usize, usize) {
    let base = match sharing {
        "shared" => 0,
        // Packed: the counter alone for adds, lock and counter for locks.
        "false_sharing" if op == "atomic_add" => i * 8,
        "false_sharing" => i * 16,
        _ => i * OWN_STRIDE,
    };
    if op == "atomic_add" {
        (base, base)
    } else {
        // The lock and what it protects on one line, as in most structs.
        (base, base + 8)
    }
}

/// What one thread reports after a slice.
#[derive(Debug, Clone, Copy)]
struct Slice {
    ops: u64,
    start: Stamp,
    end: Stamp,
    /// The CPU seen after the slice.
    cpu: Option<u32>,
    /// Whether the thread lost its CPU during the slice.
    lost: Option<Lost>,
}

/// A sample of `value` from every thread's slice: it held only when every
/// thread held its CPU (the first thread's reason that did not).
fn slices_taken(value: f64, lost: impl IntoIterator<Item = Option<Lost>>) -> Taken {
    Taken {
        value,
        lost: lost.into_iter().flatten().next(),
    }
}

struct Shared<'a> {
    stop: AtomicBool,
    /// Threads inside the slice: the slice's clock starts when all are, so
    /// a thread woken late from the barrier on a busy machine still
    /// contends for the whole slice.
    running: AtomicUsize,
    quit: AtomicBool,
    start: Barrier,
    end: Barrier,
    slices: Vec<Mutex<Option<Slice>>>,
    buf: &'a NodeBuffer,
}

fn counter_at(buf: &NodeBuffer, off: usize) -> &AtomicU64 {
    assert!(off + 8 <= buf.len() && off.is_multiple_of(8));
    // SAFETY: in bounds and 8-byte aligned (the mapping is page aligned);
    // every access to the buffer's words goes through atomics.
    unsafe { &*(buf.as_ptr().add(off) as *const AtomicU64) }
}

fn lock_at(buf: &NodeBuffer, off: usize) -> &AtomicU32 {
    assert!(off + 4 <= buf.len() && off.is_multiple_of(4));
    // SAFETY: as in counter_at.
    unsafe { &*(buf.as_ptr().add(off) as *const AtomicU32) }
}

/// One thread of a run: pinned, then one slice per start barrier until quit.
fn worker(sh: &Shared, rmw: Rmw, op: &str, lock_off: usize, count_off: usize, i: usize) {
    let timer = Timer::get();
    let lock = lock_at(sh.buf, lock_off);
    let counter = counter_at(sh.buf, count_off);
    loop {
        // A broken barrier: a thread panicked, the run is over.
        if !sh.start.wait() || sh.quit.load(Ordering::SeqCst) {
            return;
        }
        crate::fault::panic_at(crate::fault::LOCKS_WORKER);
        sh.running.fetch_add(1, Ordering::SeqCst);
        let held = Probe::start();
        let start = timer.now();
        let ops = if op == "atomic_add" {
            atomic_add_loop(rmw, counter, &sh.stop)
        } else {
            spin_lock_loop(rmw, lock, counter, &sh.stop)
        };
        let end = timer.now();
        let lost = held.lost();
        *sh.slices[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(Slice {
            ops,
            start,
            end,
            cpu: current_cpu().ok(),
            lost,
        });
        sh.end.wait();
    }
}

/// One run measured: its figure, or why it failed.
fn measure_run(
    plan: &LocksPlan,
    rule: &crate::stats::StopRule,
    op: &str,
    sharing: &str,
    cpus: &[u32],
    notes: &mut Vec<String>,
) -> Result<(crate::stats::Measured, Option<u32>), String> {
    let n = cpus.len();
    let slots: Vec<(usize, usize)> = (0..n).map(|i| slot(sharing, op, i)).collect();
    let need = slots.iter().map(|&(l, c)| l.max(c) + 8).max().unwrap_or(8);
    let spec = BufferSpec::new(need.max(4096), MemPolicy::FirstTouch, PageKind::Small);
    let buf = NodeBuffer::alloc_on_cpu(cpus[0], &spec).map_err(|e| e.to_string())?;
    let memory_node = match buf.verify() {
        Ok(check) => check
            .per_node
            .iter()
            .max_by_key(|(_, &p)| p)
            .map(|(&n, _)| n),
        Err(e) => {
            let note = format!("where the counters are was not checked: {e}");
            if !notes.contains(&note) {
                notes.push(note);
            }
            None
        }
    };
    let sh = Shared {
        stop: AtomicBool::new(false),
        running: AtomicUsize::new(0),
        quit: AtomicBool::new(false),
        start: Barrier::new(n + 1),
        end: Barrier::new(n + 1),
        slices: (0..n).map(|_| Mutex::new(None)).collect(),
        buf: &buf,
    };
    let slice = slice_of(rule);
    let timer = Timer::get();
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::channel::<Result<u32, String>>();
        let mut threads = Vec::with_capacity(n);
        for (i, (&cpu, &(l, c))) in cpus.iter().zip(&slots).enumerate() {
            let tx = tx.clone();
            let sh = &sh;
            let rmw = plan.rmw;
            threads.push(s.spawn(move || {
                // A panic in this thread breaks both barriers: the others
                // and the coordinator never wait for it forever.
                let _guards = (sh.start.guard(), sh.end.guard());
                let pinned = pin_current_thread(&[cpu]).map_err(|e| e.to_string());
                let ok = pinned.is_ok();
                let _ = tx.send(pinned);
                if ok {
                    worker(sh, rmw, op, l, c, i);
                } else {
                    // Meet the first barrier, then see quit.
                    sh.start.wait();
                }
            }));
        }
        drop(tx);
        // A panic on this side breaks the barriers too: no thread waits
        // for a coordinator that is gone.
        let _guards = (sh.start.guard(), sh.end.guard());
        // Joined here, not by the scope: a thread's panic becomes this
        // run's failure instead of the scope's own panic.
        let join = |threads: Vec<std::thread::ScopedJoinHandle<'_, ()>>| {
            let panicked = threads
                .into_iter()
                .fold(false, |p, t| t.join().is_err() | p);
            if panicked {
                Err("a measuring thread panicked".to_string())
            } else {
                Ok(())
            }
        };
        let mut failure = None;
        for _ in 0..n {
            match rx.recv() {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => failure = Some(e),
                Err(_) => failure = Some("a thread ended before it was pinned".into()),
            }
        }
        let finish = |sh: &Shared| {
            sh.quit.store(true, Ordering::SeqCst);
            sh.start.wait();
        };
        if let Some(e) = failure {
            finish(&sh);
            join(threads)?;
            return Err(e);
        }
        let started = Instant::now();
        let mut sample = |shorten: u32| -> Result<Taken, String> {
            for &(l, c) in &slots {
                lock_at(&buf, l).store(0, Ordering::SeqCst);
                counter_at(&buf, c).store(0, Ordering::SeqCst);
            }
            sh.stop.store(false, Ordering::SeqCst);
            sh.running.store(0, Ordering::SeqCst);
            let panicked = || "a measuring thread panicked".to_string();
            if !sh.start.wait() {
                return Err(panicked());
            }
            while sh.running.load(Ordering::SeqCst) < n {
                // A thread that panicked before it ran never arrives.
                if sh.start.is_broken() {
                    sh.stop.store(true, Ordering::SeqCst);
                    return Err(panicked());
                }
                std::thread::yield_now();
            }
            std::thread::sleep(slice / shorten.max(1));
            sh.stop.store(true, Ordering::SeqCst);
            if !sh.end.wait() {
                return Err(panicked());
            }
            let got: Vec<Slice> = sh
                .slices
                .iter()
                .map(|m| m.lock().unwrap_or_else(|e| e.into_inner()).take())
                .collect::<Option<Vec<_>>>()
                .ok_or("a thread reported no slice")?;
            for (&want, g) in cpus.iter().zip(&got) {
                if g.cpu != Some(want) {
                    return Err(format!(
                        "the thread pinned to CPU {want} was seen on CPU {}",
                        g.cpu.map_or("unknown".into(), |c| c.to_string())
                    ));
                }
            }
            check_counts(sharing, &slots, &got, &buf)?;
            let total: u64 = got.iter().map(|g| g.ops).sum();
            let first = got.iter().map(|g| g.start).min().unwrap_or(Stamp(0));
            let last = got.iter().map(|g| g.end).max().unwrap_or(Stamp(0));
            let ns = timer.elapsed_ns(first, last);
            if ns <= 0.0 {
                return Err("a slice took no measurable time".into());
            }
            Ok(slices_taken(
                total as f64 / ns * 1e9,
                got.iter().map(|g| g.lost),
            ))
        };
        let measured = crate::stats::repeat_held_with(
            rule,
            &mut sample,
            || started.elapsed(),
            crate::cancel::requested,
        );
        finish(&sh);
        join(threads)?;
        measured.map(|m| (m, memory_node))
    })
}

/// The counters against the operations counted: one total for a shared
/// counter, each thread's own otherwise.
fn check_counts(
    sharing: &str,
    slots: &[(usize, usize)],
    got: &[Slice],
    buf: &NodeBuffer,
) -> Result<(), String> {
    if sharing == "shared" {
        let want: u64 = got.iter().map(|g| g.ops).sum();
        let have = counter_at(buf, slots[0].1).load(Ordering::SeqCst);
        if have != want {
            return Err(format!(
                "lost updates: the shared counter holds {have}, the threads did {want} (a bug in the atomics or the lock)"
            ));
        }
    } else {
        for (i, (g, &(_, c))) in got.iter().zip(slots).enumerate() {
            let have = counter_at(buf, c).load(Ordering::SeqCst);
            if have != g.ops {
                return Err(format!(
                    "lost updates: thread {i}'s counter holds {have}, it did {}",
                    g.ops
                ));
            }
        }
    }
    Ok(())
}

pub fn run(
    plan: &LocksPlan,
    progress: &mut dyn StepProgress,
    partial: &mut dyn FnMut(&LocksResult),
) -> Result<LocksResult, ExperimentError> {
    let mut result = LocksResult {
        schema: crate::SCHEMA.into(),
        atomics: plan.rmw.name().into(),
        runs: Vec::new(),
        failed: Vec::new(),
        stop_rule: Some(plan.rule),
        slice_s: slice_of(&plan.rule).as_secs_f64(),
        timer: Timer::get().info(),
        notes: plan.notes.clone(),
        complete: false,
        interrupted: false,
    };
    let total = plan.runs.len();
    let mut finished = true;
    let phase = crate::beside::Watch::start();
    for (i, (op, sharing, placement, cpus)) in plan.runs.iter().enumerate() {
        if crate::cancel::requested() {
            result.interrupted = true;
            finished = false;
            break;
        }
        if progress.out_of_time() {
            finished = false;
            break;
        }
        let label = format!(
            "{op} {sharing} {placement} {} thread{}",
            cpus.len(),
            if cpus.len() == 1 { "" } else { "s" }
        );
        progress.step_started(i, total, &label);
        let rule = progress.rule_for_step(i, plan.rule);
        let watch = crate::beside::Watch::start();
        match measure_run(plan, &rule, op, sharing, cpus, &mut result.notes) {
            Ok((m, memory_node)) => {
                let ops = m.summary.median;
                let mut flags = m.flags("ops/s");
                crate::beside::mark_step(&mut flags, watch, phase);
                result.runs.push(LockRun {
                    op: op.clone(),
                    sharing: sharing.clone(),
                    placement: placement.clone(),
                    cpus: cpus.clone(),
                    nodes: cpus
                        .iter()
                        .map(|c| plan.node_of.get(c).copied().unwrap_or(0))
                        .collect(),
                    memory_node,
                    threads: cpus.len(),
                    ops_per_s: ops,
                    ns_per_op: if ops > 0.0 {
                        cpus.len() as f64 / ops * 1e9
                    } else {
                        f64::NAN
                    },
                    cv: m.summary.cv,
                    samples: m.samples,
                    sketch: None,
                    stop: m.stop.name().into(),
                    set_aside: m.set_aside,
                    flagged: !flags.is_empty(),
                    flags,
                });
                if m.stop == crate::stats::StopReason::Interrupted {
                    result.interrupted = true;
                }
            }
            Err(reason) => result.failed.push(LockFailed {
                op: op.clone(),
                sharing: sharing.clone(),
                placement: placement.clone(),
                cpus: cpus.clone(),
                reason,
            }),
        }
        progress.step_finished(i, total);
        partial(&result);
        if result.interrupted {
            finished = false;
            break;
        }
    }
    result.complete = finished && !result.interrupted;
    Ok(result)
}

#[cfg(test)]
mod held_tests {
    use super::*;

    #[test]
    fn a_slice_counts_only_when_every_thread_held_its_cpu() {
        assert_eq!(slices_taken(5e6, [None, None, None]), Taken::held(5e6));
        assert_eq!(
            slices_taken(5e6, [None, Some(Lost::OffCpu), Some(Lost::Preempted)]).lost,
            Some(Lost::OffCpu)
        );
        assert_eq!(slices_taken(5e6, []).lost, None);
        // Gathered: one thread of four preempted in every other slice.
        let rule = crate::stats::StopRule {
            warmup: 0,
            min_samples: 6,
            max_samples: 6,
            cv_target: 0.0,
            budget: std::time::Duration::from_secs(60),
        };
        let mut i = 0;
        let m = crate::stats::repeat_held_with(
            &rule,
            |_| {
                i += 1;
                let lost = (i % 2 == 0).then_some(Lost::Preempted);
                Ok::<_, ()>(slices_taken(
                    if lost.is_some() { 1e6 } else { 4e6 },
                    [None, None, lost, None],
                ))
            },
            || std::time::Duration::ZERO,
            || false,
        )
        .unwrap();
        assert_eq!(m.samples, vec![4e6; 6]);
        // Slices 2, 4, ..., 10 lost; the sixth kept is the eleventh.
        assert_eq!(m.set_aside.preempted, 5);
        assert!(m.flags("ops/s").is_empty());
    }
}
