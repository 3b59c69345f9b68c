//! Putting a node's files back together as lines arrive, within the
//! limits, each line coming to one [`Event`].

use super::base64::decode;
use super::frame::{node_of_bad_line, parse_line, Frame, FrameError};
use super::limits::{Limits, PIECE_COST};
use std::collections::BTreeMap;

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
/// limits: memory is what was really received, at most [`MAX_NODE`](super::MAX_NODE) per node.
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
