//! SIGINT and SIGTERM: a stop request, not a kill. The handler records which
//! signal came and raises the library's cancel flag; the measurement stops
//! after its current sample, the command writes what it finished (marked
//! `complete: false`) and returns normally, and `main` then exits 130 or 143.
//!
//! The handler is installed with SA_RESETHAND: the first signal asks nicely,
//! a second one finds the default action back and ends a stuck program.

use std::sync::atomic::{AtomicI32, Ordering};

/// The first stop signal received, 0 while none.
static RECEIVED: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    // Async-signal-safe only: two atomic stores, nothing that allocates or locks.
    let _ = RECEIVED.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
    numaprobe_core::cancel::request();
}

/// Install the handler for SIGINT and SIGTERM. A failure leaves the default
/// action (the process is killed), which is what it was before.
pub fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction with a plain handler; the handler only
        // touches atomics.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            sa.sa_flags = libc::SA_RESETHAND | libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// The stop signal received, if any.
pub fn received() -> Option<i32> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// The conventional exit status after a signal: 128 + its number.
pub fn exit_status(sig: i32) -> u8 {
    (128 + sig).clamp(0, 255) as u8
}

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

    fn disposition(sig: libc::c_int) -> libc::sighandler_t {
        // SAFETY: querying only (no new action).
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(sig, std::ptr::null(), &mut old);
            old.sa_sigaction
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
