//! The cells marked `flagged` in a result's `cells`, with their flags,
//! read one cell at a time.

use crate::model::lax::{Items, Lax, Node};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;

/// The cells marked `flagged` of a result's `cells`, with their flags,
/// each cell dropped once read; anything but an array holds none.
pub(super) struct FlaggedSeed;

impl<'de> DeserializeSeed<'de> for FlaggedSeed {
    type Value = Vec<([u32; 2], Vec<String>)>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

#[derive(Default, Deserialize)]
struct FlagCell {
    #[serde(default)]
    cpu_node: Lax<u64>,
    #[serde(default)]
    mem_node: Lax<u64>,
    #[serde(default)]
    flagged: Lax<bool>,
    #[serde(default)]
    flags: Items<Lax<String>>,
}

impl<'de> Visitor<'de> for FlaggedSeed {
    type Value = Vec<([u32; 2], Vec<String>)>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(c) = seq.next_element::<Node<FlagCell>>()? {
            let Some(c) = c.get() else { continue };
            let node = |n: &Lax<u64>| n.copied().and_then(|n| u32::try_from(n).ok());
            if c.flagged.copied() == Some(true) {
                if let (Some(a), Some(b)) = (node(&c.cpu_node), node(&c.mem_node)) {
                    let why = c.flags.0.iter().filter_map(Lax::cloned).collect();
                    out.push(([a, b], why));
                }
            }
        }
        Ok(out)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Vec::new())
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    crate::model::lax::scalars_answer!(Vec::new());
}
