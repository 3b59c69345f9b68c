//! The sweep's plan: the range (`FROM-TO`), the geometric sizes, the
//! measuring CPU and memory node, the page kinds and the caches the
//! topology reports, all resolved and checked before anything is allocated.

use super::super::{cpus, ExperimentError};
use crate::model::sweep::CacheLevel;
use crate::placement::{BufferSpec, LiveSystem, MemPolicy, PageKind};
use crate::stats::StopRule;
use crate::topology::Topology;
use crate::units::format_size;
use std::time::Duration;

/// Every 64-byte line of the working set is one step of the chain.
pub(crate) const LINE: u64 = 64;

/// What the user asked for; `None` means "the default".
#[derive(Debug, Clone, Default)]
pub struct SweepConfig {
    /// Smallest and largest working set, bytes. Default: 4 KiB to
    /// [`default_max`].
    pub range: Option<(u64, u64)>,
    /// Default [`DEFAULT_POINTS_PER_OCTAVE`].
    pub points_per_octave: Option<u32>,
    /// Default: the node of the first allowed CPU (or of `cpus`).
    pub cpu_node: Option<u32>,
    /// Default: the CPU node's own memory (local).
    pub mem_node: Option<u32>,
    /// The CPU that chases (`--cpus`: exactly one). Default: the CPU node's
    /// first allowed core.
    pub cpus: Option<Vec<u32>>,
    /// Default: 4 KiB and THP when the kernel offers THP, else 4 KiB only.
    pub pages: Option<Vec<PageKind>>,
    /// Per point; default [`default_rule`].
    pub rule: Option<StopRule>,
    pub seed: Option<u64>,
}

pub const DEFAULT_POINTS_PER_OCTAVE: u32 = 4;
pub const DEFAULT_FROM: u64 = 4 << 10;
/// The largest default working set: past every LLC of today's machines.
pub const DEFAULT_TO: u64 = 2 << 30;
/// The default range ends at this many times the largest cache in front of
/// the memory node (past it the curve is flat: every line misses), and at
/// least at [`DEFAULT_TO_FLOOR`].
pub const DEFAULT_CACHE_FACTOR: u64 = 4;
pub const DEFAULT_TO_FLOOR: u64 = 64 << 20;
/// A point's set-up per GiB of working set when it could not be timed on
/// the machine ([`SweepRates::fallback`]): the random chain built over it
/// and the lap that settles it, each about one miss per 64-byte line past
/// the caches (100-200 ns a line, 2-3 s a GiB), an upper figure.
pub const POINT_SETUP_S_PER_GIB: f64 = 3.0;
/// Mapping and touching a page kind's buffer of the largest size, per GiB,
/// when it could not be timed.
pub const BUFFER_S_PER_GIB: f64 = 0.5;
/// The largest working set the calibration sets up: past the caches of
/// most machines (so its set-up rate is the one of the points that hold
/// most of a sweep's set-up), and cheap enough (a fraction of a second) to
/// pay before a sweep of `4K-2G` too.
pub const CALIBRATION_MAX_BYTES: u64 = 64 << 20;
/// More points than this is a mistake (minutes per octave), not a sweep.
pub const MAX_POINTS: usize = 1000;

/// The per-point stop rule by default: a point is one small cell, and a
/// sweep has a hundred of them (a minute in all, not several).
pub fn default_rule() -> StopRule {
    StopRule {
        budget: Duration::from_millis(200),
        ..StopRule::default()
    }
}

#[derive(Debug, Clone)]
pub struct SweepPlan {
    pub cpu_node: u32,
    pub cpu: u32,
    pub mem_node: u32,
    pub sizes: Vec<u64>,
    pub points_per_octave: u32,
    pub pages: Vec<PageKind>,
    pub rule: StopRule,
    pub seed: u64,
    pub caches: Vec<CacheLevel>,
    pub notes: Vec<String>,
}

impl SweepPlan {
    /// One step per (page kind, size).
    pub fn steps(&self) -> usize {
        self.sizes.len() * self.pages.len()
    }

    /// The planned seconds of every step at the fallback rates (nothing
    /// timed on the machine); see [`SweepPlan::step_costs_at`].
    pub fn step_costs(&self) -> Vec<f64> {
        self.step_costs_at(&SweepRates::fallback())
    }

    /// The planned seconds of every step at `rates`, in the order they run:
    /// the point's sampling, its set-up for its size, and for a page kind's
    /// first point the buffer it maps. Points grow geometrically, so the
    /// last octaves hold most of a sweep's set-up: a plan of equal steps
    /// would promise a fraction of the time.
    pub fn step_costs_at(&self, rates: &SweepRates) -> Vec<f64> {
        const GIB: f64 = (1u64 << 30) as f64;
        let largest = self.sizes.last().copied().unwrap_or(0) as f64 / GIB;
        self.pages
            .iter()
            .flat_map(|_| {
                self.sizes.iter().enumerate().map(move |(i, &size)| {
                    let buffer = if i == 0 {
                        largest * rates.buffer_s_per_gib
                    } else {
                        0.0
                    };
                    rates.point_sampling_s(&self.rule)
                        + size as f64 / GIB * rates.setup_s_per_gib
                        + buffer
                })
            })
            .collect()
    }

    /// The working sets the calibration measures, smallest first: the
    /// sweep's smallest, its largest up to [`CALIBRATION_MAX_BYTES`], and
    /// the point halfway between them on the log scale: a cache-resident, a
    /// middle and a memory-bound point are sampled.
    pub fn calibration_sizes(&self) -> Vec<u64> {
        let Some(&first) = self.sizes.first() else {
            return Vec::new();
        };
        let last = self
            .sizes
            .iter()
            .copied()
            .filter(|&s| s <= CALIBRATION_MAX_BYTES)
            .max()
            .unwrap_or(first);
        let middle = ((first as f64).ln() + (last as f64).ln()) / 2.0;
        let mid = self
            .sizes
            .iter()
            .copied()
            // None above `last` is nearer the middle than `last` is.
            .min_by(|a, b| {
                let d = |s: u64| ((s as f64).ln() - middle).abs();
                d(*a).total_cmp(&d(*b))
            })
            .unwrap_or(first);
        let mut v = vec![first, mid, last];
        v.dedup();
        v
    }
}

/// The rates a sweep's steps are planned at: timed on the machine right
/// before the run ([`super::calibrate`]), or [`SweepRates::fallback`] when
/// nothing could be timed.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepRates {
    /// A point's chain and settling lap, seconds per GiB of its working set.
    pub setup_s_per_gib: f64,
    /// Mapping and touching a page kind's buffer, seconds per GiB.
    pub buffer_s_per_gib: f64,
    /// (working set, seconds) of the points sampled under the plan's rule,
    /// smallest first.
    pub sampling: Vec<(u64, f64)>,
    /// True when the figures were timed on this machine.
    pub measured: bool,
}

impl SweepRates {
    /// The rates when nothing could be timed: [`POINT_SETUP_S_PER_GIB`],
    /// [`BUFFER_S_PER_GIB`], every point sampling for its whole budget.
    pub fn fallback() -> Self {
        SweepRates {
            setup_s_per_gib: POINT_SETUP_S_PER_GIB,
            buffer_s_per_gib: BUFFER_S_PER_GIB,
            sampling: Vec::new(),
            measured: false,
        }
    }

    /// The planned sampling of a point under `rule`: the slowest point of
    /// the calibration, or the budget and one sample more when none was
    /// sampled. Not each size's own: whether a point reaches its CV target
    /// before its budget is luck of the moment on a shared machine (a quiet
    /// L1 point often does, the same point under load does not), and the
    /// slowest is what most points cost.
    pub fn point_sampling_s(&self, rule: &StopRule) -> f64 {
        match self.sampling.iter().map(|p| p.1).reduce(f64::max) {
            Some(s) => s,
            None => rule.budget.as_secs_f64() + super::super::target_sample_ns(rule.budget) / 1e9,
        }
    }
}

/// The default end of the range: [`DEFAULT_CACHE_FACTOR`] times the largest
/// cache (at least [`DEFAULT_TO_FLOOR`]) as a power of two, within
/// [`DEFAULT_TO`] and what `memory_max` allows. Unknown caches: [`DEFAULT_TO`].
pub fn default_to(caches: &[CacheLevel], memory_max: u64) -> u64 {
    let to = match caches.iter().map(|c| c.size_bytes).max() {
        Some(c) => (c.saturating_mul(DEFAULT_CACHE_FACTOR))
            .max(DEFAULT_TO_FLOOR)
            .checked_next_power_of_two()
            .unwrap_or(DEFAULT_TO)
            .min(DEFAULT_TO),
        None => DEFAULT_TO,
    };
    to.min(memory_max)
}

/// Parse `FROM-TO` (`4K-1G`, `64KiB-512MiB`): sizes in the units of
/// `--size`. FROM must be below TO and hold at least two lines.
pub fn parse_range(s: &str) -> Result<(u64, u64), String> {
    let bad = |why: String| {
        format!("--sweep: invalid range '{s}' ({why}; valid: FROM-TO such as 4K-1G, sizes in B, K/KiB, M/MiB, G/GiB or kB/MB/GB)")
    };
    let Some((a, b)) = s.split_once('-') else {
        return Err(bad("no '-' between FROM and TO".into()));
    };
    let from =
        crate::units::parse_size(a.trim()).map_err(|_| bad(format!("'{a}' is not a size")))?;
    let to = crate::units::parse_size(b.trim()).map_err(|_| bad(format!("'{b}' is not a size")))?;
    if from < 2 * LINE {
        return Err(bad(format!(
            "FROM must be at least {} B, two lines",
            2 * LINE
        )));
    }
    if from >= to {
        return Err(bad("FROM must be smaller than TO".into()));
    }
    Ok((from, to))
}

/// `per_octave` geometric sizes from `from` to `to` (both included), each
/// rounded to whole 64-byte lines, without repeats.
pub fn sizes(from: u64, to: u64, per_octave: u32) -> Vec<u64> {
    let per = per_octave.max(1) as f64;
    let octaves = (to as f64 / from as f64).log2();
    let n = (octaves * per).round() as u64;
    let mut out: Vec<u64> = (0..=n)
        .map(|k| {
            let s = from as f64 * 2f64.powf(k as f64 / per);
            ((s / LINE as f64).round() as u64).max(2) * LINE
        })
        .map(|s| s.min(to.div_ceil(LINE) * LINE))
        .collect();
    out.dedup();
    out
}

/// The default largest size: [`DEFAULT_TO`], or the largest power of two
/// not above a quarter of what `mem_node` can give now nor above the run's
/// footprint limit ([`crate::placement::FootprintLimit`]; the sweep holds
/// one buffer of that size at a time).
pub fn default_max(live: &LiveSystem, mem_node: u32) -> u64 {
    let free = live.allocatable_bytes(mem_node).unwrap_or(DEFAULT_TO * 4);
    let limit = crate::placement::FootprintLimit::live(live).limit_bytes;
    let quarter = (free / 4).min(limit).max(DEFAULT_FROM * 2);
    let pow2 = 1u64 << (63 - quarter.leading_zeros());
    DEFAULT_TO.min(pow2)
}

/// The data and unified caches `cpu` uses, nearest first, plus the
/// memory-side caches in front of `mem_node`.
pub fn caches_of(topo: &Topology, cpu: u32, mem_node: u32) -> Vec<CacheLevel> {
    let mut v: Vec<(u32, CacheLevel)> = topo
        .caches
        .iter()
        .filter(|c| c.cpus.contains(&cpu) && !c.kind.eq_ignore_ascii_case("instruction"))
        .filter_map(|c| {
            let name = if c.level == 1 && c.kind.eq_ignore_ascii_case("data") {
                "L1d".to_string()
            } else {
                format!("L{}", c.level)
            };
            Some((
                c.level,
                CacheLevel {
                    name,
                    size_bytes: c.size_bytes?,
                },
            ))
        })
        .collect();
    v.sort_by_key(|(l, c)| (*l, c.size_bytes));
    v.dedup_by(|a, b| a.1.name == b.1.name);
    let mut out: Vec<CacheLevel> = v.into_iter().map(|(_, c)| c).collect();
    out.extend(
        topo.memory_side_cache(mem_node)
            .into_iter()
            .filter_map(|m| {
                Some(CacheLevel {
                    name: "memory-side".into(),
                    size_bytes: m.size_bytes?,
                })
            }),
    );
    out
}

/// Resolve defaults and check everything. Nothing is allocated here.
pub fn plan(topo: &Topology, cfg: &SweepConfig) -> Result<SweepPlan, ExperimentError> {
    let chosen = cfg
        .cpus
        .as_deref()
        .map(|c| cpus::resolve(topo, c))
        .transpose()?;
    if let Some(ch) = &chosen {
        if ch.cpus.len() != 1 {
            return Err(ExperimentError::Invalid(format!(
                "--cpus {}: the sweep chases from one CPU; list one",
                crate::units::format_list(&ch.cpus)
            )));
        }
    }
    let cpu_node = match (cfg.cpu_node, &chosen) {
        (Some(n), _) => n,
        (None, Some(ch)) => ch.nodes()[0],
        (None, None) => *topo
            .allowed_cpu_nodes()
            .first()
            .ok_or(ExperimentError::NoCpuNodes)?,
    };
    let mem_asked = cfg.mem_node.map(|m| vec![m]);
    let (rows, cols) = super::super::resolve_nodes(topo, Some(&[cpu_node]), mem_asked.as_deref())?;
    let cpu_node = rows[0];
    let mem_node = match cfg.mem_node {
        Some(_) => cols[0],
        None if cols.contains(&cpu_node) => cpu_node,
        None => cols[0],
    };
    let cpu = match &chosen {
        Some(ch) => ch.single_on(cpu_node).map_err(|_| {
            ExperimentError::Invalid(format!(
                "--cpus {}: that CPU is not on node {cpu_node}, which --cpu-nodes asks to measure from",
                ch.cpus[0]
            ))
        })?,
        None => *topo
            .allowed_core_cpus_of_node(cpu_node)
            .first()
            .ok_or(ExperimentError::CpuLessNode {
                node: cpu_node,
                cpu_nodes: topo.allowed_cpu_nodes(),
            })?,
    };
    let live = LiveSystem::read()?;
    let caches = caches_of(topo, cpu, mem_node);
    let (from, to) = match cfg.range {
        Some(r) => r,
        None => (
            DEFAULT_FROM,
            default_to(&caches, default_max(&live, mem_node)),
        ),
    };
    if from < 2 * LINE || from >= to {
        return Err(ExperimentError::Invalid(format!(
            "sweep range {}-{}: FROM must be at least 128 B and below TO",
            format_size(from),
            format_size(to)
        )));
    }
    let per = cfg.points_per_octave.unwrap_or(DEFAULT_POINTS_PER_OCTAVE);
    if !(1..=64).contains(&per) {
        return Err(ExperimentError::Invalid(format!(
            "--sweep-points {per}: give 1 to 64 points per octave"
        )));
    }
    let sizes = sizes(from, to, per);
    let pages = match &cfg.pages {
        Some(p) if !p.is_empty() => p.clone(),
        _ => match super::super::default_pages(&live) {
            PageKind::Thp => vec![PageKind::Small, PageKind::Thp],
            k => vec![k],
        },
    };
    if sizes.len() * pages.len() > MAX_POINTS {
        return Err(ExperimentError::Invalid(format!(
            "the sweep would measure {} points; at most {MAX_POINTS} (fewer points per octave or a narrower range)",
            sizes.len() * pages.len()
        )));
    }
    let largest = *sizes.last().expect("at least two sizes");
    let largest_usize = usize::try_from(largest)
        .map_err(|_| ExperimentError::Invalid(format!("size {largest} B is too large")))?;
    for &k in &pages {
        BufferSpec::new(largest_usize, MemPolicy::Bind(mem_node), k).check_capacity(&live, None)?;
    }
    let mut notes = super::super::memory_side_notes(topo, &[mem_node]);
    notes.extend(chosen.map(|c| c.note()));
    Ok(SweepPlan {
        cpu_node,
        cpu,
        mem_node,
        sizes,
        points_per_octave: per,
        pages,
        rule: cfg.rule.unwrap_or_else(default_rule),
        seed: cfg.seed.unwrap_or(super::super::latency::DEFAULT_SEED),
        caches,
        notes,
    })
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::experiments::testing;

    #[test]
    fn ranges_parse_and_bad_ones_say_what_is_valid() {
        assert_eq!(parse_range("4K-1G"), Ok((4 << 10, 1 << 30)));
        assert_eq!(parse_range("64KiB-512MiB"), Ok((64 << 10, 512 << 20)));
        for bad in ["1G-4K", "4K-4K", "4Q-1G", "4K", "64-1M", "-1G", "4K-"] {
            let e = parse_range(bad).unwrap_err();
            assert!(
                e.starts_with(&format!("--sweep: invalid range '{bad}'")),
                "{e}"
            );
            assert!(e.contains("valid: FROM-TO"), "{e}");
            assert!(!e.contains('\n'));
        }
        assert!(parse_range("1G-4K")
            .unwrap_err()
            .contains("smaller than TO"));
        assert!(parse_range("4Q-1G")
            .unwrap_err()
            .contains("'4Q' is not a size"));
    }

    #[test]
    fn sizes_are_geometric_whole_lines_and_end_at_the_range() {
        let s = sizes(4 << 10, 1 << 20, 4);
        assert_eq!(s.first(), Some(&(4 << 10)));
        assert_eq!(s.last(), Some(&(1 << 20)));
        // 8 octaves, 4 points each, both ends included.
        assert_eq!(s.len(), 33);
        assert!(s.iter().all(|x| x % 64 == 0));
        assert!(s.windows(2).all(|w| w[0] < w[1]));
        // Every 4th point is a power of two.
        assert_eq!(s[4], 8 << 10);
        assert_eq!(s[8], 16 << 10);
        assert_eq!(
            sizes(4 << 10, 64 << 10, 1),
            vec![4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10]
        );
    }

    #[test]
    fn default_max_is_a_power_of_two_within_memory() {
        let live = LiveSystem::read().unwrap();
        let m = default_max(&live, 0);
        assert!(m.is_power_of_two());
        assert!(m <= DEFAULT_TO);
        assert!(m <= live.allocatable_bytes(0).unwrap() / 4 || m == DEFAULT_FROM * 2);
    }

    fn cache(name: &str, size_bytes: u64) -> CacheLevel {
        CacheLevel {
            name: name.into(),
            size_bytes,
        }
    }

    #[test]
    fn the_default_range_ends_past_the_largest_cache() {
        let caches = [
            cache("L1d", 32 << 10),
            cache("L2", 1 << 20),
            cache("L3", 32 << 20),
        ];
        assert_eq!(default_to(&caches, u64::MAX), 128 << 20);
        // Not a power of two: up to the next one.
        assert_eq!(default_to(&[cache("L3", 48 << 20)], u64::MAX), 256 << 20);
        // A small cache still reaches memory; a huge one stops at 2 GiB.
        assert_eq!(default_to(&[cache("L2", 1 << 20)], u64::MAX), 64 << 20);
        assert_eq!(default_to(&[cache("L3", 480 << 20)], u64::MAX), DEFAULT_TO);
        // Unknown caches: the widest range; short memory: what it allows.
        assert_eq!(default_to(&[], u64::MAX), DEFAULT_TO);
        assert_eq!(default_to(&caches, 32 << 20), 32 << 20);
    }

    #[test]
    fn step_costs_grow_with_the_points_and_count_each_buffer() {
        let live = LiveSystem::read().unwrap();
        let topo = testing::live_topology();
        let mut cfg = tiny();
        cfg.range = Some((1 << 20, 1 << 30));
        cfg.pages = Some(vec![PageKind::Small, PageKind::Thp]);
        if default_max(&live, 0) < (4 << 30) {
            cfg.range = Some((1 << 20, 256 << 20));
        }
        let plan = plan(&topo, &cfg).unwrap();
        let c = plan.step_costs();
        assert_eq!(c.len(), plan.steps());
        let n = plan.sizes.len();
        // Sampling: the 20 ms budget and a 5 ms sample.
        let sampling = 0.025;
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        let largest = gib(*plan.sizes.last().unwrap());
        for k in 0..2 {
            for (i, &size) in plan.sizes.iter().enumerate() {
                let buffer = if i == 0 {
                    largest * BUFFER_S_PER_GIB
                } else {
                    0.0
                };
                let want = sampling + gib(size) * POINT_SETUP_S_PER_GIB + buffer;
                assert!(
                    (c[k * n + i] - want).abs() < 1e-12,
                    "{i}: {} {want}",
                    c[k * n + i]
                );
            }
        }
        assert!(c[n - 1] > c[n - 2] && c[n - 2] > c[1]);
    }

    /// A plan made by hand: the arithmetic is tested without the machine.
    fn plan_of(sizes: Vec<u64>, pages: Vec<PageKind>) -> SweepPlan {
        SweepPlan {
            cpu_node: 0,
            cpu: 0,
            mem_node: 0,
            sizes,
            points_per_octave: 1,
            pages,
            rule: default_rule(),
            seed: 1,
            caches: Vec::new(),
            notes: Vec::new(),
        }
    }

    #[test]
    fn step_costs_at_measured_rates_use_them_and_the_fallback_is_the_constants() {
        let mib = |m: u64| m << 20;
        let plan = plan_of(
            vec![mib(64), mib(256), mib(1024)],
            vec![PageKind::Small, PageKind::Thp],
        );
        let rates = SweepRates {
            setup_s_per_gib: 2.0,
            buffer_s_per_gib: 0.25,
            sampling: vec![(mib(64), 0.1)],
            measured: true,
        };
        let c = plan.step_costs_at(&rates);
        // Per kind: sampling 0.1, set-up 2 s/GiB, the 1 GiB buffer at 0.25 s
        // on the first point only.
        let want = [0.1 + 0.125 + 0.25, 0.1 + 0.5, 0.1 + 2.0];
        assert_eq!(c.len(), 6);
        for (i, w) in want.iter().chain(want.iter()).enumerate() {
            assert!((c[i] - w).abs() < 1e-12, "{i}: {} {w}", c[i]);
        }
        // Twice the set-up rate: the set-up part doubles, nothing else.
        let twice = SweepRates {
            setup_s_per_gib: 4.0,
            ..rates.clone()
        };
        let d = plan.step_costs_at(&twice);
        assert!((d[2] - c[2] - 2.0).abs() < 1e-12);
        // Nothing timed: 3 s/GiB, 0.5 s/GiB, the 200 ms budget and its 10 ms sample.
        let f = plan.step_costs();
        assert_eq!(f, plan.step_costs_at(&SweepRates::fallback()));
        assert!((f[0] - (0.21 + 0.1875 + 0.5)).abs() < 1e-12, "{}", f[0]);
        assert!((f[2] - (0.21 + 3.0)).abs() < 1e-12, "{}", f[2]);
    }

    #[test]
    fn a_points_sampling_is_the_slowest_calibrated_or_the_budget() {
        let rule = default_rule();
        let r = SweepRates {
            sampling: vec![(4 << 10, 0.06), (1 << 20, 0.23), (64 << 20, 0.2)],
            ..SweepRates::fallback()
        };
        assert_eq!(r.point_sampling_s(&rule), 0.23);
        // Nothing sampled: the 200 ms budget and its 10 ms sample.
        let f = SweepRates::fallback().point_sampling_s(&rule);
        assert!((f - 0.21).abs() < 1e-12, "{f}");
        // Another budget: its own figure (2 s and a 100 ms sample).
        let long = StopRule {
            budget: Duration::from_secs(2),
            ..rule
        };
        assert!((SweepRates::fallback().point_sampling_s(&long) - 2.1).abs() < 1e-12);
    }

    #[test]
    fn the_calibration_times_the_smallest_a_middle_and_the_largest_cheap_size() {
        let s = sizes(4 << 10, 128 << 20, 4);
        let plan = plan_of(s.clone(), vec![PageKind::Small]);
        let c = plan.calibration_sizes();
        // 4 KiB, 64 MiB (the largest not above the cap) and 512 KiB between.
        assert_eq!(c, vec![4 << 10, 512 << 10, CALIBRATION_MAX_BYTES]);
        assert!(c.iter().all(|x| s.contains(x)));
        // A sweep below the cap: its own largest.
        let small = plan_of(sizes(4 << 10, 1 << 20, 1), vec![PageKind::Small]);
        assert_eq!(small.calibration_sizes(), vec![4 << 10, 64 << 10, 1 << 20]);
        // All above the cap: the smallest alone.
        let big = plan_of(vec![128 << 20, 256 << 20], vec![PageKind::Small]);
        assert_eq!(big.calibration_sizes(), vec![128 << 20]);
        assert_eq!(
            plan_of(vec![], vec![]).calibration_sizes(),
            Vec::<u64>::new()
        );
    }

    pub(crate) fn tiny() -> SweepConfig {
        SweepConfig {
            range: Some((4 << 10, 256 << 10)),
            points_per_octave: Some(1),
            pages: Some(vec![PageKind::Small]),
            rule: Some(StopRule {
                budget: Duration::from_millis(20),
                ..StopRule::default()
            }),
            ..SweepConfig::default()
        }
    }

    #[test]
    fn bad_requests_fail_in_the_plan() {
        let topo = testing::with_memory_only_node();
        let mut cfg = tiny();
        cfg.cpus = Some(vec![9999]);
        let e = plan(&topo, &cfg).unwrap_err().to_string();
        assert!(e.contains("CPU 9999 does not exist"), "{e}");
        let mut cfg = tiny();
        cfg.cpu_node = Some(7);
        assert!(matches!(
            plan(&topo, &cfg),
            Err(ExperimentError::CpuLessNode { .. })
        ));
        let mut cfg = tiny();
        cfg.points_per_octave = Some(0);
        assert!(plan(&topo, &cfg).is_err());
        let mut cfg = tiny();
        cfg.range = Some((128, 1 << 40));
        cfg.points_per_octave = Some(64);
        let e = plan(&topo, &cfg).unwrap_err().to_string();
        assert!(e.contains("at most 1000"), "{e}");
    }
}
