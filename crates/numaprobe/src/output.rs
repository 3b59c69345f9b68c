//! Where results go: stdout, `--output FILE` or a file of a report folder,
//! and how errors map to exit codes and one line of text.
//!
//! A file is written whole or not at all (a temporary file beside it, then a
//! rename), so a long run can rewrite its output after every finished cell and an
//! interrupted run leaves the last complete version, never a half-written one.
//! The temporary file gets an unpredictable name and is created with O_EXCL
//! (the `tempfile` crate), so nobody can plant a symlink under its name to
//! redirect the write; the rename replaces whatever holds the final name and
//! never writes through it.

use anyhow::Context;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};

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
    /// A path the user named: a pipe or device there is written into.
    File(PathBuf),
    /// A file numaprobe names inside a report folder: only ever a regular
    /// file (see [`write_in_folder`]).
    Folder(PathBuf),
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
            Sink::Folder(path) => write_in_folder(path, content.as_bytes()),
        }
    }

    pub fn is_stdout(&self) -> bool {
        matches!(self, Sink::Stdout)
    }

    /// The file written, if it is one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Sink::Stdout => None,
            Sink::File(p) | Sink::Folder(p) => Some(p),
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

/// Write a file the user named (`--output`, `--graph-svg`...). A device or
/// pipe there (`/dev/null`, `/dev/stdout`, a FIFO) is written into, never
/// replaced: renaming a file over /dev/null as root turns it into a plain
/// file for every process on the machine. Anything else is replaced
/// atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        let mut f = std::fs::OpenOptions::new().write(true).open(path)?;
        f.write_all(bytes)?;
        return f.flush();
    }
    replace(path, bytes)
}

/// Write a file numaprobe names inside a report folder. Only a regular file
/// is ever there: a symlink, FIFO, device or folder under that name is
/// refused (one line naming it), so a link planted in a shared folder cannot
/// send a root run's output to a file, pipe or disk elsewhere, and a FIFO
/// cannot hang the run.
pub fn write_in_folder(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if !m.is_file() {
            return Err(usage(format!(
                "{}: {}, not a regular file; numaprobe writes only regular files in a report folder: remove it or choose another folder",
                path.display(),
                file_kind(&m.file_type())
            )));
        }
    }
    replace(path, bytes).with_context(|| format!("cannot write {}", path.display()))
}

pub use numaprobe_core::model::input::file_kind;

/// The temporary name of `name`'s next version: `.NAME.XXXXXX.tmp`, six
/// random letters or digits (what [`is_temp_of`] recognises).
const TEMP_RANDOM: usize = 6;

/// Is `file` a temporary file numaprobe made for `name` (a leftover of a
/// killed run)? Exactly `.NAME.` + six letters or digits + `.tmp`.
pub fn is_temp_of(file: &str, name: &str) -> bool {
    file.strip_prefix('.')
        .and_then(|r| r.strip_prefix(name))
        .and_then(|r| r.strip_prefix('.'))
        .and_then(|r| r.strip_suffix(".tmp"))
        .is_some_and(|r| r.len() == TEMP_RANDOM && r.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// Write `bytes` to a new file under an unpredictable name beside `path`
/// (O_CREAT | O_EXCL: it cannot be a planted symlink or FIFO), flush it to
/// disk, and rename it over `path`.
fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    // 0666 before the umask, as File::create would have it: a report is
    // as readable as any file the user writes.
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .rand_bytes(TEMP_RANDOM)
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    // A panic here (a bug, or the test switch) drops `tmp`, which removes
    // the temporary file: the last whole version stays, nothing half-written.
    numaprobe_core::fault::panic_at(numaprobe_core::fault::OUTPUT);
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

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

    #[test]
    fn temporary_names_are_recognised_exactly() {
        assert!(is_temp_of(".run.json.aB3dE9.tmp", "run.json"));
        for f in [
            ".run.json.mine.tmp",
            ".run.json.aB3dE9x.tmp",
            ".run.json.aB3-E9.tmp",
            "run.json.aB3dE9.tmp",
            ".run.json.aB3dE9.tmp ",
            ".run.jsonaaB3dE9.tmp",
        ] {
            assert!(!is_temp_of(f, "run.json"), "{f}");
        }
    }

    #[test]
    fn a_folder_write_replaces_a_file_and_refuses_anything_else() {
        let dir = std::env::temp_dir().join(format!("np-out-folder-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("run.json");
        write_in_folder(&p, b"one").unwrap();
        write_in_folder(&p, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        let only: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(only.len(), 1, "no temporary file is left");
        std::fs::remove_file(&p).unwrap();
        std::fs::create_dir(&p).unwrap();
        let err = write_in_folder(&p, b"x").unwrap_err();
        assert_eq!(exit_code(&err), 2);
        assert!(err.to_string().contains("a folder"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

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
