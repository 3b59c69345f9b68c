//! The JSON renderer: every result type serializes itself (serde); this adds
//! the stamp every document carries.

/// Serialize a result as pretty JSON followed by a newline. Every document
/// numaprobe writes carries `"schema": "numaprobe/1"` at its top level; the
/// result types hold that field themselves so it is never forgotten. Right
/// after it comes `"provenance"` (see [`crate::model::provenance`]): the
/// machine, version, command line and times, stamped here so that no command
/// can forget it, with `complete` false when the document says so or a stop
/// was requested.
pub fn to_json<T: serde::Serialize>(value: &T) -> String {
    // Serializing our own plain data types cannot fail (no maps with non-string
    // keys, no custom Serialize that errors).
    let pretty = serde_json::to_string_pretty(value).expect("result types serialize");
    let mut s = crate::model::provenance::stamp(&pretty, crate::cancel::requested());
    s.push('\n');
    s
}
