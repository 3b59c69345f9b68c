//! Stopping a command that only reads, with real signals: SIGTERM or SIGINT
//! sent to `infer`, `report`, `diff`, `check`, `export`, `study --plan` or
//! `fleet --from` while it reads or analyses a large input ends it at once
//! with 143 / 130 and one line on stderr, and leaves no output file, no
//! temporary file and no folder behind. Nothing here depends on timing:
//! each test waits (with a generous limit, against a hang only) until the
//! process has opened its input, and the input is large enough that reading
//! and analysing it takes seconds on any machine, far longer than it takes
//! to be signalled. The last test signals `fleet --from` once its answer's
//! folder exists: the folder then holds whole files, never nothing. One
//! signals `infer` while its JSON streams to a file: the file is given up,
//! its temporary removed.

#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

mod signalled;

use common::TempDir;
use signalled::inputs::{write_fleet, write_latency_document, write_matrix};
use signalled::{has_opened, left_behind, signal_and_wait, spawn, stderr, wait_until};
use std::path::Path;
use std::process::ExitStatus;
use std::time::Duration;

/// Against a hang only: no test waits this long when numaprobe behaves.
const PATIENCE: Duration = Duration::from_secs(300);

/// Nodes of the crafted MLC matrix: 2.25 million cells, 15 MB of CSV or JSON.
const MATRIX_NODES: usize = 1500;

/// Nodes of the crafted latency document: a million cells, 19 MB, which
/// every reader of documents takes seconds to read and analyse.
const DOCUMENT_NODES: usize = 1000;

/// The gathered fleet: 200 nodes of 2,000 cells each, 21 MB in 200 files.
const FLEET_NODES: usize = 200;
const FLEET_CELLS: usize = 2000;

/// Start `args` in `cwd`, wait until it has opened `input`, send `sig`
/// and wait for its end.
fn signalled_reading(args: &[&str], cwd: &Path, input: &Path, sig: libc::c_int) -> ExitStatus {
    let mut child = spawn(args, cwd);
    wait_until(&mut child, cwd, PATIENCE, "never opened its input", |pid| {
        has_opened(pid, input)
    });
    signal_and_wait(&mut child, sig, cwd, PATIENCE)
}

/// The exit status and the only line on stderr of a command ended by
/// `sig` before it wrote anything.
fn assert_stopped_before_writing(status: ExitStatus, cwd: &Path, sig: libc::c_int) {
    let (code, name) = match sig {
        libc::SIGTERM => (143, "SIGTERM"),
        libc::SIGINT => (130, "SIGINT"),
        _ => unreachable!("the tests send SIGTERM or SIGINT"),
    };
    let err = stderr(cwd);
    assert_eq!(status.code(), Some(code), "{status}: {err}");
    assert_eq!(
        err,
        format!("numaprobe: interrupted by {name} before anything was written\n")
    );
}

fn stopped_infer(json: bool, sig: libc::c_int) {
    let t = TempDir::new("reader-infer");
    let input = if json { "big.json" } else { "big.csv" };
    write_matrix(&t.path().join(input), MATRIX_NODES, json);
    let args = [
        "infer", "--input", input, "--format", "json", "-o", "out.json",
    ];
    let status = signalled_reading(&args, t.path(), &t.path().join(input), sig);
    assert_stopped_before_writing(status, t.path(), sig);
    assert_eq!(
        left_behind(t.path(), &[input, "stderr.txt"]),
        Vec::<String>::new()
    );
}

#[test]
fn sigterm_ends_an_analysis_at_once_with_143_and_writes_nothing() {
    stopped_infer(false, libc::SIGTERM);
}

#[test]
fn sigint_ends_a_parse_at_once_with_130_and_writes_nothing() {
    stopped_infer(true, libc::SIGINT);
}

/// Nodes of the matrix whose inference is stopped while its JSON is being
/// written: 360,000 cells, some 100 MB of JSON, written for seconds.
const WRITTEN_NODES: usize = 600;

/// The size of the temporary beside `name` in `dir`, when there is one.
fn temporary_size(dir: &Path, name: &str) -> Option<u64> {
    std::fs::read_dir(dir).ok()?.flatten().find_map(|e| {
        let n = e.file_name().to_string_lossy().into_owned();
        (n.starts_with(&format!(".{name}.")) && n.ends_with(".tmp"))
            .then(|| e.metadata().map_or(0, |m| m.len()))
    })
}

#[test]
fn sigterm_while_a_file_is_streamed_gives_it_up_and_leaves_no_temporary() {
    let t = TempDir::new("reader-writing");
    write_matrix(&t.path().join("m.csv"), WRITTEN_NODES, false);
    let args = [
        "infer", "--input", "m.csv", "--format", "json", "-o", "out.json",
    ];
    let mut child = spawn(&args, t.path());
    // A megabyte in: the document is being written, far from its end.
    wait_until(
        &mut child,
        t.path(),
        PATIENCE,
        "never began its output",
        |_| temporary_size(t.path(), "out.json").is_some_and(|n| n >= 1 << 20),
    );
    let status = signal_and_wait(&mut child, libc::SIGTERM, t.path(), PATIENCE);
    let err = stderr(t.path());
    assert_eq!(status.code(), Some(143), "{status}: {err}");
    assert_eq!(
        err,
        "numaprobe: interrupted by SIGTERM; what was already written is whole, the rest was not written\n"
    );
    assert_eq!(
        left_behind(t.path(), &["m.csv", "stderr.txt"]),
        Vec::<String>::new()
    );
}

/// `args` (with `lat.json`, the large latency document, in its folder `cwd`)
/// signalled once it has opened the document: the status, the line, and
/// nothing in `cwd` but the document and stderr.
fn stopped_document_reader(tag: &str, args: &[&str], sig: libc::c_int) {
    let t = TempDir::new(&format!("reader-{tag}"));
    let input = t.path().join("lat.json");
    write_latency_document(&input, DOCUMENT_NODES);
    let status = signalled_reading(args, t.path(), &input, sig);
    assert_stopped_before_writing(status, t.path(), sig);
    assert_eq!(
        left_behind(t.path(), &["lat.json", "stderr.txt"]),
        Vec::<String>::new()
    );
}

#[test]
fn sigterm_ends_a_diff_at_once_and_writes_no_answer() {
    stopped_document_reader(
        "diff",
        &[
            "diff",
            "lat.json",
            "lat.json",
            "--format",
            "json",
            "-o",
            "diff.json",
        ],
        libc::SIGTERM,
    );
}

#[test]
fn sigint_ends_a_check_against_measured_matrices_at_once_and_writes_no_answer() {
    stopped_document_reader(
        "check",
        &[
            "check",
            "--expect",
            "lat.json",
            "--measured",
            "lat.json",
            "--format",
            "json",
            "-o",
            "check.json",
        ],
        libc::SIGINT,
    );
}

#[test]
fn sigterm_ends_an_export_at_once_and_writes_no_textfile() {
    stopped_document_reader(
        "export",
        &["export", "--to", "prometheus", "lat.json", "-o", "lat.prom"],
        libc::SIGTERM,
    );
}

#[test]
fn sigint_ends_a_study_plan_reading_its_distances_at_once_and_writes_no_plan() {
    stopped_document_reader(
        "study",
        &[
            "study",
            "--preset",
            "hops",
            "--plan",
            "--distances",
            "lat.json",
            "--format",
            "json",
            "-o",
            "plan.json",
        ],
        libc::SIGINT,
    );
}

/// `report DIR` writes DIR/report.html (and takes DIR's lock to do so):
/// stopped while it reads, the folder holds its document and nothing else.
#[test]
fn sigterm_ends_a_report_at_once_and_leaves_the_folder_as_it_was() {
    let t = TempDir::new("reader-report");
    let dir = t.path().join("r");
    std::fs::create_dir(&dir).unwrap();
    let input = dir.join("lat.json");
    write_latency_document(&input, DOCUMENT_NODES);
    let status = signalled_reading(&["report", "r"], t.path(), &input, libc::SIGTERM);
    assert_stopped_before_writing(status, t.path(), libc::SIGTERM);
    assert_eq!(left_behind(&dir, &["lat.json"]), Vec::<String>::new());
    assert_eq!(
        left_behind(t.path(), &["r", "stderr.txt"]),
        Vec::<String>::new()
    );
}

/// `fleet --from DIR` writes its files into a new folder beside DIR
/// (`DIR-judged`): stopped while it reads the nodes, no such folder is made
/// and DIR is left as it was.
#[test]
fn sigint_ends_a_fleet_judged_from_a_folder_at_once_and_makes_no_folder() {
    let t = TempDir::new("reader-fleet");
    let first = write_fleet(&t.path().join("fl"), FLEET_NODES, FLEET_CELLS);
    let status = signalled_reading(&["fleet", "--from", "fl"], t.path(), &first, libc::SIGINT);
    assert_stopped_before_writing(status, t.path(), libc::SIGINT);
    assert_eq!(
        left_behind(t.path(), &["fl", "stderr.txt"]),
        Vec::<String>::new()
    );
    assert_eq!(
        left_behind(&t.path().join("fl"), &["nodes"]),
        Vec::<String>::new()
    );
    let nodes = std::fs::read_dir(t.path().join("fl/nodes"))
        .unwrap()
        .count();
    assert_eq!(nodes, FLEET_NODES);
}

/// Signalled once `DIR-judged` exists: the folder is never left empty. It
/// is made together with its first file, and a signal that comes then
/// waits for that file to be whole; the stop ends the process with the
/// line that says so, and no temporary file is left (fleet.json is the
/// first file written).
#[test]
fn sigterm_once_the_judged_folder_exists_leaves_whole_files_in_it() {
    let t = TempDir::new("reader-fleet-made");
    write_fleet(&t.path().join("fl"), FLEET_NODES, FLEET_CELLS);
    let judged = t.path().join("fl-judged");
    let mut child = spawn(&["fleet", "--from", "fl", "--format", "markdown"], t.path());
    wait_until(
        &mut child,
        t.path(),
        PATIENCE,
        "never made fl-judged",
        |_| judged.exists(),
    );
    let status = signal_and_wait(&mut child, libc::SIGTERM, t.path(), PATIENCE);
    let err = stderr(t.path());
    assert_eq!(status.code(), Some(143), "{status}: {err}");
    assert!(
        err.ends_with(
            "numaprobe: interrupted by SIGTERM; what was already written is whole, the rest was not written\n"
        ),
        "{err}"
    );
    let files = left_behind(&judged, &[]);
    assert!(files.contains(&"fleet.json".to_string()), "{files:?}");
    assert!(files.iter().all(|f| !f.starts_with('.')), "{files:?}");
    let fleet: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(judged.join("fleet.json")).unwrap()).unwrap();
    assert_eq!(fleet["kind"], "fleet");
    assert_eq!(fleet["nodes"].as_array().map(Vec::len), Some(FLEET_NODES));
}
