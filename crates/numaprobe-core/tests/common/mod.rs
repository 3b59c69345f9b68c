//! Helpers shared by the integration tests: where the real machines' sysfs
//! dumps live and how to unpack one into a private temporary folder.
//!
//! The binary's tests include this same file (`#[path]`), so both crates
//! unpack fixtures one way.

#![allow(dead_code)] // each test binary uses its own subset

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `tests/fixtures/sysfs` at the workspace root.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/sysfs")
}

/// Names of every dump (`X` for `X.tar.bz2`), sorted.
pub fn fixture_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(fixtures_dir())
        .expect("tests/fixtures/sysfs is readable")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".tar.bz2"))
                .map(str::to_string)
        })
        .collect();
    names.sort();
    names
}

/// An unpacked dump; the temporary folder goes away with it.
pub struct Unpacked {
    pub tmp: TempDir,
    /// The archive's top folder: the fake file system root.
    pub root: PathBuf,
}

/// A temporary folder removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        TempDir(temp_dir(tag))
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A fresh, empty temporary folder unique to this process and call.
pub fn temp_dir(tag: &str) -> PathBuf {
    try_temp_dir_in(&std::env::temp_dir(), tag).expect("create temporary folder")
}

/// The same, under `base`; `None` when it cannot be made there.
fn try_temp_dir_in(base: &Path, tag: &str) -> Option<PathBuf> {
    let n = COUNTER.fetch_add(1, Ordering::SeqCst);
    let dir = base.join(format!(
        "numaprobe-test-{}-{n}-{}",
        std::process::id(),
        tag.replace(|c: char| !c.is_ascii_alphanumeric(), "_")
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).ok()?;
    Some(dir)
}

/// A fresh folder in RAM to unpack a dump into, when the machine has one.
///
/// A dump is hundreds to thousands of small files, and the tests unpack every
/// dump several times over. On a virtual disk (the CI's 2-core machine, ext4)
/// creating and removing them is system time, not reading: the 20 archives
/// took 32 s to unpack and 48 s to remove there, against 4 and 1 s in
/// `/dev/shm`.
fn ram_dir(tag: &str) -> Option<TempDir> {
    try_temp_dir_in(Path::new("/dev/shm"), tag).map(TempDir)
}

fn untar(archive: &Path, into: &Path) -> bool {
    Command::new("tar")
        .arg("xjf")
        .arg(archive)
        .arg("-C")
        .arg(into)
        .status()
        .expect("run tar (needed to unpack the fixtures)")
        .success()
}

/// Unpack `name.tar.bz2` with the system's `tar` (the archives are bzip2),
/// in RAM where it fits, else in the temporary folder (a small `/dev/shm`,
/// as containers have, may be too full for the larger dumps).
pub fn unpack(name: &str) -> Unpacked {
    let archive = fixtures_dir().join(format!("{name}.tar.bz2"));
    let tmp = match ram_dir(name) {
        Some(t) if untar(&archive, t.path()) => t,
        _ => {
            let t = TempDir::new(name);
            assert!(
                untar(&archive, t.path()),
                "tar xjf {} failed",
                archive.display()
            );
            t
        }
    };
    let tops: Vec<PathBuf> = std::fs::read_dir(tmp.path())
        .expect("read unpacked folder")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(
        tops.len(),
        1,
        "{name}: expected one top folder in the archive"
    );
    let root = tops[0].clone();
    Unpacked { tmp, root }
}
