//! Keeps the library's layering true (DESIGN, "Architecture"): data flows
//! topology -> plan -> kernels -> samples -> stats -> model -> analysis ->
//! renderers, so the result model (`src/model`) names none of `analysis`,
//! `experiments`, `job` or `render`, and neither `analysis` nor
//! `experiments` names `render`; the renderers' own code (their tests may
//! build inputs with the analysis) reads the model, never the measuring or
//! analysing modules. And no two files import each other, directly or
//! through others. The check reads the source files with the workspace's
//! one path resolver (`tests/cycles`): every `crate::`, `super::` and
//! `self::` path outside comments, in `use` lines and inline alike, groups
//! looked into.

#[path = "cycles/mod.rs"]
mod cycles;

use cycles::{module, module_of, rust_files, without_comments, without_tests, Module};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every file of the library, as module paths.
fn modules() -> BTreeSet<Module> {
    let src = src();
    rust_files(&src)
        .iter()
        .map(|f| module_of(&src, f))
        .collect()
}

/// The top-level modules that `code` of module `me` names, comments left
/// out.
fn top_modules(me: &str, code: &str, modules: &BTreeSet<Module>) -> Vec<String> {
    let mut out: Vec<String> = cycles::file_imports(&module(me), &without_comments(code), modules)
        .into_iter()
        .filter_map(|m| m.first().cloned())
        .collect();
    out.dedup();
    out
}

/// Every `file: crate::module` under `dir` that names a forbidden module
/// (in tests too unless `skip_tests`).
fn violations(dir: &str, forbidden: &[&str], skip_tests: bool) -> Vec<String> {
    let src = src();
    let root = src.join(dir);
    let files = rust_files(&root);
    assert!(
        !files.is_empty(),
        "no source files under {}",
        root.display()
    );
    let modules = modules();
    let mut out = Vec::new();
    for f in files {
        // A unit-test module kept in its own file (`#[cfg(test)] mod tests;`
        // pointing at tests.rs or x_tests.rs) may build its inputs from
        // anywhere.
        if skip_tests && cycles::is_test_file(&f) {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let code = if skip_tests {
            without_tests(&text)
        } else {
            &text
        };
        let me = module_of(&src, &f).join("::");
        for m in top_modules(&me, code, &modules) {
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

fn planted_modules() -> BTreeSet<Module> {
    [
        "",
        "render",
        "render::table",
        "units",
        "analysis",
        "analysis::binding",
        "model",
        "stats",
        "job",
        "experiments",
    ]
    .iter()
    .map(|s| module(s))
    .collect()
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
        top_modules("job", src, &planted_modules()),
        ["analysis", "model", "render", "stats", "units"]
    );
}

#[test]
fn only_the_unit_test_module_is_left_out() {
    let src = "use crate::model::Format;\n#[cfg(test)]\nmod tests {\n    use crate::analysis::parse;\n}\n";
    let modules = planted_modules();
    assert_eq!(top_modules("job", without_tests(src), &modules), ["model"]);
    assert_eq!(top_modules("job", src, &modules), ["analysis", "model"]);
}

#[test]
fn no_two_files_import_each_other() {
    let graph = cycles::graph(&src(), false);
    assert!(graph.len() > 100, "{} library files", graph.len());
    // The finder sees what it must: a file named inside a group.
    assert!(graph[&module("topology::testing")].contains(&module("topology::numbering")));
    let v = cycles::cycles(&graph);
    assert!(
        v.is_empty(),
        "files that import each other (move what both need into a third file):\n{}",
        v.join("\n")
    );
}

#[test]
fn the_cycle_finder_resolves_crate_super_and_self_paths_to_files() {
    let modules: BTreeSet<Module> = [
        "",
        "job",
        "job::plan",
        "job::keeper",
        "job::keeper::inner",
        "units",
        "analysis::work",
    ]
    .iter()
    .map(|s| module(s))
    .collect();
    let names = |me: &str, code: &str| -> Vec<String> {
        cycles::file_imports(&module(me), &without_comments(code), &modules)
            .iter()
            .map(|m| cycles::name(m))
            .collect()
    };
    let code = "use super::plan::{fit, X};\nuse crate::units::format_size;\n\
                // super::keeper in a comment\nfn f() { crate::analysis::work::compute(m); }\n\
                fn g() { my_super::keeper::x(); super::Phase::Latency; }\n";
    assert_eq!(
        names("job::keeper", code),
        [
            "crate::analysis::work",
            "crate::job",
            "crate::job::plan",
            "crate::units"
        ]
    );
    // From a directory's mod.rs, super is the directory's parent.
    assert_eq!(names("job", "use super::units::x;"), ["crate::units"]);
    // Groups, nested groups, `self` in a group, `self::` and `super::super`.
    assert_eq!(
        names(
            "job::keeper",
            "use super::{plan, self as j, super::{units::U, analysis::work}};"
        ),
        [
            "crate::analysis::work",
            "crate::job",
            "crate::job::plan",
            "crate::units"
        ]
    );
    assert_eq!(
        names(
            "job::keeper",
            "use self::inner::X; fn f() { self::helper(); }"
        ),
        ["crate::job::keeper::inner"]
    );
    assert_eq!(
        names("job::plan", "use crate::job::{self};"),
        ["crate::job"]
    );
}

#[test]
fn a_planted_cycle_is_found_and_a_test_module_is_no_cycle() {
    let tree = |y: &'static str| {
        [
            ("lib.rs", "mod a;\n"),
            ("a/mod.rs", "mod x;\nmod y;\n"),
            ("a/x.rs", "use super::y::Y;\n"),
            ("a/y.rs", y),
        ]
    };
    let test_only = "pub struct Y;\n#[cfg(test)]\nmod tests { use crate::a::x; }\n";
    assert!(
        cycles::planted("test-module", &tree(test_only), false).is_empty(),
        "a test module's import is no cycle"
    );
    let inline = "pub struct Y;\nfn f() { crate::a::x::g(); }\n";
    assert_eq!(
        cycles::planted("inline", &tree(inline), false),
        ["crate::a::x -> crate::a::y -> crate::a::x"]
    );
}

#[test]
fn a_grouped_import_cycle_is_found_and_a_comment_is_no_import() {
    let files = |topo: &'static str| {
        [
            ("lib.rs", "mod compare;\n"),
            ("compare/mod.rs", "mod topo;\npub struct CompareError;\n"),
            ("compare/topo.rs", topo),
        ]
    };
    // The parent names its child inside a group; the child names the parent.
    let parent_in_group = "use super::CompareError;\n";
    let mut tree = files(parent_in_group);
    tree[1].1 = "mod topo;\nuse super::compare::{topo, CompareError};\npub struct CompareError;\n";
    assert_eq!(
        cycles::planted("group", &tree, false),
        ["crate::compare -> crate::compare::topo -> crate::compare"]
    );
    // The same names in comments are no imports.
    tree[1].1 = "mod topo;\n// use super::compare::{topo, CompareError};\n/// self::topo::x\n";
    assert!(cycles::planted("comment", &tree, false).is_empty());
}

#[test]
fn a_cycle_through_three_files_is_found_and_declarations_count_when_asked() {
    let tree = [
        ("lib.rs", "mod a;\nmod b;\nmod c;\n"),
        ("a.rs", "use crate::b::B;\n"),
        ("b.rs", "pub struct B;\nfn f() { crate::c::g(); }\n"),
        ("c.rs", "use crate::{a::{self}, b};\n"),
    ];
    assert_eq!(
        cycles::planted("three", &tree, false),
        ["crate::a -> crate::b -> crate::c -> crate::a"]
    );
    // A child naming its parent's item is a cycle only when `mod x;` counts.
    let tree = [
        ("lib.rs", "mod p;\n"),
        ("p/mod.rs", "mod k;\npub struct Args;\n"),
        ("p/k.rs", "use super::Args;\n"),
    ];
    assert!(cycles::planted("decl-off", &tree, false).is_empty());
    assert_eq!(
        cycles::planted("decl-on", &tree, true),
        ["crate::p -> crate::p::k -> crate::p"]
    );
}

#[test]
fn only_unit_test_files_are_left_out() {
    for (f, test) in [
        ("a/tests.rs", true),
        ("a/tune_tests.rs", true),
        ("a/contests.rs", false),
        ("a/tests/mod.rs", false),
        ("a/testing.rs", false),
    ] {
        assert_eq!(cycles::is_test_file(Path::new(f)), test, "{f}");
    }
}
