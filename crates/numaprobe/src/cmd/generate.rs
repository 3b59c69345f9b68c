//! `numaprobe generate man DIR` and `numaprobe generate completions SHELL`:
//! the man pages and shell completions that the release artefacts ship,
//! made from the real command-line definition (`cli::Cli`, handed over by
//! the dispatcher) of the binary being shipped, so they can never describe
//! another version's options.
//! Hidden: packagers run it (scripts/dist), users read its output.

use crate::output::usage;
use crate::safe_dir::write_file;
use anyhow::Context;
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub what: What,
}

#[derive(clap::Subcommand, Debug)]
pub enum What {
    /// Write numaprobe.1 and one page per subcommand (numaprobe-topo.1, ...) into DIR
    Man {
        /// The folder to write the pages into (created if missing)
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
    /// Print the completion script for SHELL on stdout
    Completions {
        #[arg(value_enum, value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
}

/// `cli` is the whole command line's definition (`Cli::command()`).
pub fn run(args: Args, mut cli: clap::Command) -> anyhow::Result<()> {
    match args.what {
        What::Man { dir } => {
            if dir.exists() && !dir.is_dir() {
                return Err(usage(format!(
                    "generate man {}: is not a folder; give the folder to write the pages into",
                    dir.display()
                )));
            }
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            for page in man_pages(cli)? {
                let path = dir.join(&page.file);
                write_file(&path, &page.roff)?;
            }
            Ok(())
        }
        What::Completions { shell } => {
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut cli, "numaprobe", &mut buf);
            let mut out = std::io::stdout().lock();
            out.write_all(&buf)?;
            out.flush()?;
            Ok(())
        }
    }
}

/// One rendered man page: its file name and its roff text.
pub struct Page {
    pub file: String,
    pub roff: Vec<u8>,
}

/// The pages of numaprobe and of every subcommand, recursively,
/// named as man(1) finds them (`man numaprobe-topo`).
pub fn man_pages(cli: clap::Command) -> anyhow::Result<Vec<Page>> {
    // The help subcommand has no page of its own: `man numaprobe` lists them.
    let mut cmd = cli.disable_help_subcommand(true);
    cmd.build();
    let mut pages = Vec::new();
    collect(cmd, &mut pages)?;
    Ok(pages)
}

fn collect(cmd: clap::Command, pages: &mut Vec<Page>) -> anyhow::Result<()> {
    // Subcommands carry no version of their own: every page's footer names
    // the release it documents.
    let man = clap_mangen::Man::new(cmd.clone())
        .source(concat!("numaprobe ", env!("CARGO_PKG_VERSION")))
        .manual("numaprobe manual");
    let mut roff = Vec::new();
    man.render(&mut roff)?;
    pages.push(Page {
        file: man.get_filename(),
        roff,
    });
    // Hidden subcommands too: the shell completions offer them, and
    // fleet-node is run by hand in fleet's job-array recipe.
    for sub in cmd.get_subcommands() {
        collect(sub.clone(), pages)?;
    }
    Ok(())
}
