//! `numaprobe study`: the two-thread contention study of AMD 40555
//! (AMD 40555): user-given thread labels or a preset reproducing one of the
//! note's experiments, under a chosen background load. Options are taken as
//! strings and parsed here so that a bad value is one line naming the value
//! and the valid choices (exit 2). Tables or JSON go to stdout or `--output`
//! (rewritten after every finished case); charts go to the files asked for.

use super::measure;
use super::progress::Line;
use crate::args::{OutputArgs, SamplesArgs};
use crate::output::{usage, Sink};
use anyhow::Context;
use numaprobe_core::experiments::study::runner::{self, RunConfig, StudyEvent};
use numaprobe_core::experiments::study::size::{self as study_size, NOTE_SIZE};
use numaprobe_core::experiments::study::{
    parse_label, plan_custom, plan_preset, HopMap, LoadLevel, Mix, PlanOptions, Preset, StudyError,
    StudyPlan, Subscription, ThreadSpec,
};
use numaprobe_core::job::observer::Status;
use numaprobe_core::model::study::{StudyPlanDocument, StudyReport};
use numaprobe_core::model::Format;
use numaprobe_core::placement::{FootprintLimit, LiveSystem};
use numaprobe_core::render::study_chart;
use numaprobe_core::topology::Topology;
use std::path::{Path, PathBuf};
use std::time::Instant;

const DEFAULT_PASSES: u32 = 10;
const DEFAULT_REPEATS: u32 = 5;
const DEFAULT_WARMUP: u32 = 1;

#[derive(clap::Args, Debug)]
#[command(after_long_help = "What it measures (AMD application note 40555):\n\n\
Each foreground thread is a label node.core.access.memnode: 0.0.w.1 runs on node 0, core 0 (the \
index among the node's allowed cores, not a CPU number), and writes an array bound to node 1. \
Each thread owns its array (--size; by default 64 MiB as in the note, or twice the last-level \
cache when that is more, reduced to fit the run's footprint limit with every buffer alive at once \
counted, never below twice the cache) and walks it with a 64-byte stride, one \
8-byte load (r) or store (w) per cache line, --passes times per sample. Threads are pinned before \
they touch their memory (checked with sched_getcpu); arrays are bound with mbind and checked with \
move_pages (below 99 % on the node the case is marked with `!`). All threads of a case start \
together; the case's total is the sum of the threads' times (the note's \"total time for both \
threads\"), reported as a median of --repeats samples with its CV, and as a percentage of the \
experiment's baseline (its first case), the note's y-axis. Several cases: separate them with `/`, \
e.g. `numaprobe study 0.0.w.0 1.0.w.1 / 0.0.w.1 1.0.w.0`.\n\n\
Presets (nodes chosen from hop counts ranked from the SLIT's distance levels, or from \
--distances):\n  \
hops       one thread on node 0, memory 0, 1 and 2 hops away, read-only and write-only (figures 3-5)\n  \
crossfire  0 Hop-0 Hop, no crossfire (0.0.w.1 1.0.w.3) and crossfire (0.0.w.1 1.0.w.0), idle and \
at every background level (figures 6-9)\n  \
same-node  both threads on node 0, cores 0 and 1, every memory placement, idle (rr, ww) and at \
every background level (ww) (figures 10-15)\n  \
myths      every distinct two-thread placement; lists each case contradicting \"all equal hop \
cases take equal time\" or \"greater hop distance always means slower time\" (section 3.4)\n\n\
Background load (the note gives no numbers; these are numaprobe's definitions, recorded in every \
result): the remaining cores are the allowed physical cores no foreground thread uses. \
--subscription sets how many of those R cores run a background thread: under = floor(R/4), \
high = ceil(3R/4) but at most R-1, full = R. --background sets how hard each works: in every \
1 ms period it writes one 8-byte element per 64-byte line through its own --size buffer bound to \
its own node for low 25 %, medium 50 %, high 75 %, very-high 100 % of the period, and sleeps the \
rest; none starts no thread (the note's idle system). Without --background, crossfire and \
same-node sweep none, low, medium, high and very-high at high subscription (crossfire adds \
very-high at full, figure 9); hops, myths and labels run idle.")]
pub struct Args {
    /// Thread labels node.core.access.memnode (access r or w), e.g. `0.0.w.1 1.0.w.0`; `/` separates cases
    #[arg(value_name = "LABEL")]
    pub labels: Vec<String>,
    /// Run an experiment of the note: hops, crossfire, same-node or myths
    #[arg(long, value_name = "NAME")]
    pub preset: Option<String>,
    /// Access of the threads: fixed (as the labels say) or all (every combination: rr, rw, wr, ww). Default: fixed
    #[arg(long, value_name = "MIX")]
    pub mix: Option<String>,
    /// Background load on the remaining cores: none, low (25 % duty), medium (50 %), high (75 %), very-high (100 %). Default: crossfire and same-node sweep every level, the rest run idle
    #[arg(long, value_name = "LEVEL")]
    pub background: Option<String>,
    /// How many remaining cores carry background threads: under (R/4), high (3R/4, at most R-1), full (R). Default: high
    #[arg(long, value_name = "SUB")]
    pub subscription: Option<String>,
    /// Array per thread (and per background thread): KiB/MiB/GiB (powers of 1024) or kB/MB/GB. Default: 64MiB as in the note (at least 2 x the last-level cache), reduced to fit the footprint limit
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Walks over the whole array per timed sample. Default: 10
    #[arg(long, value_name = "N")]
    pub passes: Option<String>,
    /// Timed samples per case (after one discarded warm-up). Default: 5
    #[arg(long, value_name = "N")]
    pub repeats: Option<String>,
    /// Hop counts from a measured latency matrix (`numaprobe latency --format json` output) instead of the SLIT
    #[arg(long, value_name = "FILE")]
    pub distances: Option<PathBuf>,
    /// Write one SVG and one PNG chart per experiment into DIR (created if missing)
    #[arg(long, value_name = "DIR")]
    pub chart: Option<PathBuf>,
    /// Write every experiment's chart into one SVG file
    #[arg(long, value_name = "FILE")]
    pub chart_svg: Option<PathBuf>,
    /// Write every experiment's chart into one PNG file
    #[arg(long, value_name = "FILE")]
    pub chart_png: Option<PathBuf>,
    /// Print the planned experiments (cases, CPUs, memory nodes, background CPUs) without measuring; works with --sysfs-root on another machine's dump
    #[arg(long)]
    pub plan: bool,
    /// With --plan only: plan for the machine described below DIR (an unpacked sysfs dump) instead of this one. A study measures this machine, so without --plan this is refused
    #[arg(long, value_name = "DIR")]
    pub sysfs_root: Option<PathBuf>,
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(flatten)]
    pub samples: SamplesArgs,
}

fn choice<T: Copy>(
    opt: &str,
    value: &Option<String>,
    parse: impl Fn(&str) -> Option<T>,
    valid: &str,
) -> anyhow::Result<Option<T>> {
    match value.as_deref() {
        None => Ok(None),
        Some(s) => parse(s.trim())
            .map(Some)
            .ok_or_else(|| usage(format!("{opt}: invalid value '{s}' (valid: {valid})"))),
    }
}

fn count(opt: &str, value: &Option<String>, default: u32, max: u32) -> anyhow::Result<u32> {
    match value.as_deref() {
        None => Ok(default),
        Some(s) => match s.trim().parse::<u32>() {
            Ok(n) if (1..=max).contains(&n) => Ok(n),
            _ => Err(usage(format!(
                "{opt}: invalid value '{s}' (valid: a whole number from 1 to {max})"
            ))),
        },
    }
}

/// Split positional words into cases at `/` and parse every label.
fn cases(words: &[String]) -> anyhow::Result<Vec<Vec<ThreadSpec>>> {
    let mut out: Vec<Vec<ThreadSpec>> = vec![Vec::new()];
    for w in words {
        if w == "/" {
            out.push(Vec::new());
            continue;
        }
        let spec = parse_label(w).map_err(|e| usage(e.to_string()))?;
        if let Some(last) = out.last_mut() {
            last.push(spec);
        }
    }
    if words.is_empty() {
        return Ok(Vec::new());
    }
    if out.iter().any(Vec::is_empty) {
        return Err(usage(
            "labels: a `/` must separate two non-empty cases, e.g. `0.0.w.0 1.0.w.1 / 0.0.w.1 1.0.w.0`",
        ));
    }
    Ok(out)
}

/// A planning error is the user's (a label this machine cannot host) unless
/// it is the system refusing something.
fn study_error(e: StudyError) -> anyhow::Error {
    use numaprobe_core::placement::PlacementError as P;
    match e {
        StudyError::Placement(P::Sys { .. })
        | StudyError::Placement(P::Read { .. })
        | StudyError::Placement(P::PinNotHonoured { .. })
        | StudyError::ThreadPanicked => anyhow::Error::new(e),
        other => usage(other.to_string()),
    }
}

/// Read `--distances FILE` into hop counts (one line naming the file and
/// what was expected when it cannot): a latency document or a run's
/// latency matrix, a report folder holding one, or a hand-written
/// `{unit, cpu_nodes, mem_nodes, matrix}`.
fn read_distances(path: &Path) -> anyhow::Result<HopMap> {
    use numaprobe_core::analysis::{self, input};
    use numaprobe_core::model::document::{self, Accepts, Kind};
    const TAKES: Accepts = Accepts {
        reader: "study --distances",
        kinds: &[Kind::Latency, Kind::Run],
    };
    let kind = if path.is_dir() {
        None
    } else {
        numaprobe_core::model::input::read_text(path)
            .ok()
            .and_then(|t| document::head(t.as_bytes(), path).ok())
            .and_then(|h| h.kind())
    };
    let bad = |e: String| usage(format!("--distances {e}"));
    // A document of a kind not taken is refused by the matrix reader.
    if kind.is_none() && !path.is_dir() {
        return numaprobe_core::model::hops_file::read(path).map_err(|e| bad(e.to_string()));
    }
    let opts = analysis::ParseOptions {
        unit: None,
        select: Some(analysis::Select::Latency),
    };
    let (m, _) = input::read_matrix(path, opts, TAKES.reader, TAKES.kinds)
        .map_err(|e| bad(e.to_string()))?;
    Ok(HopMap::from_latency(&m.row_nodes, &m.col_nodes, &m.rows()))
}

fn hop_map(topo: &Topology, distances: &Option<PathBuf>) -> anyhow::Result<HopMap> {
    match distances {
        None => Ok(HopMap::from_topology(topo)),
        Some(path) => read_distances(path),
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let preset = choice(
        "--preset",
        &args.preset,
        Preset::parse,
        "hops, crossfire, same-node, myths",
    )?;
    let mix = choice(
        "--mix",
        &args.mix,
        |s| match s {
            "fixed" => Some(Mix::Fixed),
            "all" => Some(Mix::All),
            _ => None,
        },
        "fixed, all",
    )?
    .unwrap_or(Mix::Fixed);
    let load = choice(
        "--background",
        &args.background,
        LoadLevel::parse,
        "none, low, medium, high, very-high",
    )?;
    let subscription = choice(
        "--subscription",
        &args.subscription,
        Subscription::parse,
        "under, high, full",
    )?;
    let explicit_size = measure::size("--size", &args.size)?;
    if explicit_size.is_some_and(|s| !(4096..=1 << 40).contains(&s)) {
        return Err(usage(format!(
            "--size: '{}' is out of range (valid: 4KiB to 1TiB; the note uses 64MiB)",
            args.size.as_deref().unwrap_or_default()
        )));
    }
    let mut cfg = RunConfig {
        size_bytes: explicit_size.unwrap_or(NOTE_SIZE) as usize,
        passes: count("--passes", &args.passes, DEFAULT_PASSES, 1_000_000)?,
        repeats: count("--repeats", &args.repeats, DEFAULT_REPEATS, 10_000)?,
        warmup: DEFAULT_WARMUP,
        mix,
    };
    let cases = cases(&args.labels)?;
    if preset.is_some() && !cases.is_empty() {
        return Err(usage(
            "give either --preset or thread labels, not both (labels make a custom scenario)",
        ));
    }
    // `--sysfs-root` is for planning only: a study measures this machine.
    let root = args.sysfs_root.as_deref().filter(|r| *r != Path::new("/"));
    let topo = match (root, args.plan) {
        (Some(root), true) => {
            numaprobe_core::topology::read(root).map_err(|e| usage(e.to_string()))?
        }
        (Some(root), false) => {
            return Err(usage(format!(
                "--sysfs-root {}: only with --plan (a study measures this machine; --plan shows what would run on the machine of a dump)",
                root.display()
            )))
        }
        (None, _) => measure::live_topology(Path::new("/"))?,
    };
    let hops = hop_map(&topo, &args.distances)?;
    let opts = PlanOptions {
        mix,
        load,
        subscription,
    };
    let mut plan = match preset {
        Some(p) => plan_preset(&topo, &hops, p, &opts),
        None if cases.is_empty() => {
            return Err(usage(
                "name a preset (--preset hops|crossfire|same-node|myths) or thread labels such as `0.0.w.1 1.0.w.0`",
            ))
        }
        None => plan_custom(&topo, &hops, &cases, &opts),
    }
    .map_err(study_error)?;

    let sink = args.out.sink();
    let format = args.out.format();
    if args.plan {
        return sink.write(&StudyPlanDocument::new(plan).render(format));
    }
    // An explicit --size is the user's word, as for every command; the
    // default is fitted to the footprint limit (which the provenance states).
    let live = LiveSystem::read().map_err(|e| study_error(e.into()))?;
    let limit = FootprintLimit::live(&live);
    if explicit_size.is_none() {
        let llc = topo.llc_bytes();
        let size = study_size::fit(&mut plan, &limit, llc, study_size::wanted(llc))
            .map_err(|e| study_error(e.into()))?;
        cfg.size_bytes = size as usize;
    }
    measure::notes_to_stderr(&sink, format, &plan.notes);
    // A preset this machine cannot host at all (same-node with one core per
    // node) is not a failure: the note says why, and the report is the
    // valid, empty document scripts expect.
    let charts = Charts {
        dir: args.chart.clone(),
        svg: args.chart_svg.clone(),
        png: args.chart_png.clone(),
    };
    charts.prepare(&plan)?;
    let keep = args.samples.keep_samples;
    let written = |r: &StudyReport| document(r, format, keep);
    let report = measure_plan(&topo, &plan, &cfg, &sink, &written, &charts)?;
    charts.write(&report)?;
    sink.write(&written(&report))
}

/// The document as written: in JSON each case's samples are left out
/// (their sketch kept) unless `keep` (`--keep-samples`); CSV keeps its
/// `sample` rows, and the text formats never show samples.
fn document(report: &StudyReport, format: Format, keep: bool) -> String {
    let keep = keep || format != Format::Json;
    measure::written(report, keep, StudyReport::leave_out_samples, |r| {
        r.render(format)
    })
}

/// Where charts go.
struct Charts {
    dir: Option<PathBuf>,
    svg: Option<PathBuf>,
    png: Option<PathBuf>,
}

impl Charts {
    fn any(&self) -> bool {
        self.dir.is_some() || self.svg.is_some() || self.png.is_some()
    }

    /// Fail before measuring when a chart cannot be written, or would be
    /// past the pixels one chart may have: the run draws at most the cases
    /// it planned, and a refusal after hours of measuring would come too late.
    fn prepare(&self, plan: &StudyPlan) -> anyhow::Result<()> {
        if let Some(d) = &self.dir {
            study_chart::plan_fits_each(plan)
                .map_err(|e| usage(format!("--chart {}: {e}", d.display())))?;
        }
        for (flag, f) in [("--chart-svg", &self.svg), ("--chart-png", &self.png)] {
            if let Some(f) = f {
                study_chart::plan_fits(plan).map_err(|e| {
                    usage(format!(
                        "{flag} {}: {e}; --chart DIR draws one picture per experiment",
                        f.display()
                    ))
                })?;
            }
        }
        if let Some(d) = &self.dir {
            std::fs::create_dir_all(d)
                .map_err(|e| usage(format!("--chart {}: {e}", d.display())))?;
        }
        for f in [&self.svg, &self.png].into_iter().flatten() {
            if let Some(parent) = f.parent().filter(|p| !p.as_os_str().is_empty()) {
                if !parent.is_dir() {
                    return Err(usage(format!(
                        "{}: folder {} does not exist",
                        f.display(),
                        parent.display()
                    )));
                }
            }
        }
        Ok(())
    }

    fn write(&self, report: &StudyReport) -> anyhow::Result<()> {
        if !self.any() || report.experiments.iter().all(|e| e.cases.is_empty()) {
            return Ok(());
        }
        if let Some(p) = &self.svg {
            let s = study_chart::svg(report).context("chart")?;
            write(p, s.as_bytes())?;
        }
        if let Some(p) = &self.png {
            let b = study_chart::png(report).context("chart")?;
            write(p, &b)?;
        }
        if let Some(d) = &self.dir {
            for e in report.experiments.iter().filter(|e| !e.cases.is_empty()) {
                let s = study_chart::experiment_svg(report, &e.id).context("chart")?;
                write(&d.join(format!("{}.svg", e.id)), s.as_bytes())?;
                let b = study_chart::experiment_png(report, &e.id).context("chart")?;
                write(&d.join(format!("{}.png", e.id)), &b)?;
            }
        }
        Ok(())
    }
}

fn write(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    crate::safe_dir::write_file(path, bytes)
}

/// Run the plan, drawing progress on a terminal and rewriting `--output`
/// (and the charts, after each experiment) as results come in.
fn measure_plan(
    topo: &Topology,
    plan: &StudyPlan,
    cfg: &RunConfig,
    sink: &Sink,
    written: &dyn Fn(&StudyReport) -> String,
    charts: &Charts,
) -> anyhow::Result<StudyReport> {
    // A bar on a terminal only: the study never wrote progress to a batch log.
    let mut line = Line::terminal_only();
    let started = Instant::now();
    let total: usize = plan.experiments.iter().map(|e| e.cases.len()).sum();
    let mut done = 0usize;
    let show = |line: &mut Line, done: usize, label: String| {
        let elapsed_s = started.elapsed().as_secs_f64();
        line.set_label(&label);
        line.show(&Status::single(
            "study",
            done,
            total,
            elapsed_s,
            // The mean case so far; unknown before the first one ends.
            (done > 0).then(|| elapsed_s / done as f64 * (total - done.min(total)) as f64),
        ));
    };
    let mut write_error: Option<anyhow::Error> = None;
    let mut current = String::new();
    let result = runner::run(topo, plan, cfg, |partial, event| match event {
        StudyEvent::ExperimentStarted {
            index,
            count,
            id,
            background_threads,
        } => {
            current = format!("[{}/{}] {id}", index + 1, count);
            show(
                &mut line,
                done,
                format!("{current}: starting ({background_threads} background thread(s))"),
            );
        }
        StudyEvent::CaseFinished {
            experiment: _,
            case,
            cases,
            label,
        } => {
            done += 1;
            show(
                &mut line,
                done,
                format!("{current}: case {}/{cases} {label} done", case + 1),
            );
            if !sink.is_stdout() && write_error.is_none() {
                if let Err(e) = sink.write(&written(partial)) {
                    write_error = Some(e);
                }
            }
            if case + 1 == *cases && write_error.is_none() {
                if let Err(e) = charts.write(partial) {
                    write_error = Some(e);
                }
            }
        }
    });
    line.clear();
    if let Some(e) = write_error {
        return Err(e);
    }
    result.map_err(study_error).context("study failed")
}
