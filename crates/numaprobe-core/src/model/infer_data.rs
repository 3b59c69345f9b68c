//! The parts of an inference that grow with the machine's pairs, kept
//! compact in memory while they serialize to the JSON contract of
//! doc/json.md unchanged: a level's name shared by every cell and link of
//! that level, and the link lists behind the findings. At 1500 nodes an
//! inference holds 2.25 million cells and a million links; a name of its
//! own per cell (a heap string each) or a JSON tree per listed link (some
//! 100 bytes where two node numbers take 8) were the largest parts of it.
//! It also holds the records those parts are read as (a cell, a link), so
//! the modules that hold them in compact form need not import each other.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// A level's name (`L`, `A`, `B`, ...), one allocation shared by every cell
/// and link of the level. Serializes as the plain string. An `Arc<String>`,
/// not an `Arc<str>`: one pointer, where the slice's pointer and length
/// took two in every one of a million links.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct LevelName(Arc<String>);

impl Deref for LevelName {
    type Target = str;
    fn deref(&self) -> &str {
        self.0.as_str()
    }
}

impl fmt::Display for LevelName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for LevelName {
    fn from(s: &str) -> Self {
        LevelName(Arc::new(s.to_string()))
    }
}

impl From<String> for LevelName {
    fn from(s: String) -> Self {
        LevelName(Arc::new(s))
    }
}

impl PartialEq<str> for LevelName {
    fn eq(&self, other: &str) -> bool {
        self.0.as_str() == other
    }
}

impl PartialEq<&str> for LevelName {
    fn eq(&self, other: &&str) -> bool {
        self.0.as_str() == *other
    }
}

impl PartialEq<String> for LevelName {
    fn eq(&self, other: &String) -> bool {
        *self.0 == *other
    }
}

impl Serialize for LevelName {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for LevelName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(LevelName::from)
    }
}

/// The numbers behind a finding. Most are a small JSON object; the lists of
/// links that grow with the machine's pairs are typed. Each form writes the
/// same JSON a `json!` of its fields would (keys in alphabetical order, as
/// serde_json's maps keep them); a document read back holds the plain form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FindingData {
    /// `{"level", "links", "local"?, "value"?}`: the links of one level.
    Links(LevelLinks),
    /// `[{"level", "links"}, ...]`: the links of every level.
    LinksByLevel(Vec<LevelLinks>),
    /// `[{"links", "pair"}, ...]`: pairs and the links on their paths.
    PairPaths(Vec<PairPath>),
    Json(serde_json::Value),
}

impl FindingData {
    /// The data as a JSON value (a copy of a typed list).
    pub fn to_value(&self) -> serde_json::Value {
        match self {
            FindingData::Json(v) => v.clone(),
            // Plain data of numbers and strings: it serializes.
            typed => serde_json::to_value(typed).unwrap_or_default(),
        }
    }
}

impl From<serde_json::Value> for FindingData {
    fn from(v: serde_json::Value) -> Self {
        FindingData::Json(v)
    }
}

/// The direct links of one level, with the level's value and the local
/// level's when the finding quotes them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LevelLinks {
    pub level: String,
    pub links: Vec<[u32; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
}

/// A node pair and the links on its shortest paths.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairPath {
    pub links: Vec<(u32, u32)>,
    pub pair: [u32; 2],
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn typed_data_writes_what_its_json_would() {
        let links = LevelLinks {
            level: "B".into(),
            links: vec![[0, 1], [2, 3]],
            local: Some(90.0),
            value: Some(210.5),
        };
        let plain = json!({"level": "B", "links": [[0, 1], [2, 3]], "value": 210.5, "local": 90.0});
        let typed = FindingData::Links(links.clone());
        assert_eq!(serde_json::to_string(&typed).unwrap(), plain.to_string());
        assert_eq!(typed.to_value(), plain);
        let bare = LevelLinks {
            local: None,
            value: None,
            ..links
        };
        let by_level = FindingData::LinksByLevel(vec![bare.clone()]);
        assert_eq!(
            serde_json::to_string(&by_level).unwrap(),
            json!([{"level": "B", "links": [[0, 1], [2, 3]]}]).to_string()
        );
        let paths = FindingData::PairPaths(vec![PairPath {
            pair: [0, 5],
            links: vec![(0, 2), (2, 5)],
        }]);
        assert_eq!(
            serde_json::to_string(&paths).unwrap(),
            json!([{"pair": [0, 5], "links": [[0, 2], [2, 5]]}]).to_string()
        );
    }

    #[test]
    fn other_data_reads_back_whole() {
        // An object with more than a level's links keeps every field.
        let v = json!({"level": "A", "links": [[0, 1]], "pairs_per_link": 3});
        let back: FindingData = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(back, FindingData::Json(v.clone()));
        assert_eq!(back.to_value(), v);
    }

    #[test]
    fn a_level_name_is_shared_and_reads_as_its_text() {
        let a = LevelName::from("A");
        let b = a.clone();
        assert!(Arc::ptr_eq(&a.0, &b.0));
        assert_eq!(serde_json::to_string(&b).unwrap(), "\"A\"");
        let back: LevelName = serde_json::from_str("\"A\"").unwrap();
        assert_eq!(back, a);
        let owned = String::from("A");
        assert!(a == "A" && &*a == "A" && a == owned);
    }
}

/// One directed cell of the input with what the analysis made of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellInfo {
    pub cpu_node: u32,
    pub mem_node: u32,
    /// The measured (or firmware) value, in the input's unit.
    pub value: f64,
    /// The level it belongs to; None for a stray cell.
    pub level: Option<LevelName>,
    pub hops: Option<u32>,
    pub distance: Option<u32>,
    /// Set aside as a disturbed measurement.
    pub stray: bool,
    /// Marked as untrustworthy by the measurement itself.
    pub flagged: bool,
}

/// A direct link of the inferred interconnect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Link {
    pub nodes: [u32; 2],
    /// Name of the level the link's pair belongs to.
    pub level: LevelName,
    /// The pair's value (its better direction), in the input's unit.
    pub value: f64,
}
