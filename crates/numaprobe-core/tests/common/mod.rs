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
    let n = COUNTER.fetch_add(1, Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!(
        "numaprobe-test-{}-{n}-{}",
        std::process::id(),
        tag.replace(|c: char| !c.is_ascii_alphanumeric(), "_")
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temporary folder");
    dir
}

/// Unpack `name.tar.bz2` with the system's `tar` (the archives are bzip2).
pub fn unpack(name: &str) -> Unpacked {
    let tmp = TempDir::new(name);
    let archive = fixtures_dir().join(format!("{name}.tar.bz2"));
    let status = Command::new("tar")
        .arg("xjf")
        .arg(&archive)
        .arg("-C")
        .arg(tmp.path())
        .status()
        .expect("run tar (needed to unpack the fixtures)");
    assert!(status.success(), "tar xjf {} failed", archive.display());
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
