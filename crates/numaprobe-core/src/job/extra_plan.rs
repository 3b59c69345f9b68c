//! How the main job's extra phases (c2c, loaded latency, system peak) share
//! the budget, and which node pairs get a loaded-latency curve. Pure
//! arithmetic over numbers and matrices, tested without measuring.
//!
//! The split, as `run --help` and doc/main-job.md state it:
//! - The matrices are planned into [`MATRIX_SHARE`] of the budget (after the
//!   calibration); the rest is held back for the extras. Whatever the
//!   matrices leave unused (a small machine finishes them early) goes to
//!   the extras too.
//! - When an extra phase begins it gets its weight's part of what is left of
//!   the budget over the phases still to run (weights: c2c one, loaded
//!   latency two, peak one, cache sweep one). So c2c gets at most a fifth of
//!   what is left when the extras begin, loaded latency half of what c2c
//!   leaves, the peak half of the rest and the sweep what is left then;
//!   time a phase does not use passes to the next.
//! - A phase whose share cannot hold its first step (set-up, warm-up and
//!   three samples) plus [`MIN_EXTRA_S`] takes that much from the later
//!   phases' shares when what is left allows; otherwise it is skipped with
//!   a reason: not even one step with its set-up would fit.

use crate::analysis::levels::{cluster, NOISE_FLOOR};
use crate::model::extra::Extra;
use crate::model::matrix::MatrixResult;
use crate::topology::Distances;
use serde::Serialize;

/// Part of the budget the two matrices are planned into.
pub const MATRIX_SHARE: f64 = 0.6;

/// The least share an extra phase starts with: below it even one step (a
/// few threads' buffers set up, a warm-up and three samples) would overrun
/// the budget.
pub const MIN_EXTRA_S: f64 = 0.2;

/// How much of what is left each phase takes, relative to the others still
/// to run.
pub fn weight(e: Extra) -> f64 {
    match e {
        Extra::C2c => 1.0,
        Extra::LoadedLatency => 2.0,
        Extra::Peak => 1.0,
        Extra::Sweep => 1.0,
    }
}

/// Seconds phase `e` gets when it begins with `left_s` of the budget left
/// and `e` itself plus `later` still to run.
pub fn share_s(e: Extra, later: &[Extra], left_s: f64) -> f64 {
    let total: f64 = weight(e) + later.iter().map(|&l| weight(l)).sum::<f64>();
    (left_s.max(0.0) * weight(e) / total).max(0.0)
}

/// One extra phase in the plan said before measuring (`plan.extras_plan` in
/// `run.json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExtraPlan {
    pub phase: Extra,
    /// Its part of what is left when it begins (c2c 1/5, loaded latency 1/2
    /// of the rest, peak 1/2 of the rest, the sweep the rest).
    pub fraction_of_left: f64,
    /// Its share if the matrices take their estimated time.
    pub estimated_share_s: f64,
}

/// The extras' shares when the matrices are expected to leave `left_s`.
pub fn plan(left_s: f64) -> Vec<ExtraPlan> {
    let mut left = left_s.max(0.0);
    Extra::ALL
        .iter()
        .enumerate()
        .map(|(i, &e)| {
            let later = &Extra::ALL[i + 1..];
            let s = share_s(e, later, left);
            let p = ExtraPlan {
                phase: e,
                // The phase's part of one second left: the same whatever
                // is left, and exact (s / left can be a unit in the last
                // place off, 0.19999999999999998 for a fifth).
                fraction_of_left: share_s(e, later, 1.0),
                estimated_share_s: s,
            };
            left -= s;
            p
        })
        .collect()
}

/// The loaded-latency pairs: one (CPU node, memory node) per distinct level
/// of the measured latency matrix, local first, then the worst remote
/// level, then the other remote levels from the best. Levels are the
/// remote cells grouped by `analysis::levels::cluster` (log scale, the
/// measurement's noise floor), as `infer` groups them; each level is
/// represented by a member from the local pair's CPU node when it has one
/// (so curves compare from one node's view), else by its median member.
/// Only rows of `cpu_nodes` (the nodes that can chase and load) count.
/// Flagged cells count only when no unflagged one is left. Without measured
/// cells: the first CPU node's own memory and the remote node its SLIT puts
/// farthest. One node: the local pair only.
pub fn loaded_pairs(
    lat: Option<&MatrixResult>,
    cpu_nodes: &[u32],
    mem_nodes: &[u32],
    distances: Option<&Distances>,
) -> Vec<(u32, u32)> {
    let cells: Vec<(u32, u32, f64)> = match lat {
        Some(m) => {
            // Only rows that can be a curve's CPU node.
            let rows: Vec<&crate::model::matrix::Cell> = m
                .cells
                .iter()
                .filter(|c| cpu_nodes.contains(&c.cpu_node))
                .collect();
            let ok: Vec<(u32, u32, f64)> = rows
                .iter()
                .filter(|c| !c.flagged && c.median > 0.0)
                .map(|c| (c.cpu_node, c.mem_node, c.median))
                .collect();
            if ok.is_empty() {
                rows.iter()
                    .filter(|c| c.median > 0.0)
                    .map(|c| (c.cpu_node, c.mem_node, c.median))
                    .collect()
            } else {
                ok
            }
        }
        None => Vec::new(),
    };
    pairs_by_level(&cells, cpu_nodes, mem_nodes, distances)
}

/// [`loaded_pairs`] over (CPU node, memory node, ns) cells.
pub fn pairs_by_level(
    cells: &[(u32, u32, f64)],
    cpu_nodes: &[u32],
    mem_nodes: &[u32],
    distances: Option<&Distances>,
) -> Vec<(u32, u32)> {
    let first_row = cpu_nodes
        .first()
        .map(|&c| super::cells::diagonal_and_farthest(&[c], mem_nodes, distances));
    // The local pair: the first CPU node's own memory, measured if it was.
    let local = cpu_nodes
        .iter()
        .find_map(|&c| cells.iter().find(|x| x.0 == c && x.1 == c))
        .map(|x| (x.0, x.1))
        .or_else(|| {
            first_row
                .as_ref()
                .and_then(|r| r.iter().find(|(c, m)| c == m).copied())
        });
    let mut out: Vec<(u32, u32)> = local.into_iter().collect();
    let remote: Vec<(u32, u32, f64)> = cells.iter().filter(|x| x.0 != x.1).copied().collect();
    if remote.is_empty() {
        // Nothing remote measured: the farthest remote node by the SLIT,
        // when there is another memory node at all.
        if let Some(r) = first_row {
            out.extend(r.into_iter().filter(|(c, m)| c != m));
        }
        return out;
    }
    let xs: Vec<f64> = remote.iter().map(|x| x.2.ln()).collect();
    let groups = cluster(&xs, NOISE_FLOOR);
    let home = local.map(|l| l.0);
    let pick = |g: &Vec<usize>| -> (u32, u32) {
        // Members are ordered by value: prefer the local pair's node, the
        // middle one of those, else the middle of all.
        let mine: Vec<usize> = g
            .iter()
            .copied()
            .filter(|&i| Some(remote[i].0) == home)
            .collect();
        let from = if mine.is_empty() { g.clone() } else { mine };
        let i = from[from.len() / 2];
        (remote[i].0, remote[i].1)
    };
    let reps: Vec<(u32, u32)> = groups.iter().map(pick).collect();
    if let Some(&worst) = reps.last() {
        out.push(worst);
    }
    out.extend(reps[..reps.len() - 1].iter().copied());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c2c_gets_a_fifth_and_the_sweep_what_is_left() {
        let left = 40.0;
        let later = [Extra::LoadedLatency, Extra::Peak, Extra::Sweep];
        let c2c = share_s(Extra::C2c, &later, left);
        assert!((c2c - 8.0).abs() < 1e-9, "{c2c}");
        // c2c used only 4 s: loaded latency gets half of the 36 s left.
        let loaded = share_s(Extra::LoadedLatency, &later[1..], 36.0);
        assert!((loaded - 18.0).abs() < 1e-9, "{loaded}");
        let peak = share_s(Extra::Peak, &later[2..], 18.0);
        assert!((peak - 9.0).abs() < 1e-9, "{peak}");
        assert_eq!(share_s(Extra::Sweep, &[], 7.5), 7.5);
        assert_eq!(share_s(Extra::Sweep, &[], -3.0), 0.0);
    }

    #[test]
    fn the_plan_splits_what_the_matrices_leave_and_adds_up() {
        let p = plan(40.0);
        let phases: Vec<Extra> = p.iter().map(|x| x.phase).collect();
        assert_eq!(phases, Extra::ALL.to_vec());
        let sum: f64 = p.iter().map(|x| x.estimated_share_s).sum();
        assert!((sum - 40.0).abs() < 1e-9, "{sum}");
        assert!((p[0].fraction_of_left - 0.2).abs() < 1e-9);
        assert!((p[1].fraction_of_left - 0.5).abs() < 1e-9);
        assert!((p[2].fraction_of_left - 0.5).abs() < 1e-9);
        assert!((p[3].fraction_of_left - 1.0).abs() < 1e-9);
        // Nothing left: the fractions still say how it would be split.
        let none = plan(0.0);
        assert!(none.iter().all(|x| x.estimated_share_s == 0.0));
        assert!((none[0].fraction_of_left - 0.2).abs() < 1e-9);
    }

    fn d4() -> Distances {
        Distances {
            node_ids: vec![0, 1, 2, 3],
            matrix: vec![
                vec![10, 16, 32, 32],
                vec![16, 10, 32, 32],
                vec![32, 32, 10, 16],
                vec![32, 32, 16, 10],
            ],
        }
    }

    /// Two sockets of two nodes: local 90 ns, same socket 140, across 250,
    /// with a little noise.
    fn square() -> Vec<(u32, u32, f64)> {
        let mut v = Vec::new();
        for c in 0..4u32 {
            for m in 0..4u32 {
                let base = if c == m {
                    90.0
                } else if c / 2 == m / 2 {
                    140.0
                } else {
                    250.0
                };
                let noise = 1.0 + 0.002 * f64::from((c * 4 + m) % 5);
                v.push((c, m, base * noise));
            }
        }
        v
    }

    #[test]
    fn one_pair_per_level_local_first_then_the_worst() {
        let n = [0, 1, 2, 3];
        let p = pairs_by_level(&square(), &n, &n, Some(&d4()));
        assert_eq!(p.len(), 3, "{p:?}");
        assert_eq!(p[0], (0, 0));
        // The worst level (across sockets) next, seen from node 0.
        assert_eq!(p[1].0, 0);
        assert!(p[1].1 >= 2, "{p:?}");
        // Then the same-socket level.
        assert_eq!(p[2], (0, 1));
    }

    #[test]
    fn one_remote_level_gives_local_and_worst_only() {
        let n = [0, 1];
        let cells = vec![(0, 0, 90.0), (0, 1, 150.0), (1, 0, 151.0), (1, 1, 91.0)];
        assert_eq!(pairs_by_level(&cells, &n, &n, None), vec![(0, 0), (0, 1)]);
    }

    #[test]
    fn one_node_is_local_only() {
        assert_eq!(
            pairs_by_level(&[(0, 0, 90.0)], &[0], &[0], None),
            vec![(0, 0)]
        );
        // Nothing measured at all: still the local pair.
        assert_eq!(pairs_by_level(&[], &[0], &[0], None), vec![(0, 0)]);
    }

    #[test]
    fn without_remote_cells_the_slit_names_the_worst_remote() {
        let n = [0, 1, 2, 3];
        let p = pairs_by_level(&[(0, 0, 90.0)], &n, &n, Some(&d4()));
        assert_eq!(p, vec![(0, 0), (0, 2)]);
    }

    #[test]
    fn a_memory_only_node_can_be_the_worst_level() {
        // Node 2 has memory only (a column, never a row).
        let cells = vec![
            (0, 0, 90.0),
            (0, 1, 140.0),
            (0, 2, 400.0),
            (1, 0, 141.0),
            (1, 1, 91.0),
            (1, 2, 402.0),
        ];
        let p = pairs_by_level(&cells, &[0, 1], &[0, 1, 2], None);
        assert_eq!(p, vec![(0, 0), (0, 2), (0, 1)]);
    }
}
