//! `numaprobe --help`: the commands grouped by what people want to do, each
//! group with one example, in place of clap's flat list. The groups are
//! data here; each command's line is its own `about` from `cli.rs`, so the
//! two cannot drift, and a test checks that every visible command is in
//! exactly one group. Man pages and completions keep clap's own list.

use clap::CommandFactory;

/// (heading, commands, one example).
const GROUPS: [(&str, &[&str], &str); 6] = [
    (
        "Measure this machine",
        &[
            "run",
            "topo",
            "latency",
            "bandwidth",
            "loaded-latency",
            "peak",
            "c2c",
            "study",
        ],
        "numaprobe latency --format json -o lat.json",
    ),
    (
        "Analyse a matrix",
        &["infer"],
        "numaprobe infer --input lat.json --advice",
    ),
    (
        "Place threads and memory",
        &["pin", "policy", "tune"],
        "numaprobe pin --threads 8 --strategy scatter",
    ),
    (
        "Compare and check",
        &["diff", "check"],
        "numaprobe check --expect topo.json",
    ),
    (
        "Many nodes (Slurm)",
        &["fleet"],
        "numaprobe fleet --nodes 16 --report-dir fleet",
    ),
    (
        "Report and export",
        &["report", "export"],
        "numaprobe export --to prometheus numaprobe-report -o numaprobe.prom",
    ),
];

/// Width the command lines wrap at (clap's own help wraps at the terminal
/// or 100 columns).
const WIDTH: usize = 100;
const INDENT: usize = 18;

/// `text` wrapped at [`WIDTH`], continuation lines indented by [`INDENT`].
fn wrap(first: &str, text: &str) -> String {
    let mut out = first.to_string();
    let mut col = first.len();
    for (i, word) in text.split_whitespace().enumerate() {
        if i > 0 && col + 1 + word.len() > WIDTH {
            out.push('\n');
            out.push_str(&" ".repeat(INDENT));
            col = INDENT;
        } else if i > 0 {
            out.push(' ');
            col += 1;
        }
        out.push_str(word);
        col += word.len();
    }
    out
}

/// The grouped command list, from the commands' own descriptions.
pub fn grouped(cmd: &clap::Command) -> String {
    let mut s = String::from("Commands, by what you want to do:\n");
    for (heading, names, example) in GROUPS {
        s.push_str(&format!("\n{heading}:\n"));
        for name in names {
            let about = cmd
                .find_subcommand(name)
                .and_then(|c| c.get_about())
                .map(|a| a.to_string())
                .unwrap_or_default();
            s.push_str(&wrap(
                &format!("  {name:<width$}", width = INDENT - 2),
                &about,
            ));
            s.push('\n');
        }
        s.push_str(&format!("  e.g. {example}\n"));
    }
    s.push_str("\n`numaprobe help COMMAND` or `numaprobe COMMAND --help` tells more.\n");
    s
}

/// The command line with the grouped list in its help; parse with it.
pub fn command() -> clap::Command {
    let cmd = crate::cli::Cli::command();
    let template = format!(
        "{{about-with-newline}}\n{{usage-heading}} {{usage}}\n\n{}\n\
         Options (without a command they are the main job's):\n{{options}}{{after-help}}",
        grouped(&cmd).replace('{', "{{").replace('}', "}}")
    );
    negatives(cmd.help_template(template))
}

/// Every option's value may start with a minus and a digit (`--budget -1`,
/// `--size -1`), so that the option's own check names the bad value and
/// what is valid, where clap would take it for an unknown option.
fn negatives(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|a| {
        let takes = a.get_action().takes_values();
        a.allow_negative_numbers(takes)
    })
    .mut_subcommands(negatives)
}

/// A command started without an input it cannot do without (`diff` with
/// no A and B, `generate` with no command), as one line naming what to
/// give and what it is, in place of clap's usage block; None for every
/// other parse error. `args` is the command line after the program name.
pub fn missing(e: &clap::Error, args: &[String]) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let mut top = command();
    // Built, so that every argument has its value names (to print it).
    top.build();
    let mut sub = args.iter().find_map(|a| top.find_subcommand(a))?.clone();
    let mut path = vec![sub.get_name().to_string()];
    // `generate man`: the innermost command named, by its whole path.
    while let Some(inner) = args.iter().find_map(|a| {
        sub.find_subcommand(a)
            .filter(|s| s.get_name() != sub.get_name())
    }) {
        sub = inner.clone();
        path.push(sub.get_name().to_string());
    }
    let name = path.join(" ");
    match e.kind() {
        ErrorKind::MissingRequiredArgument => {
            let Some(ContextValue::Strings(names)) = e.get(ContextKind::InvalidArg) else {
                return None;
            };
            let parts: Vec<String> = names
                .iter()
                .map(|n| {
                    let arg = sub.get_arguments().find(|a| a.to_string() == *n);
                    let help = arg
                        .and_then(|a| a.get_help())
                        .map(|h| lower_first(&h.to_string()));
                    // A value of a fixed set (a shell) is named with the set.
                    let values: Vec<String> = arg
                        .map(|a| a.get_possible_values())
                        .unwrap_or_default()
                        .iter()
                        .filter(|v| !v.is_hide_set())
                        .map(|v| v.get_name().to_string())
                        .collect();
                    let values =
                        (!values.is_empty()).then(|| format!("one of {}", values.join(", ")));
                    match (help, values) {
                        (Some(h), Some(v)) => format!("{n} ({h}: {v})"),
                        (Some(h), None) | (None, Some(h)) => format!("{n} ({h})"),
                        (None, None) => n.clone(),
                    }
                })
                .collect();
            Some(format!(
                "numaprobe {name} needs {}; `numaprobe {name} --help` tells more",
                parts.join(" and ")
            ))
        }
        ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let names: Vec<&str> = sub
                .get_subcommands()
                .map(|s| s.get_name())
                .filter(|n| *n != "help")
                .collect();
            (!names.is_empty()).then(|| {
                format!(
                    "numaprobe {name} needs a command: {}; `numaprobe {name} --help` tells more",
                    names.join(", ")
                )
            })
        }
        _ => None,
    }
}

/// "The first run" as "the first run", an acronym kept ("SLIT ...").
fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match (c.next(), c.clone().next()) {
        (Some(f), Some(n)) if f.is_uppercase() && !n.is_uppercase() => {
            f.to_lowercase().chain(c).collect()
        }
        _ => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_input_is_one_line_naming_it() {
        let args = |a: &[&str]| -> Vec<String> {
            std::iter::once("numaprobe")
                .chain(a.iter().copied())
                .map(String::from)
                .collect()
        };
        let e = command().try_get_matches_from(args(&["diff"])).unwrap_err();
        let line = missing(&e, &args(&["diff"])[1..]).unwrap();
        assert!(
            line.starts_with(
                "numaprobe diff needs <RUN>... (the runs to compare, each a report folder"
            ),
            "{line}"
        );
        assert!(
            line.ends_with("`numaprobe diff --help` tells more"),
            "{line}"
        );
        assert!(!line.contains('\n'), "{line}");
        let e = command()
            .try_get_matches_from(args(&["generate"]))
            .unwrap_err();
        let line = missing(&e, &args(&["generate"])[1..]).unwrap();
        assert!(
            line.starts_with("numaprobe generate needs a command: "),
            "{line}"
        );
        // A subcommand's command is named by its whole path, and a value of
        // a fixed set with the set.
        let e = command()
            .try_get_matches_from(args(&["generate", "completions"]))
            .unwrap_err();
        let line = missing(&e, &args(&["generate", "completions"])[1..]).unwrap();
        assert!(
            line.starts_with("numaprobe generate completions needs <SHELL> (one of bash, "),
            "{line}"
        );
        assert!(
            line.ends_with("`numaprobe generate completions --help` tells more"),
            "{line}"
        );
        // A bad value is clap's own error, not a missing input.
        let e = command()
            .try_get_matches_from(args(&["pin", "--threads", "x"]))
            .unwrap_err();
        assert_eq!(missing(&e, &args(&["pin", "--threads", "x"])[1..]), None);
    }

    #[test]
    fn every_visible_command_is_in_exactly_one_group() {
        let cmd = crate::cli::Cli::command();
        let mut grouped: Vec<&str> = GROUPS
            .iter()
            .flat_map(|(_, n, _)| n.iter().copied())
            .collect();
        for name in &grouped {
            let sub = cmd.find_subcommand(name);
            assert!(
                sub.is_some_and(|s| !s.is_hide_set()),
                "{name} is no visible command"
            );
        }
        let visible: Vec<&str> = cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .map(|s| s.get_name())
            .collect();
        for name in &visible {
            assert_eq!(
                grouped.iter().filter(|g| *g == name).count(),
                1,
                "{name} must be in exactly one group"
            );
        }
        grouped.sort_unstable();
        grouped.dedup();
        assert_eq!(grouped.len(), visible.len());
    }

    #[test]
    fn every_example_names_a_command_of_its_group() {
        for (heading, names, example) in GROUPS {
            let mut words = example.split_whitespace();
            assert_eq!(words.next(), Some("numaprobe"), "{heading}");
            let sub = words.next().unwrap_or_default();
            assert!(names.contains(&sub), "{heading}: {example}");
        }
    }

    #[test]
    fn long_descriptions_wrap_under_their_column() {
        let w = wrap("  name            ", &"word ".repeat(40));
        for l in w.lines() {
            assert!(l.len() <= WIDTH, "{l}");
        }
        for l in w.lines().skip(1) {
            assert!(l.starts_with(&" ".repeat(INDENT)) && !l[INDENT..].starts_with(' '));
        }
    }
}
