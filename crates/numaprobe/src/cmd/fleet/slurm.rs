//! The Slurm side of `numaprobe fleet`: finding Slurm, checking the
//! partition before anything is allocated, building the one `srun` that
//! runs `numaprobe fleet-node` as one exclusive task on every selected node,
//! and reading its output back into `DIR/<node>/` folders. Slurm does the
//! launching, the exclusivity and the time limit; nothing here starts
//! processes on other machines itself.

use super::node::{Gather, STATUS_FILE};
use crate::output::{usage, write_atomic};
use anyhow::Context;
use numaprobe_core::analysis::fleet::stream::{self, Collector, Event, FrameError, Line};
use numaprobe_core::model::fleet::NodeRunStatus;
use std::collections::BTreeMap;
use std::io::{BufReader, Read as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What to ask Slurm for: passed through as srun's own options.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub partition: Option<String>,
    pub nodelist: Option<String>,
    pub nodes: Option<u32>,
    pub account: Option<String>,
    pub time: Option<String>,
    pub reservation: Option<String>,
    pub qos: Option<String>,
    pub exclude: Option<String>,
    /// More srun options, as the user gave them (`--srun-arg`).
    pub extra: Vec<String>,
}

/// The job's name: `numaprobe-fleet-` and this process's id, so that
/// `scancel --me --name` ends this fleet's job and no other.
pub fn job_name() -> String {
    format!("numaprobe-fleet-{}", std::process::id())
}

/// Cancel this fleet's job (`scancel --me --name`), for when srun had to be
/// killed and the allocation would outlive it. Best effort: a job already
/// gone is what was wanted.
pub fn scancel() -> bool {
    Command::new("scancel")
        .arg("--me")
        .arg(format!("--name={}", job_name()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// What Slurm says of a node before launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    /// Idle: the job can have it now.
    Free,
    /// Allocated to other jobs: the exclusive job waits until it is free.
    Busy(String),
    /// Drained, down, reserved, not responding...: the job would sit
    /// pending for it, perhaps for ever.
    Unavailable(String),
}

/// Judge one node from sinfo's long state (`%T`, e.g. `drained`,
/// `idle*`, `reserved`) and reason (`%E`). A reserved node is available
/// when the fleet runs in a reservation (`in_reservation`).
pub fn availability(state: &str, reason: &str, in_reservation: bool) -> Availability {
    let state = state.trim().to_ascii_lowercase();
    let reason = reason.trim();
    let reason = if reason.is_empty() || reason.eq_ignore_ascii_case("none") {
        String::new()
    } else {
        format!(": {}", reason.chars().take(120).collect::<String>())
    };
    // sinfo's flags after the state: * not responding, ~ powered off,
    // # powering up, % powering down, $ in a maintenance reservation,
    // @ reboot pending, ! power down pending, ^ rebooting, - planned.
    let base = state.trim_end_matches(['*', '~', '#', '%', '$', '@', '!', '^', '-', '+']);
    let flags = &state[base.len()..];
    let words = |what: &str| format!("{state} ({what}){reason}");
    if flags.contains('*') {
        return Availability::Unavailable(words("not responding"));
    }
    if flags.contains('~') || flags.contains('%') || flags.contains('!') {
        return Availability::Unavailable(words("powered down"));
    }
    if flags.contains('$') && !in_reservation {
        return Availability::Unavailable(words("in a maintenance reservation"));
    }
    match base {
        "idle" | "planned" => Availability::Free,
        "allocated" | "mixed" | "completing" => Availability::Busy(format!("{state}{reason}")),
        "reserved" if in_reservation => Availability::Free,
        "reserved" => Availability::Unavailable(words("reserved; give --reservation")),
        b if b.starts_with("drain") => {
            Availability::Unavailable(words("drained by an administrator"))
        }
        "down" | "fail" | "failing" => Availability::Unavailable(words("down")),
        _ => Availability::Unavailable(words("not schedulable")),
    }
}

/// Each listed node's availability, through one `sinfo` (None when sinfo
/// cannot say: srun will). A node in several partitions is judged once.
pub fn node_states(nodes: &[String], in_reservation: bool) -> Option<Vec<(String, Availability)>> {
    let out = Command::new("sinfo")
        .args(["-h", "-N", "-o", "%N|%T|%E", "-n"])
        .arg(nodes.join(","))
        .stdin(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let mut seen: BTreeMap<String, Availability> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let mut f = line.splitn(3, '|');
        let (Some(n), Some(st), r) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        seen.entry(n.trim().to_string())
            .or_insert_with(|| availability(st, r.unwrap_or(""), in_reservation));
    }
    Some(
        nodes
            .iter()
            .filter_map(|n| seen.get(n).map(|a| (n.clone(), a.clone())))
            .collect(),
    )
}

/// A program on PATH, or None.
pub fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Fail with one line when Slurm's client is not there.
pub fn find_srun() -> anyhow::Result<PathBuf> {
    on_path("srun").ok_or_else(|| {
        usage(
            "no Slurm found: srun is not on PATH; run numaprobe fleet where Slurm's client tools are (a login node), or analyse gathered reports with --from DIR",
        )
    })
}

/// Check `--partition` against `sinfo`'s list, so a typo is one line before
/// anything is allocated rather than srun's message after a wait.
pub fn check_partition(partition: &str) -> anyhow::Result<()> {
    let out = Command::new("sinfo")
        .args(["-h", "-o", "%P"])
        .stdin(Stdio::null())
        .output();
    let out = match out {
        Ok(o) if o.status.success() => o,
        // sinfo missing or failing (controller down): let srun say it.
        _ => return Ok(()),
    };
    let names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim().trim_end_matches('*').to_string())
        .filter(|l| !l.is_empty())
        .collect();
    if names.iter().any(|n| n == partition) {
        return Ok(());
    }
    Err(usage(format!(
        "--partition {partition}: no such partition; this cluster has {}",
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    )))
}

/// Node names of a Slurm host list (`np[1-3]`), through scontrol; None
/// when scontrol cannot say.
pub fn expand_nodelist(list: &str) -> Option<Vec<String>> {
    let out = Command::new("scontrol")
        .args(["show", "hostnames", list])
        .stdin(Stdio::null())
        .output()
        .ok()?;
    out.status.success().then(|| {
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    })
}

/// The srun command line (without the program): one exclusive task per
/// node, the selection passed through, a failing task ending neither the
/// step (--kill-on-bad-exit=0) nor the job (--no-kill).
pub fn srun_args(
    sel: &Selection,
    exe: &Path,
    gather: Gather,
    node_dir: &Path,
    timeout_s: f64,
    run_args: &[String],
) -> Vec<String> {
    let mut a: Vec<String> = vec![
        format!("--job-name={}", job_name()),
        "--ntasks-per-node=1".into(),
        "--exclusive".into(),
        "--kill-on-bad-exit=0".into(),
        "--no-kill".into(),
    ];
    if let Some(n) = sel.nodes {
        a.push(format!("--nodes={n}"));
        a.push(format!("--ntasks={n}"));
    }
    for (opt, v) in [
        ("--partition", &sel.partition),
        ("--nodelist", &sel.nodelist),
        ("--account", &sel.account),
        ("--time", &sel.time),
        ("--reservation", &sel.reservation),
        ("--qos", &sel.qos),
        ("--exclude", &sel.exclude),
    ] {
        if let Some(v) = v {
            a.push(format!("{opt}={v}"));
        }
    }
    // Last before the program, so an option given twice is the user's.
    a.extend(sel.extra.iter().cloned());
    a.push("--".into());
    a.push(exe.display().to_string());
    a.push("fleet-node".into());
    a.push(format!(
        "--gather={}",
        match gather {
            Gather::Shared => "shared",
            Gather::Stream => "stream",
        }
    ));
    a.push(format!("--dir={}", node_dir.display()));
    a.push(format!("--timeout-s={timeout_s}"));
    a.push("--".into());
    a.extend(run_args.iter().cloned());
    a
}

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
}

/// When a node counts as lost.
#[derive(Debug, Clone, Copy)]
pub struct Watch {
    /// A started node silent this long (it says it is alive every
    /// `node::ALIVE_EVERY`), or a node of the list not started this long
    /// after the first one did, is lost.
    pub grace: Duration,
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
/// panic, a stop request): SIGTERM first, which srun forwards to the
/// step's tasks, then SIGKILL after [`SRUN_GRACE`].
struct SrunGuard(Child);

impl Drop for SrunGuard {
    fn drop(&mut self) {
        self.end();
    }
}

impl SrunGuard {
    fn end(&mut self) {
        if matches!(self.0.try_wait(), Ok(Some(_))) {
            return;
        }
        // SAFETY: kill(2) on our own child, not yet reaped (try_wait above).
        unsafe { libc::kill(self.0.id() as libc::pid_t, libc::SIGTERM) };
        let until = Instant::now() + SRUN_GRACE;
        while Instant::now() < until {
            if matches!(self.0.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// What the reading thread hands over.
enum Read {
    Event(Event),
    TooLong(usize),
    Failed(std::io::Error),
}

/// Run srun, unpack streamed files into `dir/<node>/` as they come, and
/// tell `progress` each time a node is done. A bad line, or a line of a
/// node not in `asked` (the job's nodes; empty when unknown), is skipped
/// and counted against the node it names; srun is ended and reaped however
/// this returns.
pub fn launch(
    srun: &Path,
    args: &[String],
    dir: &Path,
    asked: &[String],
    watch: Watch,
    progress: impl FnMut(&str, &NodeRunStatus),
) -> anyhow::Result<Gathered> {
    let child = Command::new(srun)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {}", srun.display()))?;
    let mut guard = SrunGuard(child);
    let mut err = guard.0.stderr.take();
    let err_reader = std::thread::spawn(move || {
        // Only the tail is kept, whatever srun says and however long; what
        // it says about waiting for the allocation is shown as it comes, so
        // a pending job is never silent.
        let mut tail: Vec<u8> = Vec::new();
        let mut shown = 0;
        let mut buf = [0u8; 4096];
        while let Some(Ok(n @ 1..)) = err.as_mut().map(|e| e.read(&mut buf)) {
            tail.extend_from_slice(&buf[..n]);
            while let Some(end) = tail[shown..].iter().position(|&b| b == b'\n') {
                let line = String::from_utf8_lossy(&tail[shown..shown + end]).into_owned();
                if is_queue_news(&line) {
                    eprintln!("numaprobe: {}", crate::output::clip_line(line.trim()));
                }
                shown += end + 1;
            }
            if tail.len() > 2 * STDERR_KEEP {
                let cut = tail.len() - STDERR_KEEP;
                tail.drain(..cut);
                shown = shown.saturating_sub(cut);
            }
        }
        String::from_utf8_lossy(&tail).into_owned()
    });
    let stdout = guard.0.stdout.take().context("srun's output")?;
    let pid = guard.0.id() as libc::pid_t;
    let mut g = gather(stdout, dir, asked, watch, pid, progress)?;
    if g.stopped || !g.lost.is_empty() {
        // srun may wait on a dead node for SlurmdTimeout: end it now, and
        // the allocation with it.
        guard.end();
    }
    let st = guard.0.wait().context("cannot wait for srun")?;
    g.srun_status = st.code();
    let text = err_reader.join().unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    g.srun_stderr = lines[lines.len().saturating_sub(8)..]
        .iter()
        .map(|l| l.to_string())
        .collect();
    Ok(g)
}

/// Bytes of srun's stderr kept.
const STDERR_KEEP: usize = 8192;

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
    dir: &Path,
    asked: &[String],
    watch: Watch,
    srun_pid: libc::pid_t,
    mut progress: impl FnMut(&str, &NodeRunStatus),
) -> anyhow::Result<Gathered> {
    let mut watchdog = Watchdog::new(asked, watch.grace);
    let (tx, rx) = mpsc::sync_channel::<Read>(QUEUE);
    let asked = asked.to_vec();
    std::thread::spawn(move || {
        let mut r = BufReader::new(out);
        let mut c = Collector::default().only_from(&asked);
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
        for (node, name) in c.unfinished() {
            let e = Event::Skipped {
                node: Some(node),
                why: FrameError::Incomplete(name),
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
        if drain_until.is_none() && numaprobe_core::cancel::requested() {
            // srun forwards SIGTERM to the nodes' runs, which write what
            // they measured and send it: read it for a while, then stop.
            g.stopped = true;
            // SAFETY: kill(2) on our own child, reaped only after this returns.
            unsafe { libc::kill(srun_pid, libc::SIGTERM) };
            drain_until = Some(Instant::now() + STOP_DRAIN);
        }
        if drain_until.is_some_and(|t| Instant::now() >= t) {
            break;
        }
        if drain_until.is_none() {
            for (node, why) in watchdog.check(Instant::now()) {
                eprintln!("numaprobe: {node}: lost: {why}; the others go on");
                g.lost.push(node);
            }
            if watchdog.all_accounted() && !g.lost.is_empty() {
                break;
            }
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
            Read::Event(Event::Alive(node)) => {
                watchdog.heard(&node, Instant::now());
                continue;
            }
            Read::Event(Event::File { node, name, bytes }) => {
                watchdog.heard(&node, Instant::now());
                save(dir, &node, &name, &bytes)?;
                if name == STATUS_FILE {
                    match serde_json::from_slice::<NodeRunStatus>(&bytes) {
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
        if seen.0 <= SHOWN_SKIPS {
            eprintln!("numaprobe: warning: {who}: a line of the job's output skipped: {why}");
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

/// Which nodes are still heard from. A node is lost when it started and
/// then said nothing for `grace`, or when it is one of the list and had not
/// started `grace` after the first one did.
#[derive(Debug)]
pub struct Watchdog {
    grace: Duration,
    asked: Vec<String>,
    first_start: Option<Instant>,
    last: BTreeMap<String, Instant>,
    done: std::collections::BTreeSet<String>,
    lost: std::collections::BTreeSet<String>,
}

impl Watchdog {
    pub fn new(asked: &[String], grace: Duration) -> Self {
        Watchdog {
            grace,
            asked: asked.to_vec(),
            first_start: None,
            last: BTreeMap::new(),
            done: Default::default(),
            lost: Default::default(),
        }
    }

    /// A frame came from `node` at `now`.
    pub fn heard(&mut self, node: &str, now: Instant) {
        self.first_start.get_or_insert(now);
        self.last.insert(node.to_string(), now);
    }

    /// `node` said it is done.
    pub fn done(&mut self, node: &str) {
        self.done.insert(node.to_string());
    }

    /// The nodes lost by `now` (each once), with why.
    pub fn check(&mut self, now: Instant) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let g = self.grace.as_secs_f64();
        for (node, at) in &self.last {
            if !self.done.contains(node)
                && !self.lost.contains(node)
                && now.saturating_duration_since(*at) >= self.grace
            {
                out.push((
                    node.clone(),
                    format!("nothing from it for {g:.0} s (--grace) after it started; its slurmd, slurmstepd or the machine died"),
                ));
            }
        }
        if let Some(first) = self.first_start {
            if now.saturating_duration_since(first) >= self.grace {
                for node in &self.asked {
                    if !self.last.contains_key(node) && !self.lost.contains(node) {
                        out.push((
                            node.clone(),
                            format!(
                                "its task had not started {g:.0} s (--grace) after the others' did"
                            ),
                        ));
                    }
                }
            }
        }
        for (n, _) in &out {
            self.lost.insert(n.clone());
        }
        out
    }

    /// Every node of the list (or every node heard from, without a list)
    /// is done or lost.
    pub fn all_accounted(&self) -> bool {
        let known: Vec<&String> = if self.asked.is_empty() {
            self.last.keys().collect()
        } else {
            self.asked.iter().collect()
        };
        !known.is_empty()
            && known
                .iter()
                .all(|n| self.done.contains(*n) || self.lost.contains(*n))
    }
}

/// Write a node's file; the names were checked by the stream's reader, and
/// are checked again here so no caller can write outside the folder.
fn save(dir: &Path, node: &str, name: &str, bytes: &[u8]) -> anyhow::Result<()> {
    if !stream::valid_node_name(node) || !stream::valid_file_name(name) {
        anyhow::bail!("the job's output names a file outside the fleet folder: {node}/{name}");
    }
    let folder = dir.join(node);
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    write_atomic(&folder.join(name), bytes)
        .with_context(|| format!("cannot write {}", folder.join(name).display()))
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
mod tests {
    use super::*;

    #[test]
    fn srun_gets_one_exclusive_task_per_node_and_the_selection() {
        let sel = Selection {
            partition: Some("batch".into()),
            nodelist: Some("np[1-3]".into()),
            nodes: None,
            account: Some("hpc".into()),
            time: Some("10:00".into()),
            reservation: Some("maint".into()),
            qos: Some("high".into()),
            exclude: Some("np2".into()),
            extra: vec!["--constraint=ib".into(), "-v".into()],
        };
        let a = srun_args(
            &sel,
            Path::new("/opt/numaprobe"),
            Gather::Stream,
            Path::new("/tmp"),
            65.0,
            &["--budget".into(), "5s".into()],
        );
        for want in [
            "--ntasks-per-node=1",
            "--exclusive",
            "--kill-on-bad-exit=0",
            "--partition=batch",
            "--nodelist=np[1-3]",
            "--account=hpc",
            "--time=10:00",
            "--reservation=maint",
            "--qos=high",
            "--exclude=np2",
        ] {
            assert!(a.iter().any(|x| x == want), "{want} missing from {a:?}");
        }
        let sep = a.iter().position(|x| x == "--").unwrap();
        assert_eq!(a[sep - 2..sep], ["--constraint=ib", "-v"]);
        assert_eq!(a[sep + 1], "/opt/numaprobe");
        assert_eq!(a[sep + 2], "fleet-node");
        assert_eq!(&a[a.len() - 2..], ["--budget", "5s"]);
    }

    use numaprobe_core::analysis::fleet::stream::Frame;

    const WATCH: Watch = Watch {
        grace: Duration::from_secs(30),
    };

    #[test]
    fn sinfo_states_are_judged_with_their_reason() {
        use Availability::*;
        assert_eq!(availability("idle", "none", false), Free);
        assert_eq!(
            availability("drained", "bad DIMM", false),
            Unavailable("drained (drained by an administrator): bad DIMM".into())
        );
        assert_eq!(
            availability("draining", "", false),
            Unavailable("draining (drained by an administrator)".into())
        );
        assert_eq!(
            availability("idle*", "Not responding", false),
            Unavailable("idle* (not responding): Not responding".into())
        );
        assert_eq!(
            availability("down*", "", false),
            Unavailable("down* (not responding)".into())
        );
        assert_eq!(
            availability("DOWN", "slurmd gone", false),
            Unavailable("down (down): slurmd gone".into())
        );
        assert_eq!(
            availability("reserved", "", false),
            Unavailable("reserved (reserved; give --reservation)".into())
        );
        assert_eq!(availability("reserved", "", true), Free);
        assert_eq!(
            availability("idle$", "", false),
            Unavailable("idle$ (in a maintenance reservation)".into())
        );
        assert_eq!(availability("idle$", "", true), Free);
        assert_eq!(
            availability("idle~", "", false),
            Unavailable("idle~ (powered down)".into())
        );
        assert_eq!(availability("mixed", "", false), Busy("mixed".into()));
        assert_eq!(
            availability("allocated", "", false),
            Busy("allocated".into())
        );
        assert_eq!(
            availability("future", "", false),
            Unavailable("future (not schedulable)".into())
        );
    }

    #[test]
    fn a_silent_node_and_one_that_never_starts_are_lost_after_the_grace() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let asked: Vec<String> = ["np1", "np2", "np3"].map(String::from).to_vec();
        let mut w = Watchdog::new(&asked, s(30));
        assert!(
            w.check(t0 + s(100)).is_empty(),
            "nothing started: pending, not lost"
        );
        w.heard("np1", t0);
        w.heard("np2", t0 + s(1));
        assert!(w.check(t0 + s(29)).is_empty());
        w.heard("np1", t0 + s(25));
        // np2 silent since 1 s, np3 never started: both lost at 31 s.
        let lost = w.check(t0 + s(31));
        let names: Vec<&str> = lost.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["np2", "np3"]);
        assert!(
            lost[0].1.contains("nothing from it for 30 s"),
            "{}",
            lost[0].1
        );
        assert!(lost[1].1.contains("had not started"), "{}", lost[1].1);
        // Each once.
        assert!(w.check(t0 + s(40)).is_empty());
        assert!(!w.all_accounted(), "np1 is still going");
        w.done("np1");
        assert!(w.all_accounted());
        // A node that said it is done is never lost, however quiet since.
        let mut w = Watchdog::new(&[], s(30));
        w.heard("a", t0);
        w.done("a");
        assert!(w.check(t0 + s(300)).is_empty());
        assert!(w.all_accounted());
    }

    /// A folder of its own under the system's temporary folder.
    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("np-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// What a node sends: its start, a run.json, its status and its end.
    fn node_lines(node: &str) -> Vec<u8> {
        let mut out = Frame::Start { node: node.into() }.line();
        for f in Frame::file(node, "run.json", &[b'x'; 3000]) {
            out += &f.line();
        }
        let status = format!(
            "{{\"node\":\"{node}\",\"exit_status\":0,\"signal\":null,\"timed_out\":false,\"error\":null,\"stderr_tail\":[],\"elapsed_s\":1.0}}"
        );
        for f in Frame::file(node, STATUS_FILE, status.as_bytes()) {
            out += &f.line();
        }
        out += &Frame::End { node: node.into() }.line();
        out.into_bytes()
    }

    /// Is `pid` a process (a zombie counts: it was not reaped)?
    fn exists(pid: i32) -> bool {
        // SAFETY: signal 0 only checks that the process exists.
        unsafe { libc::kill(pid, 0) == 0 }
    }

    #[test]
    fn hostile_lines_are_skipped_and_the_other_nodes_kept() {
        let d = scratch("fleet-hostile");
        let mut out = Vec::new();
        out.extend(b"NUMAPROBE-FLEET {\"kind\":\"file\",\"node\":\"np9\",\"name\":\"run.json\",\"part\":0,\"parts\":1000000000000,\"b64\":\"QQ==\"}\n");
        out.extend(b"NUMAPROBE-FLEET {\"kind\":\"file\",\"node\":\"np9\",\"name\":\"run.json\",\"part\":0,\"parts\":18446744073709551615,\"b64\":\"QQ==\"}\n");
        // Not UTF-8 in the node's name: no node to name.
        out.extend(b"NUMAPROBE-FLEET {\"kind\":\"start\",\"node\":\"np9\xff\"}\n");
        out.extend(node_lines("np1"));
        // Not ours (no prefix), whatever its bytes: ignored.
        out.extend(b"\xfe\xff srun: a line that is not UTF-8\n");
        out.extend(&[b'z'; 10_000]);
        out.push(b'\n');
        out.extend(node_lines("np2"));
        let frames = d.join("frames");
        std::fs::write(&frames, &out).unwrap();
        let fleet = d.join("fleet");
        std::fs::create_dir(&fleet).unwrap();
        let mut ended = Vec::new();
        let g = launch(
            Path::new("/bin/cat"),
            &[frames.display().to_string()],
            &fleet,
            &[],
            WATCH,
            |n, _| ended.push(n.to_string()),
        )
        .unwrap();
        assert_eq!(ended, ["np1", "np2"]);
        assert_eq!(g.started, ["np1", "np2"]);
        assert_eq!(g.srun_status, Some(0));
        for n in ["np1", "np2"] {
            assert_eq!(
                std::fs::read(fleet.join(n).join("run.json")).unwrap(),
                [b'x'; 3000]
            );
        }
        assert!(!fleet.join("np9").exists());
        let p = g.problems.join("\n");
        assert!(
            p.contains("np9: 2 lines of the job's output skipped (the first: run.json: piece 0 of 1000000000000"),
            "{p}"
        );
        assert!(p.contains("an unnamed node: 2 lines"), "{p}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// A node of the job writing frames in the name of a node the job did
    /// not ask for: that node gets no folder, and a warning names it.
    #[test]
    fn frames_of_a_node_not_in_the_nodelist_are_skipped_naming_it() {
        let d = scratch("fleet-not-asked");
        let mut out = node_lines("np1");
        out.extend(node_lines("evil"));
        out.extend(node_lines("np2"));
        let frames = d.join("frames");
        std::fs::write(&frames, &out).unwrap();
        let fleet = d.join("fleet");
        std::fs::create_dir(&fleet).unwrap();
        let asked = ["np1".to_string(), "np2".to_string()];
        let mut ended = Vec::new();
        let g = launch(
            Path::new("/bin/cat"),
            &[frames.display().to_string()],
            &fleet,
            &asked,
            WATCH,
            |n, _| ended.push(n.to_string()),
        )
        .unwrap();
        assert_eq!(ended, ["np1", "np2"]);
        assert_eq!(g.started, ["np1", "np2"]);
        assert!(!fleet.join("evil").exists());
        assert!(fleet.join("np2/run.json").is_file());
        let p = g.problems.join("\n");
        assert!(
            p.contains("evil: ") && p.contains("lines of the job's output skipped (the first: not one of the job's nodes (np1, np2)"),
            "{p}"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn srun_is_ended_and_reaped_when_the_gather_fails() {
        let d = scratch("fleet-guard");
        let frames = d.join("frames");
        std::fs::write(&frames, node_lines("np1")).unwrap();
        // The fleet folder is a file: saving np1's report fails.
        let fleet = d.join("fleet");
        std::fs::write(&fleet, b"").unwrap();
        let pidfile = d.join("pid");
        let script = format!(
            "echo $$ > {}; cat {}; trap '' INT; exec sleep 1000",
            pidfile.display(),
            frames.display()
        );
        let e = launch(
            Path::new("/bin/sh"),
            &["-c".into(), script],
            &fleet,
            &[],
            WATCH,
            |_, _| {},
        )
        .unwrap_err();
        assert!(format!("{e:#}").contains("cannot create"), "{e:#}");
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(!exists(pid), "the stand-in for srun ({pid}) is still there");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_streamed_file_cannot_leave_the_fleet_folder() {
        let d = std::env::temp_dir().join(format!("np-fleet-save-{}", std::process::id()));
        assert!(save(&d, "..", "x", b"").is_err());
        assert!(save(&d, "np1", "../x", b"").is_err());
        save(&d, "np1", "run.json", b"{}").unwrap();
        assert!(d.join("np1/run.json").exists());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
