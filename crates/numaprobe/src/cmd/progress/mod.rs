//! Progress of a measurement on stderr, at any number of cells: on a
//! terminal one bar for the whole run (phase, counts, elapsed, ETA, the cell
//! being measured), drawn by `indicatif` (`progress/bar.rs`) and cleared at
//! the end or on error; in a batch log a plain line every few seconds and
//! never an escape code. The texts are pure functions, tested without a
//! clock.

mod bar;
mod text;

pub use text::*;

use numaprobe_core::experiments::StepProgress;
use numaprobe_core::job::observer::Status;
use std::time::Instant;

/// The progress on stderr: a bar on a terminal, plain lines in a batch log.
pub struct Line {
    terminal: bool,
    /// Plain lines every `PLAIN_EVERY` when stderr is not a terminal (the
    /// study draws on a terminal only).
    plain: bool,
    /// Made at the first `show`, dropped by `clear`.
    bar: Option<bar::Bar>,
    next_plain: Instant,
    label: String,
    /// The elapsed time a plain line last showed: reporters count from
    /// different starts, and a log read 3.1 s, then 2.3 s.
    elapsed_shown: f64,
}

impl Line {
    pub fn new() -> Self {
        Line {
            terminal: crate::output::stderr_is_terminal(),
            plain: true,
            bar: None,
            next_plain: Instant::now() + PLAIN_EVERY,
            label: String::new(),
            elapsed_shown: 0.0,
        }
    }

    /// A bar on a terminal and nothing at all elsewhere.
    pub fn terminal_only() -> Self {
        let mut line = Self::new();
        line.plain = false;
        line
    }

    /// What the cell being measured is, shown after the counts on a terminal.
    pub fn set_label(&mut self, label: &str) {
        self.label = label.to_string();
    }

    pub fn show(&mut self, s: &Status) {
        if self.terminal {
            self.bar
                .get_or_insert_with(bar::Bar::new)
                .show(s, &self.label);
        } else if self.plain_due(Instant::now()) {
            let s = self.forward(s);
            eprintln!("{}", plain_line(&s));
        }
    }

    /// `s` with its elapsed time never less than the one shown before; its
    /// ETA stays: a reporter whose clock started later reads less elapsed
    /// by as much as its end lies later.
    fn forward(&mut self, s: &Status) -> Status {
        let mut s = s.clone();
        s.elapsed_s = s.elapsed_s.max(self.elapsed_shown);
        self.elapsed_shown = s.elapsed_s;
        s
    }

    /// A single-phase run of `total` steps, begun at `started`, starting
    /// step `index` (`label`): the one snapshot every step-by-step command
    /// shows, so their counts and ETAs read alike (see `step_eta`).
    pub fn step_started(
        &mut self,
        phase: &str,
        started: Instant,
        index: usize,
        total: usize,
        label: &str,
        planned_step_s: Option<f64>,
    ) {
        self.set_label(label);
        let elapsed = started.elapsed().as_secs_f64();
        self.show(&Status::single(
            phase,
            index,
            total,
            elapsed,
            step_eta(elapsed, index, total, planned_step_s),
        ));
    }

    /// Whether a batch log gets a plain line at `now`; if so the next one is
    /// due `PLAIN_EVERY` later.
    fn plain_due(&mut self, now: Instant) -> bool {
        if !self.plain || now < self.next_plain {
            return false;
        }
        self.next_plain = now + PLAIN_EVERY;
        true
    }

    /// Take the bar off the terminal (nothing to do in a batch log).
    pub fn clear(&mut self) {
        if let Some(b) = self.bar.take() {
            b.clear();
        }
    }

    /// A line of its own on stderr, above which the bar goes on.
    pub fn say(&mut self, text: &str) {
        match &self.bar {
            Some(b) => b.suspend(|| eprintln!("numaprobe: {text}")),
            None => eprintln!("numaprobe: {text}"),
        }
    }
}

/// The progress of a single-phase, step-by-step command (c2c, c2c --locks,
/// loaded-latency, peak, latency --sweep): what each of them handed the
/// experiment as its `StepProgress`, kept here once.
pub struct StepLine {
    pub line: Line,
    pub started: Instant,
    phase: &'static str,
    /// The time planned per step, for the ETA before the first step ends.
    planned_step_s: Option<f64>,
    /// The time planned for each step, when the command plans them apart
    /// (see `planned_eta`).
    planned_steps: Option<Vec<f64>>,
    /// The total last stated on stderr, when the command stated one and
    /// wants it stated again if it moves (see `restated_total`).
    stated: Option<f64>,
}

impl StepLine {
    /// Starts the clock now.
    pub fn new(phase: &'static str, planned_step_s: Option<f64>) -> Self {
        StepLine {
            line: Line::new(),
            started: Instant::now(),
            phase,
            planned_step_s,
            planned_steps: None,
            stated: None,
        }
    }

    /// Steps of unequal planned cost; the clock starts now.
    pub fn planned(phase: &'static str, steps: Vec<f64>) -> Self {
        StepLine {
            planned_steps: Some(steps),
            ..Self::new(phase, None)
        }
    }

    /// The plan's total was stated before the first step: state it again,
    /// above the progress, whenever the steps that ended move it by more
    /// than a quarter.
    pub fn restating(mut self) -> Self {
        self.stated = self.planned_steps.as_ref().map(|s| s.iter().sum());
        self
    }
}

impl StepProgress for StepLine {
    fn step_started(&mut self, index: usize, total: usize, label: &str) {
        let Some(steps) = &self.planned_steps else {
            self.line.step_started(
                self.phase,
                self.started,
                index,
                total,
                label,
                self.planned_step_s,
            );
            return;
        };
        self.line.set_label(label);
        let elapsed = self.started.elapsed().as_secs_f64();
        let eta = planned_eta(elapsed, index, steps);
        if let Some(t) = self
            .stated
            .and_then(|stated| restated_total(stated, elapsed, eta, index, total))
        {
            self.stated = Some(t);
            let ended: f64 = steps[..index.min(steps.len())].iter().sum();
            self.line.say(&format!(
                "{}: {index} steps took {} against {} planned; now planned {} in all",
                self.phase,
                duration_text(elapsed),
                duration_text(ended),
                duration_text(t)
            ));
        }
        self.line.show(&Status::single(
            self.phase,
            index,
            total,
            elapsed,
            Some(eta),
        ));
    }
}

impl Default for Line {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Line {
    /// On an error the bar is cleared before the message is printed.
    fn drop(&mut self) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn snap(phase: &str, pd: usize, pt: usize, d: usize, t: usize) -> Status {
        Status {
            phase: phase.into(),
            phase_done: pd,
            phase_total: pt,
            done: d,
            total: t,
            elapsed_s: 41.3,
            eta_s: Some(19.0),
        }
    }

    #[test]
    fn durations_read_like_people_write_them() {
        assert_eq!(duration_text(4.24), "4.2 s");
        assert_eq!(duration_text(41.9), "41 s");
        assert_eq!(duration_text(125.0), "2 min 05 s");
        assert_eq!(duration_text(3720.0), "1 h 02 min");
        assert_eq!(duration_text(-1.0), "0.0 s");
        // Each unit from its first value on.
        assert_eq!(duration_text(10.0), "10 s");
        assert_eq!(duration_text(60.0), "1 min 00 s");
        assert_eq!(duration_text(3600.0), "1 h 00 min");
    }

    #[test]
    fn plain_line_names_phase_total_elapsed_and_eta() {
        assert_eq!(
            plain_line(&snap("latency", 37, 256, 37, 512)),
            "numaprobe: latency 37/256, total 37/512, 41 s elapsed, ETA 19 s"
        );
        // One phase: no separate total.
        assert_eq!(
            plain_line(&snap("bandwidth", 3, 4, 3, 4)),
            "numaprobe: bandwidth 3/4, 41 s elapsed, ETA 19 s"
        );
    }

    #[test]
    fn the_bar_shows_counts_and_times() {
        let s = snap("latency", 37, 256, 37, 512);
        assert_eq!(counts(&s, " | "), "latency 37/256 | total 37/512");
        assert_eq!(elapsed_eta(41.3, Some(19.0)), "41 s elapsed, ETA 19 s");
        let mut none = s.clone();
        none.phase.clear();
        assert_eq!(counts(&none, " | "), "37/256 | total 37/512");
        assert_eq!(elapsed_eta(4.24, None), "4.2 s elapsed");
    }

    #[test]
    fn a_batch_log_gets_a_plain_line_every_5_s_and_the_study_none() {
        let mut line = Line::new();
        let t0 = line.next_plain - PLAIN_EVERY;
        assert!(!line.plain_due(t0 + Duration::from_secs(4)));
        assert!(line.plain_due(t0 + Duration::from_secs(5)));
        // The next one 5 s after that, not before.
        assert!(!line.plain_due(t0 + Duration::from_secs(9)));
        assert!(line.plain_due(t0 + Duration::from_secs(10)));
        let mut study = Line::terminal_only();
        assert!(!study.plain_due(t0 + Duration::from_secs(60)));
    }

    #[test]
    fn a_plain_lines_elapsed_time_never_runs_backwards() {
        let mut line = Line::new();
        let at = |elapsed_s: f64| Status {
            elapsed_s,
            ..snap("latency", 1, 2, 1, 2)
        };
        assert_eq!(line.forward(&at(3.1)).elapsed_s, 3.1);
        // A later reporter counting from a later start.
        let back = line.forward(&at(2.3));
        assert_eq!((back.elapsed_s, back.eta_s), (3.1, Some(19.0)));
        assert_eq!(line.forward(&at(4.0)).elapsed_s, 4.0);
    }

    #[test]
    fn the_step_eta_is_the_mean_step_or_the_plan_before_the_first() {
        assert_eq!(step_eta(0.0, 0, 4, Some(2.0)), Some(8.0));
        assert_eq!(step_eta(0.0, 0, 4, None), None);
        assert_eq!(step_eta(3.0, 1, 4, Some(2.0)), Some(9.0));
        assert_eq!(step_eta(6.0, 2, 4, None), Some(6.0));
        assert_eq!(step_eta(8.0, 4, 4, None), Some(0.0));
    }

    #[test]
    fn the_planned_eta_scales_the_steps_left_by_the_ended_ones() {
        let plan = [1.0, 1.0, 2.0, 4.0];
        // Before any step: the plan.
        assert_eq!(planned_eta(0.5, 0, &plan), 8.0);
        // Two steps took 4 s against 2 planned: the 6 s left take 12.
        assert_eq!(planned_eta(4.0, 2, &plan), 12.0);
        // On plan.
        assert_eq!(planned_eta(4.0, 3, &plan), 4.0);
        assert_eq!(planned_eta(9.0, 4, &plan), 0.0);
        // One odd step moves the scale at most 20-fold either way.
        assert_eq!(planned_eta(100.0, 1, &plan), 7.0 * 20.0);
        assert_eq!(planned_eta(0.01, 1, &plan), 7.0 * 0.2);
        // Past the plan's end: nothing left.
        assert_eq!(planned_eta(3.0, 9, &plan), 0.0);
    }

    #[test]
    fn the_kind_eta_prices_each_step_left_at_its_own_kind() {
        // Two data cases under two policies, the policies turning each
        // round: the shared case's samples take 4.5 s, the independent
        // case's 3 s (as `policy` measured them on a loaded 2-CPU VM).
        let round = |r: usize| {
            let p = |k: usize| (k + r) % 2;
            [(0, p(0)), (0, p(1)), (1, p(0)), (1, p(1))]
        };
        let kinds: Vec<(usize, usize)> = (0..5).flat_map(round).collect();
        let cost = |k: &(usize, usize)| if k.0 == 0 { 3.0 } else { 4.5 };
        let times: Vec<f64> = kinds.iter().map(cost).collect();
        let truth = |done: usize| times[done..].iter().sum::<f64>();
        assert_eq!(kind_eta(&kinds, &[]), None);
        // Before a kind has ended, the mean of all ended steps stands in.
        assert_eq!(kind_eta(&kinds, &times[..1]), Some(19.0 * 3.0));
        // Once every kind has ended, each step left at its own kind's time:
        // exact mid-round, where the mean of all steps is off.
        for done in 4..=20 {
            let eta = kind_eta(&kinds, &times[..done]).unwrap();
            assert!((eta - truth(done)).abs() < 1e-9, "{done}: {eta}");
        }
        let mean = step_eta(times[..6].iter().sum(), 6, 20, None).unwrap();
        assert!((mean - 49.0).abs() < 1e-9 && truth(6) == 54.0, "{mean}");
        // A slower step moves only its own kind's price.
        let mut slow = times[..4].to_vec();
        slow[0] = 9.0;
        let eta = kind_eta(&kinds, &slow).unwrap();
        let left_of_first_kind = kinds[4..].iter().filter(|&&k| k == kinds[0]).count() as f64;
        assert!(
            (eta - truth(4) - 6.0 * left_of_first_kind).abs() < 1e-9,
            "{eta}"
        );
        // Steps past the kinds given: nothing left.
        assert_eq!(kind_eta(&kinds[..2], &[1.0, 2.0, 3.0]), Some(0.0));
    }

    #[test]
    fn a_stated_total_is_stated_again_only_when_it_moves_past_a_quarter() {
        // 30 of 100 steps in 10 s, 16 s to go: 26 s against 20 stated.
        assert_eq!(restated_total(20.0, 10.0, 16.0, 30, 100), Some(26.0));
        assert_eq!(restated_total(20.0, 5.0, 9.0, 30, 100), Some(14.0));
        // Within a quarter either way: the statement holds.
        assert_eq!(restated_total(20.0, 10.0, 14.9, 30, 100), None);
        assert_eq!(restated_total(20.0, 5.0, 10.1, 30, 100), None);
        // Too few steps ended for the scale to mean anything.
        assert_eq!(restated_total(20.0, 10.0, 90.0, 1, 4), None);
        assert_eq!(restated_total(20.0, 10.0, 90.0, 24, 100), None);
        assert_eq!(restated_total(20.0, 10.0, 90.0, 25, 100), Some(100.0));
        // Nothing stated: nothing to compare with.
        assert_eq!(restated_total(0.0, 10.0, 90.0, 50, 100), None);
    }

    #[test]
    fn finish_line_says_time_against_budget() {
        assert_eq!(
            finish_line(512, 58.24, Some(60.0)),
            "measured 512 cells in 58.2 s (budget 60 s)"
        );
        assert_eq!(finish_line(1, 0.5, None), "measured 1 cell in 0.5 s");
        assert_eq!(finish_line(3, 60.0, None), "measured 3 cells in 1 min 00 s");
        assert_eq!(
            finish_line(2, 5.04, Some(1.5)),
            "measured 2 cells in 5.0 s (budget 1.5 s)"
        );
        assert_eq!(
            finish_line(9, 1790.0, Some(1800.0)),
            "measured 9 cells in 29 min 50 s (budget 30 min 00 s)"
        );
    }
}
