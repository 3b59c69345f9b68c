//! The budget keeper of an extra phase (c2c, loaded latency, peak): a
//! [`StepProgress`] between the experiment and the main job's observer that
//! shortens every step's stop rule so the steps still to run fit the
//! phase's share, from what the steps before really cost beyond their
//! sampling (thread start, buffer set-up, placement checks), and that says
//! "out of time" when the share is spent or the next step could not fit,
//! so the experiment stops between steps with what it has.

pub use super::observer::{Observer, StepStatus};
use crate::experiments::StepProgress;
use crate::model::extra::Extra;
use crate::stats::StopRule;
use std::time::Duration;

/// The least sampling a step is given: the experiments then end a step
/// after the warm-up and the three samples a median needs.
pub const STEP_FLOOR_S: f64 = 0.01;

pub struct StepKeeper<'a> {
    observer: &'a mut dyn Observer,
    /// Seconds since the phase began.
    clock: Box<dyn Fn() -> f64 + 'a>,
    phase: Extra,
    share_s: f64,
    /// Steps of the experiment's plan, learnt from `step_started`.
    total: usize,
    step_began_s: f64,
    /// Sampling given to the running step.
    given_s: f64,
    /// Wall time beyond the given sampling, summed over finished steps.
    overhead_s: f64,
    finished: usize,
    label: String,
    /// Seconds of the job before this phase began, and the budget the
    /// phases after it fill (see `in_job`).
    began_s: f64,
    fill_until_s: Option<f64>,
}

impl<'a> StepKeeper<'a> {
    pub fn new(
        observer: &'a mut dyn Observer,
        clock: Box<dyn Fn() -> f64 + 'a>,
        phase: Extra,
        share_s: f64,
    ) -> Self {
        StepKeeper {
            observer,
            clock,
            phase,
            share_s,
            total: 0,
            step_began_s: 0.0,
            given_s: 0.0,
            overhead_s: 0.0,
            finished: 0,
            label: String::new(),
            began_s: 0.0,
            fill_until_s: None,
        }
    }

    /// The phase began `began_s` into the job, and the phases after it take
    /// what is left of the job's `budget_s`: its status then carries the
    /// job's elapsed time and ETA as well as its own.
    pub fn in_job(mut self, began_s: f64, budget_s: f64) -> Self {
        self.began_s = began_s;
        self.fill_until_s = Some(budget_s);
        self
    }

    /// Steps finished so far, and the plan's count (0 before the first).
    pub fn steps(&self) -> (usize, usize) {
        (self.finished, self.total)
    }

    /// The mean cost of a step beyond its sampling, 0 before the first.
    fn overhead_per_step(&self) -> f64 {
        if self.finished == 0 {
            0.0
        } else {
            self.overhead_s / self.finished as f64
        }
    }

    fn left_s(&self) -> f64 {
        self.share_s - (self.clock)()
    }

    fn status(&mut self) {
        let elapsed_s = (self.clock)();
        let left_s = self.left_s().max(0.0);
        let job_elapsed_s = self.began_s + elapsed_s;
        let s = StepStatus {
            phase: self.phase,
            steps_done: self.finished,
            steps: self.total,
            label: self.label.clone(),
            elapsed_s,
            left_s,
            job_elapsed_s,
            job_eta_s: super::eta::job_eta_s(job_elapsed_s, left_s, self.fill_until_s),
        };
        self.observer.extra_status(&s);
    }
}

impl StepProgress for StepKeeper<'_> {
    fn step_started(&mut self, _index: usize, total: usize, label: &str) {
        self.total = total;
        self.step_began_s = (self.clock)();
        self.given_s = 0.0;
        self.label = label.to_string();
        self.status();
    }

    fn step_finished(&mut self, _index: usize, total: usize) {
        self.total = total;
        let wall = (self.clock)() - self.step_began_s;
        self.overhead_s += (wall - self.given_s).max(0.0);
        self.finished += 1;
        self.status();
    }

    /// The planned rule with its budget cut to this step's part of what is
    /// left of the share (after the measured per-step overhead), never
    /// longer than planned and never below [`STEP_FLOOR_S`].
    fn rule_for_step(&mut self, index: usize, planned: StopRule) -> StopRule {
        let n = self.total.saturating_sub(index).max(1) as f64;
        let per = self.left_s() / n - self.overhead_per_step();
        let b = per.min(planned.budget.as_secs_f64()).max(STEP_FLOOR_S);
        self.given_s = b;
        StopRule {
            budget: Duration::from_secs_f64(b),
            ..planned
        }
    }

    /// The share is spent, or what is left would not hold one more step at
    /// the floor with the overhead the steps so far cost.
    fn out_of_time(&self) -> bool {
        let left = self.left_s();
        left <= 0.0 || (self.finished > 0 && left < self.overhead_per_step() + STEP_FLOOR_S)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::Progress;
    use std::cell::Cell;
    use std::rc::Rc;

    #[derive(Default)]
    struct Seen(Vec<StepStatus>);
    impl Progress for Seen {}
    impl Observer for Seen {
        fn extra_status(&mut self, s: &StepStatus) {
            self.0.push(s.clone());
        }
    }

    fn planned(s: f64) -> StopRule {
        StopRule {
            budget: Duration::from_secs_f64(s),
            ..StopRule::default()
        }
    }

    #[test]
    fn rules_shrink_with_the_measured_overhead_and_time_runs_out() {
        let now = Rc::new(Cell::new(0.0));
        let t = now.clone();
        let mut seen = Seen::default();
        let mut k = StepKeeper::new(&mut seen, Box::new(move || t.get()), Extra::Peak, 10.0);
        // 5 steps in 10 s, nothing known of their overhead: 2 s each, but
        // never more than the plan's 1.5 s.
        k.step_started(0, 5, "read, all nodes");
        let r0 = k.rule_for_step(0, planned(1.5)).budget.as_secs_f64();
        assert!((r0 - 1.5).abs() < 1e-9, "{r0}");
        // The step took 1.5 s of sampling and 2.5 s of set-up.
        now.set(4.0);
        k.step_finished(0, 5);
        assert!(!k.out_of_time());
        k.step_started(1, 5, "read, node 0");
        let r1 = k.rule_for_step(1, planned(1.5)).budget.as_secs_f64();
        // 6 s for 4 steps of 2.5 s overhead each: the floor.
        assert!(r1 < r0, "{r1} !< {r0}");
        assert!((r1 - STEP_FLOOR_S).abs() < 1e-9, "{r1}");
        now.set(6.6);
        k.step_finished(1, 5);
        // 3.4 s left, a step costs about 2.5 s beyond its sampling.
        assert!(!k.out_of_time());
        k.step_started(2, 5, "read, node 1");
        k.rule_for_step(2, planned(1.5));
        now.set(9.0);
        k.step_finished(2, 5);
        // 1 s left is less than one more step's overhead.
        assert!(k.out_of_time());
        assert_eq!(k.steps(), (3, 5));
        drop(k);
        let last = seen.0.last().unwrap();
        assert_eq!((last.steps_done, last.steps), (3, 5));
        assert_eq!(last.phase, Extra::Peak);
        assert!((last.left_s - 1.0).abs() < 1e-9);
    }

    #[test]
    fn in_a_job_the_status_counts_from_the_jobs_start_to_its_budget() {
        let now = Rc::new(Cell::new(0.0));
        let t = now.clone();
        let mut seen = Seen::default();
        // c2c begins 40 s into a 60 s job with a 4 s share.
        let mut k = StepKeeper::new(&mut seen, Box::new(move || t.get()), Extra::C2c, 4.0)
            .in_job(40.0, 60.0);
        k.step_started(0, 8, "pair");
        now.set(3.0);
        k.step_finished(0, 8);
        drop(k);
        let s = seen.0.last().unwrap();
        assert_eq!((s.elapsed_s, s.left_s), (3.0, 1.0));
        assert_eq!((s.job_elapsed_s, s.job_eta_s), (43.0, 17.0));
    }

    #[test]
    fn cheap_steps_keep_their_planned_rule_until_the_share_is_spent() {
        let now = Rc::new(Cell::new(0.0));
        let t = now.clone();
        let mut seen = Seen::default();
        let mut k = StepKeeper::new(&mut seen, Box::new(move || t.get()), Extra::C2c, 2.0);
        assert!(!k.out_of_time(), "nothing spent yet");
        let mut rules = Vec::new();
        for i in 0..4 {
            k.step_started(i, 40, "pair");
            let r = k.rule_for_step(i, planned(0.05)).budget.as_secs_f64();
            rules.push(r);
            now.set(now.get() + r);
            k.step_finished(i, 40);
        }
        // 40 steps of 50 ms fit 2 s exactly: every rule as planned.
        assert!(rules.iter().all(|&r| (r - 0.05).abs() < 1e-9), "{rules:?}");
        now.set(2.0);
        assert!(k.out_of_time());
    }
}
