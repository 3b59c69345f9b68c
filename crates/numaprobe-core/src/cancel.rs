//! Cooperative cancellation: one process-wide flag that a signal handler (in
//! the binary) raises and that the sampling loops and experiment runners read.
//!
//! The flag is only ever set, never waited on: a measurement stops after the
//! sample it is taking, the experiment stops before its next cell, and what
//! was finished is returned as a partial result (`complete: false`). Raising
//! it from a signal handler is safe: it is a single atomic store.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Ask every running measurement to stop after its current sample.
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// True once [`request`] was called.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}
