//! The user's pages (README.md and doc/ but the developers' pages) speak
//! the user's words: no test rig's name for a machine, no internal
//! identifier or source file, every acronym expanded at its first use in
//! prose.

use super::repo_root;
use std::path::{Path, PathBuf};

/// The developers' pages: how numaprobe is made and tested. They name the
/// code's modules and the test rigs' machines. Every other page of the
/// manual, and README.md, is a user's page.
const DEVELOPER_PAGES: [&str; 4] = [
    "doc/architecture.md",
    "doc/testing.md",
    "doc/arm64.md",
    "doc/fuzzing.md",
];

/// The test rigs' nicknames for their machines (the `name` of every
/// `scripts/vm/configs/*.toml`; a test below keeps the list whole). A user
/// page says what the machine is: "a virtual machine of 8 one-CPU nodes",
/// "a two-socket Opteron", never the rig's name for it.
const RIG_NAMES: [&str; 7] = [
    "quartet",
    "quartet-dual",
    "two-node",
    "fsb",
    "octet",
    "dragonfly",
    "unit-tests",
];

/// The code's own names, which a user never meets: "the run", not "the
/// keeper"; "a software-emulated virtual machine", not QEMU's "TCG". Any
/// Rust path (`numaprobe_core::job`, `stats::flags`) and any source file
/// (`held.rs`) are caught as well: that detail belongs in doc/architecture.md
/// and doc/testing.md.
const INTERNALS: [&str; 5] = [
    "keeper",
    "numaprobe_core",
    "matrixresult",
    "footprintlimit",
    "tcg",
];

/// Acronyms a user page expands at its first use in prose, with the
/// expansion that must stand before it or right after it (compared in
/// lowercase, a hyphen read as a space).
const ACRONYMS: [(&str, &str); 37] = [
    ("SLIT", "system locality information table"),
    ("HMAT", "heterogeneous memory attribute table"),
    ("NUMA", "non-uniform memory access"),
    ("SNC", "sub-numa clustering"),
    ("MLC", "memory latency checker"),
    ("c2c", "cache-to-cache"),
    ("THP", "transparent huge page"),
    ("LLC", "last-level cache"),
    ("CV", "coefficient of variation"),
    ("NPS", "nodes per socket"),
    ("HBM", "high-bandwidth memory"),
    ("SMT", "simultaneous multithreading"),
    ("HITM", "hit in a modified"),
    ("TLB", "translation lookaside buffer"),
    ("MAD", "median absolute deviation"),
    ("SMBIOS", "system management bios"),
    ("DIMM", "dual in-line memory module"),
    ("OOM", "out of memory"),
    ("LSE", "large system extensions"),
    ("NHC", "node health check"),
    ("RSS", "resident set size"),
    ("PPTT", "processor properties topology table"),
    ("UPI", "ultra path interconnect"),
    ("CXL", "compute express link"),
    ("TSC", "time stamp counter"),
    ("TTAS", "test-and-test-and-set"),
    ("DSU", "dynamiq shared unit"),
    ("PU", "processing unit"),
    ("ACPI", "advanced configuration and power interface"),
    ("CAS", "compare-and-swap"),
    ("MCS", "mellor-crummey and scott"),
    ("QOS", "quality of service"),
    ("SD", "standard deviation"),
    ("VM", "virtual machine"),
    ("KVM", "kernel-based virtual machine"),
    ("ETA", "estimated time of arrival"),
    ("SPR", "sapphire rapids"),
];

fn user_pages(root: &Path) -> Vec<PathBuf> {
    let mut pages = vec![PathBuf::from("README.md")];
    for dir in ["doc", "doc/commands"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            let page = Path::new(dir).join(&name);
            let developers = DEVELOPER_PAGES.iter().any(|d| Path::new(d) == page);
            if name.ends_with(".md") && !developers {
                pages.push(page);
            }
        }
    }
    pages.sort();
    pages
}

/// `line` with the spans a reader does not take as the page's own words
/// blanked, each character by a space so that columns stay: inline code
/// (when `code`), italic titles and link targets.
fn blank_spans(line: &str, code: bool) -> String {
    let mut out = String::new();
    let mut skip: Option<char> = None;
    let mut prev = ' ';
    for ch in line.chars() {
        let blanked = match skip {
            Some(end) => {
                if ch == end {
                    skip = None;
                }
                true
            }
            None if ch == '`' && code => {
                skip = Some('`');
                true
            }
            None if ch == '*' && prev != '*' => {
                skip = Some('*');
                true
            }
            None if ch == '(' && prev == ']' => {
                skip = Some(')');
                true
            }
            None => false,
        };
        out.push(if blanked { ' ' } else { ch });
        prev = ch;
    }
    out
}

/// `text` with its HTML comments (`<!-- ... -->`) cut out, lines kept.
fn without_comments(text: &str) -> String {
    let mut cleaned = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("<!--") {
        cleaned.push_str(&rest[..i]);
        let Some(j) = rest[i..].find("-->") else {
            rest = "";
            break;
        };
        cleaned.extend(rest[i..i + j].chars().filter(|&c| c == '\n'));
        rest = &rest[i + j + 3..];
    }
    cleaned.push_str(rest);
    cleaned
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
        if !(fenced || line.starts_with("    ") || t.starts_with('#') || t.starts_with('|')) {
            out.push_str(&blank_spans(line, true));
        }
        out.push('\n');
    }
    without_comments(&out)
}

/// Lowercase, every run of spaces, line breaks and hyphens read as one
/// space: "Non-Uniform\nMemory" and "non uniform memory" are one phrase.
fn normal(s: &str) -> String {
    let mut out = String::new();
    for ch in s.chars().flat_map(char::to_lowercase) {
        let ch = if ch == '-' || ch.is_whitespace() {
            ' '
        } else {
            ch
        };
        if !(ch == ' ' && out.ends_with(' ')) {
            out.push(ch);
        }
    }
    out
}

/// The page's names: runs of letters, digits, `-`, `_` and `::`, in
/// lowercase, with the line each is on. Italic titles are left out (AMD
/// 40555's figure is titled *Quartet Topology*).
fn names(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = blank_spans(line, false);
        let mut cur = String::new();
        let chars: Vec<char> = line.chars().collect();
        for (i, &ch) in chars.iter().enumerate() {
            let colons = ch == ':'
                && (chars.get(i + 1) == Some(&':') || (i > 0 && chars[i - 1] == ':'))
                && !cur.is_empty();
            if ch.is_alphanumeric() || ch == '-' || ch == '_' || colons {
                cur.extend(ch.to_lowercase());
            } else if !cur.is_empty() {
                out.push((n + 1, std::mem::take(&mut cur)));
            }
        }
        if !cur.is_empty() {
            out.push((n + 1, cur));
        }
    }
    out
}

/// Where `acronym` first stands alone in `p` (a plural `s` allowed), as a
/// byte offset.
fn first_use(p: &str, acronym: &str) -> Option<usize> {
    p.match_indices(acronym).map(|(i, _)| i).find(|&i| {
        let before = p[..i].chars().next_back().unwrap_or(' ');
        let mut after = p[i + acronym.len()..].chars();
        let mut next = after.next().unwrap_or(' ');
        if next == 's' {
            next = after.next().unwrap_or(' ');
        }
        let joined = before.is_alphanumeric() || "/.-_".contains(before);
        !(joined || next.is_alphanumeric() || next == '-' || next == '_')
    })
}

/// Projects whose own name ends in `.rs`: a citation, not a source file.
const PROJECTS_NAMED_RS: [&str; 1] = ["criterion"];

/// The Rust source files `line` names (`held.rs`, `crates/x/tests/y.rs`),
/// in lowercase. A project named so (Criterion.rs) is not one, nor a
/// panic's location as the program prints it (`src/fault.rs:108`): that is
/// what a user copies into a bug report.
fn rust_files(line: &str) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    let part = |c: char| c.is_alphanumeric() || "_/.-".contains(c);
    let mut out = Vec::new();
    for i in 0..chars.len() {
        if chars[i..].iter().take(3).collect::<String>() != ".rs" {
            continue;
        }
        let next = chars.get(i + 3).copied().unwrap_or(' ');
        if next.is_alphanumeric() || next == '_' {
            continue;
        }
        let located = next == ':' && chars.get(i + 4).is_some_and(|c| c.is_ascii_digit());
        let start = (0..i).rev().take_while(|&j| part(chars[j])).last();
        let Some(start) = start else { continue };
        let stem: String = chars[start..i].iter().collect::<String>().to_lowercase();
        let project = PROJECTS_NAMED_RS.contains(&stem.as_str());
        if !(located || project) {
            out.push(format!("{stem}.rs"));
        }
    }
    out
}

/// The source folders `line` names (`crates/numaprobe-core/src/analysis/`):
/// a path through a crate's `src/` that is not a panic's location as the
/// program prints it (`src/fault.rs:108`). Where the code lies belongs in
/// doc/architecture.md.
fn source_folders(line: &str) -> Vec<String> {
    line.split(|c: char| c.is_whitespace() || "`()[],;\"'".contains(c))
        .filter(|w| w.contains("src/") && !w.ends_with(".rs") && !w.contains(".rs:"))
        .map(str::to_string)
        .collect()
}

/// What a user page says that is not the user's: (line, finding).
fn user_page_findings(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for file in rust_files(line) {
            out.push((n + 1, format!("\"{file}\" is one of the code's files")));
        }
        for folder in source_folders(line) {
            out.push((n + 1, format!("\"{folder}\" is one of the code's folders")));
        }
    }
    for (line, name) in names(text) {
        // `numaprobe_core::job` is a path of two names; `two-node` is one.
        let parts = || name.split(['-', ':']);
        let rig = RIG_NAMES
            .iter()
            .find(|r| name == **r || (!r.contains('-') && parts().any(|p| p == **r)));
        if let Some(rig) = rig {
            out.push((
                line,
                format!("\"{rig}\" is a test rig's name for a machine"),
            ));
        }
        let internal = INTERNALS.iter().find(|i| parts().any(|p| p == **i));
        if let Some(i) = internal {
            out.push((line, format!("\"{i}\" is the code's own name")));
        } else if name.contains("::") && !name.ends_with("::") {
            out.push((line, format!("\"{name}\" is the code's own path")));
        }
    }
    let p = prose(text);
    for (acronym, expansion) in ACRONYMS {
        let Some(i) = first_use(&p, acronym) else {
            continue;
        };
        let expansion = normal(expansion);
        let after: String = p[i..].chars().take(120).collect();
        if !normal(&p[..i]).contains(&expansion) && !normal(&after).contains(&expansion) {
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
    let pages = user_pages(&root);
    assert!(pages.len() > 20, "found only {} user pages", pages.len());
    let mut found = Vec::new();
    for page in pages {
        let text = std::fs::read_to_string(root.join(&page)).unwrap();
        for (line, what) in user_page_findings(&text) {
            found.push(format!("{}:{line}: {what}", page.display()));
        }
    }
    assert!(found.is_empty(), "user pages:\n{}", found.join("\n"));
}

/// Every machine of the VM rig is in the list of names a user page must not
/// use, and every developer page named exists (a renamed page would
/// otherwise become a user page unseen, or a stale name exempt nothing).
#[test]
fn the_rig_list_and_the_developer_pages_are_whole() {
    let root = repo_root();
    let configs = root.join("scripts/vm/configs");
    let mut seen = 0;
    for e in std::fs::read_dir(&configs).unwrap().flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap();
        let name = text
            .lines()
            .find_map(|l| l.strip_prefix("name = \""))
            .and_then(|l| l.strip_suffix('"'))
            .unwrap_or_else(|| panic!("{}: no name = \"...\" line", e.path().display()));
        assert!(
            RIG_NAMES.contains(&name),
            "{}: rig machine {name:?} is missing from RIG_NAMES",
            e.path().display()
        );
        seen += 1;
    }
    assert!(seen >= 3, "read only {seen} rig configurations");
    for page in DEVELOPER_PAGES {
        assert!(root.join(page).is_file(), "{page} is not a page");
    }
}

#[test]
fn a_user_page_with_a_rig_an_internal_or_a_bare_acronym_is_caught() {
    let caught = |s: &str| !user_page_findings(s).is_empty();
    assert!(caught("measured on the octet machine\n"));
    assert!(caught("`scripts/vm-test two-node`, check `diff-check`\n"));
    assert!(caught("the Quartet-dual machine\n"));
    assert!(caught("scripts/vm/configs/octet.toml\n"));
    assert!(caught("the Keeper stops it\n"));
    assert!(caught("see `numaprobe_core::job`\n"));
    assert!(caught("flagged (`stats::two_modes`)\n"));
    assert!(caught("`Topology::memory_side_cache(node)` answers\n"));
    assert!(caught("the SLIT says 10\n"));
    assert!(caught("a c2c summary\n"));
    assert!(caught("two DIMMs per channel\n"));
    assert!(caught("a CV of 3 %\n"));
    assert!(caught(
        "Tests: `crates/numaprobe/tests/cli_inputs.rs` (every reader)\n"
    ));
    assert!(caught(
        "numaprobe asks the kernel instead (`held.rs`): around\n"
    ));
    assert!(caught("see kernels/mix.rs.\n"));
    assert!(caught("the heuristics are listed in smbios/slots.rs)\n"));
    assert!(caught("`numaprobe_core::job::conclusions`\n"));
    assert!(caught("`MatrixResult::push` adds a cell\n"));
    assert!(caught(
        "How it works (`crates/numaprobe-core/src/analysis/`):\n"
    ));
    assert!(caught("see src/job for the plan\n"));
    assert!(caught("a 2-vCPU KVM guest\n"));
    assert!(caught("on this VM the figures spread\n"));
    assert!(caught("the ETA counts each step\n"));
    assert!(!caught(
        "the System Locality Information Table (SLIT) says 10; the SLIT\n"
    ));
    assert!(!caught(
        "the SLIT (System Locality Information Table) says 10\n"
    ));
    assert!(!caught(
        "transparent huge\npages (THP) and a coefficient of variation (CV) of 3 %\n"
    ));
    // Code, sample output, headings and cited titles are left as they are.
    assert!(!caught(
        "```text\n1 NUMA node\n```\n`numaprobe c2c`\n## MLC\n*the NUMA blog*\n"
    ));
    // Ordinary words that share letters with a rig's name.
    assert!(!caught("a machine of two nodes, a 2-node machine\n"));
    assert!(!caught("the AMD 40555 figure *Quartet Topology*\n"));
    assert!(!caught(
        "an 8-node virtual machine; URLs such as http://x:80\n"
    ));
    // A project named so, a panic's location as printed, other extensions.
    assert!(!caught(
        "in the manner of Criterion.rs's reports; criterion.rs keeps\n"
    ));
    assert!(!caught(
        "```text\ninjected panic at crates/numaprobe-core/src/fault.rs:108; the\n```\n"
    ));
    assert!(!caught("`run.json`, `a.rst`, `x.rsa`, the .rs extension\n"));
    assert!(!caught(
        "a virtual machine (VM); the VM's cache; an estimated time of arrival (ETA)\n"
    ));
}
