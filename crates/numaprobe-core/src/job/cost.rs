//! What the main job's matrices cost in wall time: one buffer set-up per
//! memory node (allocate, touch, build the chain), and per cell its own
//! overhead (flush the buffer from the caches, probe, check the pages) and
//! its sampling, as a model the planner can ask before anything runs. The
//! model starts from a small calibration on this machine ([`calibrate`])
//! and is corrected from what was measured ([`Observed`]): the first real
//! buffer's set-up corrects the set-up rate, every cell the per-cell costs,
//! so the budget is kept with the machine's real costs, not with a guess.

use super::Phase;
use crate::experiments::{target_sample_ns, ExperimentError};
use crate::kernels::chase::{self, ChasePattern};
use crate::placement::{BufferSpec, MemPolicy, NodeBuffer, PageKind};
use crate::stats::{StopRule, BUDGET_MIN_SAMPLES};
use serde::Serialize;
use std::time::{Duration, Instant};

const GIB: f64 = (1u64 << 30) as f64;

/// Seconds a cell costs, from a few per-byte rates. Every figure is an upper
/// estimate: a cell whose CV converges early costs less, which the
/// observed correction then gives to the cells after it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CostModel {
    /// Per cell, whatever the buffer: starting and pinning the threads, the
    /// latency probe.
    pub fixed_s: f64,
    /// Latency set-up of one memory node's buffer, per GiB: allocate,
    /// touch, build the chain.
    pub latency_setup_s_per_gib: f64,
    /// Bandwidth set-up of one memory node's buffer, per GiB: allocate,
    /// touch.
    pub bandwidth_setup_s_per_gib: f64,
    /// Per cell and GiB of its buffer: the cache flush before it and the
    /// placement check after it.
    #[serde(default)]
    pub cell_s_per_gib: f64,
    /// One streaming pass over a GiB: a bandwidth sample is at least one pass.
    pub pass_s_per_gib: f64,
    /// Where the rates come from: `calibration` (timed on this machine before
    /// the first cell) or `assumed` (no calibration, e.g. in tests).
    pub source: &'static str,
}

impl CostModel {
    /// Rates that hold for a slow machine (a few GB/s of page touching), for
    /// when no calibration could run.
    pub const ASSUMED: CostModel = CostModel {
        fixed_s: 0.005,
        latency_setup_s_per_gib: 1.0,
        bandwidth_setup_s_per_gib: 0.5,
        cell_s_per_gib: 0.1,
        pass_s_per_gib: 0.25,
        source: "assumed",
    };

    /// Costs of a plausible server (0.3 s/GiB of latency set-up), for the
    /// planner's and the keeper's tests.
    #[cfg(test)]
    pub(crate) const SERVER: CostModel = CostModel {
        fixed_s: 0.005,
        latency_setup_s_per_gib: 0.3,
        bandwidth_setup_s_per_gib: 0.2,
        cell_s_per_gib: 0.03,
        pass_s_per_gib: 0.1,
        source: "assumed",
    };

    /// One memory node's buffer set-up.
    pub fn setup_s(&self, phase: Phase, size: u64) -> f64 {
        let gib = size as f64 / GIB;
        match phase {
            Phase::Latency => gib * self.latency_setup_s_per_gib,
            Phase::Bandwidth => gib * self.bandwidth_setup_s_per_gib,
        }
    }

    /// A cell's own overhead on a buffer already set up.
    pub fn overhead_s(&self, phase: Phase, size: u64) -> f64 {
        let gib = size as f64 / GIB;
        match phase {
            Phase::Latency => self.fixed_s + gib * self.cell_s_per_gib,
            // The probe that sizes the samples is one pass, before sampling.
            Phase::Bandwidth => self.fixed_s + gib * (self.cell_s_per_gib + self.pass_s_per_gib),
        }
    }

    /// Length of one sample under a cell budget of `budget_s`: what the
    /// experiments aim for, and for bandwidth at least one pass.
    pub fn sample_s(&self, phase: Phase, size: u64, budget_s: f64) -> f64 {
        let target = target_sample_ns(Duration::from_secs_f64(budget_s.max(0.0))) / 1e9;
        match phase {
            Phase::Latency => target,
            Phase::Bandwidth => target.max(size as f64 / GIB * self.pass_s_per_gib),
        }
    }

    /// Sampling time, warm-up included, under a cell budget: the budget plus
    /// the sample that runs past it, and never less than the warm-up and the
    /// three samples a median needs.
    pub fn sampling_s(&self, phase: Phase, size: u64, budget_s: f64) -> f64 {
        let s = self.sample_s(phase, size, budget_s);
        let floor_runs = (StopRule::default().warmup + BUDGET_MIN_SAMPLES) as f64;
        (budget_s + s).max(floor_runs * s)
    }

    /// A cell on a buffer already set up: its overhead and its sampling.
    pub fn cell_s(&self, phase: Phase, size: u64, budget_s: f64) -> f64 {
        self.overhead_s(phase, size) + self.sampling_s(phase, size, budget_s)
    }
}

/// What the buffer set-ups and the cells cost against what the model
/// predicted, per phase; the ratios correct the model for what is still to
/// come.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// [latency, bandwidth]: (measured, predicted) seconds.
    setup: [(f64, f64); 2],
    overhead: [(f64, f64); 2],
    sampling: [(f64, f64); 2],
    setups: [usize; 2],
    cells: [usize; 2],
}

impl Observed {
    /// Record one memory node's buffer set-up: measured and predicted.
    pub fn record_setup(&mut self, phase: Phase, measured: f64, predicted: f64) {
        let i = phase as usize;
        self.setup[i].0 += measured.max(0.0);
        self.setup[i].1 += predicted.max(1e-9);
        self.setups[i] += 1;
    }

    /// Record one finished cell: its measured (overhead, sampling) and the
    /// model's prediction of each. They are corrected apart: the sampling
    /// is a budget the cell keeps to within a sample, its overhead (flush,
    /// probe, check) is what the small calibration can misjudge by 10x,
    /// and one ratio for both would shrink the next cell's sampling
    /// estimate with an overestimated flush, so the keeper would hand it
    /// seconds the budget does not have.
    pub fn record(&mut self, phase: Phase, measured: (f64, f64), predicted: (f64, f64)) {
        let i = phase as usize;
        self.overhead[i].0 += measured.0.max(0.0);
        self.overhead[i].1 += predicted.0.max(1e-9);
        self.sampling[i].0 += measured.1.max(0.0);
        self.sampling[i].1 += predicted.1.max(1e-9);
        self.cells[i] += 1;
    }

    pub fn cells(&self, phase: Phase) -> usize {
        self.cells[phase as usize]
    }

    /// The ratio for `phase`, or over every phase when this one has no
    /// measured cell yet (a machine slow to touch memory for the latency
    /// matrix is slow for the bandwidth matrix too); 1 with no data.
    fn ratio(pairs: &[(f64, f64); 2], cells: &[usize; 2], phase: Phase) -> f64 {
        let i = phase as usize;
        let (m, p) = if cells[i] > 0 {
            pairs[i]
        } else {
            (pairs[0].0 + pairs[1].0, pairs[0].1 + pairs[1].1)
        };
        if p <= 0.0 || m <= 0.0 {
            return 1.0;
        }
        // A wild ratio from one odd cell must not starve or flood the rest.
        (m / p).clamp(0.05, 50.0)
    }

    /// The model corrected by what was measured.
    pub fn correct(&self, model: &CostModel, phase: Phase) -> Corrected {
        Corrected {
            model: *model,
            setup: Self::ratio(&self.setup, &self.setups, phase),
            overhead: Self::ratio(&self.overhead, &self.cells, phase),
            sampling: Self::ratio(&self.sampling, &self.cells, phase),
        }
    }
}

/// A cost model with the measured correction applied.
#[derive(Debug, Clone, Copy)]
pub struct Corrected {
    pub model: CostModel,
    pub setup: f64,
    pub overhead: f64,
    pub sampling: f64,
}

impl Corrected {
    /// One memory node's buffer set-up.
    pub fn setup_s(&self, phase: Phase, size: u64) -> f64 {
        self.model.setup_s(phase, size) * self.setup
    }

    /// One cell on a buffer already set up.
    pub fn cell_s(&self, phase: Phase, size: u64, budget_s: f64) -> f64 {
        self.model.overhead_s(phase, size) * self.overhead
            + self.model.sampling_s(phase, size, budget_s) * self.sampling
    }

    /// `cells` cells on `buffers` buffers.
    pub fn phase_s(&self, load: Load, size: u64, budget_s: f64) -> f64 {
        load.buffers as f64 * self.setup_s(load.phase, size)
            + load.cells as f64 * self.cell_s(load.phase, size, budget_s)
    }
}

/// What a phase (or what is left of it) has to do: its cells, and the
/// memory nodes' buffers they are measured on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Load {
    pub phase: Phase,
    pub cells: usize,
    pub buffers: usize,
}

impl Load {
    /// The load of measuring `cells` (CPU node, memory node): one buffer
    /// per distinct memory node.
    pub fn of(phase: Phase, cells: &[(u32, u32)]) -> Load {
        let mut mems: Vec<u32> = cells.iter().map(|c| c.1).collect();
        mems.sort_unstable();
        mems.dedup();
        Load {
            phase,
            cells: cells.len(),
            buffers: mems.len(),
        }
    }
}

/// Bytes the calibration allocates: enough to be past the TLB and the
/// first cache levels, small enough to cost a few milliseconds.
pub const CALIBRATION_BYTES: usize = 8 << 20;

/// Time what a buffer's set-up does (allocate and touch a buffer bound to
/// `mem_node`, build a random chain in it), what a cell adds on it (flush
/// it from the caches, check its pages) and one read pass, on a small
/// buffer, in a thread of its own so the caller's affinity is untouched.
/// The result is extrapolated per GiB ([`Calibration::model`]); the first
/// real buffer and the measured cells correct it.
pub fn calibrate(mem_node: u32, pages: PageKind) -> Result<CostModel, ExperimentError> {
    std::thread::scope(|s| {
        s.spawn(|| calibrate_here(mem_node, pages))
            .join()
            .map_err(|_| ExperimentError::Panicked)?
    })
    .map(|c| c.model())
}

/// One part of the calibration as it ran: its wall time and the thread's
/// own CPU time (None where the kernel does not give it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timed {
    pub wall_s: f64,
    pub cpu_s: Option<f64>,
}

impl Timed {
    /// Time `f` on the calling thread.
    fn run<T>(f: impl FnOnce() -> T) -> (T, Timed) {
        let cpu0 = crate::held::thread_cpu_ns();
        let t0 = Instant::now();
        let out = f();
        let wall_s = t0.elapsed().as_secs_f64();
        let cpu_s = cpu0
            .zip(crate::held::thread_cpu_ns())
            .map(|(a, b)| b.saturating_sub(a) as f64 / 1e9);
        (out, Timed { wall_s, cpu_s })
    }

    /// What the work cost: the thread's CPU time. The wall time adds the
    /// time the thread waited for a CPU, which on a busy machine can be
    /// most of a probe this short, and does not grow with the buffer the
    /// way the work does: extrapolated per GiB, a probe of 10 ms that
    /// waited a second for its CPU becomes two minutes per GiB, and the
    /// plan refuses a budget that holds the real buffer many times over.
    /// The real buffer's set-up ([`super::real_buffer`]) then brings the
    /// machine's load back in, measured on the scale it costs at. The wall
    /// time where the CPU time is missing or reads zero (a clock too coarse
    /// for the part).
    pub fn cost_s(&self) -> f64 {
        match self.cpu_s {
            Some(c) if c > 0.0 => c.min(self.wall_s),
            _ => self.wall_s,
        }
    }
}

/// What the calibration measured on its [`CALIBRATION_BYTES`] buffer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    pub bytes: usize,
    /// Allocate and touch.
    pub touch: Timed,
    /// Build the chain.
    pub chain: Timed,
    /// Flush from the caches and check the pages: a cell's own overhead.
    pub cell: Timed,
    /// One read pass.
    pub pass: Timed,
}

impl Calibration {
    /// The rates per GiB, from what each part cost ([`Timed::cost_s`]).
    pub fn model(&self) -> CostModel {
        let per_gib = GIB / self.bytes.max(1) as f64;
        let touched = self.touch.cost_s();
        CostModel {
            fixed_s: CostModel::ASSUMED.fixed_s,
            latency_setup_s_per_gib: (touched + self.chain.cost_s()) * per_gib,
            bandwidth_setup_s_per_gib: touched * per_gib,
            cell_s_per_gib: self.cell.cost_s() * per_gib,
            pass_s_per_gib: self.pass.cost_s() * per_gib,
            source: "calibration",
        }
    }
}

fn calibrate_here(mem_node: u32, pages: PageKind) -> Result<Calibration, ExperimentError> {
    let spec = BufferSpec::new(CALIBRATION_BYTES, MemPolicy::Bind(mem_node), pages);
    let (buf, touch) = Timed::run(|| {
        NodeBuffer::alloc(&spec).map(|mut buf| {
            buf.touch();
            buf
        })
    });
    let mut buf = buf?;
    let (built, chain) = Timed::run(|| {
        // SAFETY: the buffer is ours, page-aligned, and outlives the chain.
        unsafe {
            chase::build(
                buf.as_mut_ptr(),
                buf.len(),
                64,
                ChasePattern::Random { window_pages: None },
                1,
            )
        }
    });
    built?;
    let (checked, cell) = Timed::run(|| {
        buf.flush_caches();
        buf.verify()
    });
    checked?;
    let words = buf.len() / 8;
    let p = buf.as_ptr() as *const u64;
    let ((), pass) = Timed::run(|| {
        let mut sum = 0u64;
        for i in (0..words).step_by(8) {
            // SAFETY: i < words, inside the mapping; one word per cache line
            // is enough to bring every line in, which is what a pass costs.
            sum = sum.wrapping_add(unsafe { std::ptr::read_volatile(p.add(i)) });
        }
        std::hint::black_box(sum);
    });
    Ok(Calibration {
        bytes: buf.len(),
        touch,
        chain,
        cell,
        pass,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampling_has_a_floor_and_grows_with_the_budget() {
        let m = CostModel::ASSUMED;
        let floor = m.sampling_s(Phase::Latency, 64 << 20, 0.0);
        // Warm-up and three samples of the shortest (5 ms) length.
        assert!((floor - 0.02).abs() < 1e-9, "{floor}");
        assert!(m.sampling_s(Phase::Latency, 64 << 20, 1.0) > 1.0);
        // A bandwidth sample is at least one pass over the buffer.
        let big = m.sampling_s(Phase::Bandwidth, 1 << 30, 0.0);
        assert!(big >= 4.0 * m.pass_s_per_gib, "{big}");
    }

    #[test]
    fn observed_ratios_correct_the_model_per_phase_then_globally() {
        let m = CostModel::ASSUMED;
        let mut o = Observed::default();
        assert_eq!(o.correct(&m, Phase::Latency).setup, 1.0);
        // Latency set-up took 4x the prediction: bandwidth, not measured
        // yet, is assumed 4x too.
        o.record_setup(Phase::Latency, 0.4, 0.1);
        assert!((o.correct(&m, Phase::Latency).setup - 4.0).abs() < 1e-9);
        assert!((o.correct(&m, Phase::Bandwidth).setup - 4.0).abs() < 1e-9);
        assert_eq!(o.correct(&m, Phase::Latency).sampling, 1.0);
        o.record_setup(Phase::Bandwidth, 0.1, 0.1);
        assert!((o.correct(&m, Phase::Bandwidth).setup - 1.0).abs() < 1e-9);
        // Cells correct the per-cell costs, not the set-up: their overhead
        // and their sampling apart.
        o.record(Phase::Latency, (0.3, 0.2), (0.1, 0.1));
        let c = o.correct(&m, Phase::Latency);
        assert!((c.overhead - 3.0).abs() < 1e-9, "{c:?}");
        assert!((c.sampling - 2.0).abs() < 1e-9 && (c.setup - 4.0).abs() < 1e-9);
        assert_eq!(o.cells(Phase::Latency), 1);
    }

    /// A calibration that put the flush and check at 1.66 s/GiB, where the
    /// cell's took 0.03 s for 256 MiB (a `--budget 2s` run on a loaded
    /// machine): the overestimated overhead must not make a second of
    /// sampling look like a tenth, or the keeper hands the next cell the
    /// 2 s it does not have.
    #[test]
    fn an_overestimated_overhead_does_not_shrink_the_sampling_estimate() {
        let mut m = CostModel::SERVER;
        m.cell_s_per_gib = 1.66;
        let size = 256 << 20;
        let mut o = Observed::default();
        let predicted = (
            m.overhead_s(Phase::Latency, size),
            m.sampling_s(Phase::Latency, size, 0.12),
        );
        o.record(Phase::Latency, (0.03, 0.12), predicted);
        let c = o.correct(&m, Phase::Bandwidth);
        // A second of bandwidth sampling is still about a second.
        let cell = c.cell_s(Phase::Bandwidth, size, 1.0);
        assert!(cell >= 1.0, "{cell}");
        assert!(c.overhead < 0.2, "{c:?}");
    }

    #[test]
    fn a_part_costs_its_cpu_time_and_the_wall_time_only_without_it() {
        let t = |wall_s, cpu_s| Timed { wall_s, cpu_s };
        assert_eq!(t(1.2, Some(0.01)).cost_s(), 0.01);
        // A CPU clock a little ahead of the wall clock is held to it.
        assert_eq!(t(0.01, Some(0.0102)).cost_s(), 0.01);
        assert_eq!(t(0.5, None).cost_s(), 0.5);
        assert_eq!(t(0.5, Some(0.0)).cost_s(), 0.5);
        // Per GiB: an 8 MiB part is 1/128 of one.
        let c = Calibration {
            bytes: CALIBRATION_BYTES,
            touch: t(1.0, Some(0.002)),
            chain: t(1.0, Some(0.003)),
            cell: t(1.0, Some(0.001)),
            pass: t(1.0, Some(0.0005)),
        }
        .model();
        assert!((c.latency_setup_s_per_gib - 0.64).abs() < 1e-9, "{c:?}");
        assert!((c.bandwidth_setup_s_per_gib - 0.256).abs() < 1e-9, "{c:?}");
        assert!((c.cell_s_per_gib - 0.128).abs() < 1e-9, "{c:?}");
        assert!((c.pass_s_per_gib - 0.064).abs() < 1e-9, "{c:?}");
        assert_eq!(c.source, "calibration");
    }

    #[test]
    fn calibration_on_this_machine_gives_positive_rates() {
        let live = crate::placement::LiveSystem::read().unwrap();
        let node = *live.mems_allowed.first().unwrap();
        let c = calibrate(node, PageKind::Small).unwrap();
        assert_eq!(c.source, "calibration");
        assert!(c.latency_setup_s_per_gib > 0.0);
        assert!(c.latency_setup_s_per_gib >= c.bandwidth_setup_s_per_gib);
        assert!(c.pass_s_per_gib > 0.0);
        assert!(c.cell_s_per_gib > 0.0);
    }

    #[test]
    fn a_phase_costs_one_set_up_per_memory_node() {
        let c = Observed::default().correct(&CostModel::SERVER, Phase::Latency);
        let cells = [(0, 0), (0, 1), (1, 0), (1, 1), (2, 1)];
        let load = Load::of(Phase::Latency, &cells);
        assert_eq!((load.cells, load.buffers), (5, 2));
        let size = 1 << 30;
        let want = 2.0 * 0.3 + 5.0 * c.cell_s(Phase::Latency, size, 0.1);
        assert!((c.phase_s(load, size, 0.1) - want).abs() < 1e-9);
        // Each matrix's buffer at its own rate, in proportion to its size.
        let m = CostModel::SERVER;
        let two = 2u64 << 30;
        assert!(
            (m.setup_s(Phase::Bandwidth, two) - 2.0 * m.bandwidth_setup_s_per_gib).abs() < 1e-12
        );
        assert!((m.setup_s(Phase::Latency, two) - 2.0 * m.latency_setup_s_per_gib).abs() < 1e-12);
        // A cell on a set-up buffer costs far less than the set-up itself.
        assert!(c.cell_s(Phase::Latency, size, 0.0) < c.setup_s(Phase::Latency, size));
    }
}
