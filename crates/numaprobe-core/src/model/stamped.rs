//! A document's JSON text as every file numaprobe writes carries it: serde's
//! pretty text with the document's `kind` and its provenance stamped after
//! `schema`, laid out by `compact`. Here, below the renderers, so that a document embedded in
//! another (the topology inside `run.json`) is stamped exactly as its own
//! file is. [`write`] streams the same text to a file or a pipe, so that
//! a large document (an inference of 2 million cells writes some 600 MB)
//! is never held whole.

use super::compact::{schema_line_with, Layout, SCHEMA_LINE};
use super::document::{stamp_kind_into, Typed};
use std::io::{self, Write};

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

/// Write [`json`]'s text to `w` as it is made: only one innermost container
/// (a matrix row, a sample list) and one line are held at a time. The
/// stamps go in after the `schema` line as it passes; what they depend on
/// (a `kind` of the document's own, its `complete`) is read from the top
/// level first ([`super::top_fields`]). A value that is not a struct is
/// written the long way.
pub fn write<T: serde::Serialize + Typed>(value: &T, w: &mut impl Write) -> io::Result<()> {
    let Some(top) = super::top_fields::of(value) else {
        return w.write_all(json(value).as_bytes());
    };
    let mut members = vec![super::provenance::member(
        top.complete.unwrap_or(true) && !crate::cancel::requested(),
    )];
    if !top.has_kind {
        members.push(format!("  \"kind\": \"{}\"", value.kind()));
    }
    let mut out = Streamed {
        layout: Layout::default(),
        sink: Stamper {
            w,
            members,
            line: Vec::new(),
            done: false,
        },
    };
    serde_json::to_writer_pretty(&mut out, value).map_err(io::Error::from)?;
    out.layout.drain_settled(&mut out.sink)?;
    out.sink.finish()
}

/// Bytes held by the layout before the settled part is handed on.
const HELD: usize = 1 << 16;

/// serde_json's pretty text laid out, handed on as it settles.
struct Streamed<'a, W: Write> {
    layout: Layout,
    sink: Stamper<'a, W>,
}

impl<W: Write> Write for Streamed<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.layout.write_all(buf)?;
        if self.layout.held() >= HELD {
            self.layout.drain_settled(&mut self.sink)?;
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Passes laid-out text on, putting `members` in after the top-level
/// `schema` line in their order (provenance, then kind, as [`json`]'s
/// two insertions leave them): a line is held only until that line has
/// passed.
struct Stamper<'a, W: Write> {
    w: &'a mut W,
    members: Vec<String>,
    line: Vec<u8>,
    done: bool,
}

impl<W: Write> Stamper<'_, W> {
    /// `self.line`, a whole line with its `\n`, written with the stamps
    /// after it when it is the schema line.
    fn end_line(&mut self) -> io::Result<()> {
        let schema = std::str::from_utf8(&self.line[..self.line.len() - 1])
            .ok()
            .filter(|l| l.starts_with(SCHEMA_LINE));
        match schema {
            Some(line) => {
                let members: Vec<&str> = self.members.iter().map(String::as_str).collect();
                self.w
                    .write_all(schema_line_with(line, &members).as_bytes())?;
                self.w.write_all(b"\n")?;
                self.done = true;
            }
            None => self.w.write_all(&self.line)?,
        }
        self.line.clear();
        Ok(())
    }

    fn finish(self) -> io::Result<()> {
        self.w.write_all(&self.line)?;
        self.w.flush()
    }
}

impl<W: Write> Write for Stamper<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut rest = buf;
        while !self.done {
            let Some(n) = rest.iter().position(|&b| b == b'\n') else {
                self.line.extend_from_slice(rest);
                return Ok(buf.len());
            };
            self.line.extend_from_slice(&rest[..=n]);
            rest = &rest[n + 1..];
            self.end_line()?;
        }
        self.w.write_all(rest)?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
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

    /// A small document with the odd characters and lengths the layout
    /// treats apart: an incomplete one, without a kind of its own.
    fn small_doc() -> Doc {
        Doc {
            schema: "numaprobe/1",
            complete: false,
            rows: vec![vec![1.0, 2.5], vec![3.0, -4e-7]],
            notes: vec!["a, [b] {c} \"d\"".into()],
            wide: vec!["a sentence of some length that a reader wants whole".into(); 3],
        }
    }

    #[test]
    fn stamping_the_laid_out_text_writes_what_laying_out_the_stamped_text_would() {
        let doc = small_doc();
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

    /// `text` with its provenance's values dropped but `complete` (the
    /// clock's time and the memory free now change between two writes):
    /// the member's place and its keys stay, to be the same in both.
    fn timeless(text: &str) -> String {
        let mut out = Vec::new();
        let mut inside = false;
        for l in text.lines() {
            if inside {
                inside = l != "  }," && l != "  }";
                if inside {
                    // Whether the document is complete is its own, and kept.
                    let key = l.trim_start().split('"').nth(1).unwrap_or("");
                    out.push(match key {
                        "complete" => l.to_string(),
                        _ => format!("    {key}"),
                    });
                    continue;
                }
            } else if l.starts_with("  \"provenance\": {") {
                inside = !l.ends_with('}') && !l.ends_with("},");
            }
            out.push(l.to_string());
        }
        out.join("\n")
    }

    fn streamed<T: serde::Serialize + Typed>(value: &T) -> String {
        let mut out = Vec::new();
        write(value, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[derive(serde::Serialize)]
    struct Big {
        schema: &'static str,
        title: String,
        rows: Vec<Vec<f64>>,
        points: Vec<Point>,
        flat: Vec<u64>,
    }

    #[derive(serde::Serialize)]
    struct Point {
        at: u32,
        notes: Vec<String>,
        set_aside: Option<Aside>,
    }

    #[derive(serde::Serialize)]
    struct Aside {
        preempted: u32,
        why: String,
    }

    #[derive(serde::Serialize)]
    struct SchemaLast {
        rows: Vec<Vec<u8>>,
        schema: &'static str,
    }

    #[derive(serde::Serialize)]
    struct NoSchema {
        complete: bool,
        rows: Vec<Vec<u8>>,
    }

    macro_rules! impl_typed {
        ($($t:ty),*) => {$(impl Typed for $t {
            fn kind(&self) -> Kind {
                Kind::Infer
            }
        })*};
    }
    impl_typed!(Big, SchemaLast, NoSchema);

    fn big() -> Big {
        Big {
            schema: "numaprobe/1",
            title: "a title with \"quotes\", [brackets] and {braces}\n".into(),
            rows: (0..600)
                .map(|r| (0..40).map(|c| f64::from(r * 40 + c) / 7.0).collect())
                .collect(),
            points: (0..3000)
                .map(|i| Point {
                    at: i,
                    notes: (0..i % 4)
                        .map(|k| format!("note {k} of {i}, [x]"))
                        .collect(),
                    set_aside: (i % 3 == 0).then(|| Aside {
                        preempted: i,
                        why: "x".repeat((i % 90) as usize),
                    }),
                })
                .collect(),
            flat: (0..40_000).collect(),
        }
    }

    #[test]
    fn a_streamed_document_is_the_text_json_makes() {
        let doc = small_doc();
        assert_eq!(timeless(&streamed(&doc)), timeless(&json(&doc)));
        let m = crate::model::matrix::tests::sample();
        assert_eq!(timeless(&streamed(&m)), timeless(&json(&m)));
        // Larger than what is held at once: lines and folds cross the
        // points where the text is handed on.
        let b = big();
        let (s, j) = (streamed(&b), json(&b));
        assert!(s.len() > 8 * HELD, "{}", s.len());
        assert_eq!(timeless(&s), timeless(&j));
        for odd in [
            streamed(&SchemaLast {
                rows: vec![vec![1, 2]],
                schema: "numaprobe/1",
            }),
            streamed(&NoSchema {
                complete: false,
                rows: vec![vec![3]],
            }),
        ] {
            let v: serde_json::Value = serde_json::from_str(&odd).unwrap();
            assert!(v.get("rows").is_some(), "{odd}");
        }
        let last = SchemaLast {
            rows: vec![vec![1, 2]],
            schema: "numaprobe/1",
        };
        assert_eq!(timeless(&streamed(&last)), timeless(&json(&last)));
        assert!(streamed(&last).contains("\"kind\": \"infer\"\n}"));
        let bare = NoSchema {
            complete: false,
            rows: vec![vec![3]],
        };
        assert_eq!(streamed(&bare), json(&bare));
        assert!(!streamed(&bare).contains("provenance"));
    }

    /// A writer that takes `left` bytes, then fails.
    struct Short {
        left: usize,
    }

    impl std::io::Write for Short {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.left == 0 {
                return Err(std::io::Error::other("disk full"));
            }
            let n = buf.len().min(self.left);
            self.left -= n;
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A writer that counts the pieces it is handed.
    #[derive(Default)]
    struct Pieces {
        bytes: usize,
        pieces: usize,
    }

    impl std::io::Write for Pieces {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.bytes += buf.len();
            self.pieces += 1;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_document_is_handed_on_in_pieces_of_about_what_is_held() {
        let mut w = Pieces::default();
        write(&big(), &mut w).unwrap();
        // Handed on while it is made (more than one piece, none of them the
        // whole), and not byte by byte: a few writes for the stamped lines,
        // then one per `HELD` bytes or so.
        assert!(w.bytes > 8 * HELD, "{}", w.bytes);
        assert!(w.pieces >= w.bytes / HELD / 2, "{} pieces", w.pieces);
        assert!(w.pieces <= w.bytes / HELD + 16, "{} pieces", w.pieces);
    }

    #[test]
    fn an_embedded_document_is_the_stamped_json_as_a_value() {
        let v = value(&crate::model::matrix::tests::sample());
        assert_eq!(v["schema"], "numaprobe/1");
        assert!(v["provenance"]["version"].is_string(), "{v}");
    }

    #[test]
    fn a_failing_writer_fails_the_write() {
        for left in [0, 10, 3 * HELD] {
            let err = write(&big(), &mut Short { left }).unwrap_err();
            assert!(err.to_string().contains("disk full"), "{left}: {err}");
        }
        assert!(write(&big(), &mut Short { left: 1 << 30 }).is_ok());
    }
}
