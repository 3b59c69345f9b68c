//! The plain data of the note's thread labels, `node.core.access.memnode`
//! (AMD 40555 §2.3.2): `0.0.w.1` is a thread on node 0, core 0,
//! writing memory of node 1. Parsing them is the study's business
//! (`experiments::study::label`); results and plans carry them.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How a foreground thread touches its array: the engine's strided kernel,
/// one element per 64-byte line, only loads or only stores.
pub use crate::kernels::strided::Access;

/// One foreground thread as the user (or a preset) wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadSpec {
    /// NUMA node the thread runs on (its OS index).
    pub node: u32,
    /// Index of the core among the node's allowed cores (one CPU per physical
    /// core, lowest sibling), not a CPU number: labels stay portable across
    /// machines whose CPU numbering differs (the RWTH Aachen blog on an 8-socket Nehalem-EX).
    pub core: usize,
    pub access: Access,
    /// NUMA node holding the thread's array.
    pub mem: u32,
}

impl fmt::Display for ThreadSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{}.{}.{}",
            self.node,
            self.core,
            self.access.letter(),
            self.mem
        )
    }
}

/// Whether each thread keeps the access its label gives, or the scenario is
/// repeated for every combination (rr, rw, wr, ww for two threads).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mix {
    Fixed,
    All,
}
