//! The progress bar: drawn (with the cell being measured and an ETA) when
//! stderr is a terminal, and not one escape code on a pipe, where the batch
//! log's plain lines and the final line stay. The terminal is a real
//! pseudo-terminal: util-linux's `script` runs the binary on one and copies
//! what it drew.

mod cli;

use cli::{numaprobe, with};
use std::process::Command;

const TINY: &[&str] = &["--size", "8MiB", "--time-budget", "30ms", "--pages", "4k"];
const STUDY: &[&str] = &[
    "study",
    "0.0.w.0",
    "--size",
    "1MiB",
    "--passes",
    "1",
    "--repeats",
    "2",
];

/// One argument for `sh -c`, quoted.
fn quote(a: &str) -> String {
    format!("'{}'", a.replace('\'', r"'\''"))
}

/// Run the binary with stdin, stdout and stderr on a pseudo-terminal and
/// return everything it wrote there (escape codes included); it must succeed.
fn on_a_terminal(args: &[&str]) -> String {
    let (text, code) = on_a_terminal_with(args, &[]);
    assert_eq!(code, Some(0), "{text}");
    text
}

/// The same with environment variables set, and the exit status.
fn on_a_terminal_with(args: &[&str], env: &[(&str, &str)]) -> (String, Option<i32>) {
    let cmd = std::iter::once(env!("CARGO_BIN_EXE_numaprobe"))
        .chain(args.iter().copied())
        .map(quote)
        .collect::<Vec<_>>()
        .join(" ");
    // A width, so the bar has room for the cell's name (a new pseudo-terminal
    // has none, and the bar is cut to the width).
    let cmd = format!("stty cols 200 rows 40; exec {cmd}");
    let out = Command::new("script")
        .args(["-qfec", &cmd, "/dev/null"])
        .env_remove("CI")
        .envs(env.iter().copied())
        .output()
        .expect("run util-linux `script` (Debian package bsdutils)");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code(),
    )
}

#[test]
fn a_pipe_gets_no_escape_codes() {
    for args in [with(&["latency"], TINY), STUDY.to_vec()] {
        let out = numaprobe(&args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for (name, bytes) in [("stderr", &out.stderr), ("stdout", &out.stdout)] {
            assert!(
                !bytes.contains(&0x1b),
                "{args:?}: escape code on {name}: {:?}",
                String::from_utf8_lossy(bytes)
            );
        }
    }
}

#[test]
fn a_terminal_gets_a_bar_with_the_cell_and_the_eta() {
    let text = on_a_terminal(&with(&["latency"], TINY));
    // The cell being measured, the counts and the ETA, on one bar line.
    let bar = text
        .split(['\r', '\n'])
        .find(|l| l.contains("ETA") && l.contains("memory node 0"))
        .unwrap_or_else(|| panic!("no bar with the cell and an ETA in {text:?}"));
    assert!(
        bar.contains("latency 0/1 [") || bar.contains("latency 1/1 ["),
        "{bar:?}"
    );
    // indicatif redraws in place: escape codes are there, on a terminal only.
    assert!(text.contains('\x1b'), "{text:?}");
    // The bar is taken away before the result is printed: the result's
    // first line does not share its line with the bar.
    let first = text
        .split(['\r', '\n'])
        .find(|l| l.contains("Idle latency"))
        .unwrap_or_else(|| panic!("no result in {text:?}"));
    assert!(!first.contains("elapsed"), "{first:?}");
    // The result is still printed after the bar is taken away.
    assert!(text.contains("cpu\\mem [ns]"), "{text:?}");
}

#[test]
fn the_study_draws_its_bar_on_a_terminal_too() {
    let text = on_a_terminal(STUDY);
    assert!(
        text.contains("study 0/1 [") && text.contains("starting"),
        "{text:?}"
    );
    assert!(text.contains("0.0.w.0"), "{text:?}");
}

#[test]
fn lines_of_their_own_print_above_the_bar() {
    // One cell finds its memory node full (the binary's fault injection): the
    // failure is said on a line of its own while the bar goes on below it,
    // and the final error is not glued to the bar either.
    let (text, code) = on_a_terminal_with(
        &with(&["latency"], TINY),
        &[("NUMAPROBE_FAULT_FULL_CELL", "0")],
    );
    assert_eq!(code, Some(1), "{text}");
    let lines: Vec<&str> = text.split(['\r', '\n']).collect();
    for said in ["numaprobe: cell failed: ", "numaprobe: error: "] {
        let l = lines
            .iter()
            .find(|l| l.contains(said))
            .unwrap_or_else(|| panic!("no {said:?} in {text:?}"));
        assert!(!l.contains("elapsed"), "{l:?}");
    }
}
