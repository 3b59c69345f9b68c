//! The one input rule of every command that reads a numaprobe result: it
//! takes a document or a report folder, says what it found there, and
//! refuses a kind it cannot use with one line naming the kinds it takes.
//! [`Accepts`] is what a command (or one of its options) takes; [`pick`]
//! finds those documents at a path, told by their content (the file name
//! is not asked). `doc/inputs.md` is the rule in the user's words.

use super::file::{head, DocumentError};
use super::kind::Kind;
use crate::model::input::read_text;
use std::path::{Path, PathBuf};

/// What one reader takes: its name as the user types it (`diff`,
/// `check --expect`) and the document kinds it can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accepts {
    pub reader: &'static str,
    pub kinds: &'static [Kind],
}

impl Accepts {
    /// The kinds it takes in words: "run, topo, latency or c2c documents,
    /// or a report folder holding one".
    pub fn names(&self) -> String {
        let names: Vec<&str> = self.kinds.iter().map(|k| k.name()).collect();
        let list = match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => names.join(""),
        };
        let a = if list.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        format!("{a} {list} document, or a report folder holding one")
    }

    pub fn takes(&self, kind: Kind) -> bool {
        self.kinds.contains(&kind)
    }
}

/// What [`pick`] found at a path: the file itself, or the folder's files
/// of the kinds the reader takes (file-name order).
#[derive(Debug, Clone, PartialEq)]
pub struct Picked {
    pub path: PathBuf,
    pub folder: bool,
    /// Each file with its kind.
    pub files: Vec<(PathBuf, Kind)>,
}

impl Picked {
    /// What was found, in words: "a c2c document" or "a report folder:
    /// run.json (run), latency.json (latency)".
    pub fn named(&self) -> String {
        if !self.folder {
            return match self.files.first() {
                Some((_, k)) => a_kind(*k),
                None => "nothing".into(),
            };
        }
        let files: Vec<String> = self
            .files
            .iter()
            .map(|(p, k)| {
                let name = p.file_name().map_or_else(
                    || p.display().to_string(),
                    |n| n.to_string_lossy().into_owned(),
                );
                format!("{name} ({k})")
            })
            .collect();
        format!("a report folder: {}", files.join(", "))
    }

    /// The first file of `kind`.
    pub fn first(&self, kind: Kind) -> Option<&Path> {
        self.files
            .iter()
            .find(|(_, k)| *k == kind)
            .map(|(p, _)| p.as_path())
    }
}

/// The documents at `path` that `accepts` takes: the file itself (refused
/// when of another kind), or a folder's documents of those kinds (refused
/// when it holds none). A file that is not a numaprobe document is refused
/// here too; readers that take other formats as well (MLC output, CSV)
/// ask [`pick`] only for folders.
pub fn pick(path: &Path, accepts: &Accepts) -> Result<Picked, DocumentError> {
    if !path.exists() {
        return Err(DocumentError::Missing {
            path: path.to_path_buf(),
        });
    }
    let kind_at = |p: &Path| -> Result<Option<Kind>, DocumentError> {
        let text = read_text(p)?;
        Ok(head(text.as_bytes(), p)?.kind())
    };
    if !path.is_dir() {
        let text = read_text(path)?;
        let h = head(text.as_bytes(), path)?;
        let Some(kind) = h.kind() else {
            let found = if h.is_numaprobe() {
                "a numaprobe document of no kind this numaprobe knows"
            } else {
                "not a numaprobe document"
            };
            return Err(refusal(path, found, accepts));
        };
        if !accepts.takes(kind) {
            return Err(refusal(path, &a_kind(kind), accepts));
        }
        return Ok(Picked {
            path: path.to_path_buf(),
            folder: false,
            files: vec![(path.to_path_buf(), kind)],
        });
    }
    let mut names: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| DocumentError::Folder {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".json") && !n.starts_with('.'))
        })
        .collect();
    names.sort();
    let mut files = Vec::new();
    let mut others: Vec<String> = Vec::new();
    for p in names {
        // Another tool's JSON or a broken file beside the documents is
        // not the reader's business: only a document it takes is read.
        let Ok(Some(kind)) = kind_at(&p) else {
            continue;
        };
        if accepts.takes(kind) {
            files.push((p, kind));
        } else if !others.contains(&kind.name().to_string()) {
            others.push(kind.name().to_string());
        }
    }
    if files.is_empty() {
        let found = if others.is_empty() {
            "a folder without numaprobe documents".to_string()
        } else {
            format!("a folder of {} documents only", others.join(", "))
        };
        return Err(refusal(path, &found, accepts));
    }
    Ok(Picked {
        path: path.to_path_buf(),
        folder: true,
        files,
    })
}

/// A file's text that is a numaprobe document of a kind `accepts` does not
/// take is refused by the one rule (what it is, what would be taken); any
/// other text (MLC output, CSV, a hand-written matrix) is left to the
/// reader's own formats.
pub fn refuse_other_kind(text: &str, path: &Path, accepts: &Accepts) -> Result<(), DocumentError> {
    match head(text.as_bytes(), path).map(|h| h.kind()) {
        Ok(Some(kind)) if !accepts.takes(kind) => Err(refusal(path, &a_kind(kind), accepts)),
        _ => Ok(()),
    }
}

/// "a c2c document", "an infer document".
pub fn a_kind(k: Kind) -> String {
    let a = if k.name().starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{a} {k} document")
}

/// The one-line refusal: what was found, and what the reader takes.
pub fn refusal(path: &Path, found: &str, accepts: &Accepts) -> DocumentError {
    DocumentError::NotTaken {
        path: path.to_path_buf(),
        found: found.to_string(),
        reader: accepts.reader,
        takes: accepts.names(),
    }
}
