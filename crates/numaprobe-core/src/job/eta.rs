//! The main job's ETA as one figure for the whole run, whichever phase
//! reports it. A phase knows only its own part (the matrices their cells,
//! an extra phase its share); the extra phases after the matrices take what
//! the budget has left, so while they are still to come the run ends at the
//! budget, not when the running phase does. Pure arithmetic over the phase
//! times it is given, tested without a clock.

/// Seconds the whole run still needs at `elapsed_s` (since the job began):
/// `own_s`, what the running phase and the later ones of its kind need by
/// their own estimate, or, when phases follow that fill the budget
/// (`fill_until_s`, the budget), until that budget is spent, whichever is
/// later: a phase that runs over its estimate moves the end, a budget the
/// extras will fill holds it.
pub fn job_eta_s(elapsed_s: f64, own_s: f64, fill_until_s: Option<f64>) -> f64 {
    let own = own_s.max(0.0);
    match fill_until_s {
        Some(end) => own.max(end - elapsed_s),
        None => own,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 60 s run: matrices planned into 36 s, the extra phases after them
    /// until 60 s. The figures are the phase times a run reports.
    #[test]
    fn while_the_matrices_run_the_extras_to_come_are_counted() {
        // 15 s in, the matrices say 6 s to go: the run ends at 60 s.
        assert_eq!(job_eta_s(15.0, 6.0, Some(60.0)), 45.0);
        // Matrices running over the budget: their own estimate stands.
        assert_eq!(job_eta_s(50.0, 20.0, Some(60.0)), 20.0);
        // Nothing after them: the phase's own estimate alone.
        assert_eq!(job_eta_s(15.0, 6.0, None), 6.0);
    }

    #[test]
    fn an_extra_phase_counts_the_later_ones_until_the_budget() {
        // c2c at 40 s with 1 s of its share left, loaded latency, peak and
        // sweep after it: 20 s to go, not 1.
        assert_eq!(job_eta_s(40.0, 1.0, Some(60.0)), 20.0);
        // The last phase over its share at the budget: no time, never less.
        assert_eq!(job_eta_s(61.0, -0.5, Some(60.0)), 0.0);
        assert_eq!(job_eta_s(61.0, -0.5, None), 0.0);
    }

    /// Elapsed plus ETA, the run's expected end, taken along a run whose
    /// phases keep to the budget: the same end at every report.
    #[test]
    fn the_expected_end_holds_through_phases_that_keep_to_the_budget() {
        // (elapsed, the reporting phase's own estimate) from the matrices
        // through each extra phase to the end.
        let reports = [
            (2.0, 30.0),
            (15.0, 21.0),
            (30.0, 6.0),
            (36.0, 4.0),
            (42.0, 8.0),
            (50.0, 3.0),
            (58.0, 2.0),
        ];
        for (elapsed, own) in reports {
            let end = elapsed + job_eta_s(elapsed, own, Some(60.0));
            assert_eq!(end, 60.0, "at {elapsed} s");
        }
    }
}
