//! SIGINT and SIGTERM: a stop request, not a kill. The handler records which
//! signal came and raises the library's cancel flag (a command that only
//! reads ends at once instead: `stop_now.rs`); the measurement stops
//! after its current sample, the command writes what it finished (marked
//! `complete: false`) and returns normally, and `main` then exits 130 or 143.
//!
//! The handler is installed with SA_RESETHAND: the first signal asks nicely,
//! a second one finds the default action back and ends a stuck program. It
//! is installed without SA_RESTART: a system call blocked when the signal
//! comes (a read, a wait, an open) returns EINTR instead of going back to
//! wait, so the code around it sees the stop request.

extern "C" fn on_signal(sig: libc::c_int) {
    // Async-signal-safe only: atomics, and in a command that only reads a
    // write(2) and _exit(2) (`stop_now`); nothing that allocates or locks.
    // The signal is recorded before the cancel flag is raised, so a command
    // that stops at the flag finds it when `main` asks.
    crate::stop_now::signalled(sig);
    numaprobe_core::cancel::request();
}

/// How the handler is installed (see the module doc): no SA_RESTART.
const FLAGS: libc::c_int = libc::SA_RESETHAND;

/// Install the handler for SIGINT and SIGTERM. A failure leaves the default
/// action (the process is killed), which is what it was before.
pub fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        set(sig, on_signal);
    }
}

/// Install `handler` for `sig` with [`FLAGS`].
fn set(sig: libc::c_int, handler: extern "C" fn(libc::c_int)) {
    // SAFETY: a zeroed sigaction with a plain handler; the handlers given
    // here only touch atomics.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler as libc::sighandler_t;
        sa.sa_flags = FLAGS;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(sig, &sa, std::ptr::null_mut());
    }
}

/// The first stop signal received (kept by `stop_now`, which the handler
/// tells), and the exit status it gives.
pub use crate::stop_now::{exit_status, received};

pub fn name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    fn action(sig: libc::c_int) -> libc::sigaction {
        // SAFETY: querying only (no new action).
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(sig, std::ptr::null(), &mut old);
            old
        }
    }

    fn disposition(sig: libc::c_int) -> libc::sighandler_t {
        action(sig).sa_sigaction
    }

    extern "C" fn nothing(_: libc::c_int) {}

    /// A read blocked on a pipe nobody writes to, with a signal handled
    /// (installed as [`install`] does) while it waits: the read must end
    /// with EINTR, not wait on. SIGUSR1 stands in for SIGTERM, so the
    /// test's process keeps its own stop signals. The handler is installed
    /// again before every send (SA_RESETHAND takes it away on delivery) and
    /// sent until the read has ended, so the test holds whenever the read
    /// starts (a read that does not end fails the test instead of hanging).
    #[test]
    fn a_handled_signal_ends_a_blocked_read() {
        install();
        assert_eq!(action(libc::SIGTERM).sa_flags & libc::SA_RESTART, 0);
        let mut fds = [0; 2];
        // SAFETY: pipe(2) fills the two descriptors.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        // SAFETY: pthread_self cannot fail.
        let me = unsafe { libc::pthread_self() };
        let wfd = fds[1];
        let sender = {
            let done = std::sync::Arc::clone(&done);
            std::thread::spawn(move || {
                for sent in 0.. {
                    if done.load(Ordering::SeqCst) {
                        break;
                    }
                    if sent == 1000 {
                        // Still blocked after 1000 signals: end the read
                        // with a byte, and the assertions below fail.
                        // SAFETY: a one-byte write to the pipe's open end.
                        unsafe { libc::write(wfd, [1u8].as_ptr().cast(), 1) };
                        break;
                    }
                    set(libc::SIGUSR1, nothing);
                    // SAFETY: signalling the reading thread of this test,
                    // which is alive until `done` is set.
                    unsafe { libc::pthread_kill(me, libc::SIGUSR1) };
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
            })
        };
        let mut b = [0u8; 1];
        // SAFETY: a read into a one-byte buffer this function owns.
        let n = unsafe { libc::read(fds[0], b.as_mut_ptr().cast(), 1) };
        let err = std::io::Error::last_os_error();
        done.store(true, Ordering::SeqCst);
        sender.join().unwrap();
        assert_eq!(n, -1);
        assert_eq!(err.raw_os_error(), Some(libc::EINTR));
        // SAFETY: closing the pipe's two descriptors.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
    }

    #[test]
    fn the_first_signal_asks_to_stop_and_a_second_would_kill() {
        install();
        assert_ne!(disposition(libc::SIGINT), libc::SIG_DFL);
        assert_ne!(disposition(libc::SIGTERM), libc::SIG_DFL);
        // SAFETY: our handler is installed; it only stores atomics.
        assert_eq!(unsafe { libc::raise(libc::SIGINT) }, 0);
        assert_eq!(received(), Some(libc::SIGINT));
        assert!(numaprobe_core::cancel::requested());
        assert_eq!(exit_status(libc::SIGINT), 130);
        assert_eq!(exit_status(libc::SIGTERM), 143);
        // SA_RESETHAND: the next SIGINT takes the default action (ends the
        // process), SIGTERM is still handled.
        assert_eq!(disposition(libc::SIGINT), libc::SIG_DFL);
        assert_ne!(disposition(libc::SIGTERM), libc::SIG_DFL);
    }
}
