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

use std::path::{Path, PathBuf};
use std::process::Command;

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

/// Words a user page (README.md and doc/, but doc/testing.md,
/// doc/architecture.md and doc/arm64.md, the developers' pages on the code
/// and its test rigs) must not hold: the test
/// rigs' names and the code's internals. A user reads "an 8-node virtual
/// machine", not `octet`; "the run", not "the keeper".
const NOT_FOR_USERS: [&str; 6] = [
    "octet",
    "dragonfly",
    "tcg",
    "keeper",
    "numaprobe_core",
    "matrixresult",
];

/// Acronyms a user page expands at its first use in prose, with the
/// expansion that must stand before it or right after it.
const ACRONYMS: [(&str, &str); 6] = [
    ("SLIT", "system locality information table"),
    ("HMAT", "heterogeneous memory attribute table"),
    ("NUMA", "non-uniform memory access"),
    ("SNC", "sub-numa clustering"),
    ("MLC", "memory latency checker"),
    ("c2c", "cache-to-cache"),
];

fn user_pages(root: &Path) -> Vec<PathBuf> {
    let mut pages = vec![PathBuf::from("README.md")];
    for dir in ["doc", "doc/commands"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            let developers = ["testing.md", "architecture.md", "arm64.md"];
            if name.ends_with(".md") && !developers.contains(&name.as_str()) {
                pages.push(Path::new(dir).join(name));
            }
        }
    }
    pages.sort();
    pages
}

/// The page's prose: fenced blocks, indented blocks, headings, table rows,
/// inline code, italic titles, link targets and HTML comments blanked (a
/// sample output or a cited title keeps its words as they were).
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.push('\n');
            continue;
        }
        let t = line.trim_start();
        if fenced || line.starts_with("    ") || t.starts_with('#') || t.starts_with('|') {
            out.push('\n');
            continue;
        }
        let mut skip: Option<char> = None;
        let mut prev = ' ';
        for ch in line.chars() {
            match skip {
                Some(end) if ch == end => skip = None,
                Some(_) => {}
                None if ch == '`' => skip = Some('`'),
                None if ch == '*' && prev != '*' => skip = Some('*'),
                None if ch == '(' && prev == ']' => skip = Some(')'),
                None => out.push(ch),
            }
            if skip.is_some() {
                out.push(' ');
            }
            prev = ch;
        }
        out.push('\n');
    }
    let mut cleaned = String::new();
    let mut rest = out.as_str();
    while let Some(i) = rest.find("<!--") {
        cleaned.push_str(&rest[..i]);
        rest = rest[i..].find("-->").map_or("", |j| &rest[i + j + 3..]);
    }
    cleaned.push_str(rest);
    cleaned
}

/// What a user page says that is not the user's: (line, finding).
fn user_page_findings(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for w in words(text) {
        if !w.in_path && NOT_FOR_USERS.contains(&w.text.as_str()) {
            out.push((w.line, format!("\"{}\" is the project's own word", w.text)));
        }
    }
    // Identifiers are not words of letters alone (`numaprobe_core::job`).
    for (n, line) in text.lines().enumerate() {
        let l = line.to_lowercase();
        for id in NOT_FOR_USERS
            .iter()
            .filter(|id| id.contains('_') || l.contains("::"))
        {
            if l.contains(id) {
                out.push((n + 1, format!("\"{id}\" is the code's own name")));
            }
        }
    }
    let p = prose(text);
    let lower = p.to_lowercase();
    for (acronym, expansion) in ACRONYMS {
        let first = p.match_indices(acronym).find(|(i, _)| {
            let before = p[..*i].chars().next_back().unwrap_or(' ');
            let after = p[i + acronym.len()..].chars().next().unwrap_or(' ');
            let joined = before.is_alphanumeric() || "/.-_".contains(before);
            !(joined || after.is_alphanumeric() || after == '-' || after == '_')
        });
        let Some((i, _)) = first else { continue };
        let window = &lower[i..lower.len().min(i + 120)];
        if !lower[..i].contains(expansion) && !window.contains(expansion) {
            let line = p[..i].matches('\n').count() + 1;
            out.push((
                line,
                format!("{acronym} used before it is expanded ({expansion})"),
            ));
        }
    }
    out
}

#[test]
fn user_pages_speak_the_users_words() {
    let root = repo_root();
    let mut found = Vec::new();
    for page in user_pages(&root) {
        let text = std::fs::read_to_string(root.join(&page)).unwrap();
        for (line, what) in user_page_findings(&text) {
            found.push(format!("{}:{line}: {what}", page.display()));
        }
    }
    assert!(found.is_empty(), "user pages:\n{}", found.join("\n"));
}

#[test]
fn a_user_page_with_a_rig_an_internal_or_a_bare_acronym_is_caught() {
    let caught = |s: &str| !user_page_findings(s).is_empty();
    assert!(caught("measured on the octet machine\n"));
    assert!(caught("the Keeper stops it\n"));
    assert!(caught("see `numaprobe_core::job`\n"));
    assert!(caught("the SLIT says 10\n"));
    assert!(caught("a c2c summary\n"));
    assert!(!caught(
        "the System Locality Information Table (SLIT) says 10; the SLIT\n"
    ));
    assert!(!caught(
        "the SLIT (System Locality Information Table) says 10\n"
    ));
    // Code, sample output, headings and cited titles are left as they are.
    assert!(!caught(
        "```text\n1 NUMA node\n```\n`numaprobe c2c`\n## MLC\n*the NUMA blog*\n"
    ));
    // A word inside a path is another thing.
    assert!(!caught("scripts/vm/configs/octet.toml\n"));
}
