//! Helpers shared by the binary's end-to-end tests: running the built
//! `numaprobe` and reading what it gave back (a success's stdout or JSON,
//! a usage error's one line). Fixture unpacking is in the core's
//! `tests/common`, which these tests include too.

#![allow(dead_code)] // each test binary uses its own subset

use std::path::Path;
use std::process::{Command, Output};

/// Run the built binary where the test runs.
pub fn numaprobe(args: &[&str]) -> Output {
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
    Command::new(env!("CARGO_BIN_EXE_numaprobe"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run numaprobe")
}

/// Run the built binary in `cwd` with one cell finding its memory node full
/// (the binary's fault injection, `NUMAPROBE_FAULT_FULL_CELL`): a one-node
/// machine cannot make one cell fail and not the others.
pub fn numaprobe_with_full_cell(cell: usize, args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_numaprobe"))
        .args(args)
        .current_dir(cwd)
        .env("NUMAPROBE_FAULT_FULL_CELL", cell.to_string())
        .output()
        .expect("run numaprobe")
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
