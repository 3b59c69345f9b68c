//! The Prometheus exporter: an [`Exported`] as node_exporter's
//! textfile-collector format (the Prometheus text exposition format,
//! version 0.0.4). Every family has HELP and TYPE lines; names and units
//! follow Prometheus' naming rules (base units: seconds, bytes, bytes per
//! second); a cell that was not measured is left out, never written as 0,
//! and a value that is not finite is never written. No sample carries a
//! timestamp (the textfile collector refuses them): when the run was is the
//! value of `numaprobe_run_start_timestamp_seconds`.

use crate::model::diff::CheckReport;
use crate::model::export::Exported;
use crate::model::fleet::{FleetReport, NodeStatus};
use crate::model::matrix::MatrixResult;
use crate::model::topo::TopoReport;
use std::collections::BTreeMap;
use std::fmt::Write;

/// One metric family: its samples as (labels, value), in the order given.
struct Family {
    name: &'static str,
    help: &'static str,
    samples: Vec<(Vec<(&'static str, String)>, f64)>,
}

impl Family {
    fn new(name: &'static str, help: &'static str) -> Family {
        Family {
            name,
            help,
            samples: Vec::new(),
        }
    }

    fn push(&mut self, labels: Vec<(&'static str, String)>, value: f64) {
        self.samples.push((labels, value));
    }
}

/// The textfile for `e`. Families without a sample are left out.
pub fn prometheus(e: &Exported) -> String {
    let mut families = vec![info(e)];
    families.extend(run(e));
    if let Some(t) = &e.topology {
        families.extend(topology(t));
    }
    if let Some(m) = &e.latency {
        families.push(matrix(
            m,
            "numaprobe_latency_seconds",
            "Idle memory latency (median of the samples) from CPUs of cpu_node to memory on mem_node.",
            1e9,
        ));
    }
    if let Some(m) = &e.bandwidth {
        families.push(matrix(
            m,
            "numaprobe_bandwidth_bytes_per_second",
            "Memory bandwidth (median of the samples) of the cores of cpu_node streaming memory on mem_node.",
            1e-9,
        ));
    }
    let flagged: Vec<&MatrixResult> = [&e.latency, &e.bandwidth].into_iter().flatten().collect();
    if !flagged.is_empty() {
        let mut f = Family::new(
            "numaprobe_cell_flagged",
            "1 when a measured cell must not be trusted as is (placement below the threshold, samples spread too far), else 0.",
        );
        for m in flagged {
            let kind = matrix_name(m);
            for c in &m.cells {
                f.push(
                    vec![
                        ("matrix", kind.to_string()),
                        ("cpu_node", c.cpu_node.to_string()),
                        ("mem_node", c.mem_node.to_string()),
                    ],
                    f64::from(u8::from(c.flagged)),
                );
            }
        }
        families.push(f);
    }
    if let Some(c) = &e.check {
        families.extend(check(c));
    }
    if let Some(f) = &e.fleet {
        families.extend(fleet(f));
    }
    let mut out = String::new();
    for f in families {
        write_family(&mut out, &f);
    }
    out
}

fn matrix_name(m: &MatrixResult) -> &'static str {
    match m.kind {
        crate::model::matrix::MatrixKind::Latency => "latency",
        crate::model::matrix::MatrixKind::Bandwidth => "bandwidth",
    }
}

/// `numaprobe_info`: which numaprobe wrote the document, on which host.
fn info(e: &Exported) -> Family {
    let mut f = Family::new(
        "numaprobe_info",
        "The numaprobe that wrote the exported document and the machine it ran on (value always 1).",
    );
    let p = e.provenance.as_ref();
    let version = p
        .map(|p| p.version.clone())
        .unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_string());
    let mut labels = vec![
        ("version", version),
        ("exporter_version", env!("CARGO_PKG_VERSION").to_string()),
    ];
    if let Some(p) = p {
        labels.push(("hostname", p.hostname.clone()));
        labels.push(("kernel", p.kernel.clone()));
        labels.push(("cpu_model", p.cpu_model.clone()));
    }
    f.push(labels, 1.0);
    f
}

/// When the run was, and whether it finished.
fn run(e: &Exported) -> Vec<Family> {
    let mut out = Vec::new();
    let times = e.provenance.as_ref().map(|p| {
        (
            crate::model::provenance::unix_seconds(&p.start),
            crate::model::provenance::unix_seconds(&p.end),
        )
    });
    if let Some((start, end)) = times {
        let mut s = Family::new(
            "numaprobe_run_start_timestamp_seconds",
            "When the numaprobe process that wrote the exported document started, in seconds since the epoch.",
        );
        if let Some(t) = start {
            s.push(vec![], t as f64);
        }
        out.push(s);
        let mut w = Family::new(
            "numaprobe_run_end_timestamp_seconds",
            "When the exported document was written, in seconds since the epoch.",
        );
        if let Some(t) = end {
            w.push(vec![], t as f64);
        }
        out.push(w);
    }
    let mut c = Family::new(
        "numaprobe_run_complete",
        "1 when every exported document is complete, 0 when one is partial (interrupted, failed cells).",
    );
    c.push(vec![], f64::from(u8::from(e.complete)));
    out.push(c);
    out
}

fn topology(t: &TopoReport) -> Vec<Family> {
    let mut nodes = Family::new("numaprobe_numa_nodes", "NUMA nodes of the machine.");
    nodes.push(vec![], t.numa_nodes.len() as f64);
    let mut packages = Family::new(
        "numaprobe_packages",
        "Processor packages (sockets) of the machine.",
    );
    packages.push(vec![], t.packages.len() as f64);
    let mut cpus = Family::new(
        "numaprobe_node_cpus",
        "Online CPUs of each NUMA node (0 for a memory-only node).",
    );
    let mut memory = Family::new(
        "numaprobe_node_memory_bytes",
        "Memory of each NUMA node, in bytes.",
    );
    for n in &t.numa_nodes {
        let node = vec![("node", n.os_index.to_string())];
        cpus.push(node.clone(), n.cpus.len() as f64);
        memory.push(node, n.memory_bytes as f64);
    }
    let mut thp = Family::new(
        "numaprobe_thp_mode",
        "Transparent huge pages setting: 1 for the mode in force, 0 for the others.",
    );
    if let Some(mode) = &t.thp_mode {
        let mut modes = vec!["always", "madvise", "never"];
        if !modes.contains(&mode.as_str()) {
            modes.push(mode);
        }
        for m in modes {
            thp.push(
                vec![("mode", m.to_string())],
                f64::from(u8::from(m == mode)),
            );
        }
    }
    vec![nodes, packages, cpus, memory, thp]
}

/// A matrix's medians in base units: `value / divisor` (ns to s: 1e9; GB/s
/// to B/s: 1e-9). Cells not measured are absent.
fn matrix(m: &MatrixResult, name: &'static str, help: &'static str, divisor: f64) -> Family {
    let mut f = Family::new(name, help);
    for (r, row) in m.matrix.iter().enumerate() {
        for (c, v) in row.iter().enumerate() {
            let (Some(v), Some(cpu), Some(mem)) = (v, m.cpu_nodes.get(r), m.mem_nodes.get(c))
            else {
                continue;
            };
            f.push(
                vec![("cpu_node", cpu.to_string()), ("mem_node", mem.to_string())],
                v / divisor,
            );
        }
    }
    f
}

fn check(c: &CheckReport) -> Vec<Family> {
    let mut ok = Family::new(
        "numaprobe_check_ok",
        "1 when the machine matches the saved topology or binding it was checked against, else 0.",
    );
    ok.push(
        vec![("expect_kind", c.expect_kind.clone())],
        f64::from(u8::from(c.matches)),
    );
    // Every section compared, 0 where nothing differs, so an alert sees a
    // series go up rather than appear.
    let mut by: BTreeMap<&'static str, usize> = c.sections.iter().map(|s| (s.name(), 0)).collect();
    for d in &c.differences {
        *by.entry(d.section.name()).or_insert(0) += 1;
    }
    let mut diffs = Family::new(
        "numaprobe_check_differences",
        "Differences the check found, per section compared (0 for a section that matches).",
    );
    for (section, n) in by {
        diffs.push(vec![("section", section.to_string())], n as f64);
    }
    vec![ok, diffs]
}

fn fleet(f: &FleetReport) -> Vec<Family> {
    let mut per_node: BTreeMap<&str, usize> = BTreeMap::new();
    for o in &f.outliers {
        *per_node.entry(o.node.as_str()).or_insert(0) += 1;
    }
    let mut flag = Family::new(
        "numaprobe_fleet_node_outlier",
        "1 when a measured figure of the node lies far from the fleet's median, else 0; group is its signature group (none without a report).",
    );
    let mut count = Family::new(
        "numaprobe_fleet_node_outlier_metrics",
        "How many of the node's measured figures lie far from the fleet's median.",
    );
    let mut status = Family::new(
        "numaprobe_fleet_node_status",
        "How the node's run ended: 1 for its status (ok, incomplete, timed_out, failed), 0 for the others.",
    );
    for n in &f.nodes {
        let group = n
            .group
            .map_or_else(|| "none".to_string(), |g| g.to_string());
        let labels = vec![("node", n.name.clone()), ("group", group)];
        let k = per_node.get(n.name.as_str()).copied().unwrap_or(0);
        flag.push(labels.clone(), f64::from(u8::from(k > 0)));
        count.push(labels, k as f64);
        for (s, name) in [
            (NodeStatus::Ok, "ok"),
            (NodeStatus::Incomplete, "incomplete"),
            (NodeStatus::TimedOut, "timed_out"),
            (NodeStatus::Failed, "failed"),
        ] {
            status.push(
                vec![("node", n.name.clone()), ("status", name.to_string())],
                f64::from(u8::from(n.status == s)),
            );
        }
    }
    let mut groups = Family::new(
        "numaprobe_fleet_groups",
        "Signature groups of the fleet (1 when every node is alike).",
    );
    groups.push(vec![], f.groups.len() as f64);
    vec![flag, count, status, groups]
}

fn write_family(out: &mut String, f: &Family) {
    let samples: Vec<_> = f.samples.iter().filter(|(_, v)| v.is_finite()).collect();
    if samples.is_empty() {
        return;
    }
    let _ = writeln!(out, "# HELP {} {}", f.name, escape_help(f.help));
    let _ = writeln!(out, "# TYPE {} gauge", f.name);
    for (labels, v) in samples {
        out.push_str(f.name);
        if !labels.is_empty() {
            out.push('{');
            for (i, (k, val)) in labels.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let _ = write!(out, "{k}=\"{}\"", escape_label(val));
            }
            out.push('}');
        }
        let _ = writeln!(out, " {}", number(*v));
    }
}

/// A finite value as the exposition format reads it: Rust's shortest
/// round-trip form (never an exponent, never `NaN`).
fn number(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// A label value: backslash, double quote and line feed escaped.
fn escape_label(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// HELP text: backslash and line feed escaped.
fn escape_help(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::diff::{Difference, Section};
    use crate::model::matrix::{tests as mt, MatrixKind};

    fn lines_of<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
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
                "numaprobe_latency_seconds{cpu_node=\"0\",mem_node=\"0\"} 0.00000009",
                "numaprobe_latency_seconds{cpu_node=\"0\",mem_node=\"1\"} 0.00000014025",
                "numaprobe_latency_seconds{cpu_node=\"1\",mem_node=\"1\"} 0.000000091",
            ]
        );
        assert!(t.contains("# TYPE numaprobe_latency_seconds gauge\n"));
        assert!(t.contains("# HELP numaprobe_latency_seconds Idle memory latency"));
        // (0,1) is placed at 50 %: flagged.
        assert!(t.contains(
            "numaprobe_cell_flagged{matrix=\"latency\",cpu_node=\"0\",mem_node=\"1\"} 1\n"
        ));
        assert!(t.contains(
            "numaprobe_cell_flagged{matrix=\"latency\",cpu_node=\"0\",mem_node=\"0\"} 0\n"
        ));
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
            ["numaprobe_bandwidth_bytes_per_second{cpu_node=\"0\",mem_node=\"0\"} 12500000000"]
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
        assert_eq!(escape_label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
        assert_eq!(escape_help("x\\y\nz \"q\""), "x\\\\y\\nz \"q\"");
        let mut c = CheckReport {
            schema: crate::SCHEMA.into(),
            expect: "t.json".into(),
            expect_kind: "topo\"\n".into(),
            root: "/".into(),
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
            t.contains("numaprobe_check_ok{expect_kind=\"topo\\\"\\n\"} 0\n"),
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
            t.contains("numaprobe_check_ok{expect_kind=\"topo\\\"\\n\"} 1\n"),
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
}
