//! End-to-end tests of `numaprobe latency` and `numaprobe bandwidth` on this
//! machine: tiny buffers and budgets, checking the JSON contract's keys, the
//! other formats, `--output` and the exit codes of bad input. No test asserts
//! a timing: the machine is shared and the figures are whatever they are.

mod cli;

use cli::{numaprobe, numaprobe_with_full_cell, with};
use std::path::Path;
use std::process::Output;

fn json(args: &[&str]) -> serde_json::Value {
    let out = numaprobe(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

const TINY: &[&str] = &["--size", "8MiB", "--time-budget", "30ms", "--pages", "4k"];

fn check_matrix_document(v: &serde_json::Value, unit: &str) {
    assert_eq!(v["schema"], "numaprobe/1");
    assert_eq!(v["unit"], unit);
    assert_eq!(v["complete"], true);
    let rows = v["cpu_nodes"].as_array().unwrap().len();
    let cols = v["mem_nodes"].as_array().unwrap().len();
    let m = v["matrix"].as_array().unwrap();
    assert_eq!(m.len(), rows);
    assert!(m.iter().all(|r| r.as_array().unwrap().len() == cols));
    assert!(v["timer"]["source"].is_string());
    for c in v["cells"].as_array().unwrap() {
        for k in [
            "cpu_node",
            "mem_node",
            "median",
            "min",
            "max",
            "cv",
            "samples",
            "stop",
            "placement",
            "cpus",
            "params",
            "kernel",
            "vector_width",
            "flagged",
            "flags",
        ] {
            assert!(c.get(k).is_some(), "cell lacks {k}: {c}");
        }
        assert_eq!(c["placement"]["fraction_on_intended"], 1.0);
        // A busy machine may flag a cell (spread, samples set aside, other
        // tasks beside it, two modes); any other flag is a placement or
        // measurement fault.
        let flags = c["flags"].as_array().unwrap();
        assert!(
            flags
                .iter()
                .all(|f| numaprobe_core::model::matrix::is_busy_machine_flag(f.as_str().unwrap())),
            "{c}"
        );
        assert!(c.get("set_aside").is_some(), "cell lacks set_aside: {c}");
        assert_eq!(c["flagged"], !flags.is_empty());
        for k in ["size_bytes", "pages", "threads", "policy"] {
            assert!(c["params"].get(k).is_some(), "params lack {k}");
        }
        for k in [
            "name",
            "bytes_per_iter",
            "loads_per_iter",
            "stores_per_iter",
        ] {
            assert!(c["kernel"].get(k).is_some(), "kernel lacks {k}");
        }
        // Three samples that held their CPU, or (on a machine too busy to
        // give them within the cell's budget) a flag that says so.
        // The document keeps the samples' sketch (its count) by default.
        assert!(c["samples"].as_array().unwrap().is_empty(), "{c}");
        let kept = c["sketch"]["n"].as_u64().unwrap() as usize;
        assert!(kept >= 1, "{c}");
        assert!(
            kept >= 3
                || flags
                    .iter()
                    .any(|f| f.as_str().unwrap().starts_with("preempted")),
            "{c}"
        );
    }
}

#[test]
fn latency_json_has_the_contract() {
    let v = json(&with(&["latency", "--format", "json"], TINY));
    check_matrix_document(&v, "ns");
    assert_eq!(v["kind"], "latency");
    let c = &v["cells"][0];
    assert_eq!(c["params"]["pattern"], "random");
    assert_eq!(c["params"]["stride_bytes"], 64);
    assert_eq!(c["params"]["size_bytes"], 8 << 20);
    assert_eq!(c["kernel"]["name"], "chase_random");
}

#[test]
fn latency_stride_and_window_patterns_run() {
    let v = json(&with(
        &["latency", "--format", "json", "--pattern", "stride"],
        TINY,
    ));
    assert_eq!(v["cells"][0]["params"]["stride_bytes"], 128);
    let v = json(&with(
        &["latency", "--format", "json", "--tlb-window", "4"],
        TINY,
    ));
    assert_eq!(v["cells"][0]["params"]["window_pages"], 4);
}

#[test]
fn bandwidth_json_has_the_contract_and_states_write_allocate() {
    let v = json(&with(
        &["bandwidth", "--format", "json", "--op", "copy"],
        TINY,
    ));
    check_matrix_document(&v, "GB/s");
    let c = &v["cells"][0];
    assert_eq!(c["params"]["op"], "copy");
    assert!(c["vector_width"].is_string());
    assert_eq!(c["kernel"]["write_allocate_bytes_per_iter"], 8);
    assert!(v["notes"][0].as_str().unwrap().contains("write-allocate"));
}

#[test]
fn bandwidth_scaling_lists_one_cell_per_thread_count() {
    let v = json(&with(
        &[
            "bandwidth",
            "--format",
            "json",
            "--scaling",
            "--threads",
            "1",
        ],
        TINY,
    ));
    let s = v["scaling"].as_array().unwrap();
    assert_eq!(s.len(), 1);
    assert_eq!(s[0]["params"]["threads"], 1);
}

#[test]
fn csv_markdown_and_table_show_the_matrix() {
    let out = numaprobe(&with(&["latency", "--format", "csv"], TINY));
    assert!(out.status.success());
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.starts_with("row,kind,cpu_node,mem_node,median,"), "{s}");
    assert!(
        s.lines().nth(1).unwrap().starts_with("cell,latency,0,0,"),
        "{s}"
    );
    let out = numaprobe(&with(&["bandwidth", "--format", "markdown"], TINY));
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("| cpu\\mem [GB/s] | 0 |"), "{s}");
    let out = numaprobe(&with(&["latency"], TINY));
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("Idle latency (ns)") && s.contains("cv %"), "{s}");
}

#[test]
fn output_file_holds_the_finished_document() {
    let path = std::env::temp_dir().join(format!("numaprobe-lat-{}.json", std::process::id()));
    let p = path.to_str().unwrap();
    let out = numaprobe(&with(&["latency", "--format", "json", "--output", p], TINY));
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    std::fs::remove_file(&path).ok();
    check_matrix_document(&v, "ns");
}

#[test]
fn bad_values_are_one_line_and_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (&["latency", "--size", "12XB"], "'12XB'"),
        (&["latency", "--size", "0"], "'0'"),
        (&["latency", "--pattern", "zigzag"], "'zigzag'"),
        (&["latency", "--pages", "3m"], "'3m'"),
        (&["latency", "--stride", "12"], "'12'"),
        (&["latency", "--cpu-nodes", "x-1"], "'x-1'"),
        (&["latency", "--time-budget", "soon"], "'soon'"),
        (&["latency", "--cv-target", "2"], "'2'"),
        (&["latency", "--cpu-nodes", "99"], "node 99 does not exist"),
        (&["latency", "--mem-nodes", "99"], "node 99 does not exist"),
        (
            &["latency", "--mem-nodes", "0", "--size", "100TiB"],
            "does not fit",
        ),
        (&["bandwidth", "--op", "load"], "'load'"),
        (&["bandwidth", "--threads", "0"], "'0'"),
        (
            &["bandwidth", "--threads", "4096", "--size", "8MiB"],
            "4096 threads",
        ),
        (&["bandwidth", "--vector", "mmx"], "'mmx'"),
    ];
    // Measurements run on this machine: there is no `--sysfs-root` to give.
    for cmd in ["latency", "bandwidth"] {
        let out = numaprobe(&[cmd, "--sysfs-root", "/"]);
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("'--sysfs-root'"));
    }
    for (args, needle) in cases {
        let out = numaprobe(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

/// 1 and 2 threads on node 0: two cells on a one-node machine, both on
/// node 0's one buffer.
const TWO_CELLS: &[&str] = &["bandwidth", "--scaling", "--threads", "2"];

#[test]
fn a_buffer_that_does_not_fit_fails_its_cells_and_exits_1() {
    let out = numaprobe_with_full_cell(0, &with(TWO_CELLS, TINY), Path::new("."));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    // The progress says which cell failed as it happens; the error comes
    // last, after the output, in one line.
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("numaprobe: error: 2 of 2 cells failed (first: CPU "),
        "{stderr}"
    );
    assert!(
        stderr.lines().all(|l| l.starts_with("numaprobe: ")),
        "{stderr}"
    );
    assert!(stderr.contains("does not fit in node 0's allocatable memory (0 B now)"));
    assert!(stderr
        .trim_end()
        .ends_with("each failure is listed in the output"));
    // Both cells shared the buffer that did not fit; each failure is shown.
    let failed: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("failed: CPU") && l.contains("-> memory node 0: 8 MiB"))
        .collect();
    assert_eq!(failed.len(), 2, "{stdout}");
    // The table's last line says why it is incomplete (the manual's
    // `latency --size 20GiB` example shows the same line).
    assert!(
        stdout
            .contains("(incomplete: 2 cell(s) failed (each listed as `failed`, with its reason))"),
        "{stdout}"
    );
}

/// The manual's fault-injected `bandwidth --scaling` example is what this
/// build prints for the command it shows: the progress's `cell failed`
/// lines, stdout, then the closing error, line for line. The system check's
/// warnings (the load at the time) are left out on both sides.
#[test]
fn the_manuals_failed_scaling_example_is_what_the_build_prints() {
    let page =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../doc/commands/latency-bandwidth.md");
    let page = std::fs::read_to_string(page).unwrap();
    let prompt = "$ NUMAPROBE_FAULT_FULL_CELL=0 numaprobe ";
    let at = page.find(prompt).expect("the example's command line");
    let block = &page[at..];
    let block = &block[..block.find("\n```").expect("the example's end")];
    let mut lines = block.lines();
    let command = lines.next().unwrap().strip_prefix(prompt).unwrap();
    let args: Vec<&str> = command.split_whitespace().collect();
    let not_warning = |l: &&str| !l.starts_with("numaprobe: warning: system check:");
    let shown: Vec<&str> = lines.filter(not_warning).collect();

    let out = numaprobe_with_full_cell(0, &args, Path::new("."));
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    let progress = |l: &&str| l.starts_with("numaprobe: cell failed:");
    let exit = format!("[exit {}]", out.status.code().unwrap());
    let printed: Vec<&str> = stderr
        .lines()
        .filter(progress)
        .chain(stdout.lines())
        .chain(stderr.lines().filter(|l| !progress(l)).filter(not_warning))
        .chain([exit.as_str()])
        .collect();
    assert_eq!(shown, printed, "\n{stdout}\n{stderr}");
}

#[test]
fn a_failed_cell_is_in_the_json_and_the_output_file() {
    let path = std::env::temp_dir().join(format!("numaprobe-failed-{}.json", std::process::id()));
    let p = path.to_str().unwrap();
    let out = numaprobe_with_full_cell(
        0,
        &with(TWO_CELLS, &with(&["--format", "json", "--output", p], TINY)),
        Path::new("."),
    );
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    std::fs::remove_file(&path).ok();
    assert_eq!(v["complete"], false);
    assert_eq!(v["interrupted"], false);
    let f = &v["failed"].as_array().unwrap()[0];
    assert_eq!(f["cpu_node"], 0);
    assert_eq!(f["mem_node"], 0);
    assert_eq!(f["cpus"].as_array().unwrap().len(), 1);
    assert!(f["reason"].as_str().unwrap().contains("does not fit"));
    assert_eq!(v["failed"].as_array().unwrap().len(), 2);
    assert_eq!(v["scaling"].as_array().unwrap().len(), 0);
    assert_eq!(v["setups"], serde_json::json!([]));
    // Without the fault nothing fails and `failed` is empty.
    let v = json(&with(&["latency", "--format", "json"], TINY));
    assert_eq!(v["failed"], serde_json::json!([]));
}

#[test]
fn help_teaches_the_defaults() {
    // Help is wrapped to the terminal width: compare with spaces collapsed.
    let flat = |o: Output| {
        String::from_utf8(o.stdout)
            .unwrap()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let s = flat(numaprobe(&["latency", "--help"]));
    for needle in ["--size", "256 MiB", "--pattern", "Sattolo", "--time-budget"] {
        assert!(s.contains(needle), "latency --help lacks {needle}");
    }
    let s = flat(numaprobe(&["bandwidth", "--help"]));
    for needle in ["--op", "write-allocate", "--scaling", "physical core"] {
        assert!(s.contains(needle), "bandwidth --help lacks {needle}");
    }
}

/// Every key a latency or bandwidth document can hold, at any depth.
fn keys(v: &serde_json::Value, out: &mut std::collections::BTreeSet<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                // `per_node` is keyed by node numbers, not by names.
                if k.parse::<u32>().is_err() {
                    out.insert(k.clone());
                }
                keys(x, out);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| keys(x, out)),
        _ => {}
    }
}

#[test]
fn every_json_key_is_documented_in_the_manual() {
    let manual = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../doc/json.md"))
        .expect("doc/json.md");
    let start = manual
        .find("<!-- section: json-matrices -->")
        .expect("json-matrices section");
    let rest = &manual[start + 1..];
    let section = &rest[..rest.find("<!-- section:").unwrap_or(rest.len())];
    let mut all = std::collections::BTreeSet::new();
    keys(
        &json(&with(
            &["latency", "--format", "json", "--tlb-window", "2"],
            &TINY[..4],
        )),
        &mut all,
    );
    keys(
        &json(&with(
            &[
                "bandwidth",
                "--format",
                "json",
                "--op",
                "write",
                "--scaling",
                "--threads",
                "1",
            ],
            TINY,
        )),
        &mut all,
    );
    let failed = numaprobe_with_full_cell(
        0,
        &with(&["latency", "--format", "json"], TINY),
        Path::new("."),
    );
    keys(&serde_json::from_slice(&failed.stdout).unwrap(), &mut all);
    assert!(all.contains("reason"));
    let missing: Vec<_> = all
        .iter()
        .filter(|k| !section.contains(&format!("`{k}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "doc/json.md json-matrices lacks {missing:?}"
    );
}
