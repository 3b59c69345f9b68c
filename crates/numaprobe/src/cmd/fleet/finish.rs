//! The end of a fleet run: the fleet's files written beside the nodes'
//! folders, the chosen format shown, and the exit status the fleet earns.

use crate::args::OutputArgs;
use crate::output::{Differs, PartlyFailed};
use crate::safe_dir::SafeDir;
use numaprobe_core::model::fleet::FleetReport;
use numaprobe_core::model::Format;
use numaprobe_core::render;
use numaprobe_core::render::{fleet_csv, fleet_html, fleet_table};

/// What writes one of the fleet's files.
type Renders = fn(&FleetReport) -> String;

/// Where the fleet's files go.
pub(super) enum Dest<'a> {
    /// A folder held already (the gather's own, made before the nodes ran).
    Held(&'a SafeDir),
    /// A folder made only when the first file is written (`--from`), and
    /// given that file inside the same hold (`stop_now`): a stop signal
    /// while the nodes are read and analysed leaves no folder, and one that
    /// comes once the folder is made waits for a whole file in it, so the
    /// folder is never left empty.
    Later(Box<dyn FnMut() -> anyhow::Result<SafeDir> + 'a>),
    /// The folder [`Dest::Later`] made.
    Made(SafeDir),
}

impl Dest<'_> {
    /// The folder, made now if it is still to be made.
    fn dir(&mut self) -> anyhow::Result<&SafeDir> {
        if let Dest::Later(make) = self {
            *self = Dest::Made(make()?);
        }
        match self {
            Dest::Held(dir) => Ok(dir),
            Dest::Made(dir) => Ok(dir),
            Dest::Later(_) => Err(anyhow::anyhow!("the fleet's folder was not made")),
        }
    }
}

/// Write the fleet's files into `dest` (held open: never through a link
/// planted under a name, whatever the folder's path names by then) and show the chosen format; then
/// exit 4 when a node failed, timed out, was lost or not run, 1 when every
/// node reported but the fleet is not uniform (outliers, signature groups
/// beside the largest, a measurement missing), 0 otherwise; `unnamed`
/// nodes of the job's count that sent nothing and have no name count as
/// not run. `stopped`: a
/// signal ended the gather; the report is marked incomplete, where it is is
/// said on stderr, and `main` exits 128 + the signal.
pub(super) fn finish(
    out: &OutputArgs,
    mut dest: Dest,
    mut r: FleetReport,
    notes: &[String],
    stopped: bool,
    unnamed: usize,
) -> anyhow::Result<()> {
    r.notes.extend(notes.iter().cloned());
    if stopped {
        r.complete = false;
    }
    // One file's text at a time, each dropped once written, the chosen
    // format's last (kept for the screen): a fleet of thousands of nodes'
    // cells holds the report and one rendering, never two at once. The
    // JSON is streamed, to its file and (when chosen) to the screen, and
    // never held at all.
    let chosen = out.format();
    let mut shown = None;
    {
        // Whole even after a stop signal: given up, it would leave the
        // folder just made for it empty.
        let _hold = crate::stop_now::Hold::whole();
        dest.dir()?
            .write_with("fleet.json", |w| render::write_json(&r, w))?;
    }
    let mut files: [(&str, Option<Format>, Renders); 3] = [
        ("fleet.md", Some(Format::Markdown), fleet_table::to_markdown),
        ("fleet.csv", Some(Format::Csv), fleet_csv::to_csv),
        ("fleet.html", None, fleet_html::to_html),
    ];
    files.sort_by_key(|(_, format, _)| *format == Some(chosen));
    for (name, format, to_text) in files {
        let text = to_text(&r);
        // The folder is made by now (with fleet.json, above); the write
        // holds off a stop signal itself.
        dest.dir()?.write(name, text.as_bytes())?;
        if format == Some(chosen) {
            shown = Some(text);
        }
    }
    let dir = dest.dir()?;
    if stopped {
        eprintln!(
            "numaprobe: stopped: the nodes that finished and the fleet report (marked incomplete) are in {}/",
            numaprobe_core::clean::line(
                &dir.path().display().to_string(),
                numaprobe_core::clean::UNCLIPPED
            )
        );
    }
    match shown {
        Some(text) => out.sink().write(&text)?,
        None if chosen == Format::Json => out.sink().write_json(&r)?,
        None => out.sink().write(&format!(
            "{}\nFleet report written to {}/ (fleet.json, fleet.md, fleet.csv, fleet.html)\n",
            fleet_table::to_text(&r),
            dir.path().display()
        ))?,
    }
    if stopped {
        return Ok(());
    }
    let mut bad: Vec<String> = r
        .failures()
        .map(|n| format!("{} ({})", n.name, n.reason.as_deref().unwrap_or("failed")))
        .collect();
    let named = bad.len();
    if unnamed > 0 {
        bad.push(format!(
            "{unnamed} node(s) Slurm did not name (sent nothing)"
        ));
    }
    if !bad.is_empty() {
        return Err(anyhow::Error::new(PartlyFailed(format!(
            "{} of {} nodes failed, timed out, were lost or not run: {}; the other nodes' results are in the report",
            named + unnamed,
            r.nodes.len() + unnamed,
            bad.join("; ")
        ))));
    }
    let found = r.findings();
    if found.is_empty() {
        Ok(())
    } else {
        Err(anyhow::Error::new(Differs(format!(
            "the fleet is not uniform: {}",
            found.join("; ")
        ))))
    }
}
