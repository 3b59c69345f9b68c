//! Peak bandwidth (`numaprobe peak`): every allowed CPU of every node
//! streaming its own node's memory at once (MLC's peak injection bandwidth)
//! per traffic mix, beside each node alone; and, where SMBIOS is readable,
//! the DIMM population and the theoretical DRAM peak it allows.

use crate::timer::TimerInfo;
use serde::{Deserialize, Serialize};

/// One node streaming its own memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodePeak {
    pub node: u32,
    pub mix: String,
    pub threads: usize,
    pub gbs: f64,
    /// Measured with every node at once (true) or this node alone (false).
    pub concurrent: bool,
    /// The CPUs the threads were seen on (pinned, then checked).
    #[serde(default)]
    pub cpus: Vec<u32>,
    /// Share of the threads' buffer pages on `node` (move_pages).
    #[serde(default)]
    pub placement: f64,
    /// Coefficient of variation of the samples.
    #[serde(default)]
    pub cv: f64,
    /// Placement below 99 %, a CPU that is not the one pinned to, ...
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    /// True when the figure must not be trusted as is (see `flags`).
    #[serde(default)]
    pub flagged: bool,
    /// Samples set aside because a streaming thread lost its CPU (a
    /// node's figure shares its step's).
    #[serde(default)]
    pub set_aside: crate::stats::SetAside,
}

/// The whole system at once, one mix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemPeak {
    pub mix: String,
    pub threads: usize,
    pub gbs: f64,
    /// Share of all buffer pages on their thread's node.
    #[serde(default)]
    pub placement: f64,
    #[serde(default)]
    pub samples: usize,
    #[serde(default)]
    pub cv: f64,
    /// Sum of the nodes measured alone (same mix), GB/s: how much of it
    /// the system keeps with every node busy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sum_of_nodes_alone_gbs: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    /// True when the figure must not be trusted as is (see `flags`).
    #[serde(default)]
    pub flagged: bool,
    /// Samples set aside because a streaming thread lost its CPU (a
    /// node's figure shares its step's).
    #[serde(default)]
    pub set_aside: crate::stats::SetAside,
}

/// One SMBIOS memory device (type 17).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MemoryDevice {
    pub locator: String,
    pub bank: String,
    /// 0 when the slot is empty.
    pub size_bytes: u64,
    /// e.g. "DDR4".
    pub kind: String,
    /// Rated and configured speed, MT/s.
    pub speed_mts: Option<u32>,
    pub configured_mts: Option<u32>,
    /// Data width in bits (64 for a DDR4 DIMM without ECC bits).
    pub data_width_bits: Option<u32>,
    pub manufacturer: String,
    pub part: String,
    /// The socket the slot belongs to, where the locator or bank says.
    pub socket: Option<u32>,
    /// The memory channel the slot is on, where the locator or bank says
    /// (`A`, `0`); two DIMMs on one channel share its bandwidth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
}

/// The slots of one socket (or of every slot whose socket is unknown:
/// `socket` None).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SocketPopulation {
    pub socket: Option<u32>,
    pub slots: usize,
    pub populated_slots: usize,
    /// Channels seen (a slot whose channel is unknown counts as its own).
    pub channels: usize,
    pub populated_channels: usize,
    pub bytes: u64,
    /// Σ populated channels x configured MT/s x data width / 8, GB/s.
    pub theoretical_gbs: Option<f64>,
}

/// What SMBIOS says about memory, or why nothing is known.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MemoryPopulation {
    /// `smbios` (/sys/firmware/dmi/tables), `dmidecode` (a file given) or
    /// `unknown`.
    pub source: String,
    /// Why unknown (not root, no tables, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown_because: Option<String>,
    pub devices: Vec<MemoryDevice>,
    /// Per socket, in socket order.
    #[serde(default)]
    pub sockets: Vec<SocketPopulation>,
    /// Theoretical DRAM peak of the populated devices, GB/s.
    pub theoretical_gbs: Option<f64>,
    /// Fewer populated channels on one socket, mixed DIMMs, ...
    pub findings: Vec<String>,
}

/// `numaprobe peak`'s document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeakResult {
    pub schema: String,
    pub system: Vec<SystemPeak>,
    pub nodes: Vec<NodePeak>,
    pub memory: MemoryPopulation,
    /// Best system figure over the theoretical peak, where both are known.
    pub achieved_fraction: Option<f64>,
    /// Buffer bytes per thread (read and write buffers together).
    #[serde(default)]
    pub size_bytes: u64,
    /// Page kind of the buffers (`4k`, `thp`, ...); empty with --memory-only.
    #[serde(default)]
    pub pages: String,
    /// Vector width of the read kernel (`avx512`, `neon`, ...), as
    /// `bandwidth` records it; empty with --memory-only.
    #[serde(default)]
    pub vector: String,
    pub timer: TimerInfo,
    pub notes: Vec<String>,
    pub complete: bool,
    #[serde(default)]
    pub interrupted: bool,
}
