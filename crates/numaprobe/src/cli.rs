//! The command-line surface: global structure, shared option groups (output,
//! sysfs root, a matrix's nodes, sampling, page size), and the list of
//! subcommands. Each subcommand's own options live in `cmd/<name>.rs`.

use clap::{Args, Parser, Subcommand, ValueEnum};
use numaprobe_core::model::Format;
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "numaprobe",
    version,
    about = "What does the memory system of this machine really look like, and where should threads and data live?",
    long_about = "numaprobe discovers a machine's NUMA topology, measures latency and bandwidth between \
every CPU node and every memory node, infers the interconnect from the numbers and gives placement advice.\n\n\
Run without a subcommand to do the main job (`numaprobe run`); the main job's options work \
without the subcommand too: `numaprobe --budget 10s` is `numaprobe run --budget 10s`.",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The main job's options, for `numaprobe` without a subcommand.
    #[command(flatten, next_help_heading = "Main job (numaprobe = numaprobe run)")]
    pub main_job: crate::cmd::run::Args,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Show the machine: CPUs, packages, cores, caches, NUMA nodes, distances, HMAT
    Topo(crate::cmd::topo::Args),
    /// Idle memory latency from every CPU node to every memory node (pointer chase)
    Latency(crate::cmd::latency::Args),
    /// Memory bandwidth from the cores of every CPU node to every memory node
    Bandwidth(crate::cmd::bandwidth::Args),
    /// The two-thread contention study of AMD 40555 (placements, load, crossfire)
    Study(crate::cmd::study::Args),
    /// Cache-line transfer latency between CPUs (HITM, read-shared), and lock/atomic contention (--locks)
    C2c(crate::cmd::c2c::Args),
    /// Latency as the memory system fills: one chase thread beside load threads at decreasing delays
    LoadedLatency(crate::cmd::loaded_latency::Args),
    /// System peak bandwidth (every node streaming its own memory at once) and the DIMM population
    Peak(crate::cmd::peak::Args),
    /// Infer performance levels, hops and links from a measured matrix; compare with the SLIT
    Infer(crate::cmd::infer::Args),
    /// Compute a portable thread binding (compact, scatter, balanced) from the topology
    Pin(crate::cmd::pin::Args),
    /// The main job: topology, measurements within a time budget, inference, advice
    Run(crate::cmd::run::Args),
    /// (Re)build the self-contained report.html of a report folder from its JSON documents
    Report(crate::cmd::report::Args),
    /// Run your program under candidate placements (binding x memory policy) and rank them
    Tune(crate::cmd::tune::Args),
    /// The main job on every node of a Slurm selection, gathered and compared: odd nodes, outliers, failures
    Fleet(crate::cmd::fleet::Args),
    /// One node's part of `numaprobe fleet` (started by Slurm, not by people)
    #[command(hide = true)]
    FleetNode(crate::cmd::fleet::node::Args),
    /// Compare memory policies (first touch, serial init, interleave, weighted, preferred, unpinned) on a streaming workload
    Policy(crate::cmd::policy::Args),
    /// Compare two report folders or documents: topology, firmware and every measured cell (exit 1 when they differ)
    Diff(crate::cmd::diff::Args),
    /// Check this machine against a saved topology or binding, for job scripts (exit 1 naming each difference)
    Check(crate::cmd::check::Args),
    /// Man pages and shell completions from this CLI, for packagers (scripts/dist)
    #[command(hide = true)]
    Generate(crate::cmd::generate::Args),
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
    /// Output format: table (for people), json (the versioned contract), csv, markdown. Default: from the --output file's extension (.json, .csv, .md/.markdown), else table
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// Write the output to FILE instead of stdout (replaced atomically; `-` is stdout; its folder must exist)
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

impl OutputArgs {
    /// `--format` when given, else what the `--output` file's name says.
    pub fn format(&self) -> Format {
        self.format
            .or_else(|| self.output.as_deref().and_then(format_of_path))
            .unwrap_or_default()
            .into()
    }
    pub fn sink(&self) -> crate::output::Sink {
        crate::output::Sink::new(self.output.as_deref())
    }
}

/// The format a file name asks for: `.json`, `.csv`, `.md` or `.markdown`
/// (any case); None for anything else (table).
pub fn format_of_path(path: &std::path::Path) -> Option<FormatArg> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "json" => Some(FormatArg::Json),
        "csv" => Some(FormatArg::Csv),
        "md" | "markdown" => Some(FormatArg::Markdown),
        _ => None,
    }
}

impl Command {
    /// Every subcommand's `--format`/`--output`.
    pub fn output(&self) -> &OutputArgs {
        match self {
            Command::Topo(a) => &a.out,
            Command::Latency(a) => &a.out,
            Command::Bandwidth(a) => &a.out,
            Command::Study(a) => &a.out,
            Command::Infer(a) => &a.out,
            Command::Pin(a) => &a.out,
            Command::Run(a) => &a.out,
            // `report` writes HTML only; its --output is checked by itself.
            Command::Report(_) => &NO_OUTPUT,
            Command::Tune(a) => &a.out,
            Command::Fleet(a) => &a.out,
            Command::FleetNode(a) => &a.out,
            Command::Policy(a) => &a.out,
            Command::Diff(a) => &a.out,
            Command::Check(a) => &a.out,
            // Writes no result document: its own arguments say where.
            Command::Generate(_) => &NO_OUTPUT,
            Command::C2c(a) => &a.out,
            Command::LoadedLatency(a) => &a.out,
            Command::Peak(a) => &a.out,
        }
    }
}

/// The output options of a command that has none of its own.
static NO_OUTPUT: OutputArgs = OutputArgs {
    format: None,
    output: None,
};

/// `--sysfs-root`, for everything that reads the machine's description.
#[derive(Args, Debug, Clone)]
pub struct SysfsArgs {
    /// Read the machine's description (sys/, proc/) below DIR instead of `/`, e.g. an unpacked dump
    #[arg(long, value_name = "DIR", default_value = "/")]
    pub sysfs_root: PathBuf,
}

/// `--cpu-nodes` and `--mem-nodes`: the rows and columns of a matrix
/// (`latency`, `bandwidth`).
#[derive(Args, Debug, Clone, Default)]
pub struct NodeArgs {
    /// CPU nodes to measure from (rows), as a list like 0-2,5. Default: every node with a CPU this process may use
    #[arg(long, value_name = "LIST")]
    pub cpu_nodes: Option<String>,
    /// Memory nodes to measure (columns), as a list like 0-2,5. Default: every memory node this process may use, memory-only nodes included
    #[arg(long, value_name = "LIST")]
    pub mem_nodes: Option<String>,
}

/// `--time-budget` and `--cv-target`: how long each cell of a matrix samples
/// (`latency`, `bandwidth`).
#[derive(Args, Debug, Clone, Default)]
pub struct SamplingArgs {
    /// Time budget per cell, e.g. 2s or 500ms. Default: 2s (enough for a CV well under 1 % on an idle machine)
    #[arg(long, value_name = "DURATION")]
    pub time_budget: Option<String>,
    /// Stop a cell early once the CV of its samples is below this, e.g. 1% or 0.01. Default: 1%
    #[arg(long, value_name = "CV")]
    pub cv_target: Option<String>,
}

/// `--pages`: the page size of the buffers (`latency`, `bandwidth`, `peak`,
/// `loaded-latency`).
#[derive(Args, Debug, Clone, Default)]
pub struct PageArgs {
    /// Page size: 4k, thp (transparent huge pages), 2m or 1g (hugetlbfs; the node needs free huge pages). Default: thp when the kernel offers it (TLB misses then do not inflate the figures), else 4k
    #[arg(long, value_name = "PAGES")]
    pub pages: Option<String>,
}
