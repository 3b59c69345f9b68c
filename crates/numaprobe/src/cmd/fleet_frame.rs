//! How a node's report travels back through the Slurm job's output when the
//! nodes share no filesystem: one line per piece, `NUMAPROBE-FLEET ` and a
//! JSON object, so anything else srun prints (Slurm's own messages, a
//! prologue's chatter) is told apart and ignored. A file (the node's status
//! `fleet-node.json` too) is base64 in pieces, each line at most [`LINE`]
//! bytes: slurmstepd forwards a task's output in messages of at most 1024
//! bytes (`MAX_MSG_LEN` in Slurm's io_hdr.h), and a longer line was seen torn
//! and interleaved with another node's on a real three-node Slurm.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const PREFIX: &str = "NUMAPROBE-FLEET ";
/// Bytes per line, newline included: below Slurm's 1024-byte I/O message.
pub const LINE: usize = 1000;
/// Base64 characters per line when the names leave no room (never fewer,
/// so a file always moves forward).
const MIN_PIECE: usize = 64;

/// How a node's run ended: written as `fleet-node.json` in its folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeRunStatus {
    pub node: String,
    /// `numaprobe run`'s exit status (None when killed by a signal or never started).
    pub exit_status: Option<i32>,
    pub signal: Option<i32>,
    /// The run outlived its time and was stopped.
    pub timed_out: bool,
    /// Why the run could not start, when it could not.
    pub error: Option<String>,
    /// The last lines of the run's stderr.
    pub stderr_tail: Vec<String>,
    pub elapsed_s: f64,
}

/// One line of the stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
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
}

impl Frame {
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
}

/// Parse one output line: None for a line that is not ours.
pub fn parse_line(line: &str) -> Option<Result<Frame, String>> {
    // srun --label would put "0: " in front; accept anything before the prefix.
    let at = line.find(PREFIX)?;
    Some(serde_json::from_str(line[at + PREFIX.len()..].trim_end()).map_err(|e| e.to_string()))
}

/// Put the pieces of files back together as they arrive.
#[derive(Debug, Default)]
pub struct Assembler {
    /// (node, file) -> pieces so far.
    pending: BTreeMap<(String, String), Vec<Option<String>>>,
}

impl Assembler {
    /// Add a piece; returns the whole file's bytes when it was the last one.
    pub fn add(
        &mut self,
        node: &str,
        name: &str,
        part: usize,
        parts: usize,
        b64: String,
    ) -> Option<Result<Vec<u8>, String>> {
        if parts == 0 || part >= parts {
            return Some(Err(format!("{node}/{name}: piece {part} of {parts}")));
        }
        let key = (node.to_string(), name.to_string());
        let slots = self
            .pending
            .entry(key.clone())
            .or_insert_with(|| vec![None; parts]);
        if slots.len() != parts {
            return Some(Err(format!(
                "{node}/{name}: pieces disagree on their count"
            )));
        }
        slots[part] = Some(b64);
        if slots.iter().all(Option::is_some) {
            let whole: String = self
                .pending
                .remove(&key)
                .into_iter()
                .flatten()
                .flatten()
                .collect();
            return Some(decode(&whole).map_err(|e| format!("{node}/{name}: {e}")));
        }
        None
    }

    /// Files of which some pieces never came, as `node/name`.
    pub fn unfinished(&self) -> Vec<(String, String)> {
        self.pending.keys().cloned().collect()
    }
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

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
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return Err(format!("not base64: byte {c:#04x}")),
        };
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
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_every_length() {
        assert_eq!(encode(b"Man"), "TWFu");
        assert_eq!(encode(b"Ma"), "TWE=");
        assert_eq!(encode(b"M"), "TQ==");
        let bytes: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        for n in 0..40 {
            assert_eq!(decode(&encode(&bytes[..n])).unwrap(), &bytes[..n]);
        }
        assert!(decode("ab$d").is_err());
    }

    #[test]
    fn a_file_in_pieces_comes_back_whole_in_any_order() {
        let bytes: Vec<u8> = (0..=255u8).cycle().take(LINE * 3).collect();
        let mut frames = Frame::file("np1", "run.json", &bytes);
        assert!(frames.len() > 2);
        frames.reverse();
        let mut asm = Assembler::default();
        let mut whole = None;
        for f in frames {
            let line = f.line();
            assert!(line.len() <= LINE, "{} bytes", line.len());
            let Some(Ok(Frame::File {
                node,
                name,
                part,
                parts,
                b64,
            })) = parse_line(&format!("0: {line}"))
            else {
                panic!("not a file frame: {line}");
            };
            if let Some(r) = asm.add(&node, &name, part, parts, b64) {
                whole = Some(r.unwrap());
            }
        }
        assert_eq!(whole.unwrap(), bytes);
        assert!(asm.unfinished().is_empty());
        assert!(parse_line("srun: job 5 queued").is_none());
    }
}
