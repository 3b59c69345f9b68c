//! What a check is given and how it judges, shared by the checks against a
//! topology or run (`check`) and against a fleet (`baseline`): the sections
//! and their choice (`--only` / `--skip`), the options with their stated
//! defaults (memory tolerance, band), the machine checked, the words for
//! what was compared, and the band on measured cells.

use crate::model::diff::{Difference, Section, ALL_SECTIONS};
use crate::model::matrix::{MatrixKind, MatrixResult};
use crate::topology::Topology;
use std::collections::BTreeMap;

use super::trust::{self, CellEvidence};
use super::Side;

/// The share of a node's memory that may differ from the expectation
/// without counting (0.03 = 3 %). The kernel's own reservations (crash
/// kernel, the memory map's page structures, firmware carve-outs) move a
/// node's total by well under 1 % between kernels, boots and firmware
/// updates; a node that lost one DIMM of its 8 (or 16) loses 12.5 % (6.25 %).
/// 3 % lies between the two.
pub const DEFAULT_MEMORY_TOLERANCE: f64 = 0.03;

/// How far, in percent, a cell's median may lie from the expectation's
/// before it counts. Repeated runs on one idle node agree within a few per
/// cent; a memory channel lost or a link trained at a lower speed moves the
/// cells it carries by 20 % or more.
pub const DEFAULT_BAND_PCT: f64 = 15.0;

/// The sections `check` compares, in report order: the names `--only` and
/// `--skip` take. Every section but the two only `diff` has (documents
/// present on one side, measurement parameters apart from the matrices).
pub fn sections() -> Vec<Section> {
    ALL_SECTIONS
        .iter()
        .copied()
        .filter(|s| !matches!(s, Section::Documents | Section::Parameters))
        .collect()
}

/// The section names, comma-separated, for help and errors.
pub fn section_names() -> String {
    sections()
        .iter()
        .map(|s| s.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The sections to compare: all of [`sections`], only those `only` names, or
/// all but those `skip` names (comma-separated lists). An unknown name is an
/// error naming it and the valid ones.
pub fn select(only: Option<&str>, skip: Option<&str>) -> Result<Vec<Section>, String> {
    let all = sections();
    let parse = |flag: &str, list: &str| -> Result<Vec<Section>, String> {
        let mut out = Vec::new();
        for name in list.split(',').map(str::trim) {
            match Section::parse(name).filter(|s| all.contains(s)) {
                Some(s) => out.push(s),
                None => {
                    let shown: String = name.chars().take(200).collect();
                    return Err(format!(
                        "{flag}: '{shown}' is not a section; valid: {}",
                        section_names()
                    ));
                }
            }
        }
        Ok(out)
    };
    let only = only.map(|l| parse("--only", l)).transpose()?;
    let skip = skip.map(|l| parse("--skip", l)).transpose()?;
    Ok(all
        .iter()
        .copied()
        .filter(|s| only.as_ref().is_none_or(|o| o.contains(s)))
        .filter(|s| skip.as_ref().is_none_or(|k| !k.contains(s)))
        .collect())
}

/// How a check compares.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The sections compared (see [`select`]).
    pub sections: Vec<Section>,
    /// See [`DEFAULT_MEMORY_TOLERANCE`].
    pub memory_tolerance: f64,
    /// See [`DEFAULT_BAND_PCT`].
    pub band_pct: f64,
    /// Against a fleet: the signature group as the pages number it, from 1
    /// (1, the largest, when None).
    pub group: Option<usize>,
    /// Count a measured cell off in the harmless direction too (faster
    /// latency, more bandwidth); by default only the harmful one fails.
    pub either_way: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            sections: sections(),
            memory_tolerance: DEFAULT_MEMORY_TOLERANCE,
            band_pct: DEFAULT_BAND_PCT,
            group: None,
            either_way: false,
        }
    }
}

/// The machine checked.
#[derive(Debug, Clone, Copy)]
pub struct This<'a> {
    pub topology: &'a Topology,
    /// This machine's kernel release; None for a dump (`--sysfs-root`),
    /// whose kernel nobody knows.
    pub kernel: Option<&'a str>,
    /// This node's own measurements (a run.json), for the matrices.
    pub measured: Option<&'a Side>,
}

/// What a check found so far.
#[derive(Debug, Default)]
pub(super) struct Outcome {
    pub checked: Vec<String>,
    pub differences: Vec<Difference>,
    pub notes: Vec<String>,
}

/// What a section compares, in words (for `checked`).
pub(super) fn describe(s: Section, opts: &Options) -> String {
    match s {
        Section::Machine => "CPU model".into(),
        Section::Kernel => "kernel release".into(),
        Section::Packages => "packages and their CPUs, NUMA nodes per package".into(),
        Section::Nodes => "NUMA nodes and their CPUs".into(),
        Section::Numbering => "numbering: package and SMT style, threads per core".into(),
        Section::Cpus => "every CPU: online, package, core, node, SMT siblings".into(),
        Section::Allowed => "allowed CPUs and memory nodes".into(),
        Section::Memory => format!(
            "memory per node (within {} %), huge pages configured",
            pct(opts.memory_tolerance * 100.0)
        ),
        Section::Slit => "firmware distance table (SLIT)".into(),
        Section::Hmat => "HMAT access attributes, memory tiers, memory-side caches".into(),
        Section::Caches => "caches: instances, sizes, CPUs per instance".into(),
        Section::Thp => "transparent huge pages mode".into(),
        Section::Pci => "PCI devices and their NUMA nodes".into(),
        Section::Latency | Section::Bandwidth => format!(
            "{} cells within {} % of the expected medians",
            s.name(),
            pct(opts.band_pct)
        ),
        other => other.name().into(),
    }
}

/// A percentage as people write it: `3`, `0.5`.
pub(super) fn pct(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// An expected cell: its median and, when the expectation is a saved run,
/// what its trust and noise are judged from (a fleet's group median has
/// neither: the fleet leaves untrusted figures out of it).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Expected {
    pub median: f64,
    pub evidence: Option<CellEvidence>,
}

/// Every measured cell of a saved run, by (CPU node, memory node); its
/// noise measured across runs where the expectation pools several
/// (`spread`, [`super::pool`]).
pub(super) fn expected(
    m: &MatrixResult,
    spread: Option<&trust::Spread>,
) -> BTreeMap<(u32, u32), Expected> {
    let kind = super::cells::kind_name(m.kind);
    m.cells
        .iter()
        .map(|c| {
            let e = Expected {
                median: c.median,
                evidence: Some(CellEvidence {
                    across_runs: spread.and_then(|s| s.noise(kind, c.cpu_node, c.mem_node)),
                    ..CellEvidence::from(c)
                }),
            };
            ((c.cpu_node, c.mem_node), e)
        })
        .collect()
}

/// Every expected cell against this node's measurement. A difference when
/// the cell was not measured or failed here, or when its median lies more
/// than `band_pct` percent off the expected one and further than the two
/// cells' noise ([`trust::stands_out`]), in the harmful direction (slower
/// latency, less bandwidth; either way with `either_way`). Not judged, and
/// named in the notes: a cell either side does not trust
/// ([`trust::cell_trust`]), a change within the noise, one in the harmless
/// direction, and, when the two runs' `conditions` differ, any change at
/// all. Cells measured here but not in the expectation are not compared:
/// the expectation says what is checked.
pub(super) fn band(
    section: Section,
    unit: &str,
    expected: &BTreeMap<(u32, u32), Expected>,
    found: &MatrixResult,
    opts: &Options,
    conditions: Option<&str>,
    out: &mut Outcome,
) {
    let lower_is_better = found.kind == MatrixKind::Latency;
    for (&(cpu, mem), want) in expected {
        let item = format!("CPU node {cpu} -> memory node {mem}");
        let saved = format!("{:.1} {unit}", want.median);
        let Some(cell) = found.cell(cpu, mem) else {
            let why = found
                .failed
                .iter()
                .find(|f| (f.cpu_node, f.mem_node) == (cpu, mem))
                .map_or_else(
                    || "not measured".to_string(),
                    |f| format!("failed: {}", f.reason),
                );
            out.differences
                .push(Difference::new(section, item, saved, why));
            continue;
        };
        let here = CellEvidence::from(cell);
        let name = format!("{}: {item}", section.name());
        let distrust: Vec<String> = [("expected", want.evidence.as_ref()), ("found", Some(&here))]
            .into_iter()
            .filter_map(|(side, e)| Some(format!("{side} {}", trust::cell_trust(e?)?)))
            .collect();
        if !distrust.is_empty() {
            out.notes
                .push(format!("{name} not judged: {}", distrust.join("; ")));
            continue;
        }
        let got = cell.median;
        let change = got - want.median;
        let off = trust::percent_of(change, want.median);
        let noises = [
            here.noise(),
            want.evidence.as_ref().map_or(0.0, CellEvidence::noise),
        ];
        if !trust::stands_out(change, want.median, opts.band_pct, &noises) {
            if off.abs() > opts.band_pct {
                out.notes.push(format!(
                    "{name} not judged: {got:.1} {} ({off:+.0} %) is within the cells' noise (twice {} in quadrature: {:.1} % of the expected median)",
                    found.unit,
                    if want.evidence.as_ref().is_some_and(|e| e.across_runs.is_some()) {
                        "the cells' noises, the expectation's across its runs,"
                    } else {
                        "their standard deviations"
                    },
                    trust::noise_pct(want.median, &noises)
                ));
            }
            continue;
        }
        let harmful = (change > 0.0) == lower_is_better;
        if !harmful && !opts.either_way {
            out.notes.push(format!(
                "{name}: {got:.1} {} ({off:+.0} %) is {} than expected: not a failure (--either-way counts it)",
                found.unit,
                if lower_is_better { "faster" } else { "more bandwidth" }
            ));
            continue;
        }
        if let Some(why) = conditions {
            out.notes.push(format!(
                "{name} not judged: {got:.1} {} ({off:+.0} %), but {why}",
                found.unit
            ));
            continue;
        }
        out.differences.push(Difference::new(
            section,
            item,
            saved,
            format!(
                "{got:.1} {} ({off:+.0} %, band {} %)",
                found.unit,
                pct(opts.band_pct)
            ),
        ));
    }
}
