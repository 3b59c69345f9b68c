//! The document reader against what it must tell apart: every kind's name,
//! documents with and without a declared kind, folders with other files,
//! and bad documents named in one line.

use super::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// A folder of its own under the system's temporary folder.
fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("numaprobe-doc-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// As the JSON writer stamps it: pretty, then the kind.
fn written<T: serde::Serialize + Typed>(v: &T) -> String {
    stamp_kind(&serde_json::to_string_pretty(v).unwrap(), v.kind())
}

#[test]
fn every_kind_has_its_own_name() {
    let mut names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
    for k in Kind::ALL {
        assert_eq!(Kind::parse(k.name()), Some(k));
    }
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), Kind::ALL.len());
    assert_eq!(Kind::parse("report"), None);
}

#[test]
fn documents_without_a_kind_are_told_by_their_keys() {
    let cases = [
        (
            json!({"topology": {}, "latency": null, "bandwidth": null, "notes": []}),
            Kind::Run,
        ),
        (json!({"topology": {}, "notes": []}), Kind::Run),
        (json!({"cpus": [], "numa_nodes": []}), Kind::Topo),
        (json!({"kind": "latency", "matrix": [[1]]}), Kind::Latency),
        (
            json!({"kind": "bandwidth", "matrix": [[1]]}),
            Kind::Bandwidth,
        ),
        (json!({"levels": [], "hops": []}), Kind::Infer),
        (json!({"strategy": "scatter", "placement": []}), Kind::Pin),
        (json!({"strategy": "compact", "commands": []}), Kind::Pin),
        (json!({"command": "study", "experiments": []}), Kind::Study),
        (
            json!({"command": "study-plan", "plan": {}}),
            Kind::StudyPlan,
        ),
        (json!({"command": "policy"}), Kind::Policy),
        (
            json!({"runs_requested": 3, "threads": 4, "command": ["./app"]}),
            Kind::Tune,
        ),
        (
            json!({"nodes": [], "outliers": [], "metrics": []}),
            Kind::Fleet,
        ),
        (json!({"command": "latency-sweep"}), Kind::Sweep),
        (
            json!({"system": [], "memory": {}, "achieved_fraction": null}),
            Kind::Peak,
        ),
        (json!({"curves": [], "timer": {}}), Kind::Loaded),
        (json!({"atomics": "x86 lock", "runs": []}), Kind::Locks),
        (json!({"hitm": [], "pairs": [], "domains": []}), Kind::C2c),
        (json!({"a": {}, "b": {}, "criteria": {}}), Kind::Diff),
        (
            json!({"expect": "t.json", "expect_kind": "topo", "matches": true}),
            Kind::Check,
        ),
    ];
    let mut seen: Vec<Kind> = cases.iter().map(|(_, k)| *k).collect();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), Kind::ALL.len(), "every kind has a case");
    for (v, k) in cases {
        assert_eq!(identify(&v), Some(k), "{v}");
    }
    for v in [
        json!({"unit": "ns", "matrix": [[1]]}),
        json!([1, 2]),
        json!({"x": 1}),
    ] {
        assert_eq!(identify(&v), None, "{v}");
    }
}

#[test]
fn a_declared_kind_wins_over_the_keys() {
    // Keys of a topology, declared a peak: the declaration is the contract.
    let v = json!({"kind": "peak", "cpus": [], "numa_nodes": []});
    assert_eq!(identify(&v), Some(Kind::Peak));
    // An unknown declared kind falls back to the keys.
    let v = json!({"kind": "levels", "cpus": [], "numa_nodes": []});
    assert_eq!(identify(&v), Some(Kind::Topo));
}

#[test]
fn the_kind_follows_the_schema_and_a_documents_own_kind_stays() {
    let out = stamp_kind(
        "{\n  \"schema\": \"numaprobe/1\",\n  \"x\": 1\n}",
        Kind::Topo,
    );
    assert_eq!(
        out,
        "{\n  \"schema\": \"numaprobe/1\",\n  \"kind\": \"topo\",\n  \"x\": 1\n}"
    );
    let last = stamp_kind("{\n  \"schema\": \"numaprobe/1\"\n}\n", Kind::Pin);
    let v: Value = serde_json::from_str(&last).unwrap();
    assert_eq!(v["kind"], "pin");
    assert!(last.ends_with("}\n"));
    let own = "{\n  \"schema\": \"numaprobe/1\",\n  \"kind\": \"bandwidth\"\n}";
    assert_eq!(stamp_kind(own, Kind::Latency), own);
    // A nested `kind` is no top-level one.
    let nested = "{\n  \"schema\": \"numaprobe/1\",\n  \"levels\": [\n    {\n      \"kind\": \"local\"\n    }\n  ]\n}";
    let v: Value = serde_json::from_str(&stamp_kind(nested, Kind::Infer)).unwrap();
    assert_eq!(v["kind"], "infer");
    assert_eq!(stamp_kind("[1]", Kind::Run), "[1]");
}

#[test]
fn a_folder_says_what_it_holds_and_leaves_other_files_listed() {
    let d = temp_dir("folder");
    let lat = crate::model::matrix::tests::sample();
    let run = crate::model::run::tests::sample(crate::model::extra::ExtraStatus::Partial);
    std::fs::write(d.join("latency.json"), written(&lat)).unwrap();
    std::fs::write(d.join("run.json"), written(&run)).unwrap();
    std::fs::write(d.join("other.json"), "{\"name\": \"another tool\"}").unwrap();
    let newer = json!({"schema": "numaprobe/1", "kind": "from-a-newer-numaprobe"});
    std::fs::write(d.join("newer.json"), newer.to_string()).unwrap();
    std::fs::write(d.join("summary.md"), "# numaprobe report\n").unwrap();
    std::fs::write(d.join(".numaprobe-manifest"), "run.json\n").unwrap();
    let f = match read(&d).unwrap() {
        Holding::Folder(f) => f,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        f.files,
        [
            "latency.json",
            "newer.json",
            "other.json",
            "run.json",
            "summary.md"
        ]
    );
    assert_eq!(
        f.unknown,
        [Other {
            file: "newer.json".into(),
            provenance: None,
            complete: true,
            rankings: None,
        }]
    );
    let kinds: Vec<(&str, Kind)> = f
        .documents
        .iter()
        .map(|x| (x.file.as_str(), x.document.kind()))
        .collect();
    assert_eq!(
        kinds,
        [("latency.json", Kind::Latency), ("run.json", Kind::Run)]
    );
    assert_eq!(
        f.first(Kind::Latency).unwrap().document,
        Document::Matrix(Box::new(lat))
    );
    match &f.first(Kind::Run).unwrap().document {
        Document::Run(r) => {
            let r = &r.report;
            assert_eq!(r.topology, None);
            assert_eq!(r.plan, None);
            assert_eq!(
                (&r.c2c, &r.loaded_latency, &r.peak, &r.sweep),
                (&run.c2c, &run.loaded_latency, &run.peak, &run.sweep)
            );
            assert_eq!((r.budget_s, r.elapsed_s), (run.budget_s, run.elapsed_s));
        }
        other => panic!("{other:?}"),
    }
    assert!(f.first(Kind::Topo).is_none());
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_run_json_written_without_kind_reads_as_a_run() {
    // Built into the test so it runs where the source tree is not (the
    // arm64 rig runs the unit tests inside its guest).
    let text = include_str!("../../../../../tests/fixtures/fleet/taskset-one-cpu/node1/run.json");
    let d = temp_dir("legacy-run");
    let p = d.join("run.json");
    std::fs::write(&p, text).unwrap();
    match read_file(&p).unwrap() {
        Document::Run(r) => {
            assert!(r.report.topology.is_some());
            assert!(r.report.latency.is_some());
        }
        other => panic!("{:?}", other.kind()),
    }
}

#[test]
fn an_unknown_or_broken_document_is_one_line_naming_the_file_and_what_is_read() {
    let d = temp_dir("bad");
    let unknown = d.join("mystery.json");
    std::fs::write(&unknown, "{\"schema\": \"numaprobe/1\", \"x\": 1}").unwrap();
    let e = read_file(&unknown).unwrap_err().to_string();
    assert!(e.starts_with(&unknown.display().to_string()), "{e}");
    assert!(e.contains("run, topo, latency, bandwidth"), "{e}");
    assert!(!e.contains('\n'), "{e}");
    // A numaprobe document that does not read stops a folder's reading.
    std::fs::write(
        &unknown,
        "{\"schema\": \"numaprobe/1\", \"kind\": \"topo\", \"cpus\": 3}",
    )
    .unwrap();
    let e = read(&d).unwrap_err().to_string();
    assert!(
        e.contains("mystery.json: not a valid topology document"),
        "{e}"
    );
    std::fs::write(
        &unknown,
        "{\"schema\": \"numaprobe/9\", \"kind\": \"topo\"}",
    )
    .unwrap();
    let e = read_file(&unknown).unwrap_err().to_string();
    assert!(
        e.contains("schema numaprobe/9; this numaprobe reads numaprobe/1"),
        "{e}"
    );
    std::fs::write(&unknown, "not json").unwrap();
    let e = read_file(&unknown).unwrap_err().to_string();
    assert!(e.contains("not JSON"), "{e}");
    let e = read(&d.join("nowhere")).unwrap_err().to_string();
    assert!(e.ends_with("nowhere: no such file or folder"), "{e}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_matrix_whose_kind_disagrees_with_its_content_is_refused() {
    let lat = crate::model::matrix::tests::sample();
    let text = written(&lat);
    let head = Head::read(text.as_bytes()).unwrap();
    let e = parse(text.as_bytes(), &head, Kind::Bandwidth, Path::new("b.json")).unwrap_err();
    assert!(
        e.to_string()
            .contains("it says bandwidth but holds a latency matrix"),
        "{e}"
    );
    assert!(parse(text.as_bytes(), &head, Kind::Latency, Path::new("l.json")).is_ok());
}

#[test]
fn every_kind_is_in_the_manual() {
    let doc = include_str!("../../../../../doc/json.md");
    for k in Kind::ALL {
        assert!(doc.contains(&format!("| `{}` |", k.name())), "{k}");
    }
}

#[test]
fn a_reader_picks_the_kinds_it_takes_and_names_them_when_it_finds_none() {
    use super::{pick, Accepts};
    const TAKES: Accepts = Accepts {
        reader: "diff",
        kinds: &[Kind::Latency, Kind::C2c],
    };
    let d = temp_dir("pick");
    let doc = |kind: &str| format!("{{\"schema\": \"numaprobe/1\", \"kind\": \"{kind}\"}}");
    std::fs::write(d.join("b.json"), doc("c2c")).unwrap();
    std::fs::write(d.join("a.json"), doc("latency")).unwrap();
    std::fs::write(d.join("p.json"), doc("peak")).unwrap();
    std::fs::write(d.join("other.json"), "{\"foo\": 1}").unwrap();
    std::fs::write(d.join("notes.txt"), "x").unwrap();
    let p = pick(&d, &TAKES).unwrap();
    assert!(p.folder);
    let kinds: Vec<Kind> = p.files.iter().map(|f| f.1).collect();
    assert_eq!(kinds, [Kind::Latency, Kind::C2c]);
    assert_eq!(p.first(Kind::C2c), Some(d.join("b.json").as_path()));
    assert_eq!(p.first(Kind::Peak), None);
    assert_eq!(p.named(), "a report folder: a.json (latency), b.json (c2c)");
    // The file itself: taken, or refused naming what it is and what
    // would be taken.
    let one = pick(&d.join("b.json"), &TAKES).unwrap();
    assert!(!one.folder);
    assert_eq!(one.named(), "a c2c document");
    let e = pick(&d.join("p.json"), &TAKES).unwrap_err().to_string();
    assert!(
        e.ends_with("p.json: a peak document; diff takes a latency or c2c document, or a report folder holding one"),
        "{e}"
    );
    assert!(pick(&d.join("other.json"), &TAKES).is_err());
    let only_peak = temp_dir("pick-peak");
    std::fs::write(only_peak.join("p.json"), doc("peak")).unwrap();
    std::fs::write(only_peak.join("i.json"), doc("infer")).unwrap();
    let e = pick(&only_peak, &TAKES).unwrap_err().to_string();
    assert!(
        e.contains("a folder of infer, peak documents only; diff takes a latency or c2c document"),
        "{e}"
    );
    let empty = temp_dir("pick-empty");
    let e = pick(&empty, &TAKES).unwrap_err().to_string();
    assert!(
        e.contains("a folder without numaprobe documents; diff takes"),
        "{e}"
    );
    assert!(matches!(
        pick(&empty.join("nothing"), &TAKES),
        Err(DocumentError::Missing { .. })
    ));
    let an = Accepts {
        reader: "x",
        kinds: &[Kind::Infer],
    };
    assert!(
        an.names().starts_with("an infer document"),
        "{}",
        an.names()
    );
    for p in [d, only_peak, empty] {
        let _ = std::fs::remove_dir_all(p);
    }
}

/// A file given to a reader that also takes other formats: a document of
/// a kind it does not take is refused by the one rule; a kind it takes,
/// another tool's JSON and text that is no JSON at all go on to its own
/// parsers.
#[test]
fn a_document_of_another_kind_is_refused_and_other_text_goes_on() {
    use super::{refuse_other_kind, Accepts};
    const TAKES: Accepts = Accepts {
        reader: "policy --weights-from",
        kinds: &[Kind::Bandwidth, Kind::Run],
    };
    let path = Path::new("w.json");
    let doc = |kind: &str| format!("{{\"schema\": \"numaprobe/1\", \"kind\": \"{kind}\"}}");
    let e = refuse_other_kind(&doc("latency"), path, &TAKES)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "w.json: a latency document; policy --weights-from takes a bandwidth or run document, or a report folder holding one"
    );
    assert!(refuse_other_kind(&doc("bandwidth"), path, &TAKES).is_ok());
    assert!(refuse_other_kind(&doc("run"), path, &TAKES).is_ok());
    for other in [
        "{\"unit\": \"GB/s\", \"matrix\": [[1]]}",
        "Numa node 0 1\n",
        "0,1\n1,0\n",
        "",
    ] {
        assert!(refuse_other_kind(other, path, &TAKES).is_ok(), "{other:?}");
    }
}

#[test]
fn a_run_json_with_its_figures_repeated_reads_as_one_with_each_stored_once() {
    // The fixture is run.json as written before each figure was stored
    // once: the plan repeating the extra phases' records and the matrices'
    // set-ups (with their sums), the topology its own provenance.
    let old_text = include_str!("../../../../../tests/fixtures/documents/run.json");
    let old: Value = serde_json::from_str(old_text).unwrap();
    assert!(old["plan"]["extras"].is_array() && old["topology"]["provenance"].is_object());
    let mut new = old.clone();
    let plan = new["plan"].as_object_mut().unwrap();
    plan.remove("extras");
    plan.remove("setup_s");
    for p in plan["phases"].as_array_mut().unwrap() {
        let p = p.as_object_mut().unwrap();
        assert!(p.remove("setups").is_some() && p.remove("setup_s").is_some());
    }
    new["topology"]
        .as_object_mut()
        .unwrap()
        .remove("provenance");
    let new_text = serde_json::to_string_pretty(&new).unwrap();
    assert!(new_text.len() < old_text.len());
    let read = |text: &str| match from_bytes(text.as_bytes(), Path::new("run.json")).unwrap() {
        (_, Document::Run(r)) => r.report,
        (_, other) => panic!("{:?}", other.kind()),
    };
    let (old, new) = (read(old_text), read(&new_text));
    assert!(old.latency.is_some() && old.topology.is_some() && old.c2c.is_some());
    assert_eq!(old, new);
}
