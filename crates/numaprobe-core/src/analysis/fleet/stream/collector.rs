//! Putting a node's files back together as lines arrive, within the
//! limits, each line coming to one [`Event`]. Besides each node's own
//! limits, the stream as a whole is bounded: node names (the job's list,
//! or at most [`Limits::names`]) and the unfinished files' bytes of all
//! nodes together ([`Limits::pending`]; past it the node holding the most
//! is dropped, so one node cannot crowd the others out).

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
    /// A piece of a node's file was taken, the file not yet whole: a sign
    /// of life, so a report whose upload outlasts the launcher's grace (a
    /// slow link, a large report) is not taken for a dead node.
    Piece(String),
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
    /// What its pieces cost against the stream's bound (characters plus
    /// each piece's cost).
    cost: usize,
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
    /// What its unfinished files cost against the stream's bound.
    held: usize,
    /// Why its files are no longer taken, once the stream's bound dropped
    /// it, and whether a line said so yet.
    dropped: Option<(FrameError, bool)>,
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
    /// What every node's unfinished files cost against [`Limits::pending`].
    held: usize,
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
            held: 0,
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

    /// Without a node list, take at most `count` node names (the job's
    /// node count): the first ones heard.
    pub fn at_most(mut self, count: usize) -> Self {
        self.limits.names = count;
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
        } else if !self.nodes.contains_key(node) {
            if self.nodes.len() >= self.limits.names {
                return Some(Event::Skipped {
                    node: Some(node.to_string()),
                    why: FrameError::TooManyNames(self.limits.names),
                });
            }
            self.nodes.insert(node.to_string(), NodeState::default());
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
                Ok(None) => Event::Piece(node),
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
        let cost = b64.len() + PIECE_COST;
        let st = self.nodes.entry(node.to_string()).or_default();
        if let Some((why, told)) = &mut st.dropped {
            *told = true;
            return Err(why.clone());
        }
        if st.received + cost > lim.node {
            self.forget(node, name);
            return Err(FrameError::NodeTooLarge(lim.node));
        }
        while self.held + cost > lim.pending {
            if self.shed(node) == node {
                let st = self.nodes.get_mut(node).expect("present");
                let (why, told) = st.dropped.as_mut().expect("just dropped");
                *told = true;
                return Err(why.clone());
            }
        }
        let st = self.nodes.get_mut(node).expect("entered above");
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
                    cost: 0,
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
            self.forget(node, name);
            return Err(e);
        }
        st.received += cost;
        st.held += cost;
        self.held += cost;
        let p = st.pending.get_mut(name).expect("checked above");
        p.held += b64.len();
        p.cost += cost;
        p.pieces.insert(part, b64);
        if p.pieces.len() < p.parts {
            return Ok(None);
        }
        let done = self.forget(node, name).expect("present");
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

    /// Drop `node`'s unfinished file `name`, its cost given back.
    fn forget(&mut self, node: &str, name: &str) -> Option<Pending> {
        let st = self.nodes.get_mut(node)?;
        let p = st.pending.remove(name)?;
        st.held -= p.cost;
        self.held -= p.cost;
        Some(p)
    }

    /// Past the stream's bound: drop the node holding the most unfinished
    /// bytes (`asking`, the node whose piece crossed it, when none holds
    /// any), and return its name.
    fn shed(&mut self, asking: &str) -> String {
        let victim = self
            .nodes
            .iter()
            .filter(|(_, st)| st.held > 0)
            .max_by(|a, b| a.1.held.cmp(&b.1.held).then_with(|| b.0.cmp(a.0)))
            .map_or_else(|| asking.to_string(), |(n, _)| n.clone());
        let st = self.nodes.get_mut(&victim).expect("a node of the stream");
        let own = st.held;
        st.pending.clear();
        st.held = 0;
        self.held -= own;
        st.dropped = Some((
            FrameError::Dropped {
                limit: self.limits.pending,
                own,
            },
            false,
        ));
        victim
    }

    /// Nodes dropped by the stream's bound whose drop no line of theirs
    /// said yet, with why (for the end of the stream).
    pub fn dropped(&self) -> Vec<(String, FrameError)> {
        self.nodes
            .iter()
            .filter_map(|(n, st)| match &st.dropped {
                Some((why, false)) => Some((n.clone(), why.clone())),
                _ => None,
            })
            .collect()
    }

    /// What the unfinished files of every node cost now against
    /// [`Limits::pending`].
    pub fn held(&self) -> usize {
        self.held
    }

    /// Files of which some pieces never came, as (node, name).
    pub fn unfinished(&self) -> Vec<(String, String)> {
        self.nodes
            .iter()
            .flat_map(|(n, st)| st.pending.keys().map(move |f| (n.clone(), f.clone())))
            .collect()
    }
}
