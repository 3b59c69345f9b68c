//! The cache-size sweep's document (`numaprobe latency --sweep`): latency
//! against working-set size on one CPU and one memory node, per page kind,
//! with the caches the topology reports and the analysis of the curve (its
//! plateaus, the steps between them and which cache each step matches).
//! `experiments::sweep` fills the points, `analysis::sweep` the analysis;
//! `render::sweep` formats it.

/// Re-exported so the renderers name page kinds through the model.
pub use crate::placement::PageKind;
use crate::stats::{SetAside, StopReason, StopRule};
use crate::timer::TimerInfo;
use serde::{Deserialize, Serialize};

/// One measured point: one working-set size with one page kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// Bytes the random chain covers (every 64-byte line once).
    pub size_bytes: u64,
    pub pages: PageKind,
    /// Median nanoseconds per load over the samples.
    pub ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
    pub cv: f64,
    pub samples: usize,
    pub stop: StopReason,
    /// Samples set aside because the chase lost its CPU.
    #[serde(default)]
    pub set_aside: SetAside,
    /// True when the point must not be trusted as is (see `flags`); a
    /// flagged point takes no part in the plateaus.
    #[serde(default)]
    pub flagged: bool,
    /// Why: a spread past the lines, two modes, too few samples that held
    /// their CPU ([`crate::stats::flags`]), or a step down from a smaller
    /// size ([`crate::analysis::sweep::flag_steps`]). Written as
    /// `flag_ids` into the sweep's `flag_texts` ([`super::reasons`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
}

impl super::reasons::Flagged for SweepPoint {
    fn flags_mut(&mut self) -> &mut Vec<String> {
        &mut self.flags
    }
}

/// A cache the topology reports for the measuring CPU (or in front of the
/// memory node).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheLevel {
    /// `L1d`, `L2`, `L3`, ... or `memory-side` (a memory-side cache).
    pub name: String,
    pub size_bytes: u64,
}

/// A stretch of the curve where latency stays level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plateau {
    /// Median of the plateau's points, ns.
    pub ns: f64,
    pub from_bytes: u64,
    /// The last size still on the plateau: the knee.
    pub to_bytes: u64,
    pub points: usize,
}

/// What a cache level was matched to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheMatch {
    pub cache: CacheLevel,
    /// Index into the analysis's `plateaus` of the plateau that ends at the
    /// knee matching this cache; None: no knee near its size.
    pub plateau: Option<usize>,
    /// One sentence: "plateau ~1.2 ns up to ~32 KiB, matches L1d (48 KiB)"
    /// or "no knee near L3 (32 MiB)".
    pub text: String,
}

/// 4 KiB pages against THP at one size: the TLB's share of the latency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TlbCost {
    pub size_bytes: u64,
    pub small_ns: f64,
    pub thp_ns: f64,
}

/// The analysis of one page kind's curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurveAnalysis {
    pub pages: PageKind,
    /// Level stretches, smallest sizes first; consecutive plateaus differ
    /// by at least `step_ratio`.
    pub plateaus: Vec<Plateau>,
    /// One per cache level the topology reports, nearest first.
    pub matches: Vec<CacheMatch>,
    /// Flagged points left out of the plateaus (a plateau is named from
    /// trusted points only).
    #[serde(default)]
    pub untrusted_points: usize,
    /// Says so when any were left out: "plateaus from 1 of 31 points: 30
    /// flagged points left out, ...".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust_note: Option<String>,
}

/// The whole analysis, as `analysis::sweep` makes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepAnalysis {
    /// The smallest ratio between two plateaus that counts as a step (less
    /// is noise or drift, and the two are one plateau).
    pub step_ratio: f64,
    /// How far (either way) a plateau's point may be from its median.
    pub flat_ratio: f64,
    pub curves: Vec<CurveAnalysis>,
    /// Where both page kinds were measured: the largest common size, and
    /// the first size where 4 KiB pages are clearly slower (TLB misses).
    pub tlb_largest: Option<TlbCost>,
    pub tlb_from: Option<TlbCost>,
}

/// `numaprobe latency --sweep`'s document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepResult {
    /// Always `numaprobe/1`.
    pub schema: String,
    /// Always `latency-sweep`.
    pub command: String,
    pub cpu_node: u32,
    /// The CPU the chase ran on (`sched_getcpu` once pinned).
    pub cpu: u32,
    pub mem_node: u32,
    /// Page kinds measured, in order.
    pub pages: Vec<PageKind>,
    /// The planned sizes, ascending.
    pub sizes: Vec<u64>,
    pub points_per_octave: u32,
    pub stride_bytes: u64,
    pub pattern: String,
    pub rule: StopRule,
    pub timer: TimerInfo,
    /// What the topology reports for the measuring CPU and memory node.
    pub caches: Vec<CacheLevel>,
    /// Measured points, in run order (a page kind's sizes, then the next);
    /// written with their flags' texts once, in `flag_texts`.
    #[serde(flatten, with = "super::reasons")]
    pub points: Vec<SweepPoint>,
    /// Share of each page kind's buffer on `mem_node` (move_pages), in
    /// `pages` order; THP: share backed by huge pages beside it.
    pub placement: Vec<SweepPlacement>,
    /// Filled once the points are in (None while a run is going).
    pub analysis: Option<SweepAnalysis>,
    pub notes: Vec<String>,
    #[serde(default)]
    pub failed: Vec<String>,
    pub complete: bool,
    #[serde(default)]
    pub interrupted: bool,
}

/// Where one page kind's buffer was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepPlacement {
    pub pages: PageKind,
    pub fraction_on_node: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thp_fraction: Option<f64>,
}

impl SweepResult {
    /// The points of one page kind, ascending size.
    pub fn curve(&self, pages: PageKind) -> Vec<&SweepPoint> {
        let mut v: Vec<&SweepPoint> = self.points.iter().filter(|p| p.pages == pages).collect();
        v.sort_by_key(|p| p.size_bytes);
        v
    }
}

impl SweepResult {
    /// The sweep's line for the terminal and the main job's summary when
    /// any point is flagged: "3 of 31 sweep points flagged (e.g. ...)".
    pub fn flagged_summary(&self) -> Option<String> {
        let flagged: Vec<_> = self.points.iter().filter(|p| p.flagged).collect();
        let first = flagged.first()?;
        Some(format!(
            "{} of {} sweep points flagged (e.g. {} with {} pages: {})",
            flagged.len(),
            self.points.len(),
            crate::units::format_size(first.size_bytes),
            first.pages.name(),
            first.flags.first().map_or("", String::as_str)
        ))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::placement::PageKind;

    /// A complete sweep from CPU 0 on node 0 of both page kinds, not
    /// analysed (the renderers' and the analysis's tests use it too).
    pub(crate) fn result(
        sizes: Vec<u64>,
        points_per_octave: u32,
        caches: Vec<CacheLevel>,
        points: Vec<SweepPoint>,
    ) -> SweepResult {
        SweepResult {
            schema: crate::SCHEMA.into(),
            command: "latency-sweep".into(),
            cpu_node: 0,
            cpu: 0,
            mem_node: 0,
            pages: vec![PageKind::Small, PageKind::Thp],
            sizes,
            points_per_octave,
            stride_bytes: 64,
            pattern: "random".into(),
            rule: StopRule::default(),
            timer: crate::timer::Timer::get().info(),
            caches,
            points,
            placement: vec![],
            analysis: None,
            notes: vec![],
            failed: vec![],
            complete: true,
            interrupted: false,
        }
    }
}
