//! What a numaprobe document is, and the one reader that says what a file or
//! folder holds. Every JSON document numaprobe writes names its `kind`
//! (stamped by `render::to_json` from [`Typed::kind`]); a document written
//! without one is told by its keys, so documents from before the stamp still
//! read. `report`, `diff`, `check`, `infer` and `fleet --from` all ask here.
//!
//! - `kind`: the kinds, their names, [`Typed`] and [`stamp_kind`];
//! - `identify`: which kind a document is, from its [`Head`];
//! - `file`: [`Document`], its errors, [`parse`], [`from_bytes`] and
//!   [`read_file`];
//! - `folder`: [`read_folder`] and what it finds;
//! - `accept`: the one input rule of every reader ([`Accepts`], [`pick`]).
//!
//! A document's text is read twice, never expanded: once for its head
//! (schema, kind, provenance; every other value skipped), once straight
//! into its typed shape with its memory bounded by its size
//! (`model::bounded`).

mod accept;
mod file;
mod folder;
mod identify;
mod kind;

pub use accept::{a_kind, pick, refusal, refuse_other_kind, Accepts, Picked};
pub use file::{from_bytes, head, parse, read_file, Document, DocumentError, Run, RunRead};
pub use folder::{read_folder, Folder, Found, Other};
pub use identify::{identify, is_numaprobe, Head, Stamps};
pub use kind::{stamp_kind, stamp_kind_into, Kind, Typed};
use std::path::Path;

/// What a path holds: one document, or a folder of them.
#[derive(Debug, Clone, PartialEq)]
pub enum Holding {
    File(Document),
    Folder(Folder),
}

/// Read a file or a folder (see [`read_file`] and [`read_folder`]).
pub fn read(path: &Path) -> Result<Holding, DocumentError> {
    if !path.exists() {
        return Err(DocumentError::Missing {
            path: path.to_path_buf(),
        });
    }
    if path.is_dir() {
        return read_folder(path).map(Holding::Folder);
    }
    read_file(path).map(Holding::File)
}

#[cfg(test)]
mod tests;
