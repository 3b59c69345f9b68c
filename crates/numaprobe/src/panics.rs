//! A panic is a bug in numaprobe, never the user's doing: it must end the
//! command cleanly, with what was measured saved, and say so in one line.
//! The hook installed here records that a panic happened, prints one line
//! (the message and where, clipped; no backtrace unless `RUST_BACKTRACE`
//! asks for one) with a request to report it, and raises the library's
//! cancel flag, so every other measuring thread winds down after its sample
//! and the command saves what it finished as it does on Ctrl-C. `main` then
//! exits 1, whatever the command returned.

use std::sync::atomic::{AtomicBool, Ordering};

static HAPPENED: AtomicBool = AtomicBool::new(false);

/// Install the hook (once, before the command runs).
pub fn install() {
    let default = std::panic::take_hook();
    let verbose = std::env::var_os("RUST_BACKTRACE").is_some_and(|v| v != "0");
    std::panic::set_hook(Box::new(move |info| {
        // First: the rest of the program stops measuring, whatever the
        // printing below does.
        numaprobe_core::cancel::request();
        let first = !HAPPENED.swap(true, Ordering::SeqCst);
        if verbose {
            default(info);
        }
        // The first panic is the cause; later ones (threads that found a
        // lock poisoned by it) would only repeat it.
        if first {
            // On a terminal the progress bar holds the current line: clear
            // it, so the line stands alone (the bar redraws below it).
            let clear = if crate::output::stderr_is_terminal() {
                "\r\x1b[2K"
            } else {
                ""
            };
            eprintln!("{clear}{}", line(info));
        }
    }));
}

/// Whether a panic happened anywhere in the process.
pub fn happened() -> bool {
    HAPPENED.load(Ordering::SeqCst)
}

/// The one line said for a panic: its message's first line, where, and what
/// to do.
fn line(info: &std::panic::PanicHookInfo<'_>) -> String {
    let payload = info.payload();
    let msg = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)");
    let msg = msg.lines().next().unwrap_or("");
    let at = info
        .location()
        .map(|l| format!(" at {}:{}", l.file(), l.line()))
        .unwrap_or_default();
    let thread = std::thread::current()
        .name()
        .map(|n| format!(" in thread '{n}'"))
        .unwrap_or_default();
    crate::output::clip_line(&format!(
        "numaprobe: internal error{thread}: {msg}{at}; the command stops and keeps what it finished. \
         This is a bug in numaprobe: please report it with the command line and this message"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_recorded_said_in_one_line_and_stops_the_measurement() {
        install();
        let said = std::sync::Arc::new(std::sync::Mutex::new(None));
        let hook = std::panic::take_hook();
        // The line as the real hook builds it; then the real hook.
        let s2 = said.clone();
        std::panic::set_hook(Box::new(move |info| {
            *s2.lock().unwrap() = Some(line(info));
            hook(info);
        }));
        let long = "x".repeat(5000);
        let r = std::thread::spawn(move || panic!("worker lost\nsecond line {long}")).join();
        let _ = std::panic::take_hook();
        assert!(r.is_err());
        assert!(happened());
        assert!(numaprobe_core::cancel::requested());
        let said = said.lock().unwrap().clone().expect("the hook ran");
        assert!(!said.contains('\n'), "{said}");
        assert!(said.starts_with("numaprobe: internal error"), "{said}");
        assert!(said.contains("worker lost"), "{said}");
        assert!(!said.contains("second line"), "{said}");
        assert!(said.contains("panics.rs:"), "{said}");
        assert!(said.contains("please report"), "{said}");
    }
}
