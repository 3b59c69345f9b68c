//! Running numaprobe as a child to signal it, for the tests of stopping
//! with real signals (`cli_signals.rs`: a measurement; `cli_signals_readers.rs`:
//! a command that only reads): start it with its stderr kept in a file,
//! wait until it is where the test wants it, signal it and wait for its end.
//! Every wait is for a condition, with a limit against a hang only. The
//! large inputs that keep a reading command busy are made by [`inputs`].

#![allow(dead_code)] // each test binary uses its own subset

pub mod inputs;

use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Start numaprobe in `cwd`, its stderr to `cwd/stderr.txt`.
pub fn spawn(args: &[&str], cwd: &Path) -> Child {
    let err = std::fs::File::create(cwd.join("stderr.txt")).unwrap();
    Command::new(env!("CARGO_BIN_EXE_numaprobe"))
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err)
        .spawn()
        .expect("start numaprobe")
}

/// What the child started by [`spawn`] in `cwd` wrote on stderr.
pub fn stderr(cwd: &Path) -> String {
    std::fs::read_to_string(cwd.join("stderr.txt")).unwrap_or_default()
}

/// Wait until `ready(pid)` holds. The child ending first, or `patience`
/// passing, fails the test, `never` saying what did not happen.
pub fn wait_until(
    child: &mut Child,
    cwd: &Path,
    patience: Duration,
    never: &str,
    mut ready: impl FnMut(u32) -> bool,
) {
    let began = Instant::now();
    while !ready(child.id()) {
        if let Some(s) = child.try_wait().unwrap() {
            panic!(
                "numaprobe ended ({s}) before it was signalled: {}",
                stderr(cwd)
            );
        }
        if began.elapsed() > patience {
            let _ = child.kill();
            panic!("numaprobe {never}: {}", stderr(cwd));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Send `sig` to the child, then wait for its end (failing the test if it
/// outlasts `patience`).
pub fn signal_and_wait(
    child: &mut Child,
    sig: libc::c_int,
    cwd: &Path,
    patience: Duration,
) -> ExitStatus {
    // SAFETY: a plain kill(2) to our own child, not yet waited for.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, sig) }, 0);
    let began = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if began.elapsed() > patience {
            let _ = child.kill();
            panic!("numaprobe did not stop after the signal: {}", stderr(cwd));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Has `pid` opened `input`: it holds it open now, or has read at least its
/// size (it read it whole and closed it between two looks).
pub fn has_opened(pid: u32, input: &Path) -> bool {
    let input = input.canonicalize().unwrap();
    let open = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|fds| {
            fds.flatten()
                .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|p| p == input))
        })
        .unwrap_or(false);
    let size = std::fs::metadata(&input).unwrap().len();
    let read = std::fs::read_to_string(format!("/proc/{pid}/io"))
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("rchar:"))
                .and_then(|n| n.trim().parse::<u64>().ok())
        })
        .is_some_and(|n| n >= size);
    open || read
}

/// The names in `dir` but those in `kept` (the inputs, the captured stderr).
pub fn left_behind(dir: &Path, kept: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !kept.contains(&n.as_str()))
        .collect();
    names.sort();
    names
}
