//! `numaprobe c2c`: cache-line transfer latency between CPUs (HITM and
//! read-shared ping-pong), and with `--locks` lock/atomic contention
//! (`c2c_locks.rs`).

use crate::cli::OutputArgs;
use crate::output::usage;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// CPUs to measure between, as a list like 0-3,8. Default: every allowed CPU on small machines, representatives of each sharing domain on big ones
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Measure lock and atomic contention instead of the pair matrix
    #[arg(long)]
    pub locks: bool,
    #[command(flatten)]
    pub locks_args: super::c2c_locks::LocksArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.locks {
        return super::c2c_locks::run(&args);
    }
    Err(usage("c2c is not built yet"))
}
