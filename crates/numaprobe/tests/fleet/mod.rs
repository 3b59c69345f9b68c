//! Stand-ins for Slurm shared by the fleet's end-to-end tests: a script
//! put on PATH under a Slurm tool's name (srun, squeue, scancel...), the
//! frames one node sends back (a fixture node's run.json and a status
//! saying it ended well), and `fleet` run with those stand-ins first on
//! PATH, killed and failed if it hangs.

#![allow(dead_code)] // each test binary uses its own subset

use numaprobe_core::analysis::fleet::stream::Frame;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The gathered fixture fleet (`tests/fixtures/fleet/NAME`).
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/fleet")
        .join(name)
}

/// The run.json of `node` in the `taskset-one-cpu` fixture fleet.
pub fn fixture_run(node: &str) -> PathBuf {
    fixture("taskset-one-cpu").join(node).join("run.json")
}

/// What one node sends back: its start, its run.json (`fixture_node`'s),
/// a status saying it ended well, its end.
pub fn node_frames(node: &str, fixture_node: &str) -> String {
    let run = std::fs::read(fixture_run(fixture_node)).unwrap();
    let mut out = Frame::Start { node: node.into() }.line();
    for f in Frame::file(node, "run.json", &run) {
        out += &f.line();
    }
    let status = format!(
        "{{\"node\":\"{node}\",\"exit_status\":0,\"signal\":null,\"timed_out\":false,\"error\":null,\"stderr_tail\":[],\"elapsed_s\":1.0}}"
    );
    for f in Frame::file(node, "fleet-node.json", status.as_bytes()) {
        out += &f.line();
    }
    out + &Frame::End { node: node.into() }.line()
}

/// A stand-in for Slurm's `name` in `bin` (made if missing), running
/// `body` (a shell script); its path.
pub fn stand_in(bin: &Path, name: &str, body: &str) -> PathBuf {
    std::fs::create_dir_all(bin).unwrap();
    let p = bin.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// A stand-in for Slurm's `name` in `bin` that appends its arguments to
/// `bin/name.calls`, then runs `body`; the calls file's path.
pub fn recorded_stand_in(bin: &Path, name: &str, body: &str) -> PathBuf {
    let calls = bin.join(format!("{name}.calls"));
    stand_in(
        bin,
        name,
        &format!("printf '%s\\n' \"$*\" >>'{}'\n{body}", calls.display()),
    );
    calls
}

/// How a recorded stand-in was called, one line a call; empty when it
/// never was.
pub fn calls(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

/// An srun in `dir/bin` that runs `before` (a shell line) and then prints
/// the frames of `nodes` (name, fixture node) at once; the folder to put
/// first on PATH.
pub fn fake_srun(dir: &Path, before: &str, nodes: &[(&str, &str)]) -> PathBuf {
    let bin = dir.join("bin");
    let frames = dir.join("frames");
    let text: String = nodes.iter().map(|(n, f)| node_frames(n, f)).collect();
    std::fs::write(&frames, text).unwrap();
    stand_in(
        &bin,
        "srun",
        &format!("{before}\ncat '{}'", frames.display()),
    );
    bin
}

/// Start `fleet ARGS` with `bin` first on PATH, its output piped.
pub fn spawn_fleet(bin: &Path, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_numaprobe"))
        .arg("fleet")
        .args(args)
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Wait for a fleet started by [`spawn_fleet`]; one still going after
/// [`HANG`] is killed and the test fails (a guard against a hang only, far
/// above every run's own deadline: no test waits on it).
pub fn finish(mut child: Child) -> Output {
    let until = Instant::now() + HANG;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("fleet did not end on its own deadline");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.wait_with_output().unwrap()
}

/// How long a fleet may run before a test takes it for hung.
pub const HANG: Duration = Duration::from_secs(300);

/// Run `fleet ARGS` with `bin` first on PATH, to its end ([`finish`]).
pub fn fleet_with(bin: &Path, args: &[&str]) -> Output {
    finish(spawn_fleet(bin, args))
}

/// No ESC or CR of a folder's name, of a node's error output or of Slurm's
/// words (srun's, sinfo's) reaches the terminal or the fleet's files.
pub fn assert_clean(what: &str, bytes: &[u8]) {
    assert!(
        !bytes.iter().any(|b| *b == 0x1b || *b == b'\r'),
        "{what}: {:?}",
        String::from_utf8_lossy(bytes)
    );
}

/// Each node's name and status in a fleet's JSON document, in its order.
pub fn statuses(doc: &serde_json::Value) -> Vec<(String, String)> {
    doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["name"].as_str().unwrap().into(),
                n["status"].as_str().unwrap().into(),
            )
        })
        .collect()
}
