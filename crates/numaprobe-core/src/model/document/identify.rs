//! Telling what a JSON value is: one of numaprobe's documents or not, and
//! of which kind, from its declared `kind` or, for a document written
//! without one, from the keys only its kind has.

use super::kind::Kind;
use serde_json::{Map, Value};

/// Is this JSON one of numaprobe's documents (`"schema": "numaprobe/…"`)?
pub fn is_numaprobe(v: &Value) -> bool {
    v.get("schema")
        .and_then(Value::as_str)
        .is_some_and(|s| s.starts_with("numaprobe/"))
}

/// The kind of a JSON document: its declared `kind`, or for a document
/// without one, its keys. None when it is no numaprobe document.
pub fn identify(v: &Value) -> Option<Kind> {
    let obj = v.as_object()?;
    if let Some(k) = obj
        .get("kind")
        .and_then(Value::as_str)
        .and_then(Kind::parse)
    {
        return Some(k);
    }
    by_keys(obj)
}

/// The kind of a document written without `kind`, from the keys only its
/// kind has.
fn by_keys(obj: &Map<String, Value>) -> Option<Kind> {
    let has = |k: &str| obj.contains_key(k);
    let command = obj.get("command").and_then(Value::as_str);
    // run.json: the topology with the matrices beside it; its parts never
    // carry a topology of their own.
    if has("topology") && (has("latency") || has("bandwidth") || has("notes")) {
        return Some(Kind::Run);
    }
    let k = match command {
        Some("study") => Kind::Study,
        Some("study-plan") => Kind::StudyPlan,
        Some("policy") => Kind::Policy,
        Some("latency-sweep") => Kind::Sweep,
        _ if has("cpus") && has("numa_nodes") => Kind::Topo,
        _ if has("levels") && has("hops") => Kind::Infer,
        _ if has("strategy") && (has("placement") || has("commands")) => Kind::Pin,
        _ if has("hitm") && has("pairs") => Kind::C2c,
        _ if has("system") && has("memory") && has("achieved_fraction") => Kind::Peak,
        _ if has("atomics") && has("runs") => Kind::Locks,
        _ if has("curves") && has("timer") => Kind::Loaded,
        _ if has("runs_requested") && has("threads") => Kind::Tune,
        _ if has("outliers") && has("metrics") && has("nodes") => Kind::Fleet,
        _ if has("a") && has("b") && has("criteria") => Kind::Diff,
        _ if has("expect") && has("expect_kind") => Kind::Check,
        _ => return None,
    };
    Some(k)
}
