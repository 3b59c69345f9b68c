//! `numaprobe diff A B`: compare two report folders (or two documents of the
//! same kind, or several runs a side with `--vs`) and say whether, where and
//! by how much they differ. The comparison and the pooling of runs are the
//! library's (`analysis::compare`); this file parses the options, maps
//! unreadable input to exit status 2 and a found difference to exit status 1.

use crate::args::OutputArgs;
use crate::output::{usage, Differs};
use numaprobe_core::analysis::compare::{self, cells};
use numaprobe_core::render;
use numaprobe_core::units;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
#[command(
    after_long_help = "Several runs a side: `numaprobe diff a1 a2 a3 --vs b1 b2 b3` (A's runs before --vs, \
B's after it; a side may be one run). Each figure's samples are pooled over its side's runs and its noise \
is the standard error of its runs' medians, widened by Student's t for their few degrees of freedom: one \
run cannot show how far the next falls, several can. The runs of a side must have measured the same \
things.\n\n\
A and B are report folders (as `numaprobe run` writes them: topo.json, \
latency.json, bandwidth.json, c2c.json; or run.json alone) or two JSON documents of the same kind \
(run, topo, latency, bandwidth or c2c; doc/inputs.md). Two c2c results are compared pair by pair: \
every CPU pair's transfer latency, modified and read-shared.\n\n\
Compared: the topology and firmware (packages, NUMA nodes per package as SNC/NPS set them, CPU \
numbering, online and allowed CPUs, memory per node, huge pages, SLIT, HMAT, memory tiers, caches, \
THP, PCI devices), the kernel release (for documents of the machine they ran on), the measurement \
parameters, and every measured (CPU node, memory node) cell: the change of its median, a 95 % \
bootstrap interval of that change (fixed seed: the same files always give the same answer), the \
Mann-Whitney U p-value of both runs' samples, and a verdict: unchanged, negligible (significant but \
not more than --threshold, the minimum effect), within_noise (beyond the minimum effect but not beyond \
the runs' noise, twice their standard deviations in quadrature), better, worse, inconclusive (with its reason: a flagged cell, runs measured under \
different conditions, too few samples to test), only_a, only_b.\n\n\
Exit status: 0 equal (nothing differs, no cell better or worse); 1 different; 2 bad input (a missing \
path, an unreadable or foreign file, a folder without documents, documents of different kinds). \
Exit status 1 is also numaprobe's code for a system failure; a script that must tell them apart \
reads the summary line on stderr (`numaprobe: A and B differ: ...`) or `summary.equal` in --format json."
)]
pub struct Args {
    /// The runs to compare, each a report folder or a numaprobe JSON document: A and B; or, with
    /// --vs, side A's runs
    #[arg(value_name = "RUN", required = true, num_args = 1..)]
    pub runs: Vec<PathBuf>,
    /// Side B's runs, when each side is several: `diff a1 a2 a3 --vs b1 b2 b3`. A figure's noise is
    /// then the spread of its runs' medians, not of one run's samples
    #[arg(long, value_name = "RUN", num_args = 1..)]
    pub vs: Vec<PathBuf>,
    /// The minimum effect: a cell's median must change by more than this to count, e.g. 2% or 0.02. Default: 2%
    #[arg(long, value_name = "PCT")]
    pub threshold: Option<String>,
    /// Significance level of the Mann-Whitney U test, e.g. 0.05 or 1%. Default: 0.05
    #[arg(long, value_name = "P")]
    pub alpha: Option<String>,
    #[command(flatten)]
    pub out: OutputArgs,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let mut criteria = cells::default_criteria();
    if let Some(t) = &args.threshold {
        criteria.threshold_pct = units::parse_fraction(t).map_err(|_| {
            usage(format!(
                "--threshold {t}: not a share below 100 %; e.g. 2% or 0.02"
            ))
        })? * 100.0;
    }
    if let Some(a) = &args.alpha {
        criteria.alpha = match units::parse_fraction(a) {
            Ok(x) if x > 0.0 => x,
            _ => {
                return Err(usage(format!(
                    "--alpha {a}: not a probability in (0, 1); e.g. 0.05 or 1%"
                )))
            }
        };
    }
    let (a_runs, b_runs) = sides(&args)?;
    let a = side("A", &a_runs)?;
    let b = side("B", &b_runs)?;
    let report = compare::diff(&a, &b, &criteria).map_err(|e| usage(e.to_string()))?;
    args.out
        .sink()
        .write(&render::diff::diff(&report, args.out.format()))?;
    if report.summary.equal {
        Ok(())
    } else {
        Err(anyhow::Error::new(Differs(format!(
            "{} and {} differ: {}",
            report.a.path,
            report.b.path,
            render::diff::summary_line(&report).trim_start_matches("different: ")
        ))))
    }
}

/// The runs of A and of B: the two runs given, or those before and after
/// `--vs`.
fn sides(args: &Args) -> anyhow::Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    if !args.vs.is_empty() {
        return Ok((args.runs.clone(), args.vs.clone()));
    }
    match args.runs.as_slice() {
        [a, b] => Ok((vec![a.clone()], vec![b.clone()])),
        runs => Err(usage(format!(
            "{} given without --vs: give two (diff A B), or several a side (diff a1 a2 --vs b1 b2)",
            if runs.len() == 1 {
                "1 run".to_string()
            } else {
                format!("{} runs", runs.len())
            }
        ))),
    }
}

/// Read one side: its one run, or its runs pooled ([`compare::pool`]).
fn side(name: &str, paths: &[PathBuf]) -> anyhow::Result<compare::Side> {
    let mut runs = Vec::new();
    for p in paths {
        runs.push(compare::load(p, &compare::DIFF).map_err(|e| usage(format!("{name}: {e}")))?);
    }
    compare::pool::pool(runs).map_err(|e| usage(format!("{name}: {e}")))
}
