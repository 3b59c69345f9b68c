//! Parsing and printing the quantities people type: sizes (`256MiB`, `1GB`),
//! node and CPU lists (`0-2,5`), durations (`2s`, `500ms`), CV targets
//! (`1%`, `0.01`) and page kinds (`4k`, `thp`, `2m`, `1g`); and long lists
//! of names cut short for a line of text ([`some_names`]).
//!
//! They live in the library, not the binary, so every subcommand (and every
//! engineer's) reads `--size 1GiB` or `--cpu-nodes 0-3` the same way. Errors
//! name the value and what would have been valid, because they end up as the
//! one-line message a person sees.

use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("invalid size '{0}': expected a number with a unit, e.g. 64MiB, 1GiB, 512KiB, 1GB, 4096 (bytes); binary units KiB/MiB/GiB/TiB (also K/M/G/T), decimal kB/MB/GB/TB")]
    Size(String),
    #[error("size '{0}' is too large")]
    SizeOverflow(String),
    #[error("invalid list '{0}': expected numbers and ranges separated by commas, e.g. 0-2,5")]
    List(String),
    #[error("invalid duration '{0}': expected a number with a unit, e.g. 2s, 500ms, 1.5s, 1m")]
    Duration(String),
    #[error("invalid value '{0}' (valid: a fraction below 1 or a percentage, e.g. 0.01 or 1%)")]
    Fraction(String),
    #[error("invalid value '{0}' (valid: 4k, thp, 2m, 1g)")]
    Pages(String),
}

/// `" 1.5 GiB "` -> `("1.5", "GiB")`: the leading digits and dots, then the
/// rest (the unit), both trimmed. Shared by `parse_size` and `parse_duration`.
fn split_number(s: &str) -> (&str, &str) {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    (num, unit.trim())
}

/// Parse a byte size. Binary units (`KiB`, `MiB`, `GiB`, `TiB`, and the short
/// `K`, `M`, `G`, `T` that numactl and likwid accept) are powers of 1024;
/// decimal units (`kB`, `MB`, `GB`, `TB`) are powers of 1000; a bare number or
/// `B` is bytes. Case is ignored except that `kB`/`KB` both mean 1000 and
/// `KiB`/`K` mean 1024. Fractions are allowed (`1.5GiB`) and rounded down to
/// a byte.
pub fn parse_size(s: &str) -> Result<u64, ParseError> {
    let err = || ParseError::Size(s.to_string());
    let (num, unit) = split_number(s);
    if num.is_empty() || num.starts_with('.') && num.len() == 1 {
        return Err(err());
    }
    let mult: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        _ => return Err(err()),
    };
    if let Ok(n) = num.parse::<u64>() {
        return n
            .checked_mul(mult)
            .ok_or_else(|| ParseError::SizeOverflow(s.to_string()));
    }
    let f: f64 = num.parse().map_err(|_| err())?;
    let bytes = f * mult as f64;
    if !bytes.is_finite() || bytes >= u64::MAX as f64 {
        return Err(ParseError::SizeOverflow(s.to_string()));
    }
    Ok(bytes as u64)
}

/// Print a byte count the way people read it: the largest binary unit that
/// keeps a value >= 1, with up to one decimal (`256 MiB`, `1.5 GiB`, `512 B`).
/// `1 thread`, `2 threads`: a count with its noun (plain `s` plurals).
pub fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

pub fn format_size(bytes: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (name, m) in UNITS {
        if bytes >= m {
            let v = bytes as f64 / m as f64;
            return if bytes.is_multiple_of(m) {
                format!("{} {name}", bytes / m)
            } else {
                format!("{v:.1} {name}")
            };
        }
    }
    format!("{bytes} B")
}

/// Parse a list like `0-2,5` (the cpulist format of sysfs, numactl and
/// taskset) into ascending, de-duplicated numbers. Empty input is an error:
/// a person who typed `--cpu-nodes ''` meant something, and "nothing" is not it.
/// The ranges are read by `topology::cpulist::parse_ranges`, the one list
/// reader; its problem is replaced by this error, which names the value.
pub fn parse_list(s: &str) -> Result<Vec<u32>, ParseError> {
    if s.trim().is_empty() {
        return Err(ParseError::List(s.to_string()));
    }
    crate::topology::cpulist::parse_ranges(s).map_err(|_| ParseError::List(s.to_string()))
}

/// Print numbers as a compact list with ranges (`0-3,8,10-11`); `none` when
/// empty, so an error message never ends in an empty string. The ranges are
/// written by `topology::cpulist::format_ranges`, the one list writer.
/// The first `shown` of `names`, then "and N more": a group of 9,000
/// identical nodes must make a line, not a phone book.
pub fn some_names(names: &[String], shown: usize) -> String {
    let mut s = names
        .iter()
        .take(shown)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > shown {
        s.push_str(&format!(" and {} more", names.len() - shown));
    }
    s
}

pub fn format_list(items: &[u32]) -> String {
    crate::topology::cpulist::format_ranges(items, "none")
}

/// Parse a duration: `ms`, `s`, `m` units, fractions allowed; a bare number is
/// seconds (what people mean by `--time-budget 2`).
pub fn parse_duration(s: &str) -> Result<Duration, ParseError> {
    let err = || ParseError::Duration(s.to_string());
    let (num, unit) = split_number(s);
    let v: f64 = num.parse().map_err(|_| err())?;
    let secs = match unit.to_ascii_lowercase().as_str() {
        "" | "s" | "sec" => v,
        "ms" => v / 1e3,
        "us" => v / 1e6,
        "m" | "min" => v * 60.0,
        _ => return Err(err()),
    };
    if !secs.is_finite() || !(0.0..=1e9).contains(&secs) {
        return Err(err());
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parse a CV target (`--cv-target`): a fraction in [0, 1) such as `0.01`,
/// or a percentage below 100 such as `1%`.
pub fn parse_fraction(s: &str) -> Result<f64, ParseError> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
        None => t.parse::<f64>(),
    };
    match v {
        Ok(x) if x.is_finite() && (0.0..1.0).contains(&x) => Ok(x),
        _ => Err(ParseError::Fraction(s.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_binary_and_decimal() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("8MiB"), Ok(8 << 20));
        assert_eq!(parse_size("8M"), Ok(8 << 20));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("1gib"), Ok(1 << 30));
        assert_eq!(parse_size("512KiB"), Ok(512 << 10));
        assert_eq!(parse_size("1GB"), Ok(1_000_000_000));
        assert_eq!(parse_size("1 GB"), Ok(1_000_000_000));
        assert_eq!(parse_size("64kB"), Ok(64_000));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size("2TB"), Ok(2_000_000_000_000));
    }

    #[test]
    fn bad_sizes_name_the_value() {
        for bad in ["", "MiB", "12XB", "-1", "1..2G", "."] {
            let e = parse_size(bad).unwrap_err();
            assert!(e.to_string().contains(&format!("'{bad}'")), "{e}");
        }
        assert!(matches!(
            parse_size("99999999999TiB"),
            Err(ParseError::SizeOverflow(_))
        ));
    }

    #[test]
    fn sizes_print_in_binary_units() {
        assert_eq!(format_size(512), "512 B");
        assert_eq!(format_size(256 << 20), "256 MiB");
        assert_eq!(format_size(3 << 29), "1.5 GiB");
    }

    #[test]
    fn lists_parse_ranges_and_dedup() {
        assert_eq!(parse_list("0-2,5"), Ok(vec![0, 1, 2, 5]));
        assert_eq!(parse_list("5,0-2,1"), Ok(vec![0, 1, 2, 5]));
        assert_eq!(parse_list("3"), Ok(vec![3]));
        assert_eq!(parse_list(" 1 , 2 "), Ok(vec![1, 2]));
        for bad in [
            "",
            "a",
            "2-1",
            "1-",
            ",",
            "1,,2",
            "-3",
            "+3",
            "0-4294967295",
        ] {
            assert!(parse_list(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn lists_print_compactly() {
        assert_eq!(format_list(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(format_list(&[]), "none");
        assert_eq!(format_list(&[4]), "4");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("1m"), Ok(Duration::from_secs(60)));
        for bad in ["", "s", "2h", "-1s", "x"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn some_names_cut_a_long_list_and_count_the_rest() {
        let n: Vec<String> = (1..=6).map(|i| format!("n{i}")).collect();
        assert_eq!(some_names(&n, 4), "n1, n2, n3, n4 and 2 more");
        assert_eq!(some_names(&n, 6), "n1, n2, n3, n4, n5, n6");
        assert_eq!(some_names(&n[..2], 1), "n1 and 1 more");
        assert_eq!(some_names(&[], 3), "");
    }
}
