//! `numaprobe pin`.

use crate::cli::{OutputArgs, SysfsArgs};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub sysfs: SysfsArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`numaprobe pin` is not built yet")
}
