//! The sweep's plan: the range (`FROM-TO`), the geometric sizes, the
//! measuring CPU and memory node, the page kinds and the caches the
//! topology reports, all resolved and checked before anything is allocated.

use super::super::{cpus, ExperimentError};
use crate::model::sweep::CacheLevel;
use crate::placement::{BufferSpec, LiveSystem, MemPolicy, PageKind};
use crate::stats::StopRule;
use crate::topology::{Cache, Topology};
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
    /// The largest cache of `cpu` that no other core shares (0 when none is
    /// known): a working set within it is not moved by other cores' memory
    /// traffic, so only larger points are starred for it.
    pub private_bytes: u64,
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
/// footprint limit's room for buffers ([`crate::placement::FootprintLimit`];
/// the sweep holds one buffer of that size at a time).
pub fn default_max(live: &LiveSystem, mem_node: u32) -> u64 {
    let free = live.allocatable_bytes(mem_node).unwrap_or(DEFAULT_TO * 4);
    let limit = crate::placement::FootprintLimit::live(live).buffers_bytes();
    let quarter = (free / 4).min(limit).max(DEFAULT_FROM * 2);
    let pow2 = 1u64 << (63 - quarter.leading_zeros());
    DEFAULT_TO.min(pow2)
}

/// The data and unified caches `cpu` uses, nearest first, plus the
/// memory-side caches in front of `mem_node`.
/// The largest data or unified cache serving `cpu` that only `siblings`
/// (its core's CPUs) share; 0 when none is known.
pub fn private_bytes(caches: &[Cache], cpu: u32, siblings: &[u32]) -> u64 {
    caches
        .iter()
        .filter(|c| !c.kind.eq_ignore_ascii_case("instruction"))
        .filter(|c| c.cpus.contains(&cpu) && c.cpus.iter().all(|x| siblings.contains(x)))
        .filter_map(|c| c.size_bytes)
        .max()
        .unwrap_or(0)
}

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
        private_bytes: private_bytes(
            &topo.caches,
            cpu,
            topo.cpu(cpu).map_or(&[][..], |c| &c.smt_siblings),
        ),
        notes,
    })
}

#[cfg(test)]
pub(super) mod tests;
