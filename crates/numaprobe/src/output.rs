//! Where results go: stdout, `--output FILE` or a file of a report folder,
//! and how errors map to exit codes and one line of text.
//!
//! A file is written whole or not at all, through its folder's handle
//! (`safe_dir`), so a long run can rewrite its output after every finished
//! cell and an interrupted run leaves the last complete version, never a
//! half-written one.

use crate::safe_dir::SafeDir;
use anyhow::Context;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

pub use crate::bad_input::{usage, UsageError};

/// Not a failure: the compared things differ (`diff`, `check`). Shown as
/// one line without "error", exit status 1.
#[derive(Debug)]
pub struct Differs(pub String);

impl std::fmt::Display for Differs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for Differs {}

/// The one line of a `Differs` outcome, if that is what `err` is.
pub fn differs(err: &anyhow::Error) -> Option<&str> {
    err.downcast_ref::<Differs>().map(|d| d.0.as_str())
}

/// The exit status of a failure that is not bad input: 1, or what the
/// command set with [`set_failure_code`].
static FAILURE_CODE: AtomicU8 = AtomicU8::new(1);

/// `check` exits 3 when it could not check (the machine could not be read,
/// the output not written, Slurm not told, a panic): a health check must
/// tell that from 1, "this node differs".
pub fn set_failure_code(code: u8) {
    FAILURE_CODE.store(code, Ordering::SeqCst);
}

/// The exit status of a failure (a system error or a panic).
pub fn failure_code() -> u8 {
    FAILURE_CODE.load(Ordering::SeqCst)
}

/// Part of the work could not be done although what could was written
/// (`fleet`: nodes failed, were lost or were not run): exit status 4.
#[derive(Debug)]
pub struct PartlyFailed(pub String);

impl std::fmt::Display for PartlyFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for PartlyFailed {}

/// The exit status of [`PartlyFailed`].
pub const EXIT_PARTLY_FAILED: u8 = 4;

/// Nothing ran because the job never started (`fleet`: pending past
/// `--start-timeout`, or an allocation srun could not get): exit status 5.
#[derive(Debug)]
pub struct NotStarted(pub String);

impl std::fmt::Display for NotStarted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for NotStarted {}

/// The exit status of [`NotStarted`].
pub const EXIT_NOT_STARTED: u8 = 5;

pub fn exit_code(err: &anyhow::Error) -> u8 {
    if err
        .chain()
        .any(|c| c.downcast_ref::<UsageError>().is_some())
    {
        2
    } else if err
        .chain()
        .any(|c| c.downcast_ref::<PartlyFailed>().is_some())
    {
        EXIT_PARTLY_FAILED
    } else if err
        .chain()
        .any(|c| c.downcast_ref::<NotStarted>().is_some())
    {
        EXIT_NOT_STARTED
    } else {
        failure_code()
    }
}

pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The destination chosen by `--output`, or a file of a report folder.
#[derive(Debug, Clone)]
pub enum Sink {
    Stdout,
    /// A path the user named ([`crate::safe_dir::write_file`]).
    File(PathBuf),
    /// A file numaprobe names inside a folder it holds open; `path` is for
    /// messages only.
    Folder {
        dir: Arc<SafeDir>,
        name: String,
        path: PathBuf,
    },
}

impl Sink {
    pub fn new(output: Option<&Path>) -> Self {
        match output {
            Some(p) if p != Path::new("-") => Sink::File(p.to_path_buf()),
            _ => Sink::Stdout,
        }
    }

    /// Write `content` as the whole output. For a file, replaces any earlier
    /// version atomically.
    pub fn write(&self, content: &str) -> anyhow::Result<()> {
        self.write_with(|w| w.write_all(content.as_bytes()))
    }

    /// [`Sink::write`] of what `fill` writes, streamed as it comes (a large
    /// document is never held whole): a file still appears whole or not
    /// at all, standard output gets the bytes as they are made.
    pub fn write_with(
        &self,
        fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> anyhow::Result<()> {
        match self {
            Sink::Stdout => {
                // Standard output may be a file the shell opened: a stop
                // signal waits for the whole answer (`stop_now`).
                let _hold = crate::stop_now::Hold::take();
                let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
                fill(&mut out)?;
                out.flush()?;
                Ok(())
            }
            Sink::File(path) => crate::safe_dir::write_file_with(path, fill),
            Sink::Folder { dir, name, .. } => dir.write_with(name, fill),
        }
    }

    /// A document's JSON ([`render::write_json`]), streamed.
    pub fn write_json<T: serde::Serialize + numaprobe_core::model::document::Typed>(
        &self,
        value: &T,
    ) -> anyhow::Result<()> {
        self.write_with(|w| numaprobe_core::render::write_json(value, w))
    }

    pub fn is_stdout(&self) -> bool {
        matches!(self, Sink::Stdout)
    }

    /// The file written, if it is one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Sink::Stdout => None,
            Sink::File(p) | Sink::Folder { path: p, .. } => Some(p),
        }
    }
}

/// A `--output` file rewritten with every partial result, so an interrupted
/// or killed run keeps what it measured (stdout gets the result once, at
/// the end, from the caller). A write failure does not stop the run: the
/// first one is kept and [`PartialFile::end`] reports it.
pub struct PartialFile {
    sink: Option<Sink>,
    error: Option<anyhow::Error>,
}

impl PartialFile {
    pub fn new(sink: &Sink) -> PartialFile {
        PartialFile {
            sink: (!sink.is_stdout()).then(|| sink.clone()),
            error: None,
        }
    }

    /// Rewrite the file with `text()` (rendered only when there is a file
    /// and no write has failed yet).
    pub fn save(&mut self, text: impl FnOnce() -> String) {
        if let (Some(sink), None) = (&self.sink, &self.error) {
            if let Err(e) = sink.write(&text()).with_context(|| {
                format!(
                    "saving partial results to {}",
                    sink.path().unwrap_or(Path::new("-")).display()
                )
            }) {
                self.error = Some(e);
            }
        }
    }

    /// The first write failure, if any.
    pub fn end(&mut self) -> anyhow::Result<()> {
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

pub use numaprobe_core::model::input::file_kind;

/// The most characters of one word an error line shows: a 120 KB bad value
/// is shown as its first 200 characters and how many more there were.
pub const ECHO_MAX: usize = 200;

/// An error line as shown: every word (a run of non-blank characters)
/// longer than [`ECHO_MAX`] is cut there, and the line is cut after
/// 4 x [`ECHO_MAX`] characters, so a huge bad value never floods the
/// terminal or a log. One helper for every error numaprobe prints.
pub fn clip_line(line: &str) -> String {
    let mut out = String::new();
    for word in line.split_inclusive(char::is_whitespace) {
        let chars = word.chars().count();
        if chars > ECHO_MAX {
            out.extend(word.chars().take(ECHO_MAX));
            out.push_str(&format!("... ({} more characters)", chars - ECHO_MAX));
            if word.ends_with(char::is_whitespace) {
                out.push(' ');
            }
        } else {
            out.push_str(word);
        }
    }
    let chars = out.chars().count();
    if chars > 4 * ECHO_MAX {
        let mut cut: String = out.chars().take(4 * ECHO_MAX).collect();
        cut.push_str(&format!("... ({} more characters)", chars - 4 * ECHO_MAX));
        return cut;
    }
    out
}

/// A message as one terminal line: a path or value quoted in it may hold a
/// newline or an escape sequence, which must neither split the line nor
/// reach the terminal (clipping is `clip_line`'s, by words).
pub fn one_line(msg: &str) -> String {
    numaprobe_core::clean::line(msg, numaprobe_core::clean::UNCLIPPED)
}

/// True when stderr is a terminal: progress is drawn only then.
pub fn stderr_is_terminal() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_word_is_clipped_and_short_lines_are_kept() {
        assert_eq!(
            clip_line("--cpus 0-3: no such CPU"),
            "--cpus 0-3: no such CPU"
        );
        let long = format!("--cpus {} is bad", "7".repeat(1000));
        let c = clip_line(&long);
        assert!(
            c.starts_with(&format!("--cpus {}...", "7".repeat(ECHO_MAX))),
            "{c}"
        );
        assert!(c.contains("(801 more characters) is bad"), "{c}");
        let words = "word ".repeat(400);
        let c = clip_line(&words);
        assert!(c.chars().count() < 4 * ECHO_MAX + 40, "{}", c.len());
        assert!(c.ends_with("(1200 more characters)"), "{c}");
    }
}
