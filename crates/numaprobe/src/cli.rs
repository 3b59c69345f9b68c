//! The command-line surface: global structure, shared option groups, and the
//! list of subcommands. Each subcommand's own options live in `cmd/<name>.rs`.

use clap::{Args, Parser, Subcommand, ValueEnum};
use numaprobe_core::report::Format;
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "numaprobe",
    version,
    about = "What does the memory system of this machine really look like, and where should threads and data live?",
    long_about = "numaprobe discovers a machine's NUMA topology, measures latency and bandwidth between \
every CPU node and every memory node, infers the interconnect from the numbers and gives placement advice.\n\n\
Run without a subcommand to do the main job (`numaprobe run`)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Show the machine: CPUs, packages, cores, caches, NUMA nodes, distances, HMAT
    Topo(crate::cmd::topo::Args),
    /// Idle memory latency from every CPU node to every memory node (pointer chase)
    Latency(crate::cmd::latency::Args),
    /// Memory bandwidth from the cores of every CPU node to every memory node
    Bandwidth(crate::cmd::bandwidth::Args),
    /// The two-thread contention study of the AMD ccNUMA note (placements, load, crossfire)
    Study(crate::cmd::study::Args),
    /// Infer performance levels, hops and links from a measured matrix; compare with the SLIT
    Infer(crate::cmd::infer::Args),
    /// Compute a portable thread binding (compact, scatter, balanced) from the topology
    Pin(crate::cmd::pin::Args),
    /// The main job: topology, measurements within a time budget, inference, advice
    Run(crate::cmd::run::Args),
}

/// Output format; `table` is for people, `json` is the versioned contract.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FormatArg {
    #[default]
    Table,
    Json,
    Csv,
    Markdown,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Self {
        match f {
            FormatArg::Table => Format::Table,
            FormatArg::Json => Format::Json,
            FormatArg::Csv => Format::Csv,
            FormatArg::Markdown => Format::Markdown,
        }
    }
}

/// `--format` and `--output`, shared by every subcommand.
#[derive(Args, Debug, Clone)]
pub struct OutputArgs {
    /// Output format: table (for people), json (the versioned contract), csv, markdown
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    pub format: FormatArg,
    /// Write the output to FILE instead of stdout (replaced atomically; `-` is stdout)
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[allow(dead_code)] // used as the subcommands land
impl OutputArgs {
    pub fn format(&self) -> Format {
        self.format.into()
    }
    pub fn sink(&self) -> crate::output::Sink {
        crate::output::Sink::new(self.output.as_deref())
    }
}

/// `--sysfs-root`, for everything that reads the machine's description.
#[derive(Args, Debug, Clone)]
pub struct SysfsArgs {
    /// Read the machine's description (sys/, proc/) below DIR instead of `/`, e.g. an unpacked dump
    #[arg(long, value_name = "DIR", default_value = "/")]
    pub sysfs_root: PathBuf,
}
