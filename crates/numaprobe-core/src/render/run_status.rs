//! The main job's status as one sentence: summary.md's status line, the
//! terminal summary and report.html's banner say the same thing, from
//! run.json's `status`.

use crate::model::run_status::{RunStatus, Shortfall};

/// `complete` or `incomplete`, then, after a semicolon each, every kind of
/// shortfall with its phases and why, the ones that make a run incomplete
/// first.
pub fn line(s: &RunStatus) -> String {
    let mut out = String::from(if s.complete { "complete" } else { "incomplete" });
    if s.phases.is_empty() {
        out.push_str(": every phase ran its whole plan");
        return out;
    }
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
            "incomplete; interrupted: bandwidth (cut short); partial by budget: cache sweep \
             (its share was spent); not run in full: c2c"
        );
        let s = RunStatus::of(vec![
            short("cache sweep", Shortfall::Budget, "a"),
            short("system peak", Shortfall::Budget, "b"),
        ]);
        assert_eq!(
            line(&s),
            "complete; partial by budget: cache sweep (a), system peak (b)"
        );
    }
}
