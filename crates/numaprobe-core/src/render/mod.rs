//! Renderers: turn result-model values into text (aligned tables, CSV,
//! Markdown, JSON), pictures (SVG/PNG) and reports. They sit above
//! everything and read only the model (and pure formatting helpers of
//! `units`, `topology::cpulist` and the model); they never measure and never
//! analyse. One file per concern:
//!
//! - `table`: the one table type behind text, CSV and Markdown; `fit`: a
//!   terminal's width and height for the main job's summary
//! - `json`: `to_json` and `write_json`, serde plus the provenance stamp
//! - `matrix`, `matrix_long`: a latency/bandwidth matrix and its long table
//! - `infer`, `graph`: the inference's tables and ASCII drawing; its picture;
//!   `infer_fit`: the inference within a terminal and summary.md
//! - `study`, `study_long`, `study_plan`, `study_chart`: the study
//! - `loaded`, `loaded_chart`: loaded-latency curves and their chart
//! - `sweep`, `sweep_chart`: the cache-size sweep (curve, analysis, long CSV; SVG)
//! - `pin`: a binding; `topo`: the topology (text, CSV, Markdown, summary)
//! - `c2c`: the cache-line transfer matrices, pairs and domain summary
//! - `chart`: the shared font and PNG encoding of the pictures
//! - `html`: the self-contained report page; `ranking`: a ranking's bar chart
//! - `run_extra`, `run_status`, `run_summary`: the main job's extra phases,
//!   its status line, and its summary (terminal, summary.md, long CSV)
//! - `prometheus`, `hwloc_xml`: the exporters (`numaprobe export`): node_exporter's
//!   textfile format, and hwloc's XML with the measured matrices
//!
//! Here: `bullet_section`, the titled notes/failures/advice list of the reports.

pub mod c2c;
pub mod chart;
pub mod diff;
pub mod fit;
#[cfg(test)]
pub(crate) mod flag_marks;
pub mod fleet_csv;
pub mod fleet_html;
pub mod fleet_table;
pub mod graph;
pub mod html;
pub mod hwloc_xml;
pub mod infer;
pub mod infer_fit;
pub mod json;
pub mod loaded;
pub mod loaded_chart;
pub mod locks;
pub mod matrix;
pub mod matrix_long;
pub mod peak;
pub mod pin;
pub mod policy;
pub mod prometheus;
pub mod ranking;
pub mod run_extra;
pub mod run_status;
pub mod run_summary;
pub mod study;
pub mod study_chart;
pub mod study_long;
pub mod study_plan;
pub mod sweep;
pub mod sweep_chart;
pub mod table;
pub mod topo;
pub mod tune;

/// A result in `format` for the renderers whose text and Markdown share
/// one writer (`text(r, md)`): stamped JSON, `csv(r)`, text or Markdown.
pub(crate) fn in_format<T: serde::Serialize + crate::model::document::Typed>(
    r: &T,
    format: crate::model::Format,
    text: fn(&T, bool) -> String,
    csv: fn(&T) -> String,
) -> String {
    use crate::model::Format;
    match format {
        Format::Json => to_json(r),
        Format::Csv => csv(r),
        Format::Table => text(r, false),
        Format::Markdown => text(r, true),
    }
}

/// A titled list under a command's tables (`### Notes` and `- ` items in
/// Markdown, `Notes:` and indented items in text): one shape for the notes,
/// failures and advice of the reports, so that they read alike and a change
/// of style is made once.
pub(crate) fn bullet_section<T: std::fmt::Display>(
    md: bool,
    title: &str,
    items: impl IntoIterator<Item = T>,
) -> String {
    let bullet = if md { "- " } else { "  " };
    let mut out = if md {
        format!("### {title}\n\n")
    } else {
        format!("{title}:\n")
    };
    for i in items {
        out.push_str(&format!("{bullet}{i}\n"));
    }
    out
}

pub use json::{to_json, write_json};

#[cfg(test)]
mod tests {
    use super::bullet_section;

    #[test]
    fn a_bullet_section_is_a_heading_and_one_line_per_item() {
        assert_eq!(
            bullet_section(true, "Notes", ["a", "b"]),
            "### Notes\n\n- a\n- b\n"
        );
        assert_eq!(bullet_section(false, "Notes", ["a"]), "Notes:\n  a\n");
    }
}
