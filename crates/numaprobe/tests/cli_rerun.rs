//! A re-run into a report folder that holds measurements: a run that
//! measures less (`--no-measure`, a budget that measures fewer cells) keeps
//! the previous report in `previous-<time>/` and says so in one line; a run
//! that measures as much replaces it. Figures are never asserted.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use cli::{main_job_in, numaprobe_in as numaprobe, ok};
use common::TempDir;
use std::path::{Path, PathBuf};

/// The sub-folders a run kept a previous report in.
fn kept(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("previous-")
        })
        .collect();
    v.sort();
    v
}

#[test]
fn no_measure_into_a_measured_report_keeps_it_and_says_where() {
    let t = TempDir::new("rerun-none");
    let o = main_job_in(
        &[
            "run",
            "--budget",
            "2s",
            "--size",
            "16MiB",
            "--report-dir",
            "r",
        ],
        t.path(),
        &[],
    );
    ok(&o);
    let dir = t.path().join("r");
    let before = std::fs::read(dir.join("latency.json")).unwrap();
    let o = numaprobe(&["run", "--no-measure", "--report-dir", "r"], t.path());
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    let k = kept(&dir);
    assert_eq!(k.len(), 1, "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("kept in")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("measured less") && lines[0].contains("no latency.json"),
        "{err}"
    );
    let name = k[0].file_name().unwrap().to_string_lossy();
    assert!(lines[0].contains(&format!("r/{name}/")), "{err}");
    // The kept report is whole: its matrix as it was, its manifest, and a
    // page `numaprobe report` rebuilds from it.
    assert_eq!(std::fs::read(k[0].join("latency.json")).unwrap(), before);
    assert!(k[0].join(".numaprobe-manifest").is_file());
    assert!(!dir.join("latency.json").exists());
    let o = numaprobe(&["report", k[0].to_str().unwrap()], t.path());
    ok(&o);
    // The next run into the folder leaves the kept report where it is.
    let o = numaprobe(&["run", "--no-measure", "--report-dir", "r"], t.path());
    ok(&o);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("kept in"));
    assert_eq!(kept(&dir), k);
}

#[test]
fn fewer_cells_into_the_same_folder_keeps_the_report_that_had_more() {
    let t = TempDir::new("rerun-fewer");
    let dir = t.path().join("r");
    std::fs::create_dir_all(&dir).unwrap();
    // A report a longer budget on a bigger machine left: 64 x 64 latency
    // cells and a c2c document, listed in the folder's manifest.
    let cells: Vec<String> = (0..4096)
        .map(|i| format!("{{\"cpu_node\":{},\"mem_node\":{}}}", i / 64, i % 64))
        .collect();
    let latency = format!("{{\"kind\":\"latency\",\"cells\":[{}]}}", cells.join(","));
    std::fs::write(dir.join("latency.json"), &latency).unwrap();
    std::fs::write(dir.join("c2c.json"), "{}").unwrap();
    std::fs::write(
        dir.join(".numaprobe-manifest"),
        "# numaprobe: the files the last run wrote into this folder; the next run removes them\nlatency.json\nc2c.json\n",
    )
    .unwrap();
    let o = main_job_in(
        &[
            "run",
            "--budget",
            "1s",
            "--size",
            "16MiB",
            "--report-dir",
            "r",
        ],
        t.path(),
        &[],
    );
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    let line = err
        .lines()
        .find(|l| l.contains("kept in"))
        .unwrap_or_else(|| panic!("no line says the report is kept: {err}"));
    assert!(line.contains("of 4096 cells"), "{line}");
    let k = kept(&dir);
    assert_eq!(k.len(), 1, "{err}");
    assert_eq!(
        std::fs::read_to_string(k[0].join("latency.json")).unwrap(),
        latency
    );
    assert!(k[0].join("c2c.json").is_file());
    // The new run's own report is beside it, whole.
    assert!(dir.join("latency.json").is_file() && dir.join("run.json").is_file());
}
