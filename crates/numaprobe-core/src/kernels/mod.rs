//! The measurement loops. A kernel does no I/O and is described by data
//! (bytes per iteration, loads, stores), in the spirit of likwid-bench.
