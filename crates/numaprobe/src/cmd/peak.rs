//! `numaprobe peak`: system peak bandwidth (every node streaming its own
//! memory at once) and the DIMM population from SMBIOS.

use crate::cli::OutputArgs;
use crate::output::usage;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub out: OutputArgs,
}

pub fn run(_args: Args) -> anyhow::Result<()> {
    Err(usage("peak is not built yet"))
}
