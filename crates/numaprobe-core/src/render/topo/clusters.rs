//! The topology picture's cluster table and heterogeneous-core finding
//! (arm64 PPTT clusters, `cpu_capacity`), shown only where they say
//! something: a cluster of more than one core, capacities that differ.

use super::*;
use crate::topology::clusters::{clusters, heterogeneity};

/// One row per cluster, or None when no cluster holds more than one core.
pub(super) fn cluster_table(t: &Topology) -> Option<Table> {
    let cl = clusters(t);
    if cl.is_empty() {
        return None;
    }
    let mut tab = Table::new(["cluster", "package", "cpus", "cores", "capacity"])
        .with_title("Clusters (cores sharing a cluster, between core and package)");
    for c in &cl {
        tab.push([
            c.id.to_string(),
            opt(c.package),
            format_list(&c.cpus),
            c.cores.to_string(),
            if c.capacities.is_empty() {
                "-".to_string()
            } else {
                c.capacities
                    .iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join("/")
            },
        ]);
    }
    Some(tab)
}

/// The heterogeneous-core finding as a line of the header, or nothing.
pub(super) fn heterogeneity_line(t: &Topology) -> String {
    heterogeneity(t).map_or(String::new(), |h| format!("  {h}\n"))
}
