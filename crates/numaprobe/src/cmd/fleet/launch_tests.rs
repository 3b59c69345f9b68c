//! The launcher against stand-ins for srun's output: lost nodes, hostile
//! lines, frames from nodes not asked for, srun reaped, files kept in the folder.

use super::*;
use numaprobe_core::analysis::fleet::stream::Frame;

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

#[test]
fn a_silent_node_and_one_that_never_starts_are_lost_after_the_grace() {
    let t0 = Instant::now();
    let s = Duration::from_secs;
    let asked: Vec<String> = ["np1", "np2", "np3"].map(String::from).to_vec();
    let mut w = Watchdog::new(&asked, s(30));
    assert!(
        w.check(t0 + s(100)).is_empty(),
        "nothing started: pending, not lost"
    );
    w.heard("np1", t0);
    w.heard("np2", t0 + s(1));
    assert!(w.check(t0 + s(29)).is_empty());
    w.heard("np1", t0 + s(25));
    // np2 silent since 1 s, np3 never started: both given up on at 31 s.
    let lost = w.check(t0 + s(31));
    let names: Vec<(&str, Gone)> = lost.iter().map(|g| (g.node.as_str(), g.gone)).collect();
    assert_eq!(names, [("np2", Gone::Lost), ("np3", Gone::NeverStarted)]);
    assert!(
        lost[0].why.contains("nothing from it for 30 s"),
        "{}",
        lost[0].why
    );
    assert!(lost[1].why.contains("had not started"), "{}", lost[1].why);
    // Each once.
    assert!(w.check(t0 + s(40)).is_empty());
    assert!(!w.all_accounted(), "np1 is still going");
    w.done("np1");
    assert!(w.all_accounted());
    // A node that said it is done is never lost, however quiet since.
    let mut w = Watchdog::new(&[], s(30));
    w.heard("a", t0);
    w.done("a");
    assert!(w.check(t0 + s(300)).is_empty());
    assert!(w.all_accounted());
}

#[test]
fn a_node_alive_past_its_timeout_and_the_grace_is_timed_out() {
    let t0 = Instant::now();
    let s = Duration::from_secs;
    let asked: Vec<String> = ["np1", "np2", "np3"].map(String::from).to_vec();
    let mut w = Watchdog::new(&asked, s(10)).with_timeout(s(5));
    // np1 says it is alive every 5 s for good; np2 started 4 s later and
    // ends in time; np3 starts 2 s after np1 and is as alive as np1.
    w.heard("np1", t0);
    w.heard("np3", t0 + s(2));
    w.heard("np2", t0 + s(4));
    let mut gone = Vec::new();
    for at in (5..=40).step_by(5) {
        w.heard("np1", t0 + s(at));
        w.heard("np3", t0 + s(at));
        if at == 10 {
            w.done("np2");
        }
        gone.push((at, w.check(t0 + s(at))));
    }
    let when: Vec<(u64, &str, bool)> = gone
        .iter()
        .flat_map(|(at, v)| {
            v.iter()
                .map(move |g| (*at, g.node.as_str(), g.gone == Gone::TimedOut))
        })
        .collect();
    // 5 s of --node-timeout and 10 s of --grace from each one's first frame.
    assert_eq!(when, [(15, "np1", true), (20, "np3", true)]);
    let why = &gone[2].1[0].why;
    assert_eq!(
        why,
        "still running 15 s after it started, past its --node-timeout of 5 s and --grace of 10 s; given up on and its task ended"
    );
    assert!(w.all_accounted(), "np2 done, np1 and np3 given up on");
    // Without a time limit, alive frames keep a node for good.
    let mut w = Watchdog::new(&asked[..1], s(10));
    for at in (0..=600).step_by(5) {
        w.heard("np1", t0 + s(at));
        assert!(w.check(t0 + s(at)).is_empty());
    }
}

#[test]
fn the_launcher_ends_a_job_whose_node_keeps_saying_it_is_alive() {
    let d = scratch("fleet-deadline");
    let pidfile = d.join("pid");
    // A stand-in for srun: np1 starts and then is alive for good.
    let script = format!(
        "echo $$ > {}; echo '{}'; while :; do echo '{}'; sleep 0.2; done",
        pidfile.display(),
        Frame::Start { node: "np1".into() }.line().trim_end(),
        Frame::Alive { node: "np1".into() }.line().trim_end(),
    );
    let fleet = d.join("fleet");
    std::fs::create_dir(&fleet).unwrap();
    let watch = Watch {
        grace: Duration::from_secs(2),
        timeout: Duration::from_secs(1),
        ..WATCH
    };
    let (tx, rx) = mpsc::channel();
    let f = SafeDir::own(&fleet, "--report-dir", false).unwrap();
    std::thread::spawn(move || {
        let g = launch(
            Path::new("/bin/sh"),
            &["-c".into(), script],
            &f,
            &["np1".to_string()],
            watch,
            |_, _| {},
        );
        let _ = tx.send(g);
    });
    // A guard against a hang only: the assertions are on what it did.
    let g = rx
        .recv_timeout(Duration::from_secs(300))
        .expect("the launcher ended")
        .unwrap();
    let names: Vec<&str> = g.timed_out.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["np1"]);
    assert!(g.lost.is_empty());
    assert!(g.gave_up());
    assert!(
        g.timed_out[0]
            .1
            .contains("past its --node-timeout of 1 s and --grace of 2 s"),
        "{}",
        g.timed_out[0].1
    );
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!exists(pid), "the stand-in for srun ({pid}) is still there");
    std::fs::remove_dir_all(&d).unwrap();
}

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
fn srun_is_ended_and_reaped_when_the_gather_fails() {
    let d = scratch("fleet-guard");
    let frames = d.join("frames");
    std::fs::write(&frames, node_lines("np1")).unwrap();
    // The fleet folder removed once held: no node folder can be made in
    // it, a failure of the gather's own (one planted node would be that
    // node's alone).
    let fleet = d.join("fleet");
    std::fs::create_dir(&fleet).unwrap();
    let held = SafeDir::own(&fleet, "--report-dir", false).unwrap();
    std::fs::remove_dir(&fleet).unwrap();
    let pidfile = d.join("pid");
    let script = format!(
        "echo $$ > {}; cat {}; trap '' INT; exec sleep 1000",
        pidfile.display(),
        frames.display()
    );
    let e = launch(
        Path::new("/bin/sh"),
        &["-c".into(), script],
        &held,
        &[],
        WATCH,
        |_, _| {},
    )
    .unwrap_err();
    assert!(
        format!("{e:#}").contains("cannot create") && format!("{e:#}").contains("np1"),
        "{e:#}"
    );
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!exists(pid), "the stand-in for srun ({pid}) is still there");
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

/// A job that stays pending past --start-timeout is given up on (srun, a
/// stand-in that never says a word, is ended), with Slurm's reason; one
/// Slurm says is running is waited for.
#[test]
fn a_job_pending_past_its_start_timeout_is_given_up() {
    let dir = tempfile::tempdir().unwrap();
    let held = SafeDir::own(dir.path(), "--report-dir", false).unwrap();
    let watch = Watch {
        start_timeout: Duration::from_millis(300),
        job_state: || JobState::Pending("Resources".into()),
        ..WATCH
    };
    let g = launch(
        Path::new("/bin/sleep"),
        &["300".to_string()],
        &held,
        &["np1".to_string()],
        watch,
        |_, _| {},
    )
    .unwrap();
    // Ended (SIGTERM), not waited for.
    assert_eq!(g.srun_status, None);
    assert_eq!(
        g.never_started.as_deref(),
        Some("the job did not start within --start-timeout 0 s (pending: Resources)")
    );
    assert!(g.gave_up() && g.started.is_empty());
    // Slurm says it runs: the start is not given up on; the stand-in ends
    // by itself.
    let watch = Watch {
        start_timeout: Duration::from_millis(100),
        job_state: || JobState::Running,
        ..WATCH
    };
    let g = launch(
        Path::new("/bin/sleep"),
        &["1".to_string()],
        &held,
        &["np1".to_string()],
        watch,
        |_, _| {},
    )
    .unwrap();
    assert_eq!(g.never_started, None);
    assert_eq!(g.srun_status, Some(0));
}

/// srun and its job are ended exactly when the launcher gave up on
/// something (a node, the count's shortfall, the deadline, the start);
/// nodes that started, ended or had lines skipped, and a stop request
/// (which ends srun its own way), are no giving up.
#[test]
fn giving_up_is_any_node_or_the_job_given_up_on_and_nothing_else() {
    let mut g = Gathered {
        started: vec!["np1".into()],
        problems: vec!["np1: a line of the job's output skipped".into()],
        stopped: true,
        srun_status: Some(0),
        ..Gathered::default()
    };
    g.ended
        .insert("np1".into(), super::super::node::not_run("np1"));
    assert!(!g.gave_up());
    fn one(s: &str) -> Vec<(String, String)> {
        vec![(s.to_string(), "why".to_string())]
    }
    let each: [fn(&mut Gathered); 7] = [
        |g| g.lost = vec!["np2".into()],
        |g| g.timed_out = one("np2"),
        |g| g.not_started = one("np2"),
        |g| g.unnamed = 1,
        |g| g.unnamed = 2,
        |g| g.overdue = true,
        |g| g.never_started = Some("pending".into()),
    ];
    for (i, give_up) in each.iter().enumerate() {
        let mut g = Gathered::default();
        give_up(&mut g);
        assert!(g.gave_up(), "case {i}: {g:?}");
    }
}

/// When the launcher gives up, srun's whole process group is asked to end
/// (SIGTERM, which srun passes to the job's tasks) before it is killed: a
/// stand-in and the child it left, each ending cleanly on SIGTERM, say they
/// got it, and srun (waiting for its child) exits 0.
#[test]
fn srun_and_its_group_are_asked_to_end_before_they_are_killed() {
    let d = scratch("fleet-term");
    let (termed, child) = (d.join("termed"), d.join("child"));
    // np1 starts, then is silent for good: lost after the grace.
    let script = format!(
        "(trap 'echo term > {}; exit 0' TERM; while :; do sleep 0.1; done) &\n\
         trap 'echo term > {}; wait; exit 0' TERM; echo '{}'; while :; do sleep 0.1; done",
        child.display(),
        termed.display(),
        Frame::Start { node: "np1".into() }.line().trim_end(),
    );
    let fleet = d.join("fleet");
    std::fs::create_dir(&fleet).unwrap();
    let f = SafeDir::own(&fleet, "--report-dir", false).unwrap();
    let watch = Watch {
        grace: Duration::from_secs(1),
        ..WATCH
    };
    let g = launch(
        Path::new("/bin/sh"),
        &["-c".into(), script],
        &f,
        &["np1".to_string()],
        watch,
        |_, _| {},
    )
    .unwrap();
    assert_eq!(g.lost, ["np1"]);
    assert_eq!(std::fs::read_to_string(&termed).unwrap(), "term\n");
    assert_eq!(std::fs::read_to_string(&child).unwrap(), "term\n");
    assert_eq!(g.srun_status, Some(0), "srun ended by its own trap");
    std::fs::remove_dir_all(&d).unwrap();
}

/// Gone, or a zombie nobody reaped (a container's first process may not).
fn gone(pid: &str) -> bool {
    let stat = std::path::Path::new("/proc").join(pid).join("stat");
    std::fs::read_to_string(stat).map_or(true, |s| s.contains(") Z "))
}

/// srun and a child of its group that both ignore SIGTERM are killed
/// once srun's time to end has passed.
#[test]
fn what_ignores_sigterm_in_srun_s_group_is_killed() {
    let d = scratch("fleet-kill");
    let pids = d.join("pids");
    let script = format!(
        "sh -c 'echo $$ >> {0}; trap \"\" TERM; while :; do sleep 0.1; done' &\n\
         echo $$ >> {0}; trap '' TERM; echo '{1}'; while :; do sleep 0.1; done",
        pids.display(),
        Frame::Start { node: "np1".into() }.line().trim_end(),
    );
    let held = SafeDir::own(&d, "--report-dir", false).unwrap();
    let watch = Watch {
        grace: Duration::from_secs(1),
        ..WATCH
    };
    let g = launch(
        Path::new("/bin/sh"),
        &["-c".into(), script],
        &held,
        &["np1".to_string()],
        watch,
        |_, _| {},
    )
    .unwrap();
    assert_eq!(g.lost, ["np1"]);
    assert_eq!(g.srun_status, None, "killed by a signal");
    let ids = std::fs::read_to_string(&pids).unwrap();
    assert_eq!(ids.lines().count(), 2, "{ids}");
    for pid in ids.lines() {
        assert!(gone(pid), "{pid} of srun's group is still there");
    }
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
    // Through srun: 3000 lines of chatter, then its error, exit 3.
    let d = scratch("fleet-stderr");
    let held = SafeDir::own(&d, "--report-dir", false).unwrap();
    let script = "i=0; while [ $i -lt 3000 ]; do echo \"chatter $i of srun's stderr\" >&2; i=$((i+1)); done; echo 'srun: error: the last words' >&2; exit 3";
    let g = launch(
        Path::new("/bin/sh"),
        &["-c".into(), script.into()],
        &held,
        &[],
        WATCH,
        |_, _| {},
    )
    .unwrap();
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

/// Before any node started, the launcher waits until the job's latest
/// start (`--start-timeout` after srun was run) plus the nodes' limit and
/// twice the grace: a job whose start may still come is not given up on,
/// however short the nodes' limit.
#[test]
fn before_any_node_starts_the_deadline_counts_from_the_latest_start() {
    let d = scratch("fleet-latest-start");
    let held = SafeDir::own(&d, "--report-dir", false).unwrap();
    let watch = Watch {
        grace: Duration::from_secs(1),
        timeout: Duration::from_secs(1),
        ..WATCH
    };
    // srun says nothing and ends after a moment.
    let g = launch(
        Path::new("/bin/sh"),
        &["-c".into(), "sleep 0.5".into()],
        &held,
        &["np1".to_string()],
        watch,
        |_, _| {},
    )
    .unwrap();
    assert_eq!(g.srun_status, Some(0));
    assert!(!g.gave_up(), "{g:?}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// Where the stand-in for srun below says it is ready for a stop request.
static STOP_READY: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// A stop request (Ctrl-C) sends SIGTERM to srun's whole group and reads
/// what the nodes send after it: here a task of the group that sends its
/// report when told to stop, srun itself ending on the signal.
#[test]
fn a_stop_request_ends_srun_s_group_and_reads_what_comes_after() {
    let d = scratch("fleet-stop");
    let ready = STOP_READY.get_or_init(|| d.join("ready")).clone();
    let frames = d.join("frames");
    std::fs::write(&frames, node_lines("np1")).unwrap();
    let script = format!(
        "(trap 'cat {}; exit 0' TERM; touch {}; while :; do sleep 0.1; done) &\nwait",
        frames.display(),
        ready.display()
    );
    let fleet = d.join("fleet");
    std::fs::create_dir(&fleet).unwrap();
    let f = SafeDir::own(&fleet, "--report-dir", false).unwrap();
    let watch = Watch {
        stop_requested: || STOP_READY.get().is_some_and(|p| p.exists()),
        ..WATCH
    };
    let g = launch(
        Path::new("/bin/sh"),
        &["-c".into(), script],
        &f,
        &["np1".to_string()],
        watch,
        |_, _| {},
    )
    .unwrap();
    assert!(g.stopped);
    assert_eq!(g.started, ["np1"]);
    assert_eq!(g.ended.keys().collect::<Vec<_>>(), ["np1"]);
    assert!(fleet.join("np1/run.json").is_file());
    std::fs::remove_dir_all(&d).unwrap();
}

/// srun that sends `frames` and then holds the job's output open for good
/// (a node of the job never heard from, or a step that does not end).
fn holding_srun(d: &Path, frames: &[u8]) -> Vec<String> {
    let file = d.join("frames");
    std::fs::write(&file, frames).unwrap();
    let script = format!("cat {}; exec sleep 1000", file.display());
    vec!["-c".into(), script]
}

/// Asked for by count, a node never heard from is named from Slurm's list
/// of the job's nodes (those heard from left out), or counted when Slurm
/// cannot say; either way srun is ended and the others kept.
#[test]
fn a_count_s_silent_node_is_named_from_slurm_s_list_or_counted() {
    let d = scratch("fleet-count-named");
    let args = holding_srun(&d, &node_lines("np1"));
    let held = SafeDir::own(&d, "--report-dir", false).unwrap();
    let watch = Watch {
        grace: Duration::from_secs(1),
        count: Some(2),
        job_nodes: || Some(vec!["np1".into(), "np2".into()]),
        ..WATCH
    };
    let g = launch(Path::new("/bin/sh"), &args, &held, &[], watch, |_, _| {}).unwrap();
    let names: Vec<&str> = g.not_started.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["np2"]);
    assert_eq!(g.unnamed, 0);
    assert_eq!(g.ended.keys().collect::<Vec<_>>(), ["np1"]);
    assert_eq!(g.srun_status, None, "srun ended");
    // Slurm names nobody: the missing node is counted.
    let watch = Watch {
        job_nodes: || None,
        ..watch
    };
    let g = launch(Path::new("/bin/sh"), &args, &held, &[], watch, |_, _| {}).unwrap();
    assert!(g.not_started.is_empty(), "{:?}", g.not_started);
    assert_eq!(g.unnamed, 1);
    assert!(g.gave_up());
    std::fs::remove_dir_all(&d).unwrap();
}

/// Every node done and srun still running at the launcher's deadline:
/// srun is ended, and that is said (overdue), no node given up on.
#[test]
fn srun_still_running_at_the_deadline_with_every_node_done_is_ended() {
    let d = scratch("fleet-overdue");
    let args = holding_srun(&d, &node_lines("np1"));
    let held = SafeDir::own(&d, "--report-dir", false).unwrap();
    let watch = Watch {
        grace: Duration::from_secs(1),
        timeout: Duration::from_secs(1),
        ..WATCH
    };
    let g = launch(
        Path::new("/bin/sh"),
        &args,
        &held,
        &["np1".to_string()],
        watch,
        |_, _| {},
    )
    .unwrap();
    assert!(g.overdue, "{g:?}");
    assert!(g.lost.is_empty() && g.timed_out.is_empty() && g.not_started.is_empty());
    assert_eq!(g.ended.keys().collect::<Vec<_>>(), ["np1"]);
    assert_eq!(g.srun_status, None, "srun ended");
    std::fs::remove_dir_all(&d).unwrap();
}

/// A job Slurm calls pending is given up on only once its start is
/// overdue: a job that starts and reports well within `--start-timeout`
/// is gathered, whatever Slurm would say of it.
#[test]
fn a_pending_job_is_not_given_up_on_before_its_start_timeout() {
    let d = scratch("fleet-pending-in-time");
    let frames = d.join("frames");
    std::fs::write(&frames, node_lines("np1")).unwrap();
    let fleet = d.join("fleet");
    std::fs::create_dir(&fleet).unwrap();
    let held = SafeDir::own(&fleet, "--report-dir", false).unwrap();
    let watch = Watch {
        job_state: || JobState::Pending("Resources".into()),
        ..WATCH
    };
    let g = launch(
        Path::new("/bin/cat"),
        &[frames.display().to_string()],
        &held,
        &["np1".to_string()],
        watch,
        |_, _| {},
    )
    .unwrap();
    assert_eq!(g.never_started, None);
    assert_eq!(g.ended.keys().collect::<Vec<_>>(), ["np1"]);
    std::fs::remove_dir_all(&d).unwrap();
}

/// A stop request that comes before the job started is a stop, never a
/// start given up on: while the nodes' partial reports are read, the
/// start's clock is not looked at, however overdue.
#[test]
fn a_stop_before_the_job_started_is_no_start_given_up_on() {
    let d = scratch("fleet-stop-pending");
    let held = SafeDir::own(&d, "--report-dir", false).unwrap();
    let watch = Watch {
        stop_requested: || true,
        start_timeout: Duration::ZERO,
        job_state: || JobState::Pending("Resources".into()),
        ..WATCH
    };
    let g = launch(
        Path::new("/bin/sh"),
        &["-c".into(), "exec sleep 1000".into()],
        &held,
        &["np1".to_string()],
        watch,
        |_, _| {},
    )
    .unwrap();
    assert!(g.stopped);
    assert_eq!(g.never_started, None);
    assert_eq!(g.srun_status, None, "ended by the stop's SIGTERM");
    std::fs::remove_dir_all(&d).unwrap();
}
