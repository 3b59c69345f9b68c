//! `numaprobe check --expect FILE`: is this machine (or a dump) still the one
//! a job script was written for? Against a saved topology: packages, nodes,
//! CPU numbering (each CPU's package, core, node and SMT siblings) and the
//! allowed CPUs and nodes; memory sizes, caches and firmware tables are
//! `diff`'s business. Against a saved `pin` result: every CPU it names still
//! exists, is online and allowed, and sits on the same package, core, node
//! and SMT rank as when the binding was computed.

use super::{topo, CompareError, Side};
use crate::model::diff::{CheckReport, Difference, Section};
use crate::model::pin::PinReport;
use crate::topology::Topology;

/// The sections a saved topology is checked on.
pub const SECTIONS: &[Section] = &[
    Section::Packages,
    Section::Nodes,
    Section::Numbering,
    Section::Cpus,
    Section::Allowed,
];

/// Check `machine` against the saved `expect` (a topo or pin document; a
/// run.json counts as its topology).
pub fn check(expect: &Side, machine: &Topology) -> Result<CheckReport, CompareError> {
    let (kind, checked, differences) = if let Some(pin) = &expect.pin {
        (
            "pin",
            vec![format!(
                "the {} CPUs of the saved binding: online, allowed, same package, core, node and SMT rank",
                pin.cpus.len()
            )],
            binding(pin, machine),
        )
    } else if let Some(t) = &expect.topology {
        (
            "topo",
            vec![
                "packages and their CPUs, NUMA nodes per package".into(),
                "NUMA nodes and their CPUs".into(),
                "numbering: package and SMT style, threads per core".into(),
                "every CPU: online, package, core, node, SMT siblings".into(),
                "allowed CPUs and memory nodes".into(),
            ],
            topo::topology(t, machine, SECTIONS),
        )
    } else {
        return Err(CompareError::Unsupported {
            path: expect.origin.path.clone().into(),
            what: "holds neither a topology nor a binding; give the output of `numaprobe topo -o t.json` or `numaprobe pin ... -o p.json`".into(),
        });
    };
    Ok(CheckReport {
        schema: crate::SCHEMA.into(),
        expect: expect.origin.path.clone(),
        expect_kind: kind.into(),
        root: machine.root.display().to_string(),
        checked,
        matches: differences.is_empty(),
        differences,
    })
}

/// Each thread of a saved binding against this machine.
fn binding(pin: &PinReport, t: &Topology) -> Vec<Difference> {
    let mut out = Vec::new();
    for p in &pin.placement {
        let item = format!("thread {} on CPU {}", p.thread, p.cpu);
        let id = |v: Option<i64>| v.map_or("?".into(), |x| x.to_string());
        let saved = format!(
            "package {}, core {}, node {}, SMT rank {}",
            id(p.package),
            id(p.core),
            p.node.map_or("?".into(), |n| n.to_string()),
            p.smt_rank
        );
        let now = match t.cpu(p.cpu) {
            None => "no such CPU".to_string(),
            Some(c) if !c.online => "offline".into(),
            Some(c) if !c.allowed => "not allowed (outside the affinity mask or cpuset)".into(),
            Some(c) => format!(
                "package {}, core {}, node {}, SMT rank {}",
                id(c.package),
                id(c.core),
                c.node.map_or("?".into(), |n| n.to_string()),
                c.smt_siblings
                    .iter()
                    .position(|&s| s == c.os_index)
                    .unwrap_or(0)
            ),
        };
        if saved != now {
            out.push(Difference::new(Section::Binding, item, saved, now));
        }
    }
    out
}
