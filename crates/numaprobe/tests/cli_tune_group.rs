//! `numaprobe tune` and the processes a candidate leaves: a program that
//! ignores SIGINT and forks a background child is fully ended by
//! `--timeout` and by SIGINT to numaprobe; what a program leaves in its
//! group when it ends is ended and named; a daemon that left the group
//! (setsid) is named, not hidden. Processes are told apart by the pids the
//! program writes down; none of the assertions is about time.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use cli::{numaprobe_in, usage_error};
use common::TempDir;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The program under test: ignores SIGINT, starts a background sleep (in
/// its group), writes both pids to `pids`, then `tail` (its foreground).
fn write_program(dir: &Path, tail: &str) {
    let p = dir.join("prog");
    std::fs::write(
        &p,
        format!(
            "#!/bin/sh\ntrap '' INT\nsleep 1000 &\necho $! >> \"$PIDS\"\necho $$ >> \"$PIDS\"\n{tail}\n"
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn pids(dir: &Path) -> Vec<i32> {
    std::fs::read_to_string(dir.join("pids"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// A process still running (a zombie waiting for init has ended).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        let state = s
            .rsplit_once(')')
            .map(|(_, r)| r.trim_start())
            .unwrap_or("");
        !state.starts_with('Z') && !state.starts_with('X')
    })
}

fn tune(dir: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_numaprobe"));
    c.args(["tune", "--runs", "1", "--threads", "1", "--format", "json"])
        .args(extra)
        .args(["--", "./prog"])
        .env("PIDS", dir.join("pids"))
        .current_dir(dir)
        .stdin(Stdio::null());
    c
}

#[test]
fn timeout_ends_a_program_that_ignores_sigint_and_its_background_child() {
    let d = TempDir::new("tune-timeout");
    write_program(d.path(), "exec sleep 1000");
    let o = tune(d.path(), &["--timeout", "1s"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    // Every candidate timed out: none ranked, exit 1 after the report.
    assert_eq!(o.status.code(), Some(1), "{err}");
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let cands = doc["candidates"].as_array().unwrap();
    assert!(!cands.is_empty());
    for c in cands {
        let status = c["failure"]["status"].as_str().unwrap();
        assert!(status.starts_with("timed out after 1s"), "{status}");
        assert!(c["rank"].is_null());
    }
    let all = pids(d.path());
    assert_eq!(all.len(), 2 * cands.len(), "every candidate started once");
    let left: Vec<i32> = all.into_iter().filter(|&p| running(p)).collect();
    assert!(left.is_empty(), "still running: {left:?}");
}

#[test]
fn sigint_to_numaprobe_ends_the_whole_group() {
    let d = TempDir::new("tune-sigint");
    write_program(d.path(), "exec sleep 1000");
    let mut child = tune(d.path(), &[])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let began = Instant::now();
    while pids(d.path()).len() < 2 {
        assert!(
            began.elapsed() < Duration::from_secs(60),
            "the program did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let all = pids(d.path());
    assert_eq!(all.len(), 2, "one run, stopped");
    let left: Vec<i32> = all.into_iter().filter(|&p| running(p)).collect();
    assert!(left.is_empty(), "still running: {left:?}");
}

#[test]
fn what_a_finished_program_leaves_is_ended_and_a_daemon_is_named() {
    let d = TempDir::new("tune-strays");
    // The program ends at once, leaving its background sleep in the group
    // and a setsid daemon outside it.
    write_program(
        d.path(),
        "setsid sleep 1001 </dev/null >/dev/null 2>&1 &\necho $! >> \"$PIDS.daemon\"\nsleep 0.5",
    );
    let o = tune(d.path(), &[]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let daemons: Vec<i32> = std::fs::read_to_string(d.path().join("pids.daemon"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    for &p in &daemons {
        // SAFETY: the daemons this test's program started; ended here
        // whatever the assertions below find.
        unsafe { libc::kill(p, libc::SIGKILL) };
    }
    assert_eq!(o.status.code(), Some(0), "{err}");
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let n = doc["candidates"].as_array().unwrap().len();
    // The runs count: none failed, every one ranked.
    for c in doc["candidates"].as_array().unwrap() {
        assert!(c["failure"].is_null(), "{c}");
        assert_eq!(c["runs"][0]["ok"], true, "{c}");
        assert!(c["rank"].is_number(), "{c}");
    }
    let all = pids(d.path());
    assert_eq!(all.len(), 2 * n);
    let left: Vec<i32> = all.iter().copied().filter(|&p| running(p)).collect();
    assert!(left.is_empty(), "still running: {left:?}");
    let notes: Vec<String> = doc["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let ended: Vec<&String> = notes
        .iter()
        .filter(|n| n.contains("ended what the program left running in its process group"))
        .collect();
    assert_eq!(ended.len(), n, "{notes:#?}");
    // The background sleeps of the runs are the ones named.
    for (i, pid) in all.iter().step_by(2).enumerate() {
        assert!(
            notes.iter().any(|n| n.contains(&format!("{pid} (sleep)"))),
            "run {i}'s sleep {pid} not named: {notes:#?}"
        );
    }
    assert_eq!(daemons.len(), n);
    for pid in daemons {
        assert!(
            notes
                .iter()
                .any(|n| n.contains("left running outside its process group")
                    && n.contains(&format!("{pid} (sleep)"))),
            "daemon {pid} not named: {notes:#?}"
        );
        assert!(err.contains(&format!("{pid} (sleep)")), "{err}");
    }
}

#[test]
fn a_bad_timeout_is_one_line_and_nothing_runs() {
    let d = TempDir::new("tune-badtimeout");
    write_program(d.path(), "true");
    for bad in ["0s", "soon", "1x"] {
        let o = numaprobe_in(&["tune", "--timeout", bad, "--", "./prog"], d.path());
        let e = usage_error(&o);
        assert!(e.contains(&format!("--timeout '{bad}'")), "{e}");
    }
    assert!(pids(d.path()).is_empty(), "nothing ran");
}
