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
}

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
        }
    }
}

/// The limit in force: [`LIMIT_ENV`] when set, else [`MAX_INPUT_BYTES`].
pub fn limit() -> Result<u64, InputError> {
    match std::env::var_os(LIMIT_ENV) {
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
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(io)?;
    opened_within(file, path, limit)
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
    bounded(file, limit, path)
}

/// At most `limit` bytes of a stream (stdin) as text: more is an error.
pub fn read_stream(r: impl Read, name: &Path) -> Result<String, InputError> {
    let bytes = bounded(r, limit()?, name)?;
    String::from_utf8(bytes).map_err(|_| InputError::NotText {
        path: name.to_path_buf(),
    })
}

fn bounded(r: impl Read, limit: u64, path: &Path) -> Result<Vec<u8>, InputError> {
    let mut bytes = Vec::new();
    r.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| InputError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
    if bytes.len() as u64 > limit {
        return Err(InputError::TooLarge {
            path: path.to_path_buf(),
            limit,
        });
    }
    Ok(bytes)
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

    #[test]
    fn a_stream_stops_at_the_limit() {
        let src = std::io::repeat(b'x');
        let e = bounded(src, 10, Path::new("stdin")).unwrap_err();
        assert!(matches!(e, InputError::TooLarge { limit: 10, .. }), "{e}");
        let ok = bounded(&b"0123456789"[..], 10, Path::new("stdin")).unwrap();
        assert_eq!(ok.len(), 10);
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
