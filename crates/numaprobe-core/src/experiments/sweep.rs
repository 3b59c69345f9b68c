//! The cache-size sweep (`numaprobe latency --sweep`): latency against
//! working-set size, from one CPU to one memory node, with the random chase
//! of the latency matrix (every 64-byte line of the working set once, in an
//! order no prefetcher can guess), per page kind so TLB misses show apart
//! from cache misses.
//!
//! Sizes are geometric (`points_per_octave` per doubling). Per page kind one
//! buffer of the largest size is bound to the memory node, touched by the
//! pinned chase thread, and each point builds its chain over the first
//! `size` bytes of it: one allocation per page kind instead of one per point,
//! and the placement (move_pages) is checked once over the whole buffer
//! after its points. The calling thread drives the steps (progress,
//! cancellation, the caller's time) and a pinned worker thread measures:
//! a step is started only when the caller says so, so an interruption or a
//! spent budget stops between points and the result keeps every point
//! measured so far (`complete: false`).

use super::{cpus, target_sample_ns, ExperimentError, StepProgress};
use crate::kernels::chase::{self, ChasePattern};
use crate::model::sweep::{CacheLevel, SweepPlacement, SweepPoint, SweepResult};
use crate::placement::{
    pin_current_thread, BufferSpec, LiveSystem, MemPolicy, NodeBuffer, PageKind, PlacementCheck,
};
use crate::stats::{self, Measured, StopRule};
use crate::timer::Timer;
use crate::topology::Topology;
use crate::units::format_size;
use std::sync::mpsc;
use std::time::Duration;

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
/// The default largest working set when memory allows (seed's "4 KiB to
/// 2 GiB": past every LLC of today's machines).
pub const DEFAULT_TO: u64 = 2 << 30;
/// More points than this is a mistake (minutes per octave), not a sweep.
pub const MAX_POINTS: usize = 1000;
const LINE: u64 = 64;

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
/// not above a quarter of what `mem_node` can give now (the sweep holds one
/// buffer of that size at a time).
pub fn default_max(live: &LiveSystem, mem_node: u32) -> u64 {
    let free = live.allocatable_bytes(mem_node).unwrap_or(DEFAULT_TO * 4);
    let quarter = (free / 4).max(DEFAULT_FROM * 2);
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
    let (rows, cols) = super::resolve_nodes(topo, Some(&[cpu_node]), mem_asked.as_deref())?;
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
    let (from, to) = match cfg.range {
        Some(r) => r,
        None => (DEFAULT_FROM, default_max(&live, mem_node)),
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
        _ => match super::default_pages(&live) {
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
    let mut notes = super::memory_side_notes(topo, &[mem_node]);
    notes.extend(chosen.map(|c| c.note()));
    Ok(SweepPlan {
        cpu_node,
        cpu,
        mem_node,
        sizes,
        points_per_octave: per,
        pages,
        rule: cfg.rule.unwrap_or_else(default_rule),
        seed: cfg.seed.unwrap_or(super::latency::DEFAULT_SEED),
        caches: caches_of(topo, cpu, mem_node),
        notes,
    })
}

/// What the worker thread tells the driving thread.
enum Msg {
    /// Pinned (to this CPU), buffer mapped and touched; or why not.
    Ready(Result<u32, String>),
    Point(Result<Measured, String>),
    Placement(Result<PlacementCheck, String>),
}

/// Measure the plan without saving partial results.
pub fn run(
    plan: &SweepPlan,
    progress: &mut dyn StepProgress,
) -> Result<SweepResult, ExperimentError> {
    run_with(plan, progress, &mut |_| {})
}

/// Measure every (page kind, size) in order; `partial` sees the result after
/// every point (for the caller to rewrite its output file).
pub fn run_with(
    plan: &SweepPlan,
    progress: &mut dyn StepProgress,
    partial: &mut dyn FnMut(&SweepResult),
) -> Result<SweepResult, ExperimentError> {
    let timer = *Timer::get();
    let mut result = SweepResult {
        schema: crate::SCHEMA.into(),
        command: "latency-sweep".into(),
        cpu_node: plan.cpu_node,
        cpu: plan.cpu,
        mem_node: plan.mem_node,
        pages: plan.pages.clone(),
        sizes: plan.sizes.clone(),
        points_per_octave: plan.points_per_octave,
        stride_bytes: LINE,
        pattern: "random".into(),
        rule: plan.rule,
        timer: timer.info(),
        caches: plan.caches.clone(),
        points: Vec::new(),
        placement: Vec::new(),
        analysis: None,
        notes: plan.notes.clone(),
        failed: Vec::new(),
        complete: false,
        interrupted: false,
    };
    let total = plan.steps();
    let mut index = 0;
    let mut stopped = false;
    for &kind in &plan.pages {
        if stopped {
            break;
        }
        stopped = run_kind(
            plan,
            kind,
            &timer,
            progress,
            partial,
            &mut result,
            &mut index,
            total,
        );
    }
    result.interrupted |= crate::cancel::requested();
    result.complete = !stopped && !result.interrupted && result.failed.is_empty();
    Ok(result)
}

/// One page kind's points. Returns true when the run must stop (cancel or
/// out of time).
#[allow(clippy::too_many_arguments)]
fn run_kind(
    plan: &SweepPlan,
    kind: PageKind,
    timer: &Timer,
    progress: &mut dyn StepProgress,
    partial: &mut dyn FnMut(&SweepResult),
    result: &mut SweepResult,
    index: &mut usize,
    total: usize,
) -> bool {
    let largest = *plan.sizes.last().unwrap_or(&0) as usize;
    std::thread::scope(|s| {
        let (go_tx, go_rx) = mpsc::channel::<(u64, StopRule)>();
        let (msg_tx, msg_rx) = mpsc::channel::<Msg>();
        let (cpu, node, seed) = (plan.cpu, plan.mem_node, plan.seed);
        let worker = s.spawn(move || worker(cpu, node, kind, largest, seed, timer, go_rx, msg_tx));
        let mut stop = false;
        match msg_rx.recv() {
            Ok(Msg::Ready(Ok(observed))) => result.cpu = observed,
            Ok(Msg::Ready(Err(e))) => {
                result.failed.push(format!("{} pages: {e}", kind.name()));
                *index += plan.sizes.len();
                drop(go_tx);
                let _ = worker.join();
                partial(result);
                return false;
            }
            _ => {
                result.failed.push(format!(
                    "{} pages: the measuring thread ended early",
                    kind.name()
                ));
                drop(go_tx);
                let _ = worker.join();
                return false;
            }
        }
        for &size in &plan.sizes {
            if crate::cancel::requested() {
                result.interrupted = true;
                stop = true;
                break;
            }
            if progress.out_of_time() {
                result
                    .notes
                    .push("stopped early: the time given to the sweep was spent".into());
                stop = true;
                break;
            }
            progress.step_started(
                *index,
                total,
                &format!(
                    "{} working set, {} pages, CPU {} -> node {}",
                    format_size(size),
                    kind.name(),
                    plan.cpu,
                    plan.mem_node
                ),
            );
            let rule = progress.rule_for_step(*index, plan.rule);
            if go_tx.send((size, rule)).is_err() {
                break;
            }
            match msg_rx.recv() {
                Ok(Msg::Point(Ok(m))) => result.points.push(SweepPoint {
                    size_bytes: size,
                    pages: kind,
                    ns: m.summary.median,
                    min_ns: m.summary.min,
                    max_ns: m.summary.max,
                    cv: m.summary.cv,
                    samples: m.samples.len(),
                    stop: m.stop,
                }),
                Ok(Msg::Point(Err(e))) => result.failed.push(format!(
                    "{} with {} pages: {e}",
                    format_size(size),
                    kind.name()
                )),
                _ => {
                    result.failed.push(format!(
                        "{} pages: the measuring thread ended early",
                        kind.name()
                    ));
                    break;
                }
            }
            progress.step_finished(*index, total);
            *index += 1;
            partial(result);
        }
        // No more steps: the worker checks placement and ends.
        drop(go_tx);
        for msg in msg_rx.iter() {
            if let Msg::Placement(p) = msg {
                match p {
                    Ok(c) => result.placement.push(SweepPlacement {
                        pages: kind,
                        fraction_on_node: c.fraction_on_intended,
                        thp_fraction: c.thp_fraction,
                    }),
                    Err(e) => result
                        .failed
                        .push(format!("{} pages: placement check: {e}", kind.name())),
                }
            }
        }
        if worker.join().is_err() {
            result.failed.push(format!(
                "{} pages: the measuring thread panicked",
                kind.name()
            ));
        }
        partial(result);
        stop
    })
}

/// The pinned thread of one page kind: map and touch the buffer, then
/// measure each size it is sent until the channel closes, then say where the
/// pages are.
#[allow(clippy::too_many_arguments)]
fn worker(
    cpu: u32,
    node: u32,
    kind: PageKind,
    largest: usize,
    seed: u64,
    timer: &Timer,
    go: mpsc::Receiver<(u64, StopRule)>,
    tell: mpsc::Sender<Msg>,
) {
    // Pinned before the first touch: page tables and pages are made from here.
    let ready = pin_current_thread(&[cpu])
        .map_err(|e| e.to_string())
        .and_then(|observed| {
            let spec = BufferSpec::new(largest, MemPolicy::Bind(node), kind);
            let mut buf = NodeBuffer::alloc(&spec).map_err(|e| e.to_string())?;
            buf.touch();
            Ok((observed, buf))
        });
    let mut buf = match ready {
        Ok((observed, buf)) => {
            let _ = tell.send(Msg::Ready(Ok(observed)));
            buf
        }
        Err(e) => {
            let _ = tell.send(Msg::Ready(Err(e)));
            return;
        }
    };
    for (size, rule) in go.iter() {
        let m = measure_point(&mut buf, size, seed, &rule, timer).map_err(|e| e.to_string());
        if tell.send(Msg::Point(m)).is_err() {
            return;
        }
    }
    // Checked after the points: this is where the pages were while they ran.
    let _ = tell.send(Msg::Placement(buf.verify().map_err(|e| e.to_string())));
}

/// One point: a random chain over the first `size` bytes, a probe to size
/// the samples, then samples under `rule` (as a latency cell does).
fn measure_point(
    buf: &mut NodeBuffer,
    size: u64,
    seed: u64,
    rule: &StopRule,
    timer: &Timer,
) -> Result<Measured, ExperimentError> {
    let len = (size as usize).min(buf.len());
    // SAFETY: the buffer is ours, page-aligned, and outlives the chase.
    let setup = unsafe {
        chase::build(
            buf.as_mut_ptr(),
            len,
            LINE as usize,
            ChasePattern::Random { window_pages: None },
            seed,
        )
    }?;
    let mut p = setup.start;
    // One lap first: the lines are where the previous point left them; the
    // warm-up of the rule then samples a settled cache.
    p = unsafe { chase::run(p, setup.lines as u64) };
    let probe = (setup.lines as u64).clamp(1 << 10, 1 << 14);
    let a = timer.now();
    p = unsafe { chase::run(p, probe) };
    let b = timer.now();
    let per_step = (timer.elapsed_ns(a, b) / probe as f64).max(0.1);
    let steps = (target_sample_ns(rule.budget) / per_step).clamp(1024.0, 1e9) as u64;
    let measured = stats::repeat(rule, || {
        let a = timer.now();
        // SAFETY: p stays on the chain built above.
        p = unsafe { chase::run(p, steps) };
        let b = timer.now();
        Ok::<f64, ExperimentError>(timer.elapsed_ns(a, b) / steps as f64)
    })?;
    std::hint::black_box(p);
    Ok(measured)
}

#[cfg(test)]
mod tests {
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

    fn tiny() -> SweepConfig {
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
    fn a_tiny_sweep_measures_every_point_on_its_cpu_and_node() {
        let topo = testing::live_topology();
        let plan = plan(&topo, &tiny()).unwrap();
        assert_eq!(plan.sizes.len(), 7);
        let mut seen = 0;
        let r = run_with(&plan, &mut crate::experiments::NoProgress, &mut |p| {
            seen = p.points.len()
        })
        .unwrap();
        assert!(r.complete, "{:?}", r.failed);
        assert_eq!(seen, 7);
        assert_eq!(r.points.len(), 7);
        assert_eq!(r.cpu, plan.cpu);
        let curve = r.curve(PageKind::Small);
        assert_eq!(
            curve.iter().map(|p| p.size_bytes).collect::<Vec<_>>(),
            plan.sizes
        );
        assert!(curve.iter().all(|p| p.ns > 0.0 && p.samples >= 3));
        assert_eq!(r.placement.len(), 1);
        assert_eq!(r.placement[0].fraction_on_node, 1.0);
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
