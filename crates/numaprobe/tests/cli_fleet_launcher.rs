//! `numaprobe fleet`'s launcher with a stand-in `srun` (a shell script
//! playing the nodes): a node that keeps saying it is alive past
//! `--node-timeout`, a node of a `--nodes` count that never starts, and one
//! that started and never reported. Each is named and the report written
//! without waiting on srun. The run through a real Slurm is
//! scripts/slurm-test.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;
mod fleet;

use cli::s;
use common::TempDir;
use fleet::{fleet_with, node_frames, stand_in};
use std::path::Path;

#[test]
fn a_node_that_keeps_saying_it_is_alive_is_timed_out_by_the_launcher() {
    let t = TempDir::new("fleet-deadline");
    let bin = t.path().join("bin");
    // srun whose one node starts and then only says it is alive, for good.
    stand_in(
        &bin,
        "srun",
        "echo 'NUMAPROBE-FLEET {\"kind\":\"start\",\"node\":\"np1\"}'\n\
         while :; do echo 'NUMAPROBE-FLEET {\"kind\":\"alive\",\"node\":\"np1\"}'; sleep 1; done",
    );
    let out = t.path().join("out");
    // The launcher's own limit is 11 s here; the assertions are on how it
    // ended and what it said.
    let o = fleet_with(
        &bin,
        &[
            "--nodes",
            "1",
            "--node-timeout",
            "1s",
            "--grace",
            "10s",
            "--report-dir",
            s(&out),
        ],
    );
    assert_eq!(o.status.code(), Some(4));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("numaprobe: np1: timed out: still running ") && err.contains(" s after it started, past its --node-timeout of 1 s and --grace of 10 s; given up on and its task ended; the others go on"),
        "{err}"
    );
    assert!(
        err.contains(
            "1 of 1 nodes failed, timed out, were lost or not run: np1 (timed out: still running"
        ),
        "{err}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("fleet.json")).unwrap()).unwrap();
    assert_eq!(doc["nodes"][0]["status"], "timed_out");
    assert!(
        doc["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("timed out: np1 (still running 10 s, --grace, past --node-timeout 1 s); srun was ended")),
        "{}",
        doc["notes"]
    );
}

/// `--nodes 2`, no list: np1 sends its whole report, the other node never
/// sends a line, and srun (a shell whose child sleeps, holding the job's
/// output open) never ends. The launcher gives up on the missing node
/// itself, names it from Slurm's list of the job's nodes, ends srun's
/// whole process group and writes the report; when Slurm cannot name it,
/// it is counted instead. Either way exit 4.
#[test]
fn a_node_of_a_count_that_never_starts_is_given_up_on_and_named() {
    let t = TempDir::new("fleet-count-deadline");
    let bin = t.path().join("bin");
    let frames = t.path().join("frames");
    std::fs::write(&frames, node_frames("np1", "node1")).unwrap();
    let pids = t.path().join("pids");
    stand_in(
        &bin,
        "srun",
        &format!(
            "cat '{}'\nsleep 100000 &\necho $$ $! > '{}'\nwait",
            frames.display(),
            pids.display()
        ),
    );
    stand_in(
        &bin,
        "squeue",
        "case \"$*\" in *%N*) echo 'np[1-2]';; *) echo 'RUNNING|None';; esac",
    );
    stand_in(
        &bin,
        "scontrol",
        "[ \"$1 $2\" = 'show hostnames' ] && printf 'np1\\nnp2\\n'",
    );
    stand_in(&bin, "scancel", "exit 0");
    // Both gathers: two nodes asked for by count, np2 never starting.
    let gather = |out: &Path| {
        fleet_with(
            &bin,
            &[
                "--nodes",
                "2",
                "--grace",
                "10s",
                "--report-dir",
                s(out),
                "--format",
                "json",
            ],
        )
    };
    let out = t.path().join("out");
    let o = gather(&out);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(
        err.contains("numaprobe: np2: never started: its task had not started 10 s (--grace) after the first node's did; the others go on"),
        "{err}"
    );
    assert!(
        err.lines().last().unwrap().contains("1 of 2 nodes failed, timed out, were lost or not run: np2 (never started: its task had not started 10 s"),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let st: Vec<(&str, &str)> = doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["name"].as_str().unwrap(), n["status"].as_str().unwrap()))
        .collect();
    assert_eq!(st, [("np1", "ok"), ("np2", "failed")], "{doc}");
    assert!(
        doc["notes"]
            .to_string()
            .contains("never started: np2; srun was ended and the job cancelled"),
        "{}",
        doc["notes"]
    );
    assert!(out.join("fleet.md").is_file() && out.join("nodes/np1/run.json").is_file());
    // srun and the child it left are both gone.
    let ids = std::fs::read_to_string(&pids).unwrap();
    for pid in ids.split_whitespace() {
        let gone = !Path::new("/proc").join(pid).exists()
            || std::fs::read_to_string(Path::new("/proc").join(pid).join("stat"))
                .is_ok_and(|s| s.contains(") Z "));
        assert!(gone, "{pid} of srun's group is still there");
    }

    // Slurm cannot say which nodes the job has: the missing one is counted.
    stand_in(&bin, "squeue", "exit 1");
    let out = t.path().join("out2");
    let o = gather(&out);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(
        err.contains("numaprobe: 1 of the job's 2 nodes sent nothing and Slurm did not name them: given up on"),
        "{err}"
    );
    assert!(
        err.lines().last().unwrap().contains("1 of 2 nodes failed, timed out, were lost or not run: 1 node(s) Slurm did not name (sent nothing)"),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["nodes"].as_array().unwrap().len(), 1, "{doc}");
    assert!(
        doc["notes"].to_string().contains("1 of 2 nodes sent nothing (their names are unknown without --nodelist, and Slurm did not say)"),
        "{}",
        doc["notes"]
    );
    // Given up on, so the job was ended: said once, with the count.
    assert!(
        doc["notes"]
            .to_string()
            .contains("1 unnamed node(s) never started; srun was ended and the job cancelled"),
        "{}",
        doc["notes"]
    );
}

/// Asked for by count, a node that started and then sent nothing more
/// before srun ended is named as such (exit 4), not left out of a report
/// that would then look whole.
#[test]
fn a_count_s_node_that_started_and_never_reported_is_named() {
    use numaprobe_core::analysis::fleet::stream::Frame;
    let t = TempDir::new("fleet-count-unreported");
    let bin = t.path().join("bin");
    let frames = t.path().join("frames");
    let text = Frame::Start { node: "np1".into() }.line() + &node_frames("np2", "node1");
    std::fs::write(&frames, text).unwrap();
    stand_in(&bin, "srun", &format!("cat '{}'", frames.display()));
    stand_in(&bin, "scancel", "exit 0");
    let out = t.path().join("out");
    let o = fleet_with(
        &bin,
        &["--nodes", "2", "--report-dir", s(&out), "--format", "json"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["nodes"][0]["name"], "np1", "{doc}");
    assert_eq!(
        doc["nodes"][0]["reason"],
        "its task started but never said how it ended (killed, or the job's time ran out)"
    );
    assert_eq!(doc["nodes"][1]["status"], "ok", "{doc}");
}
