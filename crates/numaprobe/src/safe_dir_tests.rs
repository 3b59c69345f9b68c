//! Tests of the folder handle: writes land in the folder opened, never
//! through a link, a FIFO or a device, and nothing blocks.

use super::*;
use crate::output::exit_code;
use std::os::unix::fs::FileTypeExt;

fn tempdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("np-safedir-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn mkfifo(p: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
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
    let w = random_word().unwrap();
    assert!(is_temp_of(&format!(".x.{w}.tmp"), "x"), "{w}");
}

#[test]
fn a_write_replaces_a_file_and_refuses_anything_else() {
    let d = tempdir("replace");
    let dir = SafeDir::own(&d, "--report-dir", false).unwrap();
    dir.write("run.json", b"one").unwrap();
    dir.write("run.json", b"two").unwrap();
    assert_eq!(std::fs::read_to_string(d.join("run.json")).unwrap(), "two");
    assert_eq!(dir.names().unwrap().len(), 1, "no temporary file is left");
    std::fs::create_dir(d.join("sub")).unwrap();
    let err = dir.write("sub", b"x").unwrap_err();
    assert_eq!(exit_code(&err), 2);
    assert!(err.to_string().contains("a folder"), "{err}");
    std::os::unix::fs::symlink(d.join("run.json"), d.join("link")).unwrap();
    let err = dir.write("link", b"x").unwrap_err();
    assert!(err.to_string().contains("a symbolic link"), "{err}");
    assert_eq!(std::fs::read_to_string(d.join("run.json")).unwrap(), "two");
    mkfifo(&d.join("fifo"));
    let err = dir.write("fifo", b"x").unwrap_err();
    assert!(err.to_string().contains("a FIFO"), "{err}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_folder_swapped_for_a_link_keeps_receiving_nothing() {
    let d = tempdir("swap");
    let r = d.join("r");
    std::fs::create_dir(&r).unwrap();
    let elsewhere = d.join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let dir = SafeDir::own(&r, "--report-dir", false).unwrap();
    std::fs::rename(&r, d.join("moved")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &r).unwrap();
    dir.write("run.json", b"{}").unwrap();
    assert!(d.join("moved/run.json").exists());
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    // Opened anew, the link is refused.
    let err = SafeDir::own(&r, "--report-dir", true).unwrap_err();
    assert_eq!(exit_code(&err), 2);
    assert!(err.to_string().contains("a symbolic link"), "{err}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_folder_of_another_user_is_refused() {
    let d = tempdir("owner");
    let theirs = d.join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    // Only root can give a folder away; another user's `/` stands for it
    // elsewhere (the check refuses before anything is made or written).
    let other = if std::os::unix::fs::chown(&theirs, Some(euid() + 4242), None).is_ok() {
        Some((theirs, euid() + 4242))
    } else {
        use std::os::unix::fs::MetadataExt;
        let root = std::fs::metadata("/").unwrap().uid();
        (root != euid()).then(|| (PathBuf::from("/"), root))
    };
    match other {
        Some((p, uid)) => {
            for create in [false, true] {
                let err = SafeDir::own(&p, "--report-dir", create).unwrap_err();
                assert_eq!(exit_code(&err), 2);
                assert!(
                    err.to_string().contains(&format!("owned by uid {uid}")),
                    "{err}"
                );
            }
        }
        None => eprintln!("skipped: needs root to chown a folder to another uid"),
    }
    SafeDir::own(&d.join("new/deeper"), "--report-dir", true).unwrap();
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_named_output_is_never_written_through_a_link_a_fifo_or_a_device() {
    let d = tempdir("named");
    let fifo = d.join("fifo");
    mkfifo(&fifo);
    let link = d.join("out.json");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    // No reader on the FIFO: an open for writing would block forever.
    for p in [&link, &fifo] {
        let err = write_file(p, b"x").unwrap_err();
        assert_eq!(exit_code(&err), 2, "{err}");
    }
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink("/dev/full", &link).unwrap();
    let err = write_file(&link, b"x").unwrap_err();
    assert!(err.to_string().contains("a symbolic link"), "{err}");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let err = write_file(Path::new("/dev/null"), b"x").unwrap_err();
    assert!(err.to_string().contains("a character device"), "{err}");
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    // A plain name is replaced; a hard link's other name keeps its text.
    let plain = d.join("plain");
    std::fs::write(&plain, "theirs").unwrap();
    std::fs::hard_link(&plain, d.join("other")).unwrap();
    write_file(&plain, b"mine").unwrap();
    assert_eq!(std::fs::read_to_string(&plain).unwrap(), "mine");
    assert_eq!(std::fs::read_to_string(d.join("other")).unwrap(), "theirs");
    let err = write_file(&d.join("missing/x"), b"x").unwrap_err();
    assert_eq!(exit_code(&err), 1, "{err}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn only_regular_files_are_removed_and_read() {
    let d = tempdir("remove");
    let dir = SafeDir::own(&d, "--report-dir", false).unwrap();
    let keep = tempdir("remove-outside");
    std::fs::write(keep.join("precious"), "x").unwrap();
    std::os::unix::fs::symlink(keep.join("precious"), d.join("link")).unwrap();
    dir.remove_file("link").unwrap();
    assert!(d.join("link").symlink_metadata().is_ok());
    assert!(keep.join("precious").exists());
    dir.write("f", b"x").unwrap();
    assert_eq!(dir.read_text("f").unwrap().as_deref(), Some("x"));
    dir.remove_file("f").unwrap();
    assert!(!d.join("f").exists());
    assert_eq!(dir.read_text("f").unwrap(), None);
    mkfifo(&d.join("fifo"));
    let err = dir.read_text("fifo").unwrap_err();
    assert!(err.to_string().contains("a FIFO"), "{err}");
    let err = dir.read_text("link").unwrap_err();
    assert!(err.to_string().contains("a symbolic link"), "{err}");
    std::fs::remove_dir_all(&d).unwrap();
    std::fs::remove_dir_all(&keep).unwrap();
}

#[test]
fn a_file_past_the_input_limit_is_refused_by_its_size_in_one_line() {
    let d = tempdir("too-large");
    let dir = SafeDir::own(&d, "--report-dir", false).unwrap();
    let f = std::fs::File::create(d.join("latency.json")).unwrap();
    // Sparse: refused by its size, so nothing of it is read.
    f.set_len(numaprobe_core::model::input::MAX_INPUT_BYTES + 1)
        .unwrap();
    let err = dir.read_text("latency.json").unwrap_err();
    assert_eq!(exit_code(&err), 2);
    let said = format!("{err:#}");
    assert!(!said.contains('\n'), "{said}");
    assert!(
        said.contains(&d.join("latency.json").display().to_string()),
        "{said}"
    );
    assert!(said.contains("256 MiB"), "{said}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn an_abandoned_write_fails_at_once_and_is_not_tried_again() {
    let dir = tempdir("abandon");
    let mut file = std::fs::File::create(dir.join("f")).unwrap();
    let mut w = Abandonable {
        file: &mut file,
        abandon: || false,
    };
    w.write_all(b"kept").unwrap();
    w.flush().unwrap();
    let mut w = Abandonable {
        file: &mut file,
        abandon: || true,
    };
    // `write_all` tries again after `Interrupted`: any other kind ends it.
    let e = w.write_all(b"more").unwrap_err();
    assert_ne!(e.kind(), std::io::ErrorKind::Interrupted);
    assert!(e.to_string().contains("stopped by a signal"), "{e}");
    assert_eq!(std::fs::read(dir.join("f")).unwrap(), b"kept");
    let _ = std::fs::remove_dir_all(&dir);
}
