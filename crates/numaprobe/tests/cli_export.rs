//! `numaprobe export` as a user runs it: a four-node machine's report folder
//! (a real sysfs dump, `run --no-measure`) to Prometheus and hwloc, a fleet
//! and a check document to Prometheus, the atomic replacement of an earlier
//! file, and one-line refusals with nothing written. The reading of the
//! output by promtool, node_exporter and hwloc is scripts/export-test.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use cli::{numaprobe, ok, s, usage_error};
use common::TempDir;
use std::path::{Path, PathBuf};

/// `numaprobe run --no-measure` of a dump into DIR/report; the guard keeps the dump.
fn report_of(fixture: &str, dir: &Path) -> (common::Unpacked, PathBuf) {
    let u = common::unpack(fixture);
    let report = dir.join("report");
    ok(&numaprobe(&[
        "run",
        "--sysfs-root",
        s(&u.root),
        "--no-measure",
        "--report-dir",
        s(&report),
    ]));
    (u, report)
}

#[test]
fn a_four_node_report_exports_its_topology_to_prometheus_and_hwloc() {
    let t = TempDir::new("export-snc");
    let (_dump, report) = report_of("memorysidecaches", t.path());
    let prom = ok(&numaprobe(&["export", "--to", "prometheus", s(&report)]));
    assert!(prom.contains("numaprobe_numa_nodes 4\n"), "{prom}");
    assert!(prom.contains("numaprobe_packages 2\n"), "{prom}");
    assert!(
        prom.contains("numaprobe_node_cpus{node=\"3\"} 20\n"),
        "{prom}"
    );
    assert!(prom.contains("# TYPE numaprobe_node_memory_bytes gauge\n"));
    assert!(
        prom.contains("numaprobe_run_start_timestamp_seconds "),
        "{prom}"
    );
    // Nothing measured: no matrix family, not a row of zeros.
    assert!(!prom.contains("numaprobe_latency_seconds"), "{prom}");
    let out = t.path().join("machine.xml");
    let o = numaprobe(&["export", "--to", "hwloc", s(&report), "-o", s(&out)]);
    ok(&o);
    let xml = std::fs::read_to_string(&out).unwrap();
    assert!(xml.starts_with(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">"
    ));
    assert_eq!(xml.matches("type=\"NUMANode\"").count(), 4);
    assert_eq!(xml.matches("type=\"Package\"").count(), 2);
    // SNC2: two nodes per package, a Group each.
    assert_eq!(xml.matches("type=\"Group\"").count(), 4);
    assert_eq!(xml.matches("type=\"PU\"").count(), 80);
    assert!(!xml.contains("<memattr"), "nothing measured, no attribute");
}

#[test]
fn a_fleet_and_a_check_export_their_answers() {
    let t = TempDir::new("export-fleet");
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/fleet/taskset-one-cpu");
    for e in std::fs::read_dir(&fixture).unwrap() {
        let e = e.unwrap();
        let to = t.path().join(e.file_name());
        std::fs::create_dir_all(&to).unwrap();
        std::fs::copy(e.path().join("run.json"), to.join("run.json")).unwrap();
    }
    // node5 is configured unlike the others: fleet says so (exit 1) and writes fleet.json.
    let o = numaprobe(&["fleet", "--replace", "--from", s(t.path())]);
    assert!(t.path().join("fleet.json").exists(), "{o:?}");
    let prom = ok(&numaprobe(&[
        "export",
        "--to",
        "prometheus",
        s(&t.path().join("fleet.json")),
    ]));
    // node5 ran on one CPU: a group of its own, group 2 as fleet.md numbers it.
    assert!(
        prom.contains("numaprobe_fleet_node_outlier{node=\"node5\",group=\"2\"} "),
        "{prom}"
    );
    assert!(
        prom.contains("numaprobe_fleet_node_status{node=\"node1\",status=\"ok\"} 1\n"),
        "{prom}"
    );
    assert!(prom.contains("numaprobe_fleet_groups 2\n"), "{prom}");

    let (_a, a) = {
        let u = common::unpack("16amd64-8n2c");
        let p = t.path().join("a.json");
        ok(&numaprobe(&[
            "topo",
            "--sysfs-root",
            s(&u.root),
            "-o",
            s(&p),
        ]));
        (u, p)
    };
    let b = common::unpack("16amd64-8n2c-cpusets");
    let check = t.path().join("check.json");
    let o = numaprobe(&[
        "check",
        "--expect",
        s(&a),
        "--sysfs-root",
        s(&b.root),
        "-o",
        s(&check),
    ]);
    assert_eq!(o.status.code(), Some(1), "the cpuset dump differs");
    let prom = ok(&numaprobe(&["export", "--to", "prometheus", s(&check)]));
    assert!(
        prom.contains("numaprobe_check_ok{expect_kind=\"topo\"} 0\n"),
        "{prom}"
    );
    assert!(
        prom.contains("numaprobe_check_differences{section=\"allowed\"} "),
        "{prom}"
    );
}

#[test]
fn an_existing_file_is_replaced_whole_and_a_symlink_is_not_written_through() {
    let t = TempDir::new("export-replace");
    let (_dump, report) = report_of("8amd64-4n2c", t.path());
    let textfile = t.path().join("textfile");
    std::fs::create_dir(&textfile).unwrap();
    let prom = textfile.join("numaprobe.prom");
    std::fs::write(&prom, "stale\n").unwrap();
    ok(&numaprobe(&[
        "export",
        "--to",
        "prometheus",
        s(&report),
        "-o",
        s(&prom),
    ]));
    let text = std::fs::read_to_string(&prom).unwrap();
    assert!(text.contains("numaprobe_numa_nodes 4\n"), "{text}");
    let names: Vec<String> = std::fs::read_dir(&textfile)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["numaprobe.prom"], "no temporary file is left");
    // A link planted under the name is refused, its target left alone.
    let target = t.path().join("precious");
    std::fs::write(&target, "keep\n").unwrap();
    std::fs::remove_file(&prom).unwrap();
    std::os::unix::fs::symlink(&target, &prom).unwrap();
    let err = usage_error(&numaprobe(&[
        "export",
        "--to",
        "prometheus",
        s(&report),
        "-o",
        s(&prom),
    ]));
    assert!(err.contains("numaprobe.prom: a symbolic link"), "{err}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
    assert!(std::fs::symlink_metadata(&prom)
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn bad_input_is_one_line_and_nothing_is_written() {
    let t = TempDir::new("export-bad");
    let (_dump, report) = report_of("8amd64-4n2c", t.path());
    let out = t.path().join("out.prom");
    let pin = report.join("pin.json");
    let err = usage_error(&numaprobe(&[
        "export",
        "--to",
        "prometheus",
        s(&pin),
        "-o",
        s(&out),
    ]));
    assert!(
        err.contains("a pin document cannot be exported to prometheus; it takes run, topo, latency, bandwidth, locks, policy, tune, check, fleet"),
        "{err}"
    );
    let infer = report.join("infer-latency.json");
    let err = usage_error(&numaprobe(&[
        "export",
        "--to",
        "hwloc",
        s(&infer),
        "-o",
        s(&out),
    ]));
    assert!(err.contains("it takes run, topo"), "{err}");
    let err = usage_error(&numaprobe(&[
        "export",
        "--to",
        "prometheus",
        s(&report),
        "-o",
        s(&t.path().join("nowhere/x.prom")),
    ]));
    assert!(err.contains("does not exist"), "{err}");
    let err = usage_error(&numaprobe(&[
        "export",
        "--to",
        "hwloc",
        s(&t.path().join("missing.json")),
    ]));
    assert!(
        err.contains("missing.json: no such file or folder"),
        "{err}"
    );
    let junk = t.path().join("junk.json");
    std::fs::write(&junk, "x".repeat(5000)).unwrap();
    let err = usage_error(&numaprobe(&[
        "export",
        "--to",
        "hwloc",
        s(&junk),
        "-o",
        s(&out),
    ]));
    assert!(err.len() < 1000, "{err}");
    // A format it does not write, named with the ones it does.
    let o = numaprobe(&["export", "--to", "svg", s(&report)]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--to: invalid value 'svg' (valid: prometheus, hwloc)"),
        "{err}"
    );
    assert!(!out.exists(), "a refused export wrote {}", out.display());
    assert!(!t.path().join("nowhere").exists());
}
