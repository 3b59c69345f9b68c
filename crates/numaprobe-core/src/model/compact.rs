//! The layout of a document's pretty JSON: serde's pretty text with every
//! innermost container below the top level put on one line when it reads
//! as one: an array of numbers (a matrix row, a sample list, a CPU list)
//! always, any other array or object of plain values (a set-aside count, a
//! cache's size and CPUs) when its line stays within [`WIDTH`] columns. One
//! value a line made a number array cost its indentation per number, and
//! run.json is streamed from every node of a fleet. The top-level object
//! keeps one key a line, which the stamps (`kind`, `provenance`) and
//! line-oriented tools rely on; the values are unchanged.

/// Columns a line of plain values may take, indentation included, before it
/// is left one value a line (an array of numbers excepted).
pub const WIDTH: usize = 100;

/// One open container while the text is copied.
struct Open {
    /// Where its bracket is in the output.
    start: usize,
    object: bool,
    /// Holds another container.
    nested: bool,
    /// An array holding a string, `true`, `false` or `null`.
    not_numbers: bool,
}

/// `pretty` (serde_json's pretty text: two-space indentation, every string
/// on one line) with its innermost containers below the top level on one
/// line as the module says. Text that is not such JSON comes back with at
/// most its whitespace changed.
pub fn layout(pretty: &str) -> String {
    let mut out = Layout::default();
    out.extend(pretty.as_bytes());
    out.finish()
}

/// `member`, a top-level key with its pretty value as serde_json indents
/// it inside an object (`  "key": {...}`), laid out as [`layout`] lays it
/// out inside a document: the same columns, the same folds.
pub fn layout_member(member: &str) -> String {
    let doc = layout(&format!("{{\n{member}\n}}"));
    doc[2..doc.len() - 2].to_string()
}

/// How the top-level `schema` line starts (two spaces of indentation in
/// serde_json's pretty text and in its layout): the stamps follow it.
pub const SCHEMA_LINE: &str = "  \"schema\": ";

/// The top-level `schema` line (`line`, without its line break) followed by
/// `members` (each `  "key": value`, without a comma), one a line: the
/// line's comma goes to the last member, and the line takes one. What a
/// stamp after `schema` looks like, in place ([`insert_after_schema`]) or
/// as a document streams by ([`super::stamped::write`]).
pub fn schema_line_with(line: &str, members: &[&str]) -> String {
    let (bare, comma) = match line.strip_suffix(',') {
        Some(bare) => (bare, ","),
        None => (line, ""),
    };
    let mut out =
        String::with_capacity(line.len() + members.iter().map(|m| m.len() + 2).sum::<usize>());
    out.push_str(bare);
    for m in members {
        out.push_str(",\n");
        out.push_str(m);
    }
    out.push_str(comma);
    out
}

/// Put `member` (one top-level member, `  "key": value`, without a
/// comma) right after the top-level `"schema"` line of `text` (serde_json's
/// pretty text or its layout: top-level keys indented by exactly two
/// spaces, every string on one line), in place: the text is moved along,
/// never copied. False, and nothing changed, when there is no such line.
pub fn insert_after_schema(text: &mut String, member: &str) -> bool {
    let mut at = 0;
    let end = loop {
        let line_end = text[at..].find('\n').map_or(text.len(), |n| at + n);
        if text[at..line_end].starts_with(SCHEMA_LINE) {
            break line_end;
        }
        if line_end == text.len() {
            return false;
        }
        at = line_end + 1;
    };
    let stamped = schema_line_with(&text[at..end], &[member]);
    text.replace_range(at..end, &stamped);
    true
}

/// [`layout`] as the text is written: serde_json's pretty writer feeds it,
/// and only the laid-out text is ever held, never the pretty one beside it.
/// The bytes that matter are ASCII, which never occur inside a UTF-8
/// sequence, so the text is walked byte by byte.
#[derive(Default)]
pub struct Layout {
    out: Vec<u8>,
    stack: Vec<Open>,
    in_string: bool,
    escaped: bool,
    /// Bytes already handed on ([`Layout::drain_settled`]): `out` holds the
    /// text from this offset; `Open::start` counts from the text's start.
    base: usize,
    /// Where the line holding the first byte of `out` starts, in the
    /// whole text (a fold's column needs it after the line's start left).
    line_start: usize,
}

impl Layout {
    fn extend(&mut self, bytes: &[u8]) {
        for &c in bytes {
            self.push(c);
        }
    }

    fn push(&mut self, c: u8) {
        let out = &mut self.out;
        if self.in_string {
            out.push(c);
            if self.escaped {
                self.escaped = false;
            } else if c == b'\\' {
                self.escaped = true;
            } else if c == b'"' {
                self.in_string = false;
            }
            return;
        }
        match c {
            b'"' => {
                if let Some(top) = self.stack.last_mut() {
                    // A key starts every member of an object; a string
                    // inside an array is a value.
                    top.not_numbers |= !top.object;
                }
                out.push(c);
                self.in_string = true;
            }
            b'[' | b'{' => {
                if let Some(top) = self.stack.last_mut() {
                    top.nested = true;
                }
                self.stack.push(Open {
                    start: self.base + out.len(),
                    object: c == b'{',
                    nested: false,
                    not_numbers: false,
                });
                out.push(c);
            }
            b']' | b'}' => {
                out.push(c);
                let Some(open) = self.stack.pop() else { return };
                if self.stack.is_empty() || open.nested {
                    return;
                }
                // An innermost container is never handed on while open.
                let start = open.start - self.base;
                let one_line = one_line(&out[start..]);
                let line_start = out[..start]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(self.line_start, |n| self.base + n + 1);
                let column = open.start - line_start;
                let numbers = !open.object && !open.not_numbers;
                if numbers || column + one_line.len() <= WIDTH {
                    out.truncate(start);
                    out.extend_from_slice(&one_line);
                }
            }
            b't' | b'f' | b'n' => {
                if let Some(top) = self.stack.last_mut() {
                    top.not_numbers |= !top.object;
                }
                out.push(c);
            }
            _ => out.push(c),
        }
    }

    /// Hand the text that no later fold can change to `w` and drop it
    /// from the buffer: everything before the innermost open container
    /// while that holds no other container (it may still fold), else all.
    /// What stays held is one innermost container at most, so a document
    /// written this way is never held whole.
    pub fn drain_settled(&mut self, w: &mut impl std::io::Write) -> std::io::Result<()> {
        let settled = match self.stack.last() {
            Some(open) if !open.nested => open.start - self.base,
            _ => self.out.len(),
        };
        if settled == 0 {
            return Ok(());
        }
        w.write_all(&self.out[..settled])?;
        if let Some(n) = self.out[..settled].iter().rposition(|&b| b == b'\n') {
            self.line_start = self.base + n + 1;
        }
        self.out.drain(..settled);
        self.base += settled;
        Ok(())
    }

    /// Bytes held, not yet handed on.
    pub fn held(&self) -> usize {
        self.out.len()
    }

    /// The laid-out text.
    pub fn finish(self) -> String {
        // Only ASCII is dropped or added, between whole UTF-8 sequences, so
        // text written as UTF-8 (all serde_json writes) stays UTF-8.
        String::from_utf8(self.out).expect("laid-out UTF-8 stays UTF-8")
    }
}

impl std::io::Write for Layout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.extend(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A container without containers inside on one line: the line breaks and
/// indentation between its values dropped, a space after each comma.
fn one_line(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut bytes = text.iter().copied().peekable();
    while let Some(c) = bytes.next() {
        match c {
            b'"' => {
                out.push(c);
                let mut escaped = false;
                for s in bytes.by_ref() {
                    out.push(s);
                    if escaped {
                        escaped = false;
                    } else if s == b'\\' {
                        escaped = true;
                    } else if s == b'"' {
                        break;
                    }
                }
            }
            b'\n' => {
                while bytes.peek() == Some(&b' ') {
                    bytes.next();
                }
            }
            b',' => out.extend_from_slice(b", "),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn laid_out(v: &Value) -> String {
        layout(&serde_json::to_string_pretty(v).unwrap())
    }

    #[test]
    fn number_arrays_go_on_one_line_however_long() {
        let long: Vec<f64> = (0..200).map(|i| i as f64 * 1.5).collect();
        let v = json!({"schema": "numaprobe/1", "cpus": [0, 1, 2], "samples": long});
        let text = laid_out(&v);
        assert!(text.contains("\n  \"cpus\": [0, 1, 2],\n"), "{text}");
        let samples = text.lines().find(|l| l.contains("samples")).unwrap();
        assert!(samples.len() > WIDTH, "{samples}");
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v);
    }

    #[test]
    fn the_top_level_keeps_one_key_a_line() {
        let v = json!({"schema": "numaprobe/1", "complete": true});
        let text = laid_out(&v);
        assert_eq!(text, serde_json::to_string_pretty(&v).unwrap());
    }

    #[test]
    fn a_matrix_keeps_a_row_a_line() {
        let v = json!({"x": {"matrix": [[1.0, 2.5], [3.0, -4e-7]]}});
        let text = laid_out(&v);
        assert!(
            text.contains("      [1.0, 2.5],\n      [3.0, -4e-7]\n"),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v);
    }

    #[test]
    fn plain_objects_and_string_arrays_fold_only_within_the_width() {
        let short = json!({"preempted": 3, "off_cpu": 0, "used_anyway": true});
        let words = vec!["a sentence of some length that a reader wants whole"; 3];
        let v =
            json!({"schema": "s", "points": [{"set_aside": short, "flags": words, "gone": null}]});
        let text = laid_out(&v);
        assert!(
            text.contains(r#""set_aside": {"off_cpu": 0, "preempted": 3, "used_anyway": true}"#),
            "{text}"
        );
        assert!(text.contains("\"flags\": [\n"), "{text}");
        assert!(text.lines().all(|l| l.len() <= WIDTH), "{text}");
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v);
    }

    #[test]
    fn strings_with_brackets_commas_quotes_and_line_breaks_survive() {
        let odd = "a, [b] {c} \"d\" \\ e\nf: ,";
        let v = json!({"schema": "s", "notes": [odd, "g"], "m": {"k": odd}});
        let text = laid_out(&v);
        assert!(text.contains("\"notes\": [\"a, [b]"), "{text}");
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v);
    }

    #[test]
    fn an_array_with_a_boolean_or_null_is_not_taken_for_numbers() {
        let long: Vec<Value> = (0..60)
            .map(|i| if i == 59 { Value::Null } else { json!(i) })
            .collect();
        let v = json!({"schema": "s", "x": long});
        let text = laid_out(&v);
        assert!(text.contains("\"x\": [\n"), "{text}");
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v);
    }
}
