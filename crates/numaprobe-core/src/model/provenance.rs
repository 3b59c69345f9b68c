//! Provenance: where, when, by what and how a document was made. Collected
//! once per process (the binary calls [`init`] first thing) and stamped into
//! every JSON document by [`crate::render::to_json`], so a file found later says which
//! machine, kernel, version and command line produced it and whether the run
//! finished.

use serde::{Deserialize, Serialize};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The time budget a command ran under, as its option names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// The option that sets it, e.g. `--budget` (the whole run) or
    /// `--time-budget` (each cell).
    pub option: String,
    /// Its value in seconds (the command's default when the option was not given).
    pub seconds: f64,
}

/// The `provenance` object of a document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// numaprobe's version.
    pub version: String,
    /// The command line, program name first, one argument per element.
    pub command_line: Vec<String>,
    pub hostname: String,
    /// `model name` of /proc/cpuinfo (or the Arm implementer and part), else `unknown`.
    pub cpu_model: String,
    /// The kernel release (`uname -r`).
    pub kernel: String,
    /// Page sizes, vector width, arm64's MIDR and atomics (empty when read
    /// from a document older than the field).
    #[serde(default)]
    pub platform: crate::platform::Platform,
    /// When the process started, RFC 3339 UTC.
    pub start: String,
    /// When this document was written, RFC 3339 UTC.
    pub end: String,
    pub budget: Option<Budget>,
    /// False when the document holds a partial result (still running, or
    /// stopped by a signal).
    pub complete: bool,
    /// The ceiling on the buffers the run held at once and what set it
    /// (node memory, memory cgroup); absent when nothing was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub footprint: Option<crate::placement::FootprintLimit>,
    /// The quiet-machine check made before measuring: load, runnable
    /// tasks, steal, governor, THP, and its warnings; absent when nothing
    /// was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_check: Option<crate::system_check::SystemCheck>,
}

/// What does not change during the process.
#[derive(Debug, Clone)]
struct Base {
    command_line: Vec<String>,
    hostname: String,
    cpu_model: String,
    kernel: String,
    platform: crate::platform::Platform,
    start: SystemTime,
}

static BASE: OnceLock<Base> = OnceLock::new();
static BUDGET: OnceLock<std::sync::Mutex<Option<Budget>>> = OnceLock::new();

fn budget_slot() -> &'static std::sync::Mutex<Option<Budget>> {
    BUDGET.get_or_init(|| std::sync::Mutex::new(None))
}

/// Record the command line and the start time, and read the machine's
/// identity. The first call wins; documents written before any call collect
/// it then (a library user that never calls this still gets provenance).
pub fn init(command_line: Vec<String>, budget: Option<Budget>) {
    let _ = BASE.set(collect(command_line));
    set_budget(budget);
}

static SYSTEM_CHECK: std::sync::Mutex<Option<crate::system_check::SystemCheck>> =
    std::sync::Mutex::new(None);

/// Record the quiet-machine check of this run, for every document it writes.
pub fn set_system_check(check: crate::system_check::SystemCheck) {
    if let Ok(mut s) = SYSTEM_CHECK.lock() {
        *s = Some(check);
    }
}

/// The quiet-machine check of this run, if one was made.
pub fn system_check() -> Option<crate::system_check::SystemCheck> {
    SYSTEM_CHECK.lock().ok().and_then(|s| s.clone())
}

/// Replace the budget, for a command that learns its effective budget only
/// after parsing its options.
pub fn set_budget(budget: Option<Budget>) {
    if let Ok(mut b) = budget_slot().lock() {
        *b = budget;
    }
}

fn base() -> &'static Base {
    // args_os: an argument need not be UTF-8 (a file name), and
    // std::env::args panics on one that is not.
    BASE.get_or_init(|| {
        collect(
            std::env::args_os()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
        )
    })
}

fn collect(command_line: Vec<String>) -> Base {
    let (hostname, kernel) = uname();
    Base {
        command_line,
        hostname,
        cpu_model: std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|t| cpu_model_from_cpuinfo(&t))
            .unwrap_or_else(|| "unknown".into()),
        kernel,
        platform: crate::platform::Platform::live(),
        start: SystemTime::now(),
    }
}

/// The provenance of a document written now.
pub fn now(complete: bool) -> Provenance {
    let b = base();
    Provenance {
        version: env!("CARGO_PKG_VERSION").to_string(),
        command_line: b.command_line.clone(),
        hostname: b.hostname.clone(),
        cpu_model: b.cpu_model.clone(),
        kernel: b.kernel.clone(),
        platform: b.platform.clone(),
        start: rfc3339(b.start),
        end: rfc3339(SystemTime::now()),
        budget: budget_slot().lock().ok().and_then(|b| b.clone()),
        complete,
        footprint: crate::placement::footprint::last(),
        system_check: system_check(),
    }
}

/// Host name and kernel release from uname(2); `unknown` when it fails.
fn uname() -> (String, String) {
    // SAFETY: utsname is plain bytes; uname fills it or fails.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return ("unknown".into(), "unknown".into());
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c.to_ne_bytes()[0])
            .collect();
        let s = String::from_utf8_lossy(&bytes).trim().to_string();
        if s.is_empty() {
            "unknown".into()
        } else {
            s
        }
    };
    (field(&u.nodename), field(&u.release))
}

/// The CPU model named by a /proc/cpuinfo text: x86's `model name`, Arm's
/// `CPU implementer` and `CPU part` (named for the common server and
/// desktop cores), POWER's `cpu`. None when the text names none.
pub fn cpu_model_from_cpuinfo(text: &str) -> Option<String> {
    let value = |key: &str| {
        text.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key && !v.trim().is_empty()).then(|| v.trim().to_string())
        })
    };
    if let Some(m) = value("model name") {
        return Some(m.split_whitespace().collect::<Vec<_>>().join(" "));
    }
    if let Some(names) =
        crate::topology::midr::names_of(&crate::topology::midr::midrs_from_cpuinfo(text))
    {
        return Some(names);
    }
    value("cpu")
}

/// RFC 3339 in UTC with whole seconds, e.g. `2026-11-23T12:00:00Z`.
pub fn rfc3339(t: SystemTime) -> String {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's
/// algorithm), so no date crate is needed for one timestamp format.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Seconds since the epoch of an RFC 3339 UTC time as [`rfc3339`] writes it
/// (`2026-11-23T12:00:00Z`); None for any other text. The inverse of
/// [`civil_from_days`] is Howard Hinnant's `days_from_civil`.
pub fn unix_seconds(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return None;
    }
    if b[16] != b':' || b[19] != b'Z' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + mi * 60 + sec)
}

/// Insert `"provenance"` right after the top-level `"schema"` key of `text`,
/// a pretty JSON object or its layout (top-level keys indented by exactly
/// two spaces, every string on one line), in place, laid out as
/// [`crate::model::compact`] lays out a document. `complete` comes from the
/// document's own top-level `complete` when it has one. Text without a
/// top-level `schema` is left unchanged.
pub fn stamp(text: &mut String, cancelled: bool) {
    if !text.starts_with('{') {
        return;
    }
    // The lines are walked, never collected: a fleet's document has
    // millions of them, and a list of them would cost 16 bytes each beside
    // the text.
    let complete = "  \"complete\": ";
    if !text
        .lines()
        .any(|l| l.starts_with(crate::model::compact::SCHEMA_LINE))
    {
        return;
    }
    let own_complete = text
        .lines()
        .find(|l| l.starts_with(complete))
        .map(|l| !l.trim_end_matches(',').ends_with("false"));
    let member = member(own_complete.unwrap_or(true) && !cancelled);
    crate::model::compact::insert_after_schema(text, &member);
}

/// The `"provenance"` member as it stands in a document's top level, laid
/// out, without a comma: what [`stamp`] inserts, for a writer that puts it
/// in place as the document streams by.
pub fn member(complete: bool) -> String {
    let body = serde_json::to_string_pretty(&now(complete)).expect("provenance serializes");
    let member = format!("  \"provenance\": {}", body.replace('\n', "\n  "));
    crate::model::compact::layout_member(&member)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_time_reads_back_as_its_seconds() {
        for secs in [0u64, 951_782_400, 1_795_000_000, 4_102_444_800] {
            let t = UNIX_EPOCH + Duration::from_secs(secs);
            assert_eq!(unix_seconds(&rfc3339(t)), Some(secs as i64), "{secs}");
        }
        assert_eq!(unix_seconds("2026-11-23T12:00:00Z"), Some(1_795_435_200));
        for bad in [
            "",
            "2026-11-23 12:00:00Z",
            "2026-13-23T12:00:00Z",
            "2026-11-23T12:00:00+01:00",
            "2026-1a-23T12:00:00Z",
            "+026-11-23T12:00:00Z",
        ] {
            assert_eq!(unix_seconds(bad), None, "{bad}");
        }
    }

    #[test]
    fn dates_are_utc_civil_dates() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        // 2000-02-29 (a leap day of a century leap year) 12:34:56.
        let t = UNIX_EPOCH + Duration::from_secs(951_827_696);
        assert_eq!(rfc3339(t), "2000-02-29T12:34:56Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_795_910_400);
        assert_eq!(rfc3339(t), "2026-11-29T00:00:00Z");
    }

    #[test]
    fn cpu_model_from_x86_arm_and_power() {
        let x86 = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC  7763 64-Core Processor\n";
        assert_eq!(
            cpu_model_from_cpuinfo(x86).as_deref(),
            Some("AMD EPYC 7763 64-Core Processor")
        );
        let arm = "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\n";
        assert_eq!(
            cpu_model_from_cpuinfo(arm).as_deref(),
            Some("ARM Neoverse-N1")
        );
        let arm_new = "CPU implementer\t: 0x41\nCPU part\t: 0xd99\n";
        assert_eq!(
            cpu_model_from_cpuinfo(arm_new).as_deref(),
            Some("ARM part 0xd99")
        );
        let power = "processor\t: 0\ncpu\t\t: POWER9, altivec supported\n";
        assert_eq!(
            cpu_model_from_cpuinfo(power).as_deref(),
            Some("POWER9, altivec supported")
        );
        assert_eq!(cpu_model_from_cpuinfo("processor\t: 0\n"), None);
    }

    #[test]
    fn provenance_follows_schema_and_copies_complete() {
        let doc = serde_json::json!({"schema": "numaprobe/1", "complete": false, "x": [1, 2]});
        // serde_json's map without preserve_order sorts keys: `complete` first.
        let pretty = serde_json::to_string_pretty(&doc).unwrap();
        let mut out = pretty.clone();
        stamp(&mut out, false);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["provenance"]["complete"], false);
        assert_eq!(v["x"], serde_json::json!([1, 2]));
        let keys: Vec<&str> = out
            .lines()
            .filter_map(|l| l.strip_prefix("  \""))
            .filter_map(|l| l.split('"').next())
            .collect();
        let s = keys.iter().position(|k| *k == "schema").unwrap();
        assert_eq!(keys.get(s + 1), Some(&"provenance"), "{out}");
    }

    #[test]
    fn schema_as_last_key_and_cancellation() {
        let pretty = "{\n  \"a\": 1,\n  \"schema\": \"numaprobe/1\"\n}";
        let mut out = pretty.to_string();
        stamp(&mut out, true);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["provenance"]["complete"], false);
        assert_eq!(v["a"], 1);
        let mut out = pretty.to_string();
        stamp(&mut out, false);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["provenance"]["complete"], true);
        assert!(v["provenance"]["start"].as_str().unwrap().ends_with('Z'));
    }

    #[test]
    fn documents_without_schema_are_left_alone() {
        let nested = "{\n  \"inner\": {\n    \"schema\": \"numaprobe/1\"\n  }\n}";
        for text in [nested, "[1, 2]"] {
            let mut out = text.to_string();
            stamp(&mut out, false);
            assert_eq!(out, text);
        }
    }
}
