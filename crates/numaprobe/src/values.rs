//! Option values as the command line reads them before any command runs:
//! the parsers of plain numbers (counts, standard deviations), an option's
//! value that starts with a minus (`--threshold -5%`) kept as its value,
//! and clap's "invalid value" errors said in numaprobe's one line
//! (`--threads: invalid value '-2' (a count cannot be negative; ...)`), the
//! way every command's own checks say a bad value.

use std::ffi::OsString;

/// A count: a whole number from 0 up, named in words when it is not one.
/// Whether 0 makes sense is the command's to say.
pub fn count(s: &str) -> Result<usize, String> {
    let t = s.trim();
    if t.starts_with('-') && t[1..].bytes().all(|b| b.is_ascii_digit()) && t.len() > 1 {
        return Err("a count cannot be negative; give a whole number, e.g. 4".into());
    }
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err("not a whole number; give one like 4".into());
    }
    t.parse::<usize>()
        .map_err(|_| format!("more than the largest count, {}", usize::MAX))
}

/// [`count`] that fits 32 bits (a number of nodes).
pub fn count32(s: &str) -> Result<u32, String> {
    let n = count(s)?;
    u32::try_from(n).map_err(|_| format!("more than the largest count here, {}", u32::MAX))
}

/// A number (`3.5`, `1e1`; `nan` and `inf` too): whether it is finite and
/// what range it must lie in is the command's to say, in its own words.
pub fn number(s: &str) -> Result<f64, String> {
    s.trim()
        .parse::<f64>()
        .map_err(|_| "not a number; give one like 3.5".into())
}

/// The command line with an option's value that starts with a minus and
/// a digit or a point (`--threshold -5%`, `--budget -1s`) joined to its
/// option (`--threshold=-5%`), so that the option's own check names it:
/// clap would read it as the short options `-5`, `-%`. No option of
/// numaprobe's is a digit, so such a word is never an option itself. After
/// `--` every word is the command's own and left alone.
pub fn join_negative(args: Vec<OsString>) -> Vec<OsString> {
    let mut out: Vec<OsString> = Vec::with_capacity(args.len());
    let mut rest = false;
    for a in args {
        let s = a.to_str();
        if !rest {
            let negative = s.is_some_and(|s| {
                let mut c = s.chars();
                c.next() == Some('-') && c.next().is_some_and(|d| d.is_ascii_digit() || d == '.')
            });
            let after_long = out
                .last()
                .and_then(|p| p.to_str())
                .is_some_and(|p| p.len() > 2 && p.starts_with("--") && !p.contains('='));
            if negative && after_long {
                let mut joined = out.pop().unwrap_or_default();
                joined.push("=");
                joined.push(&a);
                out.push(joined);
                continue;
            }
            rest = s == Some("--");
        }
        out.push(a);
    }
    out
}

/// A value clap refused (a parser's error, a word outside a fixed set) as
/// one line: the option, the value and why, with the valid ones where the
/// set is fixed. None for every other error.
pub fn refused(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let text = |k| match e.get(k) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    let arg = text(ContextKind::InvalidArg)?;
    // `--threads <N>` names the option with its value's name.
    let option = arg.split(' ').next().unwrap_or(&arg).to_string();
    let value: String = text(ContextKind::InvalidValue)?.chars().take(200).collect();
    match e.kind() {
        ErrorKind::ValueValidation => {
            let why = std::error::Error::source(e)
                .map(|s| s.to_string())
                .unwrap_or_else(|| "not a valid value".into());
            Some(format!("{option}: invalid value '{value}' ({why})"))
        }
        ErrorKind::InvalidValue => {
            let valid = match e.get(ContextKind::ValidValue) {
                Some(ContextValue::Strings(v)) => v.join(", "),
                _ => String::new(),
            };
            // clap says an option given no value (`--threshold --alpha`)
            // is one with the value ''.
            Some(if value.is_empty() && valid.is_empty() {
                format!("{option} needs a value; `--help` says which")
            } else {
                format!("{option}: invalid value '{value}' (valid: {valid})")
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn counts_and_numbers_say_what_is_wrong() {
        assert_eq!(count("4"), Ok(4));
        assert_eq!(count(" 0 "), Ok(0));
        assert!(count("-2").unwrap_err().contains("cannot be negative"));
        assert!(count("x").unwrap_err().starts_with("not a whole number"));
        assert!(count("").unwrap_err().starts_with("not a whole number"));
        assert!(count("-").unwrap_err().starts_with("not a whole number"));
        assert!(count("1.5").unwrap_err().starts_with("not a whole number"));
        assert!(count("+3").unwrap_err().starts_with("not a whole number"));
        assert!(count("99999999999999999999999")
            .unwrap_err()
            .starts_with("more than the largest count"));
        assert_eq!(count32("4294967295"), Ok(u32::MAX));
        assert!(count32("4294967296")
            .unwrap_err()
            .contains("largest count here, 4294967295"));
        assert_eq!(number("3.5"), Ok(3.5));
        assert_eq!(number("-1"), Ok(-1.0));
        assert!(number("NaN").unwrap().is_nan());
        assert_eq!(number("inf"), Ok(f64::INFINITY));
        assert_eq!(number("x"), Err("not a number; give one like 3.5".into()));
        assert!(number("").is_err());
    }

    #[test]
    fn a_negative_value_is_joined_to_its_long_option_only() {
        assert_eq!(
            join_negative(os(&["diff", "a", "b", "--threshold", "-5%"])),
            os(&["diff", "a", "b", "--threshold=-5%"])
        );
        assert_eq!(
            join_negative(os(&["--budget", "-.5s", "-o", "-1x"])),
            os(&["--budget=-.5s", "-o", "-1x"])
        );
        // Not a number's start, an option already with its value, `--`
        // itself and everything after it: left as they are.
        for kept in [
            &["--budget", "-x"][..],
            &["--budget=1s", "-1"],
            &["--", "-1"],
            &["tune", "--", "prog", "--n", "-1"],
            &["-", "-1"],
            &["--threads"],
        ] {
            assert_eq!(join_negative(os(kept)), os(kept), "{kept:?}");
        }
        // Before `--` it still applies.
        assert_eq!(
            join_negative(os(&["--runs", "-1", "--", "--n", "-1"])),
            os(&["--runs=-1", "--", "--n", "-1"])
        );
    }
}
