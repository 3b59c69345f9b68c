//! Plans of kernel runs: the latency matrix, the bandwidth matrix and the
//! contention study. An experiment decides what runs where; it never prints.

pub mod study;
