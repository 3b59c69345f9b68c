//! Measuring a bandwidth plan: one buffer per memory node, set up and
//! checked against the live machine right before it is allocated; each
//! cell's pinned workers released together by a barrier per sample.

use super::{buffer_footprint, per_thread, write_allocate_note, BandwidthPlan, PlannedCell};
use crate::experiments::node_buffers;
use crate::experiments::team::{shortened, Part, Team, MIN_PART_BYTES};
use crate::experiments::{
    fit_cell, target_sample_ns, ExperimentError, LiveGauge, MemoryGauge, Progress,
};
use crate::held::Lost;
use crate::kernels::stream::{self, Streams};
use crate::model::matrix::{Cell, CellParams, CellPlacement, FailedCell, MatrixKind, MatrixResult};
use crate::placement::{
    pin_current_thread, BufferSpec, LiveSystem, MemPolicy, NodeBuffer, PLACEMENT_THRESHOLD,
};
use crate::stats::{self, StopRule};
use crate::timer::{Stamp, Timer};

/// Measure every cell of the plan, in order, checking each cell's memory
/// against the live machine right before it allocates.
pub fn run(
    plan: &BandwidthPlan,
    progress: &mut dyn Progress,
) -> Result<MatrixResult, ExperimentError> {
    run_with(plan, progress, &mut LiveGauge(LiveSystem::read()?))
}

/// [`run`] with the memory figures taken from `gauge`.
pub fn run_with(
    plan: &BandwidthPlan,
    progress: &mut dyn Progress,
    gauge: &mut dyn MemoryGauge,
) -> Result<MatrixResult, ExperimentError> {
    let timer = *Timer::get();
    let mut result = MatrixResult::new(
        MatrixKind::Bandwidth,
        plan.cpu_nodes.clone(),
        plan.mem_nodes.clone(),
        plan.rule,
        timer.info(),
    );
    result.notes.extend(plan.notes.iter().cloned());
    result.notes.extend(write_allocate_note(plan.op));
    if plan.scaling {
        result.scaling = Some(Vec::new());
    }
    let total = plan.cells.len();
    let mut index = 0;
    let label = |pc: &PlannedCell| {
        format!(
            "{} thread(s) on CPUs {} (node {}) -> memory node {}",
            pc.cpus.len(),
            crate::units::format_list(&pc.cpus),
            pc.cpu_node,
            pc.mem_node
        )
    };
    let fail = |result: &mut MatrixResult, pc: &PlannedCell, reason: &str| {
        result.failed.push(FailedCell {
            cpu_node: pc.cpu_node,
            mem_node: pc.mem_node,
            cpus: pc.cpus.clone(),
            reason: reason.to_string(),
        });
    };
    'nodes: for (mn, group) in
        node_buffers::by_memory_node(&plan.cells, &plan.mem_nodes, |c| c.mem_node)
    {
        if crate::cancel::requested() {
            break;
        }
        let first = &plan.cells[group[0]];
        let toucher =
            crate::experiments::node_buffers::toucher_of(&plan.touchers, mn, first.cpus[0]);
        let prepared = size_cell(plan, gauge, index, first).and_then(|(size, reduced)| {
            let spec = BufferSpec::new(size as usize, MemPolicy::Bind(mn), plan.pages);
            Ok((
                node_buffers::set_up(&spec, mn, toucher, |_| Ok(()))?,
                size,
                reduced,
            ))
        });
        let (mut prepared, size, reduced) = match prepared {
            Ok(p) => p,
            Err(e) => {
                let reason = e.to_string();
                for &i in &group {
                    if crate::cancel::requested() {
                        break 'nodes;
                    }
                    progress.cell_started(index, total, &label(&plan.cells[i]));
                    fail(&mut result, &plan.cells[i], &reason);
                    progress.cell_failed(index, total, &reason, &result);
                    index += 1;
                }
                continue;
            }
        };
        progress.buffer_ready(&prepared.record);
        result.setups.push(prepared.record.clone());
        for &i in &group {
            let pc = &plan.cells[i];
            progress.cell_started(index, total, &label(pc));
            if crate::cancel::requested() {
                break 'nodes;
            }
            let rule = progress.rule_for_cell(index, plan.rule);
            let began = std::time::Instant::now();
            index += 1;
            let measured = measure_cell(plan, &mut prepared.buf, size, &rule, &timer, pc);
            let mut cell = match measured {
                Ok(cell) => cell,
                Err(e) => {
                    let reason = e.to_string();
                    fail(&mut result, pc, &reason);
                    progress.cell_failed(index - 1, total, &reason, &result);
                    continue;
                }
            };
            if let Some(why) = &reduced {
                cell.flags.push(why.clone());
                cell.flagged = true;
            }
            cell.setup_s = (began.elapsed().as_secs_f64() - cell.elapsed_s).max(0.0);
            prepared.record.cells += 1;
            if let Some(s) = result.setups.last_mut() {
                s.cells = prepared.record.cells;
            }
            if let Some(sc) = result.scaling.as_mut() {
                sc.push(cell.clone());
                // The matrix shows the largest thread count measured so far.
                result.cells.clear();
                result.matrix = vec![vec![None]];
            }
            result.push(cell);
            progress.cell_finished(&result);
        }
    }
    // A stop requested during the last cell cut that cell short too.
    result.interrupted |= crate::cancel::requested();
    result.complete = !result.interrupted && result.failed.is_empty();
    Ok(result)
}

/// The size the memory node's buffer is set up with (checked before cell
/// `index`, the first on it, with its threads' CPUs), and why it is
/// smaller than planned.
fn size_cell(
    plan: &BandwidthPlan,
    gauge: &mut dyn MemoryGauge,
    index: usize,
    pc: &PlannedCell,
) -> Result<(u64, Option<String>), ExperimentError> {
    // Huge page pools are checked by the allocations themselves.
    if plan.pages.hugetlb() {
        return Ok((plan.size, None));
    }
    let available = gauge.allocatable(index, pc.mem_node, &pc.cpus)?;
    let threads = plan.cells.iter().map(|c| c.cpus.len()).max().unwrap_or(1);
    let footprint = |s: u64| buffer_footprint(s, plan.pages);
    let min = threads as u64 * plan.op.streams() as u64 * crate::pagesize::base();
    let fit = fit_cell(
        plan.size,
        plan.size_explicit,
        &footprint,
        min,
        pc.mem_node,
        available,
    )?;
    Ok((fit.size, fit.reduced))
}

struct WorkerReport {
    observed_cpu: u32,
    bytes_per_pass: u64,
}

/// Measure one cell on the memory node's buffer: each thread streams its
/// own contiguous share of `size` bytes.
fn measure_cell(
    plan: &BandwidthPlan,
    buf: &mut NodeBuffer,
    size: u64,
    rule: &StopRule,
    timer: &Timer,
    pc: &PlannedCell,
) -> Result<Cell, ExperimentError> {
    let threads = pc.cpus.len();
    let per_thread = per_thread(size.min(buf.len() as u64), threads, plan.op);
    if per_thread == 0 {
        return Err(ExperimentError::Invalid(format!(
            "{} B is too small for {threads} threads of {}",
            buf.len(),
            plan.op.name()
        )));
    }
    if !buf.flush_caches() && crate::cancel::requested() {
        return Err(crate::placement::PlacementError::Interrupted.into());
    }
    // Addresses, not pointers: the workers' shares are disjoint parts of
    // the buffer, which outlives the team.
    let base = buf.as_mut_ptr() as usize;
    let work = |i: usize, team: &Team| {
        let cpu = pc.cpus[i];
        let share = (base + i * per_thread as usize, per_thread as usize);
        let setup = || -> Result<_, ExperimentError> {
            let observed = pin_current_thread(&[cpu])?;
            Ok((
                observed,
                Streams::split(plan.op, share.0 as *mut u8, share.1),
            ))
        };
        let pass = |(_, streams): &mut (u32, Streams), reps: u64, part: Part| {
            let streams = match part.range(streams.len, stream::BLOCK) {
                Some((start, len)) if part.parts > 1 => streams.slice(start, len),
                _ => *streams,
            };
            for _ in 0..reps {
                // SAFETY: the arrays (or the part of them) lie inside this
                // worker's share of the buffer, 64-byte aligned, and the
                // width was checked available in the plan.
                std::hint::black_box(unsafe { stream::run(plan.op, plan.width, &streams) });
            }
            streams.bytes_per_pass(plan.op) * reps
        };
        let (observed, streams) =
            team.serve(i, setup, timer, crate::fault::BANDWIDTH_WORKER, pass)?;
        Ok(WorkerReport {
            observed_cpu: observed,
            bytes_per_pass: streams.bytes_per_pass(plan.op),
        })
    };
    let beside = crate::beside::Watch::start();
    let (reports, (measured, elapsed_s)) = Team::run(threads, work, |team| {
        coordinate(per_thread, rule, timer, team)
    })?;
    let placement = CellPlacement::combine(&[buf.verify()?]);
    let mut flags = Vec::new();
    if placement.fraction_on_intended < PLACEMENT_THRESHOLD {
        flags.push(format!(
            "placement {:.1} % on node {} < {:.0} %",
            placement.fraction_on_intended * 100.0,
            pc.mem_node,
            PLACEMENT_THRESHOLD * 100.0
        ));
    }
    if measured.stop == crate::stats::StopReason::Interrupted {
        flags.push(crate::experiments::cut_short_flag(measured.samples.len()));
    }
    let bytes: u64 = reports.iter().map(|r| r.bytes_per_pass).sum();

    Ok(Cell {
        cpu_node: pc.cpu_node,
        mem_node: pc.mem_node,
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
        cpus: reports.iter().map(|r| r.observed_cpu).collect(),
        params: CellParams {
            size_bytes: bytes,
            stride_bytes: None,
            pattern: None,
            window_pages: None,
            pages: plan.pages,
            threads: threads as u32,
            op: Some(plan.op.name().into()),
            policy: MemPolicy::Bind(pc.mem_node).to_string(),
        },
        kernel: plan.op.spec_for(plan.width),
        vector_width: plan.width,
        flagged: !flags.is_empty(),
        flags,
        elapsed_s,
        setup_s: 0.0,
    })
}

/// The coordinator's side: size the samples, then sample under the rule.
/// A sample counts only when every worker held its CPU through it; when
/// many do not, samples shorten ([`stats::repeat_held`]): fewer passes, then
/// a part of a pass, down to [`MIN_PART_BYTES`] of each array.
fn coordinate(
    per_thread: u64,
    rule: &StopRule,
    timer: &Timer,
    team: &Team,
) -> Result<(stats::Measured, f64), ExperimentError> {
    let sample = |reps: u64, part: Part| -> Result<(f64, f64, Option<Lost>), ExperimentError> {
        let s = team.sample_part(reps, part)?;
        let start = s.stamps.iter().map(|s| s.0).min().unwrap_or(Stamp(0));
        let end = s.stamps.iter().map(|s| s.1).max().unwrap_or(Stamp(0));
        let bytes: u64 = s.stamps.iter().map(|s| s.2).sum();
        Ok((
            timer.elapsed_ns(start, end).max(1.0),
            bytes as f64,
            s.lost(timer),
        ))
    };
    // Probe one pass to size the samples.
    let (pass_ns, _, _) = sample(1, Part::WHOLE)?;
    let reps = (target_sample_ns(rule.budget) / pass_ns).clamp(1.0, 1e6) as u64;
    let most_parts = (per_thread / MIN_PART_BYTES).max(1);
    let mut k = 0u64;
    let started = std::time::Instant::now();
    let measured = stats::repeat_held(rule, |shorten| {
        let (reps, part) = shortened(reps, shorten as u64, most_parts, k);
        k += 1;
        let (ns, bytes, lost) = sample(reps, part)?;
        Ok::<_, ExperimentError>(stats::Taken {
            value: bytes / ns,
            lost,
        })
    })?;
    Ok((measured, started.elapsed().as_secs_f64()))
}
