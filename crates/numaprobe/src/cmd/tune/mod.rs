//! `numaprobe tune -- CMD [ARGS...]`: run the user's program under every
//! candidate placement (thread binding x memory policy, planned by the
//! library's `experiments::tune`), interleaved round by round so drift hits
//! all alike, and print the ranking and the winner ready to paste. The
//! running of one process is `launch.rs`.

mod group;
mod launch;

use crate::args::OutputArgs;
use crate::output::{stderr_is_terminal, usage};
use launch::Ended;
use numaprobe_core::analysis::binding::BindError;
use numaprobe_core::experiments::tune::{self, Meta, Outcome};
use numaprobe_core::model::tune::{Failure, TuneReport};
use numaprobe_core::model::Format;
use numaprobe_core::placement::weighted_interleave_weights;
use numaprobe_core::render::tune as render;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
#[command(
    after_long_help = "Runs CMD under each candidate placement: thread binding (compact, scatter, \
none) x memory policy (first-touch, local-bind, interleave, weighted-interleave where the kernel \
has it). numaprobe sets the CPU set and the memory policy in the child before exec (no numactl \
needed) and OMP_NUM_THREADS, OMP_PLACES and OMP_PROC_BIND in its environment. Candidates run \
interleaved (A B C A B C ...) for --runs rounds and are ranked by median wall time; `vs next` \
says whether the gap to the next one is beyond noise (exact Mann-Whitney test, p <= 0.05, which \
needs at least 4 runs each). While the program runs, /proc/PID/numa_maps is sampled to show where \
its memory is.\n\n\
CMD's stdout is discarded and its stderr kept for failure reports. A candidate under which CMD \
fails is reported with its exit status and stderr, never ranked. Each run leads a process group \
of its own: --timeout, or Ctrl-C, ends the whole group (SIGTERM, then SIGKILL 2 s later), and \
what a run left in its group when it ended is ended too; a descendant that left the group (a \
daemon) is named in the notes and on stderr. A run past --timeout is a failure of its candidate. \
Ctrl-C ranks the rounds finished so far (complete: false, exit 130).\n\n\
Examples:\n  numaprobe tune -- ./stream\n  numaprobe tune --threads 8 --runs 7 -- ./app --size 4G\n  \
OMP_NUM_THREADS=4 numaprobe tune --format json -o tune.json -- ./app"
)]
pub struct Args {
    /// Threads for the program (default: OMP_NUM_THREADS, else every allowed CPU)
    #[arg(long, short = 't', value_name = "N", value_parser = crate::values::count)]
    pub threads: Option<usize>,
    /// Rounds: each candidate runs this many times, interleaved with the others
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = crate::values::count)]
    pub runs: usize,
    /// Time limit of one run (e.g. 30s, 5m): its whole process group is ended past it. Default: none
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    #[command(flatten)]
    pub out: OutputArgs,
    /// The program and its arguments, after `--`
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// The program as `exec` will find it: a path with a `/` as given, else
/// the first match in PATH; it must be an executable file.
fn resolve(cmd: &str) -> anyhow::Result<PathBuf> {
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if cmd.contains('/') {
        let p = PathBuf::from(cmd);
        if !p.exists() {
            return Err(usage(format!(
                "{cmd}: no such file (give the path of an executable program)"
            )));
        }
        if !executable(&p) {
            return Err(usage(format!(
                "{cmd}: not an executable file (chmod +x it, or give another program)"
            )));
        }
        return Ok(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(cmd))
        .find(|p| executable(p))
        .ok_or_else(|| {
            usage(format!(
                "{cmd}: command not found in PATH (give an executable program, or its path, e.g. ./{cmd})"
            ))
        })
}

/// The thread count and where it came from.
fn threads(args: &Args, allowed: usize) -> anyhow::Result<(usize, String)> {
    if let Some(n) = args.threads {
        return Ok((n, "--threads".into()));
    }
    match std::env::var("OMP_NUM_THREADS") {
        Ok(v) if !v.trim().is_empty() => {
            // OpenMP's list form (`8,4`): the first level is the team size.
            let first = v.split(',').next().unwrap_or("").trim();
            let n = first.parse::<usize>().ok().filter(|&n| n > 0).ok_or_else(|| {
                usage(format!(
                    "OMP_NUM_THREADS={v:?} is not a thread count (valid: a positive number, or give --threads)"
                ))
            })?;
            Ok((n, "OMP_NUM_THREADS".into()))
        }
        _ => Ok((allowed, "allowed CPUs".into())),
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.runs == 0 {
        return Err(usage(
            "--runs 0: at least one round is needed (e.g. --runs 5)",
        ));
    }
    let timeout = match &args.timeout {
        None => None,
        Some(t) => Some(
            numaprobe_core::units::parse_duration(t)
                .ok()
                .filter(|d| !d.is_zero())
                .ok_or_else(|| {
                    usage(format!(
                        "--timeout '{}': not a positive duration (valid: e.g. 30s, 5m, 1.5h)",
                        t.chars().take(200).collect::<String>()
                    ))
                })?,
        ),
    };
    let program = resolve(&args.command[0])?;
    let topo = crate::cmd::topo::read_topology(Path::new("/"))?;
    let allowed = topo.cpus.iter().filter(|c| c.allowed && c.online).count();
    let (threads, threads_from) = threads(&args, allowed)?;
    let weighted = weighted_interleave_weights(Path::new("/")).is_some();
    let plan = tune::plan(&topo, threads, weighted)
        .map_err(|e: BindError| usage(format!("{e} (from {threads_from})")))?;
    if let Some(c) = plan
        .candidates
        .iter()
        .find(|c| launch::cpu_set(&c.cpus).is_none())
    {
        return Err(usage(format!(
            "{}: a CPU number is beyond what sched_setaffinity takes on this system",
            c.label
        )));
    }
    let format = args.out.format();
    let sink = args.out.sink();
    let mut outcomes = vec![Outcome::default(); plan.candidates.len()];
    let mut rounds_completed = 0;
    // What runs left behind, in words, for the report's notes.
    let mut strays: Vec<String> = Vec::new();
    let progress = stderr_is_terminal();
    let total = plan.candidates.len();
    'rounds: for round in 0..args.runs {
        for (i, cand) in plan.candidates.iter().enumerate() {
            if numaprobe_core::cancel::requested() {
                break 'rounds;
            }
            // A failed candidate is not run again: it will not be ranked.
            if outcomes[i].failure.is_some() {
                continue;
            }
            if progress {
                eprint!(
                    "\r\x1b[Kround {}/{} candidate {}/{total}: {}",
                    round + 1,
                    args.runs,
                    i + 1,
                    cand.label
                );
            }
            let (ended, left) =
                launch::run_once(&program, &args.command[1..], cand, round, timeout);
            for note in stray_notes(&cand.label, round, &left) {
                if progress {
                    eprint!("\r\x1b[K");
                }
                eprintln!(
                    "numaprobe: warning: {}",
                    crate::output::one_line(&note.to_string())
                );
                strays.push(note);
            }
            match ended {
                Ended::Stopped => break 'rounds,
                Ended::TimedOut { stderr_tail } => {
                    outcomes[i].failure = Some(Failure {
                        round,
                        status: format!(
                            "timed out after {} (--timeout): its process group was ended",
                            args.timeout.as_deref().unwrap_or_default()
                        ),
                        stderr_tail,
                    });
                }
                Ended::NotStarted(why) => {
                    outcomes[i].failure = Some(Failure {
                        round,
                        status: why,
                        stderr_tail: String::new(),
                    });
                }
                Ended::Ran { run, stderr_tail } => {
                    if !run.ok {
                        outcomes[i].failure = Some(Failure {
                            round,
                            status: launch::describe(&run),
                            stderr_tail,
                        });
                    }
                    outcomes[i].runs.push(run);
                }
            }
        }
        rounds_completed = round + 1;
        // Results are written as they are produced: an interrupted run
        // keeps the last finished round's document.
        if !sink.is_stdout() && round + 1 < args.runs {
            let rep = build(
                &plan,
                &outcomes,
                &args,
                rounds_completed,
                &threads_from,
                false,
                &strays,
            );
            sink.write(&render_as(format, &rep))?;
        }
    }
    if progress {
        eprint!("\r\x1b[K");
    }
    let complete = rounds_completed == args.runs && !numaprobe_core::cancel::requested();
    let rep = build(
        &plan,
        &outcomes,
        &args,
        rounds_completed,
        &threads_from,
        complete,
        &strays,
    );
    sink.write(&render_as(format, &rep))?;
    // No winner among candidates that ran is a verdict, not a failure.
    if complete && rep.candidates.iter().all(|c| c.rank.is_none()) {
        return Err(anyhow::anyhow!(
            "{} failed under every candidate (see the failures above)",
            args.command[0]
        ));
    }
    Ok(())
}

fn build(
    plan: &tune::Plan,
    outcomes: &[Outcome],
    args: &Args,
    rounds_completed: usize,
    threads_from: &str,
    complete: bool,
    strays: &[String],
) -> TuneReport {
    let mut rep = tune::report(
        plan,
        outcomes,
        Meta {
            command: args.command.clone(),
            threads_from: threads_from.into(),
            runs_requested: args.runs,
            rounds_completed,
            complete,
        },
    );
    rep.notes.extend(strays.iter().cloned());
    rep
}

/// What one run left behind, as notes (none when it left nothing).
fn stray_notes(label: &str, round: usize, left: &launch::Strays) -> Vec<String> {
    let mut notes = Vec::new();
    if !left.ended.is_empty() {
        notes.push(format!(
            "{label}, round {}: ended what the program left running in its process group: {}",
            round + 1,
            left.ended.join(", ")
        ));
    }
    if !left.running.is_empty() {
        notes.push(format!(
            "{label}, round {}: left running outside its process group (a daemon numaprobe does not end): {}",
            round + 1,
            left.running.join(", ")
        ));
    }
    notes
}

fn render_as(format: Format, rep: &TuneReport) -> String {
    match format {
        Format::Json => numaprobe_core::render::to_json(rep),
        Format::Csv => render::csv(rep),
        Format::Markdown => render::markdown(rep),
        Format::Table => render::text(rep),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_resolve_by_path_and_in_path() {
        assert!(resolve("sh").is_ok());
        assert!(resolve("/bin/sh").is_ok());
        let e = resolve("./no-such-program-here").unwrap_err();
        assert_eq!(crate::output::exit_code(&e), 2);
        let e = resolve("no-such-program-here").unwrap_err();
        assert!(e.to_string().contains("not found in PATH"));
        // A file that is not executable: tests/cli_tune.rs (it makes one).
        // A folder.
        assert!(resolve("/tmp/").is_err());
    }
}
