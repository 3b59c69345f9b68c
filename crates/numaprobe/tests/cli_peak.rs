//! `numaprobe peak` end to end: bad input is one line and exit 2 before
//! anything runs; the DIMM population from a dmidecode file in every
//! format; a short run with every thread on its node and its pages placed;
//! the report page shows a peak.json; SIGINT keeps what was measured
//! (complete: false, exit 130). Nothing depends on timing.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use cli::{interrupted, json, numaprobe, ok, report_page, usage_error, Sigint};
use common::TempDir;

fn fixture(name: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/smbios")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn bad_input_is_one_line_naming_the_value_and_exit_2() {
    let t = TempDir::new("peak-bad");
    let empty = t.path().join("empty.txt");
    std::fs::write(&empty, "# dmidecode 3.3\n").unwrap();
    let empty = empty.to_string_lossy().into_owned();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--mix", "read,5:x"],
            "--mix: invalid value '5:x' (valid: read, nt-write",
        ),
        (&["--mix", ""], "--mix: invalid value ''"),
        (&["--size", "0"], "--size: '0' is zero bytes"),
        (&["--time-budget", "soon"], "--time-budget:"),
        (
            &["--dmidecode", "/nonexistent/dmi.txt"],
            "--dmidecode /nonexistent/dmi.txt: cannot read it",
        ),
        (&["--dmidecode", &empty], "no 'Memory Device'"),
        (
            &["--vector", "wide"],
            "--vector: invalid value 'wide' (valid: avx512, avx2",
        ),
        (
            &["--vector", cli::FOREIGN_WIDTH],
            "is not supported by this CPU (valid here: ",
        ),
    ];
    for (args, want) in cases {
        let mut a = vec!["peak"];
        a.extend_from_slice(args);
        let err = usage_error(&numaprobe(&a));
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn memory_only_reads_a_dmidecode_file_in_every_format() {
    let f = fixture("unbalanced-2s.txt");
    let base = ["peak", "--memory-only", "--dmidecode", f.as_str()];
    let doc = json(&numaprobe(&cli::with(&base, &["--format", "json"])));
    assert_eq!(doc["schema"], "numaprobe/1");
    assert_eq!(doc["memory"]["source"], "dmidecode");
    assert!((doc["memory"]["theoretical_gbs"].as_f64().unwrap() - 307.2).abs() < 1e-6);
    assert_eq!(doc["memory"]["sockets"][1]["populated_channels"], 4);
    assert_eq!(doc["system"].as_array().unwrap().len(), 0);
    assert!(doc["memory"]["findings"][0]
        .as_str()
        .unwrap()
        .starts_with("socket 1 has 4 populated memory channels"));
    let text = ok(&numaprobe(&base));
    assert!(text.contains("Memory per socket (SMBIOS)"), "{text}");
    assert!(text.contains("Theoretical DRAM peak: 307.2 GB/s"), "{text}");
    assert!(text.contains("Findings:"), "{text}");
    let md = ok(&numaprobe(&cli::with(&base, &["--format", "markdown"])));
    assert!(md.starts_with("## numaprobe peak"), "{md}");
    let csv = ok(&numaprobe(&cli::with(&base, &["--format", "csv"])));
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("socket,channel,locator"), "{csv}");
    assert_eq!(lines.len(), 17, "a header and 16 devices");
}

#[test]
fn a_short_run_puts_every_thread_on_its_node_in_every_format() {
    let t = TempDir::new("peak-run");
    let out = t.path().join("peak.json");
    let args = [
        "peak",
        "--mix",
        "read,nt-write",
        "--size",
        "1MiB",
        "--pages",
        "4k",
        "--time-budget",
        "50ms",
        "--vector",
        "scalar",
        "--dmidecode",
    ];
    let f = fixture("balanced-2s.txt");
    let mut a: Vec<&str> = args.to_vec();
    a.extend([f.as_str(), "-o", out.to_str().unwrap()]);
    ok(&numaprobe(&a));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(doc["complete"], true);
    assert_eq!(doc["vector"], "scalar");
    let system = doc["system"].as_array().unwrap();
    assert_eq!(system.len(), 2);
    for s in system {
        assert!(s["gbs"].as_f64().unwrap() > 0.0);
        assert_eq!(s["placement"], 1.0);
    }
    for n in doc["nodes"].as_array().unwrap() {
        assert_eq!(n["placement"], 1.0);
        assert!(!n["cpus"].as_array().unwrap().is_empty());
    }
    // Achieved over the fixture's 281.6 GB/s.
    let best = system
        .iter()
        .map(|s| s["gbs"].as_f64().unwrap())
        .fold(0.0, f64::max);
    let frac = doc["achieved_fraction"].as_f64().unwrap();
    assert!((frac - best / (12.0 * 2933.0 * 8.0 / 1000.0)).abs() < 1e-9);
    // The report page shows it.
    let html = report_page(t.path());
    assert!(html.contains("Peak bandwidth and memory"));
    assert!(
        html.contains("System peak: every allowed CPU"),
        "peak table in the page"
    );
    assert!(html.contains("P2-DIMMF1"), "DIMM table in the page");
    // Table and CSV from the same options.
    let mut a: Vec<&str> = args.to_vec();
    a.extend([f.as_str(), "--format", "csv"]);
    let csv = ok(&numaprobe(&a));
    assert!(csv.starts_with("scope,node,mix,threads,gbps"), "{csv}");
    assert!(csv.contains("\nsystem,,read,"), "{csv}");
    assert!(csv.contains("\nnode-alone,"), "{csv}");
}

#[test]
fn sigint_keeps_what_was_measured_and_exits_130() {
    let t = TempDir::new("peak-sig");
    let out = t.path().join("p.json");
    // The file is rewritten after every step: the signal comes once the
    // first step is in it, and the interrupted document keeps that step.
    let (doc, _) = interrupted(
        &[
            "peak",
            "--mix",
            "read,3:1,2:1,1:1,nt-write",
            "--size",
            "1MiB",
            "--pages",
            "4k",
            "--time-budget",
            "1s",
            "--cv-target",
            "0",
            "-o",
            out.to_str().unwrap(),
        ],
        &out,
        Sigint::WhenWritten,
    );
    let system = doc["system"].as_array().unwrap().len();
    assert!((1..5).contains(&system), "{doc}");
}
