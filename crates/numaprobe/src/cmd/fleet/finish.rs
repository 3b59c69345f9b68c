//! The end of a fleet run: the fleet's files written beside the nodes'
//! folders, the chosen format shown, and the exit status the fleet earns.

use crate::args::OutputArgs;
use crate::output::{Differs, PartlyFailed};
use crate::safe_dir::SafeDir;
use numaprobe_core::model::fleet::FleetReport;
use numaprobe_core::model::Format;
use numaprobe_core::render;
use numaprobe_core::render::{fleet_csv, fleet_html, fleet_table};

/// Write the fleet's files into `dir` (held open: never through a link
/// planted under a name, whatever the folder's path names by then) and show the chosen format; then
/// exit 4 when a node failed, timed out, was lost or not run, 1 when every
/// node reported but the fleet is not uniform (outliers, signature groups
/// beside the largest, a measurement missing), 0 otherwise. `stopped`: a
/// signal ended the gather; the report is marked incomplete, where it is is
/// said on stderr, and `main` exits 128 + the signal.
pub(super) fn finish(
    out: &OutputArgs,
    dir: &SafeDir,
    r: &FleetReport,
    notes: &[String],
    stopped: bool,
) -> anyhow::Result<()> {
    let mut r = r.clone();
    r.notes.extend(notes.iter().cloned());
    if stopped {
        r.complete = false;
    }
    let markdown = fleet_table::to_markdown(&r);
    let csv = fleet_csv::to_csv(&r);
    let json = render::to_json(&r);
    for (name, text) in [
        ("fleet.json", &json),
        ("fleet.md", &markdown),
        ("fleet.csv", &csv),
        ("fleet.html", &fleet_html::to_html(&r)),
    ] {
        dir.write(name, text.as_bytes())?;
    }
    if stopped {
        eprintln!(
            "numaprobe: stopped: the nodes that finished and the fleet report (marked incomplete) are in {}/",
            dir.path().display()
        );
    }
    let text = match out.format() {
        Format::Json => json,
        Format::Markdown => markdown,
        Format::Csv => csv,
        Format::Table => format!(
            "{}\nFleet report written to {}/ (fleet.json, fleet.md, fleet.csv, fleet.html)\n",
            fleet_table::to_text(&r),
            dir.path().display()
        ),
    };
    out.sink().write(&text)?;
    if stopped {
        return Ok(());
    }
    let bad: Vec<String> = r
        .failures()
        .map(|n| format!("{} ({})", n.name, n.reason.as_deref().unwrap_or("failed")))
        .collect();
    if !bad.is_empty() {
        return Err(anyhow::Error::new(PartlyFailed(format!(
            "{} of {} nodes failed, timed out, were lost or not run: {}; the other nodes' results are in the report",
            bad.len(),
            r.nodes.len(),
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
