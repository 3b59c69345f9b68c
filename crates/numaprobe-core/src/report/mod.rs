//! The result model's shared pieces and the exporters: one file per output
//! format concern. Exporters turn results into text; they never measure.

pub mod chart;
pub mod graph;
pub mod infer;
pub mod matrix;
pub mod matrix_long;
pub mod pin;
pub mod provenance;
pub mod study;
pub mod study_chart;
pub mod study_long;
pub mod table;
pub mod topo;

/// The output formats every subcommand offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
    Csv,
    Markdown,
}

/// Serialize a result as pretty JSON followed by a newline. Every document
/// numaprobe writes carries `"schema": "numaprobe/1"` at its top level; the
/// result types hold that field themselves so it is never forgotten. Right
/// after it comes `"provenance"` (see [`provenance`]): the machine, version,
/// command line and times, stamped here so that no command can forget it,
/// with `complete` false when the document says so or a stop was requested.
pub fn to_json<T: serde::Serialize>(value: &T) -> String {
    // Serializing our own plain data types cannot fail (no maps with non-string
    // keys, no custom Serialize that errors).
    let pretty = serde_json::to_string_pretty(value).expect("result types serialize");
    let mut s = provenance::stamp(&pretty, crate::cancel::requested());
    s.push('\n');
    s
}
