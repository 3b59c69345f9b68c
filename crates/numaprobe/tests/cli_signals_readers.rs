//! Stopping a command that only reads, with real signals: SIGTERM or SIGINT
//! sent to `infer` while it reads or analyses a large matrix ends it at
//! once with 143 / 130 and one line on stderr, and leaves no output file
//! and no temporary file behind. Nothing here depends on timing: each test
//! waits (with a generous limit, against a hang only) until the process has
//! opened its input, and the input is large enough that its analysis takes
//! seconds on any machine, far longer than it takes to be signalled.

#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

mod signalled;

use common::TempDir;
use signalled::{signal_and_wait, spawn, stderr, wait_until};
use std::io::Write;
use std::path::Path;
use std::process::{Child, ExitStatus};
use std::time::Duration;

/// Against a hang only: no test waits this long when numaprobe behaves.
const PATIENCE: Duration = Duration::from_secs(120);

/// Nodes of the crafted matrix: 2.25 million cells, 15 MB of CSV or JSON.
const NODES: usize = 1500;

/// A latency matrix of `NODES` nodes in groups of 8 (90 ns local, 130 ns in
/// the group, 210 ns across, a deterministic ripple of a few percent) as
/// CSV (`json`: false) or as numaprobe's matrix JSON.
fn write_matrix(path: &Path, json: bool) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let cell = |r: usize, c: usize| {
        let base = if r == c {
            90.0
        } else if r / 8 == c / 8 {
            130.0
        } else {
            210.0
        };
        base * (1.0 + 0.02 * (((r * 7919 + c * 104729) % 101) as f64 / 50.0 - 1.0))
    };
    if json {
        let nodes: Vec<String> = (0..NODES).map(|n| n.to_string()).collect();
        let nodes = nodes.join(",");
        write!(
            f,
            "{{\"unit\":\"ns\",\"cpu_nodes\":[{nodes}],\"mem_nodes\":[{nodes}],\"matrix\":["
        )
        .unwrap();
    } else {
        writeln!(f, "# unit: ns").unwrap();
    }
    for r in 0..NODES {
        let row: Vec<String> = (0..NODES).map(|c| format!("{:.1}", cell(r, c))).collect();
        if json {
            write!(f, "{}[{}]", if r > 0 { "," } else { "" }, row.join(",")).unwrap();
        } else {
            writeln!(f, "{}", row.join(",")).unwrap();
        }
    }
    if json {
        write!(f, "]}}").unwrap();
    }
    f.flush().unwrap();
}

/// Has `pid` opened `input`: it holds it open now, or has read at least its
/// size (it read it whole and closed it between two looks).
fn has_opened(pid: u32, input: &Path) -> bool {
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

/// Wait until the child has opened `input`, then send `sig` and wait for its end.
fn signal_once_reading(
    child: &mut Child,
    input: &Path,
    sig: libc::c_int,
    cwd: &Path,
) -> ExitStatus {
    wait_until(child, cwd, PATIENCE, "never opened its input", |pid| {
        has_opened(pid, input)
    });
    signal_and_wait(child, sig, cwd, PATIENCE)
}

/// The folder's files, but the input and the captured stderr.
fn left_behind(dir: &Path, input: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != input && n != "stderr.txt")
        .collect()
}

fn stopped_reader(json: bool, sig: libc::c_int, code: i32, name: &str) {
    let t = TempDir::new(&format!("reader-{name}"));
    let input = if json { "big.json" } else { "big.csv" };
    write_matrix(&t.path().join(input), json);
    let mut child = spawn(
        &[
            "infer", "--input", input, "--format", "json", "-o", "out.json",
        ],
        t.path(),
    );
    let status = signal_once_reading(&mut child, &t.path().join(input), sig, t.path());
    let err = stderr(t.path());
    assert_eq!(status.code(), Some(code), "{status}: {err}");
    assert_eq!(
        err,
        format!("numaprobe: interrupted by {name} before anything was written\n")
    );
    assert_eq!(left_behind(t.path(), input), Vec::<String>::new());
}

#[test]
fn sigterm_ends_an_analysis_at_once_with_143_and_writes_nothing() {
    stopped_reader(false, libc::SIGTERM, 143, "SIGTERM");
}

#[test]
fn sigint_ends_a_parse_at_once_with_130_and_writes_nothing() {
    stopped_reader(true, libc::SIGINT, 130, "SIGINT");
}
