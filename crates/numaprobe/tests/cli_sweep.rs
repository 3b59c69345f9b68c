//! End-to-end tests of `numaprobe latency --sweep` and of `--cpus` on
//! `latency` and `bandwidth`: a tiny real sweep's document structure, every
//! format, and the one-line exit-2 refusals of bad ranges and CPUs. No test
//! asserts a timing.

mod cli;

use cli::{interrupted, json, numaprobe, report_page, usage_error, with, Sigint};
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

const SWEEP: &[&str] = &[
    "latency",
    "--sweep",
    "4K-256K",
    "--sweep-points",
    "1",
    "--pages",
    "4k",
    "--time-budget",
    "20ms",
];

/// The CPUs this process may use (what `--cpus` must name).
fn allowed_cpus() -> Vec<u32> {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = s
        .lines()
        .find(|l| l.starts_with("Cpus_allowed_list:"))
        .unwrap();
    let list = line.split(':').nth(1).unwrap().trim();
    let mut out = Vec::new();
    for part in list.split(',') {
        match part.split_once('-') {
            Some((a, b)) => out.extend(a.parse::<u32>().unwrap()..=b.parse::<u32>().unwrap()),
            None => out.push(part.parse().unwrap()),
        }
    }
    out
}

#[test]
fn a_tiny_sweep_has_every_point_and_its_analysis() {
    let v = json(&numaprobe(&with(SWEEP, &["--format", "json"])));
    assert_eq!(v["schema"], "numaprobe/1");
    assert_eq!(v["command"], "latency-sweep");
    assert_eq!(v["complete"], true);
    assert!(v["provenance"].is_object());
    let sizes: Vec<u64> = v["sizes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap())
        .collect();
    assert_eq!(sizes, (2..=8).map(|k| 1u64 << (k + 10)).collect::<Vec<_>>());
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), sizes.len());
    for p in points {
        assert_eq!(p["pages"], "4k");
        assert!(p["ns"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(v["placement"][0]["fraction_on_node"], 1.0);
    let a = &v["analysis"];
    assert_eq!(a["step_ratio"], 1.3);
    let curve = &a["curves"][0];
    assert_eq!(curve["pages"], "4k");
    // One sentence per cache the topology reports.
    assert_eq!(
        curve["matches"].as_array().unwrap().len(),
        v["caches"].as_array().unwrap().len()
    );
    // The chase ran on the CPU it names, one of ours.
    assert!(allowed_cpus().contains(&(v["cpu"].as_u64().unwrap() as u32)));
}

#[test]
fn a_sweep_renders_in_every_format() {
    let table = String::from_utf8(numaprobe(SWEEP).stdout).unwrap();
    assert!(
        table.starts_with("Latency against working-set size"),
        "{table}"
    );
    assert!(table.contains("4k ns"), "{table}");
    assert!(table.contains("Caches the topology reports"), "{table}");
    let csv = String::from_utf8(numaprobe(&with(SWEEP, &["--format", "csv"])).stdout).unwrap();
    assert!(csv.starts_with("row,pages,size_bytes,ns,"), "{csv}");
    assert_eq!(
        csv.lines().filter(|l| l.starts_with("point,4k,")).count(),
        7
    );
    let md = String::from_utf8(numaprobe(&with(SWEEP, &["--format", "markdown"])).stdout).unwrap();
    assert!(
        md.starts_with("## Latency against working-set size"),
        "{md}"
    );
}

#[test]
fn a_sweep_document_joins_the_report() {
    let t = common::TempDir::new("sweep-report");
    let f = t.path().join("sweep.json");
    let f = f.to_str().unwrap();
    let o = numaprobe(&with(SWEEP, &["--format", "json", "-o", f]));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let page = report_page(t.path());
    let at = page.find("<section id=\"sweep\"").expect("a sweep section");
    let sec = &page[at..at + page[at..].find("</section>").unwrap()];
    assert!(sec.contains("<svg"), "{sec}");
    assert!(sec.contains("from sweep.json"), "{sec}");
    assert!(sec.contains("plateaus"), "{sec}");
}

#[test]
fn bad_sweeps_are_one_line_and_exit_2() {
    for (args, needle) in [
        (
            &["latency", "--sweep", "1G-4K"][..],
            "FROM must be smaller than TO",
        ),
        (&["latency", "--sweep", "4Q-1G"], "'4Q' is not a size"),
        (&["latency", "--sweep", "4K"], "no '-' between FROM and TO"),
        (
            &["latency", "--sweep", "--size", "4M"],
            "--size does not apply with --sweep",
        ),
        (
            &["latency", "--sweep", "--pages", "huge"],
            "valid with --sweep: 4k, thp, 2m, 1g, both",
        ),
        (
            &["latency", "--sweep", "--sweep-points", "0"],
            "--sweep-points: invalid value '0'",
        ),
        (
            &["latency", "--sweep-points", "4"],
            "only applies with --sweep",
        ),
        (
            &["latency", "--sweep", "--cpu-nodes", "0,1"],
            "the sweep measures one node pair",
        ),
    ] {
        let e = usage_error(&numaprobe(args));
        assert!(e.contains(needle), "{args:?}: {e}");
    }
}

#[test]
fn a_cpu_not_allowed_is_refused_naming_the_allowed_ones() {
    let allowed = allowed_cpus();
    let bad = (allowed.iter().max().unwrap() + 1).to_string();
    for cmd in ["latency", "bandwidth"] {
        let e = usage_error(&numaprobe(&[cmd, "--cpus", &bad, "--size", "4M"]));
        assert!(e.contains(&format!("CPU {bad}")), "{e}");
        assert!(e.contains("allowed CPUs: "), "{e}");
    }
    let e = usage_error(&numaprobe(&["latency", "--sweep", "--cpus", &bad]));
    assert!(e.contains(&format!("CPU {bad}")), "{e}");
}

#[test]
fn latency_and_bandwidth_measure_from_the_chosen_cpu() {
    let cpu = *allowed_cpus().last().unwrap();
    let c = cpu.to_string();
    let v = json(&numaprobe(&[
        "latency",
        "--cpus",
        &c,
        "--size",
        "4M",
        "--pages",
        "4k",
        "--time-budget",
        "30ms",
        "--format",
        "json",
    ]));
    let cells = v["cells"].as_array().unwrap();
    assert!(!cells.is_empty());
    for cell in cells {
        assert_eq!(cell["cpus"], serde_json::json!([cpu]));
    }
    assert!(v["notes"].as_array().unwrap().iter().any(|n| n
        .as_str()
        .unwrap()
        .contains("measuring CPUs chosen with --cpus")));
    let v = json(&numaprobe(&[
        "bandwidth",
        "--cpus",
        &c,
        "--size",
        "4M",
        "--pages",
        "4k",
        "--time-budget",
        "30ms",
        "--format",
        "json",
    ]));
    for cell in v["cells"].as_array().unwrap() {
        assert_eq!(cell["cpus"], serde_json::json!([cpu]));
        assert_eq!(cell["params"]["threads"], 1);
    }
}

/// Ctrl-C during a sweep: the points measured so far are in `--output`
/// (`complete: false`, `interrupted: true`), the exit status is 130.
#[test]
fn an_interrupted_sweep_keeps_its_points() {
    let dir = std::env::temp_dir().join(format!("np-sweep-int-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("sweep.json");
    // The file appears after the first point: then there is something to keep.
    let (v, _) = interrupted(
        &[
            "latency",
            "--sweep",
            "4K-1M",
            "--pages",
            "4k",
            "--time-budget",
            "300ms",
            "--cv-target",
            "0",
            "-o",
            out.to_str().unwrap(),
        ],
        &out,
        Sigint::WhenWritten,
    );
    let n = v["points"].as_array().unwrap().len();
    assert!(
        n >= 1 && n < v["sizes"].as_array().unwrap().len(),
        "{n} points"
    );
    assert!(v["analysis"].is_object());
    let _ = std::fs::remove_dir_all(&dir);
}
