//! The fleet folder held as a handle: `fleet --from` and a gather never
//! write through a link or into a FIFO planted in the folder (plain, and
//! world-writable with the sticky bit), a folder of another user is
//! refused, and node folders live under `nodes/`, so a node named like one
//! of the fleet's files cannot suppress the report (nor in a flat folder
//! given to `--from --replace`: the files go beside it). A gather runs against
//! a stand-in for srun on PATH that prints what nodes would send.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;
mod fleet;

use cli::{bounded_with, mkfifo, s, usage_error};
use common::TempDir;
use fleet::fake_srun;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;

/// A gather refused (exit 2): its stderr (the srun line, then the error).
fn refused(o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    err
}

/// Run numaprobe with `srun` (a folder holding a stand-in) first on PATH.
fn run(args: &[&str], srun: Option<&Path>) -> Output {
    bounded_with(args, Path::new("."), srun)
}

/// A gathered folder of two fixture nodes in `layout` ("" flat, "nodes").
fn gathered(dir: &Path, layout: &str) {
    for n in ["node1", "node2"] {
        let to = dir.join(layout).join(n);
        std::fs::create_dir_all(&to).unwrap();
        std::fs::copy(fleet::fixture_run(n), to.join("run.json")).unwrap();
    }
}

#[test]
fn from_reads_both_layouts_and_never_writes_through_a_planted_name() {
    let t = TempDir::new("fleet-from-planted");
    for (i, layout) in ["", "nodes"].into_iter().enumerate() {
        let dir = t.path().join(format!("g{i}"));
        gathered(&dir, layout);
        let o = run(
            &["fleet", "--replace", "--from", s(&dir), "--format", "json"],
            None,
        );
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["nodes"].as_array().unwrap().len(), 2, "{v}");
        assert!(dir.join("fleet.json").is_file());
        // World-writable with the sticky bit, as a shared gather folder is.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let precious = t.path().join(format!("precious{i}"));
        std::fs::write(&precious, "keep\n").unwrap();
        std::fs::remove_file(dir.join("fleet.md")).unwrap();
        std::os::unix::fs::symlink(&precious, dir.join("fleet.md")).unwrap();
        let err = usage_error(&run(&["fleet", "--replace", "--from", s(&dir)], None));
        assert!(err.contains("fleet.md: a symbolic link"), "{err}");
        assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep\n");
        std::fs::remove_file(dir.join("fleet.md")).unwrap();
        std::fs::remove_file(dir.join("fleet.csv")).unwrap();
        mkfifo(&dir.join("fleet.csv"));
        let err = usage_error(&run(&["fleet", "--replace", "--from", s(&dir)], None));
        assert!(err.contains("fleet.csv: a FIFO"), "{err}");
    }
}

#[test]
fn a_folder_of_another_user_is_refused_for_from_and_report_dir() {
    let t = TempDir::new("fleet-owner");
    let dir = t.path().join("g");
    gathered(&dir, "nodes");
    let empty = t.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    if std::os::unix::fs::chown(&dir, Some(4242), None).is_err() {
        eprintln!("skipped: needs root to chown a folder to another uid");
        return;
    }
    std::os::unix::fs::chown(&empty, Some(4242), None).unwrap();
    let err = usage_error(&run(&["fleet", "--replace", "--from", s(&dir)], None));
    assert!(err.contains("owned by uid 4242"), "{err}");
    assert!(!dir.join("fleet.json").exists());
    let bin = fake_srun(t.path(), "", &[]);
    let err = usage_error(&run(
        &["fleet", "--nodes", "1", "--report-dir", s(&empty)],
        Some(&bin),
    ));
    assert!(err.contains("owned by uid 4242"), "{err}");
    assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 0);
}

#[test]
fn a_node_named_like_a_fleet_file_cannot_suppress_the_report() {
    let t = TempDir::new("fleet-names");
    let fleet = t.path().join("fleet");
    let bin = fake_srun(
        t.path(),
        "",
        &[("fleet.json", "node1"), ("fleet.md", "node2")],
    );
    let o = run(
        &[
            "fleet",
            "--nodes",
            "2",
            "--report-dir",
            s(&fleet),
            "--format",
            "json",
        ],
        Some(&bin),
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    let names: Vec<&str> = v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["fleet.json", "fleet.md"], "{v}");
    assert!(fleet.join("nodes/fleet.json/run.json").is_file());
    for f in ["fleet.json", "fleet.md", "fleet.csv", "fleet.html"] {
        assert!(fleet.join(f).is_file(), "{f}");
    }
    // The gathered folder reads back the same.
    let again = run(
        &[
            "fleet",
            "--replace",
            "--from",
            s(&fleet),
            "--format",
            "json",
        ],
        None,
    );
    let w: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(w["nodes"], v["nodes"]);
}

/// A gather into `t/fleet` of `nodes` (name, fixture folder) by the fake
/// srun, `plant` run before their output comes: exit 4 (a node failed),
/// and the fleet's JSON answer with its node list.
fn planted_gather(
    t: &Path,
    plant: &str,
    nodes: &[(&str, &str)],
) -> (serde_json::Value, Vec<serde_json::Value>) {
    let bin = fake_srun(t, plant, nodes);
    let names: Vec<&str> = nodes.iter().map(|(n, _)| *n).collect();
    let o = run(
        &[
            "fleet",
            "--nodelist",
            &names.join(","),
            "--report-dir",
            s(&t.join("fleet")),
            "--format",
            "json",
        ],
        Some(&bin),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let nodes = v["nodes"].as_array().unwrap().clone();
    (v, nodes)
}

/// A gather whose `np1` folder something else took (`plant`, a shell line
/// run before the nodes' output comes): exit 4, np1 refused naming what it
/// met, np2 and the fleet's files written. Returns np1's reason.
fn gather_with_np1_planted(t: &Path, plant: &str) -> String {
    let fleet = t.join("fleet");
    let _ = std::fs::remove_dir_all(&fleet);
    let _ = std::fs::remove_dir_all(t.join("bin"));
    let (v, nodes) = planted_gather(t, plant, &[("np1", "node1"), ("np2", "node2")]);
    let names: Vec<&str> = nodes.iter().map(|n| n["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["np1", "np2"], "{v}");
    assert_eq!(nodes[0]["status"], "failed", "{v}");
    assert_ne!(nodes[1]["status"], "failed", "{v}");
    assert!(fleet.join("nodes/np2/run.json").is_file());
    for f in ["fleet.json", "fleet.md", "fleet.csv", "fleet.html"] {
        assert!(fleet.join(f).is_file(), "{f}");
    }
    let why = nodes[0]["reason"].as_str().unwrap().to_string();
    assert!(
        std::fs::read_to_string(fleet.join("fleet.md"))
            .unwrap()
            .contains(&why),
        "{why}"
    );
    why
}

#[test]
fn a_node_folder_planted_during_a_gather_refuses_that_node_alone() {
    let t = TempDir::new("fleet-gather-planted");
    // A mode-700 folder elsewhere, and a FIFO without a reader.
    let private = t.path().join("private");
    std::fs::create_dir(&private).unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    let fifo = t.path().join("fifo");
    mkfifo(&fifo);
    let nodes = t.path().join("fleet/nodes");
    // The fleet folder world-writable with the sticky bit, as shared
    // scratch is, and the node's folder taken by a link, a FIFO, a file.
    let open_up = format!("chmod 1777 '{0}' '{0}/..'", nodes.display());
    for (plant, kind) in [
        (
            format!("ln -s '{}' '{}/np1'", private.display(), nodes.display()),
            "a symbolic link",
        ),
        (format!("mkfifo '{}/np1'", nodes.display()), "a FIFO"),
        (
            format!("echo x > '{}/np1'", nodes.display()),
            "a regular file",
        ),
    ] {
        let why = gather_with_np1_planted(t.path(), &format!("{open_up}\n{plant}"));
        assert!(
            why.contains(&format!("its folder nodes/np1 was replaced by {kind}")),
            "{why}"
        );
        assert_eq!(std::fs::read_dir(&private).unwrap().count(), 0);
    }
    // A file of the node's folder planted as a link to the FIFO: refused
    // the same way, nothing blocks on it.
    let plant = format!(
        "mkdir '{0}/np1' && ln -s '{1}' '{0}/np1/run.json'",
        nodes.display(),
        fifo.display()
    );
    let why = gather_with_np1_planted(t.path(), &plant);
    assert!(
        why.contains("its nodes/np1/run.json was replaced by a symbolic link"),
        "{why}"
    );
}

/// A folder under `nodes/` that no node sent (made during the gather) is
/// read as a node; its run.json, a regular file that is not text, is that
/// node's failure in its own words, not taken for something planted.
#[test]
fn a_node_s_unreadable_run_json_is_named_as_such_not_as_planted() {
    let t = TempDir::new("fleet-gather-not-text");
    let fleet = t.path().join("fleet");
    let plant = format!(
        "mkdir '{0}/np3' && printf '\\377\\376' > '{0}/np3/run.json'",
        fleet.join("nodes").display()
    );
    let (v, nodes) = planted_gather(t.path(), &plant, &[("np1", "node1")]);
    let names: Vec<&str> = nodes.iter().map(|n| n["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["np1", "np3"], "{v}");
    assert_eq!(nodes[1]["status"], "failed", "{v}");
    let why = nodes[1]["reason"].as_str().unwrap();
    assert!(why.starts_with("its run.json cannot be read: "), "{why}");
    assert!(why.ends_with("np3/run.json: not UTF-8 text"), "{why}");
}

#[test]
fn a_fleet_file_planted_during_a_gather_is_refused_not_followed() {
    // The fleet folder as it is made (mode 755 under a private temporary
    // folder), and world-writable with the sticky bit, as shared scratch is.
    for (tag, open_up) in [("plain", false), ("sticky", true)] {
        let t = TempDir::new(&format!("fleet-gather-planted-file-{tag}"));
        let fleet = t.path().join("fleet");
        let fifo = t.path().join("fifo");
        mkfifo(&fifo);
        let mut plant = format!("ln -s '{}' '{}/fleet.csv'", fifo.display(), fleet.display());
        if open_up {
            plant = format!("chmod 1777 '{0}' '{0}/..'\n{plant}", fleet.display());
        }
        let bin = fake_srun(t.path(), &plant, &[("np1", "node1")]);
        let err = refused(&run(
            &["fleet", "--nodes", "1", "--report-dir", s(&fleet)],
            Some(&bin),
        ));
        assert!(err.contains("fleet.csv: a symbolic link"), "{tag}: {err}");
        assert!(fleet.join("nodes/np1/run.json").is_file(), "{tag}");
        if open_up {
            let mode = std::fs::metadata(&fleet).unwrap().permissions().mode();
            assert_eq!(mode & 0o7777, 0o1777, "{tag}: the plant ran");
        }
        assert!(
            std::fs::symlink_metadata(fleet.join("fleet.csv"))
                .unwrap()
                .file_type()
                .is_symlink(),
            "{tag}: the planted link was replaced"
        );
    }
}

/// A flat gathered folder (`DIR/<node>/`) whose node is named `fleet.md`:
/// `--replace` cannot write the fleet's fleet.md there, so the fleet's
/// files go beside it (one line says so) and the node is judged with the
/// others; a link planted under a fleet file's name is still refused.
#[test]
fn replace_on_a_flat_folder_with_a_node_named_like_a_fleet_file_writes_beside_it() {
    let t = TempDir::new("fleet-flat-names");
    let dir = t.path().join("g");
    gathered(&dir, "");
    for node in ["fleet.md", "fleet.json"] {
        std::fs::create_dir(dir.join(node)).unwrap();
        std::fs::copy(fleet::fixture_run("node1"), dir.join(node).join("run.json")).unwrap();
    }
    let o = run(
        &["fleet", "--replace", "--from", s(&dir), "--format", "json"],
        None,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(2), "{err}");
    let said: Vec<&str> = err.lines().filter(|l| l.contains("--replace")).collect();
    assert_eq!(
        said,
        [format!(
            "numaprobe: --replace: {0}/fleet.json is a node's folder, where the fleet's fleet.json would go; the fleet's files go to {0}-judged/ instead ({0} itself is left as it is)",
            dir.display()
        )],
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["fleet.json", "fleet.md", "node1", "node2"], "{v}");
    let judged = t.path().join("g-judged");
    for f in ["fleet.json", "fleet.md", "fleet.csv", "fleet.html"] {
        assert!(judged.join(f).is_file(), "{f}");
        assert!(
            dir.join(f).is_dir() || !dir.join(f).exists(),
            "{f} written in DIR"
        );
    }
    assert!(v["notes"]
        .to_string()
        .contains("judged from the nodes gathered in"));
    // Without the clash, --replace writes into DIR; a link under a fleet
    // file's name is refused, not a reason to write elsewhere.
    std::fs::remove_dir_all(dir.join("fleet.md")).unwrap();
    std::fs::remove_dir_all(dir.join("fleet.json")).unwrap();
    let precious = t.path().join("precious");
    std::fs::write(&precious, "keep\n").unwrap();
    std::os::unix::fs::symlink(&precious, dir.join("fleet.md")).unwrap();
    let err = usage_error(&run(&["fleet", "--replace", "--from", s(&dir)], None));
    assert!(err.contains("fleet.md: a symbolic link"), "{err}");
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep\n");
    assert!(!t.path().join("g-judged-2").exists());
}

/// A job that never starts ends the fleet with exit 5 and nothing written:
/// one pending past --start-timeout (srun said it queued, then nothing), and
/// one srun could not allocate (--immediate, nodes busy); never exit 1,
/// which says the fleet is not uniform.
#[test]
fn a_job_that_never_starts_exits_5_and_writes_nothing() {
    let t = TempDir::new("fleet-never");
    let pending = fake_srun(
        t.path(),
        "echo 'srun: job 9 queued and waiting for resources' >&2\nexec sleep 300",
        &[],
    );
    let out = t.path().join("out");
    let o = run(
        &[
            "fleet",
            "--nodes",
            "2",
            "--start-timeout",
            "1s",
            "--report-dir",
            s(&out),
        ],
        Some(&pending),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(5), "{err}");
    assert!(
        err.lines()
            .last()
            .unwrap()
            .contains("the job did not start within --start-timeout 1 s")
            && err.contains("nothing run"),
        "{err}"
    );
    assert!(!out.exists(), "left {}", out.display());
    let t = TempDir::new("fleet-busy");
    let busy = fake_srun(
        t.path(),
        "echo 'srun: error: Unable to allocate resources: Requested nodes are busy' >&2\nexit 1",
        &[],
    );
    let o = run(
        &[
            "fleet",
            "--nodes",
            "2",
            "--srun-arg=--immediate=15",
            "--report-dir",
            s(&out),
        ],
        Some(&busy),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(5), "{err}");
    assert!(
        err.contains("Requested nodes are busy; nothing run"),
        "{err}"
    );
    assert!(!out.exists());
    let e = refused(&run(
        &["fleet", "--nodes", "2", "--start-timeout", "soon"],
        Some(&busy),
    ));
    assert!(e.contains("--start-timeout 'soon': not a duration"), "{e}");
}

/// A node that said it started and then nothing, srun ending well: the
/// fleet ran (exit 4, not srun's failure), and the node has its folder and
/// a status saying so.
#[test]
fn a_node_that_started_and_sent_nothing_more_gets_its_folder() {
    use numaprobe_core::analysis::fleet::stream::Frame;
    let t = TempDir::new("fleet-started-only");
    let bin = t.path().join("bin");
    let start = Frame::Start { node: "np1".into() }.line();
    fleet::stand_in(&bin, "srun", &format!("echo '{}'", start.trim_end()));
    let out = t.path().join("out");
    let o = run(
        &[
            "fleet",
            "--nodes",
            "1",
            "--report-dir",
            s(&out),
            "--format",
            "json",
        ],
        Some(&bin),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["nodes"][0]["name"], "np1", "{doc}");
    assert_eq!(
        doc["nodes"][0]["reason"],
        "its task started but never said how it ended (killed, or the job's time ran out)"
    );
    assert!(out.join("nodes/np1/fleet-node.json").is_file());
}
