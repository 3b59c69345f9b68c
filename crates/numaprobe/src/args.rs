//! The option groups several subcommands share (output, sysfs root, a
//! matrix's nodes, sampling, page size), flattened into each command's own
//! `Args`. A file of its own so that the commands and the subcommand list
//! (`cli.rs`) both name it without naming each other.

use clap::{Args, ValueEnum};
use numaprobe_core::model::Format;
use std::path::PathBuf;

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
/// (`latency`, `bandwidth`). `peak`, `loaded-latency` and `c2c` take them too,
/// each saying in its help (`mut_arg`) what its budget covers (a step, a
/// point, the whole run) and its default.
#[derive(Args, Debug, Clone, Default)]
pub struct SamplingArgs {
    /// Time budget per cell, e.g. 2s or 500ms. Default: 2s (enough for a CV well under 1 % on an idle machine)
    #[arg(long, value_name = "DURATION")]
    pub time_budget: Option<String>,
    /// Stop a cell early once the CV of its samples is below this, e.g. 1% or 0.01. Default: 1%
    #[arg(long, value_name = "CV")]
    pub cv_target: Option<String>,
}

/// `--keep-samples`: every figure's raw samples in the JSON written
/// (`latency`, `bandwidth`, `c2c`; `run` has its own, which names the report
/// folder's files).
#[derive(Args, Debug, Clone, Default)]
pub struct SamplesArgs {
    /// Keep every figure's raw samples in the JSON written (the document, and each file of a report folder). Default: each figure keeps its median, spread and a sketch (sample count and 17 quantiles), enough for diff's tests, so a document grows with its figures, not with how long each was sampled
    #[arg(long)]
    pub keep_samples: bool,
}

/// `--pages`: the page size of the buffers (`latency`, `bandwidth`, `peak`,
/// `loaded-latency`).
#[derive(Args, Debug, Clone, Default)]
pub struct PageArgs {
    /// Page size: 4k, thp (transparent huge pages), 2m or 1g (hugetlbfs; the node needs free huge pages). Default: thp when the kernel offers it (TLB misses then do not inflate the figures), else 4k
    #[arg(long, value_name = "PAGES")]
    pub pages: Option<String>,
}

/// `--vector`: the width of the streaming read kernel (`bandwidth`, `peak`,
/// `loaded-latency`; the last two say in their help which threads use it).
#[derive(Args, Debug, Clone, Default)]
pub struct VectorArgs {
    /// Force a vector width: avx512, avx2, sse2, sve, neon or scalar. Default: the widest this CPU has
    #[arg(long, value_name = "WIDTH")]
    pub vector: Option<String>,
}
