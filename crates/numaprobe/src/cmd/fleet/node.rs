//! `numaprobe fleet-node` (hidden): what `numaprobe fleet` asks Slurm to run
//! on every node. It runs the main job (`numaprobe run`, the same binary) with
//! the fleet's settings under a time limit, then either leaves the report in
//! the shared folder `DIR/<node>/` with a `fleet-node.json` saying how the
//! run ended, or sends the report folder and that status back through the
//! job's output (see `analysis::fleet::stream`). It always exits 0 after saying how the
//! run went, so one failing node never ends the others' tasks.

use crate::args::OutputArgs;
use anyhow::Context;
use numaprobe_core::analysis::fleet::stream::{
    valid_file_name, valid_node_name, Frame, MAX_NODE_NAME,
};
use numaprobe_core::model::fleet::NodeRunStatus;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The status file in a node's folder.
pub const STATUS_FILE: &str = "fleet-node.json";
/// Lines of the run's stderr kept for the fleet's report.
const TAIL_LINES: usize = 5;
/// Bytes of the run's stderr held while it runs: the last lines are taken
/// from these, however much the run writes.
const STDERR_KEEP: usize = 8192;
/// After SIGTERM at the time limit, how long the run may take to write its
/// partial report before it is killed.
const TERM_GRACE: Duration = Duration::from_secs(15);
/// How often a running node says so (an Alive frame). The launcher's
/// `--grace` must be several of these.
pub const ALIVE_EVERY: Duration = Duration::from_secs(5);

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gather {
    /// Every node writes its report into DIR/nodes/<node>/ (DIR on a filesystem all nodes share)
    Shared,
    /// Every node sends its report back through the job's output; numaprobe fleet unpacks it into DIR/nodes/<node>/
    Stream,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    #[arg(long, value_enum)]
    pub gather: Gather,
    /// The fleet folder (shared) or the node's scratch parent (stream).
    #[arg(long)]
    pub dir: PathBuf,
    /// Seconds the run may take before it is stopped.
    #[arg(long)]
    pub timeout_s: f64,
    /// `numaprobe run`'s options.
    #[arg(last = true)]
    pub run_args: Vec<String>,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// The node's name as Slurm knows it: several slurmd daemons on one host
/// (and nodes whose hostname is not their Slurm name) set SLURMD_NODENAME.
pub fn node_name() -> String {
    if let Ok(n) = std::env::var("SLURMD_NODENAME") {
        if !n.is_empty() {
            return n;
        }
    }
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc == 0 {
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        return String::from_utf8_lossy(&buf[..end]).into_owned();
    }
    "unknown-node".into()
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let node = node_name();
    if !valid_node_name(&node) {
        anyhow::bail!(
            "this node's name {:?} is not a host name (letters, digits, '.', '-', '_', at most {MAX_NODE_NAME}); set SLURMD_NODENAME",
            node.chars().take(200).collect::<String>()
        );
    }
    let folder = match args.gather {
        Gather::Shared => Ok(args.dir.join(&node)),
        Gather::Stream => scratch_folder(&args.dir, &node),
    };
    // Not locked for the whole run: each frame is one write of a whole
    // line, which Stdout makes whole against other threads' lines.
    let mut out = std::io::stdout();
    // Start, Alive and End go out in both modes: the launcher's watchdog
    // reads them (a shared folder says nothing while a node runs).
    out.write_all(Frame::Start { node: node.clone() }.line().as_bytes())?;
    out.flush()?;
    let alive_line = Frame::Alive { node: node.clone() }.line();
    let mut alive = || {
        let mut o = std::io::stdout();
        o.write_all(alive_line.as_bytes())
            .and_then(|_| o.flush())
            .is_ok()
    };
    let (status, folder) = match folder {
        Ok(f) => (run_main_job(&node, &f, &args, &mut alive), f),
        Err(e) => {
            let mut st = not_run(&node);
            st.error = Some(format!(
                "cannot make a scratch folder in {}: {e}",
                args.dir.display()
            ));
            (st, PathBuf::new())
        }
    };
    match args.gather {
        Gather::Shared => {
            std::fs::create_dir_all(&folder)
                .with_context(|| format!("cannot create {}", folder.display()))?;
            let text = serde_json::to_string_pretty(&status)? + "\n";
            crate::safe_dir::write_file(&folder.join(STATUS_FILE), text.as_bytes())?;
            out.write_all(Frame::End { node: node.clone() }.line().as_bytes())?;
            out.flush()?;
        }
        Gather::Stream => {
            send_folder(&mut out, &node, &folder)?;
            let text = serde_json::to_string_pretty(&status)? + "\n";
            for f in Frame::file(&node, STATUS_FILE, text.as_bytes()) {
                out.write_all(f.line().as_bytes())?;
            }
            out.write_all(Frame::End { node: node.clone() }.line().as_bytes())?;
            out.flush()?;
            if !folder.as_os_str().is_empty() {
                let _ = std::fs::remove_dir_all(&folder);
            }
        }
    }
    Ok(())
}

/// The node's scratch folder for a streamed report: a new folder of an
/// unpredictable name, mode 0700 (mkdtemp(3)), in `parent` (the node's
/// /tmp): a folder someone prepared there is never taken for it, so nothing
/// foreign is sent back as part of the report.
fn scratch_folder(parent: &Path, node: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let job: String = std::env::var("SLURM_JOB_ID")
        .unwrap_or_default()
        .chars()
        .filter(char::is_ascii_digit)
        .take(20)
        .collect();
    // The job and node (a checked host name) tell a person whose it is.
    let template = parent.join(format!("numaprobe-fleet-{job}-{node}-XXXXXX"));
    let mut bytes = std::ffi::CString::new(template.as_os_str().as_bytes())?.into_bytes_with_nul();
    // SAFETY: `bytes` is a NUL-terminated template ending in XXXXXX, which
    // mkdtemp rewrites in place.
    let made = unsafe { libc::mkdtemp(bytes.as_mut_ptr().cast()) };
    if made.is_null() {
        return Err(std::io::Error::last_os_error());
    }
    bytes.pop();
    Ok(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
}

/// A status for a run not (yet) started.
pub fn not_run(node: &str) -> NodeRunStatus {
    NodeRunStatus {
        node: node.to_string(),
        exit_status: None,
        signal: None,
        timed_out: false,
        error: None,
        stderr_tail: Vec::new(),
        elapsed_s: 0.0,
        unavailable: None,
        lost: false,
    }
}

/// Run `numaprobe run --report-dir FOLDER ARGS` and say how it ended,
/// calling `alive` every [`ALIVE_EVERY`] while it runs; when `alive` fails
/// (the job's output is gone: srun or slurmstepd died), nobody is left to
/// take the report and the run is stopped as at its time limit.
fn run_main_job(
    node: &str,
    folder: &Path,
    args: &Args,
    alive: &mut dyn FnMut() -> bool,
) -> NodeRunStatus {
    let start = Instant::now();
    let mut status = not_run(node);
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            status.error = Some(format!("cannot find the numaprobe binary: {e}"));
            return status;
        }
    };
    let child = Command::new(&exe)
        .arg("run")
        .arg("--report-dir")
        .arg(folder)
        .args(["--format", "json", "--output", "-"])
        .args(&args.run_args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            status.error = Some(format!("cannot start {}: {e}", exe.display()));
            return status;
        }
    };
    // Read stderr on its own thread so a chatty run never blocks on a full pipe.
    let mut stderr = child.stderr.take();
    let reader = std::thread::spawn(move || stderr.as_mut().map(stderr_tail).unwrap_or_default());
    let limit = Duration::from_secs_f64(args.timeout_s.max(1.0));
    let mut watch = RunWatch::new(start, Instant::now(), limit);
    let exit = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) => {}
            Err(e) => {
                status.error = Some(format!("cannot wait for the run: {e}"));
                break None;
            }
        }
        match watch.look(Instant::now(), alive) {
            Act::Wait => {}
            Act::Term { orphaned } => {
                if orphaned {
                    status.error = Some(
                        "the job's output closed (srun or slurmstepd gone): run stopped".into(),
                    );
                } else {
                    status.timed_out = true;
                }
                // SIGTERM first: the run writes what it finished with complete: false.
                // SAFETY: kill(2) on our own child's pid.
                unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
            }
            Act::Kill => {
                let _ = child.kill();
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    if let Some(st) = exit {
        use std::os::unix::process::ExitStatusExt;
        status.exit_status = st.code();
        status.signal = st.signal();
    }
    let text = reader.join().unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    status.stderr_tail = lines[lines.len().saturating_sub(TAIL_LINES)..]
        .iter()
        .map(|l| l.to_string())
        .collect();
    status.elapsed_s = start.elapsed().as_secs_f64();
    status
}

/// What a node does about its run at one look.
#[derive(Debug, PartialEq, Eq)]
enum Act {
    /// Let it run.
    Wait,
    /// SIGTERM, once: its time limit came, or (`orphaned`) the job's
    /// output is gone, so nobody is left to take its report.
    Term { orphaned: bool },
    /// SIGKILL: still running [`TERM_GRACE`] after the SIGTERM.
    Kill,
}

/// A node's watch over its run: its time limit, its alive frames and the
/// job's output gone. The clock is the caller's (`now` in each look), so
/// the rule is tested without waiting.
struct RunWatch {
    start: Instant,
    limit: Duration,
    said_alive: Instant,
    orphaned: bool,
    termed: Option<Instant>,
}

impl RunWatch {
    /// A run started at `start`, its first alive frame due
    /// [`ALIVE_EVERY`] after `said_alive`, stopped `limit` after `start`.
    fn new(start: Instant, said_alive: Instant, limit: Duration) -> Self {
        RunWatch {
            start,
            limit,
            said_alive,
            orphaned: false,
            termed: None,
        }
    }

    /// One look at `now`: `alive` (send an alive frame; false when the
    /// job's output is gone) called every [`ALIVE_EVERY`] until it fails.
    fn look(&mut self, now: Instant, alive: &mut dyn FnMut() -> bool) -> Act {
        if now.duration_since(self.said_alive) >= ALIVE_EVERY {
            self.said_alive = now;
            self.orphaned = self.orphaned || !alive();
        }
        if (self.orphaned || now.duration_since(self.start) >= self.limit) && self.termed.is_none()
        {
            self.termed = Some(now);
            return Act::Term {
                orphaned: self.orphaned,
            };
        }
        if self
            .termed
            .is_some_and(|t| now.duration_since(t) >= TERM_GRACE)
        {
            return Act::Kill;
        }
        Act::Wait
    }
}

/// The last [`STDERR_KEEP`] or so bytes of a stream read to its end (so the
/// writer never blocks on a full pipe), as text with any bad UTF-8
/// replaced: a chatty or binary stderr costs a fixed amount of memory and
/// still leaves its last lines.
fn stderr_tail(r: &mut impl Read) -> String {
    let mut tail: Vec<u8> = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => tail.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
        if tail.len() > 2 * STDERR_KEEP {
            tail.drain(..tail.len() - STDERR_KEEP);
        }
    }
    String::from_utf8_lossy(&tail).into_owned()
}

/// Send every plain file of the report folder (the manifest too, so the
/// gathered folder is one `numaprobe run` would recognise).
fn send_folder(out: &mut impl Write, node: &str, folder: &Path) -> anyhow::Result<()> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Ok(()); // the run never made it: the End frame says why
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        // Only what the launcher takes: plain names (see the fleet stream).
        .filter(|n| !n.ends_with(".tmp") && n != STATUS_FILE && valid_file_name(n))
        .collect();
    names.sort();
    for name in names {
        // Regular files only, bounded: the folder is in shared scratch.
        let bytes = match numaprobe_core::model::input::read_bytes(&folder.join(&name)) {
            Ok(b) => b,
            Err(_) => continue,
        };
        for f in Frame::file(node, &name, &bytes) {
            out.write_all(f.line().as_bytes())?;
        }
    }
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_stderr_tail_is_bounded_and_keeps_the_last_lines() {
        // 10 MB of chatter, a byte that is not UTF-8, then the last words.
        let mut text = "warning: chatter\n".repeat(600_000).into_bytes();
        text.extend_from_slice(b"\xff\nthe run failed: no memory on node 1\n");
        let tail = stderr_tail(&mut text.as_slice());
        assert!(tail.len() <= 2 * STDERR_KEEP + 4, "{}", tail.len());
        assert!(tail.ends_with("\u{fffd}\nthe run failed: no memory on node 1\n"));
        assert_eq!(stderr_tail(&mut &b"one line\n"[..]), "one line\n");
    }

    /// A look at `s` seconds after the run's start, alive frames counted
    /// in `sent` and answered with `answer`.
    fn look_at(w: &mut RunWatch, t0: Instant, s: f64, sent: &mut u32, answer: bool) -> Act {
        w.look(t0 + Duration::from_secs_f64(s), &mut || {
            *sent += 1;
            answer
        })
    }

    #[test]
    fn a_run_past_its_limit_is_asked_to_stop_once_then_killed_after_the_grace() {
        let t0 = Instant::now();
        let mut w = RunWatch::new(t0, t0, Duration::from_secs(60));
        let mut sent = 0;
        assert_eq!(look_at(&mut w, t0, 59.9, &mut sent, true), Act::Wait);
        let term = Act::Term { orphaned: false };
        assert_eq!(look_at(&mut w, t0, 60.0, &mut sent, true), term);
        let grace = TERM_GRACE.as_secs_f64();
        assert_eq!(
            look_at(&mut w, t0, 60.0 + grace - 0.1, &mut sent, true),
            Act::Wait
        );
        assert_eq!(
            look_at(&mut w, t0, 60.0 + grace, &mut sent, true),
            Act::Kill
        );
        assert_eq!(
            look_at(&mut w, t0, 61.0 + grace, &mut sent, true),
            Act::Kill
        );
        // An alive frame at the looks ALIVE_EVERY or more after the last one.
        assert_eq!(sent, 2);
    }

    #[test]
    fn alive_frames_go_every_few_seconds_and_a_closed_output_stops_the_run_at_once() {
        let t0 = Instant::now();
        let every = ALIVE_EVERY.as_secs_f64();
        // The first frame is due ALIVE_EVERY after the watch began, not the run.
        let mut w = RunWatch::new(t0, t0 + Duration::from_secs(1), Duration::from_secs(600));
        let mut sent = 0;
        assert_eq!(look_at(&mut w, t0, every, &mut sent, true), Act::Wait);
        assert_eq!(sent, 0);
        assert_eq!(look_at(&mut w, t0, every + 1.0, &mut sent, true), Act::Wait);
        assert_eq!(sent, 1);
        assert_eq!(look_at(&mut w, t0, 2.0 * every, &mut sent, true), Act::Wait);
        assert_eq!(sent, 1);
        // The job's output closed: stopped long before the limit, and said why.
        let orphaned = Act::Term { orphaned: true };
        assert_eq!(
            look_at(&mut w, t0, 2.0 * every + 1.0, &mut sent, false),
            orphaned
        );
        assert_eq!(sent, 2);
        // Nobody takes a frame any more: none is tried; killed after the grace.
        let t = 2.0 * every + 1.0;
        let grace = TERM_GRACE.as_secs_f64();
        assert_eq!(look_at(&mut w, t0, t + every, &mut sent, true), Act::Wait);
        assert_eq!(look_at(&mut w, t0, t + grace, &mut sent, true), Act::Kill);
        assert_eq!(sent, 2);
    }

    /// A reader that hands out `steps` in turn: bytes, or an error of a kind.
    struct Steps(Vec<Result<&'static [u8], std::io::ErrorKind>>);

    impl Read for Steps {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.0.is_empty() {
                return Ok(0);
            }
            match self.0.remove(0) {
                Ok(b) => {
                    buf[..b.len()].copy_from_slice(b);
                    Ok(b.len())
                }
                Err(kind) => Err(kind.into()),
            }
        }
    }

    #[test]
    fn the_stderr_tail_reads_on_after_an_interruption_and_stops_at_an_error() {
        use std::io::ErrorKind::{Interrupted, Other};
        let mut r = Steps(vec![Err(Interrupted), Ok(b"a\n"), Err(Other), Ok(b"b\n")]);
        assert_eq!(stderr_tail(&mut r), "a\n");
    }

    #[test]
    fn the_stderr_tail_keeps_up_to_twice_its_bound_before_dropping_the_oldest() {
        let whole = vec![b'x'; 2 * STDERR_KEEP];
        assert_eq!(stderr_tail(&mut whole.as_slice()).len(), 2 * STDERR_KEEP);
        let more = vec![b'x'; 2 * STDERR_KEEP + 1];
        assert_eq!(stderr_tail(&mut more.as_slice()).len(), STDERR_KEEP);
    }

    #[test]
    fn the_report_folder_is_sent_without_its_temporaries_status_or_odd_names() {
        use numaprobe_core::analysis::fleet::stream::{Collector, Event};
        let d = std::env::temp_dir().join(format!("np-send-{}", std::process::id()));
        std::fs::create_dir_all(d.join("sub")).unwrap();
        for (name, text) in [
            ("run.json", "{}"),
            ("summary.md", "# np1"),
            ("run.json.tmp", "half"),
            (STATUS_FILE, "{}"),
            ("a b.txt", "odd"),
            ("sub/inner.json", "{}"),
        ] {
            std::fs::write(d.join(name), text).unwrap();
        }
        let mut out = Vec::new();
        send_folder(&mut out, "np1", &d).unwrap();
        let mut c = Collector::default();
        let got: Vec<Event> = out
            .split_inclusive(|&b| b == b'\n')
            .filter_map(|l| c.line(l))
            .collect();
        let file = |name: &str, text: &str| Event::File {
            node: "np1".into(),
            name: name.into(),
            bytes: text.as_bytes().to_vec(),
        };
        assert_eq!(got, [file("run.json", "{}"), file("summary.md", "# np1")]);
        // A folder the run never made sends nothing, and is no error.
        let mut none = Vec::new();
        send_folder(&mut none, "np1", &d.join("missing")).unwrap();
        assert!(none.is_empty());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn the_scratch_folder_is_new_private_and_never_reused() {
        let parent = std::env::temp_dir().join(format!("np-scratch-{}", std::process::id()));
        std::fs::create_dir_all(&parent).unwrap();
        // A folder someone prepared under a name they guessed.
        std::fs::create_dir_all(parent.join("numaprobe-fleet--np1-1")).unwrap();
        let a = scratch_folder(&parent, "np1").unwrap();
        let b = scratch_folder(&parent, "np1").unwrap();
        assert_ne!(a, b);
        for d in [&a, &b] {
            let m = std::fs::symlink_metadata(d).unwrap();
            assert!(m.is_dir());
            assert_eq!(m.permissions().mode() & 0o777, 0o700, "{}", d.display());
            assert_eq!(std::fs::read_dir(d).unwrap().count(), 0);
            assert!(d.starts_with(&parent));
            // Whose it is shows in its name (scripts/slurm-test finds a node's run so).
            let name = d.file_name().unwrap().to_str().unwrap();
            assert!(
                name.starts_with("numaprobe-fleet-") && name.contains("-np1-"),
                "{name}"
            );
        }
        assert!(scratch_folder(&parent.join("missing"), "np1").is_err());
        std::fs::remove_dir_all(&parent).unwrap();
    }
}
