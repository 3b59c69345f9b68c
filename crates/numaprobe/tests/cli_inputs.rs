//! The one input rule, over every command that reads a numaprobe result ×
//! every document kind × the document itself or a folder holding it: the
//! reader takes it (exit 0, or 1 for a difference found), or refuses it
//! with one line (exit 2) that names every kind it would take. The
//! documents are `tests/fixtures/documents/`, one per kind (their README
//! says how they were made); a kind without one fails the test, so a new
//! kind must join the table.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use common::TempDir;
use numaprobe_core::model::document::{a_kind, Kind};
use std::path::{Path, PathBuf};
use std::process::Output;

fn documents() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/documents")
}

/// A reader: its arguments around the path (`{}`), and the kinds it takes.
struct Reader {
    args: &'static [&'static str],
    takes: &'static [Kind],
    /// What its refusal names besides the kinds it takes (`fleet --from`
    /// takes no document but the folder `fleet` gathers).
    names: &'static str,
    /// An answer to a taken document that is about this machine, not the
    /// document's kind: the fixtures are of a one-node machine, and
    /// `policy` derives weights for the host's own memory nodes.
    host_answer: Option<&'static str>,
}

impl Reader {
    const fn new(args: &'static [&'static str], takes: &'static [Kind]) -> Reader {
        Reader {
            args,
            takes,
            names: "",
            host_answer: None,
        }
    }
}

const LATENCY: &str = "@latency";
const TOPO: &str = "@topo";
/// A fresh folder for what the reader writes.
const OUT: &str = "@out";

/// Every command (and option) that reads a numaprobe result. `@kind` is the
/// fixture document of that kind, `{}` the input under test.
fn readers() -> Vec<Reader> {
    use Kind::*;
    vec![
        Reader::new(&["diff", "{}", "{}"], &[Run, Topo, Latency, Bandwidth, C2c]),
        // A matrix is checked against this node's own measurements.
        Reader::new(
            &["check", "--expect", "{}", "--measured", LATENCY],
            &[Run, Topo, Latency, Bandwidth, Pin, Fleet],
        ),
        Reader::new(
            &["check", "--expect", TOPO, "--measured", "{}"],
            &[Run, Latency, Bandwidth],
        ),
        Reader::new(
            &["export", "--to", "prometheus", "{}"],
            &[
                Run, Topo, Latency, Bandwidth, Locks, Policy, Tune, Check, Fleet,
            ],
        ),
        Reader::new(&["export", "--to", "hwloc", "{}"], &[Run, Topo]),
        Reader::new(&["report", "{}", "-o", "-"], &Kind::ALL),
        Reader::new(
            &["infer", "--input", "{}"],
            &[Run, Latency, Bandwidth, Topo],
        ),
        Reader::new(
            &[
                "study",
                "--plan",
                "--preset",
                "same-node",
                "--distances",
                "{}",
            ],
            &[Run, Latency],
        ),
        // It measures once the weights are read: one short sample.
        Reader {
            host_answer: Some("has no value for memory node"),
            ..Reader::new(
                &[
                    "policy",
                    "--policies",
                    "first-touch",
                    "--cases",
                    "independent",
                    "--rounds",
                    "1",
                    "--size",
                    "1MiB",
                    "--sample-time",
                    "1ms",
                    "--weights-from",
                    "{}",
                ],
                &[Bandwidth, Run],
            )
        },
        // No document and no report folder is a gathered one (see
        // `fleet_from_takes_the_folder_fleet_gathered`).
        Reader {
            names: "DIR/nodes/<node>/run.json",
            ..Reader::new(&["fleet", "--from", "{}", "--report-dir", OUT], &[])
        },
    ]
}

fn fixture(kind: Kind) -> PathBuf {
    documents().join(format!("{}.json", kind.name()))
}

fn run(reader: &Reader, input: &Path) -> Output {
    let out = TempDir::new("inputs-out");
    let args: Vec<String> = reader
        .args
        .iter()
        .map(|a| match *a {
            "{}" => input.display().to_string(),
            LATENCY => fixture(Kind::Latency).display().to_string(),
            TOPO => fixture(Kind::Topo).display().to_string(),
            OUT => out.path().join("out").display().to_string(),
            a => a.to_string(),
        })
        .collect();
    cli::numaprobe(&args)
}

/// What went wrong with one case, or None when it behaved.
fn judge(reader: &Reader, kind: Kind, input: &Path, o: &Output) -> Option<String> {
    let err = String::from_utf8_lossy(&o.stderr);
    let errors: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("numaprobe: error:") || l.contains("panicked"))
        .collect();
    let case = format!(
        "{} with {} ({})",
        reader.args.join(" "),
        input.display(),
        kind
    );
    if reader.takes.contains(&kind) {
        let about_host = reader
            .host_answer
            .is_some_and(|h| errors.len() == 1 && errors[0].contains(h));
        // 1 is `diff`'s and `check`'s answer "different", never bad input.
        return match o.status.code() {
            Some(0 | 1) if errors.is_empty() => None,
            Some(2) if about_host => None,
            c => Some(format!("{case}: taken, but exit {c:?}: {err}")),
        };
    }
    if o.status.code() != Some(2) || err.trim_end().lines().count() != 1 || errors.len() != 1 {
        return Some(format!(
            "{case}: refused, but exit {:?} and not one line: {err}",
            o.status.code()
        ));
    }
    // What it found (the kind, in the file or the folder), and what it
    // would take.
    let missing: Vec<&str> = reader
        .takes
        .iter()
        .map(|k| k.name())
        .chain(
            [kind.name(), reader.names]
                .into_iter()
                .filter(|n| !n.is_empty()),
        )
        .filter(|n| !err.contains(n))
        .collect();
    if !missing.is_empty() {
        return Some(format!(
            "{case}: the refusal does not name {missing:?}: {err}"
        ));
    }
    None
}

#[test]
fn every_reader_takes_every_kind_it_can_use_and_names_them_when_it_cannot() {
    for k in Kind::ALL {
        assert!(
            fixture(k).is_file(),
            "no fixture document of kind {k}: add {}",
            fixture(k).display()
        );
    }
    // Each document also alone in a folder of its own.
    let folders = TempDir::new("inputs");
    let mut cases: Vec<(usize, Kind, PathBuf)> = Vec::new();
    let readers = readers();
    for k in Kind::ALL {
        let dir = folders.path().join(k.name());
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(fixture(k), dir.join(format!("{}.json", k.name()))).unwrap();
        for r in 0..readers.len() {
            cases.push((r, k, fixture(k)));
            cases.push((r, k, dir.clone()));
        }
    }
    // Two at a time: the cases are independent, and this keeps the whole
    // table to the time of half of them.
    let faults: Vec<String> = std::thread::scope(|s| {
        let halves: Vec<_> = cases
            .chunks(cases.len().div_ceil(2))
            .map(|chunk| {
                let readers = &readers;
                s.spawn(move || {
                    chunk
                        .iter()
                        .filter_map(|(r, k, p)| judge(&readers[*r], *k, p, &run(&readers[*r], p)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        halves.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert!(
        faults.is_empty(),
        "{} of {} cases:\n{}",
        faults.len(),
        cases.len(),
        faults.join("\n")
    );
}

/// What was found is named: diff says each side's documents, and two c2c
/// results are compared pair by pair.
#[test]
fn diff_compares_two_c2c_results_pair_by_pair() {
    let c2c = fixture(Kind::C2c);
    let o = cli::numaprobe(&[
        "diff",
        c2c.to_str().unwrap(),
        c2c.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let v = cli::json(&o);
    assert_eq!(v["a"]["kind"], "c2c", "{v}");
    let cells = v["cells"].as_array().unwrap();
    assert!(!cells.is_empty(), "{v}");
    assert!(
        cells
            .iter()
            .all(|c| c["kind"].as_str().unwrap().starts_with("c2c ")),
        "{v}"
    );
    // A result compared with itself changed nowhere.
    assert!(
        cells.iter().all(|c| c["change"].as_f64() == Some(0.0)),
        "{v}"
    );
}

/// `check --expect` with a matrix and without this node's own run says
/// what to give, in one line.
#[test]
fn a_matrix_expectation_asks_for_the_measured_run() {
    let lat = fixture(Kind::Latency);
    let err = cli::usage_error(&cli::numaprobe(&[
        "check",
        "--expect",
        lat.to_str().unwrap(),
    ]));
    assert!(err.contains("--measured"), "{err}");
}

/// `fleet --from` takes the folder `numaprobe fleet` gathered: a node's
/// run.json is analysed, and a node whose run.json is a document of
/// another kind is a failed node of the fleet, named with why (exit 4),
/// never bad input of the command.
#[test]
fn fleet_from_takes_the_folder_fleet_gathered() {
    let t = TempDir::new("inputs-fleet");
    for k in Kind::ALL {
        let gathered = t.path().join(k.name());
        let node = gathered.join("nodes").join("n1");
        std::fs::create_dir_all(&node).unwrap();
        std::fs::copy(fixture(k), node.join("run.json")).unwrap();
        let out = t.path().join(format!("{}-out", k.name()));
        let o = cli::numaprobe(&[
            "fleet",
            "--from",
            gathered.to_str().unwrap(),
            "--report-dir",
            out.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("panicked"), "{k}: {err}");
        assert!(
            out.join("fleet.json").is_file(),
            "{k}: no fleet.json: {err}"
        );
        if k == Kind::Run {
            assert_eq!(o.status.code(), Some(0), "{k}: {err}");
        } else {
            assert_eq!(o.status.code(), Some(4), "{k}: {err}");
            let failed = err
                .lines()
                .filter(|l| l.starts_with("numaprobe: error:"))
                .collect::<Vec<_>>();
            assert_eq!(failed.len(), 1, "{k}: {err}");
            assert!(
                failed[0].contains("n1 ("),
                "{k}: the node is not named: {err}"
            );
        }
    }
}

/// `diff` compares topologies, matrices and c2c pairs: a peak, cache-size
/// sweep, loaded-latency or locks result is refused, as a file and in a
/// folder, in one line naming what was found and every kind `diff` takes
/// (doc/inputs.md's table).
#[test]
fn diff_refuses_results_it_does_not_compare_naming_what_it_takes() {
    let t = TempDir::new("inputs-diff");
    let takes = "diff takes a run, topo, latency, bandwidth or c2c document, or a report folder holding one";
    for k in [Kind::Peak, Kind::Sweep, Kind::Loaded, Kind::Locks] {
        let dir = t.path().join(k.name());
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(fixture(k), dir.join(format!("{}.json", k.name()))).unwrap();
        let file = fixture(k);
        for (input, found) in [
            (file.as_path(), format!("{}: {}", file.display(), a_kind(k))),
            (
                dir.as_path(),
                format!("{}: a folder of {} documents only", dir.display(), k.name()),
            ),
        ] {
            let i = input.to_str().unwrap();
            let err = cli::usage_error(&cli::numaprobe(&["diff", i, i]));
            assert!(err.contains(&found), "{k}: {err}");
            assert!(err.contains(takes), "{k}: {err}");
        }
    }
}
