//! The result model of the latency and bandwidth matrices (serde, part of the
//! `numaprobe/1` JSON contract): cells with their samples, placement and
//! parameters, and the cells that failed. The experiments fill it; its
//! renderings are in `render::matrix` and `render::matrix_long`.
//!
//! A `MatrixResult` is valid at every moment of a run (cells not measured yet
//! are `null` in `matrix` and absent from `cells`, `complete` is false), so
//! the binary can rewrite its output file after every cell and an interrupted
//! run keeps what it measured.

use crate::kernels::{KernelSpec, VectorWidth};
use crate::placement::{PageKind, PlacementCheck};
use crate::stats::sketch::{self, Sketch};
use crate::stats::{StopReason, StopRule};
use crate::timer::TimerInfo;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Which matrix this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatrixKind {
    Latency,
    Bandwidth,
}

impl MatrixKind {
    /// The one unit a matrix of this kind is written in: `ns` per load, or
    /// `GB/s` (10^9 bytes per second).
    pub fn unit(self) -> &'static str {
        match self {
            MatrixKind::Latency => "ns",
            MatrixKind::Bandwidth => "GB/s",
        }
    }
}

/// Where a cell's memory was, summed over all of its threads' buffers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellPlacement {
    /// Share of the pages on the intended node (1.0 = all of them).
    pub fraction_on_intended: f64,
    pub pages: u64,
    pub page_size: u64,
    /// Pages per node, as `move_pages` reported them.
    pub per_node: BTreeMap<u32, u64>,
    pub not_present: u64,
    /// THP only: share of the memory backed by huge pages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thp_fraction: Option<f64>,
}

impl CellPlacement {
    /// Sum the checks of several buffers (one per thread).
    pub fn combine(checks: &[PlacementCheck]) -> CellPlacement {
        let mut per_node = BTreeMap::new();
        let (mut pages, mut on, mut not_present) = (0u64, 0f64, 0u64);
        let mut thp: Option<(f64, u64)> = None;
        for c in checks {
            pages += c.pages;
            not_present += c.not_present;
            on += c.fraction_on_intended * c.pages as f64;
            for (n, k) in &c.per_node {
                *per_node.entry(*n).or_insert(0) += k;
            }
            if let Some(f) = c.thp_fraction {
                let (s, w) = thp.unwrap_or((0.0, 0));
                thp = Some((s + f * c.pages as f64, w + c.pages));
            }
        }
        CellPlacement {
            fraction_on_intended: if pages == 0 { 0.0 } else { on / pages as f64 },
            pages,
            page_size: checks.first().map(|c| c.page_size).unwrap_or(0),
            per_node,
            not_present,
            thp_fraction: thp.map(|(s, w)| if w == 0 { 0.0 } else { s / w as f64 }),
        }
    }
}

/// The least share of a latency buffer in huge pages, when transparent huge
/// pages were asked for, at which the figure is still one of memory: each
/// load that falls on a base page pays a page-table walk besides the
/// memory's own latency. A 1 GiB random chase on base pages read 1.9 times
/// the huge-page figure on the development VM (nested paging walks two
/// tables; hardware walks one), so a buffer 5 % short reads at most about
/// 4.5 % high there: within the 5 % a figure may move on a busy machine. doc/footprint-and-trust.md, "What makes some runs slower".
pub const HUGE_PAGE_SHARE: f64 = 0.95;

impl CellPlacement {
    /// Why a latency figure on this memory reads high for its pages: THP
    /// was asked for and less than [`HUGE_PAGE_SHARE`] of the buffer got
    /// huge pages (the kernel fell back to base pages: fragmented memory,
    /// or `defrag` that does not compact). None otherwise, and for pages
    /// chosen on purpose (`4k`, hugetlbfs).
    pub fn small_pages_flag(&self) -> Option<String> {
        let share = self.thp_fraction?;
        (share < HUGE_PAGE_SHARE).then(|| {
            format!(
                "small pages: {:.0} % of the buffer in huge pages where transparent huge pages were asked (trusted from {:.0} %); a load on a base page pays a page-table walk, so this latency reads higher than memory's own; compact memory (`echo 1 > /proc/sys/vm/compact_memory`) or use --pages 2m",
                share * 100.0,
                HUGE_PAGE_SHARE * 100.0
            )
        })
    }
}

/// The parameters that produced a cell (DESIGN: every figure carries them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellParams {
    /// Buffer bytes: the chased array (latency) or the total over all
    /// threads (bandwidth).
    pub size_bytes: u64,
    /// Chase stride (latency) or the line stride of strided kernels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stride_bytes: Option<u64>,
    /// `random` or `stride` (latency).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// TLB-locality window of the random chase, in 4 KiB pages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_pages: Option<u64>,
    pub pages: PageKind,
    pub threads: u32,
    /// Streaming op (bandwidth): `read`, `write`, `write-nt`, `copy`, `copy-nt`, `triad`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    /// The memory policy, e.g. `bind:1`.
    pub policy: String,
}

/// The beginnings of the flags a busy machine gives a cell (its spread, its
/// samples set aside, other tasks beside it, two modes), as against what a
/// run gets wrong (placement, a failure, an interruption).
pub const BUSY_MACHINE_FLAGS: [&str; 4] = ["unstable:", "preempted", "memory traffic", "two modes"];

/// True for a flag a busy machine gives ([`BUSY_MACHINE_FLAGS`]).
pub fn is_busy_machine_flag(flag: &str) -> bool {
    BUSY_MACHINE_FLAGS.iter().any(|p| flag.starts_with(p))
}

/// One (CPU node, memory node) measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub cpu_node: u32,
    pub mem_node: u32,
    /// Median of `samples`, in the result's unit.
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Coefficient of variation of `samples` (standard deviation / mean).
    pub cv: f64,
    /// Every kept sample (warm-up runs excluded), in the result's unit;
    /// empty in a document that leaves them out (`sketch` then).
    pub samples: Vec<f64>,
    /// Their count and quantiles, in a document that leaves the samples
    /// out (the main job's report unless `--keep-samples`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sketch: Option<Sketch>,
    /// Samples set aside because a measuring thread lost its CPU during
    /// them ([`crate::held`]), by reason: never part of `samples`.
    #[serde(default)]
    pub set_aside: crate::stats::SetAside,
    /// CPUs other tasks kept busy beside the cell, on average
    /// ([`crate::beside`]); absent where it could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_busy_cpus: Option<f64>,
    /// Why sampling stopped: `cv_reached`, `budget_spent` or `max_samples`.
    pub stop: StopReason,
    pub placement: CellPlacement,
    /// The CPUs the measuring threads were pinned to (as observed).
    pub cpus: Vec<u32>,
    pub params: CellParams,
    pub kernel: KernelSpec,
    pub vector_width: VectorWidth,
    /// True when the cell must not be trusted as is (see `flags`).
    pub flagged: bool,
    /// Why it is flagged, in words (e.g. placement below 99 %).
    pub flags: Vec<String>,
    /// Wall time of the cell, set-up excluded, warm-up included.
    pub elapsed_s: f64,
    /// Wall time of the cell's own set-up, its memory node's buffer
    /// (`setups`) excluded: thread start and pinning, the cache flush, the
    /// probe, the placement check (what a budget must count besides
    /// sampling).
    #[serde(default)]
    pub setup_s: f64,
}

impl Cell {
    /// How many samples the cell kept, whether or not the document has them.
    pub fn kept(&self) -> usize {
        sketch::kept(&self.samples, self.sketch.as_ref())
    }

    /// Replace the samples by their sketch (nothing for a cell without).
    pub fn leave_out_samples(&mut self) {
        sketch::leave_out(&mut self.samples, &mut self.sketch);
    }
}

/// One memory node's buffer, set up once for a matrix and measured from
/// every CPU node's cell (DESIGN: set-up grows with nodes, not cells).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BufferSetup {
    pub mem_node: u32,
    /// Bytes mapped, bound to `mem_node` and touched.
    pub bytes: u64,
    /// The CPU whose thread touched every page (and built the chain): a CPU
    /// of `mem_node` when it has one, else of the CPU node nearest to it by
    /// the SLIT.
    pub touched_by_cpu: u32,
    /// Where the kernel put the buffer's page tables: the node of the CPU
    /// that faulted the pages in, as for a program that first-touches its
    /// own data. Differs from `mem_node` only for a node without CPUs.
    pub page_tables_node: Option<u32>,
    /// Wall time of the set-up: allocate, bind, touch, build the chain.
    pub seconds: f64,
    /// Cells measured on it.
    pub cells: usize,
}

/// A cell that could not be measured; the run went on with the next one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailedCell {
    pub cpu_node: u32,
    pub mem_node: u32,
    /// The CPUs the cell's threads were to run on (planned, not observed).
    pub cpus: Vec<u32>,
    /// Why, in words (e.g. the allocation that did not fit, the kernel's error).
    pub reason: String,
}

impl std::fmt::Display for FailedCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} (node {}) -> memory node {}: {}",
            if self.cpus.len() == 1 { "CPU" } else { "CPUs" },
            crate::units::format_list(&self.cpus),
            self.cpu_node,
            self.mem_node,
            self.reason
        )
    }
}

/// A latency or bandwidth matrix with every cell behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatrixResult {
    /// Always `numaprobe/1`.
    pub schema: String,
    pub kind: MatrixKind,
    /// `ns` (latency per load) or `GB/s` (10^9 bytes per second).
    pub unit: String,
    /// Row labels: the CPU nodes measured from.
    pub cpu_nodes: Vec<u32>,
    /// Column labels: the memory nodes measured (memory-only nodes included).
    pub mem_nodes: Vec<u32>,
    /// `matrix[r][c]`: median of cell (cpu_nodes[r], mem_nodes[c]); null
    /// where not measured (yet).
    pub matrix: Vec<Vec<Option<f64>>>,
    pub cells: Vec<Cell>,
    /// `--scaling`: the same node pair for 1..N threads, ascending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaling: Option<Vec<Cell>>,
    /// Cells whose placement fraction is below this are flagged.
    pub placement_threshold: f64,
    /// How every cell sampled: warm-up runs, sample bounds, CV target, budget (s).
    pub stop_rule: StopRule,
    pub timer: TimerInfo,
    /// False while cells are still being measured, and for good when the run
    /// was interrupted (`interrupted`) or a cell failed (`failed`).
    pub complete: bool,
    /// True when SIGINT/SIGTERM stopped the run before its last cell.
    #[serde(default)]
    pub interrupted: bool,
    /// Notes that apply to the whole matrix (e.g. write-allocate traffic).
    pub notes: Vec<String>,
    /// Cells that could not be measured, in run order; their `matrix`
    /// entries stay null.
    #[serde(default)]
    pub failed: Vec<FailedCell>,
    /// The buffers the cells were measured on, one per memory node, in
    /// the order they were set up.
    #[serde(default)]
    pub setups: Vec<BufferSetup>,
}

impl MatrixResult {
    pub fn new(
        kind: MatrixKind,
        cpu_nodes: Vec<u32>,
        mem_nodes: Vec<u32>,
        stop_rule: StopRule,
        timer: TimerInfo,
    ) -> MatrixResult {
        let matrix = vec![vec![None; mem_nodes.len()]; cpu_nodes.len()];
        MatrixResult {
            schema: crate::SCHEMA.to_string(),
            kind,
            unit: kind.unit().to_string(),
            cpu_nodes,
            mem_nodes,
            matrix,
            cells: Vec::new(),
            scaling: None,
            placement_threshold: crate::placement::PLACEMENT_THRESHOLD,
            stop_rule,
            timer,
            complete: false,
            interrupted: false,
            notes: Vec::new(),
            failed: Vec::new(),
            setups: Vec::new(),
        }
    }

    /// Every cell's samples replaced by their sketch.
    pub fn leave_out_samples(&mut self) {
        self.cells.iter_mut().for_each(Cell::leave_out_samples);
    }

    /// Add a cell and put its median in the matrix. A cell whose samples
    /// spread too far to be trusted ([`crate::stats::instability`]), or
    /// rest on too few that held their CPU ([`crate::stats::SetAside::flag`]),
    /// is flagged here, so every producer and every format carries it.
    pub fn push(&mut self, mut cell: Cell) {
        let new = crate::stats::flags::figure_flags(
            &cell.samples,
            cell.cv,
            cell.min,
            cell.max,
            cell.samples.len(),
            &cell.set_aside,
            &self.unit,
        );
        let before = cell.flags.len();
        crate::stats::flags::merge(&mut cell.flags, new);
        if self.kind == MatrixKind::Latency {
            let pages = cell.placement.small_pages_flag().into_iter().collect();
            crate::stats::flags::merge(&mut cell.flags, pages);
        }
        crate::beside::mark(&mut cell.flags, cell.others_busy_cpus);
        cell.flagged |= cell.flags.len() > before;
        let r = self.cpu_nodes.iter().position(|&n| n == cell.cpu_node);
        let c = self.mem_nodes.iter().position(|&n| n == cell.mem_node);
        if let (Some(r), Some(c)) = (r, c) {
            self.matrix[r][c] = Some(cell.median);
        }
        self.cells.push(cell);
    }

    /// One line for the end of a run with failed cells (None without):
    /// how many of the `planned` cells failed, the first one and why, and
    /// where the rest is: the other cells, or when none was measured each
    /// failure, in the output.
    pub fn failure_summary(&self, planned: usize) -> Option<String> {
        let first = self.failed.first()?;
        let rest = if self.cells.is_empty() {
            "each failure is listed in the output"
        } else {
            "the other cells are in the output"
        };
        Some(format!(
            "{} of {planned} cells failed (first: {first}); {rest}",
            self.failed.len()
        ))
    }

    /// One line for the end of a run when cells are unstable (None
    /// without): how many, the worst, and what would help.
    pub fn instability_summary(&self) -> Option<String> {
        let unstable: Vec<&Cell> = self
            .cells
            .iter()
            .filter(|c| c.flags.iter().any(|f| f.starts_with("unstable:")))
            .collect();
        let worst = unstable.iter().max_by(|a, b| a.cv.total_cmp(&b.cv))?;
        Some(format!(
            "{} of {} {} cells spread too far to be trusted (worst: CPU node {} -> memory node {}, CV {:.1} %, {:.1} to {:.1} {}); measure on a quieter machine, with a longer budget (--budget for the main job, --time-budget for one command), or repeat the run",
            unstable.len(),
            self.cells.len(),
            self.matrix_name(),
            worst.cpu_node,
            worst.mem_node,
            worst.cv * 100.0,
            worst.min,
            worst.max,
            self.unit
        ))
    }

    /// One line when samples were set aside because a measuring thread
    /// lost its CPU (None without): how many, in how many cells, why, and
    /// that the figures are from the samples that held it.
    pub fn set_aside_summary(&self) -> Option<String> {
        let mut total = crate::stats::SetAside::default();
        let (mut cells, mut kept) = (0usize, 0usize);
        for c in &self.cells {
            kept = kept.saturating_add(c.kept());
            if c.set_aside.total() > 0 {
                cells += 1;
                total.add(&c.set_aside);
            }
        }
        if cells == 0 {
            return None;
        }
        Some(format!(
            "{} of {} {} samples set aside in {cells} of {} cells, the measuring thread having lost its CPU ({}); each figure is the median of the samples that held it{}",
            total.total(),
            total.total().saturating_add(kept),
            self.matrix_name(),
            self.cells.len(),
            total.reasons(),
            if total.shortened > 1 {
                format!(", shortened up to {}x to fit between preemptions", total.shortened)
            } else {
                String::new()
            }
        ))
    }

    /// One line when cells were measured beside other tasks' work (None
    /// without): which cells, and the most CPUs kept busy beside one.
    pub fn beside_summary(&self) -> Option<String> {
        let busy: Vec<&Cell> = self
            .cells
            .iter()
            .filter(|c| c.flags.iter().any(|f| f.starts_with("memory traffic")))
            .collect();
        let most = busy
            .iter()
            .filter_map(|c| c.others_busy_cpus)
            .max_by(f64::total_cmp)?;
        let names: Vec<String> = busy
            .iter()
            .take(8)
            .map(|c| format!("{}->{}", c.cpu_node, c.mem_node))
            .collect();
        Some(format!(
            "{} of {} {} cells were measured while other tasks kept up to {most:.1} CPUs busy ({}{}): their memory traffic may make these figures read {}; they are flagged",
            busy.len(),
            self.cells.len(),
            self.matrix_name(),
            names.join(", "),
            if busy.len() > names.len() { ", ..." } else { "" },
            match self.kind {
                MatrixKind::Latency => "slower",
                MatrixKind::Bandwidth => "lower",
            }
        ))
    }

    /// The run's lines on figures that may not hold: set-aside samples
    /// ([`Self::set_aside_summary`]), cells measured beside other tasks
    /// ([`Self::beside_summary`]) and unstable cells
    /// ([`Self::instability_summary`]).
    pub fn trust_summaries(&self) -> Vec<String> {
        self.set_aside_summary()
            .into_iter()
            .chain(self.beside_summary())
            .chain(self.instability_summary())
            .collect()
    }

    fn matrix_name(&self) -> &'static str {
        match self.kind {
            MatrixKind::Latency => "latency",
            MatrixKind::Bandwidth => "bandwidth",
        }
    }

    pub fn cell(&self, cpu_node: u32, mem_node: u32) -> Option<&Cell> {
        self.cells
            .iter()
            .find(|c| c.cpu_node == cpu_node && c.mem_node == mem_node)
    }
}

/// How many cells the matrix document `text` holds, read straight into
/// its `cells` and nothing else through the bounded reader
/// ([`crate::model::bounded`]); None when it has no such list (another
/// document, not JSON, or nested past what the reader allows). The report
/// folder compares a re-run's matrices with the ones it would replace by it.
pub fn cells_in(text: &str) -> Option<usize> {
    #[derive(Deserialize)]
    struct Cells {
        cells: Vec<serde::de::IgnoredAny>,
    }
    crate::model::bounded::from_slice::<Cells>(text.as_bytes())
        .ok()
        .map(|c| c.cells.len())
}

#[cfg(test)]
#[path = "matrix_tests.rs"]
pub(crate) mod tests;
