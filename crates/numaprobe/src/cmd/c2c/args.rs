//! `numaprobe c2c`'s options, the `--locks` ones among them: read by the
//! transfer measurement (`mod.rs`) and by the lock contention (`locks.rs`).

use crate::args::{OutputArgs, SamplesArgs, SamplingArgs};

#[derive(clap::Args, Debug)]
#[command(after_long_help = "How it measures:\n\n\
Two threads, pinned to the two CPUs of a pair (checked with sched_getcpu before and after), \
move one cache line between their caches. HITM: ping-pong on one line with plain loads and \
stores; the first CPU writes n, the second spins until it sees n and writes n + 1, and so on; \
64 round trips are timed between two clock reads and the figure is round trip / 2. \
Read-shared: the first CPU flushes 64 lines from every cache and reads them (clean in its \
cache), the second chases them in a random cycle; the figure is the time per load. Every line \
is alone in its 128-byte pair and the control lines are on another page, so no prefetcher \
brings a line early.\n\n\
Up to 16 CPUs every ordered pair is measured (a matrix); on bigger machines one pair per \
sharing domain the topology shows (SMT siblings, an L2 or cluster, an L3, a node, a package, \
across packages), both directions; --pairs all or --pairs domains forces either. The time budget is shared over the pairs and states; a \
pair stops early when its CV is below --cv-target. A thread that waits 2 s for its partner \
(de-scheduled) fails that pair, and the run goes on.")]
#[command(mut_arg("time_budget", |a| a.help("Time for the whole run, shared over the pairs and states, e.g. 4s or 500ms. Default: 4s")))]
#[command(mut_arg("cv_target", |a| a.help("Stop a pair early once the CV of its samples is below this, e.g. 1% or 0.01. Default: 1%")))]
pub struct Args {
    /// CPUs to measure between, as a list like 0-3,8. Default: every allowed CPU on small machines, representatives of each sharing domain on big ones
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Which pairs: all (every ordered pair), domains (one pair per sharing domain, both directions) or auto. Default: auto (all up to 16 CPUs, domains above)
    #[arg(long, value_name = "WHICH")]
    pub pairs: Option<String>,
    /// Lines of the HITM round trips: 1 (both CPUs write one line) or 2 (each writes its own and reads the other's: core-to-core-latency's read-write method, for comparing with it). Default: 1
    #[arg(long, value_name = "N")]
    pub hitm_lines: Option<String>,
    /// Line state: hitm (last written by the other CPU), shared (held clean by the other CPU) or both. Default: both
    #[arg(long, value_name = "STATE")]
    pub state: Option<String>,
    #[command(flatten)]
    pub sampling: SamplingArgs,
    #[command(flatten)]
    pub samples: SamplesArgs,
    /// Measure lock and atomic contention instead of the pair matrix
    #[arg(long)]
    pub locks: bool,
    #[command(flatten)]
    pub locks_args: LocksArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// Options that only `--locks` reads.
#[derive(clap::Args, Debug, Default)]
pub struct LocksArgs {
    /// --locks: thread counts, comma-separated (e.g. 1,2,4). Default: 1, 2, 4, ... up to what each placement holds
    #[arg(long, value_name = "LIST")]
    pub threads: Option<String>,
    /// --locks: placements, comma-separated: same_core (SMT siblings), same_l3, same_node, cross_node. Default: every one the machine can satisfy (the others are skipped with a note)
    #[arg(long, value_name = "LIST")]
    pub placement: Option<String>,
    /// --locks: operations, comma-separated: atomic_add, spin_lock. Default: both
    #[arg(long, value_name = "LIST")]
    pub ops: Option<String>,
    /// --locks: counters, comma-separated: shared (one counter), false_sharing (own counters on one line), own_line. Default: all three
    #[arg(long, value_name = "LIST")]
    pub sharing: Option<String>,
    /// --locks: how read-modify-writes run on arm64: auto (LSE where the CPU has it), lse, llsc (load/store-exclusive loops). Default: auto
    #[arg(long, value_name = "KIND")]
    pub atomics: Option<String>,
    /// --locks: time per run (op, sharing, placement, threads), e.g. 200ms; a sample is a tenth of it (1 ms to 100 ms). Default: 200ms
    #[arg(long, value_name = "DURATION")]
    pub locks_time: Option<String>,
}
