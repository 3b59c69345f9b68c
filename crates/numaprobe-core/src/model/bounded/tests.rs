//! The budget: what is charged, what is not, and that a collection past it
//! is refused while it is read, before the rest of it is built.

use super::*;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// An element of one byte that counts how many of it were built.
struct Counted(#[allow(dead_code)] u8);

static BUILT: AtomicUsize = AtomicUsize::new(0);

impl<'de> Deserialize<'de> for Counted {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Counted, D::Error> {
        let b = u8::deserialize(d)?;
        BUILT.fetch_add(1, Ordering::SeqCst);
        Ok(Counted(b))
    }
}

fn zeros(n: usize) -> String {
    format!("[{}0]", "0,".repeat(n - 1))
}

#[test]
fn a_long_array_is_refused_at_the_element_that_passes_the_budget() {
    // Counted is one byte: each element costs 2.
    BUILT.store(0, Ordering::SeqCst);
    let text = zeros(1_000_000);
    let e = from_slice_within::<Vec<Counted>>(text.as_bytes(), 200)
        .err()
        .expect("refused");
    let built = BUILT.load(Ordering::SeqCst);
    assert!(
        built <= 100,
        "{built} elements built past a 200-byte budget"
    );
    let msg = e.to_string();
    assert!(msg.contains("too many values for its size"), "{msg}");
    assert!(!msg.contains('\n'), "{msg}");
    // Where it stopped: column 2 per element, far from the end.
    assert!(e.column() < 300, "{msg}");
    // The same array within its budget reads whole.
    let v: Vec<u8> = from_slice_within(text.as_bytes(), 2_000_002).unwrap();
    assert_eq!(v.len(), 1_000_000);
}

#[test]
fn each_element_costs_twice_its_size_and_a_string_its_length() {
    // Three u64 elements: 3 x 16 bytes, and the seq's end asks once more.
    assert!(from_slice_within::<Vec<u64>>(b"[1,2,3]", 64).is_ok());
    assert!(from_slice_within::<Vec<u64>>(b"[1,2,3]", 47).is_err());
    let s = format!("\"{}\"", "x".repeat(1000));
    assert!(from_slice_within::<String>(s.as_bytes(), 1000).is_ok());
    assert!(from_slice_within::<String>(s.as_bytes(), 999).is_err());
    // A map's entry costs its key and value twice, and the key's text.
    let size = 2 * (std::mem::size_of::<String>() + std::mem::size_of::<u32>());
    let one = br#"{"a": 1}"#;
    assert!(from_slice_within::<BTreeMap<String, u32>>(one, (size + 1 + 2 * 24) as u64).is_ok());
    assert!(from_slice_within::<BTreeMap<String, u32>>(one, size as u64).is_err());
}

#[derive(Deserialize, Debug, PartialEq)]
struct Point {
    x: u64,
    y: u64,
    tag: Option<Tag>,
}

#[derive(Deserialize, Debug, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Tag {
    Near,
}

#[test]
fn a_structs_fields_and_names_and_ignored_values_cost_nothing() {
    // The fields live in the struct; the names are matched, not kept; the
    // unknown key's value is skipped unbuilt, however long.
    let text = format!(
        r#"{{"x": 1, "y": 2, "tag": "near", "ignored": {}}}"#,
        zeros(100_000)
    );
    let p: Point = from_slice_within(text.as_bytes(), 0).unwrap();
    assert_eq!(
        p,
        Point {
            x: 1,
            y: 2,
            tag: Some(Tag::Near)
        }
    );
    // A struct written as an array is the same struct.
    let p: Point = from_slice_within(br#"[3, 4, null]"#, 0).unwrap();
    assert_eq!(p.x, 3);
}

#[test]
fn a_json_value_tree_is_charged_like_any_collection() {
    let text = zeros(100_000);
    let e = from_slice_within::<serde_json::Value>(text.as_bytes(), 1 << 20).unwrap_err();
    assert!(
        e.to_string().contains("too many values for its size"),
        "{e}"
    );
    let v: serde_json::Value = from_slice(text.as_bytes()).unwrap();
    assert_eq!(v.as_array().map(Vec::len), Some(100_000));
}

#[test]
fn the_budget_is_twice_the_size_and_a_fixed_part() {
    assert_eq!(budget(0), BUDGET_BASE);
    assert_eq!(budget(100 << 20), (200 << 20) + BUDGET_BASE);
    assert_eq!(budget(usize::MAX), u64::MAX);
}

#[test]
fn bad_json_and_trailing_text_are_errors_as_serde_json_says_them() {
    assert!(from_slice::<Vec<u8>>(b"[1, 2").is_err());
    assert!(from_slice::<Vec<u8>>(b"[1] x").is_err());
    assert!(from_slice::<Vec<u8>>(b"[256]").is_err());
}

/// `depth` arrays, one inside the other.
fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn nesting_past_the_limit_is_one_line_saying_where_and_what_is_allowed() {
    // The outermost array counts: MAX_DEPTH arrays read, one more does not.
    assert!(from_slice::<serde_json::Value>(nested(MAX_DEPTH).as_bytes()).is_ok());
    let e = from_slice::<serde_json::Value>(nested(MAX_DEPTH + 1).as_bytes())
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        format!(
            "an array or object nested more than {MAX_DEPTH} levels deep at line 1 column {}: at most {MAX_DEPTH} levels of nesting are allowed",
            MAX_DEPTH + 1
        )
    );
    // Other errors are serde_json's own.
    let e = from_slice::<Vec<u8>>(b"[256]").unwrap_err().to_string();
    assert!(e.starts_with("invalid value: integer `256`"), "{e}");
}

#[test]
fn a_skipped_values_nesting_is_bounded_like_the_rest() {
    // Inside a struct's unknown field, one level below the top.
    let within = format!(
        r#"{{"x": 1, "y": 2, "ignored": {}}}"#,
        nested(MAX_DEPTH - 1)
    );
    assert_eq!(from_slice::<Point>(within.as_bytes()).unwrap().x, 1);
    let past = format!(r#"{{"x": 1, "y": 2, "ignored": {}}}"#, nested(MAX_DEPTH));
    let e = from_slice::<Point>(past.as_bytes())
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!(
            "an array or object nested more than {MAX_DEPTH} levels deep at line 1 column "
        )),
        "{e}"
    );
    assert!(!e.contains('\n'), "{e}");
    // Objects and strings inside a skipped value are walked too, and must be
    // JSON.
    let objects = format!(
        r#"{{"x": 1, "y": 2, "ignored": {}1{}}}"#,
        r#"{"a":"s","b":"#.repeat(MAX_DEPTH),
        "}".repeat(MAX_DEPTH)
    );
    assert!(from_slice::<Point>(objects.as_bytes()).is_err());
    let bad = br#"{"x": 1, "y": 2, "ignored": [tru]}"#;
    assert!(from_slice::<Point>(bad).is_err());
}
