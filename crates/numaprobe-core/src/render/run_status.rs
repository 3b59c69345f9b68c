//! The main job's status as one sentence: summary.md's status line, the
//! terminal summary and report.html's banner say the same thing, from
//! run.json's `status`.

use crate::model::run_status::{RunStatus, Shortfall};

/// One sentence of fact: "complete" when every phase ran its whole plan;
/// else what the run did ("ran as far as the budget allowed", or
/// "incomplete"), then, after a semicolon each, every kind of shortfall
/// with its phases and why, the ones that make a run incomplete first. A
/// run cut by its budget as planned is never called complete and partial
/// at once.
pub fn line(s: &RunStatus) -> String {
    if s.phases.is_empty() {
        return "complete: every phase ran its whole plan".into();
    }
    let mut out = String::from(if s.complete {
        "ran as far as the budget allowed"
    } else {
        "incomplete"
    });
    for kind in [
        Shortfall::Interrupted,
        Shortfall::Failed,
        Shortfall::Budget,
        Shortfall::Other,
    ] {
        let phases: Vec<String> = s
            .with(kind)
            .map(|p| {
                if p.reason.is_empty() {
                    p.phase.clone()
                } else {
                    format!("{} ({})", p.phase, p.reason)
                }
            })
            .collect();
        if phases.is_empty() {
            continue;
        }
        out.push_str("; ");
        out.push_str(&format!("{}: {}", kind.name(), phases.join(", ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::run_status::PhaseShortfall;

    fn short(phase: &str, shortfall: Shortfall, reason: &str) -> PhaseShortfall {
        PhaseShortfall {
            phase: phase.into(),
            shortfall,
            reason: reason.into(),
        }
    }

    #[test]
    fn the_line_says_complete_and_names_each_phase_and_why() {
        assert_eq!(
            line(&RunStatus::of(vec![])),
            "complete: every phase ran its whole plan"
        );
        let s = RunStatus::of(vec![
            short("cache sweep", Shortfall::Budget, "its share was spent"),
            short("bandwidth", Shortfall::Interrupted, "cut short"),
            short("c2c", Shortfall::Other, ""),
        ]);
        assert_eq!(
            line(&s),
            "incomplete; stopped by an interruption: bandwidth (cut short); cut short by the \
             budget: cache sweep (its share was spent); not run in full: c2c"
        );
        let s = RunStatus::of(vec![
            short("cache sweep", Shortfall::Budget, "a"),
            short("system peak", Shortfall::Budget, "b"),
        ]);
        assert_eq!(
            line(&s),
            "ran as far as the budget allowed; cut short by the budget: cache sweep (a), system \
             peak (b)"
        );
    }
}
