//! The report folder of `numaprobe run`, owned by one run at a time.
//!
//! A run locks its folder for its whole life: `flock` on `.numaprobe-lock`
//! in it, which holds the pid of the run that has it. A second run into the
//! same folder exits 2 naming that pid, so two runs never mix their files.
//! The kernel drops the lock when the process ends, however it ends; the
//! lock file itself stays (removing it would let two runs lock two
//! different files).
//!
//! numaprobe keeps a manifest (`.numaprobe-manifest`) in the folder listing
//! every file it wrote there. A new run first removes the files the previous
//! run listed, and only those, so no file of an earlier run survives beside a
//! new run's (an 8-node `graph-latency.png` next to a later 1-node run, the
//! previous `run.json` after an interrupted run). Only names numaprobe itself
//! writes ([`KNOWN`]) are removed, each only when it is a regular file, and
//! only the exact temporary names of its atomic writes: a manifest written
//! by someone else cannot make numaprobe delete a user's file. A non-empty
//! folder without a manifest holds files numaprobe did not write: it is
//! refused (exit 2) unless `--force` is given, and even then nothing in it
//! is removed.
//!
//! A previous report that holds measurements is moved aside instead of
//! removed, and kept when the new run measures less
//! ([`crate::kept_report`]).
//!
//! A file is listed in the manifest before it is written, so a run stopped
//! at any point leaves a manifest that covers everything it left behind.
//! The folder is held open as a handle ([`SafeDir`]) and every file is
//! written, read and removed relative to it: never through a symlink, into
//! a FIFO or a device, and never in another folder swapped in mid-run.

use crate::kept_report::{self, Previous};
use crate::output::{file_kind, usage, Sink};
pub use crate::report_names::{is_known, LOCK, MANIFEST};
use crate::safe_dir::{is_temp_of, SafeDir};
use anyhow::Context;
use rustix::fs::OFlags;
use std::cell::RefCell;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

const HEADER: &str =
    "# numaprobe: the files the last run wrote into this folder; the next run removes them\n";

/// An open report folder. Files are named relative to it, without `/`.
#[derive(Debug)]
pub struct ReportDir {
    dir: Arc<SafeDir>,
    written: RefCell<Vec<String>>,
    /// The first failure to update the manifest (`list` cannot return it).
    manifest_error: RefCell<Option<anyhow::Error>>,
    /// The previous run's measured report, moved aside until this run
    /// shows whether it measured as much ([`ReportDir::settle`]).
    previous: RefCell<Option<Previous>>,
    /// Held, not read: the folder's lock lasts as long as this file is open.
    _lock: FolderLock,
}

/// The main job's report folder, and what the commands that read one
/// read when given none.
pub const DEFAULT_DIR: &str = "numaprobe-report";

/// The report folder a run asked for: None with `--no-report`, else `dir`
/// (default `./numaprobe-report`), taken over as described in the module doc.
pub fn open(no_report: bool, dir: Option<&Path>, force: bool) -> anyhow::Result<Option<ReportDir>> {
    if no_report {
        return Ok(None);
    }
    let dir = dir.unwrap_or(Path::new(DEFAULT_DIR));
    ReportDir::take_over(dir, force).map(Some)
}

impl ReportDir {
    /// Open the folder (made when missing; see [`SafeDir::own`] for what is
    /// refused), lock it, clear what the previous run listed, then start a
    /// new (empty) manifest.
    pub fn take_over(path: &Path, force: bool) -> anyhow::Result<ReportDir> {
        let dir = SafeDir::own(path, "--report-dir", true)?;
        // A folder a run has had is locked before anything in it is read,
        // so a second run learns who holds it, not what it is writing.
        let existing = FolderLock::take(&dir, false)?;
        let unreadable = |e| {
            anyhow::Error::new(e)
                .context(format!("cannot read the report folder {}", path.display()))
        };
        if dir.entry(MANIFEST).map_err(unreadable)?.is_none() {
            let foreign = dir.names().map_err(unreadable)?.iter().any(|n| n != LOCK);
            if foreign && !force {
                return Err(usage(format!(
                    "--report-dir {}: the folder is not empty and has no {MANIFEST}, so numaprobe did not write it; choose a new or empty folder, or add --force to write beside its files",
                    path.display()
                )));
            }
        }
        let lock = match existing {
            Some(l) => l,
            None => FolderLock::take(&dir, true)?
                .with_context(|| format!("cannot create {}", path.join(LOCK).display()))?,
        };
        let mut previous = None;
        if let Some(text) = read_manifest(&dir)? {
            let measured = kept_report::measured_in(&dir, &text);
            if measured.is_empty() {
                remove_listed(&dir, &text)?;
            } else {
                previous = Some(kept_report::set_aside(&dir, &text, measured)?);
                remove_leftovers(&dir, &text)?;
            }
        }
        let rd = ReportDir {
            dir: Arc::new(dir),
            written: RefCell::new(Vec::new()),
            manifest_error: RefCell::new(None),
            previous: RefCell::new(previous),
            _lock: lock,
        };
        rd.write_manifest()?;
        Ok(rd)
    }

    /// List report file `name` in the manifest (first, so the next run
    /// removes it). Every file of the folder is named through here.
    fn list(&self, name: &str) {
        debug_assert!(is_known(name), "{name} is missing from report_dir::KNOWN");
        if !self.written.borrow().iter().any(|n| n == name) {
            self.written.borrow_mut().push(name.to_string());
            if let Err(e) = self.write_manifest() {
                self.manifest_error.borrow_mut().get_or_insert(e);
            }
        }
    }

    /// Where report file `name` is written as it grows (partial results).
    pub fn sink(&self, name: &str) -> Sink {
        self.list(name);
        Sink::Folder {
            dir: Arc::clone(&self.dir),
            name: name.to_string(),
            path: self.dir.path().join(name),
        }
    }

    /// Write report file `name` whole (atomically).
    pub fn save(&self, name: &str, bytes: &[u8]) -> anyhow::Result<()> {
        self.list(name);
        if let Some(e) = self.manifest_error.borrow_mut().take() {
            return Err(e);
        }
        self.dir.write(name, bytes)
    }

    /// When the run has written everything: the previous measured report
    /// is removed if this run measured at least as much, else kept, and
    /// the line that says where (see [`crate::kept_report`]).
    pub fn settle(&self) -> Option<String> {
        let previous = self.previous.borrow_mut().take()?;
        previous.settle(&self.dir, &self.written.borrow())
    }

    /// The folder's handle, to read its documents back.
    pub fn handle(&self) -> &SafeDir {
        &self.dir
    }

    pub fn display(&self) -> std::path::Display<'_> {
        self.dir.path().display()
    }

    fn write_manifest(&self) -> anyhow::Result<()> {
        let mut text = String::from(HEADER);
        for n in self.written.borrow().iter() {
            text.push_str(n);
            text.push('\n');
        }
        self.dir.write(MANIFEST, text.as_bytes())
    }
}

/// A run that ends before [`ReportDir::settle`] (an error on the way) has
/// not shown that it measured as much: the kept report stays, and is named.
impl Drop for ReportDir {
    fn drop(&mut self) {
        if let Some(p) = self.previous.get_mut().take() {
            eprintln!(
                "numaprobe: the run did not finish; the report it was to replace is kept in {}/",
                p.path().display()
            );
        }
    }
}

/// The manifest of `dir`, if it has one. Anything but a regular file under
/// that name is refused (a FIFO there would hang the read), and so is a
/// huge one.
pub fn read_manifest(dir: &SafeDir) -> anyhow::Result<Option<String>> {
    dir.read_text(MANIFEST)
}

/// An exclusive `flock` on a folder's [`LOCK`] file, held until dropped.
#[derive(Debug)]
pub struct FolderLock {
    _file: std::fs::File,
}

impl FolderLock {
    /// Lock `dir`, or fail (exit 2) naming the pid of the process that holds
    /// it. Without `create`, a folder that has no lock file is not locked
    /// (None): it was never a run's folder. The lock file must be a regular
    /// file of numaprobe's user with no other name (a hard link to another
    /// file is refused), and is never truncated: the pid is written over
    /// its first bytes.
    pub fn take(dir: &SafeDir, create: bool) -> anyhow::Result<Option<FolderLock>> {
        let path = dir.path().join(LOCK);
        let not_ours = |what: String| {
            usage(format!(
                "{}: {what}, not numaprobe's lock file; remove it or choose another folder",
                path.display()
            ))
        };
        // O_NOFOLLOW (added by `open`): a symlink planted under the name is
        // not followed; O_NONBLOCK: a FIFO there does not hang the open.
        let mut flags = OFlags::RDWR | OFlags::NONBLOCK;
        if create {
            flags |= OFlags::CREATE;
        }
        let file = match dir.open(LOCK, flags, 0o644) {
            Ok(f) => f,
            Err(e) if !create && e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                if let Some(m) = dir.entry(LOCK).ok().flatten().filter(|m| !m.is_file()) {
                    return Err(not_ours(file_kind(&m.file_type()).to_string()));
                }
                return Err(
                    anyhow::Error::new(e).context(format!("cannot open {}", path.display()))
                );
            }
        };
        let meta = file
            .metadata()
            .with_context(|| format!("cannot read {}", path.display()))?;
        use std::os::unix::fs::MetadataExt;
        if !meta.is_file() {
            return Err(not_ours(file_kind(&meta.file_type()).to_string()));
        }
        if meta.nlink() != 1 {
            return Err(not_ours(format!(
                "a file with {} names (a hard link)",
                meta.nlink()
            )));
        }
        // SAFETY: geteuid cannot fail and touches no memory.
        let me = unsafe { libc::geteuid() };
        if meta.uid() != me {
            return Err(not_ours(format!("owned by uid {}", meta.uid())));
        }
        // A regular file: reads and writes need not be non-blocking.
        let _ = rustix::fs::fcntl_setfl(&file, OFlags::RDWR);
        if let Err(e) =
            rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive)
        {
            if e != rustix::io::Errno::WOULDBLOCK {
                return Err(anyhow::Error::new(std::io::Error::from(e))
                    .context(format!("cannot lock {}", path.display())));
            }
            let mut text = String::new();
            let _ = (&file).take(64).read_to_string(&mut text);
            let holder = match text.trim().parse::<u32>() {
                Ok(pid) => format!("numaprobe pid {pid}"),
                Err(_) => "another numaprobe".to_string(),
            };
            return Err(usage(format!(
                "{}: in use by {holder} (it holds {LOCK}); wait for it to finish or choose another folder",
                dir.path().display()
            )));
        }
        // The holder's pid, for the error of the next run that tries:
        // written over the first bytes, padded so a longer earlier pid
        // leaves no digit behind.
        let stamp = format!("{:<PID_WIDTH$}\n", std::process::id());
        file.write_all_at(stamp.as_bytes(), 0)
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(Some(FolderLock { _file: file }))
    }
}

/// The width the pid is padded to in the lock file (a pid has at most 7
/// digits on Linux, whose `pid_max` is at most 2^22).
const PID_WIDTH: usize = 10;

/// Remove the files a manifest lists (and the temporary files an atomic
/// write of them may have left when the process was killed). Only lines that
/// are exactly a name numaprobe writes count, and only regular files are
/// removed, relative to the folder's handle: a manifest never makes
/// numaprobe remove a user's file or anything outside its folder.
fn remove_listed(dir: &SafeDir, manifest: &str) -> anyhow::Result<()> {
    for n in manifest.lines().filter(|n| is_known(n)) {
        remove(dir, n)?;
    }
    remove_leftovers(dir, manifest)
}

/// Remove the temporary files an atomic write of a listed file (or of the
/// manifest) left when its process was killed: exactly their names.
fn remove_leftovers(dir: &SafeDir, manifest: &str) -> anyhow::Result<()> {
    let names: Vec<&str> = manifest.lines().filter(|n| is_known(n)).collect();
    for f in dir.names().unwrap_or_default() {
        let Some(f) = f.to_str() else { continue };
        let leftover = names
            .iter()
            .chain(std::iter::once(&MANIFEST))
            .any(|n| is_temp_of(f, n));
        if leftover {
            remove(dir, f)?;
        }
    }
    Ok(())
}

fn remove(dir: &SafeDir, name: &str) -> anyhow::Result<()> {
    dir.remove_file(name).with_context(|| {
        format!(
            "cannot remove {} of the previous run",
            dir.path().join(name).display()
        )
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A fresh folder's path for a test of the report folder (`kept_report`'s
    /// too), removed first if a run before left it.
    pub(crate) fn tempdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("numaprobe-rd-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    /// The names in `d`, sorted.
    pub(crate) fn names(d: &Path) -> Vec<String> {
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
        // (No measured document: a report with one is kept, see kept_report.)
        let _ = first.sink("pin.json");
        std::fs::write(d.join("pin.json"), "{}").unwrap();
        // A file the user put there after the run is not numaprobe's.
        std::fs::write(d.join("notes.txt"), "mine").unwrap();
        std::fs::write(d.join(".run.json.x9Q2aZ.tmp"), "half").unwrap();
        drop(first);
        let second = ReportDir::take_over(&d, false).unwrap();
        assert_eq!(
            names(&d),
            vec![LOCK.to_string(), MANIFEST.to_string(), "notes.txt".into()]
        );
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

    #[test]
    fn only_known_names_and_exact_temporary_names_are_removed() {
        let d = tempdir("known");
        let rd = ReportDir::take_over(&d, false).unwrap();
        rd.save("run.json", b"{}").unwrap();
        drop(rd);
        let user = [
            "thesis.tex",
            " run.json",
            "run.json ",
            ".run.json.mine.tmp",
            ".run.json.abcdefg.tmp",
            ".run.json.abc-ef.tmp",
        ];
        for f in user {
            std::fs::write(d.join(f), "mine").unwrap();
        }
        std::fs::write(d.join(".run.json.aB3dE9.tmp"), "half").unwrap();
        std::fs::write(d.join("..numaprobe-manifest.Zz0Zz0.tmp"), "half").unwrap();
        let mut m = std::fs::read_to_string(d.join(MANIFEST)).unwrap();
        for f in user {
            m.push_str(f);
            m.push('\n');
        }
        std::fs::write(d.join(MANIFEST), m).unwrap();
        ReportDir::take_over(&d, false).unwrap();
        let mut want: Vec<String> = user.iter().map(|s| s.to_string()).collect();
        want.extend([LOCK.to_string(), MANIFEST.to_string()]);
        want.sort();
        assert_eq!(names(&d), want);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_listed_name_that_is_a_symlink_is_not_removed() {
        let d = tempdir("listed-link");
        let rd = ReportDir::take_over(&d, false).unwrap();
        rd.save("run.json", b"{}").unwrap();
        drop(rd);
        std::fs::remove_file(d.join("run.json")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", d.join("run.json")).unwrap();
        ReportDir::take_over(&d, false).unwrap();
        assert!(std::fs::symlink_metadata(d.join("run.json"))
            .unwrap()
            .file_type()
            .is_symlink());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_locked_folder_is_refused_naming_the_holder() {
        let d = tempdir("lock");
        let first = ReportDir::take_over(&d, false).unwrap();
        let err = ReportDir::take_over(&d, false).unwrap_err();
        assert_eq!(crate::output::exit_code(&err), 2);
        let pid = std::process::id();
        assert!(err.to_string().contains(&format!("pid {pid}")), "{err}");
        drop(first);
        ReportDir::take_over(&d, false).unwrap();
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_planted_lock_file_that_is_not_a_file_is_refused() {
        let d = tempdir("lock-link");
        std::fs::create_dir_all(&d).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", d.join(LOCK)).unwrap();
        let err = ReportDir::take_over(&d, false).unwrap_err();
        assert!(err.to_string().contains("a symbolic link"), "{err}");
        std::fs::remove_file(d.join(LOCK)).unwrap();
        std::fs::create_dir(d.join(LOCK)).unwrap();
        let err = ReportDir::take_over(&d, false).unwrap_err();
        assert_eq!(crate::output::exit_code(&err), 2, "{err}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
