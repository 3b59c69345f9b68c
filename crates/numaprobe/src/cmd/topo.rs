//! `numaprobe topo`: read the machine's description (or a dump's, with
//! `--sysfs-root`) and show it in the chosen format. The rendering itself
//! lives in `numaprobe_core::render::topo`; this file only wires arguments,
//! errors and the output sink.

use crate::args::{OutputArgs, SysfsArgs};
use numaprobe_core::model::Format;
use numaprobe_core::render::topo as export;
use numaprobe_core::render::topo::CsvTable;
use numaprobe_core::topology::{self, Topology, TopologyError};
use std::path::Path;

/// `--table`: which table `--format csv` writes (CSV holds one table).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableArg {
    Cpus,
    Nodes,
    Caches,
    Distances,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub sysfs: SysfsArgs,
    #[command(flatten)]
    pub out: OutputArgs,
    /// With --format csv: the table to write, one row per CPU (default),
    /// node, cache instance, or the distance matrix.
    #[arg(long, value_enum)]
    pub table: Option<TableArg>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let format = args.out.format();
    if args.table.is_some() && format != Format::Csv {
        return Err(crate::output::usage(
            "--table chooses the table of --format csv; the other formats show every table",
        ));
    }
    let topo = read_topology(&args.sysfs.sysfs_root)?;
    let text = match format {
        Format::Table => export::to_terminal(&topo),
        Format::Json => export::to_json(&topo),
        Format::Csv => export::to_csv_table(
            &topo,
            match args.table.unwrap_or(TableArg::Cpus) {
                TableArg::Cpus => CsvTable::Cpus,
                TableArg::Nodes => CsvTable::Nodes,
                TableArg::Caches => CsvTable::Caches,
                TableArg::Distances => CsvTable::Distances,
            },
        ),
        Format::Markdown => export::to_markdown(&topo),
    };
    args.out.sink().write(&text)
}

/// Read the topology below `root`. A root that is not a sysfs tree or a
/// malformed file in it is bad input: one line naming the file, exit status
/// 2. A file that exists but cannot be read is read as missing with a
/// warning (as hwloc does); an I/O error the library still reports is a
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
