//! Several runs of one side of `diff` made into one (`numaprobe diff A1 A2
//! A3 --vs B1 B2 B3`). One run is one draw: its samples are taken seconds
//! apart and move together with what the host does over seconds, so the
//! spread within a run cannot say how far the next run falls. Runs repeated
//! on each side measure that directly: a figure's noise becomes the
//! standard error of its runs' medians, widened by Student's t for the few
//! runs it rests on, and never below what the runs' own spreads allow
//! ([`level_noise`]). Each figure's samples are pooled over the runs, so
//! the test and the interval read every sample. Trust is judged run by run:
//! a figure any run does not trust is flagged in the pool, with the run
//! named, and the spread between runs is the pool's noise, not a flag.

use super::trust::{self, t_975, CellEvidence, Spread, NOISE_SIGMAS};
use super::{cells, CompareError, Side};
use crate::model::c2c::{C2cPair, C2cResult, Figure as C2cFigure};
use crate::model::matrix::{Cell, MatrixKind, MatrixResult};
use crate::stats::{sketch, SetAside, Summary};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// The noise of a figure measured once in each of several runs, given
/// each run's median and its own noise (standard deviation of its
/// samples): the standard error of the medians' mean, scaled so that
/// [`NOISE_SIGMAS`] of it is Student's t for the runs' degrees of freedom
/// (few runs know their spread poorly), and at least the runs' mean noise
/// over the square root of their count (runs that happen to agree still
/// know their level no better than their samples do). None for fewer than
/// two runs: one run's noise is its own.
pub fn level_noise(medians: &[f64], noises: &[f64]) -> Option<f64> {
    let k = medians.len();
    if k < 2 {
        return None;
    }
    let s = Summary::of(medians)?;
    let between = s.cv * s.mean;
    let root = (k as f64).sqrt();
    let within = noises.iter().sum::<f64>() / noises.len().max(1) as f64;
    Some((t_975(k - 1) / NOISE_SIGMAS * between / root).max(within / root))
}

/// One run's figure as pooling reads it.
struct Draw {
    median: f64,
    noise: f64,
    /// What a test reads of the run's samples ([`sketch::test_values`]).
    values: Vec<f64>,
    /// How many samples the run kept (more than `values` for a document
    /// that leaves them out).
    kept: usize,
    min: f64,
    max: f64,
    set_aside: SetAside,
    flags: Vec<String>,
}

/// The parts of a figure that pooling writes: pooled samples and their
/// summary, the set-aside counts added, the flags of every run.
struct Pooled {
    samples: Vec<f64>,
    /// Stands for the samples when a run's document left them out: its
    /// quantiles pooled, counted as every sample the runs kept.
    sketch: Option<sketch::Sketch>,
    summary: Summary,
    min: f64,
    max: f64,
    set_aside: SetAside,
    flags: Vec<String>,
    noise: Option<f64>,
}

fn pool_draws(draws: &[(usize, Draw)]) -> Option<Pooled> {
    let samples: Vec<f64> = draws
        .iter()
        .flat_map(|(_, d)| d.values.iter().copied())
        .collect();
    let summary = Summary::of(&samples)?;
    let mut set_aside = SetAside::default();
    let mut flags = Vec::new();
    for (run, d) in draws {
        set_aside.preempted += d.set_aside.preempted;
        set_aside.off_cpu += d.set_aside.off_cpu;
        set_aside.shortened = set_aside.shortened.max(d.set_aside.shortened);
        set_aside.used_anyway |= d.set_aside.used_anyway;
        flags.extend(d.flags.iter().map(|f| format!("run {}: {f}", run + 1)));
    }
    let kept: usize = draws.iter().map(|(_, d)| d.kept).sum();
    let (samples, sketch) = if kept == samples.len() {
        (samples, None)
    } else {
        let mut quantiles = samples;
        quantiles.sort_by(f64::total_cmp);
        let n = kept.max(quantiles.len());
        (Vec::new(), Some(sketch::Sketch { n, quantiles }))
    };
    let medians: Vec<f64> = draws.iter().map(|(_, d)| d.median).collect();
    let noises: Vec<f64> = draws.iter().map(|(_, d)| d.noise).collect();
    Some(Pooled {
        samples,
        sketch,
        min: draws
            .iter()
            .map(|(_, d)| d.min)
            .fold(f64::INFINITY, f64::min),
        max: draws
            .iter()
            .map(|(_, d)| d.max)
            .fold(f64::NEG_INFINITY, f64::max),
        summary,
        set_aside,
        flags,
        noise: level_noise(&medians, &noises),
    })
}

/// A figure pooling reads and writes: a matrix cell or a c2c pair's
/// figure, whose fields carry the same names and meaning.
trait Poolable: Clone {
    fn evidence(&self) -> CellEvidence;
    /// Its samples and, in a document that leaves them out, their sketch.
    fn samples(&self) -> (&[f64], Option<&sketch::Sketch>);
    /// Take the pooled samples, summary, set-aside counts and flags.
    fn take(&mut self, p: Pooled);
}

/// One body for both figures, so the two cannot drift apart.
macro_rules! poolable {
    ($t:ty) => {
        impl Poolable for $t {
            fn evidence(&self) -> CellEvidence {
                CellEvidence::from(self)
            }
            fn samples(&self) -> (&[f64], Option<&sketch::Sketch>) {
                (&self.samples, self.sketch.as_ref())
            }
            fn take(&mut self, p: Pooled) {
                self.median = p.summary.median;
                self.cv = p.summary.cv;
                (self.min, self.max) = (p.min, p.max);
                self.samples = p.samples;
                self.sketch = p.sketch;
                self.set_aside = p.set_aside;
                self.flagged = !p.flags.is_empty();
                self.flags = p.flags;
            }
        }
    };
}
poolable!(Cell);
poolable!(C2cFigure);

/// One run's figure, from what the comparison reads of it: its evidence
/// and its samples (or their sketch). Its trust is judged here, run by
/// run ([`trust::cell_trust`]): the pool's spread across runs is its
/// noise, not a reason to distrust it.
fn draw<F: Poolable>(f: &F) -> Draw {
    let e = f.evidence();
    let (samples, sketch) = f.samples();
    let flags = trust::cell_trust(&e).into_iter().collect();
    Draw {
        median: e.median,
        noise: e.noise(),
        values: sketch::test_values(samples, sketch, e.median)
            .0
            .into_owned(),
        kept: e.kept,
        min: e.min,
        max: e.max,
        set_aside: e.set_aside,
        flags,
    }
}

/// One figure pooled over the runs that measured it (`found`: each run's
/// index and its figure, in run order), the first run's figure carrying
/// the rest of its fields; and its noise across runs, for two or more.
fn pool_figure<F: Poolable>(found: &[(usize, &F)]) -> Option<(F, Option<f64>)> {
    let draws: Vec<(usize, Draw)> = found.iter().map(|&(r, f)| (r, draw(f))).collect();
    let p = pool_draws(&draws)?;
    let noise = p.noise;
    let mut out = found.first()?.1.clone();
    out.take(p);
    Some((out, noise))
}

fn refuse(path: &std::path::Path, what: String) -> CompareError {
    CompareError::Unsupported {
        path: path.to_path_buf(),
        what,
    }
}

/// Make one side of several runs (in their order; each named by the path
/// it was read from). A
/// single run is returned as it is. The runs must be of one kind and have
/// measured the same things: the same matrices with the same parameters,
/// c2c or not.
pub fn pool(mut runs: Vec<Side>) -> Result<Side, CompareError> {
    if runs.len() < 2 {
        return runs
            .pop()
            .ok_or_else(|| refuse(&PathBuf::from("-"), "no run given".into()));
    }
    let paths: Vec<PathBuf> = runs.iter().map(|r| PathBuf::from(&r.origin.path)).collect();
    let paths = paths.as_slice();
    let first = runs[0].clone();
    let mut spread = Spread::default();
    spread.runs = runs.len();
    for (i, r) in runs.iter().enumerate().skip(1) {
        if r.origin.kind != first.origin.kind {
            return Err(refuse(
                &paths[i],
                format!(
                    "a {} among runs that are {}: the runs of one side must be of one kind",
                    r.origin.kind, first.origin.kind
                ),
            ));
        }
    }
    let mut side = first.clone();
    for (m, name) in [MatrixKind::Latency, MatrixKind::Bandwidth]
        .into_iter()
        .map(cells::kind_name)
        .enumerate()
    {
        let get = |s: &Side| {
            if m == 0 {
                s.latency.clone()
            } else {
                s.bandwidth.clone()
            }
        };
        let mats: Vec<Option<MatrixResult>> = runs.iter().map(get).collect();
        let pooled = pool_matrices(paths, name, &mats, &mut spread)?;
        if m == 0 {
            side.latency = pooled;
        } else {
            side.bandwidth = pooled;
        }
    }
    let c2cs: Vec<Option<C2cResult>> = runs.iter().map(|s| s.c2c.clone()).collect();
    side.c2c = pool_c2c(paths, &c2cs, &mut spread)?;
    side.origin.runs = runs.iter().map(|r| r.origin.path.clone()).collect();
    side.origin.path = side.origin.runs.join(" + ");
    side.origin.complete = runs.iter().all(|r| r.origin.complete);
    // The side's conditions are its loudest run's: runs measured under
    // load on one side only make the comparison's conditions differ.
    side.system = runs
        .iter()
        .filter_map(|r| r.system.clone())
        .max_by(|x, y| loudness(x).total_cmp(&loudness(y)));
    side.spread = Some(spread);
    Ok(side)
}

/// How loud a run's conditions were: a warning outweighs any load, then
/// the load average per allowed CPU.
fn loudness(c: &crate::system_check::SystemCheck) -> f64 {
    let load = c.load_1m.unwrap_or(0.0) / c.allowed_cpus.max(1) as f64;
    if c.quiet() {
        load
    } else {
        1e9 + load
    }
}

/// Every run holds the document, or none does.
fn all_or_none<T>(paths: &[PathBuf], what: &str, docs: &[Option<T>]) -> Result<bool, CompareError> {
    let held = docs[0].is_some();
    match docs.iter().position(|d| d.is_some() != held) {
        None => Ok(held),
        Some(i) => Err(refuse(
            &paths[i],
            format!(
                "{} a {what} where {} {}: the runs of one side must have measured the same things",
                if held { "has no" } else { "has" },
                paths[0].display(),
                if held { "has one" } else { "has none" },
            ),
        )),
    }
}

fn pool_matrices(
    paths: &[PathBuf],
    name: &str,
    mats: &[Option<MatrixResult>],
    spread: &mut Spread,
) -> Result<Option<MatrixResult>, CompareError> {
    if !all_or_none(paths, &format!("{name} matrix"), mats)? {
        return Ok(None);
    }
    let mats: Vec<&MatrixResult> = mats.iter().flatten().collect();
    let base = mats[0];
    for (i, m) in mats.iter().enumerate().skip(1) {
        if let Some((param, x, y)) = cells::differing(base, m).into_iter().next() {
            return Err(refuse(
                &paths[i],
                format!(
                    "its {name} matrix was measured with {param} {y}, {} with {x}: the runs of one side must measure the same thing",
                    paths[0].display()
                ),
            ));
        }
        if m.unit != base.unit {
            return Err(refuse(
                &paths[i],
                format!(
                    "its {name} matrix is in {}, {} in {}",
                    m.unit,
                    paths[0].display(),
                    base.unit
                ),
            ));
        }
    }
    let mut by: BTreeMap<(u32, u32), Vec<(usize, &Cell)>> = BTreeMap::new();
    for (run, m) in mats.iter().enumerate() {
        for c in &m.cells {
            by.entry((c.cpu_node, c.mem_node))
                .or_default()
                .push((run, c));
        }
    }
    let mut out = base.clone();
    out.cells.clear();
    for ((x, y), cells) in by {
        let Some((c, noise)) = pool_figure(&cells) else {
            continue;
        };
        if let Some(n) = noise {
            spread.set(name, x, y, n);
        }
        out.cells.push(c);
    }
    // A cell failed in one run but measured in another is pooled from the
    // runs that measured it; failed only where no run measured it, once.
    let mut seen: BTreeSet<(u32, u32)> =
        out.cells.iter().map(|c| (c.cpu_node, c.mem_node)).collect();
    out.failed = mats
        .iter()
        .flat_map(|m| m.failed.iter())
        .filter(|f| seen.insert((f.cpu_node, f.mem_node)))
        .cloned()
        .collect();
    Ok(Some(out))
}

fn pool_c2c(
    paths: &[PathBuf],
    results: &[Option<C2cResult>],
    spread: &mut Spread,
) -> Result<Option<C2cResult>, CompareError> {
    if !all_or_none(paths, "c2c result", results)? {
        return Ok(None);
    }
    let results: Vec<&C2cResult> = results.iter().flatten().collect();
    let base = results[0];
    for (i, r) in results.iter().enumerate().skip(1) {
        if r.atomics != base.atomics || r.hitm_lines != base.hitm_lines || r.unit != base.unit {
            return Err(refuse(
                &paths[i],
                format!(
                    "its c2c result was measured with other memory operations or lines than {}'s: the runs of one side must measure the same thing",
                    paths[0].display()
                ),
            ));
        }
    }
    let mut by: BTreeMap<(u32, u32), Vec<(usize, &C2cPair)>> = BTreeMap::new();
    for (run, r) in results.iter().enumerate() {
        for p in &r.pairs {
            by.entry((p.a, p.b)).or_default().push((run, p));
        }
    }
    let mut out = base.clone();
    out.pairs.clear();
    for ((a, b), found) in by {
        let mut pair = found[0].1.clone();
        for (state, kind) in ["c2c hitm", "c2c shared"].into_iter().enumerate() {
            let figures: Vec<(usize, &C2cFigure)> = found
                .iter()
                .filter_map(|&(run, p)| {
                    let f = if state == 0 { &p.hitm } else { &p.shared };
                    f.as_ref().map(|f| (run, f))
                })
                .collect();
            let pooled = pool_figure(&figures).map(|(f, noise)| {
                if let Some(n) = noise {
                    spread.set(kind, a, b, n);
                }
                f
            });
            if state == 0 {
                pair.hitm = pooled;
            } else {
                pair.shared = pooled;
            }
        }
        out.pairs.push(pair);
    }
    // A pair failed in one run but measured in another is pooled from the
    // runs that measured it; failed only where no run measured it, once.
    let mut seen: BTreeSet<(u32, u32)> = out.pairs.iter().map(|p| (p.a, p.b)).collect();
    out.failed = results
        .iter()
        .flat_map(|r| r.failed.iter())
        .filter(|f| seen.insert((f.a, f.b)))
        .cloned()
        .collect();
    Ok(Some(out))
}

#[cfg(test)]
#[path = "pool_tests.rs"]
mod tests;
