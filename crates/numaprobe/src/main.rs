//! `numaprobe`: the command line. Parses arguments (clap), runs one subcommand,
//! and is the single place where errors become a message and an exit code.
//!
//! Exit codes: 0 success (also when stdout is a closed pipe), 1 a measurement
//! or system failure, or a panic (`panics.rs`), 2 bad input (arguments,
//! files, a sysfs root that is not one), 4 part of the work could not be
//! done (`fleet`: a node failed, was lost or not run; the others' results are
//! written), 130 / 143 stopped by SIGINT / SIGTERM (a measurement after
//! writing what was finished; a command that only reads at once,
//! `stop_now.rs`). `diff`, `check` and `fleet` exit 1 for an answer that is not
//! "the same" (a difference, an outlier), without "error"; `check` exits 3
//! for its failures and panics (`output::set_failure_code`), so a health
//! check never takes a broken tool for a broken node.

mod args;
mod bad_input;
mod cli;
mod cmd;
mod help;
mod kept_report;
#[allow(dead_code)] // not every command uses every output function
mod output;
mod panics;
mod report_dir;
mod report_names;
mod safe_dir;
mod signals;
mod stop_now;
mod values;

use std::process::ExitCode;

fn main() -> ExitCode {
    signals::install();
    panics::install();
    // A panic that unwinds this far was already said by the hook.
    let code = std::panic::catch_unwind(run).unwrap_or(ExitCode::from(output::failure_code()));
    // A panic anywhere (a worker thread's too) is a failure, whatever the
    // command returned with what it had measured.
    if panics::happened() {
        return ExitCode::from(output::failure_code());
    }
    // A stop signal wins over the command's own status: the command returned
    // normally with its partial results written; say so and exit 128 + N.
    // The progress bar is already off the terminal: its owner cleared it
    // when the command returned.
    if let Some(sig) = signals::received() {
        eprintln!(
            "numaprobe: interrupted by {}; finished cells are in the output (complete: false)",
            signals::name(sig)
        );
        return ExitCode::from(signals::exit_status(sig));
    }
    code
}

fn run() -> ExitCode {
    let parsed = help::command()
        .try_get_matches_from(values::join_negative(std::env::args_os().collect()))
        .and_then(|m| <cli::Cli as clap::FromArgMatches>::from_arg_matches(&m));
    let cli = match parsed {
        Ok(c) => c,
        Err(e) => {
            let args: Vec<String> = std::env::args_os()
                .skip(1)
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            if let Some(line) = help::missing(&e, &args).or_else(|| values::refused(&e)) {
                eprintln!("numaprobe: error: {}", output::clip_line(&line));
                return ExitCode::from(2);
            }
            // clap prints help/version to stdout with exit 0, usage errors to
            // stderr with exit 2; keep its behaviour, with a huge bad value
            // cut short like every other error.
            let text = e.render().to_string();
            let lines: Vec<String> = text.lines().map(output::clip_line).collect();
            if !e.use_stderr() || lines.iter().zip(text.lines()).all(|(a, b)| a == b) {
                let _ = e.print();
            } else {
                eprintln!("{}", lines.join("\n").trim_end());
            }
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    // args_os: a file name need not be UTF-8; provenance shows it lossily.
    let command_line = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    numaprobe_core::model::provenance::init(command_line, cmd::budget(&cli));
    match cmd::dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // After a panic the hook's line is the message; what the
            // command made of the failure would only repeat it.
            if panics::happened() {
                return ExitCode::from(output::failure_code());
            }
            if output::is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            // `diff`, `check` and `fleet` found a difference: an answer, not an error.
            if let Some(msg) = output::differs(&err) {
                eprintln!("numaprobe: {}", output::clip_line(&output::one_line(msg)));
                return ExitCode::from(1);
            }
            // One line: the context chain joined, outermost first.
            let msg: Vec<String> = err.chain().map(|c| c.to_string()).collect();
            eprintln!(
                "numaprobe: error: {}",
                output::clip_line(&output::one_line(&dedup_chain(&msg).join(": ")))
            );
            ExitCode::from(output::exit_code(&err))
        }
    }
}

/// thiserror messages often repeat their source's text; drop a link that is
/// already contained in the one before it so the line reads once.
fn dedup_chain(parts: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in parts {
        if out.last().is_none_or(|last| !last.contains(p.as_str())) {
            out.push(p.clone());
        }
    }
    out
}
