//! The fleet stream: how a node's report travels back through the Slurm
//! job's output when the nodes share no filesystem, and how the launcher
//! reads it back without trusting it. One line per piece, `NUMAPROBE-FLEET `
//! and a JSON object, so anything else srun prints (Slurm's own messages, a
//! prologue's chatter) is told apart and ignored. A file is base64 in
//! pieces, each line at most [`LINE`] bytes: slurmstepd forwards a task's
//! output in messages of at most 1024 bytes (`MAX_MSG_LEN` in Slurm's
//! io_hdr.h), and a longer line was seen torn and interleaved with another
//! node's on a real three-node Slurm.
//!
//! The reading side is pure: [`parse_line`] takes one line's bytes and
//! returns a checked [`Frame`] or why not; [`Collector`] puts the pieces
//! back together under the limits below, its memory growing with the bytes
//! really received, never with a count a line declares, and bounded for the
//! whole stream: node names (the job's list, or its node count) and the
//! unfinished files' bytes of every node together. A bad line is one
//! [`Event::Skipped`] naming the node when it can be told, never the end of
//! the gather.
//!
//! - `limits`: the line length and what a node may send;
//! - `frame`: one line, its checks and [`parse_line`];
//! - `collector`: the pieces back together, one [`Event`] a line;
//! - `line`: a line read with a bound;
//! - `base64`: the file bytes' form on the line.

mod base64;
mod collector;
mod frame;
mod limits;
mod line;

pub use base64::{decode, encode};
pub use collector::{Collector, Event};
pub use frame::{
    node_of_bad_line, parse_line, valid_file_name, valid_node_name, Frame, FrameError, PREFIX,
};
pub use limits::{
    Limits, LINE, MAX_FILE, MAX_FILES, MAX_FILE_NAME, MAX_LINE, MAX_NAMES, MAX_NODE, MAX_NODE_NAME,
    MAX_PARTS, MAX_PENDING,
};
pub use line::{read_line, Line};

#[cfg(test)]
mod tests;
