//! Running the user's program once under one `tune` candidate: the child
//! gets its CPU set (`sched_setaffinity`) and task memory policy
//! (`set_mempolicy`) between `fork` and `exec`, both prepared in the parent
//! so the child only makes two syscalls; OpenMP variables go into its
//! environment. While it runs, `/proc/PID/numa_maps` is sampled at growing
//! intervals (10 ms, 20 ms, 40 ms, ... up to 1 s), so a short program gets a
//! few samples and a long one is not disturbed often. The child leads a
//! process group of its own (`group.rs`): a stop request (Ctrl-C) or the
//! run's time limit ends the whole group, and whatever the program left
//! behind in it when it ended is ended too, so no run disturbs the next.

use super::group::{Group, GRACE};
use numaprobe_core::experiments::tune::Planned;
use numaprobe_core::model::tune::Run;
use numaprobe_core::placement::numa_maps::{self, NumaMaps};
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Bytes of the child's stderr kept for a failure report.
const STDERR_KEEP: usize = 2048;
/// Lines of it shown.
const STDERR_LINES: usize = 12;
/// How long to wait for the end of stderr after the program ended.
const STDERR_GRACE: Duration = Duration::from_secs(2);
const FIRST_SAMPLE: Duration = Duration::from_millis(10);
const MAX_SAMPLE_GAP: Duration = Duration::from_secs(1);

/// How one run ended.
pub enum Ended {
    /// It ran to its end (successfully or not).
    Ran { run: Run, stderr_tail: String },
    /// It outlived its time limit and its group was ended.
    TimedOut { stderr_tail: String },
    /// It could not be started (the pre-exec placement or exec failed).
    NotStarted(String),
    /// A stop request ended it: the run is not counted.
    Stopped,
}

/// Processes a run left behind, named `pid (command)`.
#[derive(Debug, Default)]
pub struct Strays {
    /// Still in the run's group when its program ended: ended by numaprobe.
    pub ended: Vec<String>,
    /// Descendants alive outside the group (daemons), or not ended even by
    /// SIGKILL: left running.
    pub running: Vec<String>,
}

/// The kernel's CPU set for `cpus`; None when a CPU is beyond `cpu_set_t`.
pub fn cpu_set(cpus: &[u32]) -> Option<libc::cpu_set_t> {
    // SAFETY: cpu_set_t is plain bits; CPU_SET is bounds-checked below.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let limit = 8 * std::mem::size_of::<libc::cpu_set_t>();
    for &c in cpus {
        if c as usize >= limit {
            return None;
        }
        // SAFETY: `c` is below the set's size (checked above).
        unsafe { libc::CPU_SET(c as usize, &mut set) };
    }
    Some(set)
}

/// Run the program once under `cand`, ended with its group after
/// `timeout` (when given) or on a stop request.
pub fn run_once(
    program: &Path,
    args: &[String],
    cand: &Planned,
    round: usize,
    timeout: Option<Duration>,
) -> (Ended, Strays) {
    let none = Strays::default();
    let Some(set) = cpu_set(&cand.cpus) else {
        return (
            Ended::NotStarted("a CPU number is beyond what sched_setaffinity takes".into()),
            none,
        );
    };
    let policy = match cand.task_policy() {
        Ok(p) => p,
        Err(e) => return (Ended::NotStarted(format!("memory policy: {e}")), none),
    };
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in &cand.env {
        cmd.env(k, v);
    }
    for k in &cand.env_remove {
        cmd.env_remove(k);
    }
    // A group of its own: what it forks can be ended together.
    cmd.process_group(0);
    // SAFETY: the hook runs in the forked child before exec; it only makes
    // two syscalls on data prepared above (no allocation, no locks).
    unsafe {
        cmd.pre_exec(move || {
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            policy.apply()
        });
    }
    let beside = numaprobe_core::beside::Watch::start();
    let cpu_before = children_cpu_s();
    let start = Instant::now();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return (Ended::NotStarted(format!("could not start: {e}")), none),
    };
    let pid = child.id();
    let mut group = Group::new(pid);
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let (err_tx, err_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut kept: Vec<u8> = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                break;
            }
            kept.extend_from_slice(&buf[..n]);
            if kept.len() > 2 * STDERR_KEEP {
                kept.drain(..kept.len() - STDERR_KEEP);
            }
        }
        let _ = err_tx.send(kept);
    });
    // The waiter blocks in wait() so the end time is exact, not a poll's.
    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let status = child.wait();
        let _ = tx.send((status, Instant::now()));
    });
    let mut gap = FIRST_SAMPLE;
    let mut next_sample = start + gap;
    let mut last: Option<NumaMaps> = None;
    let mut peak: Option<NumaMaps> = None;
    let mut samples = 0;
    // When the group was sent SIGTERM, and whether SIGKILL followed.
    let mut ending: Option<(Instant, bool)> = None;
    let mut timed_out = false;
    let (status, end) = loop {
        let now = Instant::now();
        let wait = next_sample
            .saturating_duration_since(now)
            .min(Duration::from_millis(20));
        match rx.recv_timeout(wait) {
            Ok(done) => break done,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                group.signal(libc::SIGKILL);
                return (Ended::NotStarted("lost track of the child".into()), none);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        let stop = numaprobe_core::cancel::requested();
        let over = timeout.is_some_and(|t| start.elapsed() >= t);
        match ending {
            None if stop || over => {
                timed_out = !stop;
                // Note who is there before they scatter.
                group.observe();
                group.signal(libc::SIGTERM);
                ending = Some((Instant::now(), false));
            }
            Some((at, false)) if at.elapsed() >= GRACE => {
                group.signal(libc::SIGKILL);
                ending = Some((at, true));
            }
            _ => {}
        }
        if Instant::now() >= next_sample {
            if let Some(m) = numa_maps::read(pid) {
                samples += 1;
                if peak
                    .as_ref()
                    .is_none_or(|p| m.anon_total() >= p.anon_total())
                {
                    peak = Some(m.clone());
                }
                last = Some(m);
            }
            group.observe();
            gap = (gap * 2).min(MAX_SAMPLE_GAP);
            next_sample = Instant::now() + gap;
        }
    };
    let _ = waiter.join();
    let others_busy_cpus = beside.and_then(|w| w.others_busy_cpus());
    // Runs are one at a time, so what the reaped children used grew by
    // this program (and what it reaped) alone.
    let cpu_s = cpu_before
        .zip(children_cpu_s())
        .map(|(a, b)| (b - a).max(0.0));
    let strays = Strays {
        ended: group.end_leftovers(),
        running: group.survivors(),
    };
    // A grandchild that outlives the program may hold the pipe open: give
    // the reader a moment, then go on without it (it ends with the pipe).
    let kept = err_rx.recv_timeout(STDERR_GRACE).unwrap_or_default();
    let text = String::from_utf8_lossy(&kept);
    let lines: Vec<&str> = text.lines().collect();
    let stderr_tail = lines[lines.len().saturating_sub(STDERR_LINES)..].join("\n");
    if timed_out {
        return (Ended::TimedOut { stderr_tail }, strays);
    }
    if ending.is_some() || numaprobe_core::cancel::requested() {
        return (Ended::Stopped, strays);
    }
    let status = match status {
        Ok(s) => s,
        Err(e) => return (Ended::NotStarted(format!("wait failed: {e}")), strays),
    };
    let ended = Ended::Ran {
        run: Run {
            round,
            wall_s: end.duration_since(start).as_secs_f64(),
            exit_status: status.code(),
            signal: status.signal(),
            ok: status.success(),
            memory_last: last,
            memory_peak: peak,
            memory_samples: samples,
            others_busy_cpus,
            cpu_s,
        },
        stderr_tail,
    };
    (ended, strays)
}

/// User + system CPU seconds of every child this process has reaped, with
/// what they reaped in turn; None when the kernel does not say.
fn children_cpu_s() -> Option<f64> {
    // SAFETY: getrusage writes one rusage into the zeroed struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) } != 0 {
        return None;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Some(secs(u.ru_utime) + secs(u.ru_stime))
}

/// `exit status 3` or `killed by signal 11 (SIGSEGV)`.
pub fn describe(run: &Run) -> String {
    match (run.exit_status, run.signal) {
        (Some(c), _) => format!("exit status {c}"),
        (None, Some(s)) => format!("killed by signal {s}"),
        (None, None) => "ended without a status".into(),
    }
}
