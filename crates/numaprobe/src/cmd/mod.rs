//! One module per subcommand; each has `Args` (its clap options) and `run`.

pub mod bandwidth;
pub mod infer;
pub mod latency;
pub mod measure;
pub mod pin;
pub mod progress;
pub mod run;
pub mod study;
pub mod topo;

use crate::cli::{Cli, Command};

pub fn dispatch(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        None => run::run(run::Args::default_for_main_job()),
        Some(Command::Topo(a)) => topo::run(a),
        Some(Command::Latency(a)) => latency::run(a),
        Some(Command::Bandwidth(a)) => bandwidth::run(a),
        Some(Command::Study(a)) => study::run(a),
        Some(Command::Infer(a)) => infer::run(a),
        Some(Command::Pin(a)) => pin::run(a),
        Some(Command::Run(a)) => run::run(a),
    }
}
