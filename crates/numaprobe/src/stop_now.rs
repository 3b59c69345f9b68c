//! SIGINT and SIGTERM in a command that only reads (a document, a matrix, a
//! dump) and writes its answer at the end: the signal ends the process at
//! once, from the handler, unless an output is being written; then it ends
//! as soon as that write is done.
//!
//! Why the handler ends the process rather than raise the cancel flag and
//! let the code stop itself, as a measurement does (`signals.rs`): such a
//! command has nothing to save until its answer is whole, and its time goes
//! into parsing and analysis (a parse of tens of megabytes, the levels of a
//! large matrix, a page's rendering) with no place that asks for the flag.
//! Checks inside those loops would have to reach into every parser and
//! analysis of the library, each one a place to forget, and a serde parse
//! cannot be stopped from inside at all; ending the process reaches all of
//! them at once, at any depth and on any thread.
//!
//! Why that is sound: every output (a file replaced through its temporary,
//! an answer on standard output) is written inside a [`Hold`]. While one is
//! held the handler only records the signal, and the last hold's end ends
//! the process, so a file is either renamed into place whole or was never
//! begun, and its temporary is never left behind. One atomic word holds the
//! mode, the holds and the decision to end, so the handler and a writer on
//! another thread cannot both win: once the process is ending no hold can
//! begin. The handler writes a fixed line with write(2) and calls _exit(2):
//! nothing that allocates or locks. A second signal during a hold finds
//! the default action back (SA_RESETHAND) and kills, as it does for a
//! measurement: the way to end a write stuck on a full pipe.
//!
//! Measuring commands never enter this mode: what they measured is worth a
//! partial document, so they keep the graceful stop.

use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

/// The first stop signal received, 0 while none. The handler
/// (`signals.rs`) records it here through [`signalled`], and `main` reads it
/// back through `signals`: one record of it, in the module the handler
/// depends on, not the other way round.
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// The stop signal received, if any.
pub fn received() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// The conventional exit status after a signal: 128 + its number.
pub fn exit_status(sig: i32) -> u8 {
    (128 + sig).clamp(0, 255) as u8
}

/// Record `sig` (the first one counts), then [`end_if_free`]: what the
/// handler calls. Async-signal-safe.
pub fn signalled(sig: i32) {
    let _ = SIGNAL.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
    if let Some(first) = received() {
        end_if_free(first);
    }
}

/// The mode, the ending decision, whether a write has begun, and the number
/// of holds, in one word (see the module doc).
static STATE: AtomicU32 = AtomicU32::new(0);
/// This command only reads: a signal ends it.
const QUICK: u32 = 1 << 31;
/// The process is ending: no hold may begin.
const ENDING: u32 = 1 << 30;
/// A hold was taken once: some output may be whole already.
const WROTE: u32 = 1 << 29;
/// The holds now taken.
const HOLDS: u32 = WROTE - 1;

/// Enter the mode for the rest of the process (called before the command
/// starts reading). A signal that came before is acted on now.
pub fn nothing_to_save() {
    STATE.fetch_or(QUICK, Ordering::SeqCst);
    if let Some(sig) = received() {
        end_if_free(sig);
    }
}

/// In the mode and with no hold taken: write the line and end the process
/// with 128 + `sig`. Otherwise nothing. Async-signal-safe.
fn end_if_free(sig: i32) {
    let mut s = STATE.load(Ordering::SeqCst);
    loop {
        if !may_end(s) {
            return;
        }
        match STATE.compare_exchange(s, ending(s), Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => break,
            Err(now) => s = now,
        }
    }
    let line = message(sig, s & WROTE != 0);
    // SAFETY: write(2) of a static buffer and _exit(2), both
    // async-signal-safe; _exit runs no destructor and flushes nothing, and
    // no output is open (no hold is taken).
    unsafe {
        libc::write(2, line.as_ptr().cast(), line.len());
        libc::_exit(i32::from(exit_status(sig)));
    }
}

/// State `s` once the process has decided to end: no hold may begin after
/// (`Hold::take` parks), and no second decision is taken.
fn ending(s: u32) -> u32 {
    s | ENDING
}

/// State `s` once a hold is taken: one hold more, and an output begun.
fn held(s: u32) -> u32 {
    (s + 1) | WROTE
}

/// May the process end in state `s`: in the mode, not already ending, no
/// output being written.
fn may_end(s: u32) -> bool {
    s & QUICK != 0 && s & (ENDING | HOLDS) == 0
}

/// The line said on the way out: whether any output may have been written
/// whole before the signal.
fn message(sig: i32, wrote: bool) -> &'static [u8] {
    match (sig == libc::SIGINT, wrote) {
        (true, false) => b"numaprobe: interrupted by SIGINT before anything was written\n",
        (false, false) => b"numaprobe: interrupted by SIGTERM before anything was written\n",
        (true, true) => b"numaprobe: interrupted by SIGINT; what was already written is whole, the rest was not written\n",
        (false, true) => b"numaprobe: interrupted by SIGTERM; what was already written is whole, the rest was not written\n",
    }
}

/// Should a file being written be given up: a stop signal came while a
/// command that only reads holds the file's write. Its temporary is then
/// removed and the hold ended, which ends the process, where finishing a
/// long streamed document first kept the user waiting for a file that a
/// stop says is not wanted. A measuring command's files are always
/// finished: they keep what it measured.
pub fn abandon_writes() -> bool {
    abandons(
        received(),
        STATE.load(Ordering::SeqCst),
        WHOLE.load(Ordering::SeqCst),
    )
}

/// Whether a write is given up with `signal` received in state `s` and
/// `whole` writes that must be finished going on: only in the mode, never
/// in a measuring command, never in a write taken with [`Hold::whole`].
fn abandons(signal: Option<i32>, s: u32, whole: u32) -> bool {
    signal.is_some() && s & QUICK != 0 && whole == 0
}

/// The holds taken with [`Hold::whole`] now.
static WHOLE: AtomicU32 = AtomicU32::new(0);

/// An output being written: a stop signal waits for its end (see the module
/// doc). Take one before a temporary file is created, drop it after the
/// rename or after the temporary is removed.
#[must_use]
pub struct Hold(());

impl Hold {
    pub fn take() -> Hold {
        let mut s = STATE.load(Ordering::SeqCst);
        loop {
            if s & ENDING != 0 {
                // The handler is between its decision and _exit on another
                // thread: nothing may be begun now.
                loop {
                    std::thread::park();
                }
            }
            match STATE.compare_exchange(s, held(s), Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => return Hold(()),
                Err(now) => s = now,
            }
        }
    }
}

/// A [`Hold`] whose files are finished even after a stop signal: the first
/// file of a folder made for it, which a file given up would leave empty.
#[must_use]
pub struct Whole {
    _hold: Hold,
}

impl Hold {
    /// A hold whose writes are never given up ([`abandon_writes`]).
    pub fn whole() -> Whole {
        WHOLE.fetch_add(1, Ordering::SeqCst);
        Whole {
            _hold: Hold::take(),
        }
    }
}

impl Drop for Whole {
    fn drop(&mut self) {
        // Counted out here, before the hold (dropped after this body) ends,
        // which may end the process.
        WHOLE.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        STATE.fetch_sub(1, Ordering::SeqCst);
        if let Some(sig) = received() {
            end_if_free(sig);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_process_may_end_only_in_the_mode_with_no_output_being_written() {
        assert!(!may_end(0));
        assert!(may_end(QUICK));
        assert!(may_end(QUICK | WROTE));
        assert!(!may_end(QUICK | 1));
        assert!(!may_end(QUICK | WROTE | 2));
        assert!(!may_end(QUICK | ENDING));
        assert!(!may_end(WROTE));
    }

    /// The decision to end is itself a state: once taken, the process may
    /// not be ended a second time, and a hold may not begin (`Hold::take`
    /// parks on it); what was written is still said.
    #[test]
    fn once_ending_nothing_more_may_end_it_or_begin_a_write() {
        for s in [QUICK, QUICK | WROTE] {
            let e = ending(s);
            assert_ne!(e & ENDING, 0, "{s:#x}");
            assert!(!may_end(e), "{s:#x}");
            assert_eq!(e & !ENDING, s, "{s:#x}");
        }
    }

    /// A hold counts one more output being written and marks that a write
    /// has begun; the mark outlives the hold, the count does not.
    #[test]
    fn a_hold_counts_one_more_write_and_the_mark_that_one_began_stays() {
        assert_eq!(held(0), WROTE | 1);
        assert_eq!(held(QUICK), QUICK | WROTE | 1);
        assert_eq!(held(QUICK | WROTE | 1), QUICK | WROTE | 2);
        assert!(!may_end(held(QUICK)));
        assert!(!may_end(held(held(QUICK)) - 1));
        assert!(may_end(held(held(QUICK)) - 2));
        assert_eq!((held(held(QUICK)) - 2) & WROTE, WROTE);
    }

    /// A write is given up only once a signal came and only in the mode: a
    /// measuring command's files, whatever the holds and marks, are
    /// finished.
    #[test]
    fn only_a_reading_command_gives_up_a_write_and_only_once_signalled() {
        assert!(abandons(Some(libc::SIGTERM), QUICK | WROTE | 1, 0));
        assert!(abandons(Some(libc::SIGINT), QUICK | ENDING, 0));
        assert!(!abandons(None, QUICK | WROTE | 1, 0));
        for s in [0, WROTE, WROTE | 1, ENDING] {
            assert!(!abandons(Some(libc::SIGTERM), s, 0), "{s:#x}");
        }
        // A write that must be finished is, whatever else holds.
        assert!(!abandons(Some(libc::SIGTERM), QUICK | WROTE | 1, 1));
        assert!(!abandons(Some(libc::SIGINT), QUICK | WROTE | 2, 2));
    }

    /// A write that must be finished counts itself for as long as it lasts,
    /// and no longer: the writes after it may be given up again. (Only this
    /// test takes such a hold in this process.)
    #[test]
    fn a_whole_hold_counts_itself_while_it_lasts() {
        let before = WHOLE.load(Ordering::SeqCst);
        let w = Hold::whole();
        assert_eq!(WHOLE.load(Ordering::SeqCst), before + 1);
        drop(w);
        assert_eq!(WHOLE.load(Ordering::SeqCst), before);
    }

    #[test]
    fn the_line_names_the_signal_and_says_whether_anything_was_written() {
        let text = |sig, wrote| String::from_utf8(message(sig, wrote).to_vec()).unwrap();
        assert_eq!(
            text(libc::SIGTERM, false),
            "numaprobe: interrupted by SIGTERM before anything was written\n"
        );
        assert!(text(libc::SIGINT, false).contains("SIGINT before anything"));
        assert!(text(libc::SIGINT, true).contains("SIGINT; what was already written is whole"));
        assert!(text(libc::SIGTERM, true).contains("SIGTERM; what was already"));
    }
}
