//! The cells marked `flagged` in a result's `cells`, with their flags,
//! read one cell at a time.

use crate::model::lax::{Items, Lax, Node, OneShape};
use serde::de::{self, SeqAccess};
use serde::Deserialize;

/// The cells marked `flagged` of a result's `cells`, with their flags,
/// each cell dropped once read; anything but an array holds none.
pub(super) struct FlaggedSeed;

#[derive(Default, Deserialize)]
#[serde(default)]
struct FlagCell {
    cpu_node: Lax<u64>,
    mem_node: Lax<u64>,
    flagged: Lax<bool>,
    flags: Items<Lax<String>>,
}

impl<'de> OneShape<'de> for FlaggedSeed {
    type Value = Vec<([u32; 2], Vec<String>)>;
    fn other<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn array<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
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
}
