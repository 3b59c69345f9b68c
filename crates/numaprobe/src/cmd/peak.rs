//! `numaprobe peak`: system peak bandwidth (every node streaming its own
//! memory at once) and the DIMM population from SMBIOS. Options are strings
//! parsed here so bad values are one line, exit 2, before any thread starts.

use super::measure;
use super::progress::{finish_line, StepLine};
use crate::args::{OutputArgs, PageArgs, SamplingArgs, VectorArgs};
use crate::output::{usage, PartialFile};
use anyhow::Context;
use numaprobe_core::experiments::peak::{self, PeakConfig, MIX_HELP};
use numaprobe_core::kernels::mix::Mix;
use numaprobe_core::model::peak::MemoryPopulation;
use numaprobe_core::render::peak::render;
use numaprobe_core::smbios;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
#[command(after_long_help = "How it measures:\n\n\
Every allowed CPU of every NUMA node runs one thread, pinned (checked), streaming its own buffer \
bound to its own node (mbind, verified with move_pages after the last sample): Intel MLC's peak \
injection bandwidth. A barrier starts all threads together; a sample is the bytes all threads asked \
for over the span from the first start to the last finish, in GB/s (10^9 bytes/s). Each node is \
then measured alone, so the output shows what the system keeps with every node busy. Mixes: read, \
R:W (ordinary stores, whose write-allocate reads are not counted) and nt-write (non-temporal stores).\n\n\
The memory population comes from SMBIOS type 17 (/sys/firmware/dmi/tables/DMI, root only) or from \
`dmidecode -t 17` output given with --dmidecode: sockets and channels from the slot names, the \
theoretical DRAM peak (populated channels x configured MT/s x data width / 8), achieved/peak, and \
findings (a socket with fewer populated channels, mixed DIMMs, DIMMs below their rated speed). \
Without either the population is 'unknown', with the reason.")]
#[command(mut_arg("time_budget", |a| a.help("Time budget per step (one mix on the system or on one node), e.g. 2s or 500ms. Default: 2s")))]
#[command(mut_arg("cv_target", |a| a.help("Stop a step early once the CV of its samples is below this, e.g. 1% or 0.01. Default: 1%")))]
#[command(mut_arg("vector", |a| a.help("Vector width of the read kernel: avx512, avx2, sse2, sve, neon or scalar. Default: the widest this CPU has, as `bandwidth`")))]
pub struct Args {
    /// Traffic mixes, comma-separated: read, 3:1, 2:1, 1:1, nt-write (any R:W from 1 to 16). Default: read
    #[arg(long, value_name = "LIST")]
    pub mix: Option<String>,
    /// Buffer per thread (read and write parts together): KiB/MiB/GiB or kB/MB/GB. Default: each node's max(256 MiB, 2 x last-level cache), capped at half its allocatable memory, over its threads (a stream only has to exceed the cache)
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    #[command(flatten)]
    pub page_size: PageArgs,
    #[command(flatten)]
    pub sampling: SamplingArgs,
    #[command(flatten)]
    pub width: VectorArgs,
    /// Measure the whole system only, not each node alone
    #[arg(long)]
    pub system_only: bool,
    /// Read the memory population only; measure nothing
    #[arg(long)]
    pub memory_only: bool,
    /// Read the DIMMs from this `dmidecode -t 17` output instead of /sys/firmware/dmi/tables
    #[arg(long, value_name = "FILE")]
    pub dmidecode: Option<PathBuf>,
    #[command(flatten)]
    pub out: OutputArgs,
}

fn config(a: &Args) -> anyhow::Result<PeakConfig> {
    let mixes = match a.mix.as_deref() {
        None => None,
        Some(s) => {
            let mut v = Vec::new();
            for m in s.split(',') {
                if Mix::parse(m).is_none() {
                    return Err(usage(format!(
                        "--mix: invalid value '{}' (valid: {MIX_HELP})",
                        m.trim()
                    )));
                }
                v.push(m.trim().to_string());
            }
            Some(v)
        }
    };
    Ok(PeakConfig {
        mixes,
        size: measure::size("--size", &a.size)?,
        pages: measure::pages(&a.page_size.pages)?,
        width: measure::vector(&a.width.vector)?,
        rule: Some(measure::rule(
            &a.sampling.time_budget,
            &a.sampling.cv_target,
        )?),
        per_node: !a.system_only,
    })
}

/// The population from --dmidecode (a bad file is exit 2) or SMBIOS.
fn memory(a: &Args) -> anyhow::Result<MemoryPopulation> {
    match &a.dmidecode {
        Some(p) => {
            let text = numaprobe_core::model::input::read_text(p).map_err(|e| {
                usage(format!(
                    "--dmidecode {}: cannot read it ({}); give a file holding `dmidecode -t 17` output",
                    p.display(),
                    e.reason()
                ))
            })?;
            smbios::from_dmidecode(&text, &format!("--dmidecode {}", p.display())).map_err(usage)
        }
        None => Ok(smbios::read_system(Path::new("/"))),
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let cfg = config(&args)?;
    let mem = memory(&args)?;
    let sink = args.out.sink();
    let format = args.out.format();
    if args.memory_only {
        return sink.write(&render(&peak::memory_only(mem), format));
    }
    // Measurements run on this machine: no `--sysfs-root` here.
    let topo = measure::live_topology(Path::new("/"))?;
    let plan = peak::plan(&topo, &cfg).map_err(measure::experiment_error)?;
    // No ETA before the first step: a step's time is not planned.
    let mut progress = StepLine::new("peak", None);
    // The file is rewritten after every step, with the DIMMs.
    let mut file = PartialFile::new(&sink);
    let mut result = peak::run_with(&plan, &mut progress, &mut |partial| {
        file.save(|| {
            let mut r = partial.clone();
            peak::set_memory(&mut r, mem.clone());
            render(&r, format)
        })
    })
    .map_err(anyhow::Error::new)
    .context("peak measurement failed")?;
    progress.line.clear();
    file.end()?;
    let took = progress.started.elapsed().as_secs_f64();
    eprintln!(
        "numaprobe: {}",
        finish_line(
            result.system.len() + result.nodes.iter().filter(|n| !n.concurrent).count(),
            took,
            None
        )
        .replace("cell", "step")
    );
    peak::set_memory(&mut result, mem);
    sink.write(&render(&result, format))?;
    if !result.complete
        && !result.interrupted
        && result.notes.iter().any(|n| n.contains("not measured"))
    {
        return Err(anyhow::anyhow!(
            "some steps could not be measured; see `notes` in the output"
        ));
    }
    Ok(())
}
