//! Trust flags written once per list of points: a busy machine flags most
//! points of a curve for the same reason in the same words, and a reason a
//! line long repeated on every point was most of a sweep's or a loaded
//! curve's document. A list of points (`points` of `latency --sweep`, of a
//! loaded-latency curve) is written with each distinct flag text once in a
//! `flag_texts` beside it and every point's flags as `flag_ids`, indices
//! into it; read back, every point holds its flags' texts again, so
//! nothing past the document's text sees the difference. A document
//! written with the texts on the points (`flags`) reads as it was.

use serde::de::{DeserializeOwned, Error as _};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::HashMap;

/// A point that carries trust flags in words.
pub trait Flagged: Clone + Serialize + DeserializeOwned {
    fn flags_mut(&mut self) -> &mut Vec<String>;
}

/// A point as written: its flags (left empty, so not written) as indices.
#[derive(Serialize)]
struct Out<T> {
    #[serde(flatten)]
    point: T,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    flag_ids: Vec<usize>,
}

/// A point as read: `flags` in words (a document that wrote them so), or
/// `flag_ids`.
#[derive(Deserialize)]
struct In<T> {
    #[serde(flatten)]
    point: T,
    #[serde(default)]
    flag_ids: Vec<usize>,
}

#[derive(Deserialize)]
struct Wire<T> {
    points: Vec<In<T>>,
    #[serde(default)]
    flag_texts: Vec<String>,
}

/// For a `points` field flattened into its list's object
/// (`#[serde(flatten, with = "reasons")]`): `points` and `flag_texts`.
pub fn serialize<T: Flagged, S: Serializer>(points: &[T], s: S) -> Result<S::Ok, S::Error> {
    let mut texts: Vec<String> = Vec::new();
    let mut ids: HashMap<String, usize> = HashMap::new();
    let out: Vec<Out<T>> = points
        .iter()
        .map(|p| {
            let mut point = p.clone();
            let flag_ids = std::mem::take(point.flags_mut())
                .into_iter()
                .map(|f| {
                    *ids.entry(f).or_insert_with_key(|f| {
                        texts.push(f.clone());
                        texts.len() - 1
                    })
                })
                .collect();
            Out { point, flag_ids }
        })
        .collect();
    let mut m = s.serialize_map(Some(2))?;
    m.serialize_entry("points", &out)?;
    m.serialize_entry("flag_texts", &texts)?;
    m.end()
}

/// The points of [`serialize`]'s form, or of the form with the texts on
/// the points; a `flag_ids` entry past `flag_texts` is an error naming it.
pub fn deserialize<'de, T: Flagged, D: Deserializer<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    let wire = Wire::<T>::deserialize(d)?;
    wire.points
        .into_iter()
        .map(
            |In {
                 mut point,
                 flag_ids,
             }| {
                for i in flag_ids {
                    let text = wire.flag_texts.get(i).ok_or_else(|| {
                        D::Error::custom(format!(
                            "flag_ids: {i} is past the {} flag_texts",
                            wire.flag_texts.len()
                        ))
                    })?;
                    point.flags_mut().push(text.clone());
                }
                Ok(point)
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct P {
        ns: f64,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        flags: Vec<String>,
    }

    impl Flagged for P {
        fn flags_mut(&mut self) -> &mut Vec<String> {
            &mut self.flags
        }
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Curve {
        mix: String,
        #[serde(flatten, with = "super")]
        points: Vec<P>,
        knee: Option<usize>,
    }

    fn p(ns: f64, flags: &[&str]) -> P {
        P {
            ns,
            flags: flags.iter().map(|f| f.to_string()).collect(),
        }
    }

    fn curve() -> Curve {
        Curve {
            mix: "read".into(),
            points: vec![
                p(1.0, &["preempted: long", "busy: long"]),
                p(2.0, &[]),
                p(3.0, &["busy: long"]),
            ],
            knee: Some(1),
        }
    }

    #[test]
    fn each_text_is_written_once_and_read_back_on_every_point() {
        let v = serde_json::to_value(curve()).unwrap();
        assert_eq!(v["flag_texts"], json!(["preempted: long", "busy: long"]));
        assert_eq!(v["points"][0]["flag_ids"], json!([0, 1]));
        assert!(v["points"][1].get("flag_ids").is_none(), "{v}");
        assert!(v["points"][0].get("flags").is_none(), "{v}");
        assert_eq!(v["points"][2]["flag_ids"], json!([1]));
        assert_eq!(v["knee"], json!(1));
        let back: Curve = serde_json::from_value(v).unwrap();
        assert_eq!(back, curve());
    }

    #[test]
    fn a_document_with_the_texts_on_its_points_reads_as_it_was() {
        let old = json!({"mix": "read", "knee": 1, "points": [
            {"ns": 1.0, "flags": ["preempted: long", "busy: long"]},
            {"ns": 2.0},
            {"ns": 3.0, "flags": ["busy: long"]}
        ]});
        let back: Curve = serde_json::from_value(old).unwrap();
        assert_eq!(back, curve());
    }

    #[test]
    fn an_id_past_the_texts_is_refused_with_its_number() {
        let bad = json!({"mix": "read", "knee": null, "flag_texts": ["a"],
            "points": [{"ns": 1.0, "flag_ids": [0, 3]}]});
        let e = serde_json::from_value::<Curve>(bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains("3 is past the 1 flag_texts"), "{e}");
    }

    #[test]
    fn no_flags_write_an_empty_list() {
        let c = Curve {
            mix: "read".into(),
            points: vec![p(1.0, &[])],
            knee: None,
        };
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["flag_texts"], json!([]));
        assert_eq!(serde_json::from_value::<Curve>(v).unwrap(), c);
    }
}
