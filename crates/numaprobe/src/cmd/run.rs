//! `numaprobe run` (and `numaprobe` with no arguments): the main job.

use crate::cli::{FormatArg, OutputArgs, SysfsArgs};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub sysfs: SysfsArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

impl Args {
    pub fn default_for_main_job() -> Self {
        Args {
            sysfs: SysfsArgs {
                sysfs_root: PathBuf::from("/"),
            },
            out: OutputArgs {
                format: FormatArg::Table,
                output: None,
            },
        }
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let topo = numaprobe_core::topology::read(&args.sysfs.sysfs_root)
        .map_err(|e| crate::output::usage(e.to_string()))?;
    args.out.sink().write(&format!(
        "{} CPUs, {} NUMA nodes\n",
        topo.cpus.len(),
        topo.nodes.len()
    ))
}
