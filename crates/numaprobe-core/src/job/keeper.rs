//! The budget keeper: a [`Progress`] wrapper that re-plans every cell's
//! sampling from what the cells before it really cost, forwards everything to
//! the caller's observer, and tells it where the job stands (counts, elapsed
//! time, ETA from the plan and the measured costs).

use super::cost::{CostModel, Load, Observed};
pub use super::observer::{Observer, Status};
use super::plan::{fit, CELL_MAX_S};
use super::Phase;
use crate::experiments::Progress;
use crate::model::matrix::MatrixResult;
use crate::stats::StopRule;

/// Seconds to go for a command without a job plan: the mean wall time of the
/// finished cells for each remaining one, or before the first, the planned
/// sampling of each (set-up unknown yet).
pub fn mean_eta_s(done: usize, total: usize, elapsed_s: f64, cell_budget_s: f64) -> f64 {
    let left = total.saturating_sub(done) as f64;
    if done == 0 {
        left * cell_budget_s
    } else {
        left * elapsed_s / done as f64
    }
}

/// What the keeper knows of the phases after the running one.
#[derive(Debug, Clone, Copy)]
pub struct Later {
    pub load: Load,
    pub cell_budget_s: f64,
}

pub struct Keeper<'a> {
    observer: &'a mut dyn Observer,
    /// Seconds since the job started.
    clock: Box<dyn FnMut() -> f64 + 'a>,
    budget_s: f64,
    size: u64,
    model: CostModel,
    observed: &'a mut Observed,
    phase: Phase,
    phase_total: usize,
    /// Buffers of this phase not set up yet.
    buffers_left: usize,
    later: Vec<Later>,
    done_before: usize,
    total: usize,
    /// Sampling given to each cell of this phase, by index.
    given: Vec<f64>,
    current: usize,
    finished: usize,
    last_budget_s: f64,
    /// The budget the phases after the matrices fill, when they follow
    /// (see [`super::eta`]).
    fill_until_s: Option<f64>,
}

impl<'a> Keeper<'a> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        observer: &'a mut dyn Observer,
        clock: Box<dyn FnMut() -> f64 + 'a>,
        budget_s: f64,
        size: u64,
        model: CostModel,
        observed: &'a mut Observed,
        phase: (Load, f64),
        later: Vec<Later>,
        done_before: usize,
        total: usize,
    ) -> Self {
        Keeper {
            observer,
            clock,
            budget_s,
            size,
            model,
            observed,
            phase: phase.0.phase,
            phase_total: phase.0.cells,
            buffers_left: phase.0.buffers,
            later,
            done_before,
            total,
            given: vec![phase.1; phase.0.cells],
            current: 0,
            finished: 0,
            last_budget_s: phase.1,
            fill_until_s: None,
        }
    }

    /// Phases that fill the budget (`budget_s`) follow the matrices: the ETA
    /// runs to it while the matrices end earlier.
    pub fn then_filled_until(mut self, budget_s: f64) -> Self {
        self.fill_until_s = Some(budget_s);
        self
    }

    /// Time the later phases are expected to take, with today's correction.
    fn reserve_s(&self) -> f64 {
        self.later
            .iter()
            .map(|l| {
                let c = self.observed.correct(&self.model, l.load.phase);
                c.phase_s(l.load, self.size, l.cell_budget_s)
            })
            .sum()
    }

    /// What is left of this phase after `done` cells.
    fn left(&self, done: usize) -> Load {
        Load {
            phase: self.phase,
            cells: self.phase_total.saturating_sub(done),
            buffers: self.buffers_left,
        }
    }

    /// Seconds to go: the buffers not set up and the cells not finished yet
    /// of this phase, at the sampling the last re-plan gave, plus the later
    /// phases.
    fn eta_s(&self) -> f64 {
        let c = self.observed.correct(&self.model, self.phase);
        c.phase_s(self.left(self.finished), self.size, self.last_budget_s) + self.reserve_s()
    }

    fn status(&mut self) {
        let elapsed_s = (self.clock)();
        let s = Status {
            phase: self.phase.name().into(),
            phase_done: self.finished,
            phase_total: self.phase_total,
            done: self.done_before + self.finished,
            total: self.total,
            elapsed_s,
            eta_s: Some(super::eta::job_eta_s(
                elapsed_s,
                self.eta_s(),
                self.fill_until_s,
            )),
        };
        self.observer.status(&s);
    }

    /// Cells of this phase finished so far.
    pub fn finished(&self) -> usize {
        self.finished
    }
}

impl Progress for Keeper<'_> {
    fn cell_started(&mut self, index: usize, total: usize, label: &str) {
        self.current = index;
        self.observer.cell_started(index, total, label);
        self.status();
    }

    fn cell_finished(&mut self, partial: &MatrixResult) {
        let cell = partial
            .scaling
            .as_ref()
            .and_then(|s| s.last())
            .or(partial.cells.last());
        if let Some(c) = cell {
            let b = self.given.get(self.current).copied().unwrap_or(0.0);
            let predicted = (
                self.model.overhead_s(self.phase, self.size),
                self.model.sampling_s(self.phase, self.size, b),
            );
            self.observed
                .record(self.phase, (c.setup_s, c.elapsed_s), predicted);
        }
        self.finished += 1;
        self.observer.cell_finished(partial);
        self.status();
    }

    /// The first real buffer's set-up is the machine's set-up rate at the
    /// size measured: it corrects the calibration for every buffer after.
    fn buffer_ready(&mut self, setup: &crate::model::matrix::BufferSetup) {
        let predicted = self.model.setup_s(self.phase, setup.bytes);
        self.observed
            .record_setup(self.phase, setup.seconds, predicted);
        self.buffers_left = self.buffers_left.saturating_sub(1);
        self.observer.buffer_ready(setup);
        self.status();
    }

    fn cell_failed(&mut self, index: usize, total: usize, reason: &str, partial: &MatrixResult) {
        self.finished += 1;
        self.observer.cell_failed(index, total, reason, partial);
        self.status();
    }

    /// The sampling for cell `index`: the largest that lets this cell and
    /// the rest of this phase fit in what is left of the budget after the
    /// later phases' share, with the costs corrected by the cells measured so
    /// far; never more than [`CELL_MAX_S`], and the floor (a warm-up and
    /// three samples) when nothing is left.
    fn rule_for_cell(&mut self, index: usize, planned: StopRule) -> StopRule {
        let left = self.budget_s - (self.clock)() - self.reserve_s();
        let mut load = self.left(index);
        load.cells = load.cells.max(1);
        let c = self.observed.correct(&self.model, self.phase);
        let b = fit(&c, self.size, &[load], left, 0.0)
            .unwrap_or(0.0)
            .min(CELL_MAX_S);
        if let Some(g) = self.given.get_mut(index) {
            *g = b;
        }
        self.last_budget_s = b;
        let rule = StopRule {
            budget: std::time::Duration::from_secs_f64(b),
            ..planned
        };
        self.observer.rule_for_cell(index, rule)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::matrix::tests::{cell, sample};
    use std::cell::Cell as StdCell;
    use std::rc::Rc;

    #[derive(Default)]
    struct Seen {
        statuses: Vec<Status>,
        finished: usize,
        rules: Vec<f64>,
    }
    impl Progress for Seen {
        fn cell_finished(&mut self, _p: &MatrixResult) {
            self.finished += 1;
        }
        fn rule_for_cell(&mut self, _i: usize, r: StopRule) -> StopRule {
            self.rules.push(r.budget.as_secs_f64());
            r
        }
    }
    impl Observer for Seen {
        fn status(&mut self, s: &Status) {
            self.statuses.push(s.clone());
        }
    }

    #[test]
    fn a_slow_first_cell_shrinks_the_rules_of_the_rest() {
        let now = Rc::new(StdCell::new(0.0));
        let t = now.clone();
        let mut seen = Seen::default();
        let mut observed = Observed::default();
        let size = 64 << 20;
        // 20 cells in 10 s: the model predicts about 25 ms of set-up each.
        let mut k = Keeper::new(
            &mut seen,
            Box::new(move || t.get()),
            10.0,
            size,
            CostModel::SERVER,
            &mut observed,
            (
                Load {
                    phase: Phase::Latency,
                    cells: 20,
                    buffers: 4,
                },
                0.4,
            ),
            vec![],
            0,
            20,
        );
        k.cell_started(0, 20, "first");
        let first = k.rule_for_cell(0, StopRule::default()).budget.as_secs_f64();
        assert!(first > 0.3 && first <= CELL_MAX_S, "{first}");
        // The first cell took 0.3 s more than its sampling, 12x the model.
        let mut m = sample();
        let mut c = cell(0, 0, 90.0, 1.0);
        c.setup_s = 0.3;
        c.elapsed_s = first;
        m.push(c);
        now.set(0.3 + first);
        k.cell_finished(&m);
        k.cell_started(1, 20, "second");
        let second = k.rule_for_cell(1, StopRule::default()).budget.as_secs_f64();
        assert!(second < first, "{second} !< {first}");
        // The rest, at the corrected costs, fits what is left.
        let corrected = observed_cost(&k, size, second);
        assert!(19.0 * corrected <= 10.0 - now.get() + 1e-6);
        drop(k);
        assert_eq!(seen.rules, vec![first, second], "forwarded");
        assert_eq!(seen.finished, 1);
        let last = seen.statuses.last().unwrap();
        assert_eq!((last.phase_done, last.done, last.total), (1, 1, 20));
        assert!(last.eta_s.unwrap() > 0.0);
    }

    /// A keeper at 15 s into a 60 s job, 4 cells of its phase left.
    fn at_15_s<'a>(seen: &'a mut Seen, observed: &'a mut Observed) -> Keeper<'a> {
        Keeper::new(
            seen,
            Box::new(|| 15.0),
            36.0,
            64 << 20,
            CostModel::SERVER,
            observed,
            (
                Load {
                    phase: Phase::Latency,
                    cells: 4,
                    buffers: 1,
                },
                0.2,
            ),
            vec![],
            0,
            4,
        )
    }

    #[test]
    fn the_eta_runs_to_the_budget_the_extra_phases_fill() {
        let (mut seen, mut observed) = (Seen::default(), Observed::default());
        let mut k = at_15_s(&mut seen, &mut observed).then_filled_until(60.0);
        let own = k.eta_s();
        assert!(own < 45.0, "{own}");
        k.cell_started(0, 4, "first");
        drop(k);
        let s = seen.statuses.last().unwrap();
        assert_eq!(s.elapsed_s + s.eta_s.unwrap(), 60.0);
        // Without phases after it, the matrices' own estimate.
        let (mut seen, mut observed) = (Seen::default(), Observed::default());
        let mut k = at_15_s(&mut seen, &mut observed);
        k.cell_started(0, 4, "first");
        drop(k);
        assert_eq!(seen.statuses.last().unwrap().eta_s, Some(own));
    }

    /// What the rest of the phase costs at sampling `b`, as corrected.
    fn observed_cost(k: &Keeper, size: u64, b: f64) -> f64 {
        let c = k.observed.correct(&k.model, Phase::Latency);
        (c.phase_s(k.left(1), size, b)) / 19.0
    }

    #[test]
    fn the_first_real_buffer_corrects_the_set_up_of_the_rest() {
        let mut seen = Seen::default();
        let mut observed = Observed::default();
        let size = 1 << 30;
        let lat = Load {
            phase: Phase::Latency,
            cells: 16,
            buffers: 4,
        };
        let mut k = Keeper::new(
            &mut seen,
            Box::new(|| 1.0),
            30.0,
            size,
            CostModel::SERVER,
            &mut observed,
            (lat, 0.5),
            vec![],
            0,
            16,
        );
        let before = k.eta_s();
        // The model says 0.3 s for a GiB; the real buffer took 3 s.
        k.buffer_ready(&crate::model::matrix::BufferSetup {
            mem_node: 0,
            bytes: size,
            touched_by_cpu: 0,
            page_tables_node: Some(0),
            seconds: 3.0,
            cells: 0,
        });
        assert_eq!(k.buffers_left, 3);
        let after = k.eta_s();
        // Three buffers to go at 10x the model's set-up.
        let c = k.observed.correct(&k.model, Phase::Latency);
        assert!((c.setup - 10.0).abs() < 1e-9);
        assert!(after > before + 5.0, "{before} -> {after}");
        let b = k.rule_for_cell(0, StopRule::default()).budget.as_secs_f64();
        assert!(c.phase_s(k.left(0), size, b) <= 29.0 + 1e-6);
    }

    #[test]
    fn later_phases_keep_their_share() {
        let mut seen = Seen::default();
        let mut observed = Observed::default();
        let later = vec![Later {
            load: Load {
                phase: Phase::Bandwidth,
                cells: 10,
                buffers: 2,
            },
            cell_budget_s: 0.5,
        }];
        let mut alone = Observed::default();
        let mut seen2 = Seen::default();
        let mut with = Keeper::new(
            &mut seen,
            Box::new(|| 0.0),
            10.0,
            64 << 20,
            CostModel::SERVER,
            &mut observed,
            (
                Load {
                    phase: Phase::Latency,
                    cells: 10,
                    buffers: 2,
                },
                0.4,
            ),
            later,
            0,
            20,
        );
        let mut without = Keeper::new(
            &mut seen2,
            Box::new(|| 0.0),
            10.0,
            64 << 20,
            CostModel::SERVER,
            &mut alone,
            (
                Load {
                    phase: Phase::Latency,
                    cells: 10,
                    buffers: 2,
                },
                0.4,
            ),
            vec![],
            0,
            10,
        );
        let a = with.rule_for_cell(0, StopRule::default()).budget;
        let b = without.rule_for_cell(0, StopRule::default()).budget;
        assert!(a < b, "{a:?} !< {b:?}");
    }
}
