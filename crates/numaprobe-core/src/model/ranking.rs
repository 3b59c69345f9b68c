//! A ranking of alternatives measured by one figure (policy comparison,
//! `tune` candidates): what every renderer needs to draw a sorted bar chart
//! with spreads, whatever experiment produced it.

use serde::{Deserialize, Serialize};

/// Which way is better for a ranking's figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    /// Times: the smallest wins.
    Lower,
    /// Throughputs: the largest wins.
    Higher,
}

/// One alternative: its median and the spread of its samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankEntry {
    pub label: String,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// How many samples the figures come from.
    pub samples: usize,
    /// Why the entry is not ranked (it failed), or a remark; None when ranked plainly.
    pub note: Option<String>,
    /// False for an entry that failed or has no samples: drawn, never ranked.
    pub ranked: bool,
    /// Why its figure cannot be taken as is; a flagged entry is starred
    /// and drawn apart from the good colour of the winner.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
}

/// Alternatives ordered best first (unranked ones last).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ranking {
    pub title: String,
    /// Unit of the figure, e.g. "s" or "GB/s".
    pub unit: String,
    pub better: Better,
    pub entries: Vec<RankEntry>,
}
