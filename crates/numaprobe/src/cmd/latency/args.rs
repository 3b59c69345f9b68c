//! `numaprobe latency`'s options, read by the matrix (`mod.rs`) and by the
//! working-set sweep (`sweep.rs`).

use crate::args::{NodeArgs, OutputArgs, PageArgs, SamplesArgs, SamplingArgs};

#[derive(clap::Args, Debug)]
#[command(after_long_help = "How it measures:\n\n\
One thread, pinned to the first core of CPU node i (checked with sched_getcpu), chases pointers \
through a buffer bound to memory node j (mbind, verified with move_pages). Every load's address \
is the previous load's value, so loads cannot overlap and the time per step is the latency. \
The default random chain visits every 64-byte line of the buffer once, in an order no prefetcher \
can guess (Sattolo's algorithm); `--pattern stride` is the lmbench-style fixed stride of McCalpin's remote-latency measurements.\n\n\
Each cell discards a warm-up run, then repeats samples until their coefficient of variation is \
below --cv-target or --time-budget is spent, and says which. A cell whose pages are less than 99 % \
on the intended node is marked with `*`. Rows are CPU nodes, columns memory nodes (memory-only \
nodes included); the unit is nanoseconds per load.\n\n\
A cell that cannot be measured (its memory does not fit, a kernel call fails) is listed as failed \
and the run goes on; the output holds every measured cell, then the exit status is 1.")]
pub struct Args {
    #[command(flatten)]
    pub nodes: NodeArgs,
    /// The CPUs that run the chase, one per row node (e.g. an SMT sibling or a core of another CCD), as a list like 3,17. Without --cpu-nodes the rows are the nodes of these CPUs; with it, every row node needs one. Default: the first allowed core of each node
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Measure latency against working-set size instead of the matrix: one CPU node and one memory node (default: the first CPU node, its own memory), sizes from FROM to TO (default 4K to 4 x the largest cache, at least 64M and at most 2G, less when memory is short), per page kind (--pages 4k, thp or both; default both when THP is offered), and match the knees to the caches the topology reports. With the defaults it takes about 35 s where the largest cache is 32 MiB (the plan's time is printed first; doc/long-commands.md)
    #[arg(long, value_name = "FROM-TO", num_args = 0..=1, default_missing_value = "")]
    pub sweep: Option<String>,
    /// With --sweep: sizes per doubling. Default: 4
    #[arg(long, value_name = "N")]
    pub sweep_points: Option<String>,
    /// With --sweep: also draw the curve as an SVG picture (log-log, one line per page kind, the cache sizes marked) into FILE
    #[arg(long, value_name = "FILE")]
    pub chart_svg: Option<std::path::PathBuf>,
    /// Buffer size: KiB/MiB/GiB (powers of 1024) or kB/MB/GB (powers of 1000). Default: max(256 MiB, 8 x last-level cache), so the chase measures memory and not a cache, capped at half of the node's allocatable memory (free above the kernel's watermarks). Checked again before each cell: a given size that no longer fits fails that cell, the default is halved for it (and the cell flagged)
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Bytes between chased lines. Default: 64 for random (every cache line of the buffer), 128 for stride (McCalpin's value: keeps the adjacent-line prefetcher out)
    #[arg(long, value_name = "BYTES")]
    pub stride: Option<String>,
    /// random (one random cycle over all lines; defeats prefetchers) or stride (address order, fixed stride; what lmbench measures). Default: random
    #[arg(long, value_name = "PATTERN")]
    pub pattern: Option<String>,
    /// Random chase only: stay within windows of N 4 KiB pages before moving on (multichase's TLB locality), to separate DRAM latency from TLB misses. Default: no window
    #[arg(long, value_name = "PAGES")]
    pub tlb_window: Option<String>,
    #[command(flatten)]
    pub page_size: PageArgs,
    #[command(flatten)]
    pub sampling: SamplingArgs,
    #[command(flatten)]
    pub samples: SamplesArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}
