//! `numaprobe loaded-latency`: latency against achieved bandwidth as load
//! threads fill the memory system.

use crate::cli::OutputArgs;
use crate::output::usage;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub out: OutputArgs,
}

pub fn run(_args: Args) -> anyhow::Result<()> {
    Err(usage("loaded-latency is not built yet"))
}
