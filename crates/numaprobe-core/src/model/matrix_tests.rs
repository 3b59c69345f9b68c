//! Fixtures of the matrix model for every module's tests (a sample
//! latency matrix, cells, a failed cell) and the model's own tests: the
//! failure summary, placements over threads, set-aside samples and the
//! busy-machine flags.

use super::*;
use crate::timer::ClockSource;

pub(crate) fn cell(cpu: u32, mem: u32, median: f64, fraction: f64) -> Cell {
    let flagged = fraction < crate::placement::PLACEMENT_THRESHOLD;
    Cell {
        cpu_node: cpu,
        mem_node: mem,
        median,
        min: median - 1.0,
        max: median + 1.0,
        cv: 0.005,
        set_aside: Default::default(),
        others_busy_cpus: None,
        samples: vec![median - 1.0, median, median + 1.0],
        sketch: None,
        stop: StopReason::CvReached,
        placement: CellPlacement {
            fraction_on_intended: fraction,
            pages: 100,
            page_size: 4096,
            per_node: [(mem, (fraction * 100.0) as u64)].into_iter().collect(),
            not_present: 0,
            thp_fraction: None,
        },
        cpus: vec![cpu],
        params: CellParams {
            size_bytes: 1 << 20,
            stride_bytes: Some(64),
            pattern: Some("random".into()),
            window_pages: None,
            pages: PageKind::Small,
            threads: 1,
            op: None,
            policy: format!("bind:{mem}"),
        },
        kernel: crate::kernels::chase::spec(crate::kernels::ChasePattern::Random {
            window_pages: None,
        }),
        vector_width: VectorWidth::Scalar,
        flagged,
        flags: if flagged {
            vec![format!("placement {:.1} % < 99 %", fraction * 100.0)]
        } else {
            vec![]
        },
        elapsed_s: 0.1,
        setup_s: 0.0,
    }
}

pub(crate) fn sample() -> MatrixResult {
    let timer = TimerInfo {
        source: ClockSource::MonotonicRaw,
        tsc_hz: None,
        overhead_ns: 20.0,
        resolution_ns: 1.0,
    };
    let mut m = MatrixResult::new(
        MatrixKind::Latency,
        vec![0, 1],
        vec![0, 1, 2],
        StopRule::default(),
        timer,
    );
    m.push(cell(0, 0, 90.0, 1.0));
    m.push(cell(0, 1, 140.25, 0.5));
    m.push(cell(1, 1, 91.0, 1.0));
    m
}

pub(crate) fn with_a_failure() -> MatrixResult {
    let mut m = sample();
    m.failed.push(FailedCell {
        cpu_node: 1,
        mem_node: 2,
        cpus: vec![4],
        reason: "70 MiB does not fit in node 2's allocatable memory (51 MiB now)".into(),
    });
    m
}

#[test]
fn the_failure_summary_names_the_count_and_the_first_cell() {
    assert_eq!(sample().failure_summary(6), None);
    let mut m = with_a_failure();
    m.failed.push(FailedCell {
        cpu_node: 0,
        mem_node: 0,
        cpus: vec![0, 1],
        reason: "mbind failed: Invalid argument".into(),
    });
    assert_eq!(
        m.failure_summary(256).unwrap(),
        "2 of 256 cells failed (first: CPU 4 (node 1) -> memory node 2: 70 MiB does not fit in node 2's allocatable memory (51 MiB now)); the other cells are in the output"
    );
    assert!(m.failed[1].to_string().starts_with("CPUs 0-1 (node 0)"));
    // With no cell measured there are no others to point to.
    m.cells.clear();
    assert!(m
        .failure_summary(2)
        .unwrap()
        .ends_with("); each failure is listed in the output"));
}

#[test]
fn placements_of_threads_combine_weighted() {
    let a = PlacementCheck {
        pages: 100,
        page_size: 4096,
        per_node: [(0, 100)].into_iter().collect(),
        not_present: 0,
        intended_nodes: vec![0],
        fraction_on_intended: 1.0,
        thp_fraction: None,
    };
    let mut b = a.clone();
    b.per_node = [(0, 50), (1, 50)].into_iter().collect();
    b.fraction_on_intended = 0.5;
    let c = CellPlacement::combine(&[a, b]);
    assert_eq!(c.pages, 200);
    assert_eq!(c.fraction_on_intended, 0.75);
    assert_eq!(c.per_node[&0], 150);
}

#[test]
fn set_aside_samples_are_summed_flagged_when_too_few_held_and_said() {
    use crate::stats::SetAside;
    let mut m = sample();
    assert_eq!(m.set_aside_summary(), None);
    assert!(m.trust_summaries().is_empty());
    let mut held = cell(0, 1, 150.0, 1.0);
    held.samples = vec![150.0; 6];
    held.set_aside = SetAside {
        preempted: 4,
        off_cpu: 1,
        shortened: 8,
        used_anyway: false,
    };
    let mut starved = cell(1, 1, 400.0, 1.0);
    starved.samples = vec![400.0, 401.0];
    starved.set_aside = SetAside {
        preempted: 30,
        shortened: 2,
        ..SetAside::default()
    };
    m.cells.clear();
    m.push(held);
    m.push(starved);
    // Six samples held: a figure to trust, whatever was set aside.
    assert!(!m.cells[0].flagged, "{:?}", m.cells[0].flags);
    // Two held: flagged, with the share lost.
    assert!(m.cells[1].flagged);
    assert!(
        m.cells[1].flags[0].starts_with("preempted in 94 % of samples"),
        "{:?}",
        m.cells[1].flags
    );
    // Pushed again, the flag is not repeated.
    let again = m.cells[1].clone();
    m.push(again);
    assert_eq!(m.cells[2].flags.len(), 1);
    assert_eq!(
        m.set_aside_summary().unwrap(),
        "65 of 75 latency samples set aside in 3 of 3 cells, the measuring thread having lost its CPU (64 preempted, 1 off its CPU (stolen or interrupted)); each figure is the median of the samples that held it, shortened up to 8x to fit between preemptions"
    );
    assert_eq!(m.trust_summaries().len(), 1);
}

#[test]
fn set_aside_counts_past_the_largest_integer_are_summed_saturating() {
    use crate::stats::SetAside;
    let mut m = sample();
    let hostile = |cpu| {
        let mut c = cell(cpu, 0, 100.0, 1.0);
        c.set_aside = SetAside {
            preempted: usize::MAX,
            off_cpu: usize::MAX,
            shortened: 1,
            used_anyway: false,
        };
        c
    };
    m.cells = vec![hostile(0), hostile(1)];
    let said = m.set_aside_summary().unwrap();
    let most = usize::MAX;
    assert!(
        said.starts_with(&format!(
            "{most} of {most} latency samples set aside in 2 of 2 cells"
        )),
        "{said}"
    );
}

#[test]
fn cells_measured_beside_busy_tasks_are_flagged_and_named() {
    let mut m = sample();
    m.cells.clear();
    let mut quiet = cell(0, 0, 100.0, 1.0);
    quiet.others_busy_cpus = Some(0.2);
    let mut busy = cell(0, 1, 180.0, 1.0);
    busy.others_busy_cpus = Some(3.86);
    let unread = cell(1, 1, 100.0, 1.0);
    m.push(quiet);
    m.push(busy);
    m.push(unread);
    assert!(!m.cells[0].flagged && !m.cells[2].flagged);
    assert!(m.cells[1].flagged);
    assert!(m.cells[1].flags[0].starts_with("memory traffic from other tasks: they kept 3.9 CPUs"));
    assert_eq!(
        m.beside_summary().unwrap(),
        "1 of 3 latency cells were measured while other tasks kept up to 3.9 CPUs busy (0->1): their memory traffic may make these figures read slower; they are flagged"
    );
    assert_eq!(m.trust_summaries().len(), 1);
    assert!(m.cells[1].flags.iter().all(|f| is_busy_machine_flag(f)));
    assert!(!is_busy_machine_flag("placement 80.0 % on node 1 < 99 %"));
    let again = m.cells[1].clone();
    m.push(again);
    assert_eq!(m.cells[3].flags.len(), 1);
}

#[test]
fn cells_are_counted_through_the_bounded_reader() {
    assert_eq!(
        cells_in(r#"{"kind":"latency","cells":[{},{},{}]}"#),
        Some(3)
    );
    assert_eq!(cells_in(r#"{"kind":"topo"}"#), None);
    assert_eq!(cells_in("not json"), None);
    // Nesting past the reader's limit is refused wherever it is, in a field
    // that is skipped or in a cell that is only counted.
    let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    let depth = crate::model::bounded::MAX_DEPTH;
    let skipped = format!(r#"{{"cells":[],"other":{}}}"#, deep(depth + 10));
    assert_eq!(cells_in(&skipped), None);
    let counted = format!(r#"{{"cells":[{}]}}"#, deep(depth + 10));
    assert_eq!(cells_in(&counted), None);
    let within = format!(r#"{{"cells":[{}]}}"#, deep(depth - 2));
    assert_eq!(cells_in(&within), Some(1));
}

#[test]
fn a_latency_cell_short_of_huge_pages_is_flagged_with_its_share() {
    let with_thp = |share: Option<f64>| {
        let mut c = cell(0, 0, 150.0, 1.0);
        c.params.pages = PageKind::Thp;
        c.placement.thp_fraction = share;
        c
    };
    let mut m = sample();
    m.cells.clear();
    m.push(with_thp(Some(0.7)));
    m.push(with_thp(Some(HUGE_PAGE_SHARE)));
    m.push(with_thp(Some(0.949)));
    m.push(with_thp(None));
    let flagged: Vec<bool> = m.cells.iter().map(|c| c.flagged).collect();
    assert_eq!(flagged, [true, false, true, false]);
    assert_eq!(m.cells[0].flags.len(), 1);
    assert!(
        m.cells[0].flags[0].starts_with("small pages: 70 % of the buffer in huge pages where transparent huge pages were asked (trusted from 95 %)"),
        "{:?}",
        m.cells[0].flags
    );
    assert!(m.cells[2].flags[0].starts_with("small pages: 95 % "));
    assert!(m.cells[1].flags.is_empty() && m.cells[3].flags.is_empty());
    // Judged once: a cell pushed again keeps one such flag.
    let again = m.cells[0].clone();
    m.push(again);
    assert_eq!(m.cells[4].flags.len(), 1);

    // Bandwidth streams a page's 64 lines per walk: not flagged for it.
    let mut b = sample();
    b.kind = MatrixKind::Bandwidth;
    b.cells.clear();
    b.push(with_thp(Some(0.5)));
    assert!(!b.cells[0].flagged && b.cells[0].flags.is_empty());
}

#[test]
fn each_cell_median_lands_in_its_row_and_column() {
    let m = sample();
    assert_eq!(
        m.matrix,
        vec![
            vec![Some(90.0), Some(140.25), None],
            vec![None, Some(91.0), None],
        ]
    );
}
