//! Keeps the binary thin, as DESIGN's "Architecture" says: a `cmd/` file
//! parses arguments, calls the library and hands the result to a renderer.
//! So no file of the binary declares a serde contract (documents are the
//! library's model), and no file of the binary imports a file that imports
//! it back, directly or through others ("no two files import each other"),
//! found by the workspace's one cycle finder (`numaprobe-core/tests/cycles`).
//! The check reads the sources, comments and unit-test modules left out.

#[path = "../../numaprobe-core/tests/cycles/mod.rs"]
mod cycles;

use cycles::{module, rust_files, without_comments, without_tests};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The code of a file: comments and the unit-test module left out.
fn code(text: &str) -> String {
    without_comments(without_tests(text))
}

#[test]
fn no_two_files_import_each_other() {
    // Here a `mod x;` counts as using `x`: a command's directory is held
    // to "the parent names its children, never the other way".
    let graph = cycles::graph(&src(), true);
    let cmd = cycles::below(&graph, &module("cmd"));
    assert!(cmd.len() > 20, "{} cmd modules", cmd.len());
    // The finder sees what it must: the dispatcher names every command,
    // a command the shared measuring code.
    assert!(graph[&module("cmd")].contains(&module("cmd::fleet")));
    assert!(graph[&module("cmd::latency")].contains(&module("cmd::measure")));
    assert!(graph[&module("cmd::fleet")].contains(&module("cmd::fleet::slurm")));
    let v = cycles::cycles(&graph);
    assert!(
        v.is_empty(),
        "files that import each other (move what both need into a third file):\n{}",
        v.join("\n")
    );
}

#[test]
fn the_binary_declares_no_serde_contract() {
    let mut found = Vec::new();
    for f in rust_files(&src()) {
        let here = code(&std::fs::read_to_string(&f).unwrap());
        for (i, l) in here.lines().enumerate() {
            if l.contains("derive(") && (l.contains("Serialize") || l.contains("Deserialize")) {
                found.push(format!("{}:{}", f.display(), i + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "documents belong in the library's model: {found:?}"
    );
}
