//! Reading a folder: every numaprobe document in it, with its file name,
//! provenance and completeness, beside the names of all its files.

use super::file::{head, parse, Document, DocumentError};
use super::kind::Kind;
use crate::model::input::read_text;
use crate::model::provenance::Provenance;
use crate::model::ranking::Ranking;
use serde::Deserialize;
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
    /// with what can be used of them: a folder is still read.
    pub unknown: Vec<Other>,
    pub files: Vec<String>,
}

/// A numaprobe document of no kind this numaprobe knows: its file name,
/// the stamps every document carries, and its `rankings` when it has some.
#[derive(Debug, Clone, PartialEq)]
pub struct Other {
    pub file: String,
    pub provenance: Option<Provenance>,
    /// False when the document says `"complete": false`.
    pub complete: bool,
    /// Its `rankings` list: None without one, an error (serde's message)
    /// when it does not read as rankings.
    pub rankings: Option<Result<Vec<Ranking>, String>>,
}

/// The part of an unknown document that can be used.
#[derive(Deserialize)]
struct Rankings {
    rankings: Option<Vec<Ranking>>,
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
        let Ok(head) = head(text.as_bytes(), &path) else {
            continue;
        };
        if !head.is_numaprobe() {
            continue;
        }
        let complete = head.complete != Some(false);
        let Some(kind) = head.kind() else {
            let rankings = crate::model::bounded::from_slice::<Rankings>(text.as_bytes())
                .map_err(|e| e.to_string())
                .map(|r| r.rankings)
                .transpose();
            out.unknown.push(Other {
                file: name,
                provenance: head.provenance,
                complete,
                rankings,
            });
            continue;
        };
        out.documents.push(Found {
            document: parse(text.as_bytes(), &head, kind, &path)?,
            provenance: head.provenance,
            complete,
            file: name,
        });
    }
    Ok(out)
}
