//! `numaprobe check --expect FILE`: for job scripts and node health checks,
//! is this machine (or a dump, `--sysfs-root`) what a saved topology, run,
//! binding or fleet baseline says? Exit status 0 when it is, 1 with one line
//! per difference, 2 for bad input, 3 when it could not check. The comparison
//! is the library's (`analysis::compare::check`); `--slurm-drain` ([`slurm`])
//! tells Slurm.

mod slurm;

use crate::args::{OutputArgs, SysfsArgs};
use crate::output::{usage, Differs};
use numaprobe_core::analysis::compare::{self, check};
use numaprobe_core::render;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
#[command(after_long_help = after_help())]
pub struct Args {
    /// The saved topology (numaprobe topo), run (run.json or report folder), latency or bandwidth matrix (with --measured), binding (numaprobe pin) or fleet (fleet.json) to check against; give several saved runs of one node (`--expect r1 --expect r2 --expect r3`) to judge cells against the spread between them
    #[arg(long, value_name = "FILE", required = true)]
    pub expect: Vec<PathBuf>,
    /// Compare only these sections (comma-separated; names below)
    #[arg(long, value_name = "A,B", conflicts_with = "skip")]
    pub only: Option<String>,
    /// Compare all sections but these (comma-separated), e.g. `--skip allowed` when the expectation was saved in another context than the check runs in
    #[arg(long, value_name = "A,B")]
    pub skip: Option<String>,
    /// How much a node's memory may differ from the expectation without counting, e.g. `3%` (default 3 %: above the kernel's reservations, below one DIMM of 16)
    #[arg(long, value_name = "PCT", value_parser = percent)]
    pub mem_tolerance: Option<f64>,
    /// How far a measured cell's median may lie from the expected one, e.g. `15%` (default 15 %)
    #[arg(long, value_name = "PCT", value_parser = percent)]
    pub band: Option<f64>,
    /// Fail a measured cell off the band in either direction; by default only slower latency or less bandwidth fails
    #[arg(long)]
    pub either_way: bool,
    /// This node's own measurements (a run.json or report folder of `numaprobe run`), judged against the expectation's matrices; check itself never measures
    #[arg(long, value_name = "FILE")]
    pub measured: Option<PathBuf>,
    /// Against a fleet.json: the signature group to check against, as fleet.md numbers it (1, the largest, by default)
    #[arg(long, value_name = "N", value_parser = crate::values::count)]
    pub group: Option<usize>,
    /// Slurm HealthCheckProgram mode: on a difference, drain this node with the first difference as the reason; never on a failure; nothing on a match
    #[arg(long)]
    pub slurm_drain: bool,
    /// The Slurm node name for --slurm-drain (default: SLURMD_NODENAME, else the host name)
    #[arg(long, value_name = "NAME", requires = "slurm_drain")]
    pub node: Option<String>,
    /// With --slurm-drain: say on stderr what would be done (the scontrol command, or why nothing) and do none of it
    #[arg(long, requires = "slurm_drain")]
    pub dry_run: bool,
    #[command(flatten)]
    pub sysfs: SysfsArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

fn after_help() -> String {
    format!(
        "FILE is what `numaprobe topo -o t.json`, `numaprobe run` (run.json, or its report folder; \
or its latency.json or bandwidth.json, judged with --measured), `numaprobe pin ... -o p.json` or \
`numaprobe fleet` (fleet.json) wrote (doc/inputs.md). Several saved runs of one node \
(`--expect r1 --expect r2 --expect r3`) are pooled: a cell's noise is then the spread between them \
(as `diff --vs` takes it), which one run's own samples cannot show.\n\n\
Sections (--only / --skip): {}.\n\
Against a topology or run: CPU model, kernel release (this machine only; a dump's kernel is not known), \
packages, NUMA nodes, numbering, every CPU's place, allowed CPUs and memory nodes (affinity mask and \
cpuset: save the expectation in the same context the check runs in, or --skip allowed), memory per \
node within --mem-tolerance and huge pages configured, SLIT, HMAT, caches, THP mode, PCI devices and \
their nodes; and when the expectation holds latency or bandwidth matrices and --measured gives this \
node's own run, every expected cell within --band of the expected median: a cell fails only when it \
is off by more than the band and more than either cell's spread, in the harmful direction (slower \
latency, less bandwidth; --either-way for both), both cells trusted (a flagged cell is named in a note, \
never judged, and never drains) and both runs measured under like conditions (their system checks). \
check never measures: a health check has seconds, and measuring would disturb the jobs on the node.\n\n\
Against a fleet.json: the largest signature group (or --group N): its signature field by field and \
the group's median per cell (with --measured).\n\n\
Against a binding: every CPU the saved pin result names exists, is online and allowed, and is on the \
same package, core, node and SMT rank as when the binding was computed.\n\n\
Exit status: 0 it matches; 1 it differs, one line per difference on stdout (`section: item: expected \
X, found Y`) and a summary on stderr; 2 bad input (missing, half-written or foreign FILE, an unknown section, a bad \
--sysfs-root or percentage); 3 could not check (the machine or a file could not be read, FILE \
unreadable (no permission, an I/O error), the output not written, scontrol failed, a bug). With --slurm-drain only exit 1 drains the node \
(doc/production.md).",
        check::section_names()
    )
}

/// `3%`, `3 %` or `3`: a percentage from 0 to 100, as a share (0.03).
fn percent(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let t = t.strip_suffix('%').unwrap_or(t).trim();
    match t.parse::<f64>() {
        Ok(v) if (0.0..=100.0).contains(&v) => Ok(v / 100.0),
        _ => Err("not a percentage; give one from 0 to 100, e.g. 3%".into()),
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    crate::output::set_failure_code(3);
    let sections = check::select(args.only.as_deref(), args.skip.as_deref()).map_err(usage)?;
    let opts = check::Options {
        sections,
        memory_tolerance: args
            .mem_tolerance
            .unwrap_or(check::DEFAULT_MEMORY_TOLERANCE),
        band_pct: args.band.map_or(check::DEFAULT_BAND_PCT, |b| b * 100.0),
        group: args.group,
        either_way: args.either_way,
    };
    let node = if args.slurm_drain {
        Some(slurm::node(args.node.as_deref())?)
    } else {
        None
    };
    let expect = expectation(&args.expect)?;
    let measured = match &args.measured {
        Some(p) => Some(measured(p)?),
        None => None,
    };
    if args.group.is_some() && expect.fleet.is_none() {
        return Err(usage(format!(
            "--group: {} is not a fleet.json; --group chooses a signature group of a fleet",
            expect.origin.path
        )));
    }
    let machine = super::topo::read_topology(&args.sysfs.sysfs_root)?;
    // Only this machine's kernel is known: a dump's is not in its files.
    let kernel = (args.sysfs.sysfs_root == Path::new("/"))
        .then(|| numaprobe_core::model::provenance::now(true).kernel);
    let this = check::This {
        topology: &machine,
        kernel: kernel.as_deref(),
        measured: measured.as_ref(),
    };
    let report =
        check::check(&expect, &this, &opts).map_err(|e| usage(format!("--expect: {e}")))?;
    args.out
        .sink()
        .write(&render::diff::check(&report, args.out.format()))?;
    for n in &report.notes {
        eprintln!(
            "numaprobe: note: {}",
            crate::output::one_line(&n.to_string())
        );
    }
    if let Some(node) = &node {
        slurm::act(&report, node, args.dry_run)?;
    }
    if report.matches {
        Ok(())
    } else {
        Err(anyhow::Error::new(Differs(render::diff::check_summary(
            &report,
        ))))
    }
}

/// A document that could not be loaded: bad input (exit 2) when it is
/// missing, foreign or half-written; could not check (exit 3) when the file
/// is there but reading it failed (no permission, an I/O error), which says
/// nothing about what the user gave.
fn load_error(flag: &str, e: compare::CompareError) -> anyhow::Error {
    use numaprobe_core::model::document::DocumentError;
    use numaprobe_core::model::input::InputError;
    // A file that is there but cannot be read is the machine's trouble
    // (exit 3, as production.md says), whichever reader met it; a missing
    // or wrong one is the caller's (exit 2).
    match e {
        compare::CompareError::Input(InputError::Io { .. })
        | compare::CompareError::Document(DocumentError::Input(InputError::Io { .. })) => {
            anyhow::anyhow!("{flag}: {e}")
        }
        e => usage(format!("{flag}: {e}")),
    }
}

/// `--expect`: one saved document, or several saved runs of one node
/// pooled ([`compare::pool`]): each cell's noise is then the spread between
/// the runs, where one run's own samples promise more than a second run
/// keeps.
fn expectation(paths: &[PathBuf]) -> anyhow::Result<compare::Side> {
    let mut runs = Vec::new();
    for p in paths {
        let side = compare::load(p, &compare::EXPECT).map_err(|e| load_error("--expect", e))?;
        if paths.len() > 1
            && !matches!(
                side.origin.kind.as_str(),
                "report" | "latency" | "bandwidth"
            )
        {
            return Err(usage(format!(
                "--expect {}: a {} cannot be pooled; several --expect are saved runs of one node (run.json, a report folder, latency or bandwidth documents)",
                p.display(),
                side.origin.kind
            )));
        }
        runs.push(side);
    }
    compare::pool::pool(runs).map_err(|e| usage(format!("--expect: {e}")))
}

/// `--measured`: a run of this node with at least one matrix.
fn measured(path: &Path) -> anyhow::Result<compare::Side> {
    let side = compare::load(path, &compare::MEASURED).map_err(|e| load_error("--measured", e))?;
    if side.latency.is_none() && side.bandwidth.is_none() {
        return Err(usage(format!(
            "--measured: {} holds no latency or bandwidth matrix; give this node's run.json (numaprobe run) or a latency/bandwidth document",
            path.display()
        )));
    }
    Ok(side)
}
