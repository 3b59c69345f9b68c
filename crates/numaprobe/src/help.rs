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
    cmd.help_template(template)
}

#[cfg(test)]
mod tests {
    use super::*;

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
