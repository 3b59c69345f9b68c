//! Every write through a folder handle: an `-o` file whose name is a
//! planted link to a FIFO or a device, a report folder that is a link to
//! another one, a folder swapped for a link mid-run, a lock file that is a
//! hard link. Each case runs in a plain folder and in a sticky
//! world-writable one (mode 1777, like /tmp), the owner's case as root or
//! against `/` (it says so on stderr where it cannot run); what is asserted is
//! numaprobe's own refusal, whatever `fs.protected_symlinks` says, and a
//! run that would block is killed and fails the test.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use cli::{bounded, folder_of_another_user, give_away, mkfifo, ok, usage_error};
use common::TempDir;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The two kinds of folder a planted name can be in (see
/// [`cli::plain_and_sticky`]).
fn folders(t: &TempDir) -> [PathBuf; 2] {
    cli::plain_and_sticky(t.path())
}

fn is_link(p: &Path) -> bool {
    std::fs::symlink_metadata(p)
        .unwrap()
        .file_type()
        .is_symlink()
}

fn quick_run(dir: &str, cwd: &Path) -> Output {
    bounded(&["run", "--no-measure", "--report-dir", dir], cwd)
}

#[test]
fn an_output_link_to_a_fifo_or_a_device_is_refused_without_a_hang() {
    let t = TempDir::new("out-link");
    ok(&quick_run("r", t.path()));
    let r = t.path().join("r");
    let rs = r.to_str().unwrap();
    let expect = r.join("topo.json");
    for dir in folders(&t) {
        let fifo = dir.join("fifo");
        mkfifo(&fifo);
        give_away(&fifo);
        let to_fifo = dir.join("to-fifo.json");
        let to_full = dir.join("to-full.json");
        std::os::unix::fs::symlink(&fifo, &to_fifo).unwrap();
        std::os::unix::fs::symlink("/dev/full", &to_full).unwrap();
        give_away(&to_fifo);
        give_away(&to_full);
        for (target, kind) in [
            (&to_fifo, "a symbolic link"),
            (&to_full, "a symbolic link"),
            (&fifo, "a FIFO"),
        ] {
            let o = target.to_str().unwrap();
            for args in [
                vec!["topo", "-o", o],
                vec!["export", "--to", "hwloc", rs, "-o", o],
                vec!["check", "--expect", expect.to_str().unwrap(), "-o", o],
                vec!["report", rs, "-o", o],
            ] {
                let err = usage_error(&bounded(&args, t.path()));
                assert!(err.contains(&format!("{o}: {kind}")), "{args:?}: {err}");
            }
        }
        assert!(is_link(&to_fifo) && is_link(&to_full));
        // A regular file under the name is replaced, as ever.
        let plain = dir.join("topo.txt");
        std::fs::write(&plain, "old").unwrap();
        ok(&bounded(&["topo", "-o", plain.to_str().unwrap()], t.path()));
        assert!(std::fs::read_to_string(&plain).unwrap().contains("NUMA"));
    }
}

#[test]
fn a_report_folder_that_is_a_link_is_refused_and_the_folder_it_names_kept() {
    let t = TempDir::new("dir-link");
    for dir in folders(&t) {
        ok(&quick_run(dir.join("a").to_str().unwrap(), t.path()));
        let b = dir.join("b");
        std::os::unix::fs::symlink(dir.join("a"), &b).unwrap();
        give_away(&b);
        let bs = b.to_str().unwrap();
        let err = usage_error(&quick_run(bs, t.path()));
        assert!(err.contains(&format!("{bs}: a symbolic link")), "{err}");
        let err = usage_error(&bounded(&["report", bs], t.path()));
        assert!(err.contains(&format!("{bs}: a symbolic link")), "{err}");
        for f in ["run.json", "topo.json", "summary.md", "report.html"] {
            assert!(dir.join("a").join(f).exists(), "{f} was removed");
        }
    }
}

/// As root the folder is one made here and given away; otherwise `/`,
/// which another user owns, stands for it (nothing can be written there).
#[test]
fn a_report_folder_of_another_user_is_refused() {
    let t = TempDir::new("dir-owner");
    let made = t.path().join("theirs");
    std::fs::create_dir(&made).unwrap();
    let Some((theirs, uid)) = folder_of_another_user(&made) else {
        return;
    };
    let err = usage_error(&quick_run(theirs.to_str().unwrap(), t.path()));
    assert!(
        err.contains(&format!("{}: owned by uid {uid}", theirs.display())),
        "{err}"
    );
    for f in [".numaprobe-lock", ".numaprobe-manifest", "run.json"] {
        assert!(!theirs.join(f).exists(), "{f} was written");
    }
    assert_eq!(std::fs::read_dir(&made).unwrap().count(), 0);
}

#[test]
fn a_lock_file_that_is_a_hard_link_is_refused_and_never_truncated() {
    let t = TempDir::new("lock-hardlink");
    for dir in folders(&t) {
        let r = dir.join("r");
        let rs = r.to_str().unwrap();
        ok(&quick_run(rs, t.path()));
        let precious = dir.join("precious");
        std::fs::write(&precious, "precious data\n").unwrap();
        std::fs::remove_file(r.join(".numaprobe-lock")).unwrap();
        std::fs::hard_link(&precious, r.join(".numaprobe-lock")).unwrap();
        let err = usage_error(&quick_run(rs, t.path()));
        assert!(err.contains("a file with 2 names (a hard link)"), "{err}");
        let err = usage_error(&bounded(&["report", rs], t.path()));
        assert!(err.contains("a hard link"), "{err}");
        assert_eq!(
            std::fs::read_to_string(&precious).unwrap(),
            "precious data\n"
        );
        // A lock file of another user is not numaprobe's either.
        std::fs::remove_file(r.join(".numaprobe-lock")).unwrap();
        std::fs::write(r.join(".numaprobe-lock"), "theirs\n").unwrap();
        if std::os::unix::fs::chown(r.join(".numaprobe-lock"), Some(4242), None).is_ok() {
            let err = usage_error(&quick_run(rs, t.path()));
            assert!(err.contains("owned by uid 4242"), "{err}");
        } else {
            eprintln!("skipped the lock file of another user: needs root to chown");
        }
    }
}

#[test]
fn a_folder_swapped_for_a_link_mid_run_receives_nothing_more() {
    let t = TempDir::new("dir-swap");
    for dir in folders(&t) {
        swapped_mid_run(&dir);
    }
}

/// A run into `dir/r`, renamed and replaced by a link to `dir/elsewhere`
/// once its first cell is written, then stopped: what it writes after
/// goes into the folder it opened, now `dir/moved`, never through the link.
fn swapped_mid_run(dir: &Path) {
    let r = dir.join("r");
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let err_path = dir.join("stderr");
    let mut child = Command::new(env!("CARGO_BIN_EXE_numaprobe"))
        .args([
            "run",
            "--budget",
            "60s",
            "--size",
            "16MiB",
            "--report-dir",
            "r",
        ])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    // The first finished cell is written: the run is in the folder.
    let began = Instant::now();
    while !r.join("latency.json").exists() {
        assert!(child.try_wait().unwrap().is_none(), "ended too early");
        assert!(
            began.elapsed() < Duration::from_secs(180),
            "nothing written"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let moved = dir.join("moved");
    std::fs::rename(&r, &moved).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &r).unwrap();
    give_away(&r);
    // SAFETY: kill(2) to our own child, which has not been waited for.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) },
        0
    );
    let status = child.wait().unwrap();
    let stderr = std::fs::read_to_string(&err_path).unwrap();
    assert_eq!(status.code(), Some(130), "{}: {stderr}", dir.display());
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    for f in ["run.json", "summary.md", "report.html", "latency.json"] {
        assert!(moved.join(f).exists(), "{f} missing: {stderr}");
    }
    let page = std::fs::read_to_string(moved.join("report.html")).unwrap();
    assert!(page.contains("<html"), "{}", &page[..page.len().min(200)]);
}
