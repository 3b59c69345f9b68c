//! Files, folders and inputs where HPC tools really run: as root, in shared
//! scratch folders, on input from other nodes. Each test is a case an
//! adversarial tester found: a planted symlink or FIFO in a report folder,
//! two runs into one folder, a manifest that names a user's files,
//! arguments that are not UTF-8, inputs that are FIFOs, folders or huge,
//! documents whose declared dimensions do not match their data, and a huge
//! bad value echoed in an error.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use cli::{
    bounded, give_away, like_its_parent, mkfifo, numaprobe, numaprobe_in, ok, plain_and_sticky,
    usage_error,
};
use common::TempDir;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// A run with nothing to measure: it writes every document of the folder
/// but the matrices, in well under a second.
const QUICK: [&str; 2] = ["run", "--no-measure"];

fn quick_run(dir: &str, cwd: &Path) -> Output {
    numaprobe_in(&[QUICK[0], QUICK[1], "--report-dir", dir], cwd)
}

#[test]
fn a_symlink_planted_under_an_old_temporary_name_redirects_nothing() {
    let t = TempDir::new("planted-tmp");
    let outside = t.path().join("outside");
    std::fs::write(&outside, "precious").unwrap();
    let out = t.path().join("out");
    std::fs::create_dir(&out).unwrap();
    // The next thousand pids' `.topo.json.PID.tmp`, each a link to a file
    // outside the folder: what a predictable temporary name invites.
    let last: u32 = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(1);
    for pid in last..last + 1000 {
        std::os::unix::fs::symlink(&outside, out.join(format!(".topo.json.{pid}.tmp"))).unwrap();
    }
    ok(&numaprobe_in(&["topo", "-o", "out/topo.json"], t.path()));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious");
    let meta = std::fs::symlink_metadata(out.join("topo.json")).unwrap();
    assert!(meta.file_type().is_file(), "topo.json is a regular file");
}

/// A report folder made by a first run in `dir`, sticky and
/// world-writable like `dir` when `dir` is: a folder others can plant in.
fn first_run(dir: &Path) -> std::path::PathBuf {
    ok(&quick_run("r", dir));
    let r = dir.join("r");
    like_its_parent(&r);
    r
}

#[test]
fn a_symlink_in_a_report_folder_is_refused_not_followed() {
    let t = TempDir::new("folder-link");
    for dir in plain_and_sticky(t.path()) {
        let r = first_run(&dir);
        let outside = dir.join("outside");
        std::fs::write(&outside, "precious").unwrap();
        let summary = r.join("summary.md");
        std::fs::remove_file(&summary).unwrap();
        std::os::unix::fs::symlink(&outside, &summary).unwrap();
        give_away(&summary);
        let err = usage_error(&quick_run("r", &dir));
        assert!(err.contains("r/summary.md: a symbolic link"), "{err}");
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious");
        assert!(std::fs::symlink_metadata(&summary)
            .unwrap()
            .file_type()
            .is_symlink());
    }
}

#[test]
fn a_fifo_in_a_report_folder_is_refused_without_a_hang() {
    let t = TempDir::new("folder-fifo");
    for dir in plain_and_sticky(t.path()) {
        let r = first_run(&dir);
        let fifo = dir.join("fifo");
        mkfifo(&fifo);
        give_away(&fifo);
        let summary = r.join("summary.md");
        std::fs::remove_file(&summary).unwrap();
        std::os::unix::fs::symlink(&fifo, &summary).unwrap();
        give_away(&summary);
        let err = usage_error(&bounded(&[QUICK[0], QUICK[1], "--report-dir", "r"], &dir));
        assert!(err.contains("r/summary.md: a symbolic link"), "{err}");
        // A FIFO right in the folder, under the name: the same.
        std::fs::remove_file(&summary).unwrap();
        mkfifo(&summary);
        give_away(&summary);
        let err = usage_error(&bounded(&[QUICK[0], QUICK[1], "--report-dir", "r"], &dir));
        assert!(err.contains("r/summary.md: a FIFO"), "{err}");
    }
}

#[test]
fn report_does_not_write_through_a_report_html_symlink() {
    let t = TempDir::new("report-link");
    for dir in plain_and_sticky(t.path()) {
        let r = first_run(&dir);
        let outside = dir.join("outside");
        std::fs::write(&outside, "precious").unwrap();
        let page = r.join("report.html");
        std::fs::remove_file(&page).unwrap();
        std::os::unix::fs::symlink(&outside, &page).unwrap();
        give_away(&page);
        let err = usage_error(&numaprobe_in(&["report", "r"], &dir));
        assert!(err.contains("r/report.html: a symbolic link"), "{err}");
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious");
        // `-o -` is standard output; `-o /dev/stdout`, a link, is refused.
        let o = ok(&numaprobe_in(&["report", "r", "-o", "-"], &dir));
        assert!(o.contains("<html"), "{}", &o[..o.len().min(200)]);
        let err = usage_error(&numaprobe_in(&["report", "r", "-o", "/dev/stdout"], &dir));
        assert!(err.contains("/dev/stdout: a symbolic link"), "{err}");
    }
}

/// Hold `dir`'s lock as a run would: flock its lock file, our pid in it.
fn hold_lock(dir: &Path) -> std::fs::File {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(dir.join(".numaprobe-lock"))
        .unwrap();
    // SAFETY: flock on a descriptor this test owns.
    assert_eq!(
        unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
        0
    );
    writeln!(f, "{}", std::process::id()).unwrap();
    f
}

#[test]
fn a_second_run_into_a_locked_folder_exits_2_naming_the_holder() {
    let t = TempDir::new("lock");
    ok(&quick_run("r", t.path()));
    let before = std::fs::read_to_string(t.path().join("r/run.json")).unwrap();
    let lock = hold_lock(&t.path().join("r"));
    let pid = std::process::id().to_string();
    let err = usage_error(&quick_run("r", t.path()));
    assert!(
        err.contains(&format!("in use by numaprobe pid {pid}")),
        "{err}"
    );
    let err = usage_error(&numaprobe_in(&["report", "r"], t.path()));
    assert!(err.contains(&format!("pid {pid}")), "{err}");
    // Nothing of the holder's folder was touched.
    assert_eq!(
        std::fs::read_to_string(t.path().join("r/run.json")).unwrap(),
        before
    );
    drop(lock);
    ok(&quick_run("r", t.path()));
    ok(&numaprobe_in(&["report", "r"], t.path()));
}

#[test]
fn a_crafted_manifest_removes_no_file_of_the_user() {
    let t = TempDir::new("manifest");
    ok(&quick_run("r", t.path()));
    let r = t.path().join("r");
    let mine = ["thesis.tex", " run.json", ".run.json.mine.tmp", "run.json "];
    for f in mine {
        std::fs::write(r.join(f), "mine").unwrap();
    }
    // What a killed run leaves: numaprobe's exact temporary name.
    std::fs::write(r.join(".run.json.Ab12Cd.tmp"), "half").unwrap();
    let mut manifest = std::fs::read_to_string(r.join(".numaprobe-manifest")).unwrap();
    for f in mine {
        manifest.push_str(f);
        manifest.push('\n');
    }
    std::fs::write(r.join(".numaprobe-manifest"), manifest).unwrap();
    ok(&quick_run("r", t.path()));
    for f in mine {
        assert_eq!(std::fs::read_to_string(r.join(f)).unwrap(), "mine", "{f}");
    }
    assert!(!r.join(".run.json.Ab12Cd.tmp").exists());
}

#[test]
fn arguments_that_are_not_utf8_work_or_get_one_line() {
    let t = TempDir::new("nonutf8");
    let name = OsStr::from_bytes(b"bad\xff.json");
    let o = Command::new(env!("CARGO_BIN_EXE_numaprobe"))
        .args([OsStr::new("topo"), OsStr::new("-o"), name])
        .current_dir(t.path())
        .output()
        .unwrap();
    ok(&o);
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.path().join(name)).unwrap()).unwrap();
    let line = doc["provenance"]["command_line"][3].as_str().unwrap();
    assert_eq!(line, "bad\u{fffd}.json");

    let dir = OsStr::from_bytes(b"r\xff");
    let o = Command::new(env!("CARGO_BIN_EXE_numaprobe"))
        .args(QUICK)
        .arg("--report-dir")
        .arg(dir)
        .current_dir(t.path())
        .output()
        .unwrap();
    ok(&o);
    assert!(t.path().join(dir).join("run.json").is_file());
    let o = Command::new(env!("CARGO_BIN_EXE_numaprobe"))
        .arg("report")
        .arg(OsStr::from_bytes(b"missing\xff"))
        .current_dir(t.path())
        .output()
        .unwrap();
    let err = usage_error(&o);
    assert!(
        err.contains("missing\u{fffd}: no such file or folder"),
        "{err}"
    );
}

#[test]
fn a_huge_bad_value_is_echoed_short() {
    let value = format!("{}x", "1,".repeat(60_000));
    let err = usage_error(&numaprobe(&["latency", "--cpus", &value]));
    assert!(err.len() < 1000, "{} characters", err.len());
    assert!(err.contains("more characters"), "{err}");
    assert!(err.contains("--cpus"), "{err}");
}

/// A real run.json (a node of the fixture fleet), as JSON.
fn real_run() -> serde_json::Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/fleet/taskset-one-cpu/node1/run.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn a_fifo_given_as_input_is_refused_without_a_hang() {
    let t = TempDir::new("input-fifo");
    let fifo = t.path().join("run.json");
    mkfifo(&fifo);
    for args in [
        vec!["infer", "--input", "run.json"],
        vec!["check", "--expect", "run.json"],
        vec!["diff", "run.json", "run.json"],
    ] {
        let err = usage_error(&bounded(&args, t.path()));
        assert!(
            err.contains("run.json: a FIFO, not a regular file"),
            "{args:?}: {err}"
        );
    }
    // A folder is read for its documents, and a FIFO in it is none.
    let err = usage_error(&bounded(&["infer", "--input", "."], t.path()));
    assert!(
        err.contains("a folder without numaprobe documents; infer --input takes"),
        "{err}"
    );
    // A gathered fleet folder whose node's run.json is a FIFO: that node
    // has no report, and the others are read.
    let fleet = t.path().join("fleet");
    for n in ["node1", "node2"] {
        std::fs::create_dir_all(fleet.join(n)).unwrap();
    }
    std::fs::write(fleet.join("node1/run.json"), real_run().to_string()).unwrap();
    mkfifo(&fleet.join("node2/run.json"));
    let o = bounded(
        &["fleet", "--replace", "--from", "fleet", "--format", "json"],
        t.path(),
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&o.stderr)));
    assert!(doc.to_string().contains("node2"), "{doc}");
}

/// The files options name (study --distances, peak --dmidecode) are read
/// like documents: a FIFO, a folder or a file past NUMAPROBE_MAX_INPUT is one
/// line naming the option and the file, never a hang.
#[test]
fn option_files_are_read_through_the_one_reader() {
    let t = TempDir::new("option-files");
    mkfifo(&t.path().join("fifo"));
    std::fs::create_dir(t.path().join("folder")).unwrap();
    let lat = real_run()["latency"].to_string();
    std::fs::write(t.path().join("lat.json"), &lat).unwrap();
    let dmi =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/smbios/balanced-2s.txt");
    std::fs::copy(&dmi, t.path().join("dmi.txt")).unwrap();
    fn study(f: &str) -> Vec<&str> {
        vec!["study", "--preset", "hops", "--plan", "--distances", f]
    }
    fn peak(f: &str) -> Vec<&str> {
        vec!["peak", "--memory-only", "--dmidecode", f]
    }
    for (args, opt) in [
        (study("fifo"), "--distances"),
        (peak("fifo"), "--dmidecode"),
    ] {
        let err = usage_error(&bounded(&args, t.path()));
        assert!(
            err.contains(&format!(
                "{opt} fifo: cannot read it (a FIFO, not a regular file)"
            )),
            "{args:?}: {err}"
        );
    }
    // A report folder is what --distances may be: an empty one holds no
    // latency matrix.
    let err = usage_error(&bounded(&study("folder"), t.path()));
    assert!(
        err.contains("--distances folder: a folder without numaprobe documents; study --distances takes a latency or run document"),
        "{err}"
    );
    let err = usage_error(&bounded(&peak("folder"), t.path()));
    assert!(
        err.contains("--dmidecode folder: cannot read it (a folder, not a regular file)"),
        "{err}"
    );
    // Past a limit set below the files' sizes; read under the default one.
    let limited = |args: &[&str], limit: &str| {
        Command::new(env!("CARGO_BIN_EXE_numaprobe"))
            .args(args)
            .current_dir(t.path())
            .env("NUMAPROBE_MAX_INPUT", limit)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    for (args, opt, file) in [
        (study("lat.json"), "--distances", "lat.json"),
        (peak("dmi.txt"), "--dmidecode", "dmi.txt"),
    ] {
        let err = usage_error(&limited(&args, "100"));
        assert!(
            err.contains(&format!(
                "{opt} {file}: cannot read it (larger than the 100 B"
            )),
            "{args:?}: {err}"
        );
        assert!(err.contains("NUMAPROBE_MAX_INPUT"), "{err}");
        ok(&limited(&args, "1MiB"));
    }
}

#[test]
fn an_input_past_the_size_limit_is_refused_by_its_size() {
    let t = TempDir::new("input-size");
    std::fs::create_dir(t.path().join("r")).unwrap();
    // 2 GB of nothing: sparse, so it costs no disk.
    let f = std::fs::File::create(t.path().join("r/latency.json")).unwrap();
    f.set_len(2 << 30).unwrap();
    for args in [
        vec!["report", "r"],
        vec!["infer", "--input", "r/latency.json"],
        vec!["diff", "r/latency.json", "r/latency.json"],
    ] {
        let err = usage_error(&bounded(&args, t.path()));
        assert!(
            err.contains("r/latency.json: larger than the 256 MiB numaprobe reads from one file"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn the_size_limit_can_be_set_and_covers_stdin() {
    let t = TempDir::new("input-limit");
    std::fs::write(t.path().join("run.json"), real_run().to_string()).unwrap();
    let matrix = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/matrices/intel-xeon-8180-2s-fdio-csit.json");
    let run = |limit: &str, args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_numaprobe"))
            .args(args)
            .current_dir(t.path())
            .env("NUMAPROBE_MAX_INPUT", limit)
            .stdin(std::fs::File::open(&matrix).unwrap())
            .output()
            .unwrap()
    };
    let err = usage_error(&run("1K", &["check", "--expect", "run.json"]));
    assert!(err.contains("larger than the 1 KiB"), "{err}");
    let err = usage_error(&run("512", &["infer", "--input", "-"]));
    assert!(err.contains("stdin: larger than the 512 B"), "{err}");
    ok(&run("64M", &["infer", "--input", "-"]));
    let err = usage_error(&run("lots", &["infer", "--input", "run.json"]));
    assert!(
        err.contains("NUMAPROBE_MAX_INPUT=\"lots\": not a size"),
        "{err}"
    );
}

/// Whether `pid`'s main thread waits in a read of its stdin, from
/// `/proc/PID/syscall`; None where the kernel does not say.
fn reading_stdin(pid: u32) -> Option<bool> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/syscall")).ok()?;
    let mut fields = text.split_whitespace();
    let nr = fields.next()?;
    Some(nr.parse::<i64>().ok() == Some(libc::SYS_read) && fields.next() == Some("0x0"))
}

/// Whether `pid` handles SIGTERM (its handler is installed), from
/// `/proc/PID/status`.
fn handles_sigterm(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        .is_some_and(|m| m & (1 << (libc::SIGTERM - 1)) != 0)
}

/// `infer --input -` waiting on a pipe that is open and never written: one
/// SIGTERM ends it with 143, as a stop ends every command that only reads,
/// with one line and nothing written. The test waits (a minute at most,
/// only against a hang) until numaprobe is blocked in the read, so the
/// signal interrupts the read itself.
#[test]
fn a_read_of_a_silent_stdin_ends_at_the_first_sigterm() {
    let t = TempDir::new("stdin-sigterm");
    let mut child = Command::new(env!("CARGO_BIN_EXE_numaprobe"))
        .args(["infer", "--input", "-", "-o", "out.json"])
        .current_dir(t.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let writer = child.stdin.take();
    let pid = child.id();
    let guard = std::time::Duration::from_secs(60);
    let began = std::time::Instant::now();
    loop {
        assert!(
            child.try_wait().unwrap().is_none(),
            "ended before the signal"
        );
        let ready = reading_stdin(pid).unwrap_or_else(|| handles_sigterm(pid));
        if ready {
            break;
        }
        if began.elapsed() > guard {
            let _ = child.kill();
            panic!("numaprobe never came to read stdin");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: kill(2) to our own child, which has not been waited for.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) }, 0);
    let began = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if began.elapsed() > guard {
            let _ = child.kill();
            panic!("numaprobe did not stop at the first SIGTERM: it waits on stdin");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    drop(writer);
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(143), "{err}");
    assert_eq!(
        err,
        "numaprobe: interrupted by SIGTERM before anything was written\n"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(o.stdout.is_empty());
    let left: Vec<_> = std::fs::read_dir(t.path()).unwrap().collect();
    assert!(left.is_empty(), "written: {left:?}");
}

/// pin and peak documents (report reads both, check reads pin) are checked
/// against their own declared counts too.
#[test]
fn pin_and_peak_documents_with_counts_their_data_lacks_are_one_line() {
    let t = TempDir::new("shape-pin-peak");
    let r = t.path().join("r");
    std::fs::create_dir(&r).unwrap();
    let pin = ok(&numaprobe(&[
        "pin",
        "--threads",
        "1",
        "--strategy",
        "compact",
        "--format",
        "json",
    ]));
    let mut pin: serde_json::Value = serde_json::from_str(&pin).unwrap();
    pin["threads"] = serde_json::json!(3000);
    std::fs::write(r.join("pin.json"), pin.to_string()).unwrap();
    let err = usage_error(&bounded(&["report", "r"], t.path()));
    assert!(
        err.contains("pin.json: not a valid binding document: cpus names"),
        "{err}"
    );
    assert!(err.contains("CPUs for 3000 threads"), "{err}");
    let err = usage_error(&bounded(&["check", "--expect", "r/pin.json"], t.path()));
    assert!(err.contains("CPUs for 3000 threads"), "{err}");
    std::fs::remove_file(r.join("pin.json")).unwrap();
    let dmi =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/smbios/balanced-2s.txt");
    let peak = ok(&numaprobe(&[
        "peak",
        "--memory-only",
        "--dmidecode",
        dmi.to_str().unwrap(),
        "--format",
        "json",
    ]));
    let mut peak: serde_json::Value = serde_json::from_str(&peak).unwrap();
    std::fs::write(r.join("peak.json"), peak.to_string()).unwrap();
    ok(&bounded(&["report", "r"], t.path()));
    peak["memory"]["sockets"][0]["slots"] = serde_json::json!(3000);
    std::fs::write(r.join("peak.json"), peak.to_string()).unwrap();
    let err = usage_error(&bounded(&["report", "r"], t.path()));
    assert!(
        err.contains("peak.json: not a valid peak document: memory.sockets"),
        "{err}"
    );
}

#[test]
fn declared_dimensions_that_do_not_match_the_data_are_one_line() {
    let t = TempDir::new("shape");
    let run = real_run();
    let r = t.path().join("r");
    std::fs::create_dir(&r).unwrap();
    // A 1x1 latency matrix that names 3000 CPU nodes.
    let mut lat = run["latency"].clone();
    lat["cpu_nodes"] = serde_json::json!((0..3000).collect::<Vec<u32>>());
    std::fs::write(r.join("latency.json"), lat.to_string()).unwrap();
    let err = usage_error(&bounded(&["report", "r"], t.path()));
    assert!(
        err.contains(
            "latency.json: not a valid matrix document: matrix has 1 rows but cpu_nodes names 3000"
        ),
        "{err}"
    );
    assert!(!r.join("report.html").exists());
    let err = usage_error(&bounded(
        &["diff", "r/latency.json", "r/latency.json"],
        t.path(),
    ));
    assert!(
        err.contains("matrix has 1 rows but cpu_nodes names 3000"),
        "{err}"
    );
    // A topology whose SLIT names 3000 nodes for one row.
    let mut topo = run["topology"].clone();
    topo["distances"]["node_ids"] = serde_json::json!((0..3000).collect::<Vec<u32>>());
    std::fs::write(r.join("latency.json"), run["latency"].to_string()).unwrap();
    std::fs::write(r.join("topo.json"), topo.to_string()).unwrap();
    let err = usage_error(&bounded(&["report", "r"], t.path()));
    assert!(
        err.contains("distances.matrix has 1 rows but distances.node_ids names 3000"),
        "{err}"
    );
    let err = usage_error(&bounded(&["check", "--expect", "r/topo.json"], t.path()));
    assert!(err.contains("distances.node_ids names 3000"), "{err}");
    // An inference whose hop table is smaller than its node list.
    std::fs::remove_file(r.join("topo.json")).unwrap();
    let matrices = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/matrices");
    let m = matrices.join("intel-xeon-8180-2s-fdio-csit.json");
    let out = ok(&numaprobe(&[
        "infer",
        "--input",
        m.to_str().unwrap(),
        "--format",
        "json",
    ]));
    let mut inf: serde_json::Value = serde_json::from_str(&out).unwrap();
    inf["nodes"] = serde_json::json!((0..3000).collect::<Vec<u32>>());
    std::fs::write(r.join("infer-latency.json"), inf.to_string()).unwrap();
    let err = usage_error(&bounded(&["report", "r"], t.path()));
    assert!(
        err.contains("hops has 2 rows but nodes names 3000"),
        "{err}"
    );
    // The same documents with their own shapes make a page.
    std::fs::remove_file(r.join("infer-latency.json")).unwrap();
    ok(&bounded(&["report", "r"], t.path()));
}
