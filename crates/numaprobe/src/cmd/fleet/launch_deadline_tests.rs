//! When the launcher gives up, against stand-ins for srun: a node silent
//! past the grace or never started, a node alive past its limit and the
//! grace, a job pending past `--start-timeout` (and one that is not), the
//! launcher's deadline before and after the nodes started, a count's node
//! never heard from. The stand-ins are in `launch_tests.rs`.

use super::*;

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
        let g = launch_sh(&script, &f, &["np1"], watch);
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
    assert_srun_ended(&pidfile);
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
    let g = launch_sh("sleep 0.5", &held, &["np1"], watch).unwrap();
    assert_eq!(g.srun_status, Some(0));
    assert!(!g.gave_up(), "{g:?}");
    std::fs::remove_dir_all(&d).unwrap();
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
