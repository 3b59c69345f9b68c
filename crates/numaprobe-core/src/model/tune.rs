//! The result model of `numaprobe tune -- CMD`: the candidate placements
//! the user's program ran under, every run (wall time, exit status, where
//! its memory was), the ranking by median wall time with the noise verdict
//! between neighbours, and the winner in the forms people paste. The serde
//! form is the JSON contract (doc/commands/tune.md); its top-level
//! `rankings` array is what the HTML report draws as a bar chart.

use super::ranking::Ranking;
pub use crate::placement::numa_maps::{NodeBytes, NumaMaps};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TuneReport {
    pub schema: String,
    /// False when a stop (Ctrl-C) came before every round had run.
    pub complete: bool,
    /// The program and its arguments, as given after `--`.
    pub command: Vec<String>,
    pub threads: usize,
    /// Where the thread count came from: `--threads`, `OMP_NUM_THREADS` or
    /// `allowed CPUs`.
    pub threads_from: String,
    pub runs_requested: usize,
    /// Rounds (every candidate once) finished; only these are ranked.
    pub rounds_completed: usize,
    /// Memory nodes this process may use (the candidates' universe).
    pub mem_nodes: Vec<u32>,
    pub candidates: Vec<Candidate>,
    /// Candidates not run, with why (a one-node machine, an old kernel).
    pub skipped: Vec<Skipped>,
    /// One ranking: wall time, lower is better.
    pub rankings: Vec<Ranking>,
    /// The best ranked candidate, None when none succeeded.
    pub winner: Option<Winner>,
    pub notes: Vec<String>,
}

/// One placement: a thread binding and a memory policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// `binding/memory`, e.g. `scatter/interleave`.
    pub label: String,
    /// `compact`, `scatter` or `none`.
    pub binding: String,
    /// `first-touch`, `local-bind`, `interleave` or `weighted-interleave`.
    pub memory: String,
    /// The affinity the child got (every allowed CPU for `none`), and for a
    /// binding the CPU of OpenMP thread i at `cpus[i]`.
    pub cpus: Vec<u32>,
    /// The nodes of the memory policy (empty for first touch).
    pub policy_nodes: Vec<u32>,
    /// Environment variables set (name, value); `OMP_PLACES` is removed
    /// from the environment for `none`.
    pub env: Vec<(String, String)>,
    pub runs: Vec<Run>,
    /// Median, min, max over the successful runs of finished rounds.
    pub wall_s: Option<crate::stats::Summary>,
    /// Set when a run failed: the candidate is never ranked.
    pub failure: Option<Failure>,
    /// 1 for the fastest; None when not ranked.
    pub rank: Option<usize>,
    /// Against the next ranked candidate (the one just slower).
    pub vs_next: Option<Comparison>,
    /// Median, min, max of the program's CPU time (user + system, its
    /// children included) over the same runs as `wall_s`: beside the wall
    /// time it says how many CPUs the program kept busy, and a program
    /// that got less CPU than it asked for ran beside others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_s: Option<crate::stats::Summary>,
    /// Why its wall times cannot be taken as is (a spread past the trust
    /// lines, two modes): a flagged candidate is starred wherever it is
    /// shown and no winner is named over it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
}

/// One run of the program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// 0-based round.
    pub round: usize,
    pub wall_s: f64,
    /// Exit status; None when a signal ended it.
    pub exit_status: Option<i32>,
    pub signal: Option<i32>,
    pub ok: bool,
    /// Memory by node: the last sample before the program ended and the
    /// sample with the most anonymous memory; None when the program ended
    /// before the first sample.
    pub memory_last: Option<NumaMaps>,
    pub memory_peak: Option<NumaMaps>,
    /// How many `numa_maps` samples were taken.
    pub memory_samples: usize,
    /// CPUs other tasks kept busy during the run, on average
    /// ([`crate::beside`]; the program and its children are not others);
    /// absent where it could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_busy_cpus: Option<f64>,
    /// The program's CPU time in seconds, user + system, with the children
    /// it waited for (the kernel's account of what it reaped); absent
    /// where it could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_s: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub round: usize,
    /// `exit status 3`, `killed by signal 11`, or why it could not start.
    pub status: String,
    /// The last lines of its stderr.
    pub stderr_tail: String,
}

/// Is the gap to the next candidate more than run-to-run noise?
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub next: String,
    /// next median / this median (>= 1).
    pub ratio: f64,
    /// Two-sided exact Mann-Whitney U test of the two sets of run times.
    pub p_value: f64,
    /// p_value <= 0.05.
    pub beyond_noise: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    pub label: String,
    pub reason: String,
}

/// The winner, ready to paste.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Winner {
    pub label: String,
    pub numactl: String,
    /// None for the unbound candidates (nothing to pin).
    pub taskset: Option<String>,
    /// `OMP_NUM_THREADS=.. OMP_PLACES=.. OMP_PROC_BIND=..`.
    pub omp: String,
    pub srun: String,
}

/// The label of the flagged one of the fastest candidate (`top`) and the
/// one it is compared with, the fastest first; None when both hold. A
/// winner over or by an untrusted time would be a verdict from noise.
pub fn untrusted_pair<'a>(cands: &'a [Candidate], c: &'a Candidate) -> Option<&'a str> {
    if !c.flags.is_empty() {
        return Some(&c.label);
    }
    let next = &c.vs_next.as_ref()?.next;
    cands
        .iter()
        .find(|o| &o.label == next && !o.flags.is_empty())
        .map(|o| o.label.as_str())
}
