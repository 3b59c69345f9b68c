//! The study's plan as data: experiments (one figure of the note each), their
//! cases (one bar) and threads resolved against the machine. The planner in
//! `experiments::study::plan` makes it; the runner runs it; `--plan` shows it.

use super::background::{BackgroundPlacement, LoadLevel, Subscription};
use super::hops::HopMap;
use super::label::ThreadSpec;
use serde::{Deserialize, Serialize};

/// The experiments of the note that `--preset` reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// Figures 3-5: one thread on node 0, memory 0, 1 and 2 hops away.
    Hops,
    /// Figures 6-9: two write-only threads writing each other's node vs not.
    Crossfire,
    /// Figures 10-15: both threads on one node, different cores.
    SameNode,
    /// Section 3.4: search for cases contradicting the two hop myths.
    Myths,
}

impl Preset {
    pub const ALL: [Preset; 4] = [
        Preset::Hops,
        Preset::Crossfire,
        Preset::SameNode,
        Preset::Myths,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Preset::Hops => "hops",
            Preset::Crossfire => "crossfire",
            Preset::SameNode => "same-node",
            Preset::Myths => "myths",
        }
    }

    pub fn parse(s: &str) -> Option<Preset> {
        Preset::ALL.into_iter().find(|p| p.name() == s)
    }
}

/// A foreground thread resolved against the machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadPlan {
    pub spec: ThreadSpec,
    /// The CPU the label's core index names on this machine.
    pub cpu: u32,
    /// Hops from the thread's node to its memory node.
    pub hops: u32,
}

/// One bar of a figure: a set of foreground threads run together.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CasePlan {
    /// The note's x-axis label, e.g. `0.0.w.1 1.0.w.0`.
    pub label: String,
    /// What the case is in the note's words, e.g. `crossfire`, `0 Hop-1 Hop`.
    pub description: String,
    pub threads: Vec<ThreadPlan>,
}

impl CasePlan {
    /// Hop count of each thread, in thread order.
    pub fn hops(&self) -> Vec<u32> {
        self.threads.iter().map(|t| t.hops).collect()
    }
}

/// One figure: cases under one background setting, compared with a baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentPlan {
    /// Stable identifier, also the chart's file stem, e.g. `crossfire-ww-low-high`.
    pub id: String,
    pub title: String,
    /// The note's figure this reproduces, when there is one.
    pub figure: Option<String>,
    /// Access combination of the threads (`w`, `rr`, `ww`, ...) or `mixed`.
    pub mix: String,
    pub load: LoadLevel,
    pub subscription: Subscription,
    pub background: BackgroundPlacement,
    pub cases: Vec<CasePlan>,
    /// Index into `cases` of the 100 % case.
    pub baseline: usize,
}

/// Everything the runner needs, plus the lines explaining what was left out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyPlan {
    pub preset: Option<Preset>,
    pub hop_map: HopMap,
    pub experiments: Vec<ExperimentPlan>,
    /// One line per thing this machine could not host.
    pub notes: Vec<String>,
}
