//! The file system below a root path as the topology readers see it: `Fs`
//! opens every file of a machine's description relative to the root (so a
//! dump reads like the live machine), reads sets, masks and numbers, and
//! folds the files it read as missing into warnings; `TopologyError` is what
//! reading can fail with. `sysfs`, `caches`, `packages`, `extras` and
//! `cgroup` all read through it.

use super::cpulist::{clean, parse_list, parse_mask, quote};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    #[error("{0}: no such directory")]
    NoRoot(PathBuf),
    #[error("{0}: not a Linux sysfs tree (no sys/devices/system/cpu below it)")]
    NotSysfs(PathBuf),
    #[error("{path}: {problem}")]
    Malformed { path: PathBuf, problem: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

pub(crate) const CPU_DIR: &str = "sys/devices/system/cpu";
pub(crate) const NODE_DIR: &str = "sys/devices/system/node";

/// The file system below `root`. Relative paths only: nothing here can reach
/// an absolute system path by accident.
pub(crate) struct Fs<'a> {
    pub root: &'a Path,
    /// Files read as missing because they were empty or could not be read:
    /// (path with the CPU number as `*`, CPU numbers, what was assumed).
    /// Folded into one warning per pattern at the end of `read`.
    notes: RefCell<Vec<(String, Option<u32>, &'static str)>>,
}

impl<'a> Fs<'a> {
    pub fn new(root: &'a Path) -> Self {
        Fs {
            root,
            notes: RefCell::new(Vec::new()),
        }
    }

    /// Remember that `rel` was empty or unreadable and `assumed` was used
    /// instead (hwloc's fallback for that file).
    pub fn note(&self, rel: &str, assumed: &'static str) {
        // `sys/devices/system/cpu/cpu12/cache/index3/size` -> pattern with
        // `cpu*` and CPU 12, so 64 CPUs make one warning.
        let mut pattern = rel.to_string();
        let mut cpu = None;
        if let Some(rest) = rel.strip_prefix(&format!("{CPU_DIR}/cpu")) {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            if !digits.is_empty() && rest[digits.len()..].starts_with('/') {
                cpu = digits.parse().ok();
                pattern = format!("{CPU_DIR}/cpu*{}", &rest[digits.len()..]);
            }
        }
        self.notes.borrow_mut().push((pattern, cpu, assumed));
    }

    /// The notes as warnings, one per (file pattern, fallback).
    pub fn take_notes(&self) -> Vec<String> {
        let mut by: BTreeMap<(String, &'static str), Vec<u32>> = BTreeMap::new();
        let mut order = Vec::new();
        for (p, cpu, assumed) in self.notes.borrow_mut().drain(..) {
            let k = (p, assumed);
            let e = by.entry(k.clone()).or_insert_with(|| {
                order.push(k);
                Vec::new()
            });
            e.extend(cpu);
        }
        order
            .into_iter()
            .map(|k| {
                let cpus = &by[&k];
                let path = self.path(&k.0).display().to_string();
                if cpus.is_empty() {
                    format!("{path}: empty or unreadable; {}", k.1)
                } else {
                    format!(
                        "{path}: empty or unreadable for CPUs {}; {}",
                        super::cpulist::format_list(cpus),
                        k.1
                    )
                }
            })
            .collect()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel.trim_start_matches('/'))
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.path(rel).exists()
    }

    pub fn is_dir(&self, rel: &str) -> bool {
        self.path(rel).is_dir()
    }

    /// The file's text, `None` when it does not exist. A file that exists
    /// but cannot be read (permissions, an I/O error, a folder where a file
    /// should be) is read as missing with a warning, as hwloc does: every
    /// caller has a fallback for a missing file. Read through
    /// [`crate::model::input`] like every outside file: a dump is someone's
    /// folder, and a FIFO or device planted in it (which would block the
    /// read for ever, deaf to SIGTERM) or a file past the size limit is
    /// unreadable too.
    pub fn read_opt(&self, rel: &str) -> Result<Option<String>, TopologyError> {
        use crate::model::input::{read_bytes, InputError};
        let path = self.path(rel);
        match read_bytes(&path) {
            Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
            Err(InputError::Missing { .. }) => Ok(None),
            Err(e @ InputError::BadLimit { .. }) => Err(TopologyError::Malformed {
                path,
                problem: e.to_string(),
            }),
            Err(_) => {
                self.note(rel, "read as missing");
                Ok(None)
            }
        }
    }

    /// An attribute's cleaned text; an empty file is read as missing, with
    /// a warning saying what was `assumed` instead.
    pub fn attr_opt(
        &self,
        rel: &str,
        assumed: &'static str,
    ) -> Result<Option<String>, TopologyError> {
        Ok(match self.read_opt(rel)? {
            None => None,
            Some(s) if clean(&s).is_empty() => {
                self.note(rel, assumed);
                None
            }
            Some(s) => Some(clean(&s).to_string()),
        })
    }

    /// Names in a directory, sorted; empty when it does not exist.
    pub fn list_dir(&self, rel: &str) -> Vec<String> {
        let mut names: Vec<String> = match std::fs::read_dir(self.path(rel)) {
            Ok(rd) => rd
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect(),
            Err(_) => Vec::new(),
        };
        names.sort();
        names
    }

    /// Numbers `N` of entries named `<prefix>N` (e.g. `cpu12`, `node3`).
    pub fn numbered(&self, rel: &str, prefix: &str) -> Vec<u32> {
        let mut ids: Vec<u32> = self
            .list_dir(rel)
            .iter()
            .filter_map(|n| n.strip_prefix(prefix))
            .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .filter_map(|s| s.parse().ok())
            .collect();
        ids.sort_unstable();
        ids
    }

    /// The problem quotes the file's text, which may hold anything: it is
    /// escaped and cut here, so the error stays one short line.
    pub fn malformed(&self, rel: &str, problem: impl Into<String>) -> TopologyError {
        TopologyError::Malformed {
            path: self.path(rel),
            problem: quote(&problem.into(), 400),
        }
    }

    /// A set in list form; `None` when the file does not exist.
    pub fn list_opt(&self, rel: &str) -> Result<Option<Vec<u32>>, TopologyError> {
        match self.read_opt(rel)? {
            None => Ok(None),
            Some(s) => parse_list(&s).map(Some).map_err(|p| self.malformed(rel, p)),
        }
    }

    /// A set in mask form; `None` when the file does not exist or is empty
    /// (a mask is never empty text, even for no CPU: `00000000`).
    pub fn mask_opt(&self, rel: &str) -> Result<Option<Vec<u32>>, TopologyError> {
        match self.attr_opt(rel, "read as missing")? {
            None => Ok(None),
            Some(s) => parse_mask(&s).map(Some).map_err(|p| self.malformed(rel, p)),
        }
    }

    /// A signed integer (topology ids); `None` when the file does not exist
    /// or is empty (the id is then unknown, as when the file is missing).
    pub fn int_opt(&self, rel: &str) -> Result<Option<i64>, TopologyError> {
        match self.attr_opt(rel, "the id is unknown")? {
            None => Ok(None),
            Some(s) => s
                .parse::<i64>()
                .map(Some)
                .map_err(|_| self.malformed(rel, format!("`{s}` is not an integer"))),
        }
    }
}

/// A set read from the first of several files that exists (and is not
/// empty), in the caller's order.
pub(crate) fn first_set(
    fs: &Fs,
    dir: &str,
    names: &[&str],
) -> Result<Option<Vec<u32>>, TopologyError> {
    for name in names {
        let rel = format!("{dir}/{name}");
        let got = if name.ends_with("_list") {
            fs.list_opt(&rel)?
        } else {
            fs.mask_opt(&rel)?
        };
        if got.is_some() {
            return Ok(got);
        }
    }
    Ok(None)
}
