//! End-to-end tests of `numaprobe c2c` on this machine: tiny budgets, the
//! JSON contract's keys, the other formats, and the one-line errors of bad
//! input. No test asserts a timing.

mod cli;

use cli::{json, numaprobe, ok, report_page, usage_error};

const TINY: &[&str] = &["--time-budget", "40ms"];

fn allowed_pair() -> Option<String> {
    let cpus = std::fs::read_to_string("/proc/self/status")
        .ok()?
        .lines()
        .find_map(|l| {
            l.strip_prefix("Cpus_allowed_list:")
                .map(|s| s.trim().to_string())
        })?;
    let list: Vec<u32> = cpus
        .split(',')
        .flat_map(|r| match r.split_once('-') {
            Some((a, b)) => (a.parse::<u32>().unwrap()..=b.parse().unwrap()).collect::<Vec<_>>(),
            None => vec![r.parse().unwrap()],
        })
        .collect();
    (list.len() >= 2).then(|| format!("{},{}", list[0], list[1]))
}

#[test]
fn json_has_the_contract() {
    let Some(pair) = allowed_pair() else { return };
    let mut args = vec!["c2c", "--format", "json", "--cpus", pair.as_str()];
    args.extend(TINY);
    let v = json(&numaprobe(&args));
    assert_eq!(v["schema"], "numaprobe/1");
    assert_eq!(v["unit"], "ns");
    assert_eq!(v["complete"], true);
    for k in [
        "provenance",
        "cpus",
        "hitm",
        "shared",
        "pairs",
        "domains",
        "atomics",
        "platform_atomics",
        "stop_rule",
        "timer",
        "notes",
        "failed",
        "interrupted",
    ] {
        assert!(v.get(k).is_some(), "no {k}: {v}");
    }
    let cpus: Vec<u64> = v["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .collect();
    let asked: Vec<u64> = pair.split(',').map(|c| c.parse().unwrap()).collect();
    assert_eq!(cpus, asked);
    assert_eq!(v["pairs"].as_array().unwrap().len(), 2);
    for p in v["pairs"].as_array().unwrap() {
        for k in ["a", "b", "node_a", "node_b", "domain", "hitm", "shared"] {
            assert!(p.get(k).is_some(), "pair lacks {k}");
        }
        assert!(p["hitm"]["median"].as_f64().unwrap() > 0.0);
        // A cell's budget ends it once three samples were taken, held or
        // set aside (a busy machine sets some aside): together at least 3.
        let s = &p["shared"];
        let aside = ["preempted", "off_cpu"]
            .iter()
            .map(|k| s["set_aside"][k].as_u64().unwrap())
            .sum::<u64>() as usize;
        // The document keeps the samples' sketch (its count) by default.
        let kept = s["sketch"]["n"].as_u64().unwrap() as usize;
        assert!(s["samples"].as_array().unwrap().is_empty(), "{s}");
        assert!(kept + aside >= 3, "{s}");
    }
    assert_eq!(v["hitm"].as_array().unwrap().len(), 2);
    assert!(v["hitm"][0][0].is_null());
    assert_eq!(v["atomics"], "loads and stores");
    if !cfg!(target_arch = "aarch64") {
        assert!(v["platform_atomics"].is_null());
    }
}

#[test]
fn one_state_and_the_text_formats() {
    let Some(pair) = allowed_pair() else { return };
    let mut args = vec!["c2c", "--state", "hitm", "--cpus", pair.as_str()];
    args.extend(TINY);
    let t = ok(&numaprobe(&args));
    assert!(
        t.starts_with("numaprobe c2c: cache-line transfer between 2 CPUs"),
        "{t}"
    );
    assert!(t.contains("HITM: line last written"), "{t}");
    assert!(!t.contains("Read-shared:"), "{t}");
    assert!(t.contains("By sharing domain"), "{t}");
    args.extend(["--format", "csv"]);
    let c = ok(&numaprobe(&args));
    assert!(c.starts_with("a,b,node_a,node_b,domain,hitm_ns"), "{c}");
    assert_eq!(c.lines().count(), 3);
    let args: Vec<&str> = args[..args.len() - 2]
        .iter()
        .copied()
        .chain(["--format", "markdown"])
        .collect();
    assert!(ok(&numaprobe(&args)).starts_with("## numaprobe c2c"));
}

#[test]
fn pairs_domains_is_one_pair_per_domain_and_says_so() {
    let Some(pair) = allowed_pair() else { return };
    let mut args = vec!["c2c", "--state", "hitm", "--pairs", "domains"];
    args.extend(["--cpus", pair.as_str(), "--format", "json"]);
    args.extend(TINY);
    let doc = json(&numaprobe(&args));
    // Two CPUs share one domain: its pair, both ways.
    assert_eq!(doc["pairs"].as_array().unwrap().len(), 2, "{doc}");
    assert_eq!(doc["domains"].as_array().unwrap().len(), 1, "{doc}");
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains("one representative pair per sharing domain"),
        "{notes}"
    );
    assert_eq!(doc["hitm_lines"], "one line");
    // Two lines, as core-to-core-latency's read-write benchmark.
    let mut args = vec!["c2c", "--state", "hitm", "--hitm-lines", "2"];
    args.extend(["--cpus", pair.as_str(), "--format", "json"]);
    args.extend(TINY);
    let doc = json(&numaprobe(&args));
    assert_eq!(doc["hitm_lines"], "two lines");
    assert!(
        doc["pairs"][0]["hitm"]["median"].as_f64().unwrap() > 0.0,
        "{doc}"
    );
    let mut args = vec!["c2c", "--state", "shared", "--cpus", pair.as_str()];
    args.extend(["--format", "json"]);
    args.extend(TINY);
    assert!(json(&numaprobe(&args))["hitm_lines"].is_null());
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for (args, want) in [
        (vec!["c2c", "--cpus", "0,4095"], "CPU 4095 is not allowed"),
        (vec!["c2c", "--cpus", "x"], "--cpus"),
        (vec!["c2c", "--cpus", "0"], "c2c needs two CPUs"),
        (
            vec!["c2c", "--state", "warm"],
            "--state: invalid value 'warm'",
        ),
        (vec!["c2c", "--time-budget", "0s"], "--time-budget"),
        (vec!["c2c", "--cv-target", "lots"], "--cv-target"),
        (
            vec!["c2c", "--pairs", "some"],
            "--pairs: invalid value 'some' (valid: all, domains, auto)",
        ),
        (
            vec!["c2c", "--hitm-lines", "3"],
            "--hitm-lines: invalid value '3' (valid: 1, 2)",
        ),
    ] {
        let line = usage_error(&numaprobe(&args));
        assert!(line.contains(want), "{args:?}: {line}");
    }
    let line = usage_error(&numaprobe(&["c2c", "--cpus", "0,4095"]));
    assert!(line.contains("allowed CPUs: "), "{line}");
}

#[test]
fn a_c2c_document_joins_the_report() {
    let Some(pair) = allowed_pair() else { return };
    let dir = std::env::temp_dir().join(format!("np-c2c-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("c2c.json");
    let f = file.to_str().unwrap();
    let mut args = vec!["c2c", "--state", "hitm", "--cpus", pair.as_str(), "-o", f];
    args.extend(TINY);
    ok(&numaprobe(&args));
    let page = report_page(&dir);
    assert!(page.contains("Cache-line transfer between CPUs"), "{page}");
    assert!(page.contains("from c2c.json"), "{page}");
    std::fs::remove_dir_all(&dir).unwrap();
}
