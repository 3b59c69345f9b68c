//! Helpers shared by the binary's end-to-end tests: running the built
//! `numaprobe` and reading what it gave back (a success's stdout or JSON,
//! a usage error's one line, an interrupted run's partial document, the
//! report page made of a folder). Fixture unpacking is in the core's
//! `tests/common`, which these tests include too.

#![allow(dead_code)] // each test binary uses its own subset

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A `--vector` width of the other architecture: never available here.
#[cfg(target_arch = "aarch64")]
pub const FOREIGN_WIDTH: &str = "avx2";
#[cfg(not(target_arch = "aarch64"))]
pub const FOREIGN_WIDTH: &str = "neon";

/// Run the built binary in `cwd`; one still going after 60 s is killed
/// and the test fails (a hang on a FIFO must fail the test, not hang it).
pub fn bounded<S: AsRef<OsStr>>(args: &[S], cwd: &Path) -> Output {
    bounded_with(args, cwd, None)
}

/// [`bounded`] with `first` first on PATH (a stand-in for srun).
pub fn bounded_with<S: AsRef<OsStr>>(args: &[S], cwd: &Path, first: Option<&Path>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_numaprobe"));
    cmd.args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(p) = first {
        cmd.env("PATH", format!("{}:/usr/bin:/bin", p.display()));
    }
    let mut child = cmd.spawn().unwrap();
    let began = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if began.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("numaprobe still running after 60 s: it hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Make a FIFO at `p`.
/// A path as the `&str` an argument list takes (test paths are UTF-8).
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A process's output bytes as text, invalid UTF-8 replaced.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

pub fn mkfifo(p: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// Run the built binary where the test runs (arguments as `&str` or
/// `String`, so tests that build their arguments need no conversion).
pub fn numaprobe<S: AsRef<OsStr>>(args: &[S]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_numaprobe"))
        .args(args)
        .output()
        .expect("run numaprobe")
}

/// `base` then `more`: a command's arguments with a test's own added.
pub fn with<'a>(base: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(more).copied().collect()
}

/// Run the built binary in `cwd` (where it writes its report folder).
pub fn numaprobe_in(args: &[&str], cwd: &Path) -> Output {
    numaprobe_env(args, cwd, &[])
}

/// Run the built binary in `cwd` with the environment `env` added.
pub fn numaprobe_env<S: AsRef<OsStr>>(args: &[S], cwd: &Path, env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_numaprobe"))
        .args(args)
        .current_dir(cwd)
        .envs(env.iter().copied())
        .output()
        .expect("run numaprobe")
}

/// Run the built binary in `cwd` with one cell finding its memory node full
/// (the binary's fault injection, `NUMAPROBE_FAULT_FULL_CELL`): a one-node
/// machine cannot make one cell fail and not the others.
pub fn numaprobe_with_full_cell(cell: usize, args: &[&str], cwd: &Path) -> Output {
    numaprobe_env(
        args,
        cwd,
        &[("NUMAPROBE_FAULT_FULL_CELL", &cell.to_string())],
    )
}

/// The main job with `args` (a `--budget` among them) in `cwd`, with the
/// environment `env` added. How long a budget one cell needs is the host's
/// speed: on a loaded host a short one is refused before measuring, with the
/// budget that would measure every cell ("--budget 1s is too short to
/// measure even one latency cell ...; --budget 4s measures every cell ...").
/// The run is then made again at that budget (at least a fifth more than
/// the last, three tries in all), so a test judges what the run does with a
/// budget the run itself calls enough, never whether this host is fast.
pub fn main_job_in(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Output {
    let mut args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let at = 1 + args
        .iter()
        .position(|a| a == "--budget")
        .expect("the main job's arguments name a --budget");
    for _ in 1..3 {
        let o = numaprobe_env(&args, cwd, env);
        let err = String::from_utf8_lossy(&o.stderr);
        if o.status.code() != Some(2) || !err.contains("too short to measure even one latency cell")
        {
            return o;
        }
        let named = err
            .split("--budget ")
            .nth(2)
            .and_then(|w| w.split_whitespace().next())
            .and_then(seconds)
            .unwrap_or_else(|| panic!("the refusal names no budget: {err}"));
        let last = seconds(&args[at]).expect("a budget in s or m");
        args[at] = format!("{}s", named.max((last * 6).div_ceil(5)));
    }
    numaprobe_env(&args, cwd, env)
}

/// Whole seconds of a budget as the refusal writes it (`4s`, `3m`).
fn seconds(word: &str) -> Option<u64> {
    if let Some(m) = word.strip_suffix('m') {
        m.parse::<u64>().ok().map(|m| m * 60)
    } else {
        word.strip_suffix('s')?.parse().ok()
    }
}

/// The stdout of a run that must have succeeded (else its stderr is shown).
pub fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The JSON document on the stdout of a run that must have succeeded.
pub fn json(o: &Output) -> serde_json::Value {
    ok(o);
    serde_json::from_slice(&o.stdout).expect("stdout is JSON")
}

/// The stderr of a run refused for bad input: exit 2 and one line.
pub fn usage_error(o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    err
}

/// The HTML page `numaprobe report DIR` makes of a folder (printed to
/// stdout): how the tests see that a command's document joins the report.
pub fn report_page(dir: &Path) -> String {
    ok(&numaprobe(&["report", dir.to_str().unwrap(), "-o", "-"]))
}

/// When `interrupted` sends the SIGINT.
pub enum Sigint {
    /// Once the command's `-o` file exists: it is written after the first
    /// finished step, so there is something the interrupted run must keep.
    /// The run must still be going then (the test picks work long enough).
    WhenWritten,
    /// After a fixed wait, for commands that write nothing before their
    /// end: the signal may come before or during the first step, and
    /// either way the document must say the run was interrupted.
    After(Duration),
}

/// Start the built binary with `args` (which write their document to
/// `out`), send it SIGINT as `when` says, and check what every measuring
/// command promises on Ctrl-C: exit 130 and a document at `out` marked
/// `complete: false, interrupted: true`. Returns that document and the
/// command's stderr (kept in a file beside `out`, so a chatty command can
/// never block on a full pipe while the test waits).
pub fn interrupted<S: AsRef<OsStr>>(
    args: &[S],
    out: &Path,
    when: Sigint,
) -> (serde_json::Value, String) {
    let err_path = out.with_extension("stderr");
    let err = std::fs::File::create(&err_path).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_numaprobe"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err)
        .spawn()
        .unwrap();
    match when {
        Sigint::WhenWritten => {
            let began = Instant::now();
            while !out.exists() {
                assert!(
                    child.try_wait().unwrap().is_none(),
                    "ended before the signal"
                );
                assert!(
                    began.elapsed() < Duration::from_secs(180),
                    "nothing written to {} in 180 s",
                    out.display()
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        Sigint::After(wait) => std::thread::sleep(wait),
    }
    // SAFETY: kill(2) to our own child, which has not been waited for.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) },
        0
    );
    let status = child.wait().unwrap();
    let stderr = std::fs::read_to_string(&err_path).unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    assert_eq!(doc["complete"], false);
    assert_eq!(doc["interrupted"], true);
    (doc, stderr)
}

/// The two kinds of folder a planted name can be in, made under `t`: a
/// plain one, and a sticky world-writable one (mode 1777, like /tmp).
pub fn plain_and_sticky(t: &Path) -> [std::path::PathBuf; 2] {
    use std::os::unix::fs::PermissionsExt;
    let plain = t.join("plain");
    let sticky = t.join("sticky");
    std::fs::create_dir(&plain).unwrap();
    std::fs::create_dir(&sticky).unwrap();
    std::fs::set_permissions(&sticky, std::fs::Permissions::from_mode(0o1777)).unwrap();
    [plain, sticky]
}

/// Make `dir` sticky and world-writable when it is in a sticky folder (the
/// second of [`plain_and_sticky`]): a report folder others can plant in.
pub fn like_its_parent(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let parent = std::fs::metadata(dir.parent().unwrap()).unwrap();
    if parent.permissions().mode() & 0o1000 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
    }
}

/// Give `p` (not following a link) to another user, as a planting user's
/// file would be; a no-op where the test cannot (not root).
pub fn give_away(p: &Path) {
    let _ = std::os::unix::fs::lchown(p, Some(4242), Some(4242));
}

/// A folder owned by another user than the one the tests run as: `made`,
/// given to uid 4242 (only root can), else `/` when another user owns it.
/// None, with the reason on stderr, where neither can be had.
pub fn folder_of_another_user(made: &Path) -> Option<(std::path::PathBuf, u32)> {
    use std::os::unix::fs::MetadataExt;
    if std::os::unix::fs::chown(made, Some(4242), None).is_ok() {
        return Some((made.to_path_buf(), 4242));
    }
    // SAFETY: geteuid cannot fail and touches no memory.
    let me = unsafe { libc::geteuid() };
    let root = std::fs::metadata("/").unwrap().uid();
    if root != me {
        return Some(("/".into(), root));
    }
    eprintln!("skipped: needs root to chown a folder to another uid, and / is this user's");
    None
}
