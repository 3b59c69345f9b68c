//! numaprobe-core: the library behind `numaprobe`.
//!
//! It owns everything but the command line: reading a machine's description
//! (`topology`), placing threads and memory (`placement`), the measurement loops
//! (`kernels`), clocks and statistics (`timer`, `stats`), plans of kernel runs
//! (`experiments`), turning numbers into knowledge (`analysis`) and the result
//! model with one exporter per format (`report`).
//!
//! Data flows one way: topology -> plan -> kernels -> samples -> stats -> result
//! model -> analysis -> exporters. Nothing in this crate prints; errors are typed
//! (`thiserror`) so the binary can decide how to show them.

pub mod analysis;
pub mod cancel;
pub mod experiments;
pub mod job;
pub mod kernels;
pub mod model;
pub mod pagesize;
pub mod placement;
pub mod platform;
pub mod render;
pub mod report;
pub mod stats;
pub mod timer;
pub mod topology;
pub mod units;

/// Version tag carried by every machine-readable document numaprobe writes.
pub const SCHEMA: &str = "numaprobe/1";
