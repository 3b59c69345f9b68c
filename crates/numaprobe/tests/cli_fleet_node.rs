//! `numaprobe fleet-node`, the task `fleet` asks Slurm to run on every
//! node, run here by hand as Slurm would run it (SLURMD_NODENAME set or
//! empty), with `run` options that fail at once, so that what a node says
//! of a run that ended is seen without measuring: its frames on stdout,
//! its status in the shared folder or streamed, its scratch folder gone.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use cli::{s, text};
use common::TempDir;
use numaprobe_core::analysis::fleet::stream::{Collector, Event};
use std::process::{Command, Output, Stdio};

/// `numaprobe fleet-node --gather GATHER --dir DIR` with SLURMD_NODENAME
/// set to `name`, its run given an option `run` does not have.
fn fleet_node(name: &str, gather: &str, dir: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_numaprobe"))
        .args(["fleet-node", "--gather", gather, "--dir", s(dir)])
        .args(["--timeout-s", "600", "--", "--no-such-option"])
        .env("SLURMD_NODENAME", name)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// What a node's stdout comes to, line by line.
fn events(out: &Output) -> Vec<Event> {
    let mut c = Collector::default();
    out.stdout
        .split_inclusive(|&b| b == b'\n')
        .filter_map(|l| c.line(l))
        .collect()
}

/// A status saying `run` refused its options: exit 2, not timed out, no
/// error of the node's own, the last non-blank lines of run's stderr.
fn assert_refused_run(status: &[u8], node: &str) {
    let st: serde_json::Value = serde_json::from_slice(status).unwrap();
    assert_eq!(st["node"], node);
    assert_eq!(st["exit_status"], 2);
    assert_eq!(st["timed_out"], false);
    assert!(st["error"].is_null(), "{st}");
    let tail = st["stderr_tail"].as_array().unwrap();
    assert!(
        tail[0].as_str().unwrap().contains("'--no-such-option'"),
        "{st}"
    );
    assert!(tail.iter().all(|l| !l.as_str().unwrap().trim().is_empty()));
}

#[test]
fn a_streamed_node_sends_its_start_status_and_end_and_leaves_no_scratch() {
    let t = TempDir::new("fleet-node-stream");
    let out = fleet_node("np7", "stream", t.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let got = events(&out);
    assert_eq!(got.len(), 3, "{got:?}");
    assert_eq!(got[0], Event::Started("np7".into()));
    let Event::File { node, name, bytes } = &got[1] else {
        panic!("{got:?}")
    };
    assert_eq!((node.as_str(), name.as_str()), ("np7", "fleet-node.json"));
    assert_refused_run(bytes, "np7");
    assert_eq!(got[2], Event::Ended("np7".into()));
    // The scratch folder made for the report is removed once sent.
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
}

#[test]
fn a_shared_node_writes_its_status_in_its_folder_and_says_start_and_end() {
    let t = TempDir::new("fleet-node-shared");
    let out = fleet_node("np7", "shared", t.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let got = events(&out);
    assert_eq!(
        got,
        [Event::Started("np7".into()), Event::Ended("np7".into())]
    );
    assert_refused_run(
        &std::fs::read(t.path().join("np7/fleet-node.json")).unwrap(),
        "np7",
    );
}

#[test]
fn without_slurmd_nodename_the_node_is_its_host_name() {
    let t = TempDir::new("fleet-node-host");
    let out = fleet_node("", "shared", t.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let host = host.trim();
    assert_eq!(events(&out)[0], Event::Started(host.into()));
    assert!(t.path().join(host).join("fleet-node.json").is_file());
}

#[test]
fn a_node_name_that_is_no_host_name_is_refused_in_one_line() {
    let t = TempDir::new("fleet-node-bad");
    let out = fleet_node("np 7/..", "shared", t.path());
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("\"np 7/..\" is not a host name"), "{err}");
    assert!(out.stdout.is_empty());
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
}
