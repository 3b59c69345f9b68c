//! Keeps the manual's links whole: every relative link in README.md,
//! CHANGELOG.md, SECURITY.md and `doc/**/*.md` names a file that exists and,
//! when it has a `#fragment`, a heading of that file (GitHub's anchor rule:
//! lowercase, punctuation dropped, spaces to hyphens). Pages move; a link
//! left pointing at the old place fails here, naming file and link.
//!
//! It also keeps the measured tables traceable: each sits in a region
//! `<!-- bench: COMMAND -->` ... `<!-- /bench -->` that bench/refresh-docs
//! fills from the bench's output, and every region must be closed, name an
//! executable `bench/` script and say first when it was measured.
//!
//! And it keeps the production page's recipes run as written: every code
//! block of doc/production.md follows a `<!-- recipe: NAME -->` marker, a
//! check reads that block from the page (`cli_recipes.rs`, or
//! `scripts/slurm-test` and `scripts/export-test` through their `recipe`
//! function), and doc/testing.md's table names the check for it.

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

/// A shell command's words, quotes removed (`CMDS="study c2c" bench/rss` is
/// two words).
fn shell_words(cmd: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for ch in cmd.chars() {
        match quote {
            Some(q) if ch == q => quote = None,
            Some(_) => cur.push(ch),
            None if ch == '"' || ch == '\'' => {
                quote = Some(ch);
                any = true;
            }
            None if ch.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            None => cur.push(ch),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The bench script a region's command runs: its first word that is not a
/// `NAME=value` setting, when that word is under `bench/`.
fn bench_of(command: &str) -> Option<String> {
    let first = shell_words(command).into_iter().find(|w| {
        let Some((name, _)) = w.split_once('=') else {
            return true;
        };
        name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })?;
    first.starts_with("bench/").then_some(first)
}

/// Whether `line` starts with a date, YYYY-MM-DD.
fn dated(line: &str) -> bool {
    let b = line.as_bytes();
    b.len() >= 10
        && b[..10].iter().enumerate().all(|(k, c)| {
            if k == 4 || k == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
}

/// The measured regions of `text` (a page under `root`, named `file` in the
/// findings): how many, and what is wrong with them.
fn bench_regions(root: &Path, file: &Path, text: &str) -> (usize, Vec<String>) {
    use std::os::unix::fs::PermissionsExt;
    let mut bad = Vec::new();
    let mut count = 0;
    // The open region: its first line, its command and the lines read so far.
    let mut open: Option<(usize, String, Vec<&str>)> = None;
    let mut fenced = false;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let t = line.trim();
        if t.starts_with("```") && open.is_none() {
            fenced = !fenced;
        }
        if fenced {
            continue;
        }
        if let Some(cmd) = t
            .strip_prefix("<!-- bench:")
            .and_then(|r| r.strip_suffix("-->"))
        {
            if let Some((start, _, _)) = &open {
                bad.push(format!(
                    "{}:{start}: region not closed before line {n}",
                    file.display()
                ));
            }
            open = Some((n, cmd.trim().to_string(), Vec::new()));
        } else if t == "<!-- /bench -->" {
            let Some((start, cmd, body)) = open.take() else {
                bad.push(format!(
                    "{}:{n}: a region's end without its start",
                    file.display()
                ));
                continue;
            };
            count += 1;
            let at = format!("{}:{start}", file.display());
            match bench_of(&cmd) {
                None => bad.push(format!("{at}: `{cmd}` runs no bench/ script")),
                Some(b) => {
                    let mode = std::fs::metadata(root.join(&b)).map(|m| m.permissions().mode());
                    if !matches!(mode, Ok(m) if m & 0o111 != 0) {
                        bad.push(format!("{at}: {b} is not an executable bench script"));
                    }
                }
            }
            if !body
                .iter()
                .find(|l| !l.trim().is_empty())
                .is_some_and(|l| dated(l))
            {
                bad.push(format!(
                    "{at}: the region does not start with when it was measured (YYYY-MM-DD ...); run bench/refresh-docs"
                ));
            }
        } else if let Some((_, _, body)) = &mut open {
            body.push(line);
        }
    }
    if let Some((start, _, _)) = open {
        bad.push(format!("{}:{start}: region not closed", file.display()));
    }
    (count, bad)
}

#[test]
fn every_measured_table_names_the_bench_that_made_it() {
    let root = repo_root();
    let mut count = 0;
    let mut bad = Vec::new();
    for f in manual_files(&root) {
        let text = std::fs::read_to_string(root.join(&f)).unwrap();
        let (n, b) = bench_regions(&root, &f, &text);
        count += n;
        bad.extend(b);
    }
    assert!(
        count >= 3,
        "only {count} measured regions found: the reader is broken"
    );
    assert!(bad.is_empty(), "measured regions:\n{}", bad.join("\n"));
}

/// Each kind of broken region is caught on its line; a good one, settings
/// before the bench and a marker inside a code block are not findings.
#[test]
fn broken_measured_regions_are_caught() {
    use std::os::unix::fs::PermissionsExt;
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(t.path().join("bench")).unwrap();
    for (name, mode) in [("good", 0o755), ("plain", 0o644)] {
        let p = t.path().join("bench").join(name);
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let page = "\
<!-- bench: A=1 CMDS=\"x y\" bench/good 3 -->
2026-11-28 10:00 UTC, 2 CPUs: `bench/good 3`

| a |
<!-- /bench -->
```text
<!-- bench: bench/none -->
```
<!-- bench: bench/none -->
2026-11-28
<!-- /bench -->
<!-- bench: bench/plain -->
2026-11-28
<!-- /bench -->
<!-- bench: cargo test -->
2026-11-28
<!-- /bench -->
<!-- bench: bench/good -->
| a |
<!-- /bench -->
<!-- /bench -->
<!-- bench: bench/good -->
2026-11-28
<!-- bench: bench/good -->
";
    let (n, bad) = bench_regions(t.path(), Path::new("p.md"), page);
    assert_eq!(n, 5, "{bad:?}");
    let expect = [
        "p.md:9: bench/none is not an executable",
        "p.md:12: bench/plain is not an executable",
        "p.md:15: `cargo test` runs no bench/",
        "p.md:18: the region does not start with when",
        "p.md:21: a region's end without its start",
        "p.md:22: region not closed before line 24",
        "p.md:24: region not closed",
    ];
    assert_eq!(bad.len(), expect.len(), "{bad:?}");
    for (b, e) in bad.iter().zip(expect) {
        assert!(b.starts_with(e), "{b:?} should start with {e:?}");
    }
    assert_eq!(
        shell_words("A=1 CMDS=\"x y\" bench/good ''"),
        ["A=1", "CMDS=x y", "bench/good", ""]
    );
}

/// What is wrong with the recipes of a page: a code block without a
/// `<!-- recipe: NAME -->` marker on the line before it, a recipe no reader
/// reads (`recipe("PAGE", "NAME")` in a Rust test, `recipe PAGE NAME` in a
/// script), one testing.md's table has no row for (`| `NAME` |`).
fn recipe_gaps(page: &str, text: &str, readers: &[&str], table: &str) -> Vec<String> {
    let mut bad = Vec::new();
    let mut fenced = false;
    let mut before = "";
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.starts_with("```") {
            if !fenced {
                let name = before
                    .strip_prefix("<!-- recipe: ")
                    .and_then(|r| r.strip_suffix(" -->"));
                match name {
                    None => bad.push(format!(
                        "{page}:{}: a code block without a <!-- recipe: NAME --> marker",
                        i + 1
                    )),
                    Some(n) => {
                        let rust = format!("recipe(\"{page}\", \"{n}\")");
                        let script = format!("recipe {page} {n}");
                        if !readers
                            .iter()
                            .any(|r| r.contains(&rust) || r.contains(&script))
                        {
                            bad.push(format!("{page}:{}: recipe {n} is read by no check", i + 1));
                        }
                        if !table.contains(&format!("| `{n}` |")) {
                            bad.push(format!(
                                "{page}:{}: recipe {n} has no row in doc/testing.md's recipe table",
                                i + 1
                            ));
                        }
                    }
                }
            }
            fenced = !fenced;
        }
        if !t.is_empty() {
            before = t;
        }
    }
    bad
}

fn recipe_readers(root: &Path) -> Vec<String> {
    [
        "crates/numaprobe/tests/cli_recipes.rs",
        "scripts/slurm-test",
        "scripts/export-test",
    ]
    .iter()
    .map(|f| std::fs::read_to_string(root.join(f)).unwrap())
    .collect()
}

#[test]
fn every_production_recipe_is_run_as_written_by_a_named_check() {
    let root = repo_root();
    let text = std::fs::read_to_string(root.join("doc/production.md")).unwrap();
    let table = std::fs::read_to_string(root.join("doc/testing.md")).unwrap();
    let readers = recipe_readers(&root);
    let readers: Vec<&str> = readers.iter().map(String::as_str).collect();
    let bad = recipe_gaps("production.md", &text, &readers, &table);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(text.matches("<!-- recipe: ").count() >= 12);
}

#[test]
fn recipe_gaps_are_caught() {
    let page = "<!-- recipe: read -->\n```sh\nx\n```\n\n```sh\ny\n```\n\n<!-- recipe: unread -->\n  ```sh\n  z\n  ```\n<!-- recipe: untabled -->\n```text\nw\n```\n";
    let readers = ["recipe(\"p.md\", \"read\")", "recipe p.md untabled"];
    let table = "| `read` | x |\n| `unread` | y |\n";
    let bad = recipe_gaps("p.md", page, &readers, table);
    assert_eq!(
        bad,
        [
            "p.md:6: a code block without a <!-- recipe: NAME --> marker",
            "p.md:11: recipe unread is read by no check",
            "p.md:15: recipe untabled has no row in doc/testing.md's recipe table",
        ]
    );
}
