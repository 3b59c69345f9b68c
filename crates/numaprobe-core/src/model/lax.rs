//! Loose typed reading of a document written by another version or by
//! hand: the shapes a reader takes of it ([`Lax`], [`Node`], [`Items`],
//! [`Count`]) read straight from the text (with `model::bounded`), a field
//! of another type than expected becoming "not there" instead of an error,
//! and a value of no interest skipped without being built. A reader that
//! needs only a few fields of a large document so never holds a tree of it.

use serde::de::{
    self, Deserialize, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde_json::Value;
use std::fmt;
use std::marker::PhantomData;

/// A reader of one shape of JSON value (an object, or an array) with an
/// answer of its own for every other value: the shapes here and the
/// matrix readers in `analysis` are each one of these, read through the one
/// visitor [`AnyValue`] instead of each answering every JSON value.
pub(crate) trait OneShape<'de>: Sized {
    type Value;

    /// The answer for a value of another shape: a scalar, or an object or
    /// an array this reader does not take, skipped unbuilt unless the
    /// answer is a refusal (which comes before anything of it is read).
    fn other<E: de::Error>(self) -> Result<Self::Value, E>;

    /// The answer for null.
    fn null<E: de::Error>(self) -> Result<Self::Value, E> {
        self.other()
    }

    fn object<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let answer = self.other()?;
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(answer)
    }

    fn array<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let answer = self.other()?;
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(answer)
    }

    /// What a serde error says was expected.
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    /// The value `d` holds, whatever its shape.
    fn read<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(AnyValue(self))
    }
}

/// A [`OneShape`] reader as serde's seed and visitor of any JSON value.
pub(crate) struct AnyValue<S>(pub S);

impl<'de, S: OneShape<'de>> DeserializeSeed<'de> for AnyValue<S> {
    type Value = S::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, S: OneShape<'de>> Visitor<'de> for AnyValue<S> {
    type Value = S::Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.0.expecting(f)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<S::Value, A::Error> {
        self.0.object(map)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<S::Value, A::Error> {
        self.0.array(seq)
    }
    fn visit_unit<E: de::Error>(self) -> Result<S::Value, E> {
        self.0.null()
    }
    fn visit_none<E: de::Error>(self) -> Result<S::Value, E> {
        self.0.null()
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<S::Value, E> {
        self.0.other()
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<S::Value, E> {
        self.0.other()
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<S::Value, E> {
        self.0.other()
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<S::Value, E> {
        self.0.other()
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<S::Value, E> {
        self.0.other()
    }
}

/// A leaf field (a number, a string, a short list): the value when it
/// reads as a `T`, [`Lax::Not`] when it is there as something else (null
/// included), [`Lax::Absent`] when it is not there (the field's default).
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Lax<T> {
    #[default]
    Absent,
    Is(T),
    Not,
}

impl<T> Lax<T> {
    /// The value, when it read as one.
    pub fn get(&self) -> Option<&T> {
        match self {
            Lax::Is(t) => Some(t),
            _ => None,
        }
    }

    /// True when the field is there but not a `T`.
    pub fn is_wrong(&self) -> bool {
        matches!(self, Lax::Not)
    }
}

impl<T: Clone> Lax<T> {
    pub fn cloned(&self) -> Option<T> {
        self.get().cloned()
    }
}

impl<T: Copy> Lax<T> {
    pub fn copied(&self) -> Option<T> {
        self.get().copied()
    }
}

impl<'de, T: de::DeserializeOwned> Deserialize<'de> for Lax<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // A leaf is small, so it is read as a JSON value first and then as
        // a `T`: a `T` it is not leaves the document readable. Its memory
        // is bounded by the reader's budget like any other.
        let v = Value::deserialize(d)?;
        Ok(match T::deserialize(v) {
            Ok(t) => Lax::Is(t),
            Err(_) => Lax::Not,
        })
    }
}

/// An object field read into `T` (whose fields are themselves loose): null
/// or absent is [`Node::Null`], any other value [`Node::Other`] (skipped
/// unbuilt).
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Node<T> {
    #[default]
    Null,
    Other,
    Obj(T),
}

impl<T> Node<T> {
    pub fn is_null(&self) -> bool {
        matches!(self, Node::Null)
    }

    pub fn get(&self) -> Option<&T> {
        match self {
            Node::Obj(t) => Some(t),
            _ => None,
        }
    }
}

impl<T: Default> Node<T> {
    /// The object's fields, or every field absent when it is not one (as a
    /// lookup in a JSON value that is no object finds nothing).
    pub fn or_empty(&self) -> std::borrow::Cow<'_, T>
    where
        T: Clone,
    {
        match self {
            Node::Obj(t) => std::borrow::Cow::Borrowed(t),
            _ => std::borrow::Cow::Owned(T::default()),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Node<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct NodeOf<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> OneShape<'de> for NodeOf<T> {
            type Value = Node<T>;
            fn other<E: de::Error>(self) -> Result<Node<T>, E> {
                Ok(Node::Other)
            }
            fn null<E: de::Error>(self) -> Result<Node<T>, E> {
                Ok(Node::Null)
            }
            fn object<A: MapAccess<'de>>(self, map: A) -> Result<Node<T>, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(Node::Obj)
            }
        }
        NodeOf(PhantomData).read(d)
    }
}

/// An array field's elements read as `T` each; any other value reads as no
/// elements (skipped unbuilt).
#[derive(Debug, Clone, PartialEq)]
pub struct Items<T>(pub Vec<T>);

impl<T> Default for Items<T> {
    fn default() -> Self {
        Items(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Items<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ItemsOf<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> OneShape<'de> for ItemsOf<T> {
            type Value = Items<T>;
            fn other<E: de::Error>(self) -> Result<Items<T>, E> {
                Ok(Items::default())
            }
            fn array<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Items<T>, A::Error> {
                let mut out = Vec::new();
                while let Some(t) = seq.next_element()? {
                    out.push(t);
                }
                Ok(Items(out))
            }
        }
        ItemsOf(PhantomData).read(d)
    }
}

/// An array field's length, its elements skipped unbuilt: [`Lax::Is`] for
/// an array, [`Lax::Not`] for any other value.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Count(pub Lax<usize>);

impl Count {
    /// The length, 0 when it is no array.
    pub fn len(&self) -> usize {
        self.0.copied().unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T: Copy> Copy for Lax<T> {}

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Any value is read through: only an array has a length.
        struct Length;
        impl<'de> OneShape<'de> for Length {
            type Value = Lax<usize>;
            fn other<E: de::Error>(self) -> Result<Lax<usize>, E> {
                Ok(Lax::Not)
            }
            fn array<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Lax<usize>, A::Error> {
                let mut n = 0;
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    n += 1;
                }
                Ok(Lax::Is(n))
            }
        }
        Length.read(d).map(Count)
    }
}

/// Whether a key is there, and null or not, its value skipped unbuilt.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub enum Has {
    #[default]
    Absent,
    Null,
    Value,
}

impl Has {
    /// The key is there (null or not).
    pub fn here(self) -> bool {
        self != Has::Absent
    }

    /// The key is there with a value other than null.
    pub fn value(self) -> bool {
        self == Has::Value
    }
}

impl<'de> Deserialize<'de> for Has {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let node = Node::<IgnoredAny>::deserialize(d)?;
        Ok(if node.is_null() {
            Has::Null
        } else {
            Has::Value
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Default, Deserialize)]
    struct Doc {
        #[serde(default)]
        n: Lax<u64>,
        #[serde(default)]
        o: Node<Inner>,
        #[serde(default)]
        items: Items<Lax<u64>>,
        #[serde(default)]
        count: Count,
    }

    #[derive(Debug, Default, Clone, Deserialize)]
    struct Inner {
        #[serde(default)]
        s: Lax<String>,
    }

    /// Every field of the wrong type reads as "not that", never an error,
    /// and the document around it still reads.
    #[test]
    fn a_field_of_another_type_is_not_there_and_the_rest_reads() {
        let d: Doc = crate::model::bounded::from_slice(
            br#"{"n": -1, "o": [1, 2], "items": {"a": 1}, "count": "x", "big": [[1], {"a": 2}]}"#,
        )
        .unwrap();
        assert!(d.n.is_wrong());
        assert!(matches!(d.o, Node::Other));
        assert!(d.items.0.is_empty());
        assert!(d.count.0.is_wrong() && d.count.is_empty());
        let d: Doc = crate::model::bounded::from_slice(
            br#"{"n": 7, "o": {"s": "x", "t": 1}, "items": [1, "a", null], "count": [[], {}, 3]}"#,
        )
        .unwrap();
        assert_eq!(d.n.copied(), Some(7));
        assert_eq!(d.o.get().and_then(|i| i.s.cloned()).as_deref(), Some("x"));
        assert_eq!(
            d.items.0.iter().map(Lax::copied).collect::<Vec<_>>(),
            [Some(7 - 6), None, None]
        );
        assert_eq!(d.count.len(), 3);
        let d: Doc = crate::model::bounded::from_slice(br#"{"o": null}"#).unwrap();
        assert!(d.o.is_null() && matches!(d.n, Lax::Absent));
        assert!(d.o.or_empty().s.get().is_none());
    }
}
