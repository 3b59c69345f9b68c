//! The JSON forms of a matrix (the fixture form `{unit, matrix, slit?}`,
//! numaprobe's latency/bandwidth results, a topology's `distances`, and the
//! matrix of a `run.json`) read straight from the text into their parts:
//! the fields a matrix is made of, every other one skipped unbuilt, and
//! each array refused as soon as it is longer than its declared dimension
//! (the named row and column nodes, else the most nodes a matrix may
//! name), before the rest of it is read. The documents' fields are read in
//! `doc`, their grids in `grid`, the flagged cells in `flagged`; `build`
//! checks the parts as a whole; `stash` keeps a refusal found inside.

mod build;
mod doc;
mod flagged;
mod grid;
mod stash;

pub(crate) use build::build;
pub(crate) use doc::{DocSeed, RunSeed};
pub(crate) use stash::{error_of, Stash};

#[cfg(test)]
mod tests;
