//! The result model of `numaprobe policy` (AMD 40555 §3.1-3.2, the iXBT Opteron study): one
//! streaming workload run under each memory policy, for independent data per
//! thread and for one shared array, with throughput, time per pass, the spread
//! over rounds and the page distribution `move_pages` reported. Plain data
//! (the `numaprobe/1` JSON contract); the advice is filled by
//! `analysis::policy`, the rankings come from [`PolicyReport::rankings`].

use super::ranking::{Better, RankEntry, Ranking};
use crate::kernels::{KernelSpec, VectorWidth};
use crate::stats::sketch::Sketch;
use crate::stats::Summary;
use crate::timer::TimerInfo;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A whole `numaprobe policy` document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyReport {
    /// Always `numaprobe/1`.
    pub schema: String,
    /// Always `policy`.
    pub command: String,
    /// False while rounds are still running, or when the run was cut short.
    pub complete: bool,
    /// True when a stop (Ctrl-C) ended the run before its last round.
    pub interrupted: bool,
    pub parameters: PolicyParameters,
    /// The weighted-interleave weights: the kernel's, the derived ones and
    /// how to reproduce them.
    pub weights: WeightsInfo,
    /// One line per thing the reader must know (a skipped policy, one node).
    pub notes: Vec<String>,
    pub cases: Vec<CaseResult>,
    /// Per case, the policies by median throughput (best first).
    pub rankings: Vec<Ranking>,
    /// Winner per case, by how much, and when interleave wins or loses.
    pub advice: Vec<Advice>,
}

/// Everything that produced the figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyParameters {
    pub op: String,
    pub kernel: KernelSpec,
    pub vector_width: VectorWidth,
    /// Bytes of data in total: independent data splits it over the threads,
    /// the shared array is this size.
    pub size_bytes: u64,
    /// `4k`, `thp`, `2m`, `1g`.
    pub pages: String,
    /// The pinned threads: CPU and its node, in thread order.
    pub threads: Vec<ThreadSlot>,
    pub cpu_nodes: Vec<u32>,
    /// Allowed memory nodes: what interleave spreads over.
    pub mem_nodes: Vec<u32>,
    /// The node of `serial` and `preferred`.
    pub node: u32,
    /// Rounds: every policy once per round, the rounds interleaved.
    pub rounds: u32,
    /// Seconds each timed sample aims for (passes are added until it is reached).
    pub sample_target_s: f64,
    pub timer: TimerInfo,
    /// What one pass is, per case, and how throughput is counted.
    pub definitions: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadSlot {
    pub cpu: u32,
    pub node: u32,
}

/// A weight of one node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeWeight {
    pub node: u32,
    pub weight: u32,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct WeightsInfo {
    /// The kernel has MPOL_WEIGHTED_INTERLEAVE (Linux 6.9+).
    pub supported: bool,
    /// Why the weighted policy did not run.
    pub skip_reason: Option<String>,
    /// The kernel's weights now (`/sys/kernel/mm/mempolicy/weighted_interleave/nodeN`):
    /// what the weighted policy measured with.
    pub kernel: Vec<NodeWeight>,
    /// Weights derived from a measured bandwidth matrix (`--weights-from`).
    pub derived: Vec<NodeWeight>,
    /// Where the derived weights come from, and how.
    pub derived_from: Option<String>,
    /// Commands that set the weights (derived ones, else the kernel's) and run
    /// a program under them.
    pub reproduce: Vec<String>,
}

/// The two data cases of AMD 40555 §3.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DataCase {
    /// Each thread streams its own array (§3.1.1).
    Independent,
    /// All threads stream one array, each slice in turn (§3.1.2).
    Shared,
}

impl DataCase {
    pub const ALL: [DataCase; 2] = [DataCase::Independent, DataCase::Shared];
    pub const NAMES: &'static str = "independent, shared";

    pub fn name(self) -> &'static str {
        match self {
            DataCase::Independent => "independent",
            DataCase::Shared => "shared",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(s.trim()))
    }
}

/// The memory policies compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyKind {
    /// Each pinned thread first touches the data it streams (NUMA-aware).
    FirstTouch,
    /// One thread touches everything: every page on its node (the
    /// serial-initialisation trap).
    Serial,
    /// MPOL_INTERLEAVE over every allowed memory node.
    Interleave,
    /// MPOL_WEIGHTED_INTERLEAVE over every allowed memory node.
    Weighted,
    /// MPOL_PREFERRED on one node.
    Preferred,
    /// Threads not pinned, default policy: what a non-NUMA-aware setup gets.
    Unpinned,
}

impl PolicyKind {
    pub const ALL: [PolicyKind; 6] = [
        PolicyKind::FirstTouch,
        PolicyKind::Serial,
        PolicyKind::Interleave,
        PolicyKind::Weighted,
        PolicyKind::Preferred,
        PolicyKind::Unpinned,
    ];
    pub const NAMES: &'static str =
        "first-touch, serial, interleave, weighted, preferred, unpinned";

    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::FirstTouch => "first-touch",
            PolicyKind::Serial => "serial",
            PolicyKind::Interleave => "interleave",
            PolicyKind::Weighted => "weighted",
            PolicyKind::Preferred => "preferred",
            PolicyKind::Unpinned => "unpinned",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s.trim()))
    }
}

/// One case (independent or shared) under every policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseResult {
    pub case: DataCase,
    pub description: String,
    pub policies: Vec<PolicyOutcome>,
}

/// One policy in one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyOutcome {
    pub policy: PolicyKind,
    /// What the policy does, in words.
    pub description: String,
    /// How to give a program this placement (numactl or code).
    pub reproduce: String,
    /// Why the policy did not run (e.g. no weighted interleave in this kernel).
    pub skipped: Option<String>,
    /// Every timed sample; empty in a document that leaves them out (the
    /// default; `--keep-samples` keeps them), which has `left_out` instead.
    pub samples: Vec<PolicySample>,
    /// Present when `samples` is left out: what the summaries need of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_out: Option<LeftOut>,
    /// GB/s (10^9 bytes/s) over the samples.
    pub throughput: Option<Summary>,
    /// Seconds per pass over the samples.
    pub time: Option<Summary>,
    /// Where the pages were, in the latest sample.
    pub placement: Option<Distribution>,
    /// Samples that failed, with why.
    pub failures: Vec<String>,
    /// Why the summaries cannot be taken as is (every sample was set
    /// aside, a spread past the trust lines, two modes); a flagged policy
    /// is shown starred and takes no part in the advice.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
}

impl PolicyOutcome {
    pub fn new(policy: PolicyKind, description: String, reproduce: String) -> Self {
        PolicyOutcome {
            policy,
            description,
            reproduce,
            skipped: None,
            samples: Vec::new(),
            left_out: None,
            throughput: None,
            time: None,
            placement: None,
            failures: Vec::new(),
            flags: Vec::new(),
        }
    }

    /// The samples the summaries are made of: those that held their CPUs,
    /// or all of them when none did.
    fn kept(&self) -> Vec<&PolicySample> {
        let held: Vec<&PolicySample> = self
            .samples
            .iter()
            .filter(|s| s.set_aside.is_none())
            .collect();
        if held.is_empty() {
            self.samples.iter().collect()
        } else {
            held
        }
    }

    /// Recompute the summaries from the samples that held their CPUs (all
    /// of them when none did, and the outcome is flagged), so a round
    /// stretched by another task never decides a ranking. An outcome whose
    /// samples were left out keeps the summaries it was written with.
    pub fn summarise(&mut self) {
        if self.samples.is_empty() && self.left_out.is_some() {
            return;
        }
        let kept = self.kept();
        let none_held = kept.iter().all(|s| s.set_aside.is_some()) && !kept.is_empty();
        let gbps: Vec<f64> = kept.iter().map(|s| s.gbps).collect();
        let secs: Vec<f64> = kept.iter().map(|s| s.seconds_per_pass).collect();
        self.flags.clear();
        if none_held {
            self.flags.push(format!(
                "preempted: a thread lost its CPU or started late in every one of {} samples; the figures are made of them and time the scheduler as much as the policy: measure on a quieter machine",
                self.samples.len()
            ));
        }
        self.throughput = Summary::of(&gbps);
        self.time = Summary::of(&secs);
        // The same trust lines as every other figure: a spread past them or
        // two modes and the median is no figure to advise from.
        if let Some(t) = self.throughput {
            self.flags
                .extend(crate::stats::instability(t.cv, t.min, t.max, t.n));
            self.flags
                .extend(crate::stats::two_modes(&gbps).map(|m| m.flag("GB/s")));
        }
    }
}

impl PolicyOutcome {
    /// Samples taken, whether or not the document has them.
    pub fn sample_count(&self) -> usize {
        match &self.left_out {
            Some(l) if self.samples.is_empty() => l.samples,
            _ => self.samples.len(),
        }
    }

    /// Samples set aside (a thread lost its CPU or started late), whether
    /// or not the document has them.
    pub fn set_aside_count(&self) -> usize {
        match &self.left_out {
            Some(l) if self.samples.is_empty() => l.set_aside,
            _ => self
                .samples
                .iter()
                .filter(|s| s.set_aside.is_some())
                .count(),
        }
    }

    /// The samples replaced by [`LeftOut`] (nothing for an outcome without).
    pub fn leave_out_samples(&mut self) {
        if self.samples.is_empty() {
            return;
        }
        let gbps: Vec<f64> = self.kept().iter().map(|s| s.gbps).collect();
        self.left_out = Some(LeftOut {
            samples: self.samples.len(),
            set_aside: self.set_aside_count(),
            gbps: Sketch::of(&gbps),
        });
        self.samples = Vec::new();
    }
}

impl PolicyReport {
    /// Every outcome's samples left out ([`PolicyOutcome::leave_out_samples`]):
    /// the document `policy` writes unless told to keep them.
    pub fn leave_out_samples(&mut self) {
        for o in self.cases.iter_mut().flat_map(|c| &mut c.policies) {
            o.leave_out_samples();
        }
    }
}

/// What a policy's left-out samples leave behind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeftOut {
    /// Samples taken.
    pub samples: usize,
    /// Of them, set aside (a thread lost its CPU or started late).
    pub set_aside: usize,
    /// Quantiles of the GB/s of the samples the summaries are made of.
    pub gbps: Option<Sketch>,
}

/// One timed sample (one round).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicySample {
    pub round: u32,
    /// Passes timed together.
    pub passes: u64,
    pub seconds_per_pass: f64,
    pub gbps: f64,
    /// Share of the pages where the policy promises them (None: no promise).
    pub placement_match: Option<f64>,
    /// CPUs the threads ran on at the end (unpinned threads may move).
    pub cpus: Vec<u32>,
    /// Why the sample is set aside (a thread lost its CPU during it, or
    /// started late): it is kept here but takes no part in the summaries
    /// while any sample of the policy held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_aside: Option<String>,
}

/// Pages per node as `move_pages` reported them, against what the policy
/// promises.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Distribution {
    /// 4 KiB pages queried, over all buffers of the case.
    pub pages: u64,
    pub page_size: u64,
    /// Buffers the pages are in (independent: one per thread; shared: one).
    pub buffers: u32,
    pub per_node: BTreeMap<u32, u64>,
    pub not_present: u64,
    /// The share of pages the policy promises each node (None: no promise,
    /// e.g. unpinned threads).
    pub expected_share: Option<BTreeMap<u32, f64>>,
    /// Share of pages on the node the policy promised them (sum over nodes
    /// of min(actual, expected)); None without a promise.
    pub match_fraction: Option<f64>,
    /// Match below 99 %.
    pub flagged: bool,
}

impl Distribution {
    /// `0: 50 %, 1: 50 %` (share of pages per node).
    pub fn shares_text(&self) -> String {
        let total = self.pages.max(1) as f64;
        self.per_node
            .iter()
            .map(|(n, p)| format!("{n}: {:.0} %", *p as f64 / total * 100.0))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// One line of advice with the numbers it rests on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Advice {
    /// `winner`, `interleave`, `serial`, `unpinned`, `one-node`, ...
    pub kind: String,
    /// The case it is about, if one.
    pub case: Option<DataCase>,
    pub text: String,
}

impl PolicyReport {
    /// Did any case measure policy `p` (a throughput, not a skip)?
    pub fn measured(&self, p: PolicyKind) -> bool {
        self.cases.iter().any(|c| {
            c.policies
                .iter()
                .any(|o| o.policy == p && o.throughput.is_some())
        })
    }

    /// Per case, the policies by median throughput, best first; skipped or
    /// failed ones last, unranked. A policy whose pages were not where it
    /// promises is flagged with why, as a spread past the trust lines is:
    /// its figure times another placement than the one it is named for.
    pub fn rankings(&self) -> Vec<Ranking> {
        self.cases
            .iter()
            .map(|c| {
                let mut ranked: Vec<RankEntry> = Vec::new();
                let mut unranked: Vec<RankEntry> = Vec::new();
                for p in &c.policies {
                    match &p.throughput {
                        Some(s) => ranked.push(RankEntry {
                            label: p.policy.name().into(),
                            median: s.median,
                            min: s.min,
                            max: s.max,
                            samples: s.n,
                            note: None,
                            ranked: true,
                            flags: p.flags.iter().cloned().chain(broken_promise(p)).collect(),
                        }),
                        None => unranked.push(RankEntry {
                            label: p.policy.name().into(),
                            median: 0.0,
                            min: 0.0,
                            max: 0.0,
                            samples: 0,
                            note: Some(
                                p.skipped
                                    .clone()
                                    .or_else(|| p.failures.first().cloned())
                                    .unwrap_or_else(|| "not measured".into()),
                            ),
                            ranked: false,
                            flags: Vec::new(),
                        }),
                    }
                }
                ranked.sort_by(|a, b| b.median.total_cmp(&a.median));
                ranked.extend(unranked);
                Ranking {
                    title: format!("{} data: throughput by memory policy", c.case.name()),
                    unit: "GB/s".into(),
                    better: Better::Higher,
                    entries: ranked,
                }
            })
            .collect()
    }
}

/// Why a measured policy's figure is not its placement's: fewer than
/// [`PLACEMENT_THRESHOLD`](crate::placement::PLACEMENT_THRESHOLD) of its
/// pages where the policy promises them.
fn broken_promise(p: &PolicyOutcome) -> Option<String> {
    let d = p.placement.as_ref().filter(|d| d.flagged)?;
    Some(match d.match_fraction {
        Some(m) => format!(
            "pages not where the policy promises: {:.1} % of them as promised, < {:.0} % ({})",
            m * 100.0,
            crate::placement::PLACEMENT_THRESHOLD * 100.0,
            d.shares_text()
        ),
        None => format!("pages not where the policy promises ({})", d.shares_text()),
    })
}
