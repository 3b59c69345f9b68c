//! The command-line surface: global structure and the list of subcommands.
//! The option groups several commands share live in `args.rs`; each
//! subcommand's own options live in `cmd/<name>.rs`.

use crate::args::OutputArgs;
use clap::{Parser, Subcommand};

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
    /// Compare two report folders or documents, or several runs a side (--vs): topology, firmware and every measured cell (exit 1 when they differ)
    Diff(crate::cmd::diff::Args),
    /// Check this machine against a saved topology, run, binding or fleet baseline, for job scripts and node health checks (exit 1 naming each difference, 3 when it could not check)
    Check(crate::cmd::check::Args),
    /// Export a measured machine to Prometheus (node_exporter textfile) or hwloc XML (lstopo, HWLOC_XMLFILE)
    Export(crate::cmd::export::Args),
    /// Man pages and shell completions from this CLI, for packagers (scripts/dist)
    #[command(hide = true)]
    Generate(crate::cmd::generate::Args),
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
            // Writes Prometheus text or hwloc XML only; its --output is checked by itself.
            Command::Export(_) => &NO_OUTPUT,
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
