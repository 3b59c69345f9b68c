//! JSON read straight into a typed shape with a memory budget tied to the
//! input's size: [`from_slice`]. Every reader of outside JSON goes through
//! it, so a document that would grow to many times its size in memory
//! (a million empty strings, arrays of zeros, objects of defaulted fields)
//! is refused while it is read, before the part that exceeds the budget is
//! built, instead of ending in an allocation failure.
//!
//! The budget is charged as the data are read: every element of an array
//! costs twice its in-memory size (a growing vector doubles its capacity),
//! every entry of a map its key and value twice, every string its length.
//! The fields of a struct are part of the struct and cost nothing more;
//! names of fields and ignored values are never built and cost nothing.
//! What is charged is an upper bound of what is built, so a document read
//! within its budget holds at most [`budget`] bytes besides its text.
//!
//! Nesting is bounded too, skipped values included: serde_json refuses a
//! value nested past [`MAX_DEPTH`] arrays and objects, and a skipped value
//! is walked through the same deserializer so that its nesting counts
//! (serde_json's own skipping has no such limit). The refusal says the
//! limit, where it was passed, in one line.

use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, Visitor};
use std::cell::Cell;
use std::fmt;

/// The fixed part of every budget: small documents always read whole.
pub const BUDGET_BASE: u64 = 8 << 20;

/// Bytes of memory a document of `len` bytes may build: twice its size and
/// [`BUDGET_BASE`]. numaprobe's own documents (pretty JSON, numbers with
/// their decimals, names with every field) build less than their size.
pub fn budget(len: usize) -> u64 {
    (len as u64).saturating_mul(2).saturating_add(BUDGET_BASE)
}

/// How deep arrays and objects may nest in a document, the outermost one
/// counted: serde_json's recursion limit, which is what keeps reading a
/// deep document from overflowing the stack.
pub const MAX_DEPTH: usize = 127;

/// `bytes` as a `T`, with the memory it may build bounded by [`budget`] of
/// its length. The error is serde_json's (one line, with the line and
/// column where reading stopped).
pub fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, serde_json::Error> {
    from_slice_within(bytes, budget(bytes.len()))
}

/// [`from_slice`] with a budget of `limit` bytes.
pub fn from_slice_within<T: DeserializeOwned>(
    bytes: &[u8],
    limit: u64,
) -> Result<T, serde_json::Error> {
    read(bytes, limit, std::marker::PhantomData::<T>)
}

/// [`from_slice`] read by a seed: a reader that carries what it has read
/// so far (the dimensions a document declared, to bound what follows).
pub fn from_slice_seed<'a, S: DeserializeSeed<'a>>(
    bytes: &'a [u8],
    seed: S,
) -> Result<S::Value, serde_json::Error> {
    read(bytes, budget(bytes.len()), seed)
}

fn read<'a, S: DeserializeSeed<'a>>(
    bytes: &'a [u8],
    limit: u64,
    seed: S,
) -> Result<S::Value, serde_json::Error> {
    let budget = Budget {
        left: Cell::new(limit),
        limit,
    };
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = seed
        .deserialize(De {
            d: &mut de,
            b: &budget,
        })
        .map_err(too_deep_said)?;
    de.end()?;
    Ok(value)
}

/// serde_json's "recursion limit exceeded" with the limit said: which
/// nesting is refused and what is allowed, at the same place.
fn too_deep_said(e: serde_json::Error) -> serde_json::Error {
    if !e.to_string().starts_with("recursion limit exceeded") {
        return e;
    }
    de::Error::custom(format_args!(
        "an array or object nested more than {MAX_DEPTH} levels deep at line {} column {}: at most {MAX_DEPTH} levels of nesting are allowed",
        e.line(),
        e.column()
    ))
}

/// What may still be built.
struct Budget {
    left: Cell<u64>,
    limit: u64,
}

impl Budget {
    fn charge<E: de::Error>(&self, bytes: usize) -> Result<(), E> {
        let left = self.left.get();
        match left.checked_sub(bytes as u64) {
            Some(rest) => {
                self.left.set(rest);
                Ok(())
            }
            None => Err(E::custom(format_args!(
                "too many values for its size: reading it would take over {} of memory (twice the file's size and {})",
                crate::units::format_size(self.limit),
                crate::units::format_size(BUDGET_BASE)
            ))),
        }
    }
}

/// A deserializer whose visitors charge the budget.
struct De<'b, D> {
    d: D,
    b: &'b Budget,
}

/// A visitor that charges what it is handed before it builds it; `inline`
/// for the visitor of a struct or tuple, whose fields are part of it.
struct Vis<'b, V> {
    v: V,
    b: &'b Budget,
    inline: bool,
}

/// A seed whose deserializer charges the budget.
struct Seed<'b, S> {
    s: S,
    b: &'b Budget,
}

struct Seq<'b, A> {
    a: A,
    b: &'b Budget,
    inline: bool,
}

struct Map<'b, A> {
    a: A,
    b: &'b Budget,
    inline: bool,
}

struct Enum<'b, A> {
    a: A,
    b: &'b Budget,
}

impl<'b, V> Vis<'b, V> {
    fn new(v: V, b: &'b Budget) -> Self {
        Vis {
            v,
            b,
            inline: false,
        }
    }
    fn inline(v: V, b: &'b Budget) -> Self {
        Vis { v, b, inline: true }
    }
}

macro_rules! forward_deserialize {
    ($($m:ident),* $(,)?) => {
        $(fn $m<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            self.d.$m(Vis::new(v, self.b))
        })*
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for De<'_, D> {
    type Error = D::Error;

    forward_deserialize!(
        deserialize_any,
        deserialize_bool,
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64,
        deserialize_char,
        deserialize_str,
        deserialize_string,
        deserialize_bytes,
        deserialize_byte_buf,
        deserialize_option,
        deserialize_unit,
        deserialize_seq,
        deserialize_map,
    );

    // A field's name is matched, never kept.
    fn deserialize_identifier<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
        self.d.deserialize_identifier(v)
    }
    // An ignored value is walked, never built, through the deserializer's
    // own arrays and objects, so that its nesting counts against the limit.
    fn deserialize_ignored_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
        self.d.deserialize_any(Skip)?;
        v.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        v: V,
    ) -> Result<V::Value, Self::Error> {
        self.d.deserialize_unit_struct(name, Vis::new(v, self.b))
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        v: V,
    ) -> Result<V::Value, Self::Error> {
        self.d.deserialize_newtype_struct(name, Vis::new(v, self.b))
    }
    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, v: V) -> Result<V::Value, Self::Error> {
        self.d.deserialize_tuple(len, Vis::inline(v, self.b))
    }
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        v: V,
    ) -> Result<V::Value, Self::Error> {
        self.d
            .deserialize_tuple_struct(name, len, Vis::inline(v, self.b))
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Self::Error> {
        self.d
            .deserialize_struct(name, fields, Vis::inline(v, self.b))
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Self::Error> {
        self.d.deserialize_enum(name, variants, Vis::new(v, self.b))
    }
    fn is_human_readable(&self) -> bool {
        self.d.is_human_readable()
    }
}

macro_rules! forward_visit {
    ($($m:ident: $t:ty),* $(,)?) => {
        $(fn $m<E: de::Error>(self, x: $t) -> Result<Self::Value, E> {
            self.v.$m(x)
        })*
    };
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Vis<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.v.expecting(f)
    }

    forward_visit!(
        visit_bool: bool,
        visit_i8: i8,
        visit_i16: i16,
        visit_i32: i32,
        visit_i64: i64,
        visit_i128: i128,
        visit_u8: u8,
        visit_u16: u16,
        visit_u32: u32,
        visit_u64: u64,
        visit_u128: u128,
        visit_f32: f32,
        visit_f64: f64,
        visit_char: char,
    );

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        self.b.charge(s.len())?;
        self.v.visit_str(s)
    }
    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
        self.b.charge(s.len())?;
        self.v.visit_borrowed_str(s)
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<Self::Value, E> {
        self.b.charge(s.len())?;
        self.v.visit_string(s)
    }
    fn visit_bytes<E: de::Error>(self, s: &[u8]) -> Result<Self::Value, E> {
        self.b.charge(s.len())?;
        self.v.visit_bytes(s)
    }
    fn visit_borrowed_bytes<E: de::Error>(self, s: &'de [u8]) -> Result<Self::Value, E> {
        self.b.charge(s.len())?;
        self.v.visit_borrowed_bytes(s)
    }
    fn visit_byte_buf<E: de::Error>(self, s: Vec<u8>) -> Result<Self::Value, E> {
        self.b.charge(s.len())?;
        self.v.visit_byte_buf(s)
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.v.visit_none()
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.v.visit_unit()
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.v.visit_some(De { d, b: self.b })
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.v.visit_newtype_struct(De { d, b: self.b })
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
        self.v.visit_seq(Seq {
            a,
            b: self.b,
            inline: self.inline,
        })
    }
    fn visit_map<A: de::MapAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
        self.v.visit_map(Map {
            a,
            b: self.b,
            inline: self.inline,
        })
    }
    fn visit_enum<A: de::EnumAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
        self.v.visit_enum(Enum { a, b: self.b })
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Seed<'_, S> {
    type Value = S::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.s.deserialize(De { d, b: self.b })
    }
}

/// A value read and dropped as it is met: strings and numbers are parsed
/// (the text must be JSON), nothing is kept.
struct Skip;

impl<'de> DeserializeSeed<'de> for Skip {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(Skip)
    }
}

impl<'de> Visitor<'de> for Skip {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        while a.next_element_seed(Skip)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: de::MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        while a.next_entry_seed(Skip, Skip)?.is_some() {}
        Ok(())
    }
}

/// Twice the in-memory size of one `T`: what a growing collection of them
/// may hold per element.
fn twice<T>() -> usize {
    2 * std::mem::size_of::<T>()
}

impl<'de, A: de::SeqAccess<'de>> de::SeqAccess<'de> for Seq<'_, A> {
    type Error = A::Error;
    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        s: S,
    ) -> Result<Option<S::Value>, Self::Error> {
        if !self.inline {
            self.b.charge(twice::<S::Value>())?;
        }
        self.a.next_element_seed(Seed { s, b: self.b })
    }
    fn size_hint(&self) -> Option<usize> {
        self.a.size_hint()
    }
}

impl<'de, A: de::MapAccess<'de>> de::MapAccess<'de> for Map<'_, A> {
    type Error = A::Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        k: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        if self.inline {
            // A struct's key is a field's name: matched, not kept.
            return self.a.next_key_seed(k);
        }
        self.b.charge(twice::<K::Value>())?;
        self.a.next_key_seed(Seed { s: k, b: self.b })
    }
    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, s: S) -> Result<S::Value, Self::Error> {
        if !self.inline {
            self.b.charge(twice::<S::Value>())?;
        }
        self.a.next_value_seed(Seed { s, b: self.b })
    }
    fn size_hint(&self) -> Option<usize> {
        self.a.size_hint()
    }
}

impl<'de, 'b, A: de::EnumAccess<'de>> de::EnumAccess<'de> for Enum<'b, A> {
    type Error = A::Error;
    type Variant = Enum<'b, A::Variant>;
    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        s: S,
    ) -> Result<(S::Value, Self::Variant), Self::Error> {
        // The variant's name is matched, not kept.
        let (value, a) = self.a.variant_seed(s)?;
        Ok((value, Enum { a, b: self.b }))
    }
}

impl<'de, A: de::VariantAccess<'de>> de::VariantAccess<'de> for Enum<'_, A> {
    type Error = A::Error;
    fn unit_variant(self) -> Result<(), Self::Error> {
        self.a.unit_variant()
    }
    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, s: S) -> Result<S::Value, Self::Error> {
        self.a.newtype_variant_seed(Seed { s, b: self.b })
    }
    fn tuple_variant<V: Visitor<'de>>(self, len: usize, v: V) -> Result<V::Value, Self::Error> {
        self.a.tuple_variant(len, Vis::inline(v, self.b))
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Self::Error> {
        self.a.struct_variant(fields, Vis::inline(v, self.b))
    }
}

#[cfg(test)]
mod tests;
