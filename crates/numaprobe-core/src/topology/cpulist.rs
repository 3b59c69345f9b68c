//! The two ways the kernel writes a set of CPU or node numbers, and how we
//! write them back for people.
//!
//! * list form (`cpulist`, `online`, `cpuset.cpus`): `0-3,8,10-11`
//! * mask form (`cpumap`, `thread_siblings`): comma-separated 32-bit hex words,
//!   most significant first, e.g. `00000000,0000ffff`
//!
//! Parsers return a problem description instead of an error type so the caller
//! can attach the file it came from (`TopologyError::Malformed`).

/// Anything above this is not a CPU or node number a kernel can have
/// (`NR_CPUS` tops out at 8192 today); refusing it keeps garbage such as
/// `0-4294967295` from allocating gigabytes.
pub const MAX_ID: u32 = 1 << 20;

/// Strip what sysfs files end with (newline, sometimes NUL padding).
pub fn clean(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || c == '\0')
}

/// Parse the list form. An empty string is the empty set (an empty `offline`
/// file is normal). The result is ascending and without duplicates.
pub fn parse_list(s: &str) -> Result<Vec<u32>, String> {
    parse_ranges(clean(s))
}

/// The one reader of the list form, shared by `parse_list` (sysfs files: the
/// caller names the file) and `units::parse_list` (what a person typed: the
/// caller names the value); each wraps the problem returned here in its own
/// error. Elements and range ends may be padded with spaces; numbers are
/// plain decimal below [`MAX_ID`]; blank input is the empty set (callers for
/// whom that is wrong check first). Ascending, without duplicates.
pub fn parse_ranges(s: &str) -> Result<Vec<u32>, String> {
    // Ranges first, expanded once merged: a text repeating `0-1048575` costs
    // one set, not one million ids per repetition.
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    if s.trim().is_empty() {
        return Ok(Vec::new());
    }
    for part in s.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err(format!("empty element in list `{}`", shorten(s)));
        }
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (parse_id(a, s)?, parse_id(b, s)?),
            None => {
                let a = parse_id(part, s)?;
                (a, a)
            }
        };
        if a > b {
            return Err(format!(
                "reversed range `{}` in list `{}`",
                element(part),
                shorten(s)
            ));
        }
        ranges.push((a, b));
    }
    ranges.sort_unstable();
    let mut out: Vec<u32> = Vec::new();
    for (a, b) in ranges {
        let from = match out.last() {
            Some(&last) if last >= b => continue,
            Some(&last) if last >= a => last + 1,
            _ => a,
        };
        out.extend(from..=b);
    }
    Ok(out)
}

fn parse_id(t: &str, whole: &str) -> Result<u32, String> {
    let t = t.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "`{}` is not a number in list `{}`",
            element(t),
            shorten(whole)
        ));
    }
    match t.parse::<u32>() {
        Ok(v) if v < MAX_ID => Ok(v),
        _ => Err(format!(
            "`{}` is out of range in list `{}`",
            element(t),
            shorten(whole)
        )),
    }
}

/// Parse the mask form. Bit `i` of the whole number is CPU `i`.
pub fn parse_mask(s: &str) -> Result<Vec<u32>, String> {
    let s = clean(s);
    if s.is_empty() {
        return Err("empty mask".into());
    }
    let words: Vec<&str> = s.split(',').collect();
    if words.len() as u64 * 32 > MAX_ID as u64 {
        return Err(format!("mask of {} words is too long", words.len()));
    }
    let mut out = Vec::new();
    for (k, w) in words.iter().rev().enumerate() {
        let w = w.trim();
        let w = w.strip_prefix("0x").unwrap_or(w);
        // hwloc writes empty words for zero ones; the kernel never does, but
        // accepting them costs nothing.
        if w.is_empty() {
            continue;
        }
        if w.len() > 8 {
            return Err(format!("mask word `{}` is longer than 32 bits", element(w)));
        }
        let v = u32::from_str_radix(w, 16).map_err(|_| {
            format!(
                "`{}` is not a hexadecimal mask word in `{}`",
                element(w),
                shorten(s)
            )
        })?;
        for bit in 0..32 {
            if v & (1 << bit) != 0 {
                out.push(k as u32 * 32 + bit);
            }
        }
    }
    out.sort_unstable();
    Ok(out)
}

/// A whole list as an error quotes it: at most 60 characters, control
/// characters escaped (`\n`, `\0`), so a damaged file's error stays one line.
fn shorten(s: &str) -> String {
    quote(s, 60)
}

/// One element as an error quotes it: whole up to 200 characters, escaped.
fn element(s: &str) -> String {
    quote(s, 200)
}

/// `s` as an error quotes it: [`crate::clean::line`], at most `max`
/// characters, so a damaged file's newlines never break the line.
pub(crate) fn quote(s: &str, max: usize) -> String {
    crate::clean::line(s, max)
}

/// The one writer of the list form, used by every list numaprobe prints
/// (`format_list` here, `units::format_list`, `analysis::binding::cpulist`):
/// `0-3,8,10-11`. Any order and duplicates are accepted (the set is sorted
/// and de-duplicated first); `empty` is what the empty set prints as, which
/// the caller chooses (`-` for a table cell, `none` for a message, `` for
/// the kernel's own form).
pub fn format_ranges(ids: &[u32], empty: &str) -> String {
    let mut v = ids.to_vec();
    v.sort_unstable();
    v.dedup();
    if v.is_empty() {
        return empty.to_string();
    }
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let start = v[i];
        let mut end = start;
        while i + 1 < v.len() && v[i + 1] == end + 1 {
            i += 1;
            end = v[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

/// Write a set in list form: `0-3,8,10-11`. Empty is `-`, so a table cell
/// is never blank.
pub fn format_list(ids: &[u32]) -> String {
    format_ranges(ids, "-")
}

/// Like `format_list`, but a long arithmetic progression with a step above 1
/// (what round-robin numbering produces: `0,4,8,...`) is written as
/// `0,4,...,156 (step 4)` so a 160-CPU row stays readable.
pub fn format_compact(ids: &[u32]) -> String {
    if ids.len() > 4 {
        let step = ids[1].wrapping_sub(ids[0]);
        if step > 1 && ids.windows(2).all(|w| w[1].wrapping_sub(w[0]) == step) {
            return format!(
                "{},{},...,{} (step {step})",
                ids[0],
                ids[1],
                ids[ids.len() - 1]
            );
        }
    }
    format_list(ids)
}

/// `format_list` for signed ids (package and core ids can be -1).
pub fn format_ids(ids: &[i64]) -> String {
    if ids.is_empty() {
        return "-".into();
    }
    if ids.iter().all(|&v| (0..MAX_ID as i64).contains(&v)) {
        let u: Vec<u32> = ids.iter().map(|&v| v as u32).collect();
        return format_list(&u);
    }
    ids.iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_parses_ranges_singles_and_empty() {
        assert_eq!(
            parse_list("0-3,8,10-11\n").unwrap(),
            vec![0, 1, 2, 3, 8, 10, 11]
        );
        assert_eq!(parse_list("\n").unwrap(), Vec::<u32>::new());
        assert_eq!(parse_list("5").unwrap(), vec![5]);
    }

    #[test]
    fn an_error_quotes_control_characters_escaped_on_one_line() {
        // Found by the `attributes` fuzz target: a NUL or newline inside a
        // damaged sysfs file made a multi-line error.
        let e = parse_list("0-1\n\0,\n3").unwrap_err();
        assert_eq!(e, "`1\\n\\0` is not a number in list `0-1\\n\\0,\\n3`");
        let e = parse_mask("00\n0f,zz").unwrap_err();
        assert!(!e.contains('\n') && e.contains("00\\n0f"), "{e}");
    }

    #[test]
    fn list_rejects_truncation_and_garbage() {
        assert!(parse_list("0-").is_err());
        assert!(parse_list("0-3,").is_err());
        assert!(parse_list("3-1").is_err());
        assert!(parse_list("abc").is_err());
        assert!(parse_list("0-4294967295").is_err());
        assert!(parse_list("-1").is_err());
    }

    #[test]
    fn mask_reads_most_significant_word_first() {
        assert_eq!(parse_mask("00000000,0000000f").unwrap(), vec![0, 1, 2, 3]);
        assert_eq!(parse_mask("00000001,00000000").unwrap(), vec![32]);
        assert_eq!(
            parse_mask("000aaaa0").unwrap(),
            vec![5, 7, 9, 11, 13, 15, 17, 19]
        );
        assert!(parse_mask("zz").is_err());
        assert!(parse_mask("").is_err());
    }

    #[test]
    fn formats_fold_ranges_and_progressions() {
        assert_eq!(format_list(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(format_list(&[]), "-");
        assert_eq!(
            format_ranges(&[11, 3, 0, 1, 2, 3, 8, 10], "none"),
            "0-3,8,10-11"
        );
        assert_eq!(format_ranges(&[], ""), "");
        assert_eq!(format_compact(&[0, 4, 8, 12, 16]), "0,4,...,16 (step 4)");
        assert_eq!(format_compact(&[0, 1, 2, 3, 4, 5]), "0-5");
        assert_eq!(format_ids(&[-1]), "-1");
        assert_eq!(format_ids(&[0, 1, 36]), "0-1,36");
    }
}
