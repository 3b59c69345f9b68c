//! What a numaprobe document is, and the one reader that says what a file or
//! folder holds. Every JSON document numaprobe writes names its `kind`
//! (stamped by `render::to_json` from [`Typed::kind`]); a document written
//! without one is told by its keys, so documents from before the stamp still
//! read. `report`, `diff`, `check`, `infer` and `fleet --from` all ask here.
//!
//! - `kind`: the kinds, their names, [`Typed`] and [`stamp_kind`];
//! - `identify`: which kind a JSON value is;
//! - `file`: [`Document`], its errors, [`parse`] and [`read_file`];
//! - `folder`: [`read_folder`] and what it finds.

mod file;
mod folder;
mod identify;
mod kind;

pub use file::{parse, read_file, Document, DocumentError, Run};
pub use folder::{read_folder, Folder, Found};
pub use identify::{identify, is_numaprobe};
pub use kind::{stamp_kind, Kind, Typed};
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
