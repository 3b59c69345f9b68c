//! `tune`'s plan and verdict, apart from the running of processes (which is
//! the binary's): which candidate placements the user's program runs under
//! (thread binding x memory policy, from the topology), what each sets in
//! the child (CPU set, task memory policy, OpenMP variables), and, from the
//! runs, the ranking by median wall time, whether each gap is beyond noise
//! (the stats layer's Mann–Whitney U test) and the winner (its forms to
//! paste are `winner`'s). Candidates that resolve to the same placement on this
//! machine are run once; a winner is named only when it is faster than the
//! rest beyond noise.

use crate::model::ranking::{Better, RankEntry, Ranking};
use crate::model::tune::{
    untrusted_pair, Candidate, Comparison, Failure, Run, Skipped, TuneReport,
};
use crate::placement::binding::{self, cpulist, BindError, Request, Smt, Strategy};
use crate::placement::{PlacementError, TaskPolicy};
use crate::stats::mann_whitney::mann_whitney;
use crate::stats::Summary;
use crate::topology::Topology;

mod winner;
#[cfg(test)]
use winner::hex_mask;
pub use winner::winner;

/// A gap is beyond noise at this two-sided p-value or below.
pub const ALPHA: f64 = 0.05;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindingKind {
    Compact,
    Scatter,
    /// No affinity beyond the allowed CPUs; `OMP_PROC_BIND=false`.
    None,
}

impl BindingKind {
    pub const ALL: [BindingKind; 3] = [
        BindingKind::Compact,
        BindingKind::Scatter,
        BindingKind::None,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            BindingKind::Compact => "compact",
            BindingKind::Scatter => "scatter",
            BindingKind::None => "none",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryKind {
    /// The default policy: a page lands on the node of the thread that
    /// first writes it.
    FirstTouch,
    /// `MPOL_BIND` to the nodes of the candidate's CPUs.
    LocalBind,
    /// `MPOL_INTERLEAVE` over every allowed memory node.
    Interleave,
    /// `MPOL_WEIGHTED_INTERLEAVE` over every allowed memory node (Linux 6.9+).
    WeightedInterleave,
}

impl MemoryKind {
    pub const ALL: [MemoryKind; 4] = [
        MemoryKind::FirstTouch,
        MemoryKind::LocalBind,
        MemoryKind::Interleave,
        MemoryKind::WeightedInterleave,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryKind::FirstTouch => "first-touch",
            MemoryKind::LocalBind => "local-bind",
            MemoryKind::Interleave => "interleave",
            MemoryKind::WeightedInterleave => "weighted-interleave",
        }
    }
}

/// One candidate as it is to be run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    pub label: String,
    pub binding: BindingKind,
    pub memory: MemoryKind,
    /// The child's affinity; for a binding, OpenMP thread i's CPU at i.
    pub cpus: Vec<u32>,
    /// The memory policy's nodes (empty for first touch).
    pub policy_nodes: Vec<u32>,
    pub env: Vec<(String, String)>,
    pub env_remove: Vec<String>,
}

impl Planned {
    /// The task policy the child applies before `exec`; prepared here, in
    /// the parent, so the child only makes the syscall.
    pub fn task_policy(&self) -> Result<TaskPolicy, PlacementError> {
        use crate::placement::MemPolicy;
        match self.memory {
            MemoryKind::FirstTouch => TaskPolicy::new(&MemPolicy::FirstTouch),
            MemoryKind::LocalBind => TaskPolicy::bind_nodes(&self.policy_nodes),
            MemoryKind::Interleave => {
                TaskPolicy::new(&MemPolicy::Interleave(self.policy_nodes.clone()))
            }
            MemoryKind::WeightedInterleave => {
                TaskPolicy::new(&MemPolicy::WeightedInterleave(self.policy_nodes.clone()))
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub threads: usize,
    pub candidates: Vec<Planned>,
    pub skipped: Vec<Skipped>,
    pub mem_nodes: Vec<u32>,
    pub notes: Vec<String>,
}

/// The candidates for `threads` threads on `topo`. `weighted` says whether
/// the kernel has weighted interleave (its sysfs weights folder exists).
pub fn plan(topo: &Topology, threads: usize, weighted: bool) -> Result<Plan, BindError> {
    // Memory nodes: allowed, and with memory (a memory-less node cannot
    // take an interleaved page).
    let mem_nodes: Vec<u32> = topo
        .nodes
        .iter()
        .filter(|n| n.allowed && n.memory_bytes > 0)
        .map(|n| n.os_index)
        .collect();
    let all_cpus: Vec<u32> = topo
        .cpus
        .iter()
        .filter(|c| c.allowed && c.online)
        .map(|c| c.os_index)
        .collect();
    let mut candidates = Vec::new();
    let mut skipped = Vec::new();
    let mut notes = Vec::new();
    let many_nodes = mem_nodes.len() > 1;
    if !many_nodes {
        skipped.push(Skipped {
            label: "*/local-bind, */interleave, */weighted-interleave".into(),
            reason: format!(
                "one memory node ({}): every policy puts every page on it, so only the binding is ranked",
                cpulist(&mem_nodes)
            ),
        });
    } else if !weighted {
        skipped.push(Skipped {
            label: "*/weighted-interleave".into(),
            reason: "this kernel has no weighted interleave (Linux 6.9+, /sys/kernel/mm/mempolicy/weighted_interleave)".into(),
        });
    }
    for kind in BindingKind::ALL {
        let (cpus, local_nodes, warnings) = match kind {
            BindingKind::None => {
                let nodes: Vec<u32> = topo
                    .allowed_cpu_nodes()
                    .into_iter()
                    .filter(|n| mem_nodes.contains(n))
                    .collect();
                (all_cpus.clone(), nodes, vec![])
            }
            BindingKind::Compact | BindingKind::Scatter => {
                let req = Request {
                    threads,
                    strategy: if kind == BindingKind::Compact {
                        Strategy::Compact
                    } else {
                        Strategy::Scatter
                    },
                    smt: Smt::Avoid,
                    nodes: None,
                };
                let b = binding::bind(topo, &req)?;
                (b.cpus(), b.mem_nodes.clone(), b.warnings.clone())
            }
        };
        if kind == BindingKind::None && threads > all_cpus.len() {
            // bind() refused it already for the other kinds.
            return Err(BindError::TooManyThreads {
                threads,
                cpus: all_cpus.len(),
                scope: String::new(),
            });
        }
        for w in warnings {
            if !notes.contains(&w) {
                notes.push(w);
            }
        }
        for memory in MemoryKind::ALL {
            let policy_nodes = match memory {
                MemoryKind::FirstTouch => vec![],
                _ if !many_nodes => continue,
                MemoryKind::WeightedInterleave if !weighted => continue,
                MemoryKind::LocalBind => local_nodes.clone(),
                MemoryKind::Interleave | MemoryKind::WeightedInterleave => mem_nodes.clone(),
            };
            if memory == MemoryKind::LocalBind && policy_nodes.is_empty() {
                skipped.push(Skipped {
                    label: format!("{}/local-bind", kind.as_str()),
                    reason: "none of its CPUs' nodes has memory this process may use".into(),
                });
                continue;
            }
            let mut env = vec![("OMP_NUM_THREADS".to_string(), threads.to_string())];
            let mut env_remove = vec![];
            if kind == BindingKind::None {
                env.push(("OMP_PROC_BIND".into(), "false".into()));
                env_remove.push("OMP_PLACES".into());
            } else {
                env.push(("OMP_PLACES".into(), omp_places(&cpus)));
                // One place per thread in thread order: close maps thread i
                // to place i.
                env.push(("OMP_PROC_BIND".into(), "close".into()));
            }
            candidates.push(Planned {
                label: format!("{}/{}", kind.as_str(), memory.as_str()),
                binding: kind,
                memory,
                cpus: cpus.clone(),
                policy_nodes,
                env,
                env_remove,
            });
        }
    }
    let candidates = fold_same_placements(candidates, &mut skipped);
    Ok(Plan {
        threads,
        candidates,
        skipped,
        mem_nodes,
        notes,
    })
}

/// Where a candidate's threads run and its pages go on this machine: two
/// candidates with equal placements are one experiment under two names.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Placement {
    /// Each thread on its own CPU, in thread order (a one-CPU set binds an
    /// unbound candidate just the same).
    bound: bool,
    /// Bound: thread i's CPU at i; unbound: the set the threads roam.
    cpus: Vec<u32>,
    memory: Memory,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Memory {
    FirstTouch,
    Bind(Vec<u32>),
    Interleave(Vec<u32>),
    Weighted(Vec<u32>),
}

impl Placement {
    fn of(c: &Planned) -> Placement {
        let nodes = c.policy_nodes.clone();
        let memory = match c.memory {
            MemoryKind::FirstTouch => Memory::FirstTouch,
            MemoryKind::LocalBind => Memory::Bind(nodes),
            MemoryKind::Interleave => Memory::Interleave(nodes),
            MemoryKind::WeightedInterleave => Memory::Weighted(nodes),
        };
        let bound = c.binding != BindingKind::None || c.cpus.len() == 1;
        let mut cpus = c.cpus.clone();
        if !bound {
            cpus.sort_unstable();
        }
        Placement {
            bound,
            cpus,
            memory,
        }
    }

    fn describe(&self) -> String {
        let threads = if self.bound {
            format!(
                "threads bound to CPUs {} in turn",
                list_in_order(&self.cpus)
            )
        } else {
            format!("threads free on CPUs {}", cpulist(&self.cpus))
        };
        let memory = match &self.memory {
            Memory::FirstTouch => "first touch".to_string(),
            Memory::Bind(n) => format!("every page on node(s) {}", cpulist(n)),
            Memory::Interleave(n) => format!("pages interleaved over nodes {}", cpulist(n)),
            Memory::Weighted(n) => format!("pages weighted-interleaved over nodes {}", cpulist(n)),
        };
        format!("{threads}, {memory}")
    }
}

/// `2,0,1`: CPUs in thread order (a range would hide the order).
fn list_in_order(cpus: &[u32]) -> String {
    cpus.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Keep the first candidate of every placement; the others are listed as
/// not run, naming the one that stands for them.
fn fold_same_placements(candidates: Vec<Planned>, skipped: &mut Vec<Skipped>) -> Vec<Planned> {
    let mut kept: Vec<(Planned, Placement)> = Vec::new();
    for c in candidates {
        let here = Placement::of(&c);
        match kept.iter().find(|(_, p)| *p == here) {
            Some((first, _)) => skipped.push(Skipped {
                label: c.label.clone(),
                reason: format!(
                    "the same placement as {} on this machine ({}): run once, as {}",
                    first.label,
                    here.describe(),
                    first.label
                ),
            }),
            None => kept.push((c, here)),
        }
    }
    kept.into_iter().map(|(c, _)| c).collect()
}

fn omp_places(cpus: &[u32]) -> String {
    cpus.iter()
        .map(|c| format!("{{{c}}}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// What the runner gathered for one candidate (in plan order).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    pub runs: Vec<Run>,
    pub failure: Option<Failure>,
}

/// What the report says about the run as a whole.
#[derive(Debug, Clone, PartialEq)]
pub struct Meta {
    pub command: Vec<String>,
    pub threads_from: String,
    pub runs_requested: usize,
    pub rounds_completed: usize,
    pub complete: bool,
}

/// Rank the candidates by median wall time over the finished rounds (a
/// failed candidate is listed, never ranked), test each gap to the next
/// ranked one, and pick the winner.
pub fn report(plan: &Plan, outcomes: &[Outcome], meta: Meta) -> TuneReport {
    let mut cands: Vec<Candidate> = plan
        .candidates
        .iter()
        .zip(outcomes)
        .map(|(p, o)| {
            let times: Vec<f64> = o
                .runs
                .iter()
                .filter(|r| r.ok && r.round < meta.rounds_completed)
                .map(|r| r.wall_s)
                .collect();
            let cpu: Vec<f64> = o
                .runs
                .iter()
                .filter(|r| r.ok && r.round < meta.rounds_completed)
                .filter_map(|r| r.cpu_s)
                .collect();
            let wall_s = Summary::of(&times);
            Candidate {
                label: p.label.clone(),
                binding: p.binding.as_str().into(),
                memory: p.memory.as_str().into(),
                cpus: p.cpus.clone(),
                policy_nodes: p.policy_nodes.clone(),
                env: p.env.clone(),
                runs: o.runs.clone(),
                wall_s,
                failure: o.failure.clone(),
                rank: None,
                vs_next: None,
                cpu_s: Summary::of(&cpu),
                flags: wall_s.map_or_else(Vec::new, |w| wall_flags(&times, &w)),
            }
        })
        .collect();
    let times_of = |c: &Candidate| -> Vec<f64> {
        c.runs
            .iter()
            .filter(|r| r.ok && r.round < meta.rounds_completed)
            .map(|r| r.wall_s)
            .collect()
    };
    // Ranked: no failure and at least one finished run; by median, ties by
    // plan order (stable sort).
    let mut order: Vec<usize> = (0..cands.len())
        .filter(|&i| cands[i].failure.is_none() && cands[i].wall_s.is_some())
        .collect();
    order.sort_by(|&a, &b| {
        let (ma, mb) = (cands[a].wall_s.unwrap(), cands[b].wall_s.unwrap());
        ma.median.total_cmp(&mb.median)
    });
    for (r, &i) in order.iter().enumerate() {
        cands[i].rank = Some(r + 1);
        if let Some(&j) = order.get(r + 1) {
            let (a, b) = (times_of(&cands[i]), times_of(&cands[j]));
            let p = mann_whitney(&a, &b).map_or(1.0, |t| t.p);
            let (mi, mj) = (
                cands[i].wall_s.unwrap().median,
                cands[j].wall_s.unwrap().median,
            );
            cands[i].vs_next = Some(Comparison {
                next: cands[j].label.clone(),
                ratio: if mi > 0.0 { mj / mi } else { 1.0 },
                p_value: p,
                beyond_noise: p <= ALPHA,
            });
        }
    }
    let mut entries: Vec<RankEntry> = order
        .iter()
        .map(|&i| {
            let c = &cands[i];
            let s = c.wall_s.unwrap();
            RankEntry {
                label: c.label.clone(),
                median: s.median,
                min: s.min,
                max: s.max,
                samples: s.n,
                note: c.vs_next.as_ref().map(|v| {
                    if v.beyond_noise {
                        format!(
                            "{:.2}x faster than {} (p={:.3})",
                            v.ratio, v.next, v.p_value
                        )
                    } else {
                        format!("within noise of {} (p={:.3})", v.next, v.p_value)
                    }
                }),
                ranked: true,
                flags: c.flags.clone(),
            }
        })
        .collect();
    for c in cands.iter().filter(|c| c.rank.is_none()) {
        let (median, min, max, samples) = c
            .wall_s
            .map_or((0.0, 0.0, 0.0, 0), |s| (s.median, s.min, s.max, s.n));
        entries.push(RankEntry {
            label: c.label.clone(),
            median,
            min,
            max,
            samples,
            note: Some(match &c.failure {
                Some(f) => format!("failed in round {}: {}", f.round + 1, f.status),
                None => "no finished run".into(),
            }),
            ranked: false,
            flags: c.flags.clone(),
        });
    }
    let mut notes = plan.notes.clone();
    if meta.rounds_completed < 4 && order.len() > 1 {
        notes.push(format!(
            "{} round(s): too few for any gap to be beyond noise at p <= {ALPHA} (the exact test needs 4 runs per candidate); use --runs 5 or more",
            meta.rounds_completed
        ));
    }
    notes.extend(beside_note(&cands, meta.rounds_completed));
    let winner =
        choose(&cands, &order).map(|i| winner(&plan.candidates[i], plan.threads, &meta.command));
    TuneReport {
        schema: crate::SCHEMA.into(),
        complete: meta.complete,
        command: meta.command.clone(),
        threads: plan.threads,
        threads_from: meta.threads_from,
        runs_requested: meta.runs_requested,
        rounds_completed: meta.rounds_completed,
        mem_nodes: plan.mem_nodes.clone(),
        candidates: cands,
        skipped: plan.skipped.clone(),
        rankings: vec![Ranking {
            title: format!("tune: wall time of `{}`", meta.command.join(" ")),
            unit: "s".into(),
            better: Better::Lower,
            entries,
        }],
        winner,
        notes,
    }
}

/// How many of the counted runs ran beside other tasks keeping
/// [`crate::beside::BESIDE_WARN_CPUS`] or more busy, and what that means for
/// the ranking; None when none did. The rounds interleave the candidates,
/// so steady load falls on all of them and the test sees it as noise; load
/// that came and went can still favour whichever ran in a quiet spell.
pub fn beside_note(cands: &[Candidate], rounds: usize) -> Option<String> {
    let runs: Vec<&Run> = cands
        .iter()
        .flat_map(|c| &c.runs)
        .filter(|r| r.ok && r.round < rounds)
        .collect();
    let beside: Vec<f64> = runs
        .iter()
        .filter_map(|r| r.others_busy_cpus)
        .filter(|&o| o >= crate::beside::BESIDE_WARN_CPUS)
        .collect();
    let most = beside.iter().copied().fold(0.0, f64::max);
    (!beside.is_empty()).then(|| {
        format!(
            "{} of {} runs ran beside other tasks (up to {most:.1} CPUs busy): load that came and went can favour whichever candidate ran in a quiet spell; confirm the ranking on a quieter machine",
            beside.len(),
            runs.len()
        )
    })
}

/// The index of the winner among `cands` (`order`: the ranked ones,
/// fastest first): the fastest when its gap to the next is beyond noise, or
/// the only ranked one when every other candidate failed. None when the
/// fastest is within noise of the next, when either of the two is flagged
/// ([`untrusted_pair`]), or when a lone candidate had nothing to be
/// compared with (the renderer says which).
pub fn choose(cands: &[Candidate], order: &[usize]) -> Option<usize> {
    let &top = order.first()?;
    match &cands[top].vs_next {
        Some(_) if untrusted_pair(cands, &cands[top]).is_some() => None,
        Some(v) => v.beyond_noise.then_some(top),
        None => cands.iter().any(|c| c.failure.is_some()).then_some(top),
    }
}

/// Why a candidate's wall times cannot be taken as is: the trust lines
/// every figure answers to ([`crate::stats::instability`], two modes).
pub fn wall_flags(times: &[f64], s: &Summary) -> Vec<String> {
    let mut flags: Vec<String> = crate::stats::instability(s.cv, s.min, s.max, s.n)
        .into_iter()
        .collect();
    flags.extend(crate::stats::two_modes(times).map(|m| m.flag("s")));
    flags
}

#[cfg(test)]
mod tests;
