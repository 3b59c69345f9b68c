//! Telling what a JSON document is, one of numaprobe's or not and of which
//! kind, from its declared `kind` or, for a document written without one,
//! from the keys only its kind has: [`Head`], read from the document's text
//! in one pass that keeps its top-level strings and skips every value it
//! does not need (no tree of the document is built).

use super::kind::Kind;
use crate::model::lax::OneShape;
use crate::model::provenance::Provenance;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::fmt;

/// The top-level keys that tell a document's kind when it does not say it.
const KEYS: [&str; 30] = [
    "topology",
    "latency",
    "bandwidth",
    "notes",
    "cpus",
    "numa_nodes",
    "levels",
    "hops",
    "strategy",
    "placement",
    "commands",
    "hitm",
    "pairs",
    "system",
    "memory",
    "achieved_fraction",
    "atomics",
    "runs",
    "curves",
    "timer",
    "runs_requested",
    "threads",
    "outliers",
    "metrics",
    "nodes",
    "a",
    "b",
    "criteria",
    "expect",
    "expect_kind",
];

/// What a document says about itself at its top level: its schema, kind,
/// command, completeness and provenance, and which of the keys that tell a
/// kind it has.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Head {
    /// False when the JSON is not an object.
    pub object: bool,
    pub schema: Option<String>,
    pub kind: Option<String>,
    pub command: Option<String>,
    /// The top-level `complete`, when it is a boolean.
    pub complete: Option<bool>,
    /// The provenance, when it reads as one.
    pub provenance: Option<Provenance>,
    /// The provenance's stamps, each when it is there: also from a
    /// provenance that does not read whole (written by hand, or by another
    /// version).
    pub stamps: Stamps,
    /// Which of [`KEYS`] it has.
    keys: [bool; KEYS.len()],
}

/// A provenance's stamps, each as it is written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stamps {
    pub hostname: Option<String>,
    pub kernel: Option<String>,
    pub start: Option<String>,
    pub version: Option<String>,
    pub complete: Option<bool>,
    /// The system check, when it reads as one.
    pub system_check: Option<crate::system_check::SystemCheck>,
}

impl Head {
    /// The head of a JSON text (its memory bounded like every document's:
    /// `model::bounded`).
    pub fn read(bytes: &[u8]) -> Result<Head, serde_json::Error> {
        crate::model::bounded::from_slice(bytes)
    }

    /// Is this one of numaprobe's documents (`"schema": "numaprobe/…"`)?
    pub fn is_numaprobe(&self) -> bool {
        self.schema
            .as_deref()
            .is_some_and(|s| s.starts_with("numaprobe/"))
    }

    /// Its kind: the declared one, or for a document without one, its
    /// keys. None when it is no numaprobe document of a kind this reads.
    pub fn kind(&self) -> Option<Kind> {
        if !self.object {
            return None;
        }
        if let Some(k) = self.kind.as_deref().and_then(Kind::parse) {
            return Some(k);
        }
        self.by_keys()
    }

    fn has(&self, key: &str) -> bool {
        KEYS.iter()
            .position(|k| *k == key)
            .is_some_and(|i| self.keys[i])
    }

    /// The kind of a document written without `kind`, from the keys only
    /// its kind has.
    fn by_keys(&self) -> Option<Kind> {
        let has = |k: &str| self.has(k);
        // run.json: the topology with the matrices beside it; its parts
        // never carry a topology of their own.
        if has("topology") && (has("latency") || has("bandwidth") || has("notes")) {
            return Some(Kind::Run);
        }
        let k = match self.command.as_deref() {
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
}

/// Is this JSON one of numaprobe's documents (`"schema": "numaprobe/…"`)?
/// For a reader that holds a JSON value already (a matrix given to `infer`).
pub fn is_numaprobe(v: &Value) -> bool {
    v.get("schema")
        .and_then(Value::as_str)
        .is_some_and(|s| s.starts_with("numaprobe/"))
}

/// The kind of a JSON value, as [`Head::kind`] tells it from a text.
pub fn identify(v: &Value) -> Option<Kind> {
    Head::deserialize(v).ok()?.kind()
}

impl<'de> Deserialize<'de> for Head {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Head, D::Error> {
        HeadOf.read(d)
    }
}

/// A document's head when it is an object; any other value has none.
struct HeadOf;

impl<'de> OneShape<'de> for HeadOf {
    type Value = Head;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON document")
    }

    fn other<E: de::Error>(self) -> Result<Head, E> {
        Ok(Head::default())
    }

    fn object<A: MapAccess<'de>>(self, mut map: A) -> Result<Head, A::Error> {
        let mut head = Head {
            object: true,
            ..Head::default()
        };
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "schema" => head.schema = map.next_value::<Loose>()?.text,
                "kind" => head.kind = map.next_value::<Loose>()?.text,
                "command" => head.command = map.next_value::<Loose>()?.text,
                "complete" => head.complete = map.next_value::<Loose>()?.flag,
                // A provenance that does not read is no provenance: the
                // document is still read.
                "provenance" => {
                    let p = map.next_value::<Value>()?;
                    let s = |k: &str| p.get(k).and_then(Value::as_str).map(String::from);
                    head.stamps = Stamps {
                        hostname: s("hostname"),
                        kernel: s("kernel"),
                        start: s("start"),
                        version: s("version"),
                        complete: p.get("complete").and_then(Value::as_bool),
                        system_check: p
                            .get("system_check")
                            .and_then(|c| crate::system_check::SystemCheck::deserialize(c).ok()),
                    };
                    head.provenance = Provenance::deserialize(p).ok();
                }
                k => {
                    if let Some(i) = KEYS.iter().position(|x| *x == k) {
                        head.keys[i] = true;
                    }
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(head)
    }
}

/// A top-level value kept when it is a string or a boolean, skipped
/// otherwise (a `kind` that is a number is no kind).
#[derive(Default)]
struct Loose {
    text: Option<String>,
    flag: Option<bool>,
}

impl<'de> Deserialize<'de> for Loose {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Loose, D::Error> {
        d.deserialize_any(LooseVisitor)
    }
}

struct LooseVisitor;

impl<'de> Visitor<'de> for LooseVisitor {
    type Value = Loose;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Loose, E> {
        Ok(Loose {
            text: Some(s.to_string()),
            flag: None,
        })
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Loose, E> {
        Ok(Loose {
            text: None,
            flag: Some(b),
        })
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Loose, E> {
        Ok(Loose::default())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Loose, E> {
        Ok(Loose::default())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Loose, E> {
        Ok(Loose::default())
    }
    fn visit_unit<E: de::Error>(self) -> Result<Loose, E> {
        Ok(Loose::default())
    }
    fn visit_none<E: de::Error>(self) -> Result<Loose, E> {
        Ok(Loose::default())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Loose, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Loose::default())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Loose, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Loose::default())
    }
}
