//! One line of the stream: the [`Frame`] a node writes, the names it may
//! carry, and [`parse_line`], which takes one line's bytes and returns a
//! checked frame or why not.

use super::base64::{encode, sextet};
use super::limits::{LINE, MAX_FILE_NAME, MAX_LINE, MAX_NODE_NAME, MAX_PARTS, MIN_PIECE};
use serde::{Deserialize, Serialize};

/// What starts every line of the stream.
pub const PREFIX: &str = "NUMAPROBE-FLEET ";

/// One line of the stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Frame {
    /// The node's task started (so a node that never ends is known).
    Start { node: String },
    /// Piece `part` of `parts` of a report file.
    File {
        node: String,
        name: String,
        part: usize,
        parts: usize,
        b64: String,
    },
    /// The node is done (its status was sent as `fleet-node.json`).
    End { node: String },
    /// The node's run is still going: sent every few seconds while it
    /// measures, so the launcher tells a quiet node from a dead one
    /// without waiting for Slurm to notice (SlurmdTimeout).
    Alive { node: String },
}

/// Why a line of the stream was not taken.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FrameError {
    #[error("not UTF-8 (byte {0} of the line)")]
    NotUtf8(usize),
    #[error("longer than {MAX_LINE} bytes ({0} bytes)")]
    TooLong(usize),
    #[error("not a frame: {0}")]
    Malformed(String),
    #[error("node name {0:?} is not a host name (letters, digits, '.', '-', '_', at most {MAX_NODE_NAME})")]
    BadNode(String),
    #[error("file name {0:?} is not a plain name (letters, digits, '.', '-', '_', at most {MAX_FILE_NAME}, not . or ..)")]
    BadFileName(String),
    #[error("{name}: piece {part} of {parts} (valid: 1 to {MAX_PARTS} pieces, numbered from 0)")]
    BadPart {
        name: String,
        part: usize,
        parts: usize,
    },
    #[error("{name}: a piece of {len} base64 characters (at most {MAX_LINE})")]
    BadPiece { name: String, len: usize },
    #[error("{0}: not base64")]
    NotBase64(String),
    #[error("{name}: pieces disagree on their count ({was}, then {now})")]
    PartsDisagree {
        name: String,
        was: usize,
        now: usize,
    },
    #[error("{0}: came back incomplete (pieces missing)")]
    Incomplete(String),
    #[error("{name}: piece {part} came twice")]
    Duplicate { name: String, part: usize },
    #[error("{name}: larger than {limit} bytes, the limit of one file")]
    FileTooLarge { name: String, limit: usize },
    #[error("sent more than {0} bytes, the limit of one node")]
    NodeTooLarge(usize),
    #[error("sent more than {0} files, the limit of one node")]
    TooManyFiles(usize),
    #[error("not one of the job's nodes ({0}); its lines are not taken")]
    NotAsked(String),
    #[error("more node names than the job's {0} nodes; the lines of the names after the first {0} are not taken")]
    TooManyNames(usize),
    #[error("dropped: the stream reached the {} of unfinished files it holds for all nodes together, this node holding the most of them ({}); its files are not taken", size(*limit), size(*own))]
    Dropped { limit: usize, own: usize },
}

fn size(bytes: usize) -> String {
    crate::units::format_size(bytes as u64)
}

/// A host name as Slurm and `gethostname` give it: letters, digits, `.`,
/// `-` and `_`, not starting with `.` or `-`, at most [`MAX_NODE_NAME`].
pub fn valid_node_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_NODE_NAME
        && !s.starts_with(['.', '-'])
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
}

/// A file name that stays in its folder: the host-name characters, not `.`
/// or `..`, at most [`MAX_FILE_NAME`] (the report's manifest,
/// `.numaprobe-manifest`, is sent too).
pub fn valid_file_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_FILE_NAME
        && s != "."
        && s != ".."
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
}

impl Frame {
    pub fn node(&self) -> &str {
        match self {
            Frame::Start { node }
            | Frame::End { node }
            | Frame::Alive { node }
            | Frame::File { node, .. } => node,
        }
    }

    pub fn line(&self) -> String {
        // Our own plain types: serializing cannot fail.
        format!("{PREFIX}{}\n", serde_json::to_string(self).expect("frame"))
    }

    /// The frames of one file.
    pub fn file(node: &str, name: &str, bytes: &[u8]) -> Vec<Frame> {
        let b64 = encode(bytes);
        // The line's length without its base64, with room for the part numbers.
        let overhead = Frame::File {
            node: node.into(),
            name: name.into(),
            part: usize::MAX,
            parts: usize::MAX,
            b64: String::new(),
        }
        .line()
        .len();
        let piece = LINE.saturating_sub(overhead).max(MIN_PIECE);
        let pieces: Vec<&str> = if b64.is_empty() {
            vec![""]
        } else {
            b64.as_bytes()
                .chunks(piece)
                .map(|c| std::str::from_utf8(c).expect("base64 is ASCII"))
                .collect()
        };
        let parts = pieces.len();
        pieces
            .into_iter()
            .enumerate()
            .map(|(part, p)| Frame::File {
                node: node.into(),
                name: name.into(),
                part,
                parts,
                b64: p.into(),
            })
            .collect()
    }

    /// The frame's own checks: names, piece numbers, base64 characters.
    fn check(&self) -> Result<(), FrameError> {
        if !valid_node_name(self.node()) {
            return Err(FrameError::BadNode(clip(self.node())));
        }
        if let Frame::File {
            name,
            part,
            parts,
            b64,
            ..
        } = self
        {
            if !valid_file_name(name) {
                return Err(FrameError::BadFileName(clip(name)));
            }
            if *parts == 0 || *parts > MAX_PARTS || part >= parts {
                return Err(FrameError::BadPart {
                    name: name.clone(),
                    part: *part,
                    parts: *parts,
                });
            }
            if b64.len() > MAX_LINE {
                return Err(FrameError::BadPiece {
                    name: name.clone(),
                    len: b64.len(),
                });
            }
            if !b64.bytes().all(|c| sextet(c).is_some() || c == b'=') {
                return Err(FrameError::NotBase64(name.clone()));
            }
        }
        Ok(())
    }
}

/// At most 200 characters of an outside value, for a message.
fn clip(s: &str) -> String {
    s.chars().take(200).collect()
}

/// [`clip`], control characters escaped: the JSON reader's message quotes
/// the line's text decoded (`\n` in a string is a newline), and a reason
/// is shown as one line.
fn clip_line(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars().take(200) {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

/// Parse one output line (its bytes, newline or not): None for a line that
/// is not ours, else the checked frame or why it was not taken.
pub fn parse_line(line: &[u8]) -> Option<Result<Frame, FrameError>> {
    // srun --label would put "0: " in front; accept anything before the prefix.
    let at = find(line, PREFIX.as_bytes())?;
    if line.len() > MAX_LINE {
        return Some(Err(FrameError::TooLong(line.len())));
    }
    let text = match std::str::from_utf8(line) {
        Ok(t) => t,
        Err(e) => return Some(Err(FrameError::NotUtf8(e.valid_up_to()))),
    };
    let json = text[at + PREFIX.len()..].trim_end();
    Some(
        crate::model::bounded::from_slice::<Frame>(json.as_bytes())
            .map_err(|e| FrameError::Malformed(clip_line(&e.to_string())))
            .and_then(|f| f.check().map(|()| f)),
    )
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The node a bad line names, when it names a valid one: `"node":"np1"` in
/// its text, however broken the rest is.
pub fn node_of_bad_line(line: &[u8]) -> Option<String> {
    let key = b"\"node\":\"";
    let at = find(line, key)? + key.len();
    let rest = &line[at..];
    let end = rest.iter().position(|&b| b == b'"')?;
    let name = std::str::from_utf8(&rest[..end]).ok()?;
    valid_node_name(name).then(|| name.to_string())
}
