//! `numaprobe policy`: one streaming workload, threads on every allowed CPU
//! node, run under each memory policy (first touch, serial initialisation,
//! interleave, weighted interleave, preferred, unpinned) for independent and
//! shared data (AMD 40555 §3.1-3.2, the iXBT Opteron study). Options are strings parsed here
//! so a bad value is one line naming it and the valid ones (exit 2), before
//! any thread starts; `--output` is rewritten after every sample.

use super::measure;
use super::progress::{kind_eta, Line};
use crate::args::{OutputArgs, SamplesArgs};
use crate::output::{usage, PartialFile};
use anyhow::Context;
use numaprobe_core::analysis::{self, policy as advice};
use numaprobe_core::experiments::policy::{self, PolicyConfig, PolicyProgress, Threads};
use numaprobe_core::job::observer::Status;
use numaprobe_core::kernels::StreamOp;
use numaprobe_core::model::document::{self, Accepts, Kind};
use numaprobe_core::model::format::Format;
use numaprobe_core::model::policy::{DataCase, PolicyKind, PolicyReport};
use numaprobe_core::render::policy::render;
use numaprobe_core::units;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Args, Debug)]
#[command(
    after_long_help = "How it measures (AMD 40555 §3.1-3.2, the iXBT Opteron study):\n\n\
Threads pinned one per CPU on every allowed CPU node (default: one per physical core) stream \
memory with the bandwidth kernels (--op). Two data cases: independent (each thread its own \
array; --size is split over the threads) and shared (one array of --size in one slice per \
thread; in every pass each thread streams every slice, starting at its own and moving on at a \
barrier, so all threads read all data). Policies:\n  \
first-touch  each pinned thread touches the data it streams (NUMA-aware)\n  \
serial       one thread on --node touches everything first (the serial-initialisation trap)\n  \
interleave   MPOL_INTERLEAVE over every allowed memory node\n  \
weighted     MPOL_WEIGHTED_INTERLEAVE (Linux 6.9+) with the kernel's weights; skipped with a note elsewhere\n  \
preferred    MPOL_PREFERRED on --node\n  \
unpinned     threads not pinned, default policy (what a non-NUMA-aware setup gets)\n\n\
Every sample places the data afresh and counts its pages per node with move_pages; a \
placement under 99 % of what the policy promises is marked `!`. Rounds run every policy once, \
rotating the order, so drift hits all alike. A winner is `beyond noise` when its range over \
the rounds does not overlap the runner-up's (3 rounds or more). --weights-from derives \
weighted-interleave weights from a bandwidth matrix and prints the sysfs writes and numactl \
line that apply them; the measurement uses the kernel's weights in force.\n\nWith one memory node the pinned policies place every page alike: only first-touch and unpinned are measured, and the note names the folded ones. Defaults then take 20 samples, about 40 s on a busy 2-CPU machine; every policy on several nodes takes 60 (doc/long-commands.md)."
)]
pub struct Args {
    /// Policies to compare, comma-separated: first-touch, serial, interleave, weighted, preferred, unpinned. Default: all
    #[arg(long, value_name = "LIST")]
    pub policies: Option<String>,
    /// Data cases, comma-separated: independent, shared. Default: both
    #[arg(long, value_name = "LIST")]
    pub cases: Option<String>,
    /// Threads in total, spread over the CPU nodes (1 to the allowed CPUs). Default: one per physical core of every CPU node
    #[arg(long, value_name = "N", conflicts_with = "threads_per_node")]
    pub threads: Option<String>,
    /// Threads on each CPU node (1 to the fewest allowed CPUs of a node)
    #[arg(long, value_name = "N")]
    pub threads_per_node: Option<String>,
    /// What the threads do: read, write, copy, triad (also write-nt, copy-nt). Default: read
    #[arg(long, value_name = "OP")]
    pub op: Option<String>,
    /// Data in total: KiB/MiB/GiB or kB/MB/GB. Default: max(256 MiB, 2 x last-level cache), capped at half a node's allocatable memory
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// The node of serial and preferred. Default: the first node with allowed CPUs
    #[arg(long, value_name = "NODE")]
    pub node: Option<String>,
    /// Rounds (samples per policy and case). Default: 5
    #[arg(long, value_name = "N")]
    pub rounds: Option<String>,
    /// Page size: 4k, thp, 2m, 1g. Default: 4k (interleave then places page by page)
    #[arg(long, value_name = "PAGES")]
    pub pages: Option<String>,
    /// Length each timed sample aims for, e.g. 200ms. Default: 200ms
    #[arg(long, value_name = "DURATION")]
    pub sample_time: Option<String>,
    /// Derive weighted-interleave weights from this bandwidth matrix (`numaprobe bandwidth --format json`, run.json, a report folder, CSV or MLC output)
    #[arg(long, value_name = "FILE")]
    pub weights_from: Option<PathBuf>,
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(flatten)]
    pub samples: SamplesArgs,
}

fn number(opt: &str, v: &Option<String>, max: u64, valid: &str) -> anyhow::Result<Option<u64>> {
    match v.as_deref() {
        None => Ok(None),
        Some(s) => match s.trim().parse::<u64>() {
            Ok(n) if (1..=max).contains(&n) => Ok(Some(n)),
            _ => Err(usage(format!(
                "{opt}: invalid value '{s}' (valid: {valid})"
            ))),
        },
    }
}

fn config(a: &Args) -> anyhow::Result<PolicyConfig> {
    let op =
        a.op.as_deref()
            .map(|s| {
                StreamOp::parse(s.trim()).ok_or_else(|| {
                    usage(format!(
                        "--op: invalid value '{s}' (valid: {})",
                        StreamOp::NAMES.join(", ")
                    ))
                })
            })
            .transpose()?;
    let threads = match (
        number(
            "--threads",
            &a.threads,
            1 << 20,
            "a whole number from 1 to the allowed CPUs",
        )?,
        number(
            "--threads-per-node",
            &a.threads_per_node,
            1 << 20,
            "a whole number from 1 to the fewest allowed CPUs of a node",
        )?,
    ) {
        (Some(t), _) => Some(Threads::Total(t as usize)),
        (None, Some(k)) => Some(Threads::PerNode(k as usize)),
        _ => None,
    };
    let node = match a.node.as_deref() {
        None => None,
        Some(s) => Some(s.trim().parse::<u32>().map_err(|_| {
            usage(format!(
                "--node: invalid value '{s}' (valid: a node number, e.g. 0)"
            ))
        })?),
    };
    let sample = match a.sample_time.as_deref() {
        None => None,
        Some(s) => {
            let d = units::parse_duration(s).map_err(|e| usage(format!("--sample-time: {e}")))?;
            if d.as_secs_f64() < 1e-3 || d.as_secs_f64() > 60.0 {
                return Err(usage(format!(
                    "--sample-time: '{s}' is out of range (valid: 1ms to 60s)"
                )));
            }
            Some(d.as_secs_f64())
        }
    };
    Ok(PolicyConfig {
        policies: measure::list(
            "--policies",
            &a.policies,
            PolicyKind::parse,
            PolicyKind::NAMES,
        )?,
        cases: measure::list("--cases", &a.cases, DataCase::parse, DataCase::NAMES)?,
        threads,
        op,
        size: measure::size("--size", &a.size)?,
        node,
        rounds: number("--rounds", &a.rounds, 1000, "a whole number from 1 to 1000")?
            .map(|n| n as u32),
        pages: measure::pages(&a.pages)?,
        width: None,
        derived_weights: None,
        sample_target_s: sample,
    })
}

/// What `--weights-from` takes of numaprobe's documents (MLC output and
/// CSV besides): those that hold a bandwidth matrix.
const WEIGHTS_FROM: Accepts = Accepts {
    reader: "policy --weights-from",
    kinds: &[Kind::Bandwidth, Kind::Run],
};

/// Read `--weights-from FILE` as a bandwidth matrix and derive the weights
/// for this plan's nodes.
fn derived_weights(
    path: &Path,
    plan: &policy::PolicyPlan,
) -> anyhow::Result<(Vec<numaprobe_core::model::policy::NodeWeight>, String)> {
    let file = path.display();
    let m = if path.is_dir() {
        let opts = analysis::ParseOptions {
            unit: None,
            select: Some(analysis::Select::Bandwidth),
        };
        analysis::input::read_matrix(path, opts, WEIGHTS_FROM.reader, WEIGHTS_FROM.kinds)
            .map_err(|e| usage(format!("--weights-from {e}")))?
            .0
    } else {
        let text = numaprobe_core::model::input::read_text(path)
            .map_err(|e| usage(format!("--weights-from {e}")))?;
        document::refuse_other_kind(&text, path, &WEIGHTS_FROM)
            .map_err(|e| usage(format!("--weights-from {e}")))?;
        let opts = analysis::ParseOptions {
            unit: None,
            select: text
                .trim_start()
                .starts_with('{')
                .then_some(analysis::Select::Bandwidth),
        };
        analysis::parse_with(&text, opts)
            .map_err(|e| usage(format!("--weights-from {file}: {e}")))?
    };
    let w = advice::derive_weights(&m, &plan.cpu_nodes, &plan.mem_nodes)
        .map_err(|e| usage(format!("--weights-from {file}: {e}")))?;
    Ok((
        w,
        format!(
            "from {file}: each memory node's mean {} over the CPU nodes, as small integers",
            m.unit.as_str()
        ),
    ))
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let cfg = config(&args)?;
    let topo = measure::live_topology(Path::new("/"))?;
    let mut plan = policy::plan(&topo, &cfg).map_err(measure::experiment_error)?;
    if let Some(path) = &args.weights_from {
        let (w, from) = derived_weights(path, &plan)?;
        if plan.policies.contains(&PolicyKind::Weighted)
            && plan.weighted_unsupported.is_none()
            && w != plan.kernel_weights
        {
            plan.notes.push(
                "the weighted policy ran with the kernel's weights, not the derived ones: write those (see weighted interleave, to reproduce) and run again to measure them"
                    .into(),
            );
        }
        plan.derived_weights = Some((w, from));
    }
    let sink = args.out.sink();
    let format = args.out.format();
    measure::notes_to_stderr(&sink, format, &plan.notes);
    let mut progress = Progress {
        line: Line::new(),
        file: PartialFile::new(&sink),
        format,
        keep: args.samples.keep_samples,
        kinds: policy::steps(&plan)
            .iter()
            .map(|s| (s.case, s.policy))
            .collect(),
        ended_s: Vec::new(),
        started: Instant::now(),
    };
    let mut report = policy::run(&plan, &mut progress)
        .map_err(anyhow::Error::new)
        .context("policy measurement failed")?;
    progress.line.clear();
    progress.file.end()?;
    advice::finish(&mut report);
    sink.write(&document(&report, format, progress.keep))?;
    let failed: usize = report
        .cases
        .iter()
        .flat_map(|c| c.policies.iter())
        .map(|p| p.failures.len())
        .sum();
    if failed > 0 && !report.interrupted {
        return Err(anyhow::anyhow!(
            "{failed} sample(s) could not be measured; see `failures` in the output"
        ));
    }
    Ok(())
}

/// The document as written: in JSON each policy's samples are left out
/// (what the summaries need of them kept) unless `keep` (`--keep-samples`);
/// CSV and the text formats show no samples.
fn document(report: &PolicyReport, format: Format, keep: bool) -> String {
    measure::written(report, keep, PolicyReport::leave_out_samples, |r| {
        render(r, format)
    })
}

/// Progress on stderr and the output file rewritten after every sample.
struct Progress {
    line: Line,
    file: PartialFile,
    format: Format,
    /// `--keep-samples`.
    keep: bool,
    /// Each sample's data case and policy, in the order they run: the
    /// cases and policies cost unlike (see `kind_eta`).
    kinds: Vec<(usize, PolicyKind)>,
    /// How long each ended sample took, its file written.
    ended_s: Vec<f64>,
    started: Instant,
}

impl PolicyProgress for Progress {
    fn sample_started(&mut self, index: usize, total: usize, label: &str) {
        self.line.set_label(label);
        let elapsed = self.started.elapsed().as_secs_f64();
        self.line.show(&Status::single(
            "policy",
            index,
            total,
            elapsed,
            kind_eta(&self.kinds, &self.ended_s),
        ));
    }

    fn sample_finished(&mut self, partial: &PolicyReport) {
        let (format, keep) = (self.format, self.keep);
        self.file.save(|| {
            let mut r = partial.clone();
            advice::finish(&mut r);
            document(&r, format, keep)
        });
        let before: f64 = self.ended_s.iter().sum();
        self.ended_s
            .push(self.started.elapsed().as_secs_f64() - before);
    }
}
