//! A node's topology and firmware signature, read from its `run.json`, and
//! the grouping of a fleet by it. The signature is read from the loose
//! shapes of `run_doc` (not the typed `Topology`) so that reports written
//! by other numaprobe versions still group as long as they carry the fields.

use super::run_doc::{Provenance, SigDoc, SigTopology};
use crate::model::fleet::{FieldDiff, Signature, SignatureGroup};
use crate::model::lax::{Lax, Node};
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

const GIB: f64 = (1u64 << 30) as f64;

/// The signature of one run document (`run.json`) held as a JSON value:
/// its `topology` and the kernel from its `provenance`.
pub fn of_run(doc: &Value) -> Signature {
    // A JSON value reads as these loose shapes whatever it holds.
    let d = SigDoc::deserialize(doc).unwrap_or_default();
    of_parts(&d.topology, &d.provenance)
}

/// The signature of a topology and provenance as the fleet reads them.
pub fn of_parts(topo: &Node<SigTopology>, provenance: &Node<Provenance>) -> Signature {
    let topo = topo.or_empty();
    let str_of = |v: &Lax<String>| v.cloned().unwrap_or_default();
    let packages = topo.packages.len();
    let nodes = &topo.numa_nodes.0;
    let cpu_nodes = nodes
        .iter()
        .filter(|n| n.get().is_some_and(|n| !n.cpus.is_empty()))
        .count();
    let memory_gib = nodes
        .iter()
        .map(|n| {
            let bytes = n.get().and_then(|n| n.memory_bytes.copied());
            (bytes.unwrap_or(0.0) / GIB).round() as u64
        })
        .collect();
    // A distance past u32 saturates: cut to its low bits it could read as
    // another node's 10 or 20 and put the node in that node's group.
    let slit = topo
        .distances
        .get()
        .map(|d| {
            d.matrix
                .0
                .iter()
                .map(|r| {
                    r.0.iter()
                        .map(|v| u32::try_from(v.copied().unwrap_or(0)).unwrap_or(u32::MAX))
                        .collect()
                })
                .collect()
        })
        .unwrap_or_default();
    let llc_bytes = topo
        .caches
        .0
        .iter()
        .map(|c| c.or_empty())
        .filter(|c| c.kind.get().map(String::as_str) != Some("Instruction"))
        .max_by_key(|c| c.level.copied().unwrap_or(0))
        .and_then(|c| c.size_bytes.copied())
        .unwrap_or(0);
    let numbering = topo.numbering.or_empty();
    let numbering = format!(
        "{} / {}",
        str_of(&numbering.packages),
        str_of(&numbering.smt)
    );
    let kernel = provenance
        .get()
        .and_then(|p| p.kernel.cloned())
        .unwrap_or_default();
    Signature {
        cpu_model: str_of(&topo.cpu_model),
        packages,
        numa_nodes: nodes.len(),
        nodes_per_package: cpu_nodes.checked_div(packages).unwrap_or(0),
        cpus: topo.cpus.len(),
        allowed_cpus: topo.allowed.get().map_or(0, |a| a.cpus.len()),
        numbering,
        slit,
        thp: str_of(&topo.thp_mode),
        kernel,
        memory_gib,
        llc_bytes,
    }
}

/// Group named signatures: largest group first, each but the first with
/// the fields in which it differs from it. The tie rule, for groups of
/// equal size: the group whose first node comes first in natural name
/// order (`node2` before `node10`, as the report lists them) comes first.
/// Group 0 is then a baseline by that rule only, which the report says
/// (`FleetReport::baseline_tied`) and `check` refuses without `--group`.
pub fn group(signatures: &[(String, Signature)]) -> Vec<SignatureGroup> {
    let mut by_sig: BTreeMap<&Signature, BTreeSet<&str>> = BTreeMap::new();
    for (name, sig) in signatures {
        by_sig.entry(sig).or_default().insert(name);
    }
    let mut groups: Vec<SignatureGroup> = by_sig
        .into_iter()
        .map(|(sig, names)| SignatureGroup {
            signature: sig.clone(),
            nodes: names.into_iter().map(String::from).collect(),
            differs: Vec::new(),
        })
        .collect();
    for g in &mut groups {
        g.nodes.sort_by(|a, b| super::natural_cmp(a, b));
    }
    groups.sort_by(|a, b| {
        b.nodes
            .len()
            .cmp(&a.nodes.len())
            .then_with(|| super::natural_cmp(&a.nodes[0], &b.nodes[0]))
    });
    if let Some(first) = groups.first() {
        let majority = first.signature.fields();
        for g in groups.iter_mut().skip(1) {
            g.differs = g
                .signature
                .fields()
                .into_iter()
                .zip(&majority)
                .filter(|((_, v), (_, m))| v != m)
                .map(|((field, v), (_, m))| FieldDiff {
                    field: field.to_string(),
                    value: v,
                    majority: m.clone(),
                })
                .collect();
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(cpus: usize) -> Signature {
        of_run(&serde_json::json!({
            "topology": { "cpus": vec![serde_json::json!({}); cpus], "allowed": { "cpus": [] } }
        }))
    }

    /// Ties between equal-size groups go to the group whose first node
    /// comes first in natural order, whatever order the nodes came in.
    #[test]
    fn equal_groups_are_ordered_by_their_first_node_in_natural_order() {
        let named = |v: &[(&str, usize)]| -> Vec<(String, Signature)> {
            v.iter().map(|(n, c)| (n.to_string(), sig(*c))).collect()
        };
        for order in [
            named(&[("node10", 1), ("node2", 2)]),
            named(&[("node2", 2), ("node10", 1)]),
        ] {
            let g = group(&order);
            assert_eq!(g[0].nodes, ["node2"], "{order:?}");
            assert_eq!(g[1].nodes, ["node10"]);
            assert_eq!(g[1].differs[0].field, "cpus");
        }
        // Within a group, the nodes are in natural order too.
        let g = group(&named(&[("n10", 2), ("n9", 2), ("n1", 1)]));
        assert_eq!(g[0].nodes, ["n9", "n10"]);
        // Size first: a larger group wins whatever its names.
        let g = group(&named(&[("a1", 1), ("z1", 2), ("z2", 2)]));
        assert_eq!(g[0].nodes, ["z1", "z2"]);
    }

    /// What a node's report says becomes its signature: memory per node in
    /// whole GiB, the NUMA nodes with CPUs per package (memory-only nodes
    /// left out), the largest data or unified cache, the kernel it ran.
    #[test]
    fn a_reports_topology_and_kernel_make_its_signature() {
        let gib = (1u64 << 30) as f64;
        let node = |cpus: usize, mem: f64| serde_json::json!({ "cpus": vec![0; cpus], "memory_bytes": mem * gib });
        let doc = serde_json::json!({
            "topology": {
                "cpu_model": "Example CPU 9000",
                "packages": [{}, {}],
                // Four nodes with CPUs on two packages, two memory-only.
                "numa_nodes": [
                    node(4, 15.6), node(4, 16.0), node(4, 16.4), node(4, 16.0),
                    node(0, 64.0), node(0, 0.4),
                ],
                "cpus": vec![serde_json::json!({}); 16],
                "allowed": { "cpus": [0, 1, 2, 3] },
                "numbering": { "packages": "blocked", "smt": "adjacent" },
                "distances": { "matrix": [[10, 21], [21, 10]] },
                "caches": [
                    { "level": 1, "type": "Data", "size_bytes": 49152 },
                    { "level": 1, "type": "Instruction", "size_bytes": 32768 },
                    { "level": 3, "type": "Unified", "size_bytes": 33554432 },
                    { "level": 2, "type": "Unified", "size_bytes": 2097152 },
                    { "level": 4, "type": "Instruction", "size_bytes": 7 },
                ],
                "thp_mode": "madvise",
            },
            "provenance": { "kernel": "6.1.0-18-amd64" },
        });
        let s = of_run(&doc);
        assert_eq!(
            s,
            Signature {
                cpu_model: "Example CPU 9000".into(),
                packages: 2,
                numa_nodes: 6,
                nodes_per_package: 2,
                cpus: 16,
                allowed_cpus: 4,
                numbering: "blocked / adjacent".into(),
                slit: vec![vec![10, 21], vec![21, 10]],
                thp: "madvise".into(),
                kernel: "6.1.0-18-amd64".into(),
                memory_gib: vec![16, 16, 16, 16, 64, 0],
                llc_bytes: 33554432,
            }
        );
        // A distance past 32 bits saturates: its low bits (10, 21) would
        // put the node in the group of the nodes that say 10 and 21.
        let hostile = (1u64 << 32) + 10;
        let mut wide = doc.clone();
        wide["topology"]["distances"]["matrix"] = serde_json::json!([[hostile, 21], [21, 10]]);
        let w = of_run(&wide);
        assert_eq!(w.slit, vec![vec![u32::MAX, 21], vec![21, 10]]);
        assert_ne!(w, s);
        // A report without a topology reads as empty fields, never a guess.
        let empty = of_run(&serde_json::json!({}));
        assert_eq!((empty.nodes_per_package, empty.llc_bytes), (0, 0));
        assert_eq!(empty.numbering, " / ");
    }

    /// A group unlike the largest names exactly the fields that differ,
    /// with its value and the largest group's; the largest names none.
    #[test]
    fn a_smaller_group_names_only_the_fields_it_differs_in() {
        let g = group(&[
            ("n1".into(), sig(16)),
            ("n2".into(), sig(8)),
            ("n3".into(), sig(16)),
        ]);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].nodes, ["n1", "n3"]);
        assert!(g[0].differs.is_empty());
        assert_eq!(
            g[1].differs,
            [FieldDiff {
                field: "cpus".into(),
                value: "8".into(),
                majority: "16".into(),
            }]
        );
        assert!(group(&[]).is_empty());
    }
}
