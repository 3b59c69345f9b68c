//! What `latency`, `bandwidth` and the main job share: turning option
//! strings into values (one-line errors, exit 2; the other measuring
//! commands parse theirs here too), reading the topology of the
//! machine we measure, the progress observer, and rewriting `--output` (or
//! the report's matrix files) after every cell.

use super::progress::Line;
use crate::output::{usage, Sink};
use anyhow::Context;
use numaprobe_core::experiments::{ExperimentError, Progress};
use numaprobe_core::job::keeper::{mean_eta_s, Observer, Status};
use numaprobe_core::job::plan::PhasePlan;
use numaprobe_core::job::step_keeper::StepStatus;
use numaprobe_core::job::Phase;
use numaprobe_core::kernels::VectorWidth;
use numaprobe_core::model::extra::{Extra, ExtraRecord, ExtraStatus};
use numaprobe_core::model::matrix::MatrixResult;
use numaprobe_core::model::Format;
use numaprobe_core::placement::{PageKind, PlacementError};
use numaprobe_core::stats::StopRule;
use numaprobe_core::topology::Topology;
use numaprobe_core::units;
use std::path::Path;
use std::time::{Duration, Instant};

/// Measurements run on this machine: a sysfs dump can describe another
/// machine but cannot be measured.
pub fn live_topology(root: &Path) -> anyhow::Result<Topology> {
    if root != Path::new("/") {
        return Err(usage(format!(
            "--sysfs-root {}: measurements run on this machine; --sysfs-root is only for commands that read a description (e.g. `numaprobe topo`)",
            root.display()
        )));
    }
    numaprobe_core::topology::read(root).map_err(|e| usage(e.to_string()))
}

pub fn node_list(opt: &str, v: &Option<String>) -> anyhow::Result<Option<Vec<u32>>> {
    v.as_deref()
        .map(|s| units::parse_list(s).map_err(|e| usage(format!("{opt}: {e}"))))
        .transpose()
}

/// A comma-separated list of names (`--ops atomic_add,spin_lock`), each
/// read by `parse`; the first it refuses is a one-line usage error naming
/// the `valid` ones.
pub fn list<T>(
    opt: &str,
    v: &Option<String>,
    parse: impl Fn(&str) -> Option<T>,
    valid: &str,
) -> anyhow::Result<Option<Vec<T>>> {
    let Some(s) = v.as_deref() else {
        return Ok(None);
    };
    let mut out = Vec::new();
    for w in s.split(',').map(str::trim) {
        match parse(w) {
            Some(x) => out.push(x),
            None => {
                return Err(usage(format!(
                    "{opt}: invalid value '{w}' (valid: {valid})"
                )))
            }
        }
    }
    Ok(Some(out))
}

pub fn size(opt: &str, v: &Option<String>) -> anyhow::Result<Option<u64>> {
    match v.as_deref() {
        None => Ok(None),
        Some(s) => {
            let n = units::parse_size(s).map_err(|e| usage(format!("{opt}: {e}")))?;
            if n == 0 {
                return Err(usage(format!(
                    "{opt}: '{s}' is zero bytes; give a positive size"
                )));
            }
            Ok(Some(n))
        }
    }
}

/// `--vector`: a width this CPU has, or None for the widest.
pub fn vector(v: &Option<String>) -> anyhow::Result<Option<VectorWidth>> {
    let Some(s) = v.as_deref() else {
        return Ok(None);
    };
    let all = VectorWidth::ALL;
    match all.iter().find(|w| w.name().eq_ignore_ascii_case(s.trim())) {
        Some(&w) if w.available() => Ok(Some(w)),
        Some(_) => Err(usage(format!(
            "--vector: '{s}' is not supported by this CPU (valid here: {})",
            all.iter()
                .filter(|w| w.available())
                .map(|w| w.name())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
        None => Err(usage(format!(
            "--vector: invalid value '{s}' (valid: avx512, avx2, sse2, sve, neon, scalar)"
        ))),
    }
}

pub fn pages(v: &Option<String>) -> anyhow::Result<Option<PageKind>> {
    v.as_deref()
        .map(|s| {
            numaprobe_core::placement::PageKind::parse_arg(s)
                .map_err(|e| usage(format!("--pages: {e}")))
        })
        .transpose()
}

/// Build the stop rule from `--time-budget` and `--cv-target`.
pub fn rule(budget: &Option<String>, cv: &Option<String>) -> anyhow::Result<StopRule> {
    let mut r = StopRule::default();
    if let Some(s) = budget.as_deref() {
        let d = units::parse_duration(s).map_err(|e| usage(format!("--time-budget: {e}")))?;
        if d < Duration::from_millis(1) {
            return Err(usage(format!(
                "--time-budget: '{s}' is too short; give at least 1ms"
            )));
        }
        r.budget = d;
    }
    if let Some(s) = cv.as_deref() {
        r.cv_target = units::parse_fraction(s).map_err(|e| usage(format!("--cv-target: {e}")))?;
    }
    Ok(r)
}

/// Map an experiment error to an exit code: what the user asked for is
/// exit 2, what the system refused is exit 1.
/// The plan's notes on stderr too, unless they are already in front of the
/// reader (a table or Markdown on stdout prints them): in a machine format
/// or a file nobody would see why a case did not run.
pub fn notes_to_stderr(sink: &Sink, format: Format, notes: &[String]) {
    if !(sink.is_stdout() && matches!(format, Format::Table | Format::Markdown)) {
        for n in notes {
            eprintln!(
                "numaprobe: note: {}",
                crate::output::one_line(&n.to_string())
            );
        }
    }
}

pub fn experiment_error(e: ExperimentError) -> anyhow::Error {
    match e {
        ExperimentError::Placement(PlacementError::Sys { .. })
        | ExperimentError::Placement(PlacementError::Read { .. })
        | ExperimentError::Placement(PlacementError::PinNotHonoured { .. })
        | ExperimentError::Panicked => anyhow::Error::new(e),
        other => usage(other.to_string()),
    }
}

/// Progress on stderr (one line for the whole measurement, see
/// [`super::progress`]), and the output file rewritten after every finished
/// cell so an interrupted run keeps its cells. For the main job it observes
/// every phase, each with its own file.
pub struct CellProgress {
    line: Line,
    /// None: progress only, the result goes nowhere (the caller renders it).
    sink: Option<Sink>,
    /// The main job's file per phase; the current one is `sink`.
    phase_sinks: Vec<(Phase, Option<Sink>)>,
    format: Format,
    /// The first failure to write the file (a Progress method cannot return it).
    pub write_error: Option<anyhow::Error>,
    started: Instant,
    snapshot: Status,
    /// The planned sampling of a cell, for the ETA before the first one ends.
    cell_budget_s: f64,
    /// True when a job planner sends the status (and its ETA).
    job: bool,
    /// False: the files written leave each cell's samples out (their
    /// sketch instead), as the main job's report does by default.
    keep_samples: bool,
}

impl CellProgress {
    pub fn new(sink: Sink, format: Format) -> Self {
        Self::optional(Some(sink), format)
    }

    /// Progress on the terminal, and the result saved only when `sink` is given.
    pub fn optional(sink: Option<Sink>, format: Format) -> Self {
        CellProgress {
            line: Line::new(),
            sink,
            phase_sinks: Vec::new(),
            format,
            write_error: None,
            started: Instant::now(),
            snapshot: Status::unknown(),
            cell_budget_s: 0.0,
            job: false,
            keep_samples: true,
        }
    }

    /// Name the phase from the start (`latency`, `bandwidth`), so the bar
    /// says what runs before the first cell's result does.
    pub fn named(mut self, phase: &str) -> Self {
        self.snapshot.phase = phase.to_string();
        self
    }

    /// The main job's observer: each phase's partial and final result goes
    /// to its own file (JSON), when one is given.
    /// Without `keep_samples` each file leaves the cells' samples out.
    pub fn for_job(sinks: Vec<(Phase, Option<Sink>)>, keep_samples: bool) -> Self {
        CellProgress {
            phase_sinks: sinks,
            job: true,
            keep_samples,
            ..Self::optional(None, Format::Json)
        }
    }

    /// A line of its own above the progress (e.g. the plan's statement).
    pub fn say(&mut self, text: &str) {
        self.line.say(text);
    }

    /// Clear the progress line and report any earlier write failure.
    pub fn end(&mut self) -> anyhow::Result<()> {
        self.line.clear();
        match self.write_error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Write the final result (to the file or stdout) and report any earlier
    /// write failure.
    pub fn finish(mut self, result: &MatrixResult) -> anyhow::Result<()> {
        self.end()?;
        match &self.sink {
            Some(sink) => sink.write(&self.rendered(result)),
            None => Ok(()),
        }
    }

    /// Keep every cell's samples in what is written (`--keep-samples`);
    /// without it each cell keeps its sketch instead.
    pub fn keep_samples(mut self, keep: bool) -> Self {
        self.keep_samples = keep;
        self
    }

    /// The result as written: with its samples, or their sketches.
    fn rendered(&self, result: &MatrixResult) -> String {
        written(
            result,
            self.keep_samples,
            MatrixResult::leave_out_samples,
            |r: &MatrixResult| r.render(self.format),
        )
    }

    fn save(&mut self, result: &MatrixResult) {
        if let Some((sink, path)) = self.sink.as_ref().and_then(|s| Some((s, s.path()?))) {
            if self.write_error.is_none() {
                let text = self.rendered(result);
                if let Err(e) = sink
                    .write(&text)
                    .with_context(|| format!("saving partial results to {}", path.display()))
                {
                    self.write_error = Some(e);
                }
            }
        }
    }

    /// The snapshot of a standalone command, which has one phase and no
    /// planner: the ETA is the mean cell so far.
    fn own_status(&mut self) {
        if self.job {
            return;
        }
        let s = &mut self.snapshot;
        s.done = s.phase_done;
        s.total = s.phase_total;
        s.elapsed_s = self.started.elapsed().as_secs_f64();
        // Unknown until the first cell's rule or result says how long a cell is.
        s.eta_s = (s.phase_done > 0 || self.cell_budget_s > 0.0)
            .then(|| mean_eta_s(s.phase_done, s.phase_total, s.elapsed_s, self.cell_budget_s));
        self.line.show(&self.snapshot);
    }

    fn learn_phase(&mut self, partial: &MatrixResult) {
        if self.snapshot.phase.is_empty() {
            if let Some(name) = serde_json::to_value(partial.kind)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
            {
                self.snapshot.phase = name;
            }
        }
    }
}

impl Progress for CellProgress {
    fn cell_started(&mut self, index: usize, total: usize, label: &str) {
        self.line.set_label(label);
        self.snapshot.phase_done = index;
        self.snapshot.phase_total = total;
        self.own_status();
    }

    fn cell_finished(&mut self, partial: &MatrixResult) {
        self.learn_phase(partial);
        self.snapshot.phase_done += 1;
        self.save(partial);
        numaprobe_core::fault::panic_at(numaprobe_core::fault::CELL_DONE);
        self.own_status();
    }

    fn cell_failed(&mut self, _index: usize, _total: usize, reason: &str, partial: &MatrixResult) {
        self.learn_phase(partial);
        self.snapshot.phase_done += 1;
        self.line.say(&format!("cell failed: {reason}"));
        self.save(partial);
        self.own_status();
    }

    fn rule_for_cell(&mut self, _index: usize, planned: StopRule) -> StopRule {
        self.cell_budget_s = planned.budget.as_secs_f64();
        self.own_status();
        planned
    }
}

impl Observer for CellProgress {
    fn phase_started(&mut self, phase: Phase, cells: usize) {
        self.snapshot.phase = phase.name().to_string();
        self.snapshot.phase_done = 0;
        self.snapshot.phase_total = cells;
        self.sink = self
            .phase_sinks
            .iter()
            .find(|(p, _)| *p == phase)
            .and_then(|(_, s)| s.clone());
    }

    fn status(&mut self, s: &Status) {
        self.snapshot = s.clone();
        self.line.show(&self.snapshot);
    }

    fn phase_finished(&mut self, _phase: Phase, result: &MatrixResult) {
        self.save(result);
    }

    fn replanned(&mut self, plan: &PhasePlan) {
        if let Some(r) = &plan.reason {
            self.line.say(&format!("{}: {r}", plan.phase.name()));
        }
    }

    fn extra_started(&mut self, phase: Extra, _share_s: f64) {
        self.line.set_label("");
        self.snapshot.phase = phase.name().to_string();
        self.snapshot.phase_done = 0;
        self.snapshot.phase_total = 0;
    }

    /// An extra phase's steps on the same line, with the job's clock and
    /// ETA (the later phases' time included), as the matrices' lines have.
    fn extra_status(&mut self, s: &StepStatus) {
        self.line.set_label(&s.label);
        self.snapshot = Status::single(
            s.phase.name(),
            s.steps_done,
            s.steps,
            s.job_elapsed_s,
            Some(s.job_eta_s),
        );
        self.line.show(&self.snapshot);
    }

    /// A phase that did not measure everything says why, above the bar.
    fn extra_finished(&mut self, r: &ExtraRecord) {
        if r.status != ExtraStatus::Measured {
            let why = r.reason.as_deref().unwrap_or("no reason recorded");
            self.line
                .say(&format!("{}: {}: {why}", r.phase.name(), r.status.name()));
        }
    }
}

/// A result as written: with every raw sample when `keep` (`--keep-samples`),
/// else a copy with each figure's sketch in their place (`leave_out`).
pub fn written<T: Clone>(
    result: &T,
    keep: bool,
    leave_out: fn(&mut T),
    render: impl Fn(&T) -> String,
) -> String {
    if keep {
        render(result)
    } else {
        let mut slim = result.clone();
        leave_out(&mut slim);
        render(&slim)
    }
}
