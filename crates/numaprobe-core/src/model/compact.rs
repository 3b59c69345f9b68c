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
    let mut out = String::with_capacity(pretty.len());
    let mut stack: Vec<Open> = Vec::new();
    let mut chars = pretty.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                if let Some(top) = stack.last_mut() {
                    // A key starts every member of an object; a string
                    // inside an array is a value.
                    top.not_numbers |= !top.object;
                }
                out.push(c);
                let mut escaped = false;
                for s in chars.by_ref() {
                    out.push(s);
                    if escaped {
                        escaped = false;
                    } else if s == '\\' {
                        escaped = true;
                    } else if s == '"' {
                        break;
                    }
                }
            }
            '[' | '{' => {
                if let Some(top) = stack.last_mut() {
                    top.nested = true;
                }
                stack.push(Open {
                    start: out.len(),
                    object: c == '{',
                    nested: false,
                    not_numbers: false,
                });
                out.push(c);
            }
            ']' | '}' => {
                out.push(c);
                let Some(open) = stack.pop() else { continue };
                if stack.is_empty() || open.nested {
                    continue;
                }
                let one_line = one_line(&out[open.start..]);
                let column = open.start - out[..open.start].rfind('\n').map_or(0, |n| n + 1);
                let numbers = !open.object && !open.not_numbers;
                if numbers || column + one_line.len() <= WIDTH {
                    out.truncate(open.start);
                    out.push_str(&one_line);
                }
            }
            't' | 'f' | 'n' => {
                if let Some(top) = stack.last_mut() {
                    top.not_numbers |= !top.object;
                }
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// A container without containers inside on one line: the line breaks and
/// indentation between its values dropped, a space after each comma.
fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                out.push(c);
                let mut escaped = false;
                for s in chars.by_ref() {
                    out.push(s);
                    if escaped {
                        escaped = false;
                    } else if s == '\\' {
                        escaped = true;
                    } else if s == '"' {
                        break;
                    }
                }
            }
            '\n' => {
                while chars.peek() == Some(&' ') {
                    chars.next();
                }
            }
            ',' => out.push_str(", "),
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
