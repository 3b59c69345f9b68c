//! Pinning threads (checked with `sched_getcpu`) and NUMA-bound buffers
//! (placed with `mbind`, verified with `move_pages`).
