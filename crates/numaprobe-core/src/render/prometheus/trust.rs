//! A figure's trust state as Prometheus sees it: beside each figure family
//! a `..._flagged` gauge (1 when the figure must not be trusted as is, else
//! 0, one series per figure) and a `..._flag_info` family (always 1) with
//! the figure's labels and a `reason` label: the flags' words, joined,
//! cleaned and clipped, one series per flagged figure.
//!
//! Why the reason is an info family of its own and not a label of
//! `..._flagged`: a series is its labels, so a reason on the gauge would
//! start a new series whenever its words change (`CV 12.0 %` one week,
//! `CV 13.1 %` the next), breaking `offset` and range queries on the gauge
//! and leaving one stale series per wording; an unflagged figure would
//! carry an empty reason. Kept apart, `..._flagged` has one stable series
//! per figure for alerts (`unless on (...) (..._flagged == 1)`), and the
//! reason is joined in where a person reads it (`* on (...)
//! group_left(reason) ..._flag_info`), as Prometheus' info metrics do
//! (`target_info`, `node_uname_info`). One info family per figure family,
//! not one shared `numaprobe_flag_info` with a `figure` label, keeps every
//! family's label names the same on all its series. Its cardinality is at
//! most the figures' own: an unflagged figure has no info series.

use super::{gauge, Family};
use crate::clean;

pub(super) type Labels = Vec<(&'static str, String)>;

/// The characters a reason keeps (then `...`, so a clipped reason reads
/// as clipped): a label a person reads on one line, and a document from
/// elsewhere cannot make one of megabytes.
pub(super) const REASON_MAX: usize = 1000;

/// What `reason` says for a figure flagged without words (a document
/// written before flags had them): said, not left empty, since an empty
/// label value is no label to Prometheus.
pub(super) const NO_REASON: &str = "flagged; the document gives no reason";

/// The `reason` label of a flagged figure: its flags joined by `; `, one
/// line of safe characters ([`clean::line`]), at most [`REASON_MAX`].
pub(super) fn reason(flags: &[String]) -> String {
    if flags.is_empty() {
        return NO_REASON.to_string();
    }
    clean::line(&flags.join("; "), REASON_MAX)
}

/// A figure family's `_flagged` and `_flag_info` families, filled together.
pub(super) struct Trust {
    flagged: Family,
    info: Family,
}

impl Trust {
    pub(super) fn new(flagged: Family, info: Family) -> Trust {
        Trust { flagged, info }
    }

    /// One figure's trust: its `_flagged` series, and its reason when
    /// flagged.
    pub(super) fn push(&mut self, labels: Labels, flagged: bool, flags: &[String]) {
        if flagged {
            let mut with = labels.clone();
            with.push(("reason", reason(flags)));
            self.info.push(with, 1.0);
        }
        self.flagged.push(labels, gauge(flagged));
    }

    pub(super) fn families(self) -> [Family; 2] {
        [self.flagged, self.info]
    }
}

/// A figure family and its trust, filled together so no figure is written
/// without its flag.
pub(super) struct Pair {
    value: Family,
    trust: Trust,
}

impl Pair {
    pub(super) fn new(value: Family, trust: Trust) -> Pair {
        Pair { value, trust }
    }

    pub(super) fn push(&mut self, labels: Labels, v: f64, flagged: bool, flags: &[String]) {
        self.trust.push(labels.clone(), flagged, flags);
        self.value.push(labels, v);
    }

    pub(super) fn families(self) -> [Family; 3] {
        let [flagged, info] = self.trust.families();
        [self.value, flagged, info]
    }
}
