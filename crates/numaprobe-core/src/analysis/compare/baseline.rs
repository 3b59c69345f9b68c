//! `check --expect fleet.json`: this machine against one signature group of
//! a fleet (the largest by default). The group's signature is compared field
//! by field with this machine's, read the same way `fleet` reads a node
//! (`analysis::fleet::signature`), memory per node within the check's
//! tolerance; the group's per-cell medians are the expected matrices, and
//! this node's own measurements (`--measured`) are judged against them with
//! the check's band (`check::band`).

use super::judge::{band, describe, pct, Expected, Options, Outcome, This};
use super::CompareError;
use crate::analysis::fleet::{robust, signature};
use crate::model::diff::{Difference, Section};
use crate::model::fleet::{FleetReport, Signature};
use crate::model::topo::TopoReport;
use crate::topology::cpulist::format_list;
use std::collections::BTreeMap;

const GIB: f64 = (1u64 << 30) as f64;

/// The section each signature field (`Signature::fields` names) belongs to.
fn section_of(field: &str) -> Option<Section> {
    Some(match field {
        "cpu_model" => Section::Machine,
        "packages" | "nodes_per_package" => Section::Packages,
        "numa_nodes" => Section::Nodes,
        "cpus" => Section::Cpus,
        "allowed_cpus" => Section::Allowed,
        "numbering" => Section::Numbering,
        "slit" => Section::Slit,
        "thp" => Section::Thp,
        "kernel" => Section::Kernel,
        "memory_per_node" => Section::Memory,
        "llc_bytes" => Section::Caches,
        _ => return None,
    })
}

/// Check `this` against group `opts.group` (1, the largest, when None) of
/// `fleet`. Groups are numbered from 1 as fleet.md, fleet.html and the
/// Prometheus export print them; `FleetNode::group` stays the index into
/// `groups`, so a fleet.json of any age reads the same.
pub(super) fn against_fleet(
    fleet: &FleetReport,
    path: &str,
    this: &This,
    opts: &Options,
    out: &mut Outcome,
) -> Result<(), CompareError> {
    let number = opts.group.unwrap_or(1);
    let bad = |what: String| CompareError::Unsupported {
        path: path.into(),
        what,
    };
    let Some((g, group)) = number
        .checked_sub(1)
        .and_then(|g| fleet.groups.get(g).map(|group| (g, group)))
    else {
        return Err(bad(if fleet.groups.is_empty() {
            "holds no signature group (no node sent a usable report): nothing to check against"
                .into()
        } else {
            format!(
                "--group {number}: the fleet has {} signature group{} (1 is the largest; valid: {})",
                fleet.groups.len(),
                if fleet.groups.len() == 1 { "" } else { "s" },
                valid_groups(fleet.groups.len())
            )
        }));
    };
    if opts.group.is_none() && fleet.baseline_tied() {
        return Err(bad(format!(
            "no group is the largest (groups 1 and 2 hold {} node(s) each): choose the one to check against with --group (valid: {})",
            fleet.groups[0].nodes.len(),
            valid_groups(fleet.groups.len())
        )));
    }
    let on = |s: Section| opts.sections.contains(&s);
    let doc = serde_json::json!({
        "topology": TopoReport::new(this.topology),
        "provenance": { "kernel": this.kernel.unwrap_or("") },
    });
    let mine = signature::of_run(&doc);
    let expected = &group.signature;
    let theirs = mine.fields();
    let mut compared = Vec::new();
    for ((field, want), (_, got)) in expected.fields().into_iter().zip(theirs) {
        let Some(section) = section_of(field).filter(|&s| on(s)) else {
            continue;
        };
        let item = Signature::field_words(field);
        if section == Section::Kernel && (this.kernel.is_none() || expected.kernel.is_empty()) {
            out.notes.push(
                "kernel not compared: a dump (--sysfs-root) does not say its machine's kernel"
                    .into(),
            );
            continue;
        }
        if section == Section::Memory {
            compared.push(format!(
                "memory per node (within {} % and the GiB the fleet rounds to)",
                pct(opts.memory_tolerance * 100.0)
            ));
            memory(expected.memory_gib.as_slice(), this, opts, out);
            continue;
        }
        compared.push(item.to_string());
        if want != got {
            let got = match field {
                // fleet.json keeps the count only; this machine's list says
                // which CPUs it is allowed, as the topology check names them.
                "allowed_cpus" => format!("{got} ({})", format_list(&this.topology.allowed.cpus)),
                _ => got,
            };
            out.differences
                .push(Difference::new(section, item, want, got));
        }
    }
    out.checked.push(format!(
        "signature of group {number} of {} ({} node{}: {}): {}",
        fleet.groups.len(),
        group.nodes.len(),
        if group.nodes.len() == 1 { "" } else { "s" },
        crate::units::some_names(&group.nodes, 5),
        compared.join(", ")
    ));
    medians(fleet, g, this, opts, out);
    Ok(())
}

/// `1-3`, or `1` for a fleet of one group: the numbers `--group` takes.
fn valid_groups(n: usize) -> String {
    if n == 1 {
        "1".into()
    } else {
        format!("1-{n}")
    }
}

/// Memory per node: the group's figure is rounded to the GiB, so half a GiB
/// of rounding is allowed on top of the tolerance.
fn memory(expected_gib: &[u64], this: &This, opts: &Options, out: &mut Outcome) {
    for (i, node) in this.topology.nodes.iter().enumerate() {
        let Some(&want) = expected_gib.get(i) else {
            break;
        };
        let got = node.memory_bytes as f64 / GIB;
        let want_f = want as f64;
        if (got - want_f).abs() > opts.memory_tolerance * got.max(want_f) + 0.5 {
            out.differences.push(Difference::new(
                Section::Memory,
                format!("node {}: memory", node.os_index),
                format!("{want} GiB"),
                format!("{got:.1} GiB"),
            ));
        }
    }
}

/// The group's median per cell, against this node's measurements.
fn medians(fleet: &FleetReport, g: usize, this: &This, opts: &Options, out: &mut Outcome) {
    let members: Vec<_> = fleet.nodes.iter().filter(|n| n.group == Some(g)).collect();
    for (section, found) in [
        (
            Section::Latency,
            this.measured.and_then(|m| m.latency.as_ref()),
        ),
        (
            Section::Bandwidth,
            this.measured.and_then(|m| m.bandwidth.as_ref()),
        ),
    ] {
        if !opts.sections.contains(&section) {
            continue;
        }
        let mut expected = BTreeMap::new();
        let mut unit = String::new();
        for m in &fleet.metrics {
            let Some(cell) = metric_cell(&m.id, section.name()) else {
                continue;
            };
            // The group's figures that hold: a flagged one sets no baseline.
            let values: Vec<f64> = members
                .iter()
                .filter(|n| !n.untrusted.contains_key(m.id.as_str()))
                .filter_map(|n| n.values.get(m.id.as_str()).copied())
                .collect();
            if let Some(med) = robust::median(&values) {
                expected.insert(
                    cell,
                    Expected {
                        median: med,
                        evidence: None,
                    },
                );
                unit.clone_from(&m.unit);
            }
        }
        if expected.is_empty() {
            continue;
        }
        let Some(found) = found else {
            out.notes.push(format!(
                "{} not compared: the fleet holds the group's {0} medians; give this node's own run.json with --measured",
                section.name()
            ));
            continue;
        };
        out.checked.push(describe(section, opts));
        band(section, &unit, &expected, found, opts, None, out);
    }
}

/// `latency 0->1` as (0, 1) when its kind is `kind`.
fn metric_cell(id: &str, kind: &str) -> Option<(u32, u32)> {
    let rest = id.strip_prefix(kind)?.strip_prefix(' ')?;
    let (cpu, mem) = rest.split_once("->")?;
    Some((cpu.parse().ok()?, mem.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_ids_name_their_cell() {
        assert_eq!(metric_cell("latency 0->1", "latency"), Some((0, 1)));
        assert_eq!(metric_cell("bandwidth 12->3", "bandwidth"), Some((12, 3)));
        assert_eq!(metric_cell("bandwidth 0->1", "latency"), None);
        assert_eq!(metric_cell("latency0->1", "latency"), None);
        assert_eq!(metric_cell("latency 0-1", "latency"), None);
    }
}
