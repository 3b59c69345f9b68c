//! Where results go: stdout or `--output FILE`, and how errors map to exit codes.
//!
//! A file is written whole or not at all (a temporary file beside it, then a
//! rename), so a long run can rewrite its output after every finished cell and an
//! interrupted run leaves the last complete version, never a half-written one.

use anyhow::Context;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Bad input: shown as one line, exit status 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for UsageError {}

/// Build an `anyhow::Error` that exits with status 2.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(msg.into()))
}

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

pub fn exit_code(err: &anyhow::Error) -> u8 {
    if err
        .chain()
        .any(|c| c.downcast_ref::<UsageError>().is_some())
    {
        2
    } else {
        1
    }
}

pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The destination chosen by `--output`.
#[derive(Debug, Clone)]
pub enum Sink {
    Stdout,
    File(PathBuf),
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
        match self {
            Sink::Stdout => {
                let mut out = std::io::stdout().lock();
                out.write_all(content.as_bytes())?;
                out.flush()?;
                Ok(())
            }
            Sink::File(path) => write_atomic(path, content.as_bytes())
                .with_context(|| format!("cannot write {}", path.display())),
        }
    }

    pub fn is_stdout(&self) -> bool {
        matches!(self, Sink::Stdout)
    }
}

/// A `--output` file rewritten with every partial result, so an interrupted
/// or killed run keeps what it measured (stdout gets the result once, at
/// the end, from the caller). A write failure does not stop the run: the
/// first one is kept and [`PartialFile::end`] reports it.
pub struct PartialFile {
    path: Option<PathBuf>,
    error: Option<anyhow::Error>,
}

impl PartialFile {
    pub fn new(sink: &Sink) -> PartialFile {
        PartialFile {
            path: match sink {
                Sink::File(p) => Some(p.clone()),
                Sink::Stdout => None,
            },
            error: None,
        }
    }

    /// Rewrite the file with `text()` (rendered only when there is a file
    /// and no write has failed yet).
    pub fn save(&mut self, text: impl FnOnce() -> String) {
        if let (Some(path), None) = (&self.path, &self.error) {
            if let Err(e) = write_atomic(path, text().as_bytes())
                .with_context(|| format!("saving partial results to {}", path.display()))
            {
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

pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    // A device or pipe (`--output /dev/null`, `/dev/stdout`, a FIFO) is
    // written into, never replaced: renaming a file over /dev/null as root
    // turns it into a plain file for every process on the machine.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        let mut f = std::fs::OpenOptions::new().write(true).open(path)?;
        f.write_all(bytes)?;
        return f.flush();
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    let tmp = dir.join(format!(".{}.{}.tmp", name, std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
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
    fn a_pipe_is_written_into_not_replaced() {
        // A FIFO stands in for /dev/null, which a test must not touch.
        use std::io::Read;
        use std::os::unix::fs::FileTypeExt;
        let dir = std::env::temp_dir().join(format!("np-out-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("sink");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let mut s = String::new();
                std::fs::File::open(fifo)
                    .unwrap()
                    .read_to_string(&mut s)
                    .unwrap();
                s
            })
        };
        write_atomic(&fifo, b"through").unwrap();
        assert_eq!(reader.join().unwrap(), "through");
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
