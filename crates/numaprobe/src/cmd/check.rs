//! `numaprobe check --expect FILE`: for job scripts, is this machine (or a
//! dump, `--sysfs-root`) laid out as a saved topology or binding says?
//! Exit status 0 when it is, 1 with one line per difference, 2 for bad
//! input. The comparison is the library's (`analysis::compare::check`).

use crate::args::{OutputArgs, SysfsArgs};
use crate::output::{usage, Differs};
use numaprobe_core::analysis::compare;
use numaprobe_core::render;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
#[command(
    after_long_help = "FILE is what `numaprobe topo -o t.json` or `numaprobe pin ... -o p.json` \
wrote (a run.json counts as its topology).\n\n\
Against a topology: the packages and their CPUs, NUMA nodes per package, the nodes and their CPUs, \
the numbering (package and SMT style, threads per core), every CPU's place (online, package, core, \
node, SMT siblings) and the allowed CPUs and memory nodes (affinity mask and cpuset: save the \
topology inside the same kind of job allocation). Memory sizes, caches and firmware tables are \
compared by `numaprobe diff`.\n\n\
Against a binding: every CPU the saved pin result names exists, is online and allowed, and is on \
the same package, core, node and SMT rank as when the binding was computed.\n\n\
Exit status: 0 it matches; 1 it does not, one line per difference on stdout (`section: item: \
expected X, found Y`) and a summary on stderr; 2 bad input (missing or foreign FILE, a bad \
--sysfs-root). 1 is also numaprobe's code for a system failure."
)]
pub struct Args {
    /// The saved topology (numaprobe topo) or binding (numaprobe pin) to check against
    #[arg(long, value_name = "FILE")]
    pub expect: PathBuf,
    #[command(flatten)]
    pub sysfs: SysfsArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let expect = compare::load(&args.expect).map_err(|e| usage(format!("--expect: {e}")))?;
    let machine = super::topo::read_topology(&args.sysfs.sysfs_root)?;
    let report =
        compare::check::check(&expect, &machine).map_err(|e| usage(format!("--expect: {e}")))?;
    args.out
        .sink()
        .write(&render::diff::check(&report, args.out.format()))?;
    if report.matches {
        Ok(())
    } else {
        Err(anyhow::Error::new(Differs(render::diff::check_summary(
            &report,
        ))))
    }
}
