//! The one file-cycle finder of the workspace (DESIGN, "no two files import
//! each other"): reads a crate's sources, resolves every `crate::`,
//! `super::` and `self::` path (groups, nested groups and `self` inside a
//! group included) to the file it lands in, and reports the files that
//! import each other, directly or through others. Comments and unit-test
//! modules are left out. Both crates' layering tests include this file
//! (`#[path]`), so the library and the binary are held to one rule.

#![allow(dead_code)] // each layering test uses its own subset

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A file's module path, one segment per element (`[]` is the crate root).
pub type Module = Vec<String>;

/// Which files import which (a file never lists itself).
pub type Graph = BTreeMap<Module, BTreeSet<Module>>;

/// Every `.rs` file below `dir`, sorted.
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// `a::b` as a module path (`""` is the crate root).
pub fn module(s: &str) -> Module {
    s.split("::")
        .filter(|x| !x.is_empty())
        .map(String::from)
        .collect()
}

/// The module path of `file` below `src`: `a/b.rs` and `a/b/mod.rs` are
/// `a::b`; `lib.rs` and `main.rs` are the crate root.
pub fn module_of(src: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Module = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main")
        || parts.last().is_some_and(|p| p == "mod")
    {
        parts.pop();
    }
    parts
}

/// A unit-test module kept in a file of its own: `tests.rs`, or `x_tests.rs`
/// beside the `x.rs` that declares it (`#[path]`).
pub fn is_test_file(f: &Path) -> bool {
    f.file_stem()
        .and_then(|s| s.to_str())
        .is_some_and(|s| s == "tests" || s.ends_with("_tests"))
}

/// The file without its unit-test module (`#[cfg(test)] mod tests`).
pub fn without_tests(text: &str) -> &str {
    [
        "#[cfg(test)]\nmod tests",
        "#[cfg(test)]\npub(crate) mod tests",
    ]
    .iter()
    .filter_map(|m| text.find(m))
    .min()
    .map_or(text, |i| &text[..i])
}

/// The code of a file: line comments (doc comments too) left out.
pub fn without_comments(text: &str) -> String {
    text.lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .collect::<Vec<_>>()
        .join("\n")
}

fn ident(s: &str) -> &str {
    let n = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..n]
}

/// The items of a `{...}` group (the text after its `{`), split on the
/// commas at its own depth.
fn group_items(group: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, ch) in group.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' if depth == 0 => {
                out.push(&group[start..i]);
                return out;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&group[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&group[start..]);
    out
}

/// The files a path names: from module `at`, follow the segments of `rest`
/// while they name a file of its own; the last file reached is the one
/// used (an item of it, or itself). A group resolves each of its items
/// from where it stands.
pub fn resolve(modules: &BTreeSet<Module>, at: &[String], rest: &str) -> Vec<Module> {
    let mut at = at.to_vec();
    let mut rest = rest;
    loop {
        let t = rest.trim_start();
        if let Some(group) = t.strip_prefix('{') {
            let mut out: Vec<Module> = group_items(group)
                .into_iter()
                .filter(|item| !item.trim().is_empty())
                .flat_map(|item| resolve(modules, &at, item))
                .collect();
            if out.is_empty() {
                out.push(file_of(modules, &at));
            }
            return out;
        }
        let name = ident(t);
        match name {
            "super" => {
                at.pop();
            }
            "self" => {}
            _ => {
                let mut next = at.clone();
                next.push(name.to_string());
                // A module without a file of its own (`mod x { .. }`) is
                // walked through on the way to a file below it.
                if name.is_empty() || !modules.iter().any(|m| m.starts_with(&next)) {
                    return vec![file_of(modules, &at)];
                }
                at = next;
            }
        }
        match t[name.len()..].trim_start().strip_prefix("::") {
            Some(r) => rest = r,
            None => return vec![file_of(modules, &at)],
        }
    }
}

/// The file that holds module `at`: the longest prefix that is a file.
fn file_of(modules: &BTreeSet<Module>, at: &[String]) -> Module {
    (0..=at.len())
        .rev()
        .map(|n| at[..n].to_vec())
        .find(|m| modules.contains(m))
        .unwrap_or_default()
}

/// The files that `code` of module `me` names through `crate::`,
/// `super::` and `self::` paths, in `use` lines and inline alike.
pub fn file_imports(me: &[String], code: &str, modules: &BTreeSet<Module>) -> BTreeSet<Module> {
    let mut out = BTreeSet::new();
    let bytes = code.as_bytes();
    for (key, base) in [
        ("crate::", Vec::new()),
        ("super::", me[..me.len().saturating_sub(1)].to_vec()),
        ("self::", me.to_vec()),
    ] {
        for (i, _) in code.match_indices(key) {
            // Not the tail of a longer path or name (`my_crate::`,
            // `a::self::`).
            let before = i.checked_sub(1).map(|j| bytes[j] as char);
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            out.extend(resolve(modules, &base, &code[i + key.len()..]));
        }
    }
    out.remove(me);
    out
}

/// The child files a file declares (`mod x;`, `pub mod x;`...).
pub fn declared_children(me: &[String], code: &str) -> BTreeSet<Module> {
    let mut out = BTreeSet::new();
    for line in code.lines() {
        let mut t = line.trim_start();
        if let Some(r) = t.strip_prefix("pub") {
            t = r.trim_start();
            if let Some(r) = t.strip_prefix('(') {
                t = r
                    .split_once(')')
                    .map_or("", |(_, after)| after)
                    .trim_start();
            }
        }
        if let Some(m) = t.strip_prefix("mod ") {
            let m = m.trim_start();
            let name = ident(m);
            if !name.is_empty() && m[name.len()..].trim_start().starts_with(';') {
                let mut child = me.to_vec();
                child.push(name.to_string());
                out.insert(child);
            }
        }
    }
    out
}

/// The import graph of the files under `src`, unit tests (their modules
/// and files, see [`is_test_file`]) left out. With `declarations`, a `mod x;` counts
/// as using `x`.
pub fn graph(src: &Path, declarations: bool) -> Graph {
    let files: Vec<PathBuf> = rust_files(src)
        .into_iter()
        .filter(|f| !is_test_file(f))
        .collect();
    let modules: BTreeSet<Module> = files.iter().map(|f| module_of(src, f)).collect();
    let mut g = Graph::new();
    for f in &files {
        let me = module_of(src, f);
        let text = std::fs::read_to_string(f).unwrap();
        let code = without_comments(without_tests(&text));
        let mut uses = file_imports(&me, &code, &modules);
        if declarations {
            uses.extend(declared_children(&me, &code));
        }
        uses.remove(&me);
        g.insert(me, uses);
    }
    g
}

/// The part of `g` whose files lie under `prefix`, edges leaving it dropped.
pub fn below(g: &Graph, prefix: &[String]) -> Graph {
    g.iter()
        .filter(|(m, _)| m.starts_with(prefix))
        .map(|(m, uses)| {
            let inside = uses.iter().filter(|u| u.starts_with(prefix)).cloned();
            (m.clone(), inside.collect())
        })
        .collect()
}

/// `crate::a::b` for a module path (`crate` for the root).
pub fn name(m: &[String]) -> String {
    std::iter::once("crate")
        .chain(m.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join("::")
}

/// Every cycle's files, one line per group of files that reach each other
/// (a strongly connected component), as one cycle through them:
/// `crate::a -> crate::b -> crate::a`.
pub fn cycles(g: &Graph) -> Vec<String> {
    let reach = |from: &Module| -> BTreeSet<Module> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(n) = todo.pop() {
            for m in g.get(&n).into_iter().flatten() {
                if seen.insert(m.clone()) {
                    todo.push(m.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&Module, BTreeSet<Module>> = g.keys().map(|m| (m, reach(m))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for a in g.keys() {
        if done.contains(a) || !reached[a].contains(a) {
            continue;
        }
        let part: BTreeSet<&Module> = reached[a]
            .iter()
            .filter(|b| reached.get(b).is_some_and(|r| r.contains(a)))
            .collect();
        done.extend(part.iter().map(|m| (*m).clone()));
        out.push(path_back(g, a, &part));
    }
    out
}

/// A shortest way from `a` back to itself through `part`, written out.
fn path_back(g: &Graph, a: &Module, part: &BTreeSet<&Module>) -> String {
    let mut prev: BTreeMap<&Module, &Module> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([a]);
    while let Some(n) = queue.pop_front() {
        for m in g.get(n).into_iter().flatten() {
            if !part.contains(m) || prev.contains_key(m) {
                continue;
            }
            prev.insert(m, n);
            if m == a {
                queue.clear();
                break;
            }
            queue.push_back(m);
        }
    }
    let mut way = vec![a];
    let mut at = prev[a];
    while at != a {
        way.push(at);
        at = prev[at];
    }
    way.push(a);
    way.reverse();
    way.iter().map(|m| name(m)).collect::<Vec<_>>().join(" -> ")
}

/// Writes `files` (path, text) into a fresh folder and returns its cycles,
/// so a test can plant a source tree and see what the finder makes of it.
pub fn planted(tag: &str, files: &[(&str, &str)], declarations: bool) -> Vec<String> {
    let dir = std::env::temp_dir().join(format!("numaprobe-cycles-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let found = cycles(&graph(&dir, declarations));
    std::fs::remove_dir_all(&dir).unwrap();
    found
}
