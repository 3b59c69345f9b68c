//! `numaprobe bandwidth`: the bandwidth matrix (CPU node x memory node) with
//! N pinned threads streaming, and `--scaling` (1..N threads on one node).
//! Options are strings parsed here so bad values are one line, exit 2.

use super::measure;
use crate::args::{NodeArgs, OutputArgs, PageArgs, SamplesArgs, SamplingArgs, VectorArgs};
use crate::output::usage;
use anyhow::Context;
use numaprobe_core::experiments::bandwidth::{self, BandwidthConfig};
use numaprobe_core::kernels::StreamOp;

#[derive(clap::Args, Debug)]
#[command(after_long_help = "How it measures:\n\n\
N threads, each pinned (checked) to its own core of CPU node i, each stream their own share \
of a buffer bound to memory node j (mbind, verified with move_pages); the pages are touched \
by the pinned thread before anything is timed. A barrier starts all threads together; a sample is \
the bytes the program asked for (loads plus stores) over the span from the first start to the \
last finish, in GB/s (10^9 bytes/s). Ordinary stores also read every line they write \
(write-allocate); that traffic is not counted and the output says so. The kernels use the \
widest vector width of the CPU (AVX-512, AVX2, SSE2, NEON), recorded in every cell.\n\n\
Rows are CPU nodes, columns memory nodes; a cell with less than 99 % of its pages on the \
intended node is marked with `*`. `--scaling` measures one node pair for 1..N threads instead: \
where the curve flattens, the node's memory is saturated (the iXBT Opteron study's question).\n\n\
A cell that cannot be measured (its memory does not fit, a kernel call fails) is listed as failed \
and the run goes on; the output holds every measured cell, then the exit status is 1.")]
pub struct Args {
    /// What the threads do: read, write, write-nt (non-temporal stores, no write-allocate), copy, copy-nt, triad (a = b + s*c). Default: read (the figure the RWTH Aachen blog compares nodes by)
    #[arg(long, value_name = "OP")]
    pub op: Option<String>,
    /// Threads per cell. Default: one per physical core of the CPU node (SMT siblings share a core's load ports, so they add little)
    #[arg(long, value_name = "N")]
    pub threads: Option<String>,
    /// Measure 1..N threads on one node pair (the first --cpu-nodes node, its own memory unless --mem-nodes says otherwise); N is --threads or every allowed CPU of the node
    #[arg(long)]
    pub scaling: bool,
    #[command(flatten)]
    pub nodes: NodeArgs,
    /// The CPUs the threads run on, as a list like 0-3 or 0,2,4 (a CCD, one SMT sibling per core...): a row node's threads use the listed CPUs on it (the first --threads of them). Without --cpu-nodes the rows are the nodes of these CPUs; with it, every row node needs one. Default: one per physical core of each node
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Total buffer size over all threads: KiB/MiB/GiB or kB/MB/GB. Default: max(256 MiB, 8 x last-level cache), so the stream misses every cache, capped at half of the node's allocatable memory (free above the kernel's watermarks). Checked again before each cell: a given size that no longer fits fails that cell, the default is halved for it (and the cell flagged)
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    #[command(flatten)]
    pub page_size: PageArgs,
    #[command(flatten)]
    pub sampling: SamplingArgs,
    #[command(flatten)]
    pub samples: SamplesArgs,
    #[command(flatten)]
    pub width: VectorArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

fn config(a: &Args) -> anyhow::Result<BandwidthConfig> {
    let op =
        a.op.as_deref()
            .map(|s| {
                StreamOp::parse(s).ok_or_else(|| {
                    usage(format!(
                        "--op: invalid value '{s}' (valid: {})",
                        StreamOp::NAMES.join(", ")
                    ))
                })
            })
            .transpose()?;
    let threads = match a.threads.as_deref() {
        None => None,
        Some(s) => match s.trim().parse::<usize>() {
            Ok(n) if (1..=4096).contains(&n) => Some(n),
            _ => {
                return Err(usage(format!(
                    "--threads: invalid value '{s}' (valid: a whole number from 1 to the CPU node's allowed CPUs)"
                )))
            }
        },
    };
    let width = measure::vector(&a.width.vector)?;
    Ok(BandwidthConfig {
        cpu_nodes: measure::node_list("--cpu-nodes", &a.nodes.cpu_nodes)?,
        cpus: measure::node_list("--cpus", &a.cpus)?,
        mem_nodes: measure::node_list("--mem-nodes", &a.nodes.mem_nodes)?,
        size: measure::size("--size", &a.size)?,
        op,
        threads,
        scaling: a.scaling,
        pages: measure::pages(&a.page_size.pages)?,
        rule: Some(measure::rule(
            &a.sampling.time_budget,
            &a.sampling.cv_target,
        )?),
        width,
    })
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let cfg = config(&args)?;
    // Measurements run on this machine: no `--sysfs-root` here.
    let topo = measure::live_topology(std::path::Path::new("/"))?;
    let plan = bandwidth::plan(&topo, &cfg).map_err(measure::experiment_error)?;
    let mut progress = measure::CellProgress::new(args.out.sink(), args.out.format())
        .named("bandwidth")
        .keep_samples(args.samples.keep_samples);
    let result = bandwidth::run_with(&plan, &mut progress, &mut super::latency::gauge()?)
        .map_err(anyhow::Error::new)
        .context("bandwidth measurement failed")?;
    // Every finished cell reaches every output first; then the failures.
    progress.finish(&result)?;
    for w in result.trust_summaries() {
        eprintln!("numaprobe: warning: {w}");
    }
    match result.failure_summary(plan.cells.len()) {
        Some(line) => Err(anyhow::anyhow!(line)),
        None => Ok(()),
    }
}
