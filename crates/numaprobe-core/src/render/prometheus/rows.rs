//! The rows of the documents a machine measures apart from a run
//! (`numaprobe c2c --locks`, `policy`, `tune`), each figure with its
//! `_flagged` and `_flag_info` families ([`super::trust`]), as the run's
//! figures have. A row that has no figure (a policy skipped, a candidate
//! that failed or never ran) is left out, never written as 0.

use super::trust::{Pair, Trust};
use super::Family;
use crate::model::export::Exported;
use crate::model::locks::LocksResult;
use crate::model::policy::PolicyReport;
use crate::model::tune::TuneReport;

pub(super) fn families(e: &Exported) -> Vec<Family> {
    let mut out = Vec::new();
    if let Some(l) = &e.locks {
        out.extend(locks(l));
    }
    if let Some(p) = &e.policy {
        out.extend(policy(p));
    }
    if let Some(t) = &e.tune {
        out.extend(tune(t));
    }
    out
}

fn locks(r: &LocksResult) -> [Family; 3] {
    let mut f = Pair::new(
        Family::new(
            "numaprobe_locks_ops_per_second",
            "Operations per second of all threads together on one shared line or counter (c2c --locks), median; op, sharing, placement, threads and the CPUs as the row says.",
        ),
        Trust::new(
            Family::new(
                "numaprobe_locks_flagged",
                "1 when a lock or atomic row must not be trusted as is (spread, two modes, samples set aside), else 0.",
            ),
            Family::new(
                "numaprobe_locks_flag_info",
                "Why a lock or atomic row is flagged (value always 1; one series per flagged row, with its labels and reason).",
            ),
        ),
    );
    for run in &r.runs {
        let l = vec![
            ("op", run.op.clone()),
            ("sharing", run.sharing.clone()),
            ("placement", run.placement.clone()),
            ("threads", run.threads.to_string()),
            ("cpus", crate::units::format_list(&run.cpus)),
        ];
        f.push(l, run.ops_per_s, run.flagged, &run.flags);
    }
    f.families()
}

fn policy(r: &PolicyReport) -> [Family; 3] {
    let mut f = Pair::new(
        Family::new(
            "numaprobe_policy_throughput_bytes_per_second",
            "Streaming throughput under a memory policy (numaprobe policy), median over the rounds, per data case (independent: an array per thread; shared: one array).",
        ),
        Trust::new(
            Family::new(
                "numaprobe_policy_flagged",
                "1 when a policy's throughput must not be trusted as is (spread, two modes, every sample set aside), else 0.",
            ),
            Family::new(
                "numaprobe_policy_flag_info",
                "Why a policy's throughput is flagged (value always 1; one series per flagged policy and case, with its labels and reason).",
            ),
        ),
    );
    for c in &r.cases {
        for o in &c.policies {
            let Some(t) = &o.throughput else { continue };
            let l = vec![
                ("case", c.case.name().to_string()),
                ("policy", o.policy.name().to_string()),
            ];
            // A policy outcome has no `flagged` of its own: its flags are it.
            f.push(l, t.median * 1e9, !o.flags.is_empty(), &o.flags);
        }
    }
    f.families()
}

fn tune(r: &TuneReport) -> [Family; 3] {
    let mut f = Pair::new(
        Family::new(
            "numaprobe_tune_wall_seconds",
            "Wall time of the tuned program under a candidate placement (numaprobe tune; candidate is binding/memory), median over the finished rounds; a candidate that failed is left out.",
        ),
        Trust::new(
            Family::new(
                "numaprobe_tune_flagged",
                "1 when a candidate's wall time must not be trusted as is (spread, two modes), else 0.",
            ),
            Family::new(
                "numaprobe_tune_flag_info",
                "Why a candidate's wall time is flagged (value always 1; one series per flagged candidate, with its label and reason).",
            ),
        ),
    );
    for c in &r.candidates {
        let (Some(w), None) = (&c.wall_s, &c.failure) else {
            continue;
        };
        // A candidate has no `flagged` of its own: its flags are it.
        f.push(
            vec![("candidate", c.label.clone())],
            w.median,
            !c.flags.is_empty(),
            &c.flags,
        );
    }
    f.families()
}
