//! Reading a folder: every numaprobe document in it, with its file name,
//! provenance and completeness, beside the names of all its files.

use super::file::{parse, Document, DocumentError};
use super::identify::{identify, is_numaprobe};
use super::kind::Kind;
use crate::model::input::read_text;
use crate::model::provenance::Provenance;
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;

/// A document found in a folder, with its file name and the stamps every
/// document carries.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub file: String,
    pub document: Document,
    /// Its provenance, when it has a readable one.
    pub provenance: Option<Provenance>,
    /// False when the document says `"complete": false`.
    pub complete: bool,
}

/// What a folder holds: its numaprobe documents in file-name order, and
/// the names of all its files (pictures, summary, other tools' JSON, the
/// documents too), hidden files left out.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Folder {
    pub documents: Vec<Found>,
    /// numaprobe documents of no kind this numaprobe knows (a newer
    /// version's, or one written by hand such as a bare `rankings` list),
    /// as JSON with their file name: a folder is still read, and the
    /// caller takes what it can use.
    pub unknown: Vec<(String, Value)>,
    pub files: Vec<String>,
}

impl Folder {
    /// The first document of `kind`.
    pub fn first(&self, kind: Kind) -> Option<&Found> {
        self.documents.iter().find(|d| d.document.kind() == kind)
    }
}

/// Read a folder's documents. A JSON file that is not numaprobe's (no
/// `numaprobe/` schema) is another tool's and only listed; a document of a
/// kind this numaprobe knows that does not read is an error naming it.
pub fn read_folder(dir: &Path) -> Result<Folder, DocumentError> {
    let folder_err = |e: std::io::Error| DocumentError::Folder {
        path: dir.to_path_buf(),
        message: e.to_string(),
    };
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(folder_err)?
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    let mut out = Folder::default();
    for name in names {
        out.files.push(name.clone());
        if !name.ends_with(".json") {
            continue;
        }
        let path = dir.join(&name);
        let text = read_text(&path)?;
        let Ok(v) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        if !is_numaprobe(&v) {
            continue;
        }
        let Some(kind) = identify(&v) else {
            out.unknown.push((name, v));
            continue;
        };
        out.documents.push(Found {
            document: parse(&v, kind, &path)?,
            provenance: v
                .get("provenance")
                .and_then(|p| Provenance::deserialize(p).ok()),
            complete: v.get("complete").and_then(Value::as_bool) != Some(false),
            file: name,
        });
    }
    Ok(out)
}
