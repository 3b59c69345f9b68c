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
    // For now the main job is the topology summary; measurements join later.
    let topo = crate::cmd::topo::read_topology(&args.sysfs.sysfs_root)?;
    let text = match args.out.format() {
        numaprobe_core::report::Format::Json => numaprobe_core::report::topo::to_json(&topo),
        _ => numaprobe_core::report::topo::to_summary(&topo),
    };
    args.out.sink().write(&text)
}
