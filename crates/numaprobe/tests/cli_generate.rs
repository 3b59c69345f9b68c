//! `numaprobe generate` as scripts/dist runs it: the man pages and shell
//! completions come from the real CLI, so every subcommand that `--help`
//! lists has its page and its completion, and every subcommand a
//! completion offers (the hidden `fleet-node` and `generate` too) has a page.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use cli::{numaprobe, ok, usage_error};

/// The subcommands `numaprobe --help` lists in its groups: every line of a
/// group that starts with a name (not a group heading, not a wrapped
/// description, not the group's example).
fn listed_subcommands() -> Vec<String> {
    let help = ok(&numaprobe(&["--help"]));
    let mut names = Vec::new();
    let mut in_commands = false;
    for line in help.lines() {
        if line.starts_with("Commands, by what you want to do:") {
            in_commands = true;
            continue;
        }
        if line.starts_with("Options") {
            break;
        }
        let Some(rest) = line.strip_prefix("  ").filter(|_| in_commands) else {
            continue;
        };
        // A long description wraps onto lines indented further: not a name.
        if rest.starts_with(' ') || rest.starts_with("e.g. ") {
            continue;
        }
        names.push(
            rest.split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string(),
        );
    }
    names
}

#[test]
fn help_groups_the_commands_by_what_people_want_to_do() {
    let help = ok(&numaprobe(&["--help"]));
    for heading in [
        "Measure this machine:",
        "Analyse a matrix:",
        "Place threads and memory:",
        "Compare and check:",
        "Many nodes (Slurm):",
        "Report and export:",
    ] {
        assert!(help.lines().any(|l| l == heading), "{heading}\n{help}");
    }
    // One example per group, each a command line that parses.
    let examples: Vec<&str> = help
        .lines()
        .filter_map(|l| l.strip_prefix("  e.g. numaprobe "))
        .collect();
    assert_eq!(examples.len(), 6, "{help}");
    let subs = listed_subcommands();
    for name in ["run", "latency", "infer", "pin", "diff", "fleet", "report"] {
        assert!(subs.iter().any(|s| s == name), "{name} in {subs:?}");
    }
    assert!(
        !subs.iter().any(|s| s == "help" || s == "fleet-node"),
        "{subs:?}"
    );
}

#[test]
fn man_writes_one_page_per_subcommand_hidden_ones_too() {
    let tmp = common::TempDir::new("gen-man");
    let dir = tmp.path().join("man1");
    ok(&numaprobe(&["generate", "man", dir.to_str().unwrap()]));
    let subs = listed_subcommands();
    assert!(subs.iter().any(|s| s == "topo"), "help lists {subs:?}");
    let main = std::fs::read_to_string(dir.join("numaprobe.1")).expect("numaprobe.1");
    assert!(
        main.starts_with(".ie"),
        "roff: {}",
        &main[..60.min(main.len())]
    );
    assert!(main.contains(".TH numaprobe 1"), "title line missing");
    for sub in &subs {
        let page = std::fs::read_to_string(dir.join(format!("numaprobe-{sub}.1")))
            .unwrap_or_else(|e| panic!("numaprobe-{sub}.1: {e}"));
        assert!(
            page.contains(&format!(".TH numaprobe-{sub} 1")),
            "{sub}'s title"
        );
        let version = concat!("\"numaprobe ", env!("CARGO_PKG_VERSION"), "\"");
        assert!(
            page.contains(version),
            "{sub}'s page does not name {version}"
        );
    }
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    // At least numaprobe.1 and one per subcommand; nested subcommands
    // (numaprobe-a-b.1) may add more.
    assert!(files.len() > subs.len(), "pages: {files:?}");
    assert!(
        files
            .iter()
            .all(|f| f.starts_with("numaprobe") && f.ends_with(".1")),
        "{files:?}"
    );
    // The completions offer the hidden ones (and fleet's job-array recipe
    // runs fleet-node by hand): `man numaprobe-fleet-node` must answer.
    let bash = ok(&numaprobe(&["generate", "completions", "bash"]));
    for hidden in ["fleet-node", "generate"] {
        assert!(bash.contains(hidden), "bash completion lacks {hidden}");
        let page = format!("numaprobe-{hidden}.1");
        assert!(files.contains(&page), "no {page} in {files:?}");
    }
}

#[test]
fn man_pages_carry_the_options_of_the_cli() {
    let tmp = common::TempDir::new("gen-man-opts");
    ok(&numaprobe(&[
        "generate",
        "man",
        tmp.path().to_str().unwrap(),
    ]));
    let topo = std::fs::read_to_string(tmp.path().join("numaprobe-topo.1")).unwrap();
    for option in ["sysfs\\-root", "format", "output", "table"] {
        assert!(topo.contains(option), "numaprobe-topo.1 lacks --{option}");
    }
}

#[test]
fn completions_name_every_listed_subcommand() {
    let subs = listed_subcommands();
    for shell in ["bash", "zsh", "fish"] {
        let script = ok(&numaprobe(&["generate", "completions", shell]));
        assert!(script.len() > 500, "{shell}: {} bytes", script.len());
        for sub in &subs {
            assert!(
                script.contains(sub.as_str()),
                "{shell} completion lacks {sub}"
            );
        }
    }
}

#[test]
fn bad_shell_and_file_as_folder_are_usage_errors() {
    // clap's own message for a value not in the list (exit 2, with the list).
    let o = numaprobe(&["generate", "completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("tcsh") && err.contains("bash"), "{err}");
    let tmp = common::TempDir::new("gen-man-file");
    let file = tmp.path().join("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    let err = usage_error(&numaprobe(&["generate", "man", file.to_str().unwrap()]));
    assert!(
        err.contains("not-a-dir") && err.contains("not a folder"),
        "{err}"
    );
}

#[test]
fn generate_is_hidden_from_help() {
    let help = ok(&numaprobe(&["--help"]));
    assert!(!help.contains("generate"), "{help}");
}
