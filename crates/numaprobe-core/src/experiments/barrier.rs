//! A barrier that a panicking thread breaks. `std::sync::Barrier` waits for
//! its last thread forever: when a worker (or the coordinator) of a
//! measurement panics, the others would wait for it and the command would
//! hang instead of saving what it measured and exiting. Here every thread
//! holds a [`Guard`] while it takes part; a guard dropped while its thread
//! unwinds breaks the barrier, every waiter wakes up with `false`, and so
//! does every later `wait`: the threads leave their loops, the scope joins
//! them, and the panic reaches whoever joins it as an error.

use std::sync::{Condvar, Mutex, MutexGuard};

#[derive(Debug)]
struct State {
    /// Threads waiting in the current round.
    arrived: usize,
    /// Rounds completed; a waiter is released when it moves on.
    round: u64,
    broken: bool,
}

/// A reusable barrier for `n` threads that can be broken.
#[derive(Debug)]
pub struct Barrier {
    n: usize,
    state: Mutex<State>,
    cv: Condvar,
}

impl Barrier {
    pub fn new(n: usize) -> Barrier {
        Barrier {
            n,
            state: Mutex::new(State {
                arrived: 0,
                round: 0,
                broken: false,
            }),
            cv: Condvar::new(),
        }
    }

    /// The state; a thread that panicked while holding the lock left it
    /// consistent (every update is a single field write), so a poisoned
    /// lock is taken as it is.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wait until `n` threads have called `wait` in this round. True when
    /// the round completed; false when the barrier is (or becomes) broken
    /// first: a thread taking part panicked, and nobody should wait for it.
    pub fn wait(&self) -> bool {
        let mut s = self.lock();
        if s.broken {
            return false;
        }
        s.arrived += 1;
        if s.arrived >= self.n {
            s.arrived = 0;
            s.round = s.round.wrapping_add(1);
            self.cv.notify_all();
            return true;
        }
        let round = s.round;
        while s.round == round && !s.broken {
            s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        // A round that completed before the break counts as passed.
        s.round != round
    }

    /// Break the barrier: every waiter, now and later, gets `false`.
    pub fn break_now(&self) {
        self.lock().broken = true;
        self.cv.notify_all();
    }

    pub fn is_broken(&self) -> bool {
        self.lock().broken
    }

    /// A guard for the calling thread: dropped while the thread panics, it
    /// breaks the barrier; dropped normally, it does nothing.
    pub fn guard(&self) -> Guard<'_> {
        Guard(self)
    }
}

/// Breaks its barrier when dropped during a panic (see [`Barrier::guard`]).
#[must_use = "the guard breaks the barrier only while it is held"]
pub struct Guard<'a>(&'a Barrier);

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.break_now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn every_round_releases_all_threads_together() {
        let b = Barrier::new(3);
        let passed = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for _ in 0..100 {
                        assert!(b.wait());
                        passed.fetch_add(1, Ordering::SeqCst);
                    }
                });
            }
        });
        assert_eq!(passed.load(Ordering::SeqCst), 300);
        assert!(!b.is_broken());
    }

    #[test]
    fn a_barrier_of_one_never_waits() {
        let b = Barrier::new(1);
        assert!(b.wait());
        assert!(b.wait());
    }

    #[test]
    fn a_panicking_thread_releases_the_others_with_false() {
        let b = Barrier::new(3);
        let outcomes = std::thread::scope(|s| {
            let waiters: Vec<_> = (0..2)
                .map(|_| {
                    s.spawn(|| {
                        let _g = b.guard();
                        // The first round has all three; the second never
                        // completes: the third thread panics before it.
                        (b.wait(), b.wait())
                    })
                })
                .collect();
            let panicker = s.spawn(|| {
                let _g = b.guard();
                assert!(b.wait());
                panic!("a worker fails between two samples");
            });
            assert!(panicker.join().is_err());
            waiters
                .into_iter()
                .map(|h| h.join().expect("a waiter returns"))
                .collect::<Vec<_>>()
        });
        assert_eq!(outcomes, vec![(true, false), (true, false)]);
        assert!(b.is_broken());
        // Later waits do not block either.
        assert!(!b.wait());
    }

    #[test]
    fn a_guard_dropped_normally_leaves_the_barrier_whole() {
        let b = Barrier::new(2);
        drop(b.guard());
        assert!(!b.is_broken());
        std::thread::scope(|s| {
            s.spawn(|| assert!(b.wait()));
            assert!(b.wait());
        });
    }

    #[test]
    fn break_now_wakes_a_waiter_already_blocked() {
        let b = Barrier::new(2);
        std::thread::scope(|s| {
            let h = s.spawn(|| b.wait());
            // Whether the waiter is already blocked or not, it gets false.
            b.break_now();
            assert!(!h.join().unwrap());
        });
    }
}
