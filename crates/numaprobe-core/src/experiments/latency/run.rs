//! Measuring a latency plan: one buffer per memory node, set up and checked
//! against the live machine right before it is allocated; each cell's
//! pinned thread chases it under the stop rule.

use super::LatencyPlan;
use crate::experiments::node_buffers::{self, toucher_of};
use crate::experiments::workers::on_a_thread;
use crate::experiments::{fit_cell, ExperimentError, LiveGauge, MemoryGauge, Progress};
use crate::kernels::chase::{self, ChasePattern};
use crate::kernels::VectorWidth;
use crate::model::matrix::{Cell, CellParams, CellPlacement, FailedCell, MatrixKind, MatrixResult};
use crate::placement::{
    pin_current_thread, BufferSpec, LiveSystem, MemPolicy, NodeBuffer, PLACEMENT_THRESHOLD,
};
use crate::stats::StopRule;
use crate::timer::Timer;

/// Measure every cell of the plan, in order, checking each cell's memory
/// against the live machine right before it allocates.
pub fn run(
    plan: &LatencyPlan,
    progress: &mut dyn Progress,
) -> Result<MatrixResult, ExperimentError> {
    run_with(plan, progress, &mut LiveGauge(LiveSystem::read()?))
}

/// Set up `mem_node`'s buffer of `size` bytes for `plan` from `toucher`:
/// map, bind, touch and write the chain.
pub fn set_up_node(
    plan: &LatencyPlan,
    mem_node: u32,
    toucher: u32,
    size: u64,
) -> Result<super::Chained, ExperimentError> {
    set_up_node_by(plan, mem_node, toucher, size, None)
}

/// [`set_up_node`] whose page touch stops once `deadline` has passed (the
/// main job's calibration on a real buffer, bounded by the budget).
pub fn set_up_node_by(
    plan: &LatencyPlan,
    mem_node: u32,
    toucher: u32,
    size: u64,
    deadline: Option<std::time::Instant>,
) -> Result<super::Chained, ExperimentError> {
    let spec = BufferSpec::new(size as usize, MemPolicy::Bind(mem_node), plan.pages);
    node_buffers::set_up_by(&spec, mem_node, toucher, deadline, |buf| {
        // SAFETY: the buffer is ours, page-aligned, and outlives every
        // chase on it (it is dropped after its cells).
        let setup = unsafe {
            chase::build(
                buf.as_mut_ptr(),
                buf.len(),
                plan.stride as usize,
                plan.pattern,
                plan.seed,
            )
        }?;
        Ok((setup.start as usize, setup.lines))
    })
}

/// [`run`] with the memory figures taken from `gauge`.
pub fn run_with(
    plan: &LatencyPlan,
    progress: &mut dyn Progress,
    gauge: &mut dyn MemoryGauge,
) -> Result<MatrixResult, ExperimentError> {
    let timer = *Timer::get();
    let mut result = MatrixResult::new(
        MatrixKind::Latency,
        plan.cpu_nodes.clone(),
        plan.mem_nodes.clone(),
        plan.rule,
        timer.info(),
    );
    result.notes.extend(plan.notes.iter().cloned());
    let total = plan.cells.len();
    let mut index = 0;
    'nodes: for (mn, group) in node_buffers::by_memory_node(&plan.cells, &plan.mem_nodes, |c| c.2) {
        if crate::cancel::requested() {
            break;
        }
        let first = plan.cells[group[0]];
        let toucher = toucher_of(&plan.touchers, mn, first.1);
        // A handed buffer already holds its memory: the gauge would count
        // it as taken.
        let prepared = match plan.handed.take_for(mn, plan.size) {
            Some(p) => Ok((p, None)),
            None => size_cell(plan, gauge, index, mn, toucher)
                .and_then(|(size, reduced)| Ok((set_up_node(plan, mn, toucher, size)?, reduced))),
        };
        let (mut prepared, reduced) = match prepared {
            Ok(p) => p,
            Err(e) => {
                let reason = e.to_string();
                for &i in &group {
                    if crate::cancel::requested() {
                        break 'nodes;
                    }
                    let (cn, cpu, _) = plan.cells[i];
                    progress.cell_started(index, total, &label(cn, cpu, mn));
                    fail(
                        &mut result,
                        progress,
                        (index, total),
                        plan.cells[i],
                        &reason,
                    );
                    index += 1;
                }
                continue;
            }
        };
        progress.buffer_ready(&prepared.record);
        result.setups.push(prepared.record.clone());
        // Each cell walks on from where the one before stopped.
        let (mut at, lines) = prepared.filled;
        for &i in &group {
            let (cn, cpu, _) = plan.cells[i];
            progress.cell_started(index, total, &label(cn, cpu, mn));
            if crate::cancel::requested() {
                break 'nodes;
            }
            let rule = progress.rule_for_cell(index, plan.rule);
            let began = std::time::Instant::now();
            let chain = (at, lines);
            let measured = on_a_thread(|| {
                measure_cell(plan, &prepared.buf, chain, &rule, &timer, plan.cells[i])
            })
            .map(|(mut cell, end)| {
                at = end;
                if let Some(why) = &reduced {
                    cell.flags.push(why.clone());
                    cell.flagged = true;
                }
                cell
            });
            match measured {
                Ok(mut cell) => {
                    cell.setup_s = (began.elapsed().as_secs_f64() - cell.elapsed_s).max(0.0);
                    prepared.record.cells += 1;
                    if let Some(s) = result.setups.last_mut() {
                        s.cells = prepared.record.cells;
                    }
                    result.push(cell);
                    progress.cell_finished(&result);
                }
                Err(e) => fail(
                    &mut result,
                    progress,
                    (index, total),
                    plan.cells[i],
                    &e.to_string(),
                ),
            }
            index += 1;
        }
    }
    // A stop requested during the last cell cut that cell short too.
    result.interrupted |= crate::cancel::requested();
    result.complete = !result.interrupted && result.failed.is_empty();
    Ok(result)
}

/// Cell `index` of `total`, (CPU node, CPU, memory node), could not be
/// measured: recorded, and the progress told.
fn fail(
    result: &mut MatrixResult,
    progress: &mut dyn Progress,
    (index, total): (usize, usize),
    (cpu_node, cpu, mem_node): (u32, u32, u32),
    reason: &str,
) {
    result.failed.push(FailedCell {
        cpu_node,
        mem_node,
        cpus: vec![cpu],
        reason: reason.into(),
    });
    progress.cell_failed(index, total, reason, result);
}

fn label(cn: u32, cpu: u32, mn: u32) -> String {
    format!("CPU {cpu} (node {cn}) -> memory node {mn}")
}

/// The size `mem_node`'s buffer is set up with (checked before cell
/// `index`, the first on it), and why it is smaller than planned.
fn size_cell(
    plan: &LatencyPlan,
    gauge: &mut dyn MemoryGauge,
    index: usize,
    mem_node: u32,
    cpu: u32,
) -> Result<(u64, Option<String>), ExperimentError> {
    // Huge page pools are checked by the allocation itself.
    if plan.pages.hugetlb() {
        return Ok((plan.size, None));
    }
    let available = gauge.allocatable(index, mem_node, &[cpu])?;
    let footprint = |s: u64| crate::placement::footprint(s, plan.pages);
    let fit = fit_cell(
        plan.size,
        plan.size_explicit,
        &footprint,
        2 * plan.stride,
        mem_node,
        available,
    )?;
    Ok((fit.size, fit.reduced))
}

/// Measure one cell, (CPU node, CPU, memory node), on `buf`, whose chain
/// of `lines` lines is walked on from `at`, on the calling thread (which it
/// pins); returns the cell and where its walk stopped.
fn measure_cell(
    plan: &LatencyPlan,
    buf: &NodeBuffer,
    (at, lines): (usize, usize),
    rule: &StopRule,
    timer: &Timer,
    (cpu_node, cpu, mem_node): (u32, u32, u32),
) -> Result<(Cell, usize), ExperimentError> {
    crate::fault::panic_at(crate::fault::LATENCY_CELL);
    let observed = pin_current_thread(&[cpu])?;
    // The previous cell's CPU may hold the lines it chased last; the
    // flush sends every load of this cell to memory again.
    if !buf.flush_caches() && crate::cancel::requested() {
        return Err(crate::placement::PlacementError::Interrupted.into());
    }
    let beside = crate::beside::Watch::start();
    // SAFETY: `at` is on the chain written into `buf`, which outlives this.
    let (measured, end) = unsafe { super::sample_chain(at as *const usize, lines, rule, timer) }?;
    let end = end as usize;
    let elapsed_s = measured.elapsed_s;
    // Checked after the measurement: this is where the pages were while it ran.
    let check = buf.verify()?;
    let placement = CellPlacement::combine(&[check]);
    let mut flags = Vec::new();
    if placement.fraction_on_intended < PLACEMENT_THRESHOLD {
        flags.push(format!(
            "placement {:.1} % on node {mem_node} < {:.0} %",
            placement.fraction_on_intended * 100.0,
            PLACEMENT_THRESHOLD * 100.0
        ));
    }
    if measured.stop == crate::stats::StopReason::Interrupted {
        flags.push(crate::experiments::cut_short_flag(measured.samples.len()));
    }
    let (window_pages, pattern) = match plan.pattern {
        ChasePattern::Random { window_pages } => (window_pages.map(|w| w as u64), "random"),
        ChasePattern::Stride => (None, "stride"),
    };
    let cell = Cell {
        cpu_node,
        mem_node,
        median: measured.summary.median,
        min: measured.summary.min,
        max: measured.summary.max,
        cv: measured.summary.cv,
        set_aside: measured.set_aside,
        others_busy_cpus: beside.and_then(|w| w.others_busy_cpus()),
        samples: measured.samples,
        sketch: None,
        stop: measured.stop,
        placement,
        cpus: vec![observed],
        params: CellParams {
            size_bytes: buf.len() as u64,
            stride_bytes: Some(plan.stride),
            pattern: Some(pattern.into()),
            window_pages,
            pages: plan.pages,
            threads: 1,
            op: None,
            policy: MemPolicy::Bind(mem_node).to_string(),
        },
        kernel: chase::spec(plan.pattern),
        // The chase is one scalar load at a time by construction.
        vector_width: VectorWidth::Scalar,
        flagged: !flags.is_empty(),
        flags,
        elapsed_s,
        setup_s: 0.0,
    };
    Ok((cell, end))
}
