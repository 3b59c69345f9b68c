//! The JSON renderer: every result type serializes itself (serde);
//! `model::stamped` adds the stamps every document carries (its kind and
//! its provenance); this ends the text with a newline, as a file wants it.

use crate::model::document::Typed;

/// Serialize a result as pretty JSON followed by a newline. Every document
/// numaprobe writes carries `"schema": "numaprobe/1"` at its top level; the
/// result types hold that field themselves so it is never forgotten. Right
/// after it comes `"provenance"` (see [`crate::model::provenance`]): the
/// machine, version, command line and times, stamped on every document so
/// that no command can forget it, with `complete` false when the document says so or a stop
/// was requested.
/// The document's `kind` follows the schema (see [`crate::model::document`]).
pub fn to_json<T: serde::Serialize + Typed>(value: &T) -> String {
    let mut s = crate::model::stamped::json(value);
    s.push('\n');
    s
}

/// [`to_json`]'s text written to `w` as it is made, never held whole
/// ([`crate::model::stamped::write`]).
pub fn write_json<T: serde::Serialize + Typed>(
    value: &T,
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    crate::model::stamped::write(value, &mut &mut *w)?;
    w.write_all(b"\n")
}
