//! A document's JSON text as every file numaprobe writes carries it: serde's
//! pretty text with the document's `kind` and its provenance stamped after
//! `schema`, laid out by `compact`. Here, below the renderers, so that a document embedded in
//! another (the topology inside `run.json`) is stamped exactly as its own
//! file is.

use super::document::{stamp_kind, Typed};

/// Pretty JSON with `kind` and `provenance` after the top-level `schema`,
/// its innermost containers on one line ([`super::compact::layout`]; no
/// trailing newline); `complete` in the provenance is false when the
/// document says so or a stop was requested.
pub fn json<T: serde::Serialize + Typed>(value: &T) -> String {
    // Serializing our own plain data types cannot fail (no maps with non-string
    // keys, no custom Serialize that errors).
    // Each text is dropped as soon as the next is made: a fleet's document
    // of 4 million figures is some 130 MB, and one copy too many of it is a
    // copy more than the report itself.
    let typed = stamp_kind(
        &serde_json::to_string_pretty(value).expect("result types serialize"),
        value.kind(),
    );
    let stamped = super::provenance::stamp(&typed, crate::cancel::requested());
    drop(typed);
    super::compact::layout(&stamped)
}

/// [`json`] as a value, to embed in another document.
pub fn value<T: serde::Serialize + Typed>(value: &T) -> serde_json::Value {
    serde_json::from_str(&json(value)).expect("a stamped document is JSON")
}
