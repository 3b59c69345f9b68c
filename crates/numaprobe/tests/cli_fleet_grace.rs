//! `--grace` against a streamed report: a node whose upload takes longer
//! than the grace, each of its lines coming well within it, is a node
//! sending its report, not a lost one; a node silent for the grace is lost
//! all the same. A stand-in srun prints the nodes' frames slowly.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;
mod fleet;

use cli::s;
use common::TempDir;
use fleet::{fleet_with, node_frames, stand_in, statuses};
use numaprobe_core::analysis::fleet::stream::Frame;

/// The grace given to the launcher, and the pause before each of the slow
/// node's lines: a gap a thirteenth of the grace, so no busy host makes
/// one line late, while the upload as a whole outlasts the grace.
const GRACE_S: f64 = 10.0;
const GAP_S: f64 = 0.75;

/// np1 sends its start and its report one line every 0.75 s, its upload
/// (about 20 lines) longer than the 10 s of --grace; np2 starts and then
/// says nothing while srun stays up. np1 is gathered whole and ok, np2 is
/// lost, and srun is ended once np1 is done.
#[test]
fn a_report_sent_slower_than_the_grace_is_gathered_and_a_silent_node_lost() {
    let t = TempDir::new("fleet-slow-upload");
    let bin = t.path().join("bin");
    let slow = node_frames("np1", "node1");
    let lines = slow.lines().count();
    // The point of the test: no line is late, the whole upload is.
    assert!(
        (lines - 1) as f64 * GAP_S > GRACE_S && GAP_S * 10.0 < GRACE_S,
        "{lines} lines"
    );
    let np1 = t.path().join("np1.frames");
    std::fs::write(&np1, slow).unwrap();
    let np2 = t.path().join("np2.frames");
    std::fs::write(&np2, Frame::Start { node: "np2".into() }.line()).unwrap();
    stand_in(
        &bin,
        "srun",
        &format!(
            "cat '{}'\n\
             (while IFS= read -r l; do printf '%s\\n' \"$l\"; sleep {GAP_S}; done < '{}') &\n\
             sleep 100000 &\n\
             wait",
            np2.display(),
            np1.display()
        ),
    );
    stand_in(&bin, "scancel", "exit 0");
    let out = t.path().join("out");
    let o = fleet_with(
        &bin,
        &[
            "--nodes",
            "2",
            "--grace",
            &format!("{GRACE_S}s"),
            "--report-dir",
            s(&out),
            "--format",
            "json",
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(!err.contains("np1: lost"), "{err}");
    assert!(
        err.contains("numaprobe: np2: lost: nothing from it for 10 s (--grace) after it started"),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        statuses(&doc),
        [("np1".into(), "ok".into()), ("np2".into(), "lost".into())],
        "{doc}"
    );
    // np1's report came back whole, byte for byte.
    assert_eq!(
        std::fs::read(out.join("nodes/np1/run.json")).unwrap(),
        std::fs::read(fleet::fixture_run("node1")).unwrap()
    );
}
