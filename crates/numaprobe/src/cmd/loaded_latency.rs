//! `numaprobe loaded-latency`: latency against achieved bandwidth as load
//! threads fill the memory system. Options are strings parsed here so that
//! a bad value is one line naming it and the valid ones (exit 2), before
//! any thread starts; `--output` is rewritten after every point.

use super::measure;
use super::progress::StepLine;
use crate::args::{OutputArgs, PageArgs, SamplingArgs, VectorArgs};
use crate::output::{usage, PartialFile, Sink};
use anyhow::Context;
use numaprobe_core::experiments::loaded::{self, LoadedConfig, DEFAULT_POINT_BUDGET, MAX_DELAY};
use numaprobe_core::kernels::mix::Mix;
use numaprobe_core::render::loaded::render;
use numaprobe_core::units;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
#[command(after_long_help = "How it measures (Intel MLC's loaded latency):\n\n\
One thread, pinned to a CPU of the CPU node (default: its first core), chases pointers through \
its own buffer bound to the memory node (the `latency` kernel: a random cycle through every \
64-byte line). The other allowed CPUs of the CPU node (default: all but the chase's SMT siblings) \
each run a load thread on their own buffer bound to the same memory node: blocks of four lines read \
and written in the mix's proportion, then 4 x `delay` units of idle work (a few cycles each). The \
reads are `bandwidth`'s streaming read kernel at --vector (default the widest), so the saturated \
read point is what `bandwidth --op read` gives with as many threads. Points \
go from idle (no load thread) through the delays, lightest first, to delay 0 (saturation).\n\n\
Per point: the chase discards a warm-up sample, then samples under the stop rule; the latency is \
the median of the samples (ns per load, as `latency` reports it), p90/p99 are taken over short \
windows of a few hundred dependent loads. The bandwidth is every thread's bytes (the chase's \
lines x 64 B included) over a sample's time, the median of the samples; R:W mixes use ordinary stores, whose \
write-allocate reads are not counted. The knee is the first point whose latency is 1.10 x the \
idle latency or more; the peak is the highest bandwidth. Every buffer's pages are counted per \
node with move_pages after each curve (placement); every thread's CPU is checked with \
sched_getcpu.")]
#[command(mut_arg("time_budget", |a| a.help("Time budget per point, e.g. 1s or 300ms. Default: 1s (one node: 14 points plus set-up; 37 s measured on a busy 2-CPU machine, doc/long-commands.md)")))]
#[command(mut_arg("cv_target", |a| a.help("Stop a point early once the CV of its samples is below this, e.g. 1% or 0.01. Default: 1%")))]
#[command(mut_arg("vector", |a| a.help("Vector width of the load threads' read kernel: avx512, avx2, sse2, sve, neon or scalar. Default: the widest this CPU has, as `bandwidth` (so the saturated read point is comparable with it)")))]
pub struct Args {
    /// (CPU node:memory node) pairs, e.g. 0:0,0:1. Default: the first CPU node's local memory and its worst remote memory by SLIT (a CPU-less node included); just local on a one-node machine
    #[arg(long, value_name = "LIST", conflicts_with_all = ["cpu_node", "mem_node"])]
    pub pairs: Option<String>,
    /// The CPU node (chase and load threads). Default: the first node with allowed CPUs
    #[arg(long, value_name = "NODE")]
    pub cpu_node: Option<String>,
    /// The one memory node to measure. Default: local and the worst remote of --cpu-node
    #[arg(long, value_name = "NODE")]
    pub mem_node: Option<String>,
    /// Traffic mixes of the load threads, comma-separated: read, 3:1, 2:1, 1:1 (reads:writes, R and W from 1 to 16), nt-write. Default: read
    #[arg(long, value_name = "LIST")]
    pub mix: Option<String>,
    /// Injected delays, comma-separated, 0 (saturation) to 1048576; run lightest first. Default: 2048,1024,512,256,128,64,32,16,8,4,2,1,0
    #[arg(long, value_name = "LIST")]
    pub delays: Option<String>,
    /// The chase thread's CPU (on the CPU node). Default: the node's first core
    #[arg(long, value_name = "CPU")]
    pub chase_cpu: Option<String>,
    /// The load threads' CPUs (on the CPU node), as a list like 1-7. Default: every other allowed CPU of the node but the chase's SMT siblings
    #[arg(long, value_name = "LIST")]
    pub load_cpus: Option<String>,
    /// Buffer size of each thread: KiB/MiB/GiB or kB/MB/GB. Default: 4 x the last-level cache over the threads, between 64 MiB and 1 GiB, all threads within half of the node's allocatable memory
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    #[command(flatten)]
    pub width: VectorArgs,
    #[command(flatten)]
    pub page_size: PageArgs,
    #[command(flatten)]
    pub sampling: SamplingArgs,
    /// Also draw latency against bandwidth, every curve, as an SVG file
    #[arg(long, value_name = "FILE")]
    pub chart: Option<PathBuf>,
    #[command(flatten)]
    pub out: OutputArgs,
}

fn node(opt: &str, v: &Option<String>) -> anyhow::Result<Option<u32>> {
    v.as_deref()
        .map(|s| {
            s.trim().parse::<u32>().map_err(|_| {
                usage(format!(
                    "{opt}: invalid value '{s}' (valid: a node number, e.g. 0)"
                ))
            })
        })
        .transpose()
}

fn pairs(v: &Option<String>) -> anyhow::Result<Option<Vec<(u32, u32)>>> {
    let Some(s) = v.as_deref() else {
        return Ok(None);
    };
    s.split(',')
        .map(str::trim)
        .map(|w| {
            w.split_once(':')
                .and_then(|(c, m)| Some((c.trim().parse().ok()?, m.trim().parse().ok()?)))
                .ok_or_else(|| {
                    usage(format!(
                        "--pairs: invalid value '{w}' (valid: CPU node:memory node pairs, e.g. 0:0,0:1)"
                    ))
                })
        })
        .collect::<anyhow::Result<Vec<_>>>()
        .map(Some)
}

fn mixes(v: &Option<String>) -> anyhow::Result<Option<Vec<String>>> {
    let Some(s) = v.as_deref() else {
        return Ok(None);
    };
    s.split(',')
        .map(str::trim)
        .map(|w| {
            Mix::parse(w).map(Mix::name).ok_or_else(|| {
                usage(format!(
                    "--mix: invalid value '{w}' (valid: {}, or R:W with R and W from 1 to 16)",
                    loaded::mix_names()
                ))
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()
        .map(Some)
}

fn delays(v: &Option<String>) -> anyhow::Result<Option<Vec<u32>>> {
    let Some(s) = v.as_deref() else {
        return Ok(None);
    };
    s.split(',')
        .map(str::trim)
        .map(|w| match w.parse::<u32>() {
            Ok(d) if d <= MAX_DELAY => Ok(d),
            _ => Err(usage(format!(
                "--delays: invalid value '{w}' (valid: whole numbers from 0 to {MAX_DELAY}, e.g. 1024,64,0)"
            ))),
        })
        .collect::<anyhow::Result<Vec<_>>>()
        .map(Some)
}

fn config(a: &Args) -> anyhow::Result<LoadedConfig> {
    let mut rule = measure::rule(&a.sampling.time_budget, &a.sampling.cv_target)?;
    if a.sampling.time_budget.is_none() {
        rule.budget = DEFAULT_POINT_BUDGET;
    }
    let chase_cpu = match a.chase_cpu.as_deref() {
        None => None,
        Some(s) => Some(s.trim().parse::<u32>().map_err(|_| {
            usage(format!(
                "--chase-cpu: invalid value '{s}' (valid: a CPU number, e.g. 0)"
            ))
        })?),
    };
    Ok(LoadedConfig {
        pairs: pairs(&a.pairs)?,
        mixes: mixes(&a.mix)?,
        delays: delays(&a.delays)?,
        size: measure::size("--size", &a.size)?,
        pages: measure::pages(&a.page_size.pages)?,
        width: measure::vector(&a.width.vector)?,
        rule: Some(rule),
        cpu_node: node("--cpu-node", &a.cpu_node)?,
        mem_node: node("--mem-node", &a.mem_node)?,
        chase_cpu,
        load_cpus: a
            .load_cpus
            .as_deref()
            .map(|s| units::parse_list(s).map_err(|e| usage(format!("--load-cpus: {e}"))))
            .transpose()?,
    })
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let cfg = config(&args)?;
    if let Some(chart) = &args.chart {
        check_chart(chart)?;
    }
    let topo = measure::live_topology(Path::new("/"))?;
    let plan = loaded::plan(&topo, &cfg).map_err(measure::experiment_error)?;
    let sink = args.out.sink();
    let format = args.out.format();
    // One step per point, each sampled for the budget; a pair's buffers
    // are set up before its first.
    let mut progress = StepLine::planned("loaded-latency", plan.step_costs());
    let mut file = PartialFile::new(&sink);
    let result = loaded::run_with(&plan, &mut progress, &mut |partial| {
        file.save(|| render(partial, format))
    })
    .map_err(anyhow::Error::new)
    .context("loaded-latency measurement failed")?;
    progress.line.clear();
    file.end()?;
    sink.write(&render(&result, format))?;
    if let Some(chart) = &args.chart {
        match numaprobe_core::render::loaded_chart::svg(&result) {
            Ok(svg) => Sink::File(chart.clone()).write(&svg)?,
            Err(e) => eprintln!("numaprobe: --chart {}: {e}", chart.display()),
        }
    }
    if !result.failed.is_empty() && !result.interrupted {
        return Err(anyhow::anyhow!(
            "{} pair(s) could not be measured; see `failed` in the output",
            result.failed.len()
        ));
    }
    Ok(())
}

/// `--chart` into a folder that is not there would fail after the whole run.
fn check_chart(chart: &Path) -> anyhow::Result<()> {
    let dir = match chart.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() || chart.is_dir() {
        return Err(usage(format!(
            "--chart {}: the folder {} does not exist or the name is a folder; give a file in an existing folder",
            chart.display(),
            dir.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_and_bad_values_name_themselves() {
        assert_eq!(
            pairs(&Some("0:0, 0:1".into())).unwrap(),
            Some(vec![(0, 0), (0, 1)])
        );
        let e = pairs(&Some("0-1".into())).unwrap_err().to_string();
        assert!(e.starts_with("--pairs: invalid value '0-1'"), "{e}");
        assert_eq!(
            mixes(&Some("read,3:1,nt-write".into())).unwrap(),
            Some(vec!["read".into(), "3:1".into(), "nt-write".into()])
        );
        let e = mixes(&Some("read,wr".into())).unwrap_err().to_string();
        assert!(e.starts_with("--mix: invalid value 'wr'"), "{e}");
        assert!(e.contains("read, 3:1, 2:1, 1:1, nt-write"), "{e}");
        assert_eq!(delays(&Some("64,0".into())).unwrap(), Some(vec![64, 0]));
        let e = delays(&Some("5000000".into())).unwrap_err().to_string();
        assert!(e.contains("'5000000'") && e.contains("0 to 1048576"), "{e}");
    }
}
