//! The result model's shared pieces and the exporters: one file per output
//! format concern. Exporters turn results into text; they never measure.

pub mod chart;
pub mod graph;
pub mod infer;
pub mod matrix;
pub mod matrix_long;
pub mod pin;
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
/// result types hold that field themselves so it is never forgotten.
pub fn to_json<T: serde::Serialize>(value: &T) -> String {
    // Serializing our own plain data types cannot fail (no maps with non-string
    // keys, no custom Serialize that errors).
    let mut s = serde_json::to_string_pretty(value).expect("result types serialize");
    s.push('\n');
    s
}
