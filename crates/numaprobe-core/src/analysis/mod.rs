//! Turning measured matrices into knowledge: performance levels, hops, links,
//! firmware (SLIT/HMAT) comparison, portable binding strategies and advice.
//!
//! The main job calls [`analyse`] on a latency or bandwidth [`Matrix`] and
//! [`advise`] on the result; `infer` reads the matrix with [`parse`] first.
//! `binding` computes thread placements from a `Topology`.

pub mod advice;
pub mod binding;
pub mod infer;
pub mod levels;
pub mod matrix;
pub mod slit;

pub use advice::advise;
pub use infer::analyse;
pub use matrix::{parse, Matrix, MatrixError, Slit, Unit};

/// Analyse and advise in one call: the inference with its `advice` filled.
pub fn analyse_with_advice(m: &Matrix) -> crate::report::infer::Inference {
    let mut inf = analyse(m);
    inf.advice = advise(m, &inf);
    inf
}
