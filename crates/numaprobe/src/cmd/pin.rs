//! `numaprobe pin`: compute a portable thread binding (compact, scatter,
//! balanced) from this machine's topology or a dump's, and print it in the
//! forms people paste: taskset, numactl, OpenMP, GNU/Intel OpenMP, Slurm.

use crate::args::{OutputArgs, SysfsArgs};
use crate::output::usage;
use numaprobe_core::analysis::binding::{self, BindError, Request, Smt, Strategy};
use numaprobe_core::model::pin::PinReport;
use numaprobe_core::model::Format;
use numaprobe_core::render;
use numaprobe_core::units;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrategyArg {
    /// Fill one package's cores before the next (shared caches, one memory controller)
    Compact,
    /// Consecutive threads on different packages, then nodes, then cores (all caches, all bandwidth)
    Scatter,
    /// Spread evenly over packages and nodes, neighbouring thread numbers side by side
    Balanced,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SmtArg {
    /// One thread per core; past the number of cores, share cores with a warning
    #[default]
    Avoid,
    /// Hardware threads are fair game: compact puts a core's threads side by side
    Use,
}

#[derive(clap::Args, Debug)]
#[command(
    after_long_help = "Computes where N threads should run from the machine's structure (packages, NUMA \
nodes, cores, hardware threads), never from CPU numbers, so the same strategy gives equivalent \
placements on machines that number their CPUs differently. Only CPUs this process may use \
(online, affinity mask, cgroup cpuset) are chosen.\n\n\
Strategies:\n  \
compact   fill one package's cores before the next: shared caches, one memory controller\n  \
scatter   consecutive threads on different packages, then nodes, then cores: all caches and memory bandwidth\n  \
balanced  as even as scatter, but thread numbers that are close sit close (blocks per package)\n\n\
No two threads share a core while a free core remains. With --smt avoid (the default) and more \
threads than cores, the extra threads share cores and a warning says so; --smt use makes that the \
plan (and lets compact put a core's hardware threads side by side).\n\n\
A warning says what `taskset -c 0-(N-1)` would have done wrong on this machine.\n\n\
Without options it gives the main job's binding (`numaprobe run`): one thread per allowed core, \
scattered.\n\n\
Examples:\n  numaprobe pin\n  numaprobe pin --threads 8 --strategy scatter\n  numaprobe pin --threads 4 --strategy compact --nodes 1\n  \
numaprobe pin --threads 16 --strategy balanced --sysfs-root dump/ --format json"
)]
pub struct Args {
    /// Number of threads to place. Default: one per allowed core (of --nodes)
    #[arg(long, short = 't', value_name = "N", value_parser = crate::values::count)]
    pub threads: Option<usize>,
    /// How to place them. Default: scatter
    #[arg(long, short = 's', value_enum)]
    pub strategy: Option<StrategyArg>,
    /// Whether threads may share a core's hardware threads
    #[arg(long, value_enum, default_value_t = SmtArg::Avoid)]
    pub smt: SmtArg,
    /// Use only these NUMA nodes' CPUs, e.g. `0,2` or `0-3`
    #[arg(long, value_name = "LIST")]
    pub nodes: Option<String>,
    #[command(flatten)]
    pub sysfs: SysfsArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// `0,2-3` -> [0, 2, 3] (read by `units::parse_list`); the value is named
/// in the error.
fn parse_list(s: &str) -> anyhow::Result<Vec<u32>> {
    units::parse_list(s).map_err(|_| {
        usage(format!(
            "--nodes {s:?} is not a node list (valid: numbers and ranges, e.g. 0,2 or 0-3)"
        ))
    })
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let nodes = args.nodes.as_deref().map(parse_list).transpose()?;
    let topo = super::topo::read_topology(&args.sysfs.sysfs_root)?;
    let strategy = args.strategy.map(|s| match s {
        StrategyArg::Compact => Strategy::Compact,
        StrategyArg::Scatter => Strategy::Scatter,
        StrategyArg::Balanced => Strategy::Balanced,
    });
    let req = Request {
        smt: match args.smt {
            SmtArg::Avoid => Smt::Avoid,
            SmtArg::Use => Smt::Use,
        },
        ..Request::main_job(&topo, nodes, args.threads, strategy)
    };
    // Every binding error is about the request (too many threads, a node
    // that does not exist): a usage error, exit status 2.
    let b = binding::bind(&topo, &req).map_err(|e: BindError| usage(e.to_string()))?;
    let rep = PinReport::new(&req, &b);
    // Warnings go to stderr so that stdout stays pasteable / parseable.
    for w in rep.warnings.iter().chain(rep.naive_problems.iter()) {
        eprintln!(
            "numaprobe: warning: {}",
            crate::output::one_line(&w.to_string())
        );
    }
    let text = match args.out.format() {
        Format::Json => render::to_json(&rep),
        Format::Csv => rep.csv_table().to_csv(),
        Format::Markdown => rep.markdown(),
        Format::Table => format!(
            "{}\n{}",
            rep.placement_table().to_text(),
            rep.commands_table().to_text()
        ),
    };
    args.out.sink().write(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_lists() {
        assert_eq!(parse_list("0,2-3").unwrap(), vec![0, 2, 3]);
        assert!(parse_list("x").is_err());
        assert!(parse_list("3-1").is_err());
        assert!(parse_list("1,,2").is_err());
    }
}
