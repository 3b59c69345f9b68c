//! What the stream lets a node send: the line the sender writes and the
//! longest the reader takes, file, node and piece limits, and the
//! [`Limits`] a [`Collector`](super::Collector) keeps.

/// Bytes per line the sender writes, newline included: below Slurm's
/// 1024-byte I/O message.
pub const LINE: usize = 1000;
/// The longest line the reader takes (srun's `--label` and Slurm's own
/// messages may add to a frame's [`LINE`]); a longer one is skipped unread.
pub const MAX_LINE: usize = 4096;
/// The largest file a node may send (decoded bytes). A 16-node machine's
/// report folder holds files of a few hundred KiB.
pub const MAX_FILE: usize = 64 << 20;
/// All a node may send (base64 bytes received, every file together).
pub const MAX_NODE: usize = 256 << 20;
/// Files a node may send.
pub const MAX_FILES: usize = 256;
/// Unfinished files' bytes held for all nodes together (base64 characters
/// plus each piece's cost): what bounds the reader's memory however many
/// nodes send at once. A node's files come one after another, so a fleet
/// of 10,000 nodes sending 190 KB reports at the same moment holds about
/// 2.5 GB at worst; in practice they finish at different times. Past it the
/// node holding the most is dropped.
pub const MAX_PENDING: usize = 512 << 20;
/// Node names a stream may carry when the job's nodes are not known by
/// name (with a node list, only its names are taken).
pub const MAX_NAMES: usize = 100_000;
/// Pieces a file may declare: what [`MAX_FILE`] takes at the smallest piece.
pub const MAX_PARTS: usize = MAX_FILE.div_ceil(3) * 4 / MIN_PIECE + 1;
/// Longest node name: a host name (HOST_NAME_MAX on Linux).
pub const MAX_NODE_NAME: usize = 64;
/// Longest file name in a report folder.
pub const MAX_FILE_NAME: usize = 128;
/// Base64 characters per line when the names leave no room (never fewer,
/// so a file always moves forward).
pub(super) const MIN_PIECE: usize = 64;
/// What one stored piece costs beyond its characters (its map entry and
/// allocation), counted so that many empty pieces are not free.
pub(super) const PIECE_COST: usize = 64;

/// The limits a [`Collector`](super::Collector) keeps (the defaults are the `MAX_*` constants).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Decoded bytes of one file.
    pub file: usize,
    /// Base64 bytes one node may send, every file together.
    pub node: usize,
    /// Files one node may send.
    pub files: usize,
    /// Unfinished files' bytes held for all nodes together.
    pub pending: usize,
    /// Node names taken (the first ones heard): the job's node count when
    /// it was asked for by count.
    pub names: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            file: MAX_FILE,
            node: MAX_NODE,
            files: MAX_FILES,
            pending: MAX_PENDING,
            names: MAX_NAMES,
        }
    }
}
