//! Reading a file that came from outside (a report folder, another node's
//! run.json, a matrix to analyse, a saved topology): regular files only,
//! and bounded in size. Every command that reads a user's file reads it
//! through here.
//!
//! A FIFO, device or folder is refused before anything is read from it (a
//! FIFO without a writer would block the reader for ever; a device may
//! never end); the file is opened with O_NONBLOCK and checked again on the
//! open descriptor, so a swap between the check and the open changes
//! nothing. A file larger than the limit is refused by its size before a
//! byte is read, and a file that grows while it is read stops at the limit:
//! a 2 GB sparse `latency.json` costs nothing.
//!
//! A stop request ([`crate::cancel`]) ends a read that waits: the signal
//! handler is installed without SA_RESTART, so a read blocked on a silent
//! pipe returns EINTR, and the loop here gives up instead of going back to
//! wait (as `read_to_end` would, leaving the first SIGTERM unheard).

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The most bytes read from one input file (256 MiB): the run.json of a
/// 64-node machine is well under 1 MiB.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// The environment variable that sets another limit, a size such as
/// `1GiB` or `512M` (the same forms as `--size`).
pub const LIMIT_ENV: &str = "NUMAPROBE_MAX_INPUT";

/// Why an input file was not read: all bad input.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("{}: no such file", path.display())]
    Missing { path: PathBuf },
    #[error("{}: {kind}, not a regular file; give a file (numaprobe does not read FIFOs, devices or folders as documents)", path.display())]
    NotAFile { path: PathBuf, kind: &'static str },
    #[error("{}: larger than the {} numaprobe reads from one file (set {LIMIT_ENV} to raise the limit)", path.display(), crate::units::format_size(*limit))]
    TooLarge { path: PathBuf, limit: u64 },
    #[error("{}: not UTF-8 text", path.display())]
    NotText { path: PathBuf },
    #[error("{}: cannot read: {message}", path.display())]
    Io { path: PathBuf, message: String },
    #[error("{LIMIT_ENV}={value:?}: not a size; e.g. 1GiB or 512M")]
    BadLimit { value: String },
    #[error("{}: {STOPPED}", path.display())]
    Cancelled { path: PathBuf },
}

/// Why a read was given up before its end.
const STOPPED: &str = "not read whole: stopped by SIGINT or SIGTERM";

impl InputError {
    /// Why the file was not read, without its name: for a caller whose
    /// message already names it (`--distances FILE: cannot read it (...)`).
    pub fn reason(&self) -> String {
        match self {
            InputError::Missing { .. } => "no such file".into(),
            InputError::NotAFile { kind, .. } => format!("{kind}, not a regular file"),
            InputError::TooLarge { limit, .. } => format!(
                "larger than the {} numaprobe reads from one file; set {LIMIT_ENV} to raise the limit",
                crate::units::format_size(*limit)
            ),
            InputError::NotText { .. } => "not UTF-8 text".into(),
            InputError::Io { message, .. } => message.clone(),
            InputError::BadLimit { .. } => self.to_string(),
            InputError::Cancelled { .. } => STOPPED.into(),
        }
    }
}

/// The limit in force: [`LIMIT_ENV`] when set, else [`MAX_INPUT_BYTES`].
pub fn limit() -> Result<u64, InputError> {
    limit_from(std::env::var_os(LIMIT_ENV).as_deref())
}

/// The limit [`LIMIT_ENV`] set to `value` gives: a size above zero.
fn limit_from(value: Option<&std::ffi::OsStr>) -> Result<u64, InputError> {
    match value {
        None => Ok(MAX_INPUT_BYTES),
        Some(v) => {
            let text = v.to_string_lossy();
            let clipped: String = text.chars().take(200).collect();
            crate::units::parse_size(&text)
                .ok()
                .filter(|&n| n > 0)
                .ok_or(InputError::BadLimit { value: clipped })
        }
    }
}

/// The whole of `path` as text (see the module doc for what is refused).
pub fn read_text(path: &Path) -> Result<String, InputError> {
    String::from_utf8(read_bytes(path)?).map_err(|_| InputError::NotText {
        path: path.to_path_buf(),
    })
}

/// The whole of `path` as bytes (see the module doc for what is refused).
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, InputError> {
    let limit = limit()?;
    let io = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => InputError::Missing {
            path: path.to_path_buf(),
        },
        _ => InputError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        },
    };
    // Checked before the open too: opening some devices does something.
    regular(path, &std::fs::metadata(path).map_err(io)?)?;
    opened_within(open_unblocking(path).map_err(io)?, path, limit)
}

/// `path` opened for reading without waiting: a FIFO swapped in after the
/// check opens at once (and is refused on its descriptor), and the
/// descriptor is not passed on to what numaprobe starts.
fn open_unblocking(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
}

/// The whole of a file already opened (relative to a folder's handle, say)
/// as text: checked on its descriptor as [`read_text`] checks a path, a
/// file past the limit refused by its size before a byte is read.
pub fn read_opened(file: std::fs::File, path: &Path) -> Result<String, InputError> {
    let bytes = opened_within(file, path, limit()?)?;
    String::from_utf8(bytes).map_err(|_| InputError::NotText {
        path: path.to_path_buf(),
    })
}

fn opened_within(file: std::fs::File, path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    let meta = file.metadata().map_err(|e| InputError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    regular(path, &meta)?;
    if meta.len() > limit {
        return Err(InputError::TooLarge {
            path: path.to_path_buf(),
            limit,
        });
    }
    // The size known, the buffer is made once (no doubling past it).
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    bounded(file, limit, path, &mut bytes, crate::cancel::requested)?;
    Ok(bytes)
}

/// At most `limit` bytes of a stream (stdin) as text: more is an error,
/// and so is a stop request, whether it came before the read or while it
/// waited for the writer.
pub fn read_stream(r: impl Read, name: &Path) -> Result<String, InputError> {
    stream_with(r, name, limit()?, crate::cancel::requested)
}

/// [`read_stream`] with the stop request asked of `stopped`, so the tests
/// need not raise the process's own flag.
fn stream_with(
    r: impl Read,
    name: &Path,
    limit: u64,
    stopped: fn() -> bool,
) -> Result<String, InputError> {
    // A signal that came before the read began interrupts nothing: the
    // read would wait for a writer who may never come.
    if stopped() {
        return Err(InputError::Cancelled {
            path: name.to_path_buf(),
        });
    }
    let mut bytes = Vec::new();
    bounded(r, limit, name, &mut bytes, stopped)?;
    String::from_utf8(bytes).map_err(|_| InputError::NotText {
        path: name.to_path_buf(),
    })
}

/// Read `r` to its end into `bytes`, refusing it once past `limit`. A read
/// interrupted by a signal is tried again unless `stopped()` says a stop
/// was requested (see the module doc).
fn bounded(
    mut r: impl Read,
    limit: u64,
    path: &Path,
    bytes: &mut Vec<u8>,
    stopped: fn() -> bool,
) -> Result<(), InputError> {
    let mut chunk = [0u8; 16 << 10];
    loop {
        let n = match r.read(&mut chunk) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
                if stopped() {
                    return Err(InputError::Cancelled {
                        path: path.to_path_buf(),
                    });
                }
                continue;
            }
            Err(e) => {
                return Err(InputError::Io {
                    path: path.to_path_buf(),
                    message: e.to_string(),
                })
            }
        };
        if bytes.len() as u64 + n as u64 > limit {
            return Err(InputError::TooLarge {
                path: path.to_path_buf(),
                limit,
            });
        }
        bytes.extend_from_slice(&chunk[..n]);
    }
}

fn regular(path: &Path, meta: &std::fs::Metadata) -> Result<(), InputError> {
    let t = meta.file_type();
    if t.is_file() {
        return Ok(());
    }
    Err(InputError::NotAFile {
        path: path.to_path_buf(),
        kind: file_kind(&t),
    })
}

/// What a file is, for an error line that refuses it ("a FIFO", "a
/// symbolic link", ...): one wording for readers and writers alike.
pub fn file_kind(t: &std::fs::FileType) -> &'static str {
    if t.is_symlink() {
        "a symbolic link"
    } else if t.is_dir() {
        "a folder"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_file() {
        "a regular file"
    } else {
        "not a file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("np-input-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_regular_file_is_read_whole() {
        let d = dir("plain");
        std::fs::write(d.join("a.json"), "{}").unwrap();
        assert_eq!(read_text(&d.join("a.json")).unwrap(), "{}");
        std::os::unix::fs::symlink(d.join("a.json"), d.join("link.json")).unwrap();
        assert_eq!(read_text(&d.join("link.json")).unwrap(), "{}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_fifo_a_folder_and_a_device_are_refused_without_blocking() {
        let d = dir("fifo");
        let fifo = d.join("run.json");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_text(&fifo).unwrap_err();
        assert!(e.to_string().contains("run.json: a FIFO"), "{e}");
        let e = read_text(&d).unwrap_err();
        assert!(e.to_string().contains("a folder"), "{e}");
        let e = read_text(Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("a character device"), "{e}");
        let e = read_text(&d.join("none")).unwrap_err();
        assert!(matches!(e, InputError::Missing { .. }), "{e}");
        assert_eq!(e.reason(), "no such file");
        let e = read_text(&fifo).unwrap_err();
        assert_eq!(e.reason(), "a FIFO, not a regular file");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_fifo_swapped_in_after_the_check_opens_without_waiting() {
        let d = dir("swap");
        let fifo = d.join("run.json");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // Against a hang only: an open that waits for a writer is given one
        // after a minute, and the assertions below fail.
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let guard = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                if rx.recv_timeout(std::time::Duration::from_secs(60)).is_err() {
                    let _ = std::fs::OpenOptions::new().write(true).open(&fifo);
                    return true;
                }
                false
            })
        };
        let file = open_unblocking(&fifo).unwrap();
        tx.send(()).unwrap();
        assert!(!guard.join().unwrap(), "the open waited for a writer");
        use std::os::fd::AsRawFd;
        // SAFETY: fcntl queries on a descriptor this test owns.
        let (fd_flags, fl_flags) = unsafe {
            (
                libc::fcntl(file.as_raw_fd(), libc::F_GETFD),
                libc::fcntl(file.as_raw_fd(), libc::F_GETFL),
            )
        };
        assert_ne!(fd_flags & libc::FD_CLOEXEC, 0);
        assert_ne!(fl_flags & libc::O_NONBLOCK, 0);
        let e = opened_within(file, &fifo, 10).unwrap_err();
        assert!(e.to_string().contains("run.json: a FIFO"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn the_limit_is_a_size_above_zero() {
        use std::ffi::OsStr;
        assert_eq!(limit_from(None).unwrap(), MAX_INPUT_BYTES);
        assert_eq!(limit_from(Some(OsStr::new("1KiB"))).unwrap(), 1024);
        assert_eq!(limit_from(Some(OsStr::new("1"))).unwrap(), 1);
        for bad in ["0", "lots", ""] {
            let e = limit_from(Some(OsStr::new(bad))).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("NUMAPROBE_MAX_INPUT={bad:?}: not a size; e.g. 1GiB or 512M")
            );
            assert_eq!(e.reason(), e.to_string());
        }
        let long = "9".repeat(500);
        let e = limit_from(Some(OsStr::new(&long))).unwrap_err();
        assert!(e.to_string().len() < 300, "{e}");
        // Without the variable, in this test process, the default.
        if std::env::var_os(LIMIT_ENV).is_none() {
            assert_eq!(limit().unwrap(), MAX_INPUT_BYTES);
        }
    }

    /// Refused by its size before a byte is read: a descriptor opened
    /// for writing only would fail any read, and is never read.
    #[test]
    fn a_file_past_the_limit_is_refused_before_a_byte_is_read() {
        let d = dir("by-size");
        let p = d.join("run.json");
        std::fs::write(&p, "0123456789A").unwrap();
        let write_only = || std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        let e = opened_within(write_only(), &p, 10).unwrap_err();
        assert!(matches!(e, InputError::TooLarge { limit: 10, .. }), "{e}");
        // At the limit exactly, it is read.
        std::fs::write(&p, "0123456789").unwrap();
        let e = opened_within(write_only(), &p, 10).unwrap_err();
        assert!(matches!(e, InputError::Io { .. }), "{e}");
        let file = std::fs::File::open(&p).unwrap();
        assert_eq!(opened_within(file, &p, 10).unwrap(), b"0123456789");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_file_opened_elsewhere_is_read_and_checked_alike() {
        let d = dir("opened");
        std::fs::write(d.join("run.json"), "{\"a\":1}").unwrap();
        std::fs::write(d.join("bad"), b"\xff").unwrap();
        let open = |n: &str| std::fs::File::open(d.join(n)).unwrap();
        let text = read_opened(open("run.json"), &d.join("run.json")).unwrap();
        assert_eq!(text, "{\"a\":1}");
        let e = read_opened(open("bad"), &d.join("bad")).unwrap_err();
        assert!(matches!(e, InputError::NotText { .. }), "{e}");
        let e = read_opened(std::fs::File::open(&d).unwrap(), &d).unwrap_err();
        assert!(e.to_string().contains("a folder"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_sparse_file_past_the_limit_is_refused_by_its_size() {
        let d = dir("sparse");
        let p = d.join("latency.json");
        let f = std::fs::File::create(&p).unwrap();
        f.set_len(MAX_INPUT_BYTES + 1).unwrap();
        let e = read_text(&p).unwrap_err();
        assert!(matches!(e, InputError::TooLarge { .. }), "{e}");
        assert!(e.to_string().contains("256 MiB"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    fn never() -> bool {
        false
    }

    fn always() -> bool {
        true
    }

    fn read_all(r: impl Read, limit: u64, stopped: fn() -> bool) -> Result<Vec<u8>, InputError> {
        let mut bytes = Vec::new();
        bounded(r, limit, Path::new("stdin"), &mut bytes, stopped).map(|()| bytes)
    }

    #[test]
    fn a_stream_stops_at_the_limit() {
        let src = std::io::repeat(b'x');
        let e = read_all(src, 10, never).unwrap_err();
        assert!(matches!(e, InputError::TooLarge { limit: 10, .. }), "{e}");
        let ok = read_all(&b"0123456789"[..], 10, never).unwrap();
        assert_eq!(ok, b"0123456789");
        // One byte over in the first read, then the end: refused all the same.
        let e = read_all(&b"0123456789A"[..], 10, never).unwrap_err();
        assert!(matches!(e, InputError::TooLarge { limit: 10, .. }), "{e}");
        assert!(
            e.to_string().starts_with("stdin: larger than the 10 B"),
            "{e}"
        );
        // Over the limit only in the second read.
        let two = Script(vec![Ok(b"01234".to_vec()), Ok(b"56789A".to_vec())]);
        let e = read_all(two, 10, never).unwrap_err();
        assert!(matches!(e, InputError::TooLarge { limit: 10, .. }), "{e}");
    }

    /// A reader that gives what it is told, one step a read, then its end.
    struct Script(Vec<std::io::Result<Vec<u8>>>);

    impl Read for Script {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.0.is_empty() {
                return Ok(0);
            }
            let bytes = self.0.remove(0)?;
            buf[..bytes.len()].copy_from_slice(&bytes);
            Ok(bytes.len())
        }
    }

    fn interrupted() -> std::io::Result<Vec<u8>> {
        Err(std::io::ErrorKind::Interrupted.into())
    }

    #[test]
    fn an_interrupted_read_goes_on_unless_a_stop_was_requested() {
        let script = || Script(vec![Ok(b"ab".to_vec()), interrupted(), Ok(b"cd".to_vec())]);
        assert_eq!(read_all(script(), 10, never).unwrap(), b"abcd");
        let e = read_all(script(), 10, always).unwrap_err();
        assert!(matches!(e, InputError::Cancelled { .. }), "{e}");
        assert_eq!(
            e.to_string(),
            "stdin: not read whole: stopped by SIGINT or SIGTERM"
        );
        assert_eq!(e.reason(), "not read whole: stopped by SIGINT or SIGTERM");
        // A stop request alone ends nothing: only a read it interrupted.
        let done = Script(vec![Ok(b"ab".to_vec())]);
        assert_eq!(read_all(done, 10, always).unwrap(), b"ab");
    }

    #[test]
    fn a_read_error_is_one_error_naming_the_input() {
        let broken = Script(vec![
            Ok(b"ab".to_vec()),
            Err(std::io::Error::other("the disk went away")),
        ]);
        let e = read_all(broken, 10, never).unwrap_err();
        assert!(matches!(e, InputError::Io { .. }), "{e}");
        assert_eq!(e.to_string(), "stdin: cannot read: the disk went away");
        assert_eq!(e.reason(), "the disk went away");
    }

    #[test]
    fn a_stream_asked_to_stop_before_it_is_read_is_not_read() {
        struct Untouchable;
        impl Read for Untouchable {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                panic!("read after a stop request");
            }
        }
        let e = stream_with(Untouchable, Path::new("stdin"), 10, always).unwrap_err();
        assert!(matches!(e, InputError::Cancelled { .. }), "{e}");
        let text = stream_with(&b"{}"[..], Path::new("stdin"), 10, never).unwrap();
        assert_eq!(text, "{}");
        let e = stream_with(&b"\xff"[..], Path::new("stdin"), 10, never).unwrap_err();
        assert!(matches!(e, InputError::NotText { .. }), "{e}");
        // The process's own flag is not raised in these tests.
        assert_eq!(read_stream(&b"[1]"[..], Path::new("stdin")).unwrap(), "[1]");
        let e = read_stream(&b"\xfe"[..], Path::new("stdin")).unwrap_err();
        assert_eq!(e.to_string(), "stdin: not UTF-8 text");
    }

    #[test]
    fn text_that_is_not_utf8_is_one_error() {
        let d = dir("utf8");
        std::fs::write(d.join("a"), b"\xff\xfe").unwrap();
        let e = read_text(&d.join("a")).unwrap_err();
        assert!(matches!(e, InputError::NotText { .. }), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
