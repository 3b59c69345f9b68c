//! The Prometheus exporter's tests: units, escaping, cells not measured
//! left out, one owner per family across the run's, check's and fleet's
//! files, and every fleet state of its own.

use super::text::{escape_help, escape_label, number};
use super::*;
use crate::model::diff::{CheckReport, Difference, Section};
use crate::model::fleet::{
    FieldDiff, FleetNode, FleetReport, NodeStatus, Outlier, OutlierRule, Signature, SignatureGroup,
};
use crate::model::matrix::{tests as mt, MatrixKind};
use crate::model::provenance::Provenance;

pub(super) fn lines_of<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")) || l.starts_with(&format!("{name} ")))
        .collect()
}

#[test]
fn latency_is_in_seconds_and_a_cell_not_measured_is_absent() {
    let e = Exported {
        latency: Some(mt::sample()),
        complete: true,
        ..Exported::default()
    };
    let t = prometheus(&e);
    let lat = lines_of(&t, "numaprobe_latency_seconds");
    // sample(): (0,0) 90 ns, (0,1) 140.25 ns, (1,1) 91 ns; (0,2), (1,0), (1,2) not measured.
    assert_eq!(
        lat,
        [
            "numaprobe_latency_seconds{cpu_node=\"0\",mem_node=\"0\",path=\"local\"} 0.00000009",
            "numaprobe_latency_seconds{cpu_node=\"0\",mem_node=\"1\",path=\"remote\"} 0.00000014025",
            "numaprobe_latency_seconds{cpu_node=\"1\",mem_node=\"1\",path=\"local\"} 0.000000091",
        ]
    );
    assert!(t.contains("# TYPE numaprobe_latency_seconds gauge\n"));
    assert!(t.contains("# HELP numaprobe_latency_seconds Idle memory latency"));
    // (0,1) is placed at 50 %: flagged.
    assert!(
        t.contains("numaprobe_cell_flagged{matrix=\"latency\",cpu_node=\"0\",mem_node=\"1\"} 1\n")
    );
    assert!(
        t.contains("numaprobe_cell_flagged{matrix=\"latency\",cpu_node=\"0\",mem_node=\"0\"} 0\n")
    );
    assert!(!t.contains("numaprobe_bandwidth"), "{t}");
}

#[test]
fn bandwidth_is_in_bytes_per_second_and_nan_is_never_written() {
    let mut m = mt::sample();
    m.kind = MatrixKind::Bandwidth;
    m.unit = "GB/s".into();
    m.matrix[0][0] = Some(12.5);
    m.matrix[0][1] = Some(f64::NAN);
    m.matrix[1][1] = Some(f64::INFINITY);
    let e = Exported {
        bandwidth: Some(m),
        ..Exported::default()
    };
    let t = prometheus(&e);
    assert_eq!(
        lines_of(&t, "numaprobe_bandwidth_bytes_per_second"),
        ["numaprobe_bandwidth_bytes_per_second{cpu_node=\"0\",mem_node=\"0\",path=\"local\"} 12500000000"]
    );
    for l in t.lines().filter(|l| !l.starts_with('#')) {
        let v = l.rsplit(' ').next().unwrap();
        assert!(v.parse::<f64>().unwrap().is_finite(), "{l}");
    }
    assert!(!t.contains("NaN") && !t.contains("Inf"), "{t}");
    // A partial document says so.
    assert!(t.contains("numaprobe_run_complete 0\n"), "{t}");
}

#[test]
fn label_values_and_help_are_escaped() {
    assert_eq!(escape_label("a\"b\\c\nd"), "a\\\"b\\\\c\\\\nd");
    assert_eq!(escape_help("x\\y\nz \"q\""), "x\\\\y\\\\nz \"q\"");
    let mut c = CheckReport {
        schema: crate::SCHEMA.into(),
        expect: "t.json".into(),
        expect_kind: "topo\"\n".into(),
        root: "/".into(),
        measured: None,
        checked: vec![],
        matches: false,
        differences: vec![
            Difference::new(Section::Cpus, "cpu 3", "online", "offline"),
            Difference::new(Section::Cpus, "cpu 4", "online", "offline"),
            Difference::new(Section::Nodes, "node 1", "4 CPUs", "2 CPUs"),
        ],
        sections: vec![Section::Packages, Section::Nodes, Section::Cpus],
        notes: vec![],
    };
    let t = prometheus(&Exported {
        check: Some(c.clone()),
        ..Exported::default()
    });
    assert!(
        t.contains("numaprobe_check_ok{expect_kind=\"topo\\\"\\\\n\"} 0\n"),
        "{t}"
    );
    assert_eq!(
        lines_of(&t, "numaprobe_check_differences"),
        [
            "numaprobe_check_differences{section=\"cpus\"} 2",
            "numaprobe_check_differences{section=\"nodes\"} 1",
            "numaprobe_check_differences{section=\"packages\"} 0",
        ]
    );
    c.matches = true;
    c.differences.clear();
    let t = prometheus(&Exported {
        check: Some(c),
        ..Exported::default()
    });
    assert!(
        t.contains("numaprobe_check_ok{expect_kind=\"topo\\\"\\\\n\"} 1\n"),
        "{t}"
    );
    assert!(
        t.contains("numaprobe_check_differences{section=\"cpus\"} 0\n"),
        "{t}"
    );
}

#[test]
fn every_family_has_help_and_type_before_its_samples() {
    let mut bw = mt::sample();
    bw.kind = MatrixKind::Bandwidth;
    let e = Exported {
        latency: Some(mt::sample()),
        bandwidth: Some(bw),
        complete: true,
        ..Exported::default()
    };
    let t = prometheus(&e);
    let mut seen = std::collections::BTreeSet::new();
    let mut last_type = String::new();
    for l in t.lines() {
        if let Some(r) = l.strip_prefix("# TYPE ") {
            last_type = r.split(' ').next().unwrap().to_string();
            assert!(seen.insert(last_type.clone()), "family {last_type} twice");
        } else if !l.starts_with("# HELP ") {
            let name = l.split(['{', ' ']).next().unwrap();
            assert_eq!(name, last_type, "{l}");
        }
    }
    assert!(seen.contains("numaprobe_info"), "{t}");
}

#[test]
fn numbers_are_plain_decimals() {
    assert_eq!(number(3.0), "3");
    assert_eq!(number(0.5), "0.5");
    assert_eq!(number(1.4e-7), "0.00000014");
    assert_eq!(number(1.0e18), "1000000000000000000");
}

fn provenance(host: &str, start: &str, end: &str) -> Provenance {
    let mut p = crate::model::provenance::now(true);
    p.hostname = host.into();
    p.start = start.into();
    p.end = end.into();
    p
}

fn check_report(matches: bool) -> CheckReport {
    CheckReport {
        schema: crate::SCHEMA.into(),
        expect: "t.json".into(),
        expect_kind: "topo".into(),
        root: "/".into(),
        measured: None,
        checked: vec![],
        matches,
        differences: vec![],
        sections: vec![Section::Nodes],
        notes: vec![],
    }
}

fn signature(memory_gib: u64) -> Signature {
    Signature {
        cpu_model: "x".into(),
        packages: 1,
        numa_nodes: 1,
        nodes_per_package: 1,
        cpus: 2,
        allowed_cpus: 2,
        numbering: "linear".into(),
        slit: vec![],
        thp: "madvise".into(),
        kernel: "6.1".into(),
        memory_gib: vec![memory_gib],
        llc_bytes: 1 << 20,
    }
}

fn node(name: &str, status: NodeStatus, reason: Option<&str>, group: Option<usize>) -> FleetNode {
    let values = if group.is_some() {
        [("latency 0->0".into(), 90.0)].into_iter().collect()
    } else {
        Default::default()
    };
    FleetNode {
        name: name.into(),
        status,
        reason: reason.map(Into::into),
        group,
        values,
        failed_cells: vec![],
        not_measured: vec![],
        untrusted: Default::default(),
        noise: Default::default(),
    }
}

/// Every kind of node: ok (two, baseline), one configured unlike them, an
/// outlier, one lost, one drained, one down, one failed, one timed out, one
/// incomplete, one partial.
fn fleet_report() -> FleetReport {
    let nodes = vec![
        node("n01", NodeStatus::Ok, None, Some(0)),
        node("n02", NodeStatus::Ok, None, Some(0)),
        node("n03", NodeStatus::Ok, None, Some(1)),
        node("n04", NodeStatus::Ok, None, Some(0)),
        node("n05", NodeStatus::Lost, Some("nothing for 30 s"), None),
        node(
            "n06",
            NodeStatus::Unavailable,
            Some("not run: Slurm reported it drained (drained by an administrator): bad DIMM"),
            None,
        ),
        node(
            "n07",
            NodeStatus::Unavailable,
            Some("not run: Slurm reported it down (down): slurmd gone"),
            None,
        ),
        node("n08", NodeStatus::Failed, Some("exit 3"), None),
        node("n09", NodeStatus::TimedOut, Some("stopped"), None),
        node("n10", NodeStatus::Incomplete, Some("interrupted"), Some(0)),
        node("n11", NodeStatus::Partial, Some("bandwidth"), Some(0)),
    ];
    FleetReport {
        schema: crate::SCHEMA.into(),
        nodes,
        groups: vec![
            SignatureGroup {
                signature: signature(16),
                nodes: vec!["n01".into(), "n02".into(), "n04".into()],
                differs: vec![],
            },
            SignatureGroup {
                signature: signature(8),
                nodes: vec!["n03".into()],
                differs: vec![FieldDiff {
                    field: "memory_per_node".into(),
                    value: "8 GiB".into(),
                    majority: "16 GiB".into(),
                }],
            },
        ],
        metrics: vec![],
        outliers: vec![Outlier {
            node: "n04".into(),
            metric: "latency 0->0".into(),
            unit: "ns".into(),
            value: 200.0,
            median: 90.0,
            robust_z: None,
            off_percent: 122.0,
            worse: true,
        }],
        rule: OutlierRule::default(),
        notes: vec![],
        complete: false,
    }
}

/// The (name, labels) of every sample line.
#[test]
fn the_topology_is_counted_per_node_and_the_thp_mode_in_force_is_one() {
    use crate::model::topo::TopoReport;
    use crate::topology::testing::{build, CpuSpec, NodeSpec};
    // Two CPUs on node 0 (package 0), one on node 1 (package 1), node 2
    // memory only; node n has n + 1 GiB.
    let cpus = [
        CpuSpec::new(0, 0, 0, 0),
        CpuSpec::new(1, 0, 1, 0),
        CpuSpec::new(2, 1, 0, 1),
    ];
    let nodes = [0, 1, 2].map(|n| NodeSpec {
        os_index: n,
        memory_bytes: (n as u64 + 1) << 30,
        free_bytes: 1 << 30,
        allowed: true,
    });
    let mut topo = TopoReport::new(&build("/", &cpus, &nodes, None));
    topo.thp_mode = Some("madvise".into());
    let text = |topo: &TopoReport| {
        prometheus(&Exported {
            topology: Some(topo.clone()),
            ..Exported::default()
        })
    };
    let t = text(&topo);
    assert_eq!(value(&t, "numaprobe_numa_nodes"), 3.0);
    assert_eq!(value(&t, "numaprobe_packages"), 2.0);
    for (node, cpus) in [(0, 2.0), (1, 1.0), (2, 0.0)] {
        let labels = format!("{{node=\"{node}\"}}");
        assert_eq!(value(&t, &format!("numaprobe_node_cpus{labels}")), cpus);
        let bytes = ((node as u64 + 1) << 30) as f64;
        assert_eq!(
            value(&t, &format!("numaprobe_node_memory_bytes{labels}")),
            bytes
        );
    }
    let thp = |t: &str, mode: &str| value(t, &format!("numaprobe_thp_mode{{mode=\"{mode}\"}}"));
    assert_eq!(
        (thp(&t, "always"), thp(&t, "madvise"), thp(&t, "never")),
        (0.0, 1.0, 0.0)
    );
    // A mode numaprobe does not know is said too, the known ones 0.
    topo.thp_mode = Some("defer".into());
    let t = text(&topo);
    assert_eq!(thp(&t, "defer"), 1.0);
    assert_eq!(
        (thp(&t, "always"), thp(&t, "madvise"), thp(&t, "never")),
        (0.0, 0.0, 0.0)
    );
    // Without a mode read, no series.
    topo.thp_mode = None;
    assert!(lines_of(&text(&topo), "numaprobe_thp_mode").is_empty());
}

fn series(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.rsplit_once(' ').unwrap().0.to_string())
        .collect()
}

/// The value of the one sample line `name{labels}`.
pub(super) fn value(text: &str, name_labels: &str) -> f64 {
    let hits: Vec<f64> = text
        .lines()
        .filter_map(|l| l.strip_prefix(name_labels)?.strip_prefix(' '))
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(hits.len(), 1, "{name_labels} in\n{text}");
    hits[0]
}

#[test]
fn the_runs_the_checks_and_the_fleets_files_share_no_series_and_keep_their_own_times() {
    let run = Exported {
        latency: Some(mt::sample()),
        provenance: Some(provenance(
            "a",
            "2026-11-20T03:00:00Z",
            "2026-11-20T03:01:00Z",
        )),
        complete: true,
        ..Exported::default()
    };
    let check = Exported {
        check: Some(check_report(true)),
        check_provenance: Some(provenance(
            "a",
            "2026-11-27T10:00:00Z",
            "2026-11-27T10:00:01Z",
        )),
        complete: true,
        ..Exported::default()
    };
    let fleet = Exported {
        fleet: Some(fleet_report()),
        fleet_provenance: Some(provenance(
            "head",
            "2026-11-26T00:00:00Z",
            "2026-11-26T00:05:00Z",
        )),
        complete: true,
        ..Exported::default()
    };
    let files = [prometheus(&run), prometheus(&check), prometheus(&fleet)];
    let mut seen = std::collections::BTreeSet::new();
    for f in &files {
        for s in series(f) {
            assert!(seen.insert(s.clone()), "{s} written by two files");
        }
    }
    // Each file's own times, under names of its own.
    assert_eq!(
        value(&files[0], "numaprobe_run_end_timestamp_seconds"),
        1795143660.0
    );
    assert_eq!(
        value(&files[1], "numaprobe_check_timestamp_seconds"),
        1795773601.0
    );
    assert_eq!(
        value(&files[2], "numaprobe_fleet_start_timestamp_seconds"),
        1795651200.0
    );
    assert_eq!(
        value(&files[2], "numaprobe_fleet_end_timestamp_seconds"),
        1795651500.0
    );
    assert_eq!(value(&files[2], "numaprobe_fleet_complete"), 0.0);
    assert!(!files[1].contains("numaprobe_run_"), "{}", files[1]);
    assert!(!files[2].contains("numaprobe_run_"), "{}", files[2]);
    assert!(!files[0].contains("numaprobe_check_"), "{}", files[0]);
    // numaprobe_info in each, told apart by its source, with one label set.
    for (f, source, host) in [
        (&files[0], "run", "a"),
        (&files[1], "check", "a"),
        (&files[2], "fleet", "head"),
    ] {
        let info = lines_of(f, "numaprobe_info");
        assert_eq!(info.len(), 1, "{f}");
        assert!(
            info[0].starts_with(&format!("numaprobe_info{{source=\"{source}\",version=")),
            "{}",
            info[0]
        );
        assert!(
            info[0].contains(&format!(",hostname=\"{host}\",kernel=")),
            "{}",
            info[0]
        );
    }
    // One export of all three (a folder holding them) is the union.
    let all = prometheus(&Exported {
        fleet: fleet.fleet.clone(),
        fleet_provenance: fleet.fleet_provenance.clone(),
        check: check.check.clone(),
        check_provenance: check.check_provenance.clone(),
        ..run.clone()
    });
    let mut together = series(&all);
    together.sort();
    assert_eq!(together, seen.into_iter().collect::<Vec<_>>());
}

#[test]
fn a_check_alone_writes_no_run_families() {
    let t = prometheus(&Exported {
        check: Some(check_report(false)),
        ..Exported::default()
    });
    assert_eq!(value(&t, "numaprobe_check_ok{expect_kind=\"topo\"}"), 0.0);
    assert!(!t.contains("numaprobe_run_complete"), "{t}");
    // Without a provenance: the labels are there, empty; no timestamp.
    assert!(
        t.contains(",hostname=\"\",kernel=\"\",cpu_model=\"\"} 1\n"),
        "{t}"
    );
    assert!(!t.contains("numaprobe_check_timestamp_seconds"), "{t}");
}

#[test]
fn every_fleet_node_has_one_state_of_its_own() {
    let t = prometheus(&Exported {
        fleet: Some(fleet_report()),
        ..Exported::default()
    });
    let want = [
        ("n01", "ok"),
        ("n03", "ok"),
        ("n05", "lost"),
        ("n06", "drained"),
        ("n07", "unavailable"),
        ("n08", "failed"),
        ("n09", "timed_out"),
        ("n10", "incomplete"),
        ("n11", "partial"),
    ];
    for (n, state) in want {
        for s in super::fleet::STATES {
            let v = value(
                &t,
                &format!("numaprobe_fleet_node_status{{node=\"{n}\",status=\"{s}\"}}"),
            );
            assert_eq!(v, f64::from(u8::from(s == state)), "{n} {s}");
        }
    }
    // The odd configuration is a state of its own, not `group!="1"`.
    for (n, config) in [
        ("n01", "baseline"),
        ("n03", "odd"),
        ("n05", "unknown"),
        ("n10", "baseline"),
    ] {
        for c in ["baseline", "odd", "unknown"] {
            let v = value(
                &t,
                &format!(
                    "numaprobe_fleet_node_configuration{{node=\"{n}\",configuration=\"{c}\"}}"
                ),
            );
            assert_eq!(v, f64::from(u8::from(c == config)), "{n} {c}");
        }
    }
    // Outliers only for nodes with figures: never zeros for a lost,
    // drained or failed node. The group label is the number fleet.md prints
    // and --group takes: 1 for the largest (index 0 of fleet.json's groups).
    assert_eq!(
        value(&t, "numaprobe_fleet_node_outlier{node=\"n04\",group=\"1\"}"),
        1.0
    );
    assert_eq!(
        value(
            &t,
            "numaprobe_fleet_node_outlier_metrics{node=\"n04\",group=\"1\"}"
        ),
        1.0
    );
    assert_eq!(
        value(&t, "numaprobe_fleet_node_outlier{node=\"n03\",group=\"2\"}"),
        0.0
    );
    for n in ["n05", "n06", "n07", "n08", "n09"] {
        assert!(!t.contains(&format!("outlier{{node=\"{n}\"")), "{n}: {t}");
        assert!(
            !t.contains(&format!("outlier_metrics{{node=\"{n}\"")),
            "{n}: {t}"
        );
    }
    assert_eq!(value(&t, "numaprobe_fleet_groups"), 2.0);
}

#[test]
fn only_a_node_slurm_had_drained_is_drained() {
    let mut n = node(
        "n",
        NodeStatus::Unavailable,
        Some("not run: Slurm reported it draining (drained by an administrator)"),
        None,
    );
    assert!(n.drained());
    n.reason = Some("not run: Slurm reported it reserved (reserved; give --reservation)".into());
    assert!(!n.drained());
    n.reason = None;
    assert!(!n.drained());
    n.reason = Some("not run: Slurm reported it drained".into());
    n.status = NodeStatus::Failed;
    assert!(!n.drained(), "a failed node is failed, whatever its words");
}

#[test]
fn sweep_and_loaded_figures_carry_their_trust_flag() {
    let mut sweep = crate::render::sweep::tests::sample();
    sweep.points[0].flagged = true;
    let mut loaded = crate::render::loaded::tests::doc();
    loaded.curves[0].points[1].flags = vec!["spread".into()];
    let t = prometheus(&Exported {
        sweep: Some(sweep.clone()),
        loaded: Some(loaded.clone()),
        complete: true,
        ..Exported::default()
    });
    let p = &sweep.points[0];
    let labels = format!(
        "{{cpu_node=\"{}\",mem_node=\"{}\",pages=\"{}\",size_bytes=\"{}\"}}",
        sweep.cpu_node,
        sweep.mem_node,
        p.pages.name(),
        p.size_bytes
    );
    assert_eq!(
        value(&t, &format!("numaprobe_sweep_point_flagged{labels}")),
        1.0
    );
    assert_eq!(
        value(&t, &format!("numaprobe_sweep_latency_seconds{labels}")),
        p.ns / 1e9
    );
    assert_eq!(
        lines_of(&t, "numaprobe_sweep_point_flagged").len(),
        sweep.points.len()
    );
    assert_eq!(
        lines_of(&t, "numaprobe_sweep_point_flagged")
            .iter()
            .filter(|l| l.ends_with(" 1"))
            .count(),
        1,
        "{t}"
    );
    let c = &loaded.curves[0];
    let flagged: Vec<&str> = lines_of(&t, "numaprobe_loaded_point_flagged")
        .into_iter()
        .filter(|l| l.ends_with(" 1"))
        .collect();
    let delay = c.points[1]
        .delay
        .map_or_else(|| "idle".to_string(), |d| d.to_string());
    assert_eq!(
        flagged,
        [format!(
            "numaprobe_loaded_point_flagged{{cpu_node=\"{}\",mem_node=\"{}\",mix=\"{}\",delay=\"{delay}\"}} 1",
            c.cpu_node, c.mem_node, c.mix
        )]
    );
    // The run's families come with them: they are the run's figures.
    assert!(t.contains("numaprobe_info{source=\"run\""), "{t}");
}
