//! What a document's top level says of itself, read before it is written:
//! whether it names its own `kind` and whether it calls itself `complete`.
//! The stamps that follow `schema` ([`super::stamped`]) depend on both, and
//! a document streamed to its file cannot be searched for them afterwards.
//! Only the top-level field names are visited: no value but `complete`'s is
//! serialized, so the look costs nothing however large the document.

use serde::ser::{self, Impossible, Serialize, Serializer};

/// The two things the stamps need to know.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TopFields {
    /// A top-level `kind` member is written.
    pub has_kind: bool,
    /// The top-level `complete` member, when there is one and it is a bool.
    pub complete: Option<bool>,
}

/// The top-level fields of `value`, or None when it does not serialize as
/// a struct (a map, a list, a number): such a value is written the long
/// way, searched after it is laid out.
pub fn of<T: Serialize + ?Sized>(value: &T) -> Option<TopFields> {
    value.serialize(Top).ok()
}

type Error = serde_json::Error;

fn not_a_struct<T>() -> Result<T, Error> {
    Err(ser::Error::custom("not a struct"))
}

/// The serializer of the top level: a struct is looked into, anything else
/// is an answer of "not a struct".
struct Top;

/// A struct's fields as they are named.
struct Fields(TopFields);

impl ser::SerializeStruct for Fields {
    type Ok = TopFields;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        match key {
            "kind" => self.0.has_kind = true,
            "complete" => self.0.complete = value.serialize(Bool).ok(),
            _ => {}
        }
        Ok(())
    }
    fn end(self) -> Result<TopFields, Error> {
        Ok(self.0)
    }
}

/// The value of `complete`: a bool, or not one.
struct Bool;

macro_rules! refuse {
    ($ok:ty; $($name:ident($($arg:ty),*)),* $(,)?) => {
        $(fn $name(self, $(_: $arg),*) -> Result<$ok, Error> {
            not_a_struct()
        })*
    };
}

macro_rules! refuse_compounds {
    ($ok:ty) => {
        type SerializeSeq = Impossible<$ok, Error>;
        type SerializeTuple = Impossible<$ok, Error>;
        type SerializeTupleStruct = Impossible<$ok, Error>;
        type SerializeTupleVariant = Impossible<$ok, Error>;
        type SerializeMap = Impossible<$ok, Error>;
        type SerializeStructVariant = Impossible<$ok, Error>;
        refuse! { $ok;
            serialize_i8(i8), serialize_i16(i16), serialize_i32(i32), serialize_i64(i64),
            serialize_u8(u8), serialize_u16(u16), serialize_u32(u32), serialize_u64(u64),
            serialize_f32(f32), serialize_f64(f64), serialize_char(char),
            serialize_str(&str), serialize_bytes(&[u8]), serialize_none(), serialize_unit(),
            serialize_unit_struct(&'static str),
            serialize_unit_variant(&'static str, u32, &'static str),
        }
        fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<$ok, Error> {
            not_a_struct()
        }
        fn serialize_newtype_variant<T: Serialize + ?Sized>(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: &T,
        ) -> Result<$ok, Error> {
            not_a_struct()
        }
        fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
            not_a_struct()
        }
        fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
            not_a_struct()
        }
        fn serialize_tuple_struct(
            self,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleStruct, Error> {
            not_a_struct()
        }
        fn serialize_tuple_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleVariant, Error> {
            not_a_struct()
        }
        fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
            not_a_struct()
        }
        fn serialize_struct_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeStructVariant, Error> {
            not_a_struct()
        }
    };
}

impl Serializer for Top {
    type Ok = TopFields;
    type Error = Error;
    type SerializeStruct = Fields;
    refuse_compounds!(TopFields);
    refuse! { TopFields; serialize_bool(bool) }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<TopFields, Error> {
        value.serialize(Top)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Fields, Error> {
        Ok(Fields(TopFields::default()))
    }
}

impl Serializer for Bool {
    type Ok = bool;
    type Error = Error;
    type SerializeStruct = Impossible<bool, Error>;
    refuse_compounds!(bool);
    fn serialize_bool(self, v: bool) -> Result<bool, Error> {
        Ok(v)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<bool, Error> {
        // JSON writes a newtype as what it wraps.
        value.serialize(Bool)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Error> {
        not_a_struct()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[derive(serde::Serialize)]
    struct Doc {
        schema: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        kind: Option<&'static str>,
        complete: bool,
        rows: Vec<Vec<f64>>,
    }

    #[derive(serde::Serialize)]
    struct Wrapped(Doc);

    #[derive(serde::Serialize)]
    struct OddComplete {
        complete: &'static str,
    }

    #[derive(serde::Serialize)]
    struct Flag(bool);

    #[derive(serde::Serialize)]
    struct Wrapping {
        complete: Flag,
    }

    #[test]
    fn a_structs_kind_and_complete_are_read_and_nothing_else_is_needed() {
        let doc = |kind, complete| Doc {
            schema: "numaprobe/1",
            kind,
            complete,
            rows: vec![vec![1.0]],
        };
        assert_eq!(
            of(&doc(None, false)),
            Some(TopFields {
                has_kind: false,
                complete: Some(false)
            })
        );
        assert_eq!(
            of(&doc(Some("matrix"), true)),
            Some(TopFields {
                has_kind: true,
                complete: Some(true)
            })
        );
        assert_eq!(
            of(&Wrapped(doc(Some("x"), false))),
            Some(TopFields {
                has_kind: true,
                complete: Some(false)
            })
        );
    }

    #[test]
    fn a_complete_that_is_not_a_bool_is_no_answer_and_a_non_struct_is_refused() {
        assert_eq!(
            of(&OddComplete { complete: "yes" }),
            Some(TopFields::default())
        );
        // A wrapped bool is written as the bool, and read as one.
        for b in [false, true] {
            assert_eq!(
                of(&Wrapping { complete: Flag(b) }).unwrap().complete,
                Some(b)
            );
        }
        assert_eq!(of(&vec![1, 2]), None);
        assert_eq!(of(&BTreeMap::from([("complete", false)])), None);
        assert_eq!(of(&true), None);
        assert_eq!(of(&"text"), None);
    }
}
