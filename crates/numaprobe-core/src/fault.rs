//! Test-only fault injection: switches that make a one-node development
//! machine fail the way a big one can (a memory node found full for one
//! cell, a panic at a chosen stage of a measuring command). They exist only
//! with the `fault-injection` cargo feature, which the binary's integration
//! tests turn on through a dev-dependency; a release build has none of them,
//! so no environment variable can make a real run fail in a way that reads
//! like a real memory shortage or a real bug (`scripts/dist-test` checks the
//! release binary ignores them).
//!
//! - `NUMAPROBE_FAULT_FULL_CELL=<i>`: cell `i` (0-based, in plan order)
//!   finds its memory node full.
//! - `NUMAPROBE_FAULT_PANIC=<stage>[:<n>]`: the `n`-th time (0-based,
//!   default 0) the program reaches `stage`, it panics there. Stages:
//!   [`LATENCY_CELL`], [`BANDWIDTH_WORKER`], [`PEAK_WORKER`],
//!   [`POLICY_WORKER`], [`LOCKS_WORKER`], [`STUDY_WORKER`], [`CELL_DONE`],
//!   [`OUTPUT`].

/// Names the cell whose memory node is found full.
pub const FULL_CELL: &str = "NUMAPROBE_FAULT_FULL_CELL";
/// Names the stage that panics.
pub const PANIC: &str = "NUMAPROBE_FAULT_PANIC";

/// The thread that measures one latency cell, as it starts.
pub const LATENCY_CELL: &str = "latency-cell";
/// A bandwidth worker thread, between two samples.
pub const BANDWIDTH_WORKER: &str = "bandwidth-worker";
/// A peak-bandwidth worker thread, between two samples.
pub const PEAK_WORKER: &str = "peak-worker";
/// A `policy` worker thread, between two samples.
pub const POLICY_WORKER: &str = "policy-worker";
/// A `locks` thread, as its slice starts.
pub const LOCKS_WORKER: &str = "locks-worker";
/// A `study` foreground thread, between two rounds.
pub const STUDY_WORKER: &str = "study-worker";
/// The coordinating thread, once a matrix cell is finished and saved.
pub const CELL_DONE: &str = "cell-done";
/// The binary, as it writes a file: the bytes are in the temporary file,
/// not yet renamed into place (a partial save counts too).
pub const OUTPUT: &str = "output";

/// Every stage [`panic_at`] knows.
pub const STAGES: [&str; 8] = [
    LATENCY_CELL,
    BANDWIDTH_WORKER,
    PEAK_WORKER,
    POLICY_WORKER,
    LOCKS_WORKER,
    STUDY_WORKER,
    CELL_DONE,
    OUTPUT,
];

/// Whether the fault switches are compiled in.
pub const ENABLED: bool = cfg!(feature = "fault-injection");

/// The cell [`FULL_CELL`] names; always None without the feature.
pub fn full_cell() -> Result<Option<usize>, String> {
    if !ENABLED {
        return Ok(None);
    }
    match std::env::var(FULL_CELL) {
        Ok(v) => {
            v.trim().parse::<usize>().map(Some).map_err(|_| {
                format!("{FULL_CELL}: invalid value '{v}' (valid: a 0-based cell index)")
            })
        }
        Err(_) => Ok(None),
    }
}

/// `(stage, n)` from a [`PANIC`] value.
#[cfg_attr(not(feature = "fault-injection"), allow(dead_code))]
fn parse_panic(v: &str) -> Option<(&str, usize)> {
    let (stage, n) = match v.trim().split_once(':') {
        Some((s, n)) => (s, n.parse().ok()?),
        None => (v.trim(), 0),
    };
    STAGES.contains(&stage).then_some((stage, n))
}

/// Panic when [`PANIC`] names `stage` and this is its `n`-th arrival. An
/// invalid value panics at the first stage reached, so a typo in a test
/// cannot pass for a stage never reached.
#[cfg(feature = "fault-injection")]
pub fn panic_at(stage: &str) {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static ARRIVALS: Mutex<Option<HashMap<String, usize>>> = Mutex::new(None);
    let Ok(v) = std::env::var(PANIC) else {
        return;
    };
    let Some((want, n)) = parse_panic(&v) else {
        panic!("{PANIC}: invalid value '{v}' (valid: STAGE or STAGE:N, STAGE one of {STAGES:?})");
    };
    if want != stage {
        return;
    }
    let k = {
        let mut g = ARRIVALS.lock().unwrap_or_else(|e| e.into_inner());
        let c = g
            .get_or_insert_with(HashMap::new)
            .entry(stage.to_string())
            .or_insert(0);
        *c += 1;
        *c - 1
    };
    if k == n {
        panic!("injected panic at {stage} (arrival {n}, {PANIC})");
    }
}

/// Without the feature: nothing, whatever the environment says.
#[cfg(not(feature = "fault-injection"))]
#[inline(always)]
pub fn panic_at(_stage: &str) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_value_names_a_known_stage_and_arrival() {
        assert_eq!(parse_panic("latency-cell"), Some(("latency-cell", 0)));
        assert_eq!(parse_panic(" cell-done:3 "), Some(("cell-done", 3)));
        assert_eq!(parse_panic("cell-done:x"), None);
        assert_eq!(parse_panic("nowhere"), None);
    }

    #[cfg(not(feature = "fault-injection"))]
    #[test]
    fn without_the_feature_no_switch_is_read() {
        // What a release build sees, whatever the environment says (the
        // release binary itself is checked by scripts/dist-test).
        const { assert!(!ENABLED) };
        assert_eq!(full_cell(), Ok(None));
        panic_at(LATENCY_CELL);
    }
}
