//! The result model of `infer`: levels, hops, links, groups, the node
//! hierarchy, findings and advice. The serde form is the JSON contract
//! documented in doc/json.md (`numaprobe/1`). The analysis fills it; the
//! tables and the ASCII drawing are in `render::infer`, the graph picture in
//! `render::graph`. The two text helpers at the end are shared by the
//! analysis (findings' wording) and the renderers.

use serde::{Deserialize, Serialize};

pub use super::infer_cells::{CellInfo, Cells};
pub use super::infer_data::{FindingData, LevelLinks, LevelName, Link, PairPath};
pub(crate) use super::infer_grid::{index_of, Grid, Place};
pub use super::infer_links::LinkDetails;
pub use super::infer_members::Members;
pub use super::node_table::NodeTable;

/// One performance level: cells whose values cannot be told apart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Level {
    /// `local` (a node's own memory) or `remote`.
    pub kind: String,
    /// Short name used in drawings and tables: `L` for local, then `A`, `B`, ...
    pub name: String,
    /// Median of the member cells, in the input's unit.
    pub value: f64,
    pub min: f64,
    pub max: f64,
    /// Directed cells `[requesting node, memory node]` (node numbers).
    pub members: Members,
    /// Hop counts found among the members (0 for local).
    pub hops: Vec<u32>,
    /// `value` over the local level's median: above 1 is slower for latency
    /// and distance, below 1 is less bandwidth. None without local cells.
    pub ratio_to_local: Option<f64>,
}

impl Level {
    /// The level's hop counts as text, `sep` between them (`1/2` in the
    /// drawings and advice, `1,2` in the levels table).
    pub fn hops_text(&self, sep: &str) -> String {
        self.hops
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(sep)
    }
}

/// One tier of the node hierarchy: the groups that the pairs of `level`
/// and every better level join (sub-NUMA clusters, then sockets, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tier {
    /// The level whose pairs close these groups.
    pub level: String,
    /// That level's median value, in the input's unit.
    pub value: f64,
    /// A partition of all nodes (a node alone is a group of one).
    pub groups: Vec<Vec<u32>>,
}

/// Something the data show, in words, with the numbers behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// A stable identifier, e.g. `requester-dependent`, `slit-fewer-levels`.
    pub kind: String,
    pub text: String,
    pub data: FindingData,
}

/// The whole inference: what `numaprobe infer --format json` writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Inference {
    pub schema: String,
    pub machine: Option<String>,
    /// `measurement` or `slit` (a firmware table analysed in its place).
    pub source: String,
    pub unit: String,
    /// `lower` (latency, distance) or `higher` (bandwidth) is better.
    pub better: String,
    /// Node numbers; `hops` rows and columns follow this order.
    pub nodes: Vec<u32>,
    pub levels: Vec<Level>,
    /// `hops[a][b]`: hops between `nodes[a]` and `nodes[b]`; null for a pair
    /// measured in neither direction.
    pub hops: NodeTable,
    /// Direct links as node pairs.
    pub links: Vec<[u32; 2]>,
    /// The same links with their level and value.
    pub link_details: LinkDetails,
    /// Groups of nodes joined by their fastest links (sub-NUMA clusters,
    /// sockets of a group); one group when there is no such structure.
    pub groups: Vec<Vec<u32>>,
    /// Sub-NUMA domains sharing a package (Intel SNC, AMD NPS): nodes whose
    /// pairs are a tier apart from local with no interconnect link between
    /// them, so 0 hops; empty when the machine shows none.
    #[serde(default)]
    pub on_package: Vec<Vec<u32>>,
    /// Nested groups, innermost first: tier k's groups are unions of tier
    /// k-1's. The last tier holds every node when the machine is connected.
    #[serde(default)]
    pub hierarchy: Vec<Tier>,
    /// `distance[a][b]`: the 1-based tier whose groups first hold both
    /// nodes (0 on the diagonal), so every pair across a group comes after
    /// every pair inside it; null for a pair measured in neither direction.
    #[serde(default)]
    pub distance: NodeTable,
    /// Nodes with no CPU (no row in the input, or named CPU-less): memory
    /// only, never a place for threads.
    #[serde(default)]
    pub cpuless_nodes: Vec<u32>,
    /// Every cell of the input with its value, level, hops and distance.
    #[serde(default)]
    pub cells: Cells,
    /// Cells set aside as stray measurements.
    pub stray_cells: Vec<[u32; 2]>,
    pub findings: Vec<Finding>,
    pub advice: Vec<Finding>,
}

impl Inference {
    pub fn level_of(&self, from: u32, to: u32) -> Option<&Level> {
        self.levels.iter().find(|l| l.members.contains(&[from, to]))
    }

    /// The groups as text: `[0,1] [2,3]` (the ASCII drawing and the advice).
    pub fn groups_text(&self) -> String {
        groups_text(&self.groups, false)
    }

    pub fn hops_between(&self, a: u32, b: u32) -> Option<u32> {
        let i = self.nodes.iter().position(|&n| n == a)?;
        let j = self.nodes.iter().position(|&n| n == b)?;
        self.hops.get(i, j)
    }
}

/// Groups as `[0,1] [2,3]`; with `skip_single`, groups of one node are left
/// out (and `(others alone)` said when there were some).
pub fn groups_text(groups: &[Vec<u32>], skip_single: bool) -> String {
    let shown: Vec<String> = groups
        .iter()
        .filter(|g| !skip_single || g.len() > 1)
        .map(|g| {
            format!(
                "[{}]",
                g.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
            )
        })
        .collect();
    let alone = skip_single && groups.iter().any(|g| g.len() == 1);
    let mut s = shown.join(" ");
    if alone {
        s.push_str(if shown.is_empty() {
            "(every node alone)"
        } else {
            " (others alone)"
        });
    }
    s
}

/// Numbers as people write them: 3 significant digits below 1000, integers
/// above.
pub fn fmt_value(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}
