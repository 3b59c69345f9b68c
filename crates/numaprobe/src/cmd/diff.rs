//! `numaprobe diff A B`: compare two report folders (or two documents of the
//! same kind) and say whether, where and by how much they differ. The
//! comparison is the library's (`analysis::compare`); this file parses the
//! options, maps unreadable input to exit status 2 and a found difference to
//! exit status 1.

use crate::args::OutputArgs;
use crate::output::{usage, Differs};
use numaprobe_core::analysis::compare::{self, cells};
use numaprobe_core::render;
use numaprobe_core::units;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
#[command(
    after_long_help = "A and B are report folders (as `numaprobe run` writes them: topo.json, \
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
    /// The first run: a report folder or a numaprobe JSON document
    #[arg(value_name = "A")]
    pub a: PathBuf,
    /// The second run, of the same kind as A
    #[arg(value_name = "B")]
    pub b: PathBuf,
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
    let a = compare::load(&args.a, &compare::DIFF).map_err(|e| usage(format!("A: {e}")))?;
    let b = compare::load(&args.b, &compare::DIFF).map_err(|e| usage(format!("B: {e}")))?;
    let report = compare::diff(&a, &b, &criteria).map_err(|e| usage(e.to_string()))?;
    args.out
        .sink()
        .write(&render::diff::diff(&report, args.out.format()))?;
    if report.summary.equal {
        Ok(())
    } else {
        Err(anyhow::Error::new(Differs(format!(
            "{} and {} differ: {}",
            args.a.display(),
            args.b.display(),
            render::diff::summary_line(&report).trim_start_matches("different: ")
        ))))
    }
}
