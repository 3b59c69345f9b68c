//! Every command started with no options: it runs (exit 0, or stopped by
//! Ctrl-C while it measures: 130), or, where it cannot do without an input
//! (`diff` needs two things), says in one line what to give (exit 2). Never
//! clap's usage block, never a panic. A command still measuring after a
//! moment is interrupted: whether it got that far is the host's speed, and
//! either way is a pass, so nothing here depends on timing.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use common::TempDir;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Every command `numaprobe --help` lists, each subcommand of `generate`
/// (`numaprobe generate --help` lists them), and no command at all (the
/// main job).
const COMMANDS: [&str; 22] = [
    "",
    "run",
    "topo",
    "latency",
    "bandwidth",
    "loaded-latency",
    "peak",
    "c2c",
    "study",
    "infer",
    "pin",
    "policy",
    "tune",
    "diff",
    "check",
    "fleet",
    "report",
    "export",
    "generate",
    "generate man",
    "generate completions",
    "help",
];

/// What one command did with no options, or what was wrong with it.
fn started(name: &str, cwd: &std::path::Path) -> Result<(), String> {
    let err_path = cwd.join(format!("{}.stderr", name.replace(' ', "-")));
    let mut child = Command::new(env!("CARGO_BIN_EXE_numaprobe"))
        .args(name.split_whitespace())
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let began = Instant::now();
    let mut interrupted = false;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if !interrupted && began.elapsed() > Duration::from_secs(1) {
            // SAFETY: kill(2) to our own child, not yet waited for.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
            interrupted = true;
        }
        if began.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{name}: still running 58 s after Ctrl-C"));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let err = std::fs::read_to_string(&err_path).unwrap();
    if err.contains("panicked") || err.contains("Usage:") {
        return Err(format!("{name}: {err}"));
    }
    let errors: Vec<&str> = err.lines().filter(|l| l.contains("error")).collect();
    match status.code() {
        Some(0) if errors.is_empty() => Ok(()),
        Some(130) if interrupted && errors.is_empty() => Ok(()),
        Some(2) if errors.len() == 1 && err.trim_end().lines().count() == 1 => Ok(()),
        c => Err(format!("{name}: exit {c:?}: {err}")),
    }
}

#[test]
fn every_command_runs_with_no_options_or_says_in_one_line_what_to_give() {
    // The list is every command the help lists, so a new one joins it.
    let listed = |parent: &[&str]| -> Vec<String> {
        let mut args = parent.to_vec();
        args.push("--help");
        let help = String::from_utf8_lossy(&cli::numaprobe(&args).stdout).into_owned();
        help.lines()
            .take_while(|l| !l.starts_with("Options"))
            .filter_map(|l| l.strip_prefix("  "))
            .filter_map(|l| l.split_once("  ").map(|(name, _)| name))
            .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
            .filter(|n| parent.is_empty() || *n != "help")
            .map(|n| {
                parent
                    .iter()
                    .chain([&n])
                    .copied()
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    };
    let top = listed(&[]);
    assert!(top.len() >= 15, "{top:?}");
    let generate = listed(&["generate"]);
    assert!(generate.len() >= 2, "{generate:?}");
    for name in top.iter().chain(&generate) {
        assert!(
            COMMANDS.contains(&name.as_str()),
            "{name} is listed by --help but not tested"
        );
    }
    let cwd = TempDir::new("no-options");
    // Two at a time: each waits on its own command.
    let faults: Vec<String> = std::thread::scope(|s| {
        let halves: Vec<_> = COMMANDS
            .chunks(COMMANDS.len().div_ceil(2))
            .map(|chunk| {
                let cwd = cwd.path();
                s.spawn(move || {
                    chunk
                        .iter()
                        .filter_map(|n| started(n, cwd).err())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        halves.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

/// `pin` alone gives the main job's binding: one thread per allowed core,
/// scattered.
#[test]
fn pin_alone_is_the_main_jobs_binding() {
    let pin = cli::json(&cli::numaprobe(&["pin", "--format", "json"]));
    let run = cli::json(&cli::numaprobe(&[
        "run",
        "--no-measure",
        "--no-report",
        "--format",
        "json",
    ]));
    assert_eq!(pin["strategy"], "scatter", "{pin}");
    assert_eq!(
        pin["placement"], run["binding"]["placement"],
        "{pin}\n{run}"
    );
}
