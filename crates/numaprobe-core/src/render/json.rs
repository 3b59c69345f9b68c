//! The JSON renderer: every result type serializes itself (serde); this adds
//! the stamps every document carries (its kind and its provenance).

use crate::model::document::{stamp_kind, Typed};

/// Serialize a result as pretty JSON followed by a newline. Every document
/// numaprobe writes carries `"schema": "numaprobe/1"` at its top level; the
/// result types hold that field themselves so it is never forgotten. Right
/// after it comes `"provenance"` (see [`crate::model::provenance`]): the
/// machine, version, command line and times, stamped here so that no command
/// can forget it, with `complete` false when the document says so or a stop
/// was requested.
/// The document's `kind` follows the schema (see [`crate::model::document`]).
pub fn to_json<T: serde::Serialize + Typed>(value: &T) -> String {
    // Serializing our own plain data types cannot fail (no maps with non-string
    // keys, no custom Serialize that errors).
    let pretty = serde_json::to_string_pretty(value).expect("result types serialize");
    let typed = stamp_kind(&pretty, value.kind());
    let mut s = crate::model::provenance::stamp(&typed, crate::cancel::requested());
    s.push('\n');
    s
}
