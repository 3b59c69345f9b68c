//! The report folder of `numaprobe run`, owned by one run at a time.
//!
//! numaprobe keeps a manifest (`.numaprobe-manifest`) in the folder listing
//! every file it wrote there. A new run first removes the files the previous
//! run listed, and only those, so no file of an earlier run survives beside a
//! new run's (an 8-node `graph-latency.png` next to a later 1-node run, the
//! previous `run.json` after an interrupted run). A non-empty folder without
//! a manifest holds files numaprobe did not write: it is refused (exit 2)
//! unless `--force` is given, and even then nothing in it is removed.
//!
//! A file is listed in the manifest before it is written, so a run stopped
//! at any point leaves a manifest that covers everything it left behind.

use crate::output::{usage, write_atomic};
use anyhow::Context;
use std::cell::RefCell;
use std::path::{Path, PathBuf};

pub const MANIFEST: &str = ".numaprobe-manifest";
const HEADER: &str =
    "# numaprobe: the files the last run wrote into this folder; the next run removes them\n";

/// An open report folder. Files are named relative to it, without `/`.
#[derive(Debug)]
pub struct ReportDir {
    dir: PathBuf,
    written: RefCell<Vec<String>>,
    /// The first failure to update the manifest (`join` cannot return it).
    manifest_error: RefCell<Option<std::io::Error>>,
}

/// The report folder a run asked for: None with `--no-report`, else `dir`
/// (default `./numaprobe-report`), taken over as described in the module doc.
pub fn open(no_report: bool, dir: Option<&Path>, force: bool) -> anyhow::Result<Option<ReportDir>> {
    if no_report {
        return Ok(None);
    }
    let dir = dir.unwrap_or(Path::new("numaprobe-report"));
    ReportDir::take_over(dir, force).map(Some)
}

impl ReportDir {
    /// Create the folder or clear what the previous run listed, then start a
    /// new (empty) manifest.
    pub fn take_over(dir: &Path, force: bool) -> anyhow::Result<ReportDir> {
        if dir.exists() && !dir.is_dir() {
            return Err(usage(format!(
                "--report-dir {}: exists and is not a folder",
                dir.display()
            )));
        }
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the report folder {}", dir.display()))?;
        let manifest = dir.join(MANIFEST);
        match std::fs::read_to_string(&manifest) {
            Ok(text) => remove_listed(dir, &text)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let foreign = std::fs::read_dir(dir)
                    .with_context(|| format!("cannot read the report folder {}", dir.display()))?
                    .next()
                    .is_some();
                if foreign && !force {
                    return Err(usage(format!(
                        "--report-dir {}: the folder is not empty and has no {MANIFEST}, so numaprobe did not write it; choose a new or empty folder, or add --force to write beside its files",
                        dir.display()
                    )));
                }
            }
            Err(e) => {
                return Err(
                    anyhow::Error::new(e).context(format!("cannot read {}", manifest.display()))
                )
            }
        }
        let rd = ReportDir {
            dir: dir.to_path_buf(),
            written: RefCell::new(Vec::new()),
            manifest_error: RefCell::new(None),
        };
        rd.write_manifest()
            .with_context(|| format!("cannot write {}", manifest.display()))?;
        Ok(rd)
    }

    /// The path of report file `name`, listed in the manifest first so the
    /// next run removes it. Every file of the folder is named through here.
    pub fn join(&self, name: &str) -> PathBuf {
        if !self.written.borrow().iter().any(|n| n == name) {
            self.written.borrow_mut().push(name.to_string());
            if let Err(e) = self.write_manifest() {
                self.manifest_error.borrow_mut().get_or_insert(e);
            }
        }
        self.dir.join(name)
    }

    /// Write report file `name` whole (atomically).
    pub fn save(&self, name: &str, bytes: &[u8]) -> anyhow::Result<()> {
        let path = self.join(name);
        if let Some(e) = self.manifest_error.borrow_mut().take() {
            return Err(anyhow::Error::new(e).context(format!(
                "cannot write {}",
                self.dir.join(MANIFEST).display()
            )));
        }
        write_atomic(&path, bytes).with_context(|| format!("cannot write {}", path.display()))
    }

    pub fn display(&self) -> std::path::Display<'_> {
        self.dir.display()
    }

    fn write_manifest(&self) -> std::io::Result<()> {
        let mut text = String::from(HEADER);
        for n in self.written.borrow().iter() {
            text.push_str(n);
            text.push('\n');
        }
        write_atomic(&self.dir.join(MANIFEST), text.as_bytes())
    }
}

/// Remove the files a manifest lists (and the temporary files an atomic
/// write of them may have left when the process was killed). Lines that do
/// not name a plain file of this folder are ignored: a manifest never makes
/// numaprobe remove anything outside its folder.
fn remove_listed(dir: &Path, manifest: &str) -> anyhow::Result<()> {
    let names: Vec<&str> = manifest
        .lines()
        .map(str::trim)
        .filter(|n| is_plain_name(n) && *n != MANIFEST)
        .collect();
    for n in &names {
        remove(&dir.join(n))?;
    }
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let f = e.file_name().to_string_lossy().into_owned();
            let leftover = f.ends_with(".tmp")
                && names
                    .iter()
                    .chain(std::iter::once(&MANIFEST))
                    .any(|n| f.starts_with(&format!(".{n}.")));
            if leftover {
                remove(&e.path())?;
            }
        }
    }
    Ok(())
}

fn remove(path: &Path) -> anyhow::Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(anyhow::Error::new(e).context(format!(
            "cannot remove {} of the previous run",
            path.display()
        ))),
    }
}

fn is_plain_name(n: &str) -> bool {
    !n.is_empty() && !n.starts_with('#') && !n.contains('/') && n != "." && n != ".."
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tempdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("numaprobe-rd-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_new_run_removes_exactly_what_the_last_one_wrote() {
        let d = tempdir("rerun");
        let first = ReportDir::take_over(&d, false).unwrap();
        first.save("graph-latency.png", b"png").unwrap();
        first.save("run.json", b"{}").unwrap();
        std::fs::write(first.join("latency.json"), "{}").unwrap();
        // A file the user put there after the run is not numaprobe's.
        std::fs::write(d.join("notes.txt"), "mine").unwrap();
        std::fs::write(d.join(".run.json.999.tmp"), "half").unwrap();
        drop(first);
        let second = ReportDir::take_over(&d, false).unwrap();
        assert_eq!(names(&d), vec![MANIFEST.to_string(), "notes.txt".into()]);
        second.save("run.json", b"{}").unwrap();
        let m = std::fs::read_to_string(d.join(MANIFEST)).unwrap();
        assert_eq!(
            m.lines()
                .filter(|l| !l.starts_with('#'))
                .collect::<Vec<_>>(),
            ["run.json"]
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_foreign_folder_is_refused_unless_forced() {
        let d = tempdir("foreign");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("thesis.tex"), "x").unwrap();
        let err = ReportDir::take_over(&d, false).unwrap_err();
        assert_eq!(crate::output::exit_code(&err), 2);
        assert!(err.to_string().contains("--force"), "{err}");
        let rd = ReportDir::take_over(&d, true).unwrap();
        rd.save("run.json", b"{}").unwrap();
        assert!(d.join("thesis.tex").exists());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_manifest_cannot_reach_outside_the_folder() {
        let d = tempdir("escape");
        let outside = tempdir("escape-outside");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("keep"), "x").unwrap();
        let evil = format!(
            "../{}/keep\n..\n/etc/passwd\n",
            outside.file_name().unwrap().to_string_lossy()
        );
        std::fs::write(d.join(MANIFEST), evil).unwrap();
        ReportDir::take_over(&d, false).unwrap();
        assert!(outside.join("keep").exists());
        std::fs::remove_dir_all(&d).unwrap();
        std::fs::remove_dir_all(&outside).unwrap();
    }
}
