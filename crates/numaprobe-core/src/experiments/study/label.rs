//! The note's thread labels, `node.core.access.memnode` (AMD 40555 §2.3.2):
//! `0.0.w.1` is a thread on node 0, core 0, writing memory of node 1.
//!
//! Parsing here is purely syntactic; whether node 0 has a core 0 is decided by
//! the planner against a topology, so a label can be checked before any
//! machine is read and the error names the label the user typed.

pub use crate::model::label::{Access, Mix, ThreadSpec};

/// The note's wording, used in titles ("read-only", "write-only").
pub fn wording(access: Access) -> &'static str {
    match access {
        Access::Read => "read-only",
        Access::Write => "write-only",
    }
}

/// A label that does not parse; the message quotes the label and says what a
/// valid one looks like.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LabelError {
    #[error("`{0}` is not a thread label: expected node.core.access.memnode with access r or w, e.g. 0.0.w.1")]
    Shape(String),
    #[error("`{label}`: {field} `{value}` is not a number (expected node.core.access.memnode, e.g. 0.0.w.1)")]
    Number {
        label: String,
        field: &'static str,
        value: String,
    },
    #[error("`{label}`: access `{value}` is not one of r (read-only), w (write-only)")]
    Access { label: String, value: String },
}

/// Parse one label such as `0.0.w.1`.
pub fn parse_label(label: &str) -> Result<ThreadSpec, LabelError> {
    let parts: Vec<&str> = label.trim().split('.').collect();
    if parts.len() != 4 || parts.iter().any(|p| p.is_empty()) {
        return Err(LabelError::Shape(label.to_string()));
    }
    let number = |field: &'static str, value: &str| -> Result<u64, LabelError> {
        // Only plain decimal digits: `+1` or ` 1` would parse with str::parse
        // in some types and make labels ambiguous.
        if !value.bytes().all(|b| b.is_ascii_digit()) {
            return Err(LabelError::Number {
                label: label.to_string(),
                field,
                value: value.to_string(),
            });
        }
        value.parse::<u64>().map_err(|_| LabelError::Number {
            label: label.to_string(),
            field,
            value: value.to_string(),
        })
    };
    let node = number("node", parts[0])?;
    let core = number("core", parts[1])?;
    let access = match parts[2] {
        "r" | "R" => Access::Read,
        "w" | "W" => Access::Write,
        other => {
            return Err(LabelError::Access {
                label: label.to_string(),
                value: other.to_string(),
            })
        }
    };
    let mem = number("memory node", parts[3])?;
    let node = u32::try_from(node).map_err(|_| LabelError::Number {
        label: label.to_string(),
        field: "node",
        value: parts[0].to_string(),
    })?;
    let mem = u32::try_from(mem).map_err(|_| LabelError::Number {
        label: label.to_string(),
        field: "memory node",
        value: parts[3].to_string(),
    })?;
    let core = usize::try_from(core).map_err(|_| LabelError::Number {
        label: label.to_string(),
        field: "core",
        value: parts[1].to_string(),
    })?;
    Ok(ThreadSpec {
        node,
        core,
        access,
        mem,
    })
}

/// Several labels, one per foreground thread. Empty input is allowed here;
/// the caller decides whether a scenario needs at least one thread.
pub fn parse_labels<S: AsRef<str>>(labels: &[S]) -> Result<Vec<ThreadSpec>, LabelError> {
    labels.iter().map(|l| parse_label(l.as_ref())).collect()
}

/// The label of a whole case: its threads' labels joined by a space, as on
/// the note's x-axis (`0.0.w.1 1.0.w.0`).
pub fn case_label(threads: &[ThreadSpec]) -> String {
    threads
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Most threads `--mix all` accepts: 2^n combinations grow fast, and the note
/// itself only ever uses two threads.
pub const MAX_MIX_THREADS: usize = 4;

/// Every access combination for `n` threads, in the note's order (rr, rw, wr,
/// ww for two): thread 1 varies slowest, read before write.
pub fn all_mixes(n: usize) -> Vec<Vec<Access>> {
    let n = n.min(MAX_MIX_THREADS);
    (0..(1usize << n))
        .map(|bits| {
            (0..n)
                .map(|i| {
                    if bits >> (n - 1 - i) & 1 == 1 {
                        Access::Write
                    } else {
                        Access::Read
                    }
                })
                .collect()
        })
        .collect()
}

/// `rw`-style name of a combination.
pub fn mix_name(accesses: &[Access]) -> String {
    accesses.iter().map(|a| a.letter()).collect()
}

/// The same threads with their accesses replaced by `accesses`.
pub fn with_accesses(threads: &[ThreadSpec], accesses: &[Access]) -> Vec<ThreadSpec> {
    threads
        .iter()
        .zip(accesses)
        .map(|(t, &access)| ThreadSpec { access, ..*t })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_notes_labels() {
        let t = parse_label("0.0.w.1").unwrap();
        assert_eq!(
            t,
            ThreadSpec {
                node: 0,
                core: 0,
                access: Access::Write,
                mem: 1
            }
        );
        assert_eq!(t.to_string(), "0.0.w.1");
        let t = parse_label("3.1.r.2").unwrap();
        assert_eq!((t.node, t.core, t.access, t.mem), (3, 1, Access::Read, 2));
        // Sparse node ids of real machines (POWER9 GPU memory nodes) are fine.
        assert_eq!(parse_label("0.0.R.255").unwrap().mem, 255);
    }

    #[test]
    fn rejects_bad_labels_with_clear_messages() {
        let e = parse_label("0.0.w").unwrap_err().to_string();
        assert!(
            e.contains("`0.0.w`") && e.contains("node.core.access.memnode"),
            "{e}"
        );
        let e = parse_label("0.0.x.1").unwrap_err().to_string();
        assert!(
            e.contains("access `x`") && e.contains("r (read-only)"),
            "{e}"
        );
        let e = parse_label("a.0.w.1").unwrap_err().to_string();
        assert!(e.contains("node `a` is not a number"), "{e}");
        let e = parse_label("0.-1.w.1").unwrap_err().to_string();
        assert!(e.contains("core `-1`"), "{e}");
        let e = parse_label("0.0.w.99999999999").unwrap_err().to_string();
        assert!(e.contains("memory node `99999999999`"), "{e}");
        assert!(parse_label("0..w.1").is_err());
        assert!(parse_label("0.0.w.1.2").is_err());
        assert!(parse_label("").is_err());
        assert!(parse_label("+0.0.w.1").is_err());
    }

    #[test]
    fn mixes_come_in_the_notes_order() {
        let names: Vec<String> = all_mixes(2).iter().map(|m| mix_name(m)).collect();
        assert_eq!(names, ["rr", "rw", "wr", "ww"]);
        assert_eq!(all_mixes(1).len(), 2);
        let threads = parse_labels(&["0.0.r.1", "1.0.r.0"]).unwrap();
        let ww = with_accesses(&threads, &[Access::Write, Access::Write]);
        assert_eq!(case_label(&ww), "0.0.w.1 1.0.w.0");
    }
}
