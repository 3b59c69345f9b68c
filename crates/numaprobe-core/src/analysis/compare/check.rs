//! `numaprobe check --expect FILE`: is this machine (or a dump) still the one
//! a job script or a node health check expects?
//!
//! Against a saved topology or run: the sections of [`topo::topology_with`]
//! (CPU model, packages, nodes, numbering, every CPU's place, allowed CPUs
//! and nodes, memory per node within a stated tolerance, huge pages, SLIT,
//! HMAT, caches, THP, PCI device locality), the kernel release, and, when the
//! expectation holds matrices and this node's own measurements are given,
//! every latency and bandwidth cell within a stated band ([`band`]).
//! Against a fleet's group baseline: see [`super::baseline`]. Against a saved
//! `pin` result: every CPU it names still exists, is online and allowed, and
//! sits on the same package, core, node and SMT rank as when the binding was
//! computed. `--only` / `--skip` choose the sections ([`select`]).

use super::judge::{band, describe, expected, Outcome};
use super::{baseline, cells, topo, trust, CompareError, Side};
use crate::model::diff::{CheckReport, Difference, Section};
use crate::model::pin::PinReport;
use crate::topology::Topology;

pub use super::judge::{
    section_names, sections, select, Options, This, DEFAULT_BAND_PCT, DEFAULT_MEMORY_TOLERANCE,
};

/// Check `this` machine against the saved `expect` (a topo, run, fleet or
/// pin document, or a report folder).
pub fn check(expect: &Side, this: &This, opts: &Options) -> Result<CheckReport, CompareError> {
    let mut out = Outcome::default();
    let on = |s: Section| opts.sections.contains(&s);
    let mut sections = opts.sections.clone();
    let kind = if let Some(pin) = &expect.pin {
        if on(Section::Binding) {
            out.checked.push(format!(
                "the {} CPUs of the saved binding: online, allowed, same package, core, node and SMT rank",
                pin.cpus.len()
            ));
            out.differences = binding(pin, this.topology);
        }
        "pin"
    } else if let Some(fleet) = &expect.fleet {
        baseline::against_fleet(fleet, &expect.origin.path, this, opts, &mut out)?;
        "fleet"
    } else if let Some(t) = &expect.topology {
        against_topology(expect, t, this, opts, &mut out);
        if expect.origin.kind == "topo" {
            "topo"
        } else {
            "report"
        }
    } else if expect.latency.is_some() || expect.bandwidth.is_some() {
        // A matrix alone says nothing of the machine's layout: only its
        // cells are judged, and they need this node's own run.
        if this.measured.is_none() {
            return Err(CompareError::Unsupported {
                path: expect.origin.path.clone().into(),
                what: "a matrix is checked against this node's own measurements: give them with --measured (a run.json, report folder or latency/bandwidth document of `numaprobe run`)".into(),
            });
        }
        against_matrices(expect, this, opts, &mut out);
        // Nothing of the machine is read: the report names the cell
        // sections alone, so that its answer names the measured document
        // and not this machine (a report folder of matrices included).
        sections.retain(|s| matches!(s, Section::Latency | Section::Bandwidth));
        if expect.origin.kind == "report" {
            "report"
        } else if expect.latency.is_some() {
            "latency"
        } else {
            "bandwidth"
        }
    } else {
        return Err(CompareError::Unsupported {
            path: expect.origin.path.clone().into(),
            what: format!(
                "holds nothing to check against; check --expect takes {}",
                super::EXPECT.names()
            ),
        });
    };
    Ok(CheckReport {
        schema: crate::SCHEMA.into(),
        expect: expect.origin.path.clone(),
        expect_kind: kind.into(),
        root: this.topology.root.display().to_string(),
        measured: this.measured.map(|m| m.origin.path.clone()),
        checked: out.checked,
        matches: out.differences.is_empty(),
        differences: out.differences,
        sections,
        notes: out.notes,
    })
}

fn against_topology(expect: &Side, t: &Topology, this: &This, opts: &Options, out: &mut Outcome) {
    let on = |s: Section| opts.sections.contains(&s);
    if on(Section::Kernel) {
        let saved = expect.origin.kernel.as_deref().filter(|_| expect.live());
        match (saved, this.kernel) {
            (Some(x), Some(y)) => {
                out.checked.push(describe(Section::Kernel, opts));
                if x != y {
                    out.differences.push(Difference::new(
                        Section::Kernel,
                        "kernel release",
                        x,
                        y,
                    ));
                }
            }
            _ => out.notes.push(
                "kernel not compared: a topology read from a dump (--sysfs-root) does not say its machine's kernel".into(),
            ),
        }
    }
    let sections: Vec<Section> = topo::ALL.iter().copied().filter(|&s| on(s)).collect();
    out.checked
        .extend(sections.iter().map(|&s| describe(s, opts)));
    out.differences.extend(topo::topology_with(
        t,
        this.topology,
        &sections,
        opts.memory_tolerance,
    ));
    against_matrices(expect, this, opts, out);
}

/// The expectation's matrices, cell by cell, against this node's own
/// (`--measured`), each within the band.
fn against_matrices(expect: &Side, this: &This, opts: &Options, out: &mut Outcome) {
    let on = |s: Section| opts.sections.contains(&s);
    if let (Some(sp), Some(_)) = (&expect.spread, this.measured) {
        out.notes
            .push(format!("the expectation pools {}", sp.describe()));
    }
    for (section, saved, found) in [
        (
            Section::Latency,
            &expect.latency,
            this.measured.and_then(|m| m.latency.as_ref()),
        ),
        (
            Section::Bandwidth,
            &expect.bandwidth,
            this.measured.and_then(|m| m.bandwidth.as_ref()),
        ),
    ] {
        let Some(saved) = saved.as_ref().filter(|_| on(section)) else {
            continue;
        };
        let Some(found) = found else {
            out.notes.push(format!(
                "{} not compared: the expectation holds a {0} matrix; give this node's own run.json with --measured",
                section.name()
            ));
            continue;
        };
        // Figures measured with other parameters measure something else:
        // the band would judge the parameters, not the machine. The section
        // is named and left unjudged; a configuration behind it (fewer
        // allowed CPUs) is the topology's difference to report.
        let params = cells::differing(saved, found);
        if !params.is_empty() {
            out.notes.push(not_comparable(section, &params));
            continue;
        }
        out.checked.push(describe(section, opts));
        let conditions = trust::conditions_differ(
            expect.system.as_ref(),
            this.measured.and_then(|m| m.system.as_ref()),
        );
        band(
            section,
            &saved.unit,
            &expected(saved, expect.spread.as_ref()),
            found,
            opts,
            conditions.as_deref(),
            out,
        );
    }
}

/// The note naming a matrix measured with other parameters than the
/// expectation's: each parameter, expected then found.
fn not_comparable(section: Section, params: &[(&str, String, String)]) -> String {
    let each: Vec<String> = params
        .iter()
        .map(|(name, x, y)| format!("{name}: expected {x}, found {y}"))
        .collect();
    // A default run's buffer follows its budget, the node's free memory
    // and the set-up rate, so two runs can differ in it on healthy nodes:
    // the remedy is the user's, said where the difference is seen.
    let remedy = if params.iter().any(|(name, ..)| *name == cells::BUFFER_SIZE) {
        "; measure both runs with the same --size"
    } else {
        ""
    };
    format!(
        "{} not compared: measured with other parameters ({}); its cells are not judged against the band{remedy}",
        section.name(),
        each.join("; ")
    )
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

#[cfg(test)]
#[path = "check_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "check_binding_tests.rs"]
mod binding_tests;

#[cfg(test)]
#[path = "check_fleet_tests.rs"]
mod fleet_tests;
