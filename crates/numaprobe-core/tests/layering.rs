//! Keeps the library's layering true (DESIGN, "Architecture"): data flows
//! topology -> plan -> kernels -> samples -> stats -> model -> analysis ->
//! renderers, so the result model (`src/model`) names none of `analysis`,
//! `experiments`, `job` or `render`, and neither `analysis` nor
//! `experiments` names `render`; the renderers' own code (their tests may
//! build inputs with the analysis) reads the model, never the measuring or
//! analysing modules. The check reads the source files: every
//! `crate::` path outside comments, in `use` lines and inline alike, with
//! `crate::{a, b::c}` groups looked into.

mod common;

use common::rust_files;
use std::path::{Path, PathBuf};

/// The top-level modules a file's code names through `crate::`, comments
/// left out.
fn crate_modules(source: &str) -> Vec<String> {
    let code: String = source
        .lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    let mut rest = code.as_str();
    while let Some(i) = rest.find("crate::") {
        // Not the tail of a longer name (`numaprobe_core::crate::` cannot
        // happen, but `my_crate::` can).
        let before = rest[..i].chars().last();
        rest = &rest[i + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let trimmed = rest.trim_start();
        if let Some(group) = trimmed.strip_prefix('{') {
            // Top-level names of the group: split on commas at depth 0.
            let mut depth = 0;
            let mut item = String::new();
            for ch in group.chars() {
                match ch {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.push(first_ident(&item));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                item.push(ch);
            }
            out.push(first_ident(&item));
        } else {
            out.push(first_ident(trimmed));
        }
    }
    out.retain(|m| !m.is_empty());
    out
}

fn first_ident(s: &str) -> String {
    s.trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The file without its unit-test module (`#[cfg(test)] mod tests`).
fn without_tests(text: &str) -> &str {
    [
        "#[cfg(test)]\nmod tests",
        "#[cfg(test)]\npub(crate) mod tests",
    ]
    .iter()
    .filter_map(|m| text.find(m))
    .min()
    .map_or(text, |i| &text[..i])
}

/// Every `file: crate::module` under `dir` that names a forbidden module
/// (in tests too unless `skip_tests`).
fn violations(dir: &str, forbidden: &[&str], skip_tests: bool) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(dir);
    let files = rust_files(&root);
    assert!(
        !files.is_empty(),
        "no source files under {}",
        root.display()
    );
    let mut out = Vec::new();
    for f in files {
        // A unit-test module kept in its own file (`#[cfg(test)] mod tests;`
        // pointing at tests.rs) may build its inputs from anywhere.
        if skip_tests && f.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let code = if skip_tests {
            without_tests(&text)
        } else {
            &text
        };
        for m in crate_modules(code) {
            if forbidden.contains(&m.as_str()) {
                out.push(format!("{}: crate::{m}", f.display()));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

#[test]
fn the_model_names_nothing_above_it() {
    let v = violations(
        "model",
        &["analysis", "experiments", "render", "job"],
        false,
    );
    assert!(
        v.is_empty(),
        "the model must not depend on:\n{}",
        v.join("\n")
    );
}

#[test]
fn analysis_and_experiments_never_name_the_renderers() {
    for dir in ["analysis", "experiments"] {
        let v = violations(dir, &["render"], false);
        assert!(v.is_empty(), "{dir} must not depend on:\n{}", v.join("\n"));
    }
}

#[test]
fn renderers_read_only_the_model() {
    let measuring = ["analysis", "experiments", "job", "kernels", "placement"];
    let v = violations("render", &measuring, true);
    assert!(v.is_empty(), "render must not depend on:\n{}", v.join("\n"));
}

#[test]
fn the_checker_sees_use_lines_groups_and_inline_paths_but_not_comments() {
    let src = "use crate::render::table::Table;\n\
               use crate::{units, analysis::binding::{cpulist, Binding}};\n\
               use my_crate::job;\n\
               // crate::experiments in a comment\n\
               /// and crate::job in a doc comment\n\
               fn f() { crate::model::Format::Json; crate::stats::median(&[]); }\n";
    assert_eq!(
        crate_modules(src),
        ["render", "units", "analysis", "model", "stats"]
    );
}

#[test]
fn only_the_unit_test_module_is_left_out() {
    let src = "use crate::model::Format;\n#[cfg(test)]\nmod tests {\n    use crate::analysis::parse;\n}\n";
    assert_eq!(crate_modules(without_tests(src)), ["model"]);
    assert_eq!(crate_modules(src), ["model", "analysis"]);
}

/// The file-level module path of `file` below `src` (`a/b.rs` and
/// `a/b/mod.rs` are `a::b`; `lib.rs` is the crate root, "").
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts.join("::")
}

/// The files (as module paths, from `modules`) that `code` in module `me`
/// names through `crate::` and `super::` paths: each path resolved to the
/// longest prefix that is a file of its own.
fn file_imports(me: &str, code: &str, modules: &[String]) -> Vec<String> {
    let code: String = code
        .lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < code.len() {
        let rest = &code[i..];
        let start = if rest.starts_with("crate::") || rest.starts_with("super::") {
            let before = i.checked_sub(1).map(|j| bytes[j] as char);
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
        } else {
            false
        };
        if !start {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        }
        let path: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        i += path.len();
        let mut segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
        let mut base: Vec<&str> = if me.is_empty() {
            Vec::new()
        } else {
            me.split("::").collect()
        };
        if segs.first() == Some(&"crate") {
            base.clear();
            segs.remove(0);
        } else {
            while segs.first() == Some(&"super") {
                segs.remove(0);
                base.pop();
            }
        }
        base.extend(segs);
        for n in (1..=base.len()).rev() {
            let m = base[..n].join("::");
            if modules.contains(&m) {
                if m != me {
                    out.push(m);
                }
                break;
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Pairs of files under `src` that import each other, unit tests left out.
fn file_cycles(src: &Path) -> Vec<String> {
    let files: Vec<PathBuf> = rust_files(src)
        .into_iter()
        .filter(|f| f.file_name().is_none_or(|n| n != "tests.rs"))
        .collect();
    let modules: Vec<String> = files.iter().map(|f| module_of(src, f)).collect();
    let imports: Vec<Vec<String>> = files
        .iter()
        .zip(&modules)
        .map(|(f, m)| {
            let text = std::fs::read_to_string(f).unwrap();
            file_imports(m, without_tests(&text), &modules)
        })
        .collect();
    let mut out = Vec::new();
    for (a, ia) in modules.iter().zip(&imports) {
        for b in ia {
            let ib = &imports[modules.iter().position(|m| m == b).unwrap()];
            if a < b && ib.contains(a) {
                out.push(format!("{a} <-> {b}"));
            }
        }
    }
    out
}

#[test]
fn no_two_files_import_each_other() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let v = file_cycles(&src);
    assert!(
        v.is_empty(),
        "files that import each other (move what both need into a third file):\n{}",
        v.join("\n")
    );
}

#[test]
fn the_cycle_finder_resolves_crate_and_super_paths_to_files() {
    let modules: Vec<String> = [
        "",
        "job",
        "job::plan",
        "job::keeper",
        "units",
        "analysis::work",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let code = "use super::plan::{fit, X};\nuse crate::units::format_size;\n\
                // super::keeper in a comment\nfn f() { crate::analysis::work::compute(m); }\n\
                fn g() { my_super::keeper::x(); super::Phase::Latency; }\n";
    assert_eq!(
        file_imports("job::keeper", code, &modules),
        ["analysis::work", "job", "job::plan", "units"]
    );
    // From a directory's mod.rs, super is the directory's parent.
    assert_eq!(
        file_imports("job", "use super::units::x;", &modules),
        ["units"]
    );
}

#[test]
fn a_planted_cycle_is_found() {
    let dir = std::env::temp_dir().join(format!("numaprobe-cycles-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("a")).unwrap();
    std::fs::write(dir.join("lib.rs"), "mod a;\n").unwrap();
    std::fs::write(dir.join("a/mod.rs"), "mod x;\nmod y;\n").unwrap();
    std::fs::write(dir.join("a/x.rs"), "use super::y::Y;\n").unwrap();
    std::fs::write(
        dir.join("a/y.rs"),
        "pub struct Y;\n#[cfg(test)]\nmod tests { use crate::a::x; }\n",
    )
    .unwrap();
    assert!(
        file_cycles(&dir).is_empty(),
        "a test module's import is no cycle"
    );
    std::fs::write(
        dir.join("a/y.rs"),
        "pub struct Y;\nfn f() { crate::a::x::g(); }\n",
    )
    .unwrap();
    assert_eq!(file_cycles(&dir), ["a::x <-> a::y"]);
    std::fs::remove_dir_all(&dir).unwrap();
}
