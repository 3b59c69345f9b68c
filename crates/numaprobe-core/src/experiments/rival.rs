//! A busy rival for the tests that prove a kernel's sampling notices a
//! lost CPU: a thread pinned to the measuring thread's CPU that spins
//! until dropped. Two busy threads on one CPU take turns at every end of a
//! time slice, so a measuring thread that runs a few samples of
//! milliseconds is switched out during some of them, on any host, however
//! fast: what such a test asserts is certain, not a matter of timing.

use crate::placement::set_current_affinity;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;

/// A thread spinning on one CPU until dropped.
pub(crate) struct Rival {
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Rival {
    /// Spawn the rival on `cpu` and return once it runs there; Err with the
    /// reason when it cannot be pinned (a test then says so and returns).
    pub(crate) fn on(cpu: u32) -> Result<Rival, String> {
        let done = Arc::new(AtomicBool::new(false));
        let turns = Arc::new(AtomicU64::new(0));
        let (tx, rx) = mpsc::channel();
        let thread = {
            let (done, turns) = (done.clone(), turns.clone());
            std::thread::spawn(move || {
                let pinned = set_current_affinity(&[cpu]).map_err(|e| e.to_string());
                let ok = pinned.is_ok();
                let _ = tx.send(pinned);
                while ok && !done.load(Ordering::Relaxed) {
                    turns.fetch_add(1, Ordering::Relaxed);
                    std::hint::spin_loop();
                }
            })
        };
        let rival = Rival {
            done,
            thread: Some(thread),
        };
        match rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(format!("cannot pin a rival to CPU {cpu}: {e}")),
            Err(_) => return Err("the rival thread ended before pinning".into()),
        }
        // Running on its CPU once it counts.
        while turns.load(Ordering::Relaxed) == 0 {
            std::thread::yield_now();
        }
        Ok(rival)
    }
}

impl Drop for Rival {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The rival for a test, or the reason printed and None: a machine that
/// cannot pin has nothing to prove here.
pub(crate) fn rival_or_skip(cpu: u32, test: &str) -> Option<Rival> {
    match Rival::on(cpu) {
        Ok(r) => Some(r),
        Err(e) => {
            eprintln!("{test}: skipped: {e}");
            None
        }
    }
}

/// The samples a figure took, from what it records: those it kept (none
/// when it had to be made of set-aside ones anyway) and those set aside.
/// A zero budget takes a fixed count, held or not, which the rival tests
/// assert for every figure they measure.
pub(crate) fn taken(kept: usize, set_aside: &crate::stats::SetAside) -> usize {
    let kept = if set_aside.used_anyway { 0 } else { kept };
    kept + set_aside.total()
}
