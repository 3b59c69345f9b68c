//! Keeps the manual's links whole: every relative link in README.md,
//! CHANGELOG.md, SECURITY.md and `doc/**/*.md` names a file that exists and,
//! when it has a `#fragment`, a heading of that file (GitHub's anchor rule:
//! lowercase, punctuation dropped, spaces to hyphens). Pages move; a link
//! left pointing at the old place fails here, naming file and link.

use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The anchors of a Markdown text's headings (code blocks left out).
fn anchors(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let title = line[hashes..].trim().to_lowercase();
        let anchor: String = title
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        out.push(anchor);
    }
    out
}

/// The targets of a Markdown text's inline links, `[text](target)`, with
/// their line numbers; addresses (`http...`, `mailto:`) left out.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let mut rest = line;
        while let Some(p) = rest.find("](") {
            rest = &rest[p + 2..];
            let Some(end) = rest.find(')') else { break };
            let target = &rest[..end];
            if !target.is_empty()
                && !target.contains(char::is_whitespace)
                && !target.starts_with("http")
                && !target.starts_with("mailto:")
            {
                out.push((i + 1, target.to_string()));
            }
            rest = &rest[end..];
        }
    }
    out
}

/// What is wrong with the links of `file` (a path under `root`).
fn broken(root: &Path, file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(root.join(file)).unwrap();
    let dir = file.parent().unwrap_or(Path::new(""));
    let mut bad = Vec::new();
    for (line, target) in links(&text) {
        let (path, fragment) = match target.split_once('#') {
            Some((p, f)) => (p, Some(f)),
            None => (target.as_str(), None),
        };
        let linked = if path.is_empty() {
            root.join(file)
        } else {
            root.join(dir).join(path)
        };
        if !linked.exists() {
            bad.push(format!("{}:{line}: {target}: no such file", file.display()));
            continue;
        }
        if let Some(f) = fragment {
            if linked.extension().is_some_and(|e| e == "md") {
                let heads = anchors(&std::fs::read_to_string(&linked).unwrap());
                if !heads.iter().any(|h| h == f) {
                    bad.push(format!(
                        "{}:{line}: {target}: no such heading",
                        file.display()
                    ));
                }
            }
        }
    }
    bad
}

fn manual_files(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = ["README.md", "CHANGELOG.md", "SECURITY.md"]
        .iter()
        .map(PathBuf::from)
        .collect();
    let mut stack = vec![PathBuf::from("doc")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(root.join(&d)).unwrap().flatten() {
            let rel = d.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                stack.push(rel);
            } else if rel.extension().is_some_and(|x| x == "md") {
                out.push(rel);
            }
        }
    }
    out
}

#[test]
fn every_link_of_the_manual_resolves() {
    let root = repo_root();
    let files = manual_files(&root);
    assert!(files.len() > 10, "found only {files:?}");
    let count: usize = files
        .iter()
        .map(|f| links(&std::fs::read_to_string(root.join(f)).unwrap()).len())
        .sum();
    assert!(
        count > 50,
        "only {count} links found: the link reader is broken"
    );
    let bad: Vec<String> = files.iter().flat_map(|f| broken(&root, f)).collect();
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
}

/// A missing page and a missing heading are both caught; a good link and
/// an address are not.
#[test]
fn broken_links_are_caught() {
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(t.path().join("doc/commands")).unwrap();
    std::fs::write(
        t.path().join("doc/commands/run.md"),
        "# `numaprobe run`: the main job\n\n```sh\n# not a heading\n```\n## Progress\n",
    )
    .unwrap();
    std::fs::write(
        t.path().join("doc/README.md"),
        "[run](commands/run.md) [p](commands/run.md#progress) \
         [top](commands/run.md#numaprobe-run-the-main-job) [web](https://example.org/x)\n\
         [gone](commands/gone.md)\n[head](commands/run.md#not-a-heading)\n",
    )
    .unwrap();
    let bad = broken(t.path(), Path::new("doc/README.md"));
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert!(
        bad[0].starts_with("doc/README.md:2: commands/gone.md"),
        "{bad:?}"
    );
    assert!(
        bad[1].starts_with("doc/README.md:3: commands/run.md#not-a-heading"),
        "{bad:?}"
    );
}
