//! One module per subcommand; each has `Args` (its clap options) and `run`.
//! Here: choosing the subcommand, and what is checked for every one of them
//! before anything is measured.

pub mod bandwidth;
pub mod c2c;
pub mod check;
pub mod diff;
pub mod export;
pub mod fleet;
pub mod generate;
pub mod infer;
pub mod latency;
pub mod loaded_latency;
pub mod measure;
pub mod peak;
pub mod pin;
pub mod policy;
pub mod progress;
pub mod report;
pub mod run;
pub mod study;
pub mod topo;
pub mod tune;

use crate::args::OutputArgs;
use crate::cli::{Cli, Command};
use crate::output::usage;
use numaprobe_core::model::provenance::Budget;
use numaprobe_core::stats::StopRule;
use numaprobe_core::units;
use std::path::Path;
use std::time::Duration;

/// Does this command line measure this machine? Those that do get the
/// quiet-machine check first.
fn measures(cli: &Cli) -> bool {
    let run = |a: &run::Args| !a.no_measure && a.sysfs.sysfs_root == Path::new("/");
    match &cli.command {
        None => run(&cli.main_job),
        Some(Command::Run(a)) => run(a),
        Some(Command::Peak(a)) => !a.memory_only,
        // A plan measures nothing: the machine's load says nothing of it.
        Some(Command::Study(a)) => !a.plan,
        Some(
            Command::Latency(_)
            | Command::Bandwidth(_)
            | Command::Policy(_)
            | Command::C2c(_)
            | Command::LoadedLatency(_)
            | Command::Tune(_),
        ) => true,
        _ => false,
    }
}

/// Does this command line only read (documents, matrices, a dump, this
/// machine's description) and write its answer at the end? A stop signal
/// ends those at once (`stop_now`); the others stop gracefully.
fn only_reads(cli: &Cli) -> bool {
    match &cli.command {
        Some(
            Command::Topo(_)
            | Command::Infer(_)
            | Command::Report(_)
            | Command::Diff(_)
            | Command::Export(_)
            | Command::Check(_),
        ) => true,
        Some(Command::Study(a)) => a.plan,
        Some(Command::Peak(a)) => a.memory_only,
        Some(Command::Fleet(a)) => a.from.is_some(),
        _ => false,
    }
}

/// Run the command; a measuring one with the quiet-machine check before it
/// (in every document's provenance) and its warnings after it, on the
/// terminal, unless the command line itself was refused (exit 2: one line).
pub fn dispatch(cli: Cli) -> anyhow::Result<()> {
    if only_reads(&cli) {
        crate::stop_now::nothing_to_save();
    }
    if !measures(&cli) {
        return dispatch_command(cli);
    }
    let cpus = numaprobe_core::placement::allowed_cpus().unwrap_or_default();
    let check = numaprobe_core::system_check::read_below(
        Path::new("/"),
        &cpus,
        numaprobe_core::system_check::STEAL_INTERVAL,
    );
    numaprobe_core::model::provenance::set_system_check(check.clone());
    let out = dispatch_command(cli);
    let refused = out
        .as_ref()
        .is_err_and(|e| crate::output::exit_code(e) == 2 || crate::output::is_broken_pipe(e));
    if !refused {
        for w in &check.warnings {
            eprintln!(
                "numaprobe: warning: system check: {}",
                crate::output::one_line(&w.to_string())
            );
        }
    }
    out
}

fn dispatch_command(cli: Cli) -> anyhow::Result<()> {
    let Some(command) = cli.command else {
        check_output(&cli.main_job.out)?;
        return run::run(cli.main_job);
    };
    check_output(command.output())?;
    match command {
        Command::Topo(a) => topo::run(a),
        Command::Latency(a) => latency::run(a),
        Command::Bandwidth(a) => bandwidth::run(a),
        Command::Study(a) => study::run(a),
        Command::Infer(a) => infer::run(a),
        Command::Pin(a) => pin::run(a),
        Command::Run(a) => run::run(a),
        Command::Report(a) => {
            check_output(&OutputArgs {
                format: None,
                output: a.output.clone(),
            })?;
            report::run(a)
        }
        Command::Tune(a) => tune::run(a),
        Command::Fleet(a) => fleet::run(a),
        Command::FleetNode(a) => fleet::node::run(a),
        Command::Policy(a) => policy::run(a),
        Command::Diff(a) => diff::run(a),
        Command::Export(a) => {
            check_output(&OutputArgs {
                format: None,
                output: a.output.clone(),
            })?;
            export::run(a)
        }
        Command::Check(a) => check::run(a),
        Command::Generate(a) => generate::run(a, <Cli as clap::CommandFactory>::command()),
        Command::C2c(a) => c2c::run(a),
        Command::LoadedLatency(a) => loaded_latency::run(a),
        Command::Peak(a) => peak::run(a),
    }
}

/// `--output` into a folder that is not there would fail only when the
/// result is written, after the whole measurement: refuse it first.
fn check_output(out: &OutputArgs) -> anyhow::Result<()> {
    let Some(file) = out.output.as_deref().filter(|p| *p != Path::new("-")) else {
        return Ok(());
    };
    let dir = match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.exists() {
        return Err(usage(format!(
            "--output {}: the folder {} does not exist; create it first or choose another file",
            file.display(),
            dir.display()
        )));
    }
    if !dir.is_dir() {
        return Err(usage(format!(
            "--output {}: {} is not a folder",
            file.display(),
            dir.display()
        )));
    }
    // Refused now, not after the measurement: what the write would refuse.
    if let Ok(m) = std::fs::symlink_metadata(file) {
        if !m.is_file() && !m.is_dir() {
            return Err(crate::safe_dir::not_an_output(file, &m));
        }
    }
    if file.is_dir() {
        return Err(usage(format!(
            "--output {}: is a folder; give a file name",
            file.display()
        )));
    }
    Ok(())
}

/// The time budget the command will run under, for the documents'
/// provenance: the option's value, or the command's default. None for
/// commands without a budget and for a value the command will reject.
pub fn budget(cli: &Cli) -> Option<Budget> {
    let given = |option: &str, v: &Option<String>, default: Duration| -> Option<Budget> {
        let d = match v.as_deref() {
            Some(s) => units::parse_duration(s).ok()?,
            None => default,
        };
        Some(Budget {
            option: option.into(),
            seconds: d.as_secs_f64(),
        })
    };
    let per_cell = StopRule::default().budget;
    // A run that measures nothing (declined, or another machine's dump) ran
    // under no budget: a page must not state one for it.
    let job = |a: &run::Args| -> Option<Budget> {
        let measures = !a.no_measure && a.sysfs.sysfs_root == std::path::Path::new("/");
        measures
            .then(|| given("--budget", &a.budget, run::DEFAULT_BUDGET))
            .flatten()
    };
    match &cli.command {
        None => job(&cli.main_job),
        Some(Command::Run(a)) => job(a),
        Some(Command::Latency(a)) => given("--time-budget", &a.sampling.time_budget, per_cell),
        Some(Command::Bandwidth(a)) => given("--time-budget", &a.sampling.time_budget, per_cell),
        Some(Command::Peak(a)) if !a.memory_only => {
            given("--time-budget", &a.sampling.time_budget, per_cell)
        }
        Some(Command::LoadedLatency(a)) => given(
            "--time-budget",
            &a.sampling.time_budget,
            numaprobe_core::experiments::loaded::DEFAULT_POINT_BUDGET,
        ),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn cli(args: &str) -> Cli {
        Cli::try_parse_from(std::iter::once("numaprobe").chain(args.split_whitespace()))
            .unwrap_or_else(|e| panic!("{args}: {e}"))
    }

    #[test]
    fn the_quiet_machine_check_is_for_command_lines_that_measure() {
        for args in [
            "",
            "run",
            "latency",
            "bandwidth",
            "study --preset hops",
            "policy",
            "c2c",
            "loaded-latency",
            "peak",
            "tune -- true",
        ] {
            assert!(measures(&cli(args)), "{args:?} measures");
            assert!(!only_reads(&cli(args)), "{args:?} stops gracefully");
        }
        for args in [
            "run --no-measure",
            "study --preset hops --plan",
            "peak --memory-only",
            "topo",
            "infer --input m.txt",
            "report r",
            "fleet --from d",
        ] {
            assert!(!measures(&cli(args)), "{args:?} measures nothing");
        }
        for args in [
            "study --preset hops --plan",
            "peak --memory-only",
            "topo",
            "infer --input m.txt",
            "fleet --from d",
        ] {
            assert!(only_reads(&cli(args)), "{args:?} only reads");
        }
        assert!(!only_reads(&cli("fleet --nodes 2")));
    }
}
