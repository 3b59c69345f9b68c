//! The result model: plain data that experiments and analysis produce and
//! renderers read. It sits low in the stack (it may use `topology` and
//! `units`, never `experiments`, `analysis` or `render`), so every arrow
//! points one way: topology -> plan -> kernels -> samples -> stats -> model
//! -> analysis -> renderers.

pub mod diff;
pub mod ranking;
