//! Keeps the project's words its own (DESIGN, "Sources, and how the
//! project cites them"): no tracked file (help texts, man pages, outputs,
//! comments, scripts, rig configs, docs, tests, file names) cites a source
//! by its file number instead of its name and section, refers to the
//! tracker's issue numbers, or speaks of the way the work was organised.
//! A source is cited by name ("AMD 40555 §3.1.1", "McCalpin's
//! remote-latency measurements"); history lives in git and CHANGELOG.md.
//!
//! The text is read as a stream of lowercase words (runs of letters and
//! digits) so that a phrase broken across two lines of a comment is caught
//! as well as one on a single line.
//!
//! That the user's pages also speak the user's words (no rig names, no
//! internals, acronyms expanded) is checked in `user_pages`.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "words/user_pages.rs"]
mod user_pages;

/// One word of a file: its lowercase text and the line it starts on.
struct Word {
    text: String,
    line: usize,
    /// Right after a `/`: part of a path or an address (another project's
    /// `.../issues/129` is a fine citation).
    in_path: bool,
}

fn words(text: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut start = 1;
    let mut line = 1;
    let mut prev = ' ';
    let mut in_path = false;
    for ch in text.chars() {
        if ch.is_alphanumeric() {
            if cur.is_empty() {
                start = line;
                in_path = prev == '/';
            }
            cur.extend(ch.to_lowercase());
        } else if !cur.is_empty() {
            out.push(Word {
                text: std::mem::take(&mut cur),
                line: start,
                in_path,
            });
        }
        if ch == '\n' {
            line += 1;
        }
        prev = ch;
    }
    if !cur.is_empty() {
        out.push(Word {
            text: cur,
            line: start,
            in_path,
        });
    }
    out
}

/// A source file's number as the source folder names it: 000 to 004.
fn source_number(w: &str) -> bool {
    w.len() == 3 && w.starts_with("00") && matches!(w.as_bytes()[2], b'0'..=b'4')
}

fn is_number(w: &str) -> bool {
    !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit())
}

/// The banned phrases in `text`: (line, what was found), in file order.
fn violations(text: &str) -> Vec<(usize, &'static str)> {
    let ws = words(text);
    let mut out = Vec::new();
    for (i, w) in ws.iter().enumerate() {
        let next = |k: usize| ws.get(i + k).map(|n| n.text.as_str()).unwrap_or("");
        let t = w.text.as_str();
        // "seed 004", "seeds 000", "seed document 004", "seed004".
        if (t == "seed" || t == "seeds") && (source_number(next(1)) || source_number(next(2))) {
            out.push((w.line, "a source cited by its file number"));
        }
        if t.len() == 7 && t.starts_with("seed") && source_number(&t[4..]) {
            out.push((w.line, "a source cited by its file number"));
        }
        // "issue 16", "issue #4", "issues 10 and 11".
        if (t == "issue" || t == "issues") && !w.in_path && is_number(next(1)) {
            out.push((w.line, "a tracker issue number"));
        }
        if t == "session" || t == "sessions" {
            out.push((w.line, "\"session\""));
        }
        if t == "merged" && next(1) == "tree" {
            out.push((w.line, "\"merged tree\""));
        }
        // A source is named, never "the ... note".
        if t == "ccnuma" && next(1) == "note" {
            out.push((w.line, "an unnamed source (\"the ccNUMA note\")"));
        }
    }
    out
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every tracked file, relative to the repository's root; without git (a
/// source tarball) every file under the root but build output, VCS data and
/// the vendored crates (other projects' words).
fn tracked_files(root: &Path) -> Vec<PathBuf> {
    let git = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root)
        .output();
    if let Ok(o) = git {
        if o.status.success() && !o.stdout.is_empty() {
            return o
                .stdout
                .split(|&b| b == 0)
                .filter(|p| !p.is_empty())
                .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
                .collect();
        }
    }
    walk_files(root)
}

/// Every file under `root` but build output, VCS data and vendored crates.
fn walk_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&rel)) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let r = rel.join(&name);
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                let n = name.to_string_lossy();
                let skip = n.starts_with("target")
                    || n.starts_with("mutants.out")
                    || matches!(n.as_ref(), ".git" | "vendor" | ".cargo");
                if !skip {
                    stack.push(r);
                }
            } else if ft.is_file() {
                out.push(r);
            }
        }
    }
    out
}

#[test]
fn no_tracked_file_uses_an_internal_word() {
    let root = repo_root();
    let me = Path::new("crates/numaprobe/tests/words.rs");
    let files = tracked_files(&root);
    assert!(
        files.len() > 50,
        "found only {} files under {}",
        files.len(),
        root.display()
    );
    let mut bad = Vec::new();
    let mut read = 0;
    for rel in &files {
        if rel == me {
            continue;
        }
        for (_, what) in violations(&rel.to_string_lossy()) {
            bad.push(format!("{} (its name): {what}", rel.display()));
        }
        let Ok(bytes) = std::fs::read(root.join(rel)) else {
            continue; // deleted in the working tree but not yet from the index
        };
        // Binary files (a compressed dump, an SMBIOS table) hold no words.
        if bytes.contains(&0) {
            continue;
        }
        let Ok(text) = std::str::from_utf8(&bytes) else {
            continue;
        };
        read += 1;
        for (line, what) in violations(text) {
            bad.push(format!("{}:{line}: {what}", rel.display()));
        }
    }
    assert!(read > 50, "read only {read} text files");
    assert!(
        bad.is_empty(),
        "{} internal words (cite a source by name and section, say what is, not how it came to be):\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// The checker catches each kind of planted line, on the line it is on, and
/// leaves ordinary uses of the same words alone. The banned phrases are
/// built at run time so this file reads clean to its own check.
#[test]
fn planted_lines_are_caught() {
    let seed = "se".to_string() + "ed";
    let sess = "sess".to_string() + "ion";
    let planted = [
        format!("the stride of {seed} 004"),
        format!("as {} 003 shows", seed.to_uppercase()),
        format!("the table of {seed} document 004"),
        format!("matrices/ranger-{seed}004.json"),
        format!("{seed}s 000 and 001"),
        "see issue 16's budget".to_string(),
        "see Issue #4".to_string(),
        format!("other {sess}s' builds"),
        format!("one helper {sess}"),
        "on the merged\n    tree".to_string(),
        "the AMD ccNUMA note".to_string(),
    ];
    for p in &planted {
        let text = format!("fine line\n{p}\nfine again\n");
        let v = violations(&text);
        assert!(!v.is_empty(), "not caught: {p:?}");
        assert_eq!(v[0].0, 2, "wrong line for {p:?}: {v:?}");
    }
    let fine = [
        "proptest's seed 42 reproduces the case",
        "the fuzz seed corpus, seed-16amd64-8n2c",
        "a seed of 0005",
        "AMD 40555 §3.1.1 and McCalpin's remote-latency measurements",
        "the merged result tree",
        "https://github.com/cncf/cnf-testbed/issues/129 (a comment there)",
        "a helper function",
    ];
    for f in &fine {
        let v = violations(f);
        assert!(v.is_empty(), "false alarm on {f:?}: {v:?}");
    }
}

/// Without git (an unpacked source tarball) the walk reads the project's
/// files and leaves the vendored crates and build output alone.
#[test]
fn the_walk_skips_vendored_crates_and_build_output() {
    let t = tempfile::tempdir().unwrap();
    for f in [
        "README.md",
        "doc/x.md",
        "vendor/c/src/lib.rs",
        "target/debug/a",
        ".git/HEAD",
    ] {
        let p = t.path().join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, "x").unwrap();
    }
    let mut got: Vec<String> = walk_files(t.path())
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    got.sort();
    assert_eq!(got, ["README.md", "doc/x.md"]);
}
