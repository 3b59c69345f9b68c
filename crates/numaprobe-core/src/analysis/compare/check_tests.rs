//! Tests of `check`: the memory tolerance at its boundary, THP, the kernel,
//! `--only` / `--skip`, the band on matrices (a fleet's group baseline:
//! `check_fleet_tests.rs`; a saved binding: `check_binding_tests.rs`).

use super::super::judge::Outcome;
use super::*;
use crate::model::diff::Origin;
use crate::model::matrix::tests::cell;
use crate::model::matrix::MatrixResult;
use crate::model::matrix::{FailedCell, MatrixKind};
use crate::stats::StopRule;
use crate::timer::{ClockSource, TimerInfo};
use crate::topology::testing::{build, CpuSpec, NodeSpec};

const GIB: u64 = 1 << 30;

/// Two nodes of two CPUs each, `mem` bytes of memory per node.
pub(super) fn machine(root: &str, mem: [u64; 2]) -> Topology {
    let cpus: Vec<CpuSpec> = (0..4u32)
        .map(|i| CpuSpec::new(i, 0, i64::from(i), i / 2))
        .collect();
    let nodes: Vec<NodeSpec> = (0..2u32)
        .map(|n| NodeSpec {
            os_index: n,
            memory_bytes: mem[n as usize],
            free_bytes: mem[n as usize] / 2,
            allowed: true,
        })
        .collect();
    let mut t = build(root, &cpus, &nodes, Some(vec![vec![10, 21], vec![21, 10]]));
    t.thp_mode = Some("always".into());
    t
}

pub(super) fn side(kind: &str, t: Option<Topology>, kernel: &str) -> Side {
    Side {
        topology: t,
        ..Side::of(Origin {
            path: "expected.json".into(),
            kind: kind.into(),
            documents: vec![],
            hostname: Some("n1".into()),
            kernel: Some(kernel.into()),
            start: None,
            complete: true,
            runs: Vec::new(),
        })
    }
}

pub(super) fn matrix(kind: MatrixKind, medians: &[f64]) -> MatrixResult {
    let timer = TimerInfo {
        source: ClockSource::MonotonicRaw,
        tsc_hz: None,
        overhead_ns: 20.0,
        resolution_ns: 1.0,
    };
    let mem: Vec<u32> = (0..medians.len() as u32).collect();
    let mut m = MatrixResult::new(kind, vec![0], mem, StopRule::default(), timer);
    for (j, &v) in medians.iter().enumerate() {
        m.push(cell(0, j as u32, v, 1.0));
    }
    m
}

pub(super) fn run(
    expect: &Side,
    t: &Topology,
    measured: Option<&Side>,
    opts: &Options,
) -> CheckReport {
    let this = This {
        topology: t,
        kernel: Some("6.1.0"),
        measured,
    };
    check(expect, &this, opts).unwrap()
}

pub(super) fn items(r: &CheckReport) -> Vec<(Section, String)> {
    r.differences
        .iter()
        .map(|d| (d.section, d.item.clone()))
        .collect()
}

#[test]
fn a_node_with_half_its_memory_fails_and_half_a_per_cent_less_passes() {
    let saved = side("topo", Some(machine("/", [96 * GIB, 96 * GIB])), "6.1.0");
    let o = Options::default();
    let half = run(&saved, &machine("/", [96 * GIB, 48 * GIB]), None, &o);
    assert!(!half.matches);
    assert_eq!(items(&half), [(Section::Memory, "node 1: memory".into())]);
    assert_eq!(
        (
            half.differences[0].a.as_str(),
            half.differences[0].b.as_str()
        ),
        ("96 GiB", "48 GiB")
    );
    let less = 96 * GIB - 96 * GIB / 200;
    assert!(run(&saved, &machine("/", [less, 96 * GIB]), None, &o).matches);
    // The boundary: exactly the tolerance passes, a little more fails.
    let at = (96.0 * GIB as f64 * (1.0 - DEFAULT_MEMORY_TOLERANCE)) as u64 + 1;
    assert!(run(&saved, &machine("/", [at, 96 * GIB]), None, &o).matches);
    let past = at - GIB / 100;
    assert!(!run(&saved, &machine("/", [past, 96 * GIB]), None, &o).matches);
    // A tolerance of 60 % lets the halved node pass.
    let loose = Options {
        memory_tolerance: 0.6,
        ..Options::default()
    };
    assert!(run(&saved, &machine("/", [96 * GIB, 48 * GIB]), None, &loose).matches);
}

#[test]
fn thp_and_the_kernel_are_compared_and_can_be_left_out() {
    let saved = side("topo", Some(machine("/", [GIB, GIB])), "6.1.0");
    let mut t = machine("/", [GIB, GIB]);
    t.thp_mode = Some("madvise".into());
    let this = This {
        topology: &t,
        kernel: Some("6.12.9"),
        measured: None,
    };
    let r = check(&saved, &this, &Options::default()).unwrap();
    assert_eq!(r.expect_kind, "topo");
    assert_eq!(
        items(&r),
        [
            (Section::Kernel, "kernel release".into()),
            (Section::Thp, "transparent huge pages".into())
        ]
    );
    let skip = Options {
        sections: select(None, Some("thp,kernel")).unwrap(),
        ..Options::default()
    };
    let r = check(&saved, &this, &skip).unwrap();
    assert!(r.matches, "{:?}", r.differences);
    assert!(!r.checked.iter().any(|c| c.contains("huge pages mode")));
    // A dump's kernel is unknown: not compared, and said so.
    let dump = This {
        kernel: None,
        ..this
    };
    let only = Options {
        sections: vec![Section::Kernel],
        ..Options::default()
    };
    let r = check(&saved, &dump, &only).unwrap();
    assert!(r.matches);
    assert!(r.notes.iter().any(|n| n.starts_with("kernel not compared")));
}

#[test]
fn only_and_skip_choose_sections_and_unknown_names_are_refused() {
    assert_eq!(select(None, None).unwrap(), sections());
    assert_eq!(
        select(Some("memory, thp"), None).unwrap(),
        [Section::Memory, Section::Thp]
    );
    let skipped = select(None, Some("allowed")).unwrap();
    assert_eq!(skipped.len(), sections().len() - 1);
    assert!(!skipped.contains(&Section::Allowed));
    for (only, skip) in [(Some("memory,dimms"), None), (None, Some("documents"))] {
        let e = select(only, skip).unwrap_err();
        assert!(
            e.contains("is not a section; valid: machine, kernel"),
            "{e}"
        );
        assert!(e.contains("binding"), "{e}");
    }
    // Allowed CPUs differ between a job and slurmd: --skip allowed passes.
    let saved = side("topo", Some(machine("/", [GIB, GIB])), "6.1.0");
    let mut t = machine("/", [GIB, GIB]);
    t.allowed.cpus = vec![0];
    assert_eq!(
        items(&run(&saved, &t, None, &Options::default())),
        [(Section::Allowed, "allowed CPUs".into())]
    );
    let skip = Options {
        sections: select(None, Some("allowed")).unwrap(),
        ..Options::default()
    };
    assert!(run(&saved, &t, None, &skip).matches);
}

#[test]
fn matrices_are_judged_within_the_band_and_only_with_measurements() {
    let mut saved = side("report", Some(machine("/", [GIB, GIB])), "6.1.0");
    saved.latency = Some(matrix(MatrixKind::Latency, &[100.0, 150.0, 200.0]));
    let t = machine("/", [GIB, GIB]);
    // No measurements of this node: a note, no difference.
    let r = run(&saved, &t, None, &Options::default());
    assert!(r.matches);
    assert!(
        r.notes.iter().any(|n| n.contains("--measured")),
        "{:?}",
        r.notes
    );
    let mut here = side("report", None, "6.1.0");
    let mut m = matrix(MatrixKind::Latency, &[115.0, 180.0]);
    m.failed.push(FailedCell {
        cpu_node: 0,
        mem_node: 2,
        cpus: vec![0],
        reason: "placement 40 %".into(),
    });
    here.latency = Some(m);
    let r = run(&saved, &t, Some(&here), &Options::default());
    // +15 % is inside a 15 % band, +20 % is not, and the failed cell is named.
    let d: Vec<(&str, &str)> = r
        .differences
        .iter()
        .map(|d| (d.item.as_str(), d.b.as_str()))
        .collect();
    assert_eq!(
        d,
        [
            ("CPU node 0 -> memory node 1", "180.0 ns (+20 %, band 15 %)"),
            ("CPU node 0 -> memory node 2", "failed: placement 40 %")
        ]
    );
    assert!(r.differences.iter().all(|d| d.section == Section::Latency));
    assert_eq!(r.expect_kind, "report");
    assert!(
        r.checked
            .iter()
            .any(|c| c == "memory per node (within 3 %), huge pages configured"),
        "{:?}",
        r.checked
    );
    // Cells measured with another buffer: not judged, named in a note.
    let mut other = here.clone();
    for c in &mut other.latency.as_mut().unwrap().cells {
        c.params.size_bytes *= 2;
    }
    let r = run(&saved, &t, Some(&other), &Options::default());
    assert!(r.matches, "{:?}", r.differences);
    assert!(
        r.notes.iter().any(|n| n.starts_with(
            "latency not compared: measured with other parameters (buffer size: expected "
        ) && n.ends_with(
            "its cells are not judged against the band; measure both runs with the same --size"
        )),
        "{:?}",
        r.notes
    );
    let wide = Options {
        band_pct: 25.0,
        sections: select(None, Some("latency")).unwrap(),
        ..Options::default()
    };
    assert!(run(&saved, &t, Some(&here), &wide).matches);
}

#[test]
fn a_cell_expected_at_zero_differs_only_when_found_above_zero() {
    use crate::analysis::compare::judge::{band, Expected};
    let expected: std::collections::BTreeMap<(u32, u32), Expected> = [(0, 0), (0, 1)]
        .into_iter()
        .map(|k| {
            let e = Expected {
                median: 0.0,
                evidence: None,
            };
            (k, e)
        })
        .collect();
    let found = matrix(MatrixKind::Bandwidth, &[0.0, 5.0]);
    let either = Options {
        either_way: true,
        ..Options::default()
    };
    let mut out = Outcome::default();
    band(
        Section::Bandwidth,
        "GB/s",
        &expected,
        &found,
        &either,
        None,
        &mut out,
    );
    assert_eq!(out.differences.len(), 1, "{:?}", out.differences);
    assert_eq!(out.differences[0].item, "CPU node 0 -> memory node 1");
    assert!(
        out.differences[0].b.starts_with("5.0 GB/s (+inf %"),
        "{}",
        out.differences[0].b
    );
    // More bandwidth than expected is no failure by default, and says so.
    let mut out = Outcome::default();
    band(
        Section::Bandwidth,
        "GB/s",
        &expected,
        &found,
        &Options::default(),
        None,
        &mut out,
    );
    assert!(out.differences.is_empty(), "{:?}", out.differences);
    assert!(
        out.notes.iter().any(|n| n
            == "bandwidth: CPU node 0 -> memory node 1: 5.0 GB/s (+inf %) is more bandwidth than expected: not a failure (--either-way counts it)"),
        "{:?}",
        out.notes
    );
}

/// A saved run and this node's run with one latency row each.
fn saved_and_here(kind: MatrixKind, saved: &[f64], here: &[f64]) -> (Side, Side) {
    let mut s = side("report", Some(machine("/", [GIB, GIB])), "6.1.0");
    let mut h = side("report", None, "6.1.0");
    let (a, b) = (matrix(kind, saved), matrix(kind, here));
    match kind {
        MatrixKind::Latency => (s.latency, h.latency) = (Some(a), Some(b)),
        MatrixKind::Bandwidth => (s.bandwidth, h.bandwidth) = (Some(a), Some(b)),
    }
    (s, h)
}

fn flag(m: &mut Option<MatrixResult>, j: usize, why: &str) {
    let c = &mut m.as_mut().unwrap().cells[j];
    c.flagged = true;
    c.flags.push(why.into());
}

#[test]
fn a_flagged_cell_is_named_and_not_judged_and_never_drains() {
    let t = machine("/", [GIB, GIB]);
    // The trial's pair: a bandwidth cell both runs starred, 18 % less here.
    let (mut saved, mut here) = saved_and_here(MatrixKind::Bandwidth, &[10.0, 12.0], &[10.0, 9.84]);
    flag(&mut saved.bandwidth, 1, "unstable: CV 16.5 %");
    flag(&mut here.bandwidth, 1, "unstable: CV 14.0 %");
    let r = run(&saved, &t, Some(&here), &Options::default());
    assert!(r.matches, "{:?}", r.differences);
    assert!(
        r.notes.contains(
            &"bandwidth: CPU node 0 -> memory node 1 not judged: expected unstable: CV 16.5 %; found unstable: CV 14.0 %".to_string()
        ),
        "{:?}",
        r.notes
    );
    // No difference: nothing a drain could be made of.
    assert!(r.differences.is_empty());
    // Flagged on one side only: the same.
    let (saved, mut here) = saved_and_here(MatrixKind::Latency, &[100.0, 150.0], &[100.0, 300.0]);
    flag(&mut here.latency, 1, "placement 40.0 % < 99 %");
    let r = run(&saved, &t, Some(&here), &Options::default());
    assert!(r.matches && r.differences.is_empty());
    assert!(
        r.notes.iter().any(|n| n
            == "latency: CPU node 0 -> memory node 1 not judged: found placement 40.0 % < 99 %"),
        "{:?}",
        r.notes
    );
    // The same cell unflagged fails, and drains.
    let (saved, here) = saved_and_here(MatrixKind::Latency, &[100.0, 150.0], &[100.0, 300.0]);
    let r = run(&saved, &t, Some(&here), &Options::default());
    assert_eq!(r.differences.len(), 1, "{:?}", r.differences);
    assert!(!r.matches);
}

#[test]
fn only_the_harmful_direction_fails_unless_either_way() {
    let t = machine("/", [GIB, GIB]);
    let either = Options {
        either_way: true,
        ..Options::default()
    };
    // Latency 44 % lower here: faster, not a failure.
    let (saved, here) = saved_and_here(MatrixKind::Latency, &[766.0], &[429.2]);
    let r = run(&saved, &t, Some(&here), &Options::default());
    assert!(r.matches, "{:?}", r.differences);
    assert!(
        r.notes.iter().any(|n| n
            == "latency: CPU node 0 -> memory node 0: 429.2 ns (-44 %) is faster than expected: not a failure (--either-way counts it)"),
        "{:?}",
        r.notes
    );
    let r = run(&saved, &t, Some(&here), &either);
    assert_eq!(r.differences[0].b, "429.2 ns (-44 %, band 15 %)");
    // Latency 20 % higher: slower, fails either way.
    let (saved, here) = saved_and_here(MatrixKind::Latency, &[100.0], &[120.0]);
    assert!(!run(&saved, &t, Some(&here), &Options::default()).matches);
    assert!(!run(&saved, &t, Some(&here), &either).matches);
    // Bandwidth 20 % lower fails; 20 % higher only with --either-way.
    let (saved, here) = saved_and_here(MatrixKind::Bandwidth, &[10.0], &[8.0]);
    assert!(!run(&saved, &t, Some(&here), &Options::default()).matches);
    let (saved, here) = saved_and_here(MatrixKind::Bandwidth, &[10.0], &[12.0]);
    let r = run(&saved, &t, Some(&here), &Options::default());
    assert!(r.matches);
    assert!(
        r.notes[0].contains("is more bandwidth than expected"),
        "{:?}",
        r.notes
    );
    assert!(!run(&saved, &t, Some(&here), &either).matches);
}

#[test]
fn a_change_within_the_cells_spread_is_not_judged() {
    let t = machine("/", [GIB, GIB]);
    let narrow = Options {
        band_pct: 5.0,
        ..Options::default()
    };
    // +8 % against a 5 % band, but the cell's standard deviation is 4 %
    // (4.3 ns), the expected one's 0.5 ns: twice the two in quadrature is
    // 8.7 ns. Beyond one standard deviation is not beyond the noise.
    let (saved, mut here) = saved_and_here(MatrixKind::Latency, &[100.0], &[108.0]);
    here.latency.as_mut().unwrap().cells[0].cv = 0.04;
    let r = run(&saved, &t, Some(&here), &narrow);
    assert!(r.matches, "{:?}", r.differences);
    assert!(
        r.notes.iter().any(|n| n
            == "latency: CPU node 0 -> memory node 0 not judged: 108.0 ns (+8 %) is within the cells' noise (twice their standard deviations in quadrature: 8.7 % of the expected median)"),
        "{:?}",
        r.notes
    );
    // The expected cell's spread counts the same.
    let (mut saved, here) = saved_and_here(MatrixKind::Latency, &[100.0], &[108.0]);
    saved.latency.as_mut().unwrap().cells[0].cv = 0.04;
    assert!(run(&saved, &t, Some(&here), &narrow).matches);
    // With tight cells the same +8 % fails.
    let (saved, here) = saved_and_here(MatrixKind::Latency, &[100.0], &[108.0]);
    assert!(!run(&saved, &t, Some(&here), &narrow).matches);
    // Inside the band: no note either.
    let (saved, here) = saved_and_here(MatrixKind::Latency, &[100.0], &[104.0]);
    let r = run(&saved, &t, Some(&here), &narrow);
    assert!(r.matches && r.notes.is_empty(), "{:?}", r.notes);
    // At the band's edge, +25 % of 200 against 25 %: not past it, so
    // neither a failure nor a note.
    let edge = Options {
        band_pct: 25.0,
        ..Options::default()
    };
    let (saved, here) = saved_and_here(MatrixKind::Latency, &[200.0], &[250.0]);
    let r = run(&saved, &t, Some(&here), &edge);
    assert!(
        r.matches && r.notes.is_empty(),
        "{:?} {:?}",
        r.differences,
        r.notes
    );
}

#[test]
fn runs_measured_under_different_load_are_not_judged() {
    use crate::system_check::{assess, SystemCheck};
    let load = |l: f64| {
        let mut c = SystemCheck {
            allowed_cpus: 2,
            load_1m: Some(l),
            other_running: Some(0),
            steal_percent: Some(0.0),
            interval_s: 0.25,
            governors: vec![],
            thp: None,
            warnings: vec![],
        };
        c.warnings = assess(&c);
        c
    };
    let t = machine("/", [GIB, GIB]);
    let (mut saved, mut here) = saved_and_here(MatrixKind::Latency, &[242.4], &[446.2]);
    (saved.system, here.system) = (Some(load(0.4)), Some(load(8.3)));
    let r = run(&saved, &t, Some(&here), &Options::default());
    assert!(r.matches, "{:?}", r.differences);
    assert!(
        r.notes.iter().any(|n| n.starts_with(
            "latency: CPU node 0 -> memory node 0 not judged: 446.2 ns (+84 %), but the runs' conditions differ: only B's system check warned"
        )),
        "{:?}",
        r.notes
    );
    // Alike conditions: judged.
    here.system = Some(load(0.5));
    assert!(!run(&saved, &t, Some(&here), &Options::default()).matches);
}

#[test]
fn an_expected_cell_this_run_did_not_measure_fails_and_says_so() {
    let t = machine("/", [GIB, GIB]);
    let (saved, here) = saved_and_here(MatrixKind::Bandwidth, &[10.0, 12.0], &[10.0]);
    let r = run(&saved, &t, Some(&here), &Options::default());
    assert!(!r.matches);
    let d: Vec<(Section, &str, &str, &str)> = r
        .differences
        .iter()
        .map(|d| (d.section, d.item.as_str(), d.a.as_str(), d.b.as_str()))
        .collect();
    assert_eq!(
        d,
        [(
            Section::Bandwidth,
            "CPU node 0 -> memory node 1",
            "12.0 GB/s",
            "not measured"
        )]
    );
    // A cell measured here but not expected is not compared.
    let (saved, here) = saved_and_here(MatrixKind::Bandwidth, &[10.0], &[10.0, 3.0]);
    assert!(run(&saved, &t, Some(&here), &Options::default()).matches);
}

#[test]
fn a_matrix_measured_with_other_parameters_is_named_and_not_judged() {
    let t = machine("/", [GIB, GIB]);
    // 2 threads expected, 1 found, and a cell 50 % below the expectation:
    // the band is not applied, nothing differs, nothing could drain.
    let (saved, mut here) = saved_and_here(MatrixKind::Bandwidth, &[10.0, 12.0], &[10.0, 6.0]);
    let mut saved = saved;
    for c in &mut saved.bandwidth.as_mut().unwrap().cells {
        c.params.threads = 2;
    }
    for c in &mut here.bandwidth.as_mut().unwrap().cells {
        c.params.threads = 1;
        c.params.op = Some("copy".into());
    }
    let r = run(&saved, &t, Some(&here), &Options::default());
    assert!(r.matches, "{:?}", r.differences);
    assert!(r.differences.is_empty());
    assert_eq!(
        r.notes,
        ["bandwidth not compared: measured with other parameters (threads: expected 2, found 1; op: expected -, found copy); its cells are not judged against the band"]
    );
    assert!(
        !r.checked.iter().any(|c| c.contains("bandwidth")),
        "{:?}",
        r.checked
    );
    // The latency matrix beside it, measured alike, is still judged.
    let mut both = saved.clone();
    both.latency = Some(matrix(MatrixKind::Latency, &[100.0, 150.0]));
    let mut here2 = here.clone();
    here2.latency = Some(matrix(MatrixKind::Latency, &[100.0, 300.0]));
    let r = run(&both, &t, Some(&here2), &Options::default());
    assert!(!r.matches);
    assert_eq!(
        items(&r),
        [(Section::Latency, "CPU node 0 -> memory node 1".into())]
    );
    assert!(
        r.checked.iter().any(|c| c.contains("latency")),
        "{:?}",
        r.checked
    );
    assert_eq!(r.notes.len(), 1, "{:?}", r.notes);
    // The same threads on both sides: judged as before, the drop fails.
    for c in &mut here.bandwidth.as_mut().unwrap().cells {
        c.params.threads = 2;
        c.params.op = None;
    }
    let r = run(&saved, &t, Some(&here), &Options::default());
    assert!(!r.matches);
    assert_eq!(
        items(&r),
        [(Section::Bandwidth, "CPU node 0 -> memory node 1".into())]
    );
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    assert!(
        r.checked.iter().any(|c| c.contains("bandwidth")),
        "{:?}",
        r.checked
    );
}

#[test]
fn a_matrix_alone_is_judged_and_names_its_kind() {
    let t = machine("/", [GIB, GIB]);
    // A latency, a bandwidth document and a report folder holding only
    // matrices: each is checked against this node's own, named by its kind.
    for (kind, m) in [
        ("latency", MatrixKind::Latency),
        ("bandwidth", MatrixKind::Bandwidth),
        ("report", MatrixKind::Bandwidth),
    ] {
        let (mut saved, here) = saved_and_here(m, &[10.0, 12.0], &[10.0, 12.0]);
        saved.topology = None;
        saved.origin.kind = kind.into();
        let r = run(&saved, &t, Some(&here), &Options::default());
        assert!(r.matches, "{kind}: {:?}", r.differences);
        assert_eq!(r.expect_kind, kind);
        assert_eq!(r.checked.len(), 1, "{kind}: {:?}", r.checked);
    }
}
