//! `numaprobe run` (and `numaprobe` with no arguments): the main job.
//!
//! Topology, then the latency and bandwidth matrices within one time budget,
//! then the inference and advice on what was measured (or on the firmware's
//! SLIT when nothing could be measured), a portable binding, a summary on the
//! terminal and a report folder. What is measured within the budget is
//! decided and run by the library's planner (`numaprobe_core::job`), and
//! what it all comes to by its conclusions (`job::conclusions`); this file
//! checks the options, shows the plan and the progress, and hands the
//! report to the renderers and the folder. Each report file is written as soon as its part is done (the
//! matrices after every cell), so an interrupted run keeps what it measured.

use super::measure::{self, CellProgress};
use super::progress::finish_line;
use crate::args::{OutputArgs, SysfsArgs};
use crate::output::usage;
use anyhow::Context;
use numaprobe_core::experiments::ExperimentError;
use numaprobe_core::job::conclusions::{self, conclusions, Measured};
use numaprobe_core::job::extra::Extras;
use numaprobe_core::job::{self, Outcome, Phase};
use numaprobe_core::model::Format;
use numaprobe_core::placement::PlacementError;
use numaprobe_core::render::{self, run_summary};
use numaprobe_core::topology::Topology;
use numaprobe_core::units;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The default budget for all measurements together: about a minute on a
/// two-node machine, as the main job promises.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(60);

#[derive(clap::Args, Debug)]
#[command(after_long_help = "What the main job does:\n\n\
1. Reads the topology (as `numaprobe topo`).\n\
2. Measures the idle-latency matrix (`numaprobe latency`) and the read-bandwidth matrix \
(`numaprobe bandwidth`) over every allowed CPU node and memory node, first: within 60 % of --budget \
when that holds every cell soundly, else within all of it. One buffer per memory node and matrix is \
set up (allocated, bound, touched, chained) once and measured from every CPU node; the budget covers \
those set-ups and every cell (cache flush, sampling, placement check): a small calibration estimates \
them, then the first memory node's buffer is set up at the planned size and the plan is made again \
from what it really cost, before any cell is measured (a budget too short for it gets a smaller \
buffer or the statement up front; the buffer is then measured on, not set up twice); every cell \
corrects the estimate, and every following cell's sampling is re-planned from what is left. Reading the topology, the \
inference and writing the report come on top (usually well under a second; doc/main-job.md).\n\
3. Then, in what the matrices left of the budget: \
a c2c summary by sharing domain (`numaprobe c2c --pairs domains`), one loaded-latency curve \
per distinct level of the measured latency matrix, local and the worst remote at least \
(`numaprobe loaded-latency`), the system peak (`numaprobe peak`, every node at once), and a cache \
sweep from the first CPU node's first core (`numaprobe latency --sweep`, 2 points per octave, up to \
4 x its largest cache as time allows). Each phase gets its part of what is left when it begins: \
c2c a fifth, loaded latency half of the rest, the peak half of the rest, the sweep the rest (a part \
too small for the first step borrows from the later ones when what is left allows); a phase stops \
between steps when its part is spent (status partial), is skipped \
with a reason when it cannot run (fewer than 0.2 s left or less than its first step needs, c2c \
with one allowed CPU, loaded latency without a node of two allowed CPUs), and when its experiment \
fails the others still run and the exit status is 1. With --size, or a buffer cut for the budget, \
loaded latency and peak spread that size over each node's threads.\n\
4. Infers performance levels, hops and links from each matrix with two or more nodes and compares \
them with the firmware's SLIT and HMAT (`numaprobe infer`); with one node there is nothing to infer.\n\
5. Gives advice and a portable scatter binding for one thread per core (`numaprobe pin`).\n\n\
When the budget cannot give every cell a sound measurement (at least 100 ms of sampling: a \
warm-up and well over five samples of at least 5 ms), one line says so before measuring, names the \
budget that would, and what is done instead, in this order: a smaller buffer (4x, then 2x the \
last-level cache, 64 MiB; never below 2x the LLC nor 32 MiB); fewer samples per cell (down to a warm-up and three); the whole latency matrix \
but bandwidth only on the diagonal and, per row, the remote node the SLIT puts farthest; no \
bandwidth matrix; latency on the diagonal first, then row by row as far as the budget goes. \
A budget that holds not even one latency cell is refused (exit 2) with the budget that would do. \
run.json's `plan` records what was measured, reduced or skipped and why.\n\n\
The report folder holds topo.json, latency.json, bandwidth.json, c2c.json, loaded-latency.json, \
peak.json (each extra phase that measured anything), infer-latency.json, infer-bandwidth.json, graph-latency.svg/png, pin.json, run.json (everything in one document), \
summary.md (linking the pictures) and report.html (everything as one self-contained page; \
`numaprobe report DIR` rebuilds it). Each file is written as soon as its part is done, so an interrupted run keeps what it \
measured (Ctrl-C or SIGTERM: the cell being measured ends after its current sample, everything \
finished is written with \"complete\": false, exit status 130 or 143; a second Ctrl-C kills).\n\n\
The folder belongs to one run: numaprobe lists every file it writes there in .numaprobe-manifest, \
and a new run first removes the files the previous run listed (only those), so no file of an \
earlier run survives beside the new ones. A non-empty folder without a manifest holds files \
numaprobe did not write and is refused (exit 2) unless --force is given; nothing in it is removed \
then. A previous report that holds measurements is moved into previous-<time>/ instead, removed when \
the new run measured as much, and kept, said in one line, when it measured less (--no-measure, a \
shorter budget, an interrupted run).\n\n\
With --sysfs-root pointing at another machine's dump, nothing is measured: the main job shows that \
machine's topology, analyses its SLIT and computes its binding.")]
pub struct Args {
    /// Wall time for all measurements together, set-up included, e.g. 60s, 2m or 1.5s (at least 1s). The whole run ends within it plus an allowance of 1 s for what it does not cover (start-up, topology, inference, report files; doc/main-job.md has the measurements). Default: 60s
    #[arg(long, value_name = "DURATION")]
    pub budget: Option<String>,
    /// Buffer size of every cell of both matrices, e.g. 128MiB (checked against every node before measuring). Default: as `latency` and `bandwidth` (max(256 MiB, 8x the last-level cache), at most half a node's free memory); 4x or 2x the LLC or 64 MiB (never below 2x the LLC nor 32 MiB) when the budget needs it
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Folder for the report files (created if missing). Default: ./numaprobe-report
    #[arg(long, value_name = "DIR")]
    pub report_dir: Option<PathBuf>,
    /// Write no report folder
    #[arg(long, conflicts_with = "report_dir")]
    pub no_report: bool,
    /// Write into a non-empty --report-dir that numaprobe did not create (it has no .numaprobe-manifest); nothing in it is removed, same-named files are replaced
    #[arg(long, conflicts_with = "no_report")]
    pub force: bool,
    /// Measure nothing: topology, firmware analysis and binding only
    #[arg(long)]
    pub no_measure: bool,
    /// Keep every figure's raw samples in run.json and the phase documents (latency.json, bandwidth.json, c2c.json; and in --format json). Default: each figure keeps its median, spread and a sketch (sample count and 17 quantiles), enough for diff's tests
    #[arg(long)]
    pub keep_samples: bool,
    #[command(flatten)]
    pub sysfs: SysfsArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let budget = budget(args.budget.as_deref())?;
    let size = measure::size("--size", &args.size)?;
    let root = args.sysfs.sysfs_root.clone();
    let topo = super::topo::read_topology(&root)?;
    // Planned before the folder is taken over: a budget or size refused
    // leaves the folder (and the report it holds) as it was.
    let job = if root != Path::new("/") || args.no_measure {
        None
    } else {
        Some(prepare_job(&topo, &args, budget, size)?)
    };
    let report_dir =
        crate::report_dir::open(args.no_report, args.report_dir.as_deref(), args.force)?;
    let save = |name: &str, text: &str| -> anyhow::Result<()> {
        match &report_dir {
            Some(d) => d.save(name, text.as_bytes()),
            None => Ok(()),
        }
    };
    save("topo.json", &render::topo::to_json(&topo))?;

    let measured = if root != Path::new("/") {
        Measured::OtherMachine
    } else if let Some(job) = job {
        let out = measure_job(&job, report_dir.as_ref(), args.keep_samples)?;
        save_extras(&out.extras, &save, args.keep_samples)?;
        // Within the budget (the extras left it room): a 32 MiB buffer and
        // ~0.1 s per node of several packages, or for the one node of a
        // one-package machine.
        Measured::Job(Box::new(out), job::interleave::check(&topo))
    } else {
        Measured::Declined
    };
    let mut doc = conclusions(&topo, measured)?;
    if !args.keep_samples {
        doc.leave_out_samples();
    }

    if let Some(inf) = &doc.inference {
        save("infer-latency.json", &render::to_json(inf))?;
        if let Some(d) = &report_dir {
            if render::graph::left_out(inf).is_none() {
                let svg = render::graph::render_svg(inf)?;
                d.save("graph-latency.svg", svg.as_bytes())?;
                let png = render::graph::render_png(inf)?;
                d.save("graph-latency.png", &png)?;
            }
        }
    }
    if let Some(inf) = &doc.inference_bandwidth {
        save("infer-bandwidth.json", &render::to_json(inf))?;
    }
    if let Some(p) = &doc.binding {
        save("pin.json", &render::to_json(p))?;
    }
    let setups = doc.plan.as_ref().and_then(conclusions::setup_line);
    let status = run_summary::status_lines(&doc, setups.as_deref());
    let markdown = run_summary::to_markdown(&topo, &doc, &status);
    save("run.json", &render::to_json(&doc))?;
    if let Some(d) = &report_dir {
        let graph = doc
            .inference
            .as_ref()
            .is_some_and(|i| render::graph::left_out(i).is_none());
        d.save(
            "summary.md",
            format!("{markdown}{}", run_summary::links(graph)).as_bytes(),
        )?;
        // The page is built from the documents just written, exactly as
        // `numaprobe report DIR` would build it.
        let page = super::report::build(d.handle())?;
        d.save(super::report::REPORT_HTML, page.as_bytes())?;
        if let Some(line) = d.settle() {
            eprintln!("numaprobe: {line}");
        }
    }

    let text = match args.out.format() {
        Format::Json => render::to_json(&doc),
        Format::Markdown => markdown,
        Format::Csv => run_summary::cells_csv(&doc, &topo),
        Format::Table => {
            let mut s = run_summary::to_text(&topo, &doc, &status);
            if let Some(d) = &report_dir {
                s.push_str(&format!("\nReport written to {}/\n", d.display()));
            }
            s
        }
    };
    args.out.sink().write(&text)?;
    // Everything measured is written; then the cells that failed make the
    // run exit 1, in one line per the whole job.
    match doc.failures() {
        Some(line) => Err(anyhow::anyhow!(line)),
        None => Ok(()),
    }
}

/// Plan the job (a budget or size that cannot do is refused here).
fn prepare_job(
    topo: &Topology,
    args: &Args,
    budget: Duration,
    size: Option<u64>,
) -> anyhow::Result<job::Job> {
    job::prepare(topo, &job::Config { budget, size }).map_err(|e| {
        match (&args.size, e) {
            // The size the user gave is what did not fit: say which option.
            (
                Some(s),
                e @ ExperimentError::Placement(
                    PlacementError::TooLarge { .. }
                    | PlacementError::NeverFits { .. }
                    | PlacementError::OverCgroup { .. },
                ),
            ) => usage(format!("--size {s}: {e}")),
            (_, e) => measure::experiment_error(e),
        }
    })
}

/// Measure the job with its progress on the terminal, the matrices
/// written into the report folder after every cell.
fn measure_job(
    job: &job::Job,
    dir: Option<&crate::report_dir::ReportDir>,
    keep_samples: bool,
) -> anyhow::Result<Outcome> {
    let file = |name: &str| dir.map(|d| d.sink(name));
    let mut progress = CellProgress::for_job(
        vec![
            (Phase::Latency, file("latency.json")),
            (Phase::Bandwidth, file("bandwidth.json")),
        ],
        keep_samples,
    );
    if let Some(s) = &job.plan.statement {
        progress.say(s);
    }
    let out = job::run_with(job, &mut progress, &mut super::latency::gauge()?)
        .map_err(anyhow::Error::new)
        .context("measurement failed")?;
    progress.end()?;
    let cells: usize = out.record.phases.iter().map(|p| p.measured_cells).sum();
    eprintln!(
        "numaprobe: {}",
        finish_line(cells, out.record.elapsed_s, Some(out.record.budget_s))
    );
    Ok(out)
}

/// `--budget`: a duration with its unit, at least [`job::MIN_BUDGET`] (below
/// it the calibration and one cell's set-up would leave no sampling worth the
/// name).
pub(crate) fn budget(arg: Option<&str>) -> anyhow::Result<Duration> {
    let Some(s) = arg else {
        return Ok(DEFAULT_BUDGET);
    };
    let t = s.trim();
    if t.starts_with('-') {
        return Err(usage(format!(
            "--budget '{s}': a budget is a positive duration (e.g. 60s, 2m or 1.5s)"
        )));
    }
    if t.chars().last().is_some_and(|c| c.is_ascii_digit()) {
        return Err(usage(format!(
            "--budget '{s}': give a unit: {t}s, 2m or 500ms"
        )));
    }
    let d = units::parse_duration(t).map_err(|_| {
        usage(format!(
            "--budget '{s}': not a duration (valid: e.g. 60s, 2m or 1.5s)"
        ))
    })?;
    if d < job::MIN_BUDGET {
        return Err(usage(format!(
            "--budget '{s}': too short; the main job needs at least 1s (e.g. 5s, 60s or 2m)"
        )));
    }
    Ok(d)
}

/// Each extra phase's document beside the matrices (`c2c.json`,
/// `loaded-latency.json`, `peak.json`, `sweep.json`), when it measured
/// anything.
fn save_extras(
    x: &Extras,
    save: &dyn Fn(&str, &str) -> anyhow::Result<()>,
    keep_samples: bool,
) -> anyhow::Result<()> {
    if let Some(r) = &x.c2c.result {
        let mut r = r.clone();
        if !keep_samples {
            r.leave_out_samples();
        }
        save("c2c.json", &render::to_json(&r))?;
    }
    if let Some(r) = &x.loaded_latency.result {
        save("loaded-latency.json", &render::to_json(r))?;
    }
    if let Some(r) = &x.peak.result {
        save("peak.json", &render::to_json(r))?;
    }
    if let Some(r) = &x.sweep.result {
        save("sweep.json", &render::to_json(r))?;
    }
    Ok(())
}
