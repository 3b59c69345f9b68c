//! How srun and its process group end, against stand-ins for srun: ended
//! and reaped when the gather fails, asked with SIGTERM before being
//! killed when the launcher gives up (and what counts as giving up), a
//! stop request that ends the group and reads what comes after, before or
//! after the job started. The stand-ins are in `launch_tests.rs`.

use super::*;

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
    let e = launch_sh(&script, &held, &[], WATCH).unwrap_err();
    assert!(
        format!("{e:#}").contains("cannot create") && format!("{e:#}").contains("np1"),
        "{e:#}"
    );
    assert_srun_ended(&pidfile);
    std::fs::remove_dir_all(&d).unwrap();
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
        .insert("np1".into(), super::super::super::node::not_run("np1"));
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
    let g = launch_sh(&script, &f, &["np1"], watch).unwrap();
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
    let g = launch_sh(&script, &held, &["np1"], watch).unwrap();
    assert_eq!(g.lost, ["np1"]);
    assert_eq!(g.srun_status, None, "killed by a signal");
    let ids = std::fs::read_to_string(&pids).unwrap();
    assert_eq!(ids.lines().count(), 2, "{ids}");
    // A SIGKILL is sent before it is acted on: the group's other member,
    // not the launcher's child, may take a moment to go on a busy machine.
    // Waited for, with a limit against a hang only.
    let began = std::time::Instant::now();
    for pid in ids.lines() {
        while !gone(pid) && began.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(gone(pid), "{pid} of srun's group is still there");
    }
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
    let g = launch_sh(&script, &f, &["np1"], watch).unwrap();
    assert!(g.stopped);
    assert_eq!(g.started, ["np1"]);
    assert_eq!(g.ended.keys().collect::<Vec<_>>(), ["np1"]);
    assert!(fleet.join("np1/run.json").is_file());
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
    let g = launch_sh("exec sleep 1000", &held, &["np1"], watch).unwrap();
    assert!(g.stopped);
    assert_eq!(g.never_started, None);
    assert_eq!(g.srun_status, None, "ended by the stop's SIGTERM");
    std::fs::remove_dir_all(&d).unwrap();
}
