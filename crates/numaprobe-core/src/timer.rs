//! The clock: `CLOCK_MONOTONIC_RAW`, the invariant TSC calibrated against it, and
//! the timer's own overhead.
