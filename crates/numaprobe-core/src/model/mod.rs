//! The result model: plain data (serde, the `numaprobe/1` JSON contract) that
//! experiments and analysis produce and renderers read. One file per concern:
//!
//! - `matrix`: latency and bandwidth matrices, their cells and failed cells
//! - `infer`: the inference (levels, hops, links, hierarchy, findings, advice)
//! - `study`: the contention study's results and its `--plan` document, built
//!   from `study_plan` (experiments, cases, threads), `label` (thread labels),
//!   `hops` (hop counts from distance levels; `hops_file` reads them from a
//!   latency matrix in a file) and `background` (load levels
//!   and subscriptions)
//! - `pin`: a binding's CPUs, nodes and command lines
//! - `topo`: the topology as a document, and per-package summaries
//! - `ranking`: every ranked comparison (policy, tune)
//! - `provenance`: machine, version, command line and times of a document
//! - `format`: the output formats renderers offer
//! - `c2c`, `locks`, `loaded`, `peak`: cache-line transfer, lock contention,
//!   loaded-latency curves, system peak bandwidth and DIMM population
//! - `run`: the main job's document (`run.json`)
//! - `document`: every document's `kind`, and the one reader that says what
//!   a file or folder holds
//! - `run_status`: what became of the main job as a whole (complete, and
//!   the phases partial by budget, interrupted or failed)
//! - `sweep`: latency against working-set size and its cache analysis
//! - `reasons`: a list of points written with each trust flag's text once
//! - `input`: reading a file from outside (regular files only, bounded size)
//! - `bounded`: JSON read into its typed shape with the memory it builds
//!   bounded by its size
//! - `lax`: the loose typed shapes a reader takes of a document written by
//!   another version (a field of another type is not there, not an error)
//! - `shape`: declared dimensions of a document read from outside checked
//!   against its data
//! - `stamped`: a document's JSON text with its `kind` and provenance, as
//!   every file carries it, laid out by `compact` (innermost containers on
//!   one line); `top_fields` reads what its stamps depend on before a
//!   document is streamed
//!
//! It sits low in the stack: it may use `topology`, `units`, `placement`,
//! `kernels`, `stats` and `timer` (plain types), never `experiments`,
//! `analysis`, `job` or `render` (a test, `tests/layering.rs`, keeps it so).
//! Every arrow points one way: topology -> plan -> kernels -> samples ->
//! stats -> model -> analysis -> renderers.

pub mod background;
pub mod bounded;
pub mod c2c;
pub mod compact;
pub mod diff;
pub mod document;
pub mod export;
pub mod extra;
pub mod fleet;
pub mod format;
pub mod hops;
pub mod hops_file;
pub mod infer;
mod infer_cells;
mod infer_data;
mod infer_grid;
mod infer_links;
mod infer_members;
pub mod input;
pub mod label;
pub mod lax;
pub mod loaded;
pub mod locks;
pub mod matrix;
mod node_table;
pub mod peak;
pub mod pin;
pub mod policy;
pub mod provenance;
pub mod ranking;
pub mod reasons;
pub mod run;
pub mod run_status;
pub mod shape;
pub mod stamped;
pub mod study;
pub mod study_plan;
pub mod sweep;
pub mod top_fields;
pub mod topo;
pub mod tune;

pub use format::Format;
