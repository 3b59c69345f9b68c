//! Turning measured matrices into knowledge: performance levels, hops, links,
//! firmware (SLIT/HMAT) comparison, portable binding strategies and advice.
//!
//! In the flow topology -> plan -> kernels -> samples -> stats -> model ->
//! analysis -> renderers, the analysis reads result-model values (a matrix
//! result, a topology) and writes result-model values (`model::infer`,
//! `model::pin`); it never renders (renderers sit above it, in `render`).
//!
//! The main job: build a [`Matrix`] from its latency or bandwidth result
//! ([`Matrix::from_result`], or [`parse`] on any supported text), set
//! `matrix.slit = Some(Slit::from_distances(..))` from the topology, then
//! call [`analyse_with_advice`] (or [`analyse`] and [`advise`]) and add
//! [`hmat::compare`] with the topology's HMAT to the findings;
//! [`machine::infer_on`] does all of it for a matrix and its machine.
//! `binding` (re-exported from `placement`, where the experiments can use it)
//! computes thread placements from a `Topology`.
//! `compare` sets two runs side by side (`diff`: topology, firmware and every
//! cell with a noise-aware verdict) and checks a machine against a saved
//! topology or binding (`check`); its results are `model::diff` types.

pub mod advice;
pub use crate::placement::binding;
pub mod compare;
mod csv;
mod findings;
pub mod fleet;
pub mod hmat;
pub mod host_nodes;
pub mod infer;
pub mod input;
pub mod interleave;
pub mod levels;
pub mod loaded;
pub mod machine;
pub mod matrix;
mod matrix_json;
pub mod mlc;
mod node_sets;
mod pair_table;
mod pin_report;
pub mod policy;
pub mod slit;
pub mod sweep;
pub mod sweep_trust;
mod work;

pub use advice::advise;
pub use infer::analyse;
pub use input::{parse, parse_with, ParseOptions};
pub use matrix::{Matrix, MatrixError, Slit, Unit};
pub use mlc::Select;

/// Analyse and advise in one call: the inference with its `advice` filled.
pub fn analyse_with_advice(m: &Matrix) -> crate::model::infer::Inference {
    let mut w = work::compute(m);
    // The analysis lets the directed cells go once its findings are made:
    // the advice reads pairs, ranks, links and hops, never a single cell.
    let mut inf = infer::analyse_from(m, &mut w);
    inf.advice = advice::advise_from(m, &inf, &w);
    infer::finish(&mut inf, w);
    inf
}
