//! The main job's extra phases in `numaprobe run`: their documents in the
//! report folder, their summary lines and their part of the closing error
//! line (a failed phase makes the run exit 1; skipped and budget-cut ones do
//! not).

use super::RunReport;
use anyhow::Result;
use numaprobe_core::job::extra::Extras;
use numaprobe_core::model::extra::ExtraStatus;
use numaprobe_core::render;

/// Each extra phase's document beside the matrices (`c2c.json`,
/// `loaded-latency.json`, `peak.json`, `sweep.json`), when it measured
/// anything.
pub(super) fn save_documents(x: &Extras, save: &dyn Fn(&str, &str) -> Result<()>) -> Result<()> {
    if let Some(r) = &x.c2c.result {
        save("c2c.json", &render::to_json(r))?;
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

/// The closing line when something failed: the matrices' cells (below) and
/// the extra phases that returned an error; None when nothing failed
/// (skipped and budget-cut phases are not failures).
pub(super) fn failures(doc: &RunReport) -> Option<String> {
    let extras: Vec<String> = [
        doc.c2c.as_ref().map(|o| &o.record),
        doc.loaded_latency.as_ref().map(|o| &o.record),
        doc.peak.as_ref().map(|o| &o.record),
        doc.sweep.as_ref().map(|o| &o.record),
    ]
    .into_iter()
    .flatten()
    .filter(|r| r.status == ExtraStatus::Failed)
    .map(|r| {
        format!(
            "{} failed: {}",
            r.phase.name(),
            r.reason.as_deref().unwrap_or("no reason recorded")
        )
    })
    .collect();
    let cells = super::cell_failures(doc);
    if extras.is_empty() {
        return cells;
    }
    let mut line = cells.map(|c| format!("{c}; ")).unwrap_or_default();
    line.push_str(&format!(
        "{}; everything else is in the output and the report",
        extras.join("; ")
    ));
    Some(line)
}

/// The summary lines of the extra phases (none when nothing was measured).
pub(super) fn lines(doc: &RunReport) -> Vec<String> {
    render::run_extra::lines(
        doc.c2c.as_ref(),
        doc.loaded_latency.as_ref(),
        doc.peak.as_ref(),
        doc.sweep.as_ref(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use numaprobe_core::model::extra::{Extra, ExtraOutcome, ExtraRecord};

    fn outcome<T>(phase: Extra, status: ExtraStatus, reason: Option<&str>) -> ExtraOutcome<T> {
        ExtraOutcome {
            record: ExtraRecord {
                phase,
                status,
                reason: reason.map(String::from),
                share_s: 1.0,
                elapsed_s: 0.5,
                steps_planned: 2,
                steps_done: 1,
            },
            result: None,
        }
    }

    fn doc(loaded: ExtraStatus) -> RunReport {
        RunReport {
            schema: numaprobe_core::SCHEMA,
            topology: serde_json::Value::Null,
            latency: None,
            bandwidth: None,
            inference: None,
            inference_bandwidth: None,
            binding: None,
            notes: vec![],
            complete: true,
            status: None,
            budget_s: Some(5.0),
            elapsed_s: Some(4.0),
            plan: None,
            c2c: Some(outcome(
                Extra::C2c,
                ExtraStatus::Skipped,
                Some("1 allowed CPU"),
            )),
            loaded_latency: Some(outcome(
                Extra::LoadedLatency,
                loaded,
                Some("the kernel refused the load threads' buffers"),
            )),
            peak: Some(outcome(
                Extra::Peak,
                ExtraStatus::Partial,
                Some("share spent"),
            )),
            sweep: Some(outcome(
                Extra::Sweep,
                ExtraStatus::Skipped,
                Some("the budget does not reach it"),
            )),
            interleave: vec![],
        }
    }

    #[test]
    fn a_failed_extra_phase_fails_the_run_and_a_skipped_or_cut_one_does_not() {
        assert_eq!(failures(&doc(ExtraStatus::Partial)), None);
        let line = failures(&doc(ExtraStatus::Failed)).unwrap();
        assert_eq!(
            line,
            "loaded latency failed: the kernel refused the load threads' buffers; everything else is in the output and the report"
        );
        // Every phase has its summary line.
        assert_eq!(lines(&doc(ExtraStatus::Failed)).len(), 4);
    }
}
