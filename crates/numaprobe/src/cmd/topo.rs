//! `numaprobe topo`: read the machine's description (or a dump's, with
//! `--sysfs-root`) and show it in the chosen format. The rendering itself
//! lives in `numaprobe_core::report::topo`; this file only wires arguments,
//! errors and the output sink.

use crate::cli::{OutputArgs, SysfsArgs};
use numaprobe_core::report::{topo as export, Format};
use numaprobe_core::topology::{self, Topology, TopologyError};
use std::path::Path;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub sysfs: SysfsArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let topo = read_topology(&args.sysfs.sysfs_root)?;
    let text = match args.out.format() {
        Format::Table => export::to_text(&topo),
        Format::Json => export::to_json(&topo),
        Format::Csv => export::to_csv(&topo),
        Format::Markdown => export::to_markdown(&topo),
    };
    args.out.sink().write(&text)
}

/// Read the topology below `root`. A root that is not a sysfs tree or a
/// malformed file in it is bad input: one line naming the file, exit status
/// 2. A file that exists but cannot be read (permissions, an I/O error) is a
/// system failure: exit status 1.
pub fn read_topology(root: &Path) -> anyhow::Result<Topology> {
    topology::read(root).map_err(|e| {
        let hint = match e {
            TopologyError::NoRoot(_) | TopologyError::NotSysfs(_) => {
                " (--sysfs-root wants a folder holding sys/ and proc/, e.g. an unpacked dump)"
            }
            _ => "",
        };
        let msg = format!("cannot read the topology: {e}{hint}");
        match e {
            TopologyError::Io { .. } => anyhow::anyhow!(msg),
            _ => crate::output::usage(msg),
        }
    })
}
