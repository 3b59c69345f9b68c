//! What `numaprobe fleet` asks of Slurm before and around its one srun,
//! against stand-ins for Slurm's client tools on PATH (sinfo, scontrol,
//! srun, scancel) that answer as a cluster would and write down how they
//! were called: a listed node Slurm cannot give is named before anything
//! is allocated, a partition the cluster lacks is refused in one line, a
//! job given up on is cancelled by its own name and no other, and an srun
//! that cannot be run is no Slurm at all.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;
mod fleet;

use cli::{bounded_with, s, text, usage_error};
use common::TempDir;
use fleet::{assert_clean, calls, finish, recorded_stand_in as tool, spawn_fleet};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// An srun that cannot get an allocation: the fleet ends at once.
const SRUN_BUSY: &str =
    "echo 'srun: error: Unable to allocate resources: Requested nodes are busy' >&2\nexit 1";

/// A cluster of three listed nodes: np1 idle, np2 drained by an
/// administrator, np3 running other jobs; sinfo lists np2 once for each of
/// its two partitions.
fn three_nodes(bin: &Path) -> PathBuf {
    tool(
        bin,
        "scontrol",
        "[ \"$1 $2\" = 'show hostnames' ] && printf 'np1\\nnp2\\nnp3\\n'",
    );
    tool(
        bin,
        "sinfo",
        "printf 'np1|idle|none\\nnp2|drained|bad DIMM\\nnp2|drained|bad DIMM\\nnp3|mixed|none\\n'",
    );
    tool(bin, "srun", SRUN_BUSY)
}

#[test]
fn a_listed_node_slurm_cannot_give_is_named_before_anything_runs() {
    let t = TempDir::new("fleet-slurm-states");
    let bin = t.path().join("bin");
    let srun = three_nodes(&bin);
    let out = t.path().join("out");
    let args = ["fleet", "--nodelist", "np[1-3]", "--report-dir", s(&out)];
    // --unavailable fail: nothing is run, exit 4, every unavailable node
    // named with Slurm's reason.
    let mut fail = args.to_vec();
    fail.extend(["--unavailable", "fail"]);
    let o = bounded_with(&fail, t.path(), Some(&bin));
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(
        err.contains("numaprobe: np2: drained: bad DIMM: not run (--unavailable fail)"),
        "{err}"
    );
    assert!(
        err.contains("numaprobe: np3: mixed: busy with other jobs"),
        "{err}"
    );
    assert!(!err.contains("np1:"), "np1 is idle: {err}");
    assert!(
        err.contains(
            "1 of 3 nodes unavailable, nothing run (--unavailable fail): np2 (drained: bad DIMM)"
        ),
        "{err}"
    );
    assert_eq!(calls(&srun), "", "srun was called");
    assert!(!out.exists(), "left {}", out.display());
    // By default the drained node is left out: the job asks for the others
    // by name.
    let o = bounded_with(&args, t.path(), Some(&bin));
    let err = text(&o.stderr);
    assert!(
        err.contains("numaprobe: np2: drained: bad DIMM: left out"),
        "{err}"
    );
    let srun_args = calls(&srun);
    assert_eq!(srun_args.lines().count(), 1, "{srun_args}");
    assert!(srun_args.contains(" --nodelist=np1,np3 "), "{srun_args}");
}

#[test]
fn a_partition_slurm_does_not_have_is_refused_before_anything_runs() {
    let t = TempDir::new("fleet-slurm-partition");
    let bin = t.path().join("bin");
    // sinfo -o %P marks the default partition with a '*'.
    let sinfo = tool(&bin, "sinfo", "printf 'batch*\\ndebug\\n'");
    let srun = tool(&bin, "srun", SRUN_BUSY);
    let run = |partition: &str| {
        bounded_with(
            &["fleet", "--nodes", "2", "--partition", partition],
            t.path(),
            Some(&bin),
        )
    };
    let e = usage_error(&run("bacth"));
    assert!(
        e.contains("--partition bacth: no such partition; this cluster has batch, debug"),
        "{e}"
    );
    assert_eq!(calls(&sinfo), "-h -o %P\n");
    assert_eq!(calls(&srun), "", "srun was called");
    // The default partition is one of them: srun is asked for it.
    let o = run("batch");
    assert_eq!(o.status.code(), Some(5), "{}", text(&o.stderr));
    assert!(
        calls(&srun).contains(" --partition=batch "),
        "{}",
        calls(&srun)
    );
    // sinfo failing (the controller down) cannot say: srun is asked and
    // says it itself.
    std::fs::remove_file(&srun).unwrap();
    let srun = tool(&bin, "srun", SRUN_BUSY);
    tool(
        &bin,
        "sinfo",
        "echo 'sinfo: error: Unable to contact slurm controller' >&2\nexit 1",
    );
    let o = run("bacth");
    assert_eq!(o.status.code(), Some(5), "{}", text(&o.stderr));
    assert!(!text(&o.stderr).contains("no such partition"), "{o:?}");
    assert!(
        calls(&srun).contains(" --partition=bacth "),
        "{}",
        calls(&srun)
    );
}

/// A job pending past --start-timeout is given up on and cancelled with
/// `scancel --me --name=`, the name its srun was given: one that names
/// this fleet's process, so no other fleet's job is cancelled.
#[test]
fn a_job_given_up_on_is_cancelled_in_slurm_by_its_own_name() {
    let t = TempDir::new("fleet-slurm-scancel");
    let bin = t.path().join("bin");
    let srun = tool(
        &bin,
        "srun",
        "echo 'srun: job 9 queued and waiting for resources' >&2\nexec sleep 300",
    );
    let scancel = tool(&bin, "scancel", "");
    let out = t.path().join("out");
    let child = spawn_fleet(
        &bin,
        &[
            "--nodes",
            "2",
            "--start-timeout",
            "1s",
            "--report-dir",
            s(&out),
        ],
    );
    let name = format!("numaprobe-fleet-{}", child.id());
    let o = finish(child);
    assert_eq!(o.status.code(), Some(5), "{}", text(&o.stderr));
    assert!(
        calls(&srun).starts_with(&format!("--job-name={name} ")),
        "{}",
        calls(&srun)
    );
    assert_eq!(calls(&scancel), format!("--me --name={name}\n"));
}

/// srun on PATH as a file without execute permission, or as a folder, is
/// not Slurm's client: one line saying so, nothing written.
#[test]
fn an_srun_that_cannot_be_run_is_no_slurm() {
    let t = TempDir::new("fleet-slurm-noexec");
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(b.join("srun")).unwrap();
    std::fs::write(a.join("srun"), "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(a.join("srun"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = t.path().join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_numaprobe"))
        .args(["fleet", "--nodes", "2", "--report-dir", s(&out)])
        .env("PATH", format!("{}:{}", a.display(), b.display()))
        .output()
        .unwrap();
    let e = usage_error(&o);
    assert!(e.contains("no Slurm found: srun is not on PATH"), "{e}");
    assert!(!out.exists(), "left {}", out.display());
}

/// sinfo's reason for a drained node, srun's lines about the allocation
/// and a node's error output, each carrying ESC and CR: shown escaped on
/// stderr, and never raw in stdout or the fleet's files.
#[test]
fn control_characters_from_slurm_and_a_node_are_shown_escaped() {
    use numaprobe_core::analysis::fleet::stream::Frame;
    let t = TempDir::new("fleet-slurm-esc");
    let bin = t.path().join("bin");
    tool(
        &bin,
        "scontrol",
        "[ \"$1 $2\" = 'show hostnames' ] && printf 'np1\\nnp2\\n'",
    );
    tool(
        &bin,
        "sinfo",
        "printf 'np1|idle|none\\nnp2|drained\\033[31m|bad\\rDIMM\\033]0;owned\\007\\n'",
    );
    tool(&bin, "scancel", "exit 0");
    // np1's task ran and failed, its error output's last line hostile.
    let status = "{\"node\":\"np1\",\"exit_status\":1,\"signal\":null,\"timed_out\":false,\"error\":null,\"stderr_tail\":[\"boom \\u001b[2J\\r\"],\"elapsed_s\":1.0}";
    let mut frames = Frame::Start { node: "np1".into() }.line();
    for f in Frame::file("np1", "fleet-node.json", status.as_bytes()) {
        frames += &f.line();
    }
    frames += &Frame::End { node: "np1".into() }.line();
    let frames_file = t.path().join("frames");
    std::fs::write(&frames_file, frames).unwrap();
    tool(
        &bin,
        "srun",
        &format!(
            "printf 'srun: job 9 queued and waiting for resources\\r\\033[2J now\\n' >&2\n\
             printf 'srun: job 9 has been allocated resources\\033]0;owned\\007\\n' >&2\n\
             cat '{}'",
            frames_file.display()
        ),
    );
    let out = t.path().join("out");
    let o = bounded_with(
        &["fleet", "--nodelist", "np[1-2]", "--report-dir", s(&out)],
        t.path(),
        Some(&bin),
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert_clean("stdout", &o.stdout);
    assert_clean("stderr", &o.stderr);
    for want in [
        "numaprobe: srun: job 9 queued and waiting for resources\\r\\u{1b}[2J now",
        "numaprobe: srun: job 9 has been allocated resources\\u{1b}]0;owned\\u{7}",
        "numaprobe: np2: drained\\u{1b}[31m: bad\\rDIMM\\u{1b}]0;owned\\u{7}: left out",
        "numaprobe: np1: numaprobe run exited with status 1: boom \\u{1b}[2J\\r",
    ] {
        assert!(err.contains(want), "{want} not in {err}");
    }
    for f in ["fleet.md", "fleet.csv", "fleet.html", "fleet.json"] {
        assert_clean(f, &std::fs::read(out.join(f)).unwrap());
    }
}
