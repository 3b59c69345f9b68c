//! numaprobe-core: the library behind `numaprobe`.
//!
//! It owns everything but the command line. Data flows one way, and each
//! step is a module:
//!
//! ```text
//! topology -> plan -> kernels -> samples -> stats -> model -> analysis -> renderers
//! topology/   experiments/ kernels/  timer    stats   model/    analysis/   render/
//!             job/ (what fits the budget)
//! ```
//!
//! - `topology`: the machine's description (sysfs/procfs behind a root path);
//!   `placement`: pinning and NUMA-bound buffers, checked.
//! - `experiments` (latency, bandwidth, study) plan kernel runs against the
//!   topology and run them; `job` decides which fit the main job's budget.
//! - `kernels` are the measurement loops; `timer` and `stats` turn their
//!   samples into medians with spread and decide when to stop.
//! - `model` is the result model (serde, the `numaprobe/1` contract): what
//!   experiments produce, what `analysis` reads and writes (levels, links,
//!   findings, advice, bindings) and the only thing renderers read.
//! - `clean` makes foreign text safe for every output (terminal, errors,
//!   Markdown, CSV, HTML, XML); every renderer and message goes through it.
//! - `render` holds one renderer per format concern (text tables, CSV,
//!   Markdown, JSON with provenance, SVG/PNG charts).
//!
//! Nothing imports a module to its right (`tests/layering.rs` checks the
//! model, analysis and experiments). Nothing in this crate prints; errors
//! are typed (`thiserror`) so the binary can decide how to show them.

pub mod analysis;
pub mod beside;
pub mod cancel;
pub mod clean;
pub mod experiments;
pub mod fault;
pub mod held;
pub mod job;
pub mod kernels;
pub mod model;
pub mod pagesize;
pub mod placement;
pub mod platform;
pub mod render;
pub mod rng;
pub mod smbios;
pub mod stats;
pub mod system_check;
pub mod timer;
pub mod topology;
pub mod units;

/// Version tag carried by every machine-readable document numaprobe writes.
pub const SCHEMA: &str = "numaprobe/1";
