//! A document's JSON text as every file numaprobe writes carries it: serde's
//! pretty text with the document's `kind` and its provenance stamped after
//! `schema`, laid out by `compact`. Here, below the renderers, so that a document embedded in
//! another (the topology inside `run.json`) is stamped exactly as its own
//! file is.

use super::document::{stamp_kind_into, Typed};

/// Pretty JSON with `kind` and `provenance` after the top-level `schema`,
/// its innermost containers on one line ([`super::compact::layout`]; no
/// trailing newline); `complete` in the provenance is false when the
/// document says so or a stop was requested.
pub fn json<T: serde::Serialize + Typed>(value: &T) -> String {
    // Serializing our own plain data types cannot fail (no maps with non-string
    // keys, no custom Serialize that errors).
    // The text is laid out as serde_json writes it and stamped in place: a
    // fleet's document of 4 million figures is some 130 MB, and only its
    // laid-out text is ever held, never a second copy beside it.
    let mut out = super::compact::Layout::default();
    serde_json::to_writer_pretty(&mut out, value).expect("result types serialize");
    let mut text = out.finish();
    stamp_kind_into(&mut text, value.kind());
    super::provenance::stamp(&mut text, crate::cancel::requested());
    text
}

/// [`json`] as a value, to embed in another document.
pub fn value<T: serde::Serialize + Typed>(value: &T) -> serde_json::Value {
    serde_json::from_str(&json(value)).expect("a stamped document is JSON")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::compact::{insert_after_schema, layout};
    use crate::model::document::{stamp_kind, Kind};
    use crate::model::provenance::Provenance;

    #[derive(serde::Serialize)]
    struct Doc {
        schema: &'static str,
        complete: bool,
        rows: Vec<Vec<f64>>,
        notes: Vec<String>,
        wide: Vec<String>,
    }

    impl Typed for Doc {
        fn kind(&self) -> Kind {
            Kind::Pin
        }
    }

    /// What [`json`] writes, made the long way: the pretty text stamped
    /// first, then laid out as a whole, with the provenance [`json`] wrote.
    fn stamped_then_laid_out<T: serde::Serialize + Typed>(value: &T, written: &str) -> String {
        let v: serde_json::Value = serde_json::from_str(written).unwrap();
        let prov: Provenance = serde_json::from_value(v["provenance"].clone()).unwrap();
        let mut pretty = stamp_kind(&serde_json::to_string_pretty(value).unwrap(), value.kind());
        let body = serde_json::to_string_pretty(&prov).unwrap();
        let member = format!("  \"provenance\": {}", body.replace('\n', "\n  "));
        assert!(insert_after_schema(&mut pretty, &member));
        layout(&pretty)
    }

    #[test]
    fn stamping_the_laid_out_text_writes_what_laying_out_the_stamped_text_would() {
        let doc = Doc {
            schema: "numaprobe/1",
            complete: false,
            rows: vec![vec![1.0, 2.5], vec![3.0, -4e-7]],
            notes: vec!["a, [b] {c} \"d\"".into()],
            wide: vec!["a sentence of some length that a reader wants whole".into(); 3],
        };
        let out = json(&doc);
        assert_eq!(out, stamped_then_laid_out(&doc, &out));
        let keys: Vec<&str> = out
            .lines()
            .filter_map(|l| l.strip_prefix("  \""))
            .filter_map(|l| l.split('"').next())
            .collect();
        assert_eq!(keys[..3], ["schema", "provenance", "kind"], "{out}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["kind"], "pin");
        assert_eq!(v["provenance"]["complete"], false);
        // A matrix says its own kind, which is kept.
        let m = crate::model::matrix::tests::sample();
        let out = json(&m);
        assert_eq!(out, stamped_then_laid_out(&m, &out));
    }
}
