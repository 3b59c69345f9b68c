//! Output folders held as handles. A folder numaprobe writes into is opened
//! once, and every file in it is created, replaced, read or removed
//! relative to that handle (`openat`, `renameat`, `unlinkat`): no path is
//! resolved twice, so a folder swapped for a symlink mid-run receives
//! nothing (the handle still names the original).
//!
//! A file is written whole or not at all: a new file under an unpredictable
//! name beside it (`.NAME.XXXXXX.tmp`, created `O_CREAT|O_EXCL|O_NOFOLLOW`,
//! so nobody can plant a link or FIFO under it), flushed to disk, then
//! renamed over the name. A rename replaces whatever holds the name and
//! never writes through it; a name held by anything but a regular file (a
//! symlink, a FIFO, a device, a folder) is refused before that, so the
//! user hears of it. Nothing here ever opens a name that could block: a
//! look at a name opens it `O_PATH`, a read opens it `O_NONBLOCK`.
//!
//! A folder numaprobe owns (a report or fleet folder, [`SafeDir::own`]) is
//! refused when it is a symlink or belongs to another user: anyone who can
//! write into a folder can plant links in it.

use crate::bad_input::usage;
use anyhow::Context;
use numaprobe_core::model::input::file_kind;
use rustix::fs::{AtFlags, Mode, OFlags};
use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

/// An open folder and the path it was opened by (for messages only).
#[derive(Debug)]
pub struct SafeDir {
    fd: OwnedFd,
    path: PathBuf,
}

/// The random part of a temporary name: `.NAME.` + this many letters or
/// digits + `.tmp` (what [`is_temp_of`] recognises).
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

/// The effective user id: the owner a folder of numaprobe's must have.
fn euid() -> u32 {
    // SAFETY: geteuid cannot fail and touches no memory.
    unsafe { libc::geteuid() }
}

fn io_error(e: rustix::io::Errno) -> std::io::Error {
    std::io::Error::from(e)
}

impl SafeDir {
    /// Open a folder numaprobe writes its own files into (`--report-dir`,
    /// `report DIR`, a fleet folder); `option` names it in error lines. With
    /// `create`, a missing folder is made (with its parents). Its last
    /// component is never followed: a symlink is refused, as is a folder
    /// owned by another user (exit 2, one line saying what to do).
    pub fn own(path: &Path, option: &str, create: bool) -> anyhow::Result<SafeDir> {
        let shown = format!("{option} {}", path.display());
        let not_a_folder = || -> Option<anyhow::Error> {
            let m = std::fs::symlink_metadata(path).ok()?;
            if m.file_type().is_symlink() {
                Some(usage(format!(
                    "{shown}: a symbolic link; numaprobe writes only into the folder itself, never through a link: give the folder it points to, or a new one"
                )))
            } else if !m.is_dir() {
                Some(usage(format!("{shown}: exists and is not a folder")))
            } else {
                None
            }
        };
        if let Some(e) = not_a_folder() {
            return Err(e);
        }
        if create {
            std::fs::create_dir_all(path)
                .with_context(|| format!("cannot create the folder {}", path.display()))?;
        }
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = match rustix::fs::open(path, flags, Mode::empty()) {
            Ok(fd) => fd,
            // Swapped for a link since the look above: said the same way.
            Err(e) => {
                return Err(not_a_folder().unwrap_or_else(|| {
                    anyhow::Error::new(io_error(e))
                        .context(format!("cannot open the folder {}", path.display()))
                }))
            }
        };
        let st = rustix::fs::fstat(&fd)
            .map_err(io_error)
            .with_context(|| format!("cannot read the folder {}", path.display()))?;
        let me = euid();
        if st.st_uid != me {
            return Err(usage(format!(
                "{shown}: owned by uid {}, not by uid {me} that numaprobe runs as; it writes only into its own user's folders (anyone who can write into one can plant links in it): choose another folder",
                st.st_uid
            )));
        }
        Ok(SafeDir {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// Open the folder of a file the user named (`-o FILE`), by the path as
    /// given, once.
    pub fn of_file(file: &Path) -> anyhow::Result<SafeDir> {
        let path = match file.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = rustix::fs::open(path, flags, Mode::empty())
            .map_err(io_error)
            .with_context(|| format!("cannot write {}", file.display()))?;
        Ok(SafeDir {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// The path the folder was opened by, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A subfolder `name` (one component), made when missing with `create`;
    /// a symlink there is refused, never followed.
    pub fn subdir(&self, name: &str, create: bool) -> anyhow::Result<SafeDir> {
        let path = self.path.join(name);
        if create {
            match rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(0o777)) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(e) => {
                    return Err(anyhow::Error::new(io_error(e))
                        .context(format!("cannot create {}", path.display())))
                }
            }
        }
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match rustix::fs::openat(&self.fd, name, flags, Mode::empty()) {
            Ok(fd) => Ok(SafeDir { fd, path }),
            Err(e) => match self.entry(name) {
                Ok(Some(m)) if !m.is_dir() => Err(usage(format!(
                    "{}: {}, not a folder; numaprobe never writes through a link: remove it or choose another folder",
                    path.display(),
                    file_kind(&m.file_type())
                ))),
                _ => Err(anyhow::Error::new(io_error(e))
                    .context(format!("cannot open {}", path.display()))),
            },
        }
    }

    /// A new subfolder `name` (one component), made here and now: None
    /// when something already has the name, so a folder someone prepared
    /// under it is never taken for this one.
    pub fn new_subdir(&self, name: &str) -> anyhow::Result<Option<SafeDir>> {
        match rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(0o777)) {
            Ok(()) => self.subdir(name, false).map(Some),
            Err(rustix::io::Errno::EXIST) => Ok(None),
            Err(e) => Err(anyhow::Error::new(io_error(e))
                .context(format!("cannot create {}", self.path.join(name).display()))),
        }
    }

    /// Move the regular file `name` into `to` under the same name, never
    /// over anything there (`renameat2` with `RENAME_NOREPLACE`); anything
    /// but a regular file under the name is left where it is (false).
    pub fn move_file(&self, name: &str, to: &SafeDir) -> std::io::Result<bool> {
        if !self.entry(name)?.is_some_and(|m| m.is_file()) {
            return Ok(false);
        }
        rustix::fs::renameat_with(
            &self.fd,
            name,
            &to.fd,
            name,
            rustix::fs::RenameFlags::NOREPLACE,
        )
        .map_err(io_error)?;
        Ok(true)
    }

    /// A path that names the open folder itself, not whatever its path
    /// names later, for readers that take a path (Linux's `/proc/self/fd`;
    /// the path it was opened by where /proc is not mounted).
    pub fn handle_path(&self) -> PathBuf {
        use std::os::fd::AsRawFd;
        let p = PathBuf::from(format!("/proc/self/fd/{}", self.fd.as_raw_fd()));
        if p.is_dir() {
            p
        } else {
            self.path.clone()
        }
    }

    /// What `name` is in the folder, not following a link; None when
    /// nothing has that name. The look opens it `O_PATH`: a FIFO or device
    /// is never really opened.
    pub fn entry(&self, name: impl AsRef<OsStr>) -> std::io::Result<Option<std::fs::Metadata>> {
        let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match rustix::fs::openat(&self.fd, name.as_ref(), flags, Mode::empty()) {
            Ok(fd) => std::fs::File::from(fd).metadata().map(Some),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(io_error(e)),
        }
    }

    /// The names in the folder (not `.` and `..`).
    pub fn names(&self) -> std::io::Result<Vec<OsString>> {
        let mut dir = rustix::fs::Dir::read_from(&self.fd).map_err(io_error)?;
        let mut v = Vec::new();
        while let Some(e) = dir.read() {
            let e = e.map_err(io_error)?;
            let n = e.file_name().to_bytes();
            if n != b"." && n != b".." {
                v.push(OsString::from_vec(n.to_vec()));
            }
        }
        Ok(v)
    }

    /// Open `name` with `flags` (O_NOFOLLOW and O_CLOEXEC are added).
    pub fn open(&self, name: &str, flags: OFlags, mode: u32) -> std::io::Result<std::fs::File> {
        let flags = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        rustix::fs::openat(&self.fd, name, flags, Mode::from_raw_mode(mode))
            .map(std::fs::File::from)
            .map_err(io_error)
    }

    /// The text of `name` when it is there: anything but a regular file
    /// under that name is refused (exit 2), and so is a file past the input
    /// limit. Opened without blocking and without following a link.
    pub fn read_text(&self, name: &str) -> anyhow::Result<Option<String>> {
        let path = self.path.join(name);
        let file = match self.open(name, OFlags::RDONLY | OFlags::NONBLOCK, 0) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(match self.entry(name) {
                    Ok(Some(m)) if !m.is_file() => not_regular(&path, &m),
                    _ => anyhow::Error::new(e).context(format!("cannot read {}", path.display())),
                })
            }
        };
        let m = file
            .metadata()
            .with_context(|| format!("cannot read {}", path.display()))?;
        if !m.is_file() {
            return Err(not_regular(&path, &m));
        }
        numaprobe_core::model::input::read_opened(file, &path)
            .map(Some)
            .map_err(|e| usage(e.to_string()))
    }

    /// Remove `name` if it is a regular file (`unlinkat`, which never
    /// follows a link); anything else under the name is left alone.
    pub fn remove_file(&self, name: impl AsRef<OsStr>) -> std::io::Result<()> {
        let name = name.as_ref();
        if !self.entry(name)?.is_some_and(|m| m.is_file()) {
            return Ok(());
        }
        match rustix::fs::unlinkat(&self.fd, name, AtFlags::empty()) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
            Err(e) => Err(io_error(e)),
        }
    }

    /// Remove the empty subfolder `name` (used to leave no empty folder of
    /// this run's own behind).
    pub fn remove_empty_dir(&self, name: &str) -> std::io::Result<()> {
        rustix::fs::unlinkat(&self.fd, name, AtFlags::REMOVEDIR).map_err(io_error)
    }

    /// Write `bytes` as the whole of `name` (see the module doc). A name
    /// held by anything but a regular file is refused (exit 2) naming it.
    pub fn write(&self, name: impl AsRef<OsStr>, bytes: &[u8]) -> anyhow::Result<()> {
        self.write_with(name, |f| f.write_all(bytes))
    }

    /// [`SafeDir::write`] of what `fill` writes, streamed to the file as it
    /// comes: the same checks, temporary and rename, without the whole
    /// content held first.
    pub fn write_with(
        &self,
        name: impl AsRef<OsStr>,
        fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> anyhow::Result<()> {
        let name = name.as_ref();
        let path = self.path.join(name);
        if let Some(m) = self
            .entry(name)
            .with_context(|| format!("cannot write {}", path.display()))?
        {
            if !m.is_file() {
                return Err(not_regular(&path, &m));
            }
        }
        self.replace_with(name, fill)
            .with_context(|| format!("cannot write {}", path.display()))
    }

    fn replace_with(
        &self,
        name: &OsStr,
        fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        // A stop signal waits until the file is in place or its temporary
        // removed (dropped after the guard below).
        let _hold = crate::stop_now::Hold::take();
        let (mut file, tmp) = self.new_temp(name)?;
        // Until the rename, the temporary file is removed on every way out
        // (an error, or a panic: the test build's fault switch): the last
        // whole version stays, nothing half-written is left.
        let guard = TempGuard {
            dir: self,
            name: Some(&tmp),
        };
        let mut buffered = std::io::BufWriter::with_capacity(
            1 << 16,
            Abandonable {
                file: &mut file,
                abandon: crate::stop_now::abandon_writes,
            },
        );
        fill(&mut buffered)?;
        buffered.flush()?;
        drop(buffered);
        numaprobe_core::fault::panic_at(numaprobe_core::fault::OUTPUT);
        file.sync_all()?;
        drop(file);
        rustix::fs::renameat(&self.fd, &tmp, &self.fd, name).map_err(io_error)?;
        std::mem::forget(guard);
        Ok(())
    }

    /// A new, empty file under an unpredictable name beside `name`.
    fn new_temp(&self, name: &OsStr) -> std::io::Result<(std::fs::File, OsString)> {
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW;
        let mut last = None;
        for _ in 0..64 {
            let mut tmp = OsString::from(".");
            tmp.push(name);
            tmp.push(".");
            tmp.push(random_word()?);
            tmp.push(".tmp");
            // 0666 before the umask, as File::create would have it: a
            // report is as readable as any file the user writes.
            match rustix::fs::openat(
                &self.fd,
                tmp.as_os_str(),
                flags | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o666),
            ) {
                Ok(fd) => return Ok((std::fs::File::from(fd), tmp)),
                Err(e @ rustix::io::Errno::EXIST) => last = Some(e),
                Err(e) => return Err(io_error(e)),
            }
        }
        Err(io_error(last.unwrap_or(rustix::io::Errno::EXIST)))
    }
}

impl AsFd for SafeDir {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// Removes a temporary file that was not renamed into place.
struct TempGuard<'a> {
    dir: &'a SafeDir,
    name: Option<&'a OsStr>,
}

impl Drop for TempGuard<'_> {
    fn drop(&mut self) {
        if let Some(n) = self.name.take() {
            let _ = rustix::fs::unlinkat(&self.dir.fd, n, AtFlags::empty());
        }
    }
}

/// Six random letters or digits from the kernel's generator.
fn random_word() -> std::io::Result<String> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut raw = [0u8; TEMP_RANDOM];
    let mut got = 0;
    while got < raw.len() {
        // SAFETY: getrandom writes at most the given length into the buffer.
        let n = unsafe { libc::getrandom(raw[got..].as_mut_ptr().cast(), raw.len() - got, 0) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
            continue;
        }
        got += n as usize;
    }
    Ok(raw
        .iter()
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect())
}

fn not_regular(path: &Path, m: &std::fs::Metadata) -> anyhow::Error {
    usage(format!(
        "{}: {}, not a regular file; numaprobe writes only regular files in a report folder: remove it or choose another folder",
        path.display(),
        file_kind(&m.file_type())
    ))
}

/// The refusal of a named output that is not a regular file (exit 2).
pub fn not_an_output(path: &Path, m: &std::fs::Metadata) -> anyhow::Error {
    usage(format!(
        "{}: {}, not a regular file; numaprobe writes an output only as a regular file it replaces, never through a link, a pipe or a device: name another file, or give `-` and redirect standard output",
        path.display(),
        file_kind(&m.file_type())
    ))
}

/// A file being written that fails its next write once `abandon` says so
/// (`stop_now::abandon_writes`): the temporary is then removed and the
/// stop goes ahead, a piece (64 KiB) after it came.
struct Abandonable<'a> {
    file: &'a mut std::fs::File,
    abandon: fn() -> bool,
}

impl Write for Abandonable<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if (self.abandon)() {
            // Not `Interrupted`: `write_all` would try again.
            return Err(std::io::Error::other("stopped by a signal"));
        }
        self.file.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// Write a file the user named (`--output`, `--graph-svg`, ...): its folder
/// is opened once, and the file replaced relative to it. A symlink, FIFO or
/// device under the name is refused (exit 2): numaprobe never writes
/// through one, so a link planted in a shared folder cannot send a root
/// run's output into a pipe, a device or another file, and nothing blocks.
/// `-` (standard output) is the caller's.
pub fn write_file(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    write_file_with(path, |f| f.write_all(bytes))
}

/// [`write_file`] of what `fill` writes, streamed to the file as it comes.
pub fn write_file_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let Some(name) = path.file_name() else {
        return Err(usage(format!(
            "{}: names no file; give a file name, or `-` for standard output",
            path.display()
        )));
    };
    let dir = SafeDir::of_file(path)?;
    match dir
        .entry(name)
        .with_context(|| format!("cannot write {}", path.display()))?
    {
        Some(m) if !m.is_file() => Err(not_an_output(path, &m)),
        _ => dir
            .replace_with(name, fill)
            .with_context(|| format!("cannot write {}", path.display())),
    }
}

#[cfg(test)]
#[path = "safe_dir_tests.rs"]
mod tests;
