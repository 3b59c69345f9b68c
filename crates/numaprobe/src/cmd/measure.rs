//! What `latency` and `bandwidth` share: turning option strings into values
//! (one-line errors, exit 2), reading the topology of the machine we measure,
//! progress on the terminal, and rewriting `--output` after every cell.

use crate::output::{usage, Sink};
use anyhow::Context;
use numaprobe_core::experiments::{ExperimentError, Progress};
use numaprobe_core::placement::{PageKind, PlacementError};
use numaprobe_core::report::matrix::MatrixResult;
use numaprobe_core::report::Format;
use numaprobe_core::stats::StopRule;
use numaprobe_core::topology::Topology;
use numaprobe_core::units;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

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

pub fn pages(v: &Option<String>) -> anyhow::Result<Option<PageKind>> {
    v.as_deref()
        .map(|s| units::parse_pages(s).map_err(|e| usage(format!("--pages: {e}"))))
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
pub fn experiment_error(e: ExperimentError) -> anyhow::Error {
    match e {
        ExperimentError::Placement(PlacementError::Sys { .. })
        | ExperimentError::Placement(PlacementError::Read { .. })
        | ExperimentError::Placement(PlacementError::PinNotHonoured { .. })
        | ExperimentError::Panicked => anyhow::Error::new(e),
        other => usage(other.to_string()),
    }
}

/// Progress on stderr when it is a terminal, and the output file rewritten
/// after every finished cell so an interrupted run keeps its cells.
pub struct CellProgress {
    draw: bool,
    /// None: progress only, the result goes nowhere (the caller renders it).
    sink: Option<Sink>,
    format: Format,
    /// The first failure to write the file (a Progress method cannot return it).
    pub write_error: Option<anyhow::Error>,
    label: String,
}

impl CellProgress {
    pub fn new(sink: Sink, format: Format) -> Self {
        Self::optional(Some(sink), format)
    }

    /// Progress on the terminal, and the result saved only when `sink` is given.
    pub fn optional(sink: Option<Sink>, format: Format) -> Self {
        CellProgress {
            draw: crate::output::stderr_is_terminal(),
            sink,
            format,
            write_error: None,
            label: String::new(),
        }
    }

    /// Write the final result (to the file or stdout) and report any earlier
    /// write failure.
    pub fn finish(mut self, result: &MatrixResult) -> anyhow::Result<()> {
        if self.draw {
            eprint!("\r\x1b[K");
        }
        if let Some(e) = self.write_error.take() {
            return Err(e);
        }
        match &self.sink {
            Some(sink) => sink.write(&result.render(self.format)),
            None => Ok(()),
        }
    }
}

impl Progress for CellProgress {
    fn cell_started(&mut self, index: usize, total: usize, label: &str) {
        self.label = format!("[{}/{}] {label}", index + 1, total);
        if self.draw {
            eprint!("\r\x1b[K{} ...", self.label);
            let _ = std::io::stderr().flush();
        }
    }

    fn cell_finished(&mut self, partial: &MatrixResult) {
        if self.draw {
            if let Some(c) = partial
                .scaling
                .as_ref()
                .and_then(|s| s.last())
                .or(partial.cells.last())
            {
                eprintln!(
                    "\r\x1b[K{}: {:.2} {} (cv {:.2} %, {} samples, {}){}",
                    self.label,
                    c.median,
                    partial.unit,
                    c.cv * 100.0,
                    c.samples.len(),
                    c.stop.name(),
                    if c.flagged { " FLAGGED" } else { "" }
                );
            }
        }
        if let Some(Sink::File(path)) = &self.sink {
            if self.write_error.is_none() {
                if let Err(e) = Sink::File(path.clone())
                    .write(&partial.render(self.format))
                    .with_context(|| format!("saving partial results to {}", path.display()))
                {
                    self.write_error = Some(e);
                }
            }
        }
    }
}
