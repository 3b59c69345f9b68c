//! Keeps the binary thin, as DESIGN's "Architecture" says: a `cmd/` file
//! parses arguments, calls the library and hands the result to a renderer.
//! So no file of the binary declares a serde contract (documents are the
//! library's model), and no file of `src/cmd/` imports a file that imports
//! it back, directly or through others ("no two files import each other").
//! The check reads the sources, comments and unit-test modules left out.

use std::collections::{BTreeMap, BTreeSet};
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use common::rust_files;
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The code of a file: comments and the unit-test module left out.
fn code(text: &str) -> String {
    let end = [
        "#[cfg(test)]\nmod tests",
        "#[cfg(test)]\npub(crate) mod tests",
    ]
    .iter()
    .filter_map(|m| text.find(m))
    .min()
    .unwrap_or(text.len());
    text[..end]
        .lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A file's module path below `cmd`: `fleet/mod.rs` is `fleet`,
/// `fleet/node.rs` is `fleet::node`, `mod.rs` is the empty path.
fn module_of(cmd: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(cmd).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|l| l == "mod") {
        parts.pop();
    }
    parts
}

fn ident(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The module files a path names: from `base`, follow the segments while
/// they name a module file; the last module reached is the one used
/// (an item of it, or itself).
fn resolve(modules: &BTreeSet<Vec<String>>, base: &[String], rest: &str) -> Vec<Vec<String>> {
    let mut at = base.to_vec();
    let mut rest = rest;
    loop {
        let rest_t = rest.trim_start();
        if let Some(group) = rest_t.strip_prefix('{') {
            // `super::{a, b::c}`: each item from here.
            let mut out = Vec::new();
            let mut depth = 0;
            let mut item = String::new();
            for ch in group.chars() {
                match ch {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.extend(resolve(modules, &at, &item));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                item.push(ch);
            }
            out.extend(resolve(modules, &at, &item));
            if out.is_empty() {
                out.push(at);
            }
            return out;
        }
        let name = ident(rest_t);
        if name == "super" {
            at.pop();
        } else {
            let mut next = at.clone();
            next.push(name.clone());
            if name.is_empty() || !modules.contains(&next) {
                return vec![at];
            }
            at = next;
        }
        match rest_t[name.len()..].strip_prefix("::") {
            Some(r) => rest = r,
            None => return vec![at],
        }
    }
}

/// Every `cmd` module and the modules it names (`mod x;`, `super::`,
/// `self::`, `crate::cmd::`).
fn cmd_graph() -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let cmd = src().join("cmd");
    let files = rust_files(&cmd);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(&cmd, f)).collect();
    let mut graph = BTreeMap::new();
    for f in &files {
        let me = module_of(&cmd, f);
        let here = code(&std::fs::read_to_string(f).unwrap());
        let mut uses = BTreeSet::new();
        for (key, base) in [
            ("super::", {
                let mut b = me.clone();
                b.pop();
                b
            }),
            ("self::", me.clone()),
            ("crate::cmd::", Vec::new()),
        ] {
            let mut rest = here.as_str();
            while let Some(i) = rest.find(key) {
                let before = rest[..i].chars().last();
                rest = &rest[i + key.len()..];
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                    continue;
                }
                uses.extend(resolve(&modules, &base, rest));
            }
        }
        for line in here.lines() {
            let t = line.trim_start();
            let t = t
                .strip_prefix("pub ")
                .or_else(|| t.strip_prefix("pub(crate) "))
                .unwrap_or(t);
            if let Some(m) = t.strip_prefix("mod ") {
                let name = ident(m);
                if m[name.len()..].trim_start().starts_with(';') {
                    let mut child = me.clone();
                    child.push(name);
                    uses.insert(child);
                }
            }
        }
        uses.remove(&me);
        graph.insert(me, uses);
    }
    graph
}

/// One cycle of the graph, as module paths, if there is one.
fn a_cycle(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Option<Vec<String>> {
    fn visit(
        n: &Vec<String>,
        graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        state: &mut BTreeMap<Vec<String>, u8>,
        stack: &mut Vec<Vec<String>>,
    ) -> Option<Vec<String>> {
        state.insert(n.clone(), 1);
        stack.push(n.clone());
        for m in graph.get(n).into_iter().flatten() {
            match state.get(m) {
                Some(1) => {
                    let at = stack.iter().position(|x| x == m).unwrap();
                    let mut c: Vec<String> = stack[at..].iter().map(|p| name(p)).collect();
                    c.push(name(m));
                    return Some(c);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(m, graph, state, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        state.insert(n.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in graph.keys() {
        if !state.contains_key(n) {
            if let Some(c) = visit(n, graph, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

fn name(p: &[String]) -> String {
    if p.is_empty() {
        "cmd".into()
    } else {
        format!("cmd::{}", p.join("::"))
    }
}

#[test]
fn no_two_files_of_cmd_import_each_other() {
    let graph = cmd_graph();
    assert!(graph.len() > 20, "{} cmd modules", graph.len());
    // The checker sees what it must: the dispatcher names every command,
    // a command the shared measuring code.
    assert!(graph[&vec![]].contains(&vec!["fleet".to_string()]));
    assert!(graph[&vec!["latency".to_string()]].contains(&vec!["measure".to_string()]));
    assert!(
        graph[&vec!["fleet".to_string()]].contains(&vec!["fleet".to_string(), "slurm".to_string()])
    );
    if let Some(c) = a_cycle(&graph) {
        panic!("a file cycle in cmd/: {}", c.join(" -> "));
    }
}

#[test]
fn the_cycle_finder_finds_a_cycle_through_a_parent() {
    let m = |s: &str| -> Vec<String> {
        s.split("::")
            .filter(|x| !x.is_empty())
            .map(String::from)
            .collect()
    };
    let modules: BTreeSet<Vec<String>> = ["", "c2c", "c2c::locks", "measure"]
        .iter()
        .map(|s| m(s))
        .collect();
    // `super::Args` from c2c/locks.rs is an item of c2c/mod.rs.
    assert_eq!(resolve(&modules, &m("c2c"), "Args::parse"), vec![m("c2c")]);
    assert_eq!(
        resolve(&modules, &m("c2c"), "super::{measure, x}"),
        vec![m("measure"), m("")]
    );
    let mut g = BTreeMap::new();
    g.insert(m("c2c"), BTreeSet::from([m("c2c::locks")]));
    g.insert(m("c2c::locks"), BTreeSet::from([m("c2c")]));
    assert_eq!(
        a_cycle(&g),
        Some(vec![
            "cmd::c2c".into(),
            "cmd::c2c::locks".into(),
            "cmd::c2c".into()
        ])
    );
    g.insert(m("c2c::locks"), BTreeSet::new());
    assert_eq!(a_cycle(&g), None);
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
