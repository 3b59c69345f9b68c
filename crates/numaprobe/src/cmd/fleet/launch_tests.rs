//! The launcher against stand-ins for srun: what srun and the nodes send
//! (hostile lines, frames from nodes not asked for or past the job's
//! count, a streamed file's name, srun's own stderr), and the stand-ins
//! the other two files share. When the launcher gives up (lost nodes, the
//! node limit and the grace, the start timeout, the deadline):
//! `launch_deadline_tests.rs`; how srun and its group are ended and reaped
//! (a failed gather, giving up, a stop request): `launch_srun_tests.rs`.

use super::*;
use numaprobe_core::analysis::fleet::stream::Frame;

#[path = "launch_deadline_tests.rs"]
mod deadlines;
#[path = "launch_srun_tests.rs"]
mod srun_end;

const WATCH: Watch = Watch {
    grace: Duration::from_secs(30),
    timeout: Duration::from_secs(3600),
    count: None,
    // Not the process's flag: another test of this binary raises it.
    stop_requested: || false,
    start_timeout: Duration::from_secs(3600),
    job_state: || JobState::Running,
    job_nodes: || None,
};

/// A folder of its own under the system's temporary folder.
fn scratch(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("np-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// What a node sends: its start, a run.json, its status and its end.
fn node_lines(node: &str) -> Vec<u8> {
    let mut out = Frame::Start { node: node.into() }.line();
    for f in Frame::file(node, "run.json", &[b'x'; 3000]) {
        out += &f.line();
    }
    let status = format!(
        "{{\"node\":\"{node}\",\"exit_status\":0,\"signal\":null,\"timed_out\":false,\"error\":null,\"stderr_tail\":[],\"elapsed_s\":1.0}}"
    );
    for f in Frame::file(node, STATUS_FILE, status.as_bytes()) {
        out += &f.line();
    }
    out += &Frame::End { node: node.into() }.line();
    out.into_bytes()
}

/// Is `pid` a process (a zombie counts: it was not reaped)?
fn exists(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// The launcher with `sh -c script` as srun, for the `asked` nodes, no
/// progress shown.
fn launch_sh(
    script: &str,
    dir: &SafeDir,
    asked: &[&str],
    watch: Watch,
) -> anyhow::Result<Gathered> {
    let asked: Vec<String> = asked.iter().map(|n| n.to_string()).collect();
    launch(
        Path::new("/bin/sh"),
        &["-c".into(), script.into()],
        dir,
        &asked,
        watch,
        |_, _| {},
    )
}

/// The stand-in for srun that wrote its pid to `pidfile` was ended and
/// reaped.
fn assert_srun_ended(pidfile: &Path) {
    let pid: i32 = std::fs::read_to_string(pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!exists(pid), "the stand-in for srun ({pid}) is still there");
}

/// srun that sends `frames` and then holds the job's output open for good
/// (a node of the job never heard from, or a step that does not end).
fn holding_srun(d: &Path, frames: &[u8]) -> Vec<String> {
    let file = d.join("frames");
    std::fs::write(&file, frames).unwrap();
    let script = format!("cat {}; exec sleep 1000", file.display());
    vec!["-c".into(), script]
}

#[test]
fn hostile_lines_are_skipped_and_the_other_nodes_kept() {
    let d = scratch("fleet-hostile");
    let mut out = Vec::new();
    out.extend(b"NUMAPROBE-FLEET {\"kind\":\"file\",\"node\":\"np9\",\"name\":\"run.json\",\"part\":0,\"parts\":1000000000000,\"b64\":\"QQ==\"}\n");
    out.extend(b"NUMAPROBE-FLEET {\"kind\":\"file\",\"node\":\"np9\",\"name\":\"run.json\",\"part\":0,\"parts\":18446744073709551615,\"b64\":\"QQ==\"}\n");
    // Not UTF-8 in the node's name: no node to name.
    out.extend(b"NUMAPROBE-FLEET {\"kind\":\"start\",\"node\":\"np9\xff\"}\n");
    out.extend(node_lines("np1"));
    // Not ours (no prefix), whatever its bytes: ignored.
    out.extend(b"\xfe\xff srun: a line that is not UTF-8\n");
    out.extend(&[b'z'; 10_000]);
    out.push(b'\n');
    out.extend(node_lines("np2"));
    let frames = d.join("frames");
    std::fs::write(&frames, &out).unwrap();
    let fleet = d.join("fleet");
    std::fs::create_dir(&fleet).unwrap();
    let held = SafeDir::own(&fleet, "--report-dir", false).unwrap();
    let mut ended = Vec::new();
    let g = launch(
        Path::new("/bin/cat"),
        &[frames.display().to_string()],
        &held,
        &[],
        WATCH,
        |n, _| ended.push(n.to_string()),
    )
    .unwrap();
    assert_eq!(ended, ["np1", "np2"]);
    assert_eq!(g.started, ["np1", "np2"]);
    assert_eq!(g.srun_status, Some(0));
    for n in ["np1", "np2"] {
        assert_eq!(
            std::fs::read(fleet.join(n).join("run.json")).unwrap(),
            [b'x'; 3000]
        );
    }
    assert!(!fleet.join("np9").exists());
    let p = g.problems.join("\n");
    assert!(
        p.contains("np9: 2 lines of the job's output skipped (the first: run.json: piece 0 of 1000000000000"),
        "{p}"
    );
    assert!(p.contains("an unnamed node: 2 lines"), "{p}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// A node of the job writing frames in the name of a node the job did
/// not ask for: that node gets no folder, and a warning names it.

#[test]
fn frames_of_a_node_not_in_the_nodelist_are_skipped_naming_it() {
    let d = scratch("fleet-not-asked");
    let mut out = node_lines("np1");
    out.extend(node_lines("evil"));
    out.extend(node_lines("np2"));
    let frames = d.join("frames");
    std::fs::write(&frames, &out).unwrap();
    let fleet = d.join("fleet");
    std::fs::create_dir(&fleet).unwrap();
    let held = SafeDir::own(&fleet, "--report-dir", false).unwrap();
    let asked = ["np1".to_string(), "np2".to_string()];
    let mut ended = Vec::new();
    let g = launch(
        Path::new("/bin/cat"),
        &[frames.display().to_string()],
        &held,
        &asked,
        WATCH,
        |n, _| ended.push(n.to_string()),
    )
    .unwrap();
    assert_eq!(ended, ["np1", "np2"]);
    assert_eq!(g.started, ["np1", "np2"]);
    assert!(!fleet.join("evil").exists());
    assert!(fleet.join("np2/run.json").is_file());
    let p = g.problems.join("\n");
    assert!(
        p.contains("evil: ") && p.contains("lines of the job's output skipped (the first: not one of the job's nodes (np1, np2)"),
        "{p}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn with_a_node_count_the_names_beyond_it_are_not_taken() {
    let d = scratch("fleet-count");
    let mut out = node_lines("np1");
    for n in 0..24 {
        out.extend(node_lines(&format!("fake{n}")));
    }
    let frames = d.join("frames");
    std::fs::write(&frames, &out).unwrap();
    let fleet = d.join("fleet");
    std::fs::create_dir(&fleet).unwrap();
    let held = SafeDir::own(&fleet, "--report-dir", false).unwrap();
    let watch = Watch {
        count: Some(1),
        ..WATCH
    };
    let g = launch(
        Path::new("/bin/cat"),
        &[frames.display().to_string()],
        &held,
        &[],
        watch,
        |_, _| {},
    )
    .unwrap();
    assert_eq!(g.started, ["np1"]);
    let folders: Vec<_> = std::fs::read_dir(&fleet)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(folders, ["np1"]);
    let p = g.problems.join("\n");
    assert!(
        p.contains("fake23: ") && p.contains("(the first: more node names than the job's 1 nodes"),
        "{p}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_streamed_file_cannot_leave_the_fleet_folder() {
    let d = scratch("fleet-save");
    let held = SafeDir::own(&d, "--report-dir", false).unwrap();
    assert!(save(&held, "..", "x", b"").is_err());
    assert!(save(&held, "np1", "../x", b"").is_err());
    save(&held, "np1", "run.json", b"{}").unwrap().unwrap();
    assert!(d.join("np1/run.json").exists());
    std::fs::remove_dir_all(&d).unwrap();
}

/// srun's words about the allocation are shown as they come; anything
/// else it or a task writes to stderr is kept for the end, not shown.
#[test]
fn only_srun_s_words_about_the_allocation_are_news() {
    for news in [
        "srun: job 9 queued and waiting for resources",
        "srun: job 9 has been allocated resources",
        "srun: Required node not available (down, drained or reserved)",
        "srun: job 9 allocation revoked",
    ] {
        assert!(is_queue_news(news), "{news}");
    }
    for other in [
        "srun: error: task 0: Exited with exit code 1",
        "chatter",
        "",
    ] {
        assert!(!is_queue_news(other), "{other}");
    }
}

/// srun's stderr is held bounded whatever it writes, and its last lines
/// are what the launcher keeps: the failure's line names its last error.
#[test]
fn srun_s_stderr_is_bounded_and_its_last_lines_kept() {
    // The tail as the reading thread keeps it, fed 1000 bytes at a time
    // (never landing on the bound exactly), each line shown as it comes.
    let mut tail = Vec::new();
    for i in 0..100u32 {
        let chunk = format!("{:0>99}\n", i).repeat(10);
        tail.extend_from_slice(chunk.as_bytes());
        let before = tail.len();
        let mut shown = before;
        keep_tail(&mut tail, &mut shown);
        assert!(tail.len() <= 2 * STDERR_KEEP, "{} bytes held", tail.len());
        assert!(
            tail.len() == before || tail.len() == STDERR_KEEP,
            "{} bytes",
            tail.len()
        );
        assert_eq!(shown, tail.len(), "every byte held was shown");
    }
    assert!(tail.ends_with(format!("{:0>99}\n", 99).as_bytes()));
    // Up to twice the bound the tail is left whole; one byte past it, the
    // oldest bytes go down to the bound and what was shown moves along.
    let mut tail = vec![b'x'; 2 * STDERR_KEEP];
    let mut shown = 2 * STDERR_KEEP - 10;
    keep_tail(&mut tail, &mut shown);
    assert_eq!((tail.len(), shown), (2 * STDERR_KEEP, 2 * STDERR_KEEP - 10));
    tail.push(b'y');
    keep_tail(&mut tail, &mut shown);
    assert_eq!((tail.len(), shown), (STDERR_KEEP, STDERR_KEEP - 11));
    assert_eq!(tail.last(), Some(&b'y'));
    // Through srun: 3000 lines of chatter, then its error, exit 3.
    let d = scratch("fleet-stderr");
    let held = SafeDir::own(&d, "--report-dir", false).unwrap();
    let script = "i=0; while [ $i -lt 3000 ]; do echo \"chatter $i of srun's stderr\" >&2; i=$((i+1)); done; echo 'srun: error: the last words' >&2; exit 3";
    let g = launch_sh(script, &held, &[], WATCH).unwrap();
    assert_eq!(g.srun_status, Some(3));
    let want: Vec<String> = (2993..3000)
        .map(|i| format!("chatter {i} of srun's stderr"))
        .chain(["srun: error: the last words".to_string()])
        .collect();
    assert_eq!(g.srun_stderr, want);
    assert_eq!(
        srun_failure(&g),
        "srun failed (exit status 3): srun: error: the last words"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// srun's stderr is read line by line as it comes: a line is taken once
/// its newline has come, and once only.
#[test]
fn srun_s_stderr_lines_are_taken_whole_and_once() {
    let mut tail = b"srun: job 9 queued\n\nsrun: job 9 has been".to_vec();
    let mut shown = 0;
    let mut lines = Vec::new();
    each_new_line(&tail, &mut shown, |l| lines.push(l));
    assert_eq!(lines, ["srun: job 9 queued", ""]);
    assert_eq!(shown, 20);
    tail.extend_from_slice(b" allocated resources\n");
    each_new_line(&tail, &mut shown, |l| lines.push(l));
    assert_eq!(
        lines[2..],
        ["srun: job 9 has been allocated resources".to_string()]
    );
    assert_eq!(shown, tail.len());
}

/// A node's first few skipped lines are shown as they come, cleaned of
/// what a terminal would act on; the rest are only counted for the end.
#[test]
fn only_a_node_s_first_skipped_lines_are_shown() {
    for n in 1..=SHOWN_SKIPS {
        assert_eq!(
            skip_warning("np1", "not a frame", n).as_deref(),
            Some("warning: np1: a line of the job's output skipped: not a frame")
        );
    }
    assert_eq!(skip_warning("np1", "not a frame", SHOWN_SKIPS + 1), None);
    let shown = skip_warning("np1\x1b[2J", "bad\rline", 1).unwrap();
    assert!(
        !shown.contains('\x1b') && !shown.contains('\r'),
        "{shown:?}"
    );
}

/// The count's nodes that sent nothing and that Slurm did not name are
/// said to be given up on, out of the job's count; when every one was
/// named, nothing is said.
#[test]
fn only_nodes_left_unnamed_are_said_to_be_given_up_on_unnamed() {
    assert_eq!(unnamed_line(0, Some(4)), None);
    assert_eq!(
        unnamed_line(2, Some(4)).as_deref(),
        Some("2 of the job's 4 nodes sent nothing and Slurm did not name them: given up on; the others go on")
    );
    assert_eq!(
        unnamed_line(1, None).as_deref(),
        Some("1 of the job's 1 nodes sent nothing and Slurm did not name them: given up on; the others go on")
    );
}
