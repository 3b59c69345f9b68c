//! Property tests of the `infer` input readers (JSON, run.json, CSV, MLC
//! text): arbitrary and mutated inputs never panic, every error is one line
//! that names the bad value or where it is, and a matrix written in each
//! format reads back to the same numbers.
//!
//! Reproducible: failure persistence is off and the generator starts from a
//! fixed seed (`SEED`); set `PROPTEST_RNG_SEED=<u64>` to explore another one
//! (a failure prints the case, which then reproduces with that seed).

use numaprobe_core::analysis::{
    analyse_with_advice, parse, parse_with, Matrix, ParseOptions, Select, Unit,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use std::path::PathBuf;

const SEED: u64 = 0x6e75_6d61_7072_6f62; // "numaprob"

fn runner(cases: u32) -> TestRunner {
    let seed = std::env::var("PROPTEST_RNG_SEED")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(SEED);
    let mut bytes = [0u8; 32];
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = (seed.rotate_left(8 * (i as u32 % 8)) >> (i / 8)) as u8;
    }
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes))
}

/// Parse with every selector; no panic, errors are one non-empty line; what
/// parses also analyses and renders without a panic.
fn check(text: &str) -> Result<(), TestCaseError> {
    for select in [None, Some(Select::Latency), Some(Select::Bandwidth)] {
        match parse_with(text, ParseOptions { unit: None, select }) {
            Ok(m) => {
                let inf = analyse_with_advice(&m);
                serde_json::to_string(&inf).map_err(|e| TestCaseError::fail(e.to_string()))?;
                let _ = inf.ascii_drawing();
                let _ = inf.cells_table().to_csv();
            }
            Err(e) => {
                let s = e.to_string();
                prop_assert!(!s.trim().is_empty());
                prop_assert_eq!(s.lines().count(), 1, "{}", s);
            }
        }
    }
    Ok(())
}

fn samples() -> Vec<String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in [
        root.join("tests/data/mlc"),
        root.join("../../tests/fixtures/matrices"),
    ] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        out.extend(files.iter().map(|p| std::fs::read_to_string(p).unwrap()));
    }
    out.push("# unit: ns\nnode,0,1\n0,80,130\n1,131,81\n".into());
    out.push(
        r#"{"schema":"numaprobe/1","topology":{"distances":{"node_ids":[0,1],"matrix":[[10,21],[21,10]]}},
        "latency":{"kind":"latency","unit":"ns","cpu_nodes":[0,1],"mem_nodes":[0,1],"matrix":[[80,130],[131,81]],"cells":[]},
        "bandwidth":null}"#
            .into(),
    );
    out
}

#[test]
fn arbitrary_text_never_panics() {
    let text = prop_oneof![
        any::<String>(),
        "[0-9a-zA-Z.,;:# \\t\\n\\[\\]{}\"-]{0,300}",
        // Text that gets past the format detection into each reader.
        "(Measuring idle latencies \\(in ns\\)...\\n)?(Numa node[ 0-9\\t]{0,20}\\n)?([ 0-9.\\t-]{0,30}\\n){0,6}",
        "\\{\"unit\":\"(ns|MB/s|slit|x)\",\"matrix\":\\[(\\[[0-9., null-]{0,20}\\],?){0,4}\\]\\}",
    ];
    runner(3000).run(&text, |t| check(&t)).unwrap();
}

const TOKENS: &[&str] = &[
    "-",
    "NaN",
    "inf",
    "1e400",
    "x",
    "null",
    "\n",
    "\t",
    ",",
    "{",
    "}",
    "[",
    "]",
    "\"",
    "0",
    "-3",
    "99999999999",
    "Numa node",
    "Measuring Memory Bandwidths between nodes",
    "",
    " ",
];

#[test]
fn mutated_real_inputs_never_panic() {
    let s = samples();
    let n = s.len();
    let edits = prop::collection::vec(
        (any::<prop::sample::Index>(), 0usize..4, 0..TOKENS.len()),
        1..6,
    );
    runner(3000)
        .run(&(0..n, edits), |(which, edits)| {
            let mut t: Vec<char> = s[which].chars().collect();
            for (at, op, tok) in edits {
                let i = if t.is_empty() { 0 } else { at.index(t.len()) };
                match op {
                    0 => {
                        let end = (i + 1 + tok).min(t.len());
                        t.drain(i..end);
                    }
                    1 => t.splice(i..i, TOKENS[tok].chars()).for_each(drop),
                    2 => t.truncate(i),
                    _ => {
                        if let Some(c) = t.get_mut(i) {
                            *c = TOKENS[tok].chars().next().unwrap_or('#');
                        }
                    }
                }
            }
            check(&t.into_iter().collect::<String>())
        })
        .unwrap();
}

fn as_json(unit: &str, v: &[Vec<f64>]) -> String {
    serde_json::json!({"unit": unit, "matrix": v}).to_string()
}

fn as_csv(unit: &str, v: &[Vec<f64>]) -> String {
    let mut s = format!("# unit: {unit}\nnode");
    for i in 0..v.len() {
        s.push_str(&format!(",{i}"));
    }
    s.push('\n');
    for (i, r) in v.iter().enumerate() {
        s.push_str(&format!(
            "{i},{}\n",
            r.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(",")
        ));
    }
    s
}

fn as_mlc(bw: bool, v: &[Vec<f64>]) -> String {
    let mut s = String::from("Intel(R) Memory Latency Checker - v3.11\n");
    s.push_str(if bw {
        "Measuring Memory Bandwidths between nodes within system\nBandwidths are in MB/sec (1 MB/sec = 1,000,000 Bytes/sec)\n"
    } else {
        "Measuring idle latencies for sequential access (in ns)...\n"
    });
    s.push_str("\t\tNuma node\nNuma node");
    for i in 0..v.len() {
        s.push_str(&format!("\t{i:6}"));
    }
    s.push('\n');
    for (i, r) in v.iter().enumerate() {
        s.push_str(&format!("{i:8}"));
        for x in r {
            s.push_str(&format!("\t{x}"));
        }
        s.push('\n');
    }
    s
}

fn values(m: &Matrix) -> Vec<Vec<f64>> {
    m.rows()
        .iter()
        .map(|r| r.iter().map(|x| x.unwrap()).collect())
        .collect()
}

/// A matrix written as JSON, CSV and MLC text reads back to the same
/// numbers; one cell made bad makes an error that names it.
#[test]
fn every_format_round_trips_and_names_a_bad_cell() {
    let matrix = (1usize..7).prop_flat_map(|n| {
        (
            prop::collection::vec(prop::collection::vec(1u32..2_000_000, n), n),
            any::<bool>(),
            0..n,
            0..n,
            prop_oneof![Just("abc"), Just("1.2.3"), Just("--4"), Just("7x")],
        )
    });
    runner(1500)
        .run(&matrix, |(raw, bw, r, c, bad)| {
            let v: Vec<Vec<f64>> = raw.iter().map(|row| row.iter().map(|&x| f64::from(x) / 10.0).collect()).collect();
            let unit = if bw { "MB/s" } else { "ns" };
            for text in [as_json(unit, &v), as_csv(unit, &v), as_mlc(bw, &v)] {
                let m = parse(&text, None).map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
                prop_assert_eq!(values(&m), v.clone());
                prop_assert_eq!(m.unit, if bw { Unit::MBps } else { Unit::Ns });
            }
            // One bad cell: the CSV and MLC errors quote it, the JSON error
            // names its position.
            let mut s = v.iter().map(|r| r.iter().map(|x| x.to_string()).collect::<Vec<_>>()).collect::<Vec<_>>();
            s[r][c] = bad.to_string();
            let csv = format!(
                "# unit: {unit}\n{}\n",
                s.iter().map(|r| r.join(",")).collect::<Vec<_>>().join("\n")
            );
            let e = parse(&csv, None).map(|m| format!("accepted: {m:?}")).unwrap_or_else(|e| e.to_string());
            prop_assert!(e.contains(bad), "{}: {}", e, csv);
            let mlc = as_mlc(bw, &v).replacen(&format!("\t{}", v[r][c]), &format!("\t{bad}"), 1);
            if mlc != as_mlc(bw, &v) {
                let e = parse(&mlc, None).map(|m| format!("accepted: {m:?}")).unwrap_or_else(|e| e.to_string());
                prop_assert!(e.contains(bad) && e.contains("line"), "{}", e);
            }
            let json = serde_json::json!({"unit": unit, "matrix": s.iter().enumerate().map(|(i, row)| row.iter().enumerate().map(|(j, x)| if i == r && j == c { serde_json::json!(x) } else { serde_json::json!(x.parse::<f64>().unwrap()) }).collect::<Vec<_>>()).collect::<Vec<_>>()});
            let e = parse(&json.to_string(), None).map(|m| format!("accepted: {m:?}")).unwrap_or_else(|e| e.to_string());
            prop_assert!(e.contains(&format!("[{r}][{c}]")) && e.contains(bad), "{}", e);
            Ok(())
        })
        .unwrap();
}

/// The same table pasted with a shell prompt and command above it, blank
/// lines, with or without MLC's banner and its `Measuring ...` line, reads
/// back to the same numbers and unit.
#[test]
fn mlc_tables_pasted_with_prompts_read_the_same() {
    let prompts = prop_oneof![
        Just("> sudo ./mlc"),
        Just("$ mlc"),
        Just("user@host:~/Linux$ sudo ./mlc"),
        Just("[root@node01 ~]# /opt/mlc/mlc"),
        Just("PS C:\\mlc> .\\mlc.exe"),
    ];
    let case = (1usize..6).prop_flat_map(move |n| {
        (
            prop::collection::vec(prop::collection::vec(1u32..2_000_000, n), n),
            any::<bool>(),
            prompts.clone(),
            0usize..3,
            any::<bool>(),
            any::<bool>(),
        )
    });
    runner(600)
        .run(&case, |(raw, bw, prompt, blanks, banner, opener)| {
            let v: Vec<Vec<f64>> = raw
                .iter()
                .map(|row| row.iter().map(|&x| f64::from(x) / 10.0).collect())
                .collect();
            let full = as_mlc(bw, &v);
            let mut body: Vec<&str> = full.lines().collect();
            if !banner {
                body.remove(0);
            }
            if !opener {
                body.retain(|l| !l.starts_with("Measuring") && !l.starts_with("Bandwidths are"));
            }
            let flag = if bw {
                "--bandwidth_matrix"
            } else {
                "--latency_matrix"
            };
            let text = format!(
                "{prompt} {flag}\n{}{}\n",
                "\n".repeat(blanks),
                body.join("\n")
            );
            let m = parse(&text, None).map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
            prop_assert_eq!(values(&m), v.clone());
            prop_assert_eq!(m.unit, if bw { Unit::MBps } else { Unit::Ns });
            Ok(())
        })
        .unwrap();
}
