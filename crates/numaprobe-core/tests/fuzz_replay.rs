//! Replays every fuzz corpus file and every crash the fuzzers found
//! (`fuzz/corpus/<target>/*`, `fuzz/regressions/<target>/*`) through the same
//! entry functions the fuzz targets call, on the stable toolchain and without
//! a fuzzer: a reader that panics again on an input it once crashed on, or
//! whose error stops being one short line, fails here (doc/fuzzing.md).
//! Built with overflow checks on, as the fuzz targets are.

#[path = "../../../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod entries;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The files of `fuzz/<kind>/<target>/`, sorted; none when it is absent.
fn inputs(kind: &str, target: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fuzz_dir().join(kind).join(target))
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.is_file());
    v.sort();
    v
}

/// Every input of `kind` through its target's entry; the names of those
/// that panicked, with the panic's message.
fn replay(kind: &str) -> (usize, Vec<String>) {
    let mut count = 0;
    let mut failed = Vec::new();
    for (name, entry) in entries::TARGETS {
        for file in inputs(kind, name) {
            let data = std::fs::read(&file).expect("read a corpus file");
            count += 1;
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| entry(&data))) {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                failed.push(format!("{}: {msg}", file.display()));
            }
        }
    }
    (count, failed)
}

#[test]
fn every_target_has_a_seed_corpus() {
    for (name, _) in entries::TARGETS {
        assert!(
            !inputs("corpus", name).is_empty(),
            "fuzz/corpus/{name} is empty: run fuzz/seed-corpus"
        );
    }
}

/// The replay is built with overflow checks, as the fuzz targets are
/// (`fuzz/Cargo.toml`): an arithmetic overflow a fuzzer found on a figure
/// read from outside panics here too. `cargo test` has them unless a
/// profile turns them off; this says so if one ever does.
#[test]
fn the_replay_has_overflow_checks_on() {
    let max = std::hint::black_box(u32::MAX);
    let sum = catch_unwind(|| max + std::hint::black_box(1));
    assert!(
        sum.is_err(),
        "u32::MAX + 1 did not panic: build the tests with overflow checks on"
    );
}

#[test]
fn corpus_and_regression_folders_name_known_targets() {
    // A folder named after no target would never be replayed.
    for kind in ["corpus", "regressions"] {
        let Ok(rd) = std::fs::read_dir(fuzz_dir().join(kind)) else {
            continue;
        };
        for e in rd.filter_map(|e| e.ok()).filter(|e| e.path().is_dir()) {
            let n = e.file_name().to_string_lossy().into_owned();
            assert!(
                entries::TARGETS.iter().any(|(t, _)| *t == n),
                "fuzz/{kind}/{n} is not a fuzz target's name"
            );
        }
    }
}

#[test]
fn the_corpus_replays_without_a_panic() {
    let (count, failed) = replay("corpus");
    assert!(count > 0);
    assert!(
        failed.is_empty(),
        "{} of {count}:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

#[test]
fn every_crash_found_stays_fixed() {
    let (count, failed) = replay("regressions");
    assert!(
        failed.is_empty(),
        "{} of {count}:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

#[test]
fn a_fuzzed_tree_never_leaves_its_folder() {
    let root = std::env::temp_dir().join(format!("numaprobe-fuzz-escape-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let tree = "=== ../outside\nx\n=== /abs\nx\n=== a/../b\nx\n=>= l1 /etc/passwd\n=>= d/l2 ../../x\n=>= d/l3 ../ok\n=== ok\nfine\n";
    let made = entries::write_tree(&root, tree.as_bytes());
    assert_eq!(made, 2, "only `ok` and the link d/l3 -> ../ok are made");
    assert_eq!(
        std::fs::read_to_string(root.join("d/l3")).unwrap(),
        "fine\n"
    );
    assert!(!root.join("l1").exists() && !root.join("d/l2").exists());
    std::fs::remove_dir_all(&root).unwrap();
}
