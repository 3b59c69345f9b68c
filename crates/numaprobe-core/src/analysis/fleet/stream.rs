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
//! really received, never with a count a line declares. A bad line is one
//! [`Event::Skipped`] naming the node when it can be told, never the end of
//! the gather.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::BufRead;

pub const PREFIX: &str = "NUMAPROBE-FLEET ";
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
/// Pieces a file may declare: what [`MAX_FILE`] takes at the smallest piece.
pub const MAX_PARTS: usize = MAX_FILE.div_ceil(3) * 4 / MIN_PIECE + 1;
/// Longest node name: a host name (HOST_NAME_MAX on Linux).
pub const MAX_NODE_NAME: usize = 64;
/// Longest file name in a report folder.
pub const MAX_FILE_NAME: usize = 128;
/// Base64 characters per line when the names leave no room (never fewer,
/// so a file always moves forward).
const MIN_PIECE: usize = 64;
/// What one stored piece costs beyond its characters (its map entry and
/// allocation), counted so that many empty pieces are not free.
const PIECE_COST: usize = 64;

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
        serde_json::from_str::<Frame>(json)
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

/// What one line came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A node's task started.
    Started(String),
    /// A whole file, checked against the limits.
    File {
        node: String,
        name: String,
        bytes: Vec<u8>,
    },
    /// A node said it is done.
    Ended(String),
    /// A node said its run is still going.
    Alive(String),
    /// The line was not taken: the node it names (when it can be told) and why.
    Skipped {
        node: Option<String>,
        why: FrameError,
    },
}

/// A file's pieces so far.
#[derive(Debug)]
struct Pending {
    parts: usize,
    /// Base64 characters held.
    held: usize,
    pieces: BTreeMap<usize, String>,
}

/// What a node has sent so far.
#[derive(Debug, Default)]
struct NodeState {
    /// Base64 bytes received (plus each piece's cost), every file together.
    received: usize,
    /// Files begun (finished or not).
    files: usize,
    pending: BTreeMap<String, Pending>,
}

/// The limits a [`Collector`] keeps (the defaults are the `MAX_*` constants).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Decoded bytes of one file.
    pub file: usize,
    /// Base64 bytes one node may send, every file together.
    pub node: usize,
    /// Files one node may send.
    pub files: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            file: MAX_FILE,
            node: MAX_NODE,
            files: MAX_FILES,
        }
    }
}

/// The job's nodes for a message: the first few, and how many in all.
fn asked_list(asked: &[String]) -> String {
    const SHOWN: usize = 4;
    let head = asked[..asked.len().min(SHOWN)].join(", ");
    if asked.len() > SHOWN {
        format!("{head}, ... {} nodes in all", asked.len())
    } else {
        head
    }
}

/// Puts the pieces of files back together as lines arrive, within the
/// limits: memory is what was really received, at most [`MAX_NODE`] per node.
#[derive(Debug, Default)]
pub struct Collector {
    limits: Limits,
    nodes: BTreeMap<String, NodeState>,
    /// The job's nodes, when known: a frame naming another node is
    /// skipped before anything of it is kept (a node of the job can write
    /// frames in another's name, or for a node that is not in the job).
    asked: Option<Vec<String>>,
}

impl Collector {
    pub fn with_limits(limits: Limits) -> Self {
        Collector {
            limits,
            nodes: BTreeMap::new(),
            asked: None,
        }
    }

    /// Take frames only from `nodes` (the job's --nodelist, expanded, or
    /// the nodes srun reported); an empty list is no restriction (Slurm
    /// picks the nodes and none was named).
    pub fn only_from(mut self, nodes: &[String]) -> Self {
        self.asked = (!nodes.is_empty()).then(|| nodes.to_vec());
        self
    }

    /// Take one line of srun's output (None when it is not ours).
    pub fn line(&mut self, line: &[u8]) -> Option<Event> {
        let frame = match parse_line(line)? {
            Ok(f) => f,
            Err(why) => {
                return Some(Event::Skipped {
                    node: node_of_bad_line(line),
                    why,
                })
            }
        };
        let node = frame.node();
        if let Some(asked) = &self.asked {
            if !asked.iter().any(|a| a == node) {
                return Some(Event::Skipped {
                    node: Some(node.to_string()),
                    why: FrameError::NotAsked(asked_list(asked)),
                });
            }
        }
        Some(match frame {
            Frame::Start { node } => Event::Started(node),
            Frame::End { node } => Event::Ended(node),
            Frame::Alive { node } => Event::Alive(node),
            Frame::File {
                node,
                name,
                part,
                parts,
                b64,
            } => match self.add(&node, &name, part, parts, b64) {
                Ok(None) => return None,
                Ok(Some(bytes)) => Event::File { node, name, bytes },
                Err(why) => Event::Skipped {
                    node: Some(node),
                    why,
                },
            },
        })
    }

    /// Add a checked piece; the whole file's bytes when it was the last one.
    /// A piece that breaks a limit or disagrees with the file's earlier
    /// pieces drops the file (it cannot come back whole).
    fn add(
        &mut self,
        node: &str,
        name: &str,
        part: usize,
        parts: usize,
        b64: String,
    ) -> Result<Option<Vec<u8>>, FrameError> {
        let lim = self.limits;
        let st = self.nodes.entry(node.to_string()).or_default();
        let cost = b64.len() + PIECE_COST;
        if st.received + cost > lim.node {
            st.pending.remove(name);
            return Err(FrameError::NodeTooLarge(lim.node));
        }
        if !st.pending.contains_key(name) {
            if st.files >= lim.files {
                return Err(FrameError::TooManyFiles(lim.files));
            }
            st.files += 1;
            st.pending.insert(
                name.to_string(),
                Pending {
                    parts,
                    held: 0,
                    pieces: BTreeMap::new(),
                },
            );
        }
        let p = st.pending.get_mut(name).expect("inserted above");
        let problem = if p.parts != parts {
            Some(FrameError::PartsDisagree {
                name: name.into(),
                was: p.parts,
                now: parts,
            })
        } else if p.pieces.contains_key(&part) {
            Some(FrameError::Duplicate {
                name: name.into(),
                part,
            })
        } else if p.held + b64.len() > lim.file.div_ceil(3) * 4 {
            Some(FrameError::FileTooLarge {
                name: name.into(),
                limit: lim.file,
            })
        } else {
            None
        };
        if let Some(e) = problem {
            st.pending.remove(name);
            return Err(e);
        }
        st.received += cost;
        let p = st.pending.get_mut(name).expect("checked above");
        p.held += b64.len();
        p.pieces.insert(part, b64);
        if p.pieces.len() < p.parts {
            return Ok(None);
        }
        let done = st.pending.remove(name).expect("present");
        let whole: String = done.pieces.into_values().collect();
        let bytes = decode(&whole).map_err(|_| FrameError::NotBase64(name.into()))?;
        if bytes.len() > lim.file {
            return Err(FrameError::FileTooLarge {
                name: name.into(),
                limit: lim.file,
            });
        }
        Ok(Some(bytes))
    }

    /// Files of which some pieces never came, as (node, name).
    pub fn unfinished(&self) -> Vec<(String, String)> {
        self.nodes
            .iter()
            .flat_map(|(n, st)| st.pending.keys().map(move |f| (n.clone(), f.clone())))
            .collect()
    }
}

/// One line read with a bound.
#[derive(Debug, PartialEq)]
pub enum Line {
    /// The line is in the buffer (without its newline).
    Read,
    /// A line longer than the bound: this many bytes were read past and dropped.
    TooLong(usize),
    /// The end of the input.
    Eof,
}

/// Read one line into `buf` (cleared first), never holding more than `max`
/// bytes of it: a longer line is read to its end and dropped.
pub fn read_line(r: &mut impl BufRead, buf: &mut Vec<u8>, max: usize) -> std::io::Result<Line> {
    buf.clear();
    let mut total = 0usize;
    loop {
        let chunk = match r.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(match total {
                0 => Line::Eof,
                n if n > max => Line::TooLong(n),
                _ => Line::Read,
            });
        }
        let (take, newline) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if total + take <= max {
            buf.extend_from_slice(&chunk[..take]);
        } else {
            buf.clear();
        }
        total += take;
        r.consume(take + usize::from(newline));
        if newline {
            return Ok(if total > max {
                Line::TooLong(total)
            } else {
                Line::Read
            });
        }
    }
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn sextet(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// Standard base64 with padding.
pub fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

pub fn decode(s: &str) -> Result<Vec<u8>, String> {
    let s = s.trim_end_matches('=');
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes() {
        let v = sextet(c).ok_or_else(|| format!("not base64: byte {c:#04x}"))?;
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
