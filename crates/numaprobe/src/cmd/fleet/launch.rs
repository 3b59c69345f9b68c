//! Running the fleet's one `srun` and reading its output back into
//! `DIR/nodes/<node>/` folders as it comes: the stream of frames, the
//! [`Watchdog`]'s verdicts acted on (a node lost, timed out or never
//! started; the launcher's own deadline, so the gather ends however srun
//! behaves), and srun with its process group ended and reaped on every way
//! out.

use super::node::STATUS_FILE;
use super::start::{JobState, StartClock};
use super::watchdog::{Gone, Watchdog};
use crate::safe_dir::SafeDir;
use anyhow::Context;
use numaprobe_core::analysis::fleet::stream::{self, Collector, Event, FrameError, Line};
use numaprobe_core::clean;
use numaprobe_core::model::fleet::NodeRunStatus;
use std::collections::BTreeMap;
use std::io::{BufReader, Read as _};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// What came back from srun.
#[derive(Debug, Default)]
pub struct Gathered {
    /// Nodes that said they started.
    pub started: Vec<String>,
    /// Nodes that said how they ended.
    pub ended: BTreeMap<String, NodeRunStatus>,
    /// srun's exit status and the last lines of its stderr.
    pub srun_status: Option<i32>,
    pub srun_stderr: Vec<String>,
    /// Problems with the stream itself (skipped lines, a file never completed).
    pub problems: Vec<String>,
    /// A stop request (Ctrl-C) ended the gather early.
    pub stopped: bool,
    /// Nodes given up on: nothing from them for the grace period.
    pub lost: Vec<String>,
    /// Nodes given up on: still running `--grace` past their
    /// `--node-timeout`, with why.
    pub timed_out: Vec<(String, String)>,
    /// Nodes given up on: their task never sent a line (not started the
    /// grace after the first node did, or by the launcher's deadline), with why.
    pub not_started: Vec<(String, String)>,
    /// Nodes of the job's count that sent nothing and that Slurm did not
    /// name: given up on, counted.
    pub unnamed: usize,
    /// The launcher's deadline passed with srun still running after every
    /// node had ended or been given up on.
    pub overdue: bool,
    /// The job was given up on before it started (`--start-timeout`), with why.
    pub never_started: Option<String>,
    /// Nodes refused because something planted under their folder's or a
    /// file's name took it during the gather, with why: nothing more of
    /// theirs is written, the others go on.
    pub refused: super::folder::Refused,
}

impl Gathered {
    /// The launcher gave up on a node (lost or timed out): srun and the
    /// job are ended rather than waited for.
    pub fn gave_up(&self) -> bool {
        !self.lost.is_empty()
            || !self.timed_out.is_empty()
            || !self.not_started.is_empty()
            || self.unnamed > 0
            || self.overdue
            || self.never_started.is_some()
    }
}

/// When a node counts as lost.
#[derive(Debug, Clone, Copy)]
pub struct Watch {
    /// A started node silent this long (it says it is alive every
    /// `node::ALIVE_EVERY`, and each piece of its report counts as word
    /// from it), or a node of the list not started this long after the
    /// first one did, is lost.
    pub grace: Duration,
    /// A node's own time limit (`--node-timeout`), counted from its first
    /// frame: a node still running `grace` past it is given up on as timed
    /// out, however many alive frames it sends (its own stop did not
    /// happen, or its report is not coming).
    pub timeout: Duration,
    /// The job's node count when it was asked for by count and not by
    /// name: node names beyond the first this many are not taken.
    pub count: Option<usize>,
    /// Whether a stop was asked for (Ctrl-C, SIGTERM):
    /// `numaprobe_core::cancel::requested`, or a test's own.
    pub stop_requested: fn() -> bool,
    /// The job must start within this (`--start-timeout`).
    pub start_timeout: Duration,
    /// What Slurm says of the job when its start is overdue
    /// ([`start::job_state`] of this fleet's job), or a test's own.
    pub job_state: fn() -> JobState,
    /// The job's nodes by name, when Slurm can say (`slurm::job_nodes`),
    /// or a test's own: asked when the nodes were asked for by count and
    /// some never sent a line, so they are named.
    pub job_nodes: fn() -> Option<Vec<String>>,
}

/// After a stop request, how long the launcher keeps reading the nodes'
/// partial reports (srun forwards the SIGTERM to them) before it stops.
const STOP_DRAIN: Duration = Duration::from_secs(20);

/// After SIGTERM, how long srun may take to end its step before SIGKILL.
const SRUN_GRACE: Duration = Duration::from_secs(5);
/// Skipped lines shown per node as they come; the rest are counted.
const SHOWN_SKIPS: usize = 3;
/// Lines the reader may be ahead of the unpacking.
const QUEUE: usize = 256;

/// srun, ended and reaped on every way out of [`launch`] (an error, a
/// panic, a stop request): SIGTERM to its process group first, which srun
/// forwards to the step's tasks, then SIGKILL after [`SRUN_GRACE`]. srun
/// runs in a process group of its own, so that whatever it started (a
/// wrapper's children) goes with it and no straggler keeps its output open;
/// a terminal's Ctrl-C reaches numaprobe alone, which passes it on.
struct SrunGuard(Child);

impl Drop for SrunGuard {
    fn drop(&mut self) {
        self.end();
    }
}

impl SrunGuard {
    /// The process group's id: srun's own pid.
    fn group(&self) -> libc::pid_t {
        self.0.id() as libc::pid_t
    }

    /// Whether srun has exited, without reaping it: while it is a zombie its
    /// pid, and so its group's id, cannot be taken by another process.
    fn exited(&self, block: bool) -> bool {
        // SAFETY: waitid on our own child with WNOWAIT; the siginfo is ours.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let flags = libc::WEXITED | libc::WNOWAIT | if block { 0 } else { libc::WNOHANG };
            libc::waitid(libc::P_PID, self.0.id(), &mut info, flags) == 0 && info.si_pid() != 0
        }
    }

    /// End srun and its group (SIGTERM, then SIGKILL after [`SRUN_GRACE`])
    /// and reap it.
    fn end(&mut self) {
        if matches!(self.0.try_wait(), Ok(Some(_))) {
            return;
        }
        if !self.exited(false) {
            // SAFETY: kill(2) on our own child's group, the child not yet reaped.
            unsafe { libc::kill(-self.group(), libc::SIGTERM) };
            let until = Instant::now() + SRUN_GRACE;
            while Instant::now() < until && !self.exited(false) {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        self.reap();
    }

    /// Kill what is left of srun's group, srun not yet reaped, and reap it.
    fn reap(&mut self) {
        // SAFETY: as in `end`: the group's leader is ours and unreaped.
        unsafe { libc::kill(-self.group(), libc::SIGKILL) };
        let _ = self.0.wait();
    }

    /// srun ended by itself: wait for it, end what it left in its group.
    fn wait(&mut self) -> std::io::Result<std::process::ExitStatus> {
        if let Ok(Some(st)) = self.0.try_wait() {
            return Ok(st);
        }
        self.exited(true);
        // SAFETY: as in `end`.
        unsafe { libc::kill(-self.group(), libc::SIGKILL) };
        self.0.wait()
    }
}

/// What the reading thread hands over.
enum Read {
    Event(Event),
    TooLong(usize),
    Failed(std::io::Error),
}

/// Run srun, unpack streamed files into `dir/<node>/` (`dir`: the fleet
/// folder's `nodes/`, held open) as they come, and
/// tell `progress` each time a node is done. A bad line, or a line of a
/// node not in `asked` (the job's nodes; empty when unknown), is skipped
/// and counted against the node it names; srun is ended and reaped however
/// this returns.
pub fn launch(
    srun: &Path,
    args: &[String],
    dir: &SafeDir,
    asked: &[String],
    watch: Watch,
    progress: impl FnMut(&str, &NodeRunStatus),
) -> anyhow::Result<Gathered> {
    use std::os::unix::process::CommandExt as _;
    let child = Command::new(srun)
        .args(args)
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {}", srun.display()))?;
    let mut guard = SrunGuard(child);
    let clock = StartClock {
        since: Instant::now(),
        timeout: watch.start_timeout,
    };
    let allocated = Arc::new(AtomicBool::new(false));
    let seen_allocation = Arc::clone(&allocated);
    let mut err = guard.0.stderr.take();
    let (err_tx, err_rx) = mpsc::channel();
    std::thread::spawn(move || {
        // Only the tail is kept, whatever srun says and however long; what
        // it says about waiting for the allocation is shown as it comes, so
        // a pending job is never silent.
        let mut tail: Vec<u8> = Vec::new();
        let mut shown = 0;
        let mut buf = [0u8; 4096];
        while let Some(Ok(n @ 1..)) = err.as_mut().map(|e| e.read(&mut buf)) {
            tail.extend_from_slice(&buf[..n]);
            each_new_line(&tail, &mut shown, |line| {
                if line.contains("has been allocated resources") {
                    seen_allocation.store(true, Ordering::SeqCst);
                }
                if is_queue_news(&line) {
                    // srun's words, and whatever a task wrote to its stderr.
                    eprintln!("numaprobe: {}", clean::line(line.trim(), clean::SHOWN_MAX));
                }
            });
            keep_tail(&mut tail, &mut shown);
        }
        let _ = err_tx.send(String::from_utf8_lossy(&tail).into_owned());
    });
    let stdout = guard.0.stdout.take().context("srun's output")?;
    let mut g = gather(
        stdout,
        dir,
        asked,
        watch,
        (clock, &allocated),
        guard.group(),
        progress,
    )?;
    if g.stopped || g.gave_up() {
        // srun may wait on a dead node for SlurmdTimeout, or on a node that
        // does not stop: end it now, and the allocation with it.
        guard.end();
    }
    let st = guard.wait().context("cannot wait for srun")?;
    g.srun_status = st.code();
    // Its group is gone, so its stderr has ended; bounded all the same.
    let text = err_rx.recv_timeout(SRUN_GRACE).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    g.srun_stderr = lines[lines.len().saturating_sub(8)..]
        .iter()
        .map(|l| l.to_string())
        .collect();
    Ok(g)
}

/// Hand each whole line of `tail` past `shown` (how far its lines were
/// read) to `line`, without its newline, `shown` moved past it; a line
/// still coming waits for its newline.
fn each_new_line(tail: &[u8], shown: &mut usize, mut line: impl FnMut(String)) {
    while let Some(end) = tail[*shown..].iter().position(|&b| b == b'\n') {
        line(String::from_utf8_lossy(&tail[*shown..*shown + end]).into_owned());
        *shown += end + 1;
    }
}

/// Bytes of srun's stderr kept.
const STDERR_KEEP: usize = 8192;

/// Past twice [`STDERR_KEEP`], drop the oldest bytes of `tail` down to
/// [`STDERR_KEEP`], `shown` (how far its lines were shown) moved along:
/// whatever srun writes costs a bounded amount of memory.
fn keep_tail(tail: &mut Vec<u8>, shown: &mut usize) {
    if tail.len() > 2 * STDERR_KEEP {
        let cut = tail.len() - STDERR_KEEP;
        tail.drain(..cut);
        *shown = shown.saturating_sub(cut);
    }
}

/// srun's lines about the allocation (queued, waiting for nodes, granted).
fn is_queue_news(line: &str) -> bool {
    [
        "queued and waiting",
        "has been allocated resources",
        "Required node not available",
        "revoked",
    ]
    .iter()
    .any(|k| line.contains(k))
}

/// Read the job's output to its end (or a stop request) on a thread of its
/// own, so that Ctrl-C is seen while srun is quiet, and unpack it.
fn gather(
    out: impl std::io::Read + Send + 'static,
    dir: &SafeDir,
    asked: &[String],
    watch: Watch,
    (clock, allocated): (StartClock, &AtomicBool),
    srun_group: libc::pid_t,
    mut progress: impl FnMut(&str, &NodeRunStatus),
) -> anyhow::Result<Gathered> {
    let mut watchdog = Watchdog::new(asked, watch.grace)
        .with_timeout(watch.timeout)
        .with_count(watch.count)
        .with_latest_start(clock.since + clock.timeout);
    let (tx, rx) = mpsc::sync_channel::<Read>(QUEUE);
    let asked = asked.to_vec();
    std::thread::spawn(move || {
        let mut r = BufReader::new(out);
        let mut c = Collector::default().only_from(&asked);
        if let Some(n) = watch.count {
            c = c.at_most(n);
        }
        let mut buf = Vec::new();
        loop {
            let item = match stream::read_line(&mut r, &mut buf, stream::MAX_LINE) {
                Ok(Line::Eof) => break,
                Ok(Line::TooLong(n)) => Read::TooLong(n),
                Ok(Line::Read) => match c.line(&buf) {
                    None => continue,
                    Some(e) => Read::Event(e),
                },
                Err(e) => Read::Failed(e),
            };
            let last = matches!(item, Read::Failed(_));
            if tx.send(item).is_err() || last {
                return;
            }
        }
        let unfinished = c
            .unfinished()
            .into_iter()
            .map(|(node, name)| (node, FrameError::Incomplete(name)));
        for (node, why) in c.dropped().into_iter().chain(unfinished) {
            let e = Event::Skipped {
                node: Some(node),
                why,
            };
            if tx.send(Read::Event(e)).is_err() {
                return;
            }
        }
    });
    let mut g = Gathered::default();
    let mut skips: BTreeMap<String, (usize, String)> = BTreeMap::new();
    let mut drain_until: Option<Instant> = None;
    loop {
        if drain_until.is_none() && (watch.stop_requested)() {
            // srun forwards SIGTERM to the nodes' runs, which write what
            // they measured and send it: read it for a while, then stop.
            g.stopped = true;
            // SAFETY: kill(2) on our own child's group, reaped only after this returns.
            unsafe { libc::kill(-srun_group, libc::SIGTERM) };
            drain_until = Some(Instant::now() + STOP_DRAIN);
        }
        if drain_until.is_some_and(|t| Instant::now() >= t) {
            break;
        }
        let started = !g.started.is_empty() || allocated.load(Ordering::SeqCst);
        if drain_until.is_none()
            && g.never_started.is_none()
            && clock.overdue(Instant::now(), started)
        {
            match clock.give_up(&(watch.job_state)()) {
                Some(why) => {
                    eprintln!("numaprobe: {why}: giving up on it");
                    g.never_started = Some(why);
                    break;
                }
                // Allocated without a word from srun: its tasks are starting.
                None => allocated.store(true, Ordering::SeqCst),
            }
        }
        if drain_until.is_none() && watch_over(&mut watchdog, &watch, &mut g, Instant::now()) {
            break;
        }
        let item = match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(item) => item,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
        };
        let (node, why) = match item {
            Read::Event(Event::Started(node)) => {
                watchdog.heard(&node, Instant::now());
                if !g.started.contains(&node) {
                    g.started.push(node);
                }
                continue;
            }
            // The status came before it; a node whose status was torn is
            // read from its folder like any other.
            Read::Event(Event::Ended(node)) => {
                watchdog.done(&node);
                continue;
            }
            // A piece of a file still coming is as good as an alive line:
            // a node busy sending its report is not silent, however long
            // the upload takes; its own limit and the deadline still hold.
            Read::Event(Event::Alive(node) | Event::Piece(node)) => {
                watchdog.heard(&node, Instant::now());
                continue;
            }
            Read::Event(Event::File { node, name, bytes }) => {
                watchdog.heard(&node, Instant::now());
                if g.refused.contains_key(&node) {
                    continue;
                }
                if let Err(why) = save(dir, &node, &name, &bytes)? {
                    eprintln!("numaprobe: {node}: {why}; the others go on");
                    g.refused.insert(node, why);
                    continue;
                }
                if name == STATUS_FILE {
                    match numaprobe_core::model::bounded::from_slice::<NodeRunStatus>(&bytes) {
                        Ok(st) => {
                            progress(&node, &st);
                            g.ended.insert(node, st);
                        }
                        Err(e) => g.problems.push(format!("{node}: {STATUS_FILE}: {e}")),
                    }
                }
                continue;
            }
            Read::Event(Event::Skipped { node, why }) => (node, why.to_string()),
            Read::TooLong(n) => (
                None,
                format!("longer than {} bytes ({n} bytes)", stream::MAX_LINE),
            ),
            Read::Failed(e) => {
                g.problems
                    .push(format!("cannot read the job's output any further: {e}"));
                break;
            }
        };
        let who = node.unwrap_or_else(|| "an unnamed node".into());
        let seen = skips.entry(who.clone()).or_insert((0, why.clone()));
        seen.0 += 1;
        if let Some(line) = skip_warning(&who, &why, seen.0) {
            eprintln!("numaprobe: {line}");
        }
    }
    for (who, (n, first)) in skips {
        g.problems.push(if n == 1 {
            format!("{who}: a line of the job's output skipped: {first}")
        } else {
            format!("{who}: {n} lines of the job's output skipped (the first: {first})")
        });
    }
    Ok(g)
}

/// The warning for the `n`th line of `who`'s skipped (counted from 1):
/// the first [`SHOWN_SKIPS`] are shown as they come, the rest only
/// counted for the end.
fn skip_warning(who: &str, why: &str, n: usize) -> Option<String> {
    (n <= SHOWN_SKIPS).then(|| {
        format!(
            "warning: {}: a line of the job's output skipped: {}",
            clean::line(who, clean::SHOWN_MAX),
            clean::line(why, clean::SHOWN_MAX)
        )
    })
}

/// The line for `unnamed` nodes of the job's `count` that sent nothing and
/// that Slurm did not name; none when every missing node was named.
fn unnamed_line(unnamed: usize, count: Option<usize>) -> Option<String> {
    (unnamed > 0).then(|| {
        format!(
            "{unnamed} of the job's {} nodes sent nothing and Slurm did not name them: given up on; the others go on",
            count.unwrap_or(unnamed)
        )
    })
}

/// Act on the watchdog at `now`: the count's missing nodes named (Slurm's
/// list of the job's nodes) or else counted, the nodes given up on said
/// and recorded; true when the gather is over: every node accounted for
/// and one given up on (srun would wait for it), or the launcher's
/// deadline come (srun has not ended by itself).
fn watch_over(w: &mut Watchdog, watch: &Watch, g: &mut Gathered, now: Instant) -> bool {
    if let Some(missing) = w.short(now) {
        let names: Vec<String> = (watch.job_nodes)()
            .unwrap_or_default()
            .into_iter()
            .filter(|n| stream::valid_node_name(n) && !w.was_heard(n))
            .take(missing)
            .collect();
        w.expect(&names);
        let unnamed = missing - names.len();
        if let Some(line) = unnamed_line(unnamed, watch.count) {
            eprintln!("numaprobe: {line}");
            w.unnamed(unnamed);
            g.unnamed += unnamed;
        }
    }
    for gone in w.check(now) {
        let what = match gone.gone {
            Gone::Lost => "lost",
            Gone::TimedOut => "timed out",
            Gone::NeverStarted => "never started",
        };
        eprintln!(
            "numaprobe: {}: {what}: {}; the others go on",
            gone.node, gone.why
        );
        match gone.gone {
            Gone::Lost => g.lost.push(gone.node),
            Gone::TimedOut => g.timed_out.push((gone.node, gone.why)),
            Gone::NeverStarted => g.not_started.push((gone.node, gone.why)),
        }
    }
    if w.overdue(now) {
        if !g.gave_up() {
            eprintln!(
                "numaprobe: srun still running at the launcher's deadline, every node ended: srun is ended"
            );
            g.overdue = true;
        }
        return true;
    }
    w.all_accounted() && g.gave_up()
}

/// Write a node's file; the names were checked by the stream's reader, and
/// are checked again here so no caller can write outside the folder.
/// `Ok(Err(why))`: something planted under the node's folder or file name
/// refuses this node alone.
fn save(dir: &SafeDir, node: &str, name: &str, bytes: &[u8]) -> anyhow::Result<Result<(), String>> {
    if !stream::valid_node_name(node) || !stream::valid_file_name(name) {
        anyhow::bail!("the job's output names a file outside the fleet folder: {node}/{name}");
    }
    super::folder::write_node_file(dir, node, name, bytes)
}

/// srun's own failure in one line: an allocation it could not get.
pub fn srun_failure(g: &Gathered) -> String {
    if g.srun_status == Some(0) {
        // srun did its part: what went wrong is in what came back.
        let why = g
            .problems
            .first()
            .map(|p| format!("; {p}"))
            .unwrap_or_default();
        return format!("srun ended (exit status 0) but no node's report came back{why}");
    }
    let last = g
        .srun_stderr
        .iter()
        .rev()
        .find(|l| l.contains("error"))
        .or(g.srun_stderr.last())
        .cloned()
        .unwrap_or_else(|| "no message".into());
    format!(
        "srun failed (exit status {}): {last}",
        g.srun_status
            .map(|c| c.to_string())
            .unwrap_or_else(|| "none: killed by a signal".into())
    )
}

#[cfg(test)]
#[path = "launch_tests.rs"]
mod tests;
