//! `numaprobe c2c --locks`: lock and atomic contention as threads and
//! placement grow.

use crate::output::usage;

/// Options that only `--locks` reads.
#[derive(clap::Args, Debug, Default)]
pub struct LocksArgs {}

pub fn run(_args: &super::c2c::Args) -> anyhow::Result<()> {
    Err(usage("c2c --locks is not built yet"))
}
