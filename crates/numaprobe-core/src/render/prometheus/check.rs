//! The check's families (`numaprobe_check_*`): whether the machine matched
//! its expectation, the differences per section, and when the check ran.

use super::{gauge, single, times, Family};
use crate::model::diff::CheckReport;
use crate::model::provenance::Provenance;
use std::collections::BTreeMap;

pub(super) fn families(c: &CheckReport, p: Option<&Provenance>) -> Vec<Family> {
    let (_, end) = times(p);
    let when = single(
        "numaprobe_check_timestamp_seconds",
        "When the exported check ran (its result was written), in seconds since the epoch.",
        end.map(|t| t as f64),
    );
    let mut ok = Family::new(
        "numaprobe_check_ok",
        "1 when the machine matches the saved topology or binding it was checked against, else 0.",
    );
    ok.push(
        vec![("expect_kind", c.expect_kind.clone())],
        gauge(c.matches),
    );
    // Every section compared, 0 where nothing differs, so an alert sees a
    // series go up rather than appear.
    let mut by: BTreeMap<&'static str, usize> = c.sections.iter().map(|s| (s.name(), 0)).collect();
    for d in &c.differences {
        *by.entry(d.section.name()).or_insert(0) += 1;
    }
    let mut diffs = Family::new(
        "numaprobe_check_differences",
        "Differences the check found, per section compared (0 for a section that matches).",
    );
    for (section, n) in by {
        diffs.push(vec![("section", section.to_string())], n as f64);
    }
    vec![when, ok, diffs]
}
