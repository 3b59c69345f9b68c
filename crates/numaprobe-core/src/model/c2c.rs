//! Cache-line transfer between CPUs (`numaprobe c2c`): the one-way latency of
//! a line moving from one CPU's cache to another's, for a line last written
//! by the other CPU (modified, "HITM") and a read-shared line, per CPU pair,
//! as a matrix and summarised by the closest level the two CPUs share.

use crate::platform::Atomics;
use crate::stats::sketch::{self, Sketch};
use crate::stats::{Measured, SetAside, StopReason, StopRule};
use crate::timer::TimerInfo;
use serde::{Deserialize, Serialize};

/// The closest level of the topology two CPUs share, closest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Domain {
    /// SMT siblings of one core.
    SameCore,
    /// Different cores sharing an L2 or a cluster.
    SameL2,
    /// Different L2s sharing an L3 (a CCX/CCD, a ring's slice set).
    SameL3,
    /// Same NUMA node, different L3s.
    SameNode,
    /// Same package, different NUMA nodes (SNC, Opteron's two dies).
    SamePackage,
    /// Different packages.
    CrossPackage,
}

impl Domain {
    /// Every domain, closest first.
    pub const ALL: [Domain; 6] = [
        Domain::SameCore,
        Domain::SameL2,
        Domain::SameL3,
        Domain::SameNode,
        Domain::SamePackage,
        Domain::CrossPackage,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Domain::SameCore => "same core",
            Domain::SameL2 => "same L2",
            Domain::SameL3 => "same L3",
            Domain::SameNode => "same node",
            Domain::SamePackage => "same package",
            Domain::CrossPackage => "cross package",
        }
    }
}

/// Median, spread and samples of one figure (ns, one way).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub cv: f64,
    /// Every kept sample; empty in a document that leaves them out
    /// (`sketch` then).
    pub samples: Vec<f64>,
    /// Their count and quantiles, in a document that leaves the samples
    /// out (the main job's report unless `--keep-samples`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sketch: Option<Sketch>,
    /// Why sampling stopped (CV reached, budget spent, ...).
    #[serde(default)]
    pub stop: Option<StopReason>,
    /// Samples set aside because either thread lost its CPU during them
    /// ([`crate::held`]), by reason: never part of `samples`.
    #[serde(default)]
    pub set_aside: SetAside,
    /// True when the figure must not be trusted as is (see `flags`).
    #[serde(default)]
    pub flagged: bool,
    /// Why ([`crate::stats::flags::figure_flags`]): a spread past CV 10 %
    /// or max/min 1.5, two modes, too few samples that held their CPU.
    #[serde(default)]
    pub flags: Vec<String>,
}

impl Figure {
    /// The figure of a measurement, flagged by its kept samples.
    pub fn of(m: &Measured) -> Figure {
        let flags = m.flags("ns");
        let s = &m.summary;
        Figure {
            median: s.median,
            min: s.min,
            max: s.max,
            cv: s.cv,
            samples: m.samples.clone(),
            sketch: None,
            stop: Some(m.stop),
            set_aside: m.set_aside,
            flagged: !flags.is_empty(),
            flags,
        }
    }
}

impl Figure {
    /// Star the figure when other tasks kept CPUs busy beside its
    /// measurement ([`crate::beside::flag`]): their traffic moves a line's
    /// transfer as it moves a chase, and a tight spread does not show it.
    pub fn mark_beside(&mut self, others_busy_cpus: Option<f64>) {
        self.flagged |= crate::beside::mark(&mut self.flags, others_busy_cpus);
    }

    /// How many samples the figure kept, whether or not the document has them.
    pub fn kept(&self) -> usize {
        sketch::kept(&self.samples, self.sketch.as_ref())
    }

    /// Replace the samples by their sketch (nothing for a figure without).
    pub fn leave_out_samples(&mut self) {
        sketch::leave_out(&mut self.samples, &mut self.sketch);
    }
}

/// One ordered CPU pair: `a` starts the round trip, `b` answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct C2cPair {
    pub a: u32,
    pub b: u32,
    pub node_a: u32,
    pub node_b: u32,
    pub domain: Domain,
    /// Line last written by the other CPU (modified in its cache), ns one way.
    pub hitm: Option<Figure>,
    /// Line read-shared by both CPUs, ns one way.
    pub shared: Option<Figure>,
}

/// A pair that could not be measured, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct C2cFailed {
    pub a: u32,
    pub b: u32,
    pub reason: String,
}

/// The pairs of one domain, summarised.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DomainSummary {
    pub domain: Domain,
    pub pairs: usize,
    /// Median over the pairs' medians, ns one way.
    pub hitm_ns: Option<f64>,
    pub shared_ns: Option<f64>,
    /// How many of the pairs' HITM / read-shared figures are flagged: a
    /// domain's median resting on any is starred.
    #[serde(default)]
    pub hitm_flagged: usize,
    #[serde(default)]
    pub shared_flagged: usize,
}

impl DomainSummary {
    /// Per domain present, the median of the pairs' medians.
    pub fn of_pairs(pairs: &[C2cPair]) -> Vec<DomainSummary> {
        Domain::ALL
            .iter()
            .filter_map(|&d| {
                let of: Vec<&C2cPair> = pairs.iter().filter(|p| p.domain == d).collect();
                if of.is_empty() {
                    return None;
                }
                let median = |v: Vec<f64>| crate::stats::Summary::of(&v).map(|s| s.median);
                let flagged = |f: fn(&C2cPair) -> Option<&Figure>| {
                    of.iter()
                        .filter(|p| f(p).is_some_and(|f| f.flagged))
                        .count()
                };
                Some(DomainSummary {
                    domain: d,
                    pairs: of.len(),
                    hitm_ns: median(
                        of.iter()
                            .filter_map(|p| p.hitm.as_ref().map(|f| f.median))
                            .collect(),
                    ),
                    shared_ns: median(
                        of.iter()
                            .filter_map(|p| p.shared.as_ref().map(|f| f.median))
                            .collect(),
                    ),
                    hitm_flagged: flagged(|p| p.hitm.as_ref()),
                    shared_flagged: flagged(|p| p.shared.as_ref()),
                })
            })
            .collect()
    }
}

/// `numaprobe c2c`'s document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct C2cResult {
    /// Always `numaprobe/1`.
    pub schema: String,
    /// Always `ns` (one way: round trip / 2).
    pub unit: String,
    /// The CPUs measured, row and column order of the matrices.
    pub cpus: Vec<u32>,
    /// `hitm[i][j]`: median one-way ns from `cpus[i]` to `cpus[j]`; null
    /// on the diagonal and where not measured.
    pub hitm: Vec<Vec<Option<f64>>>,
    pub shared: Vec<Vec<Option<f64>>>,
    pub pairs: Vec<C2cPair>,
    pub domains: Vec<DomainSummary>,
    /// How the ping-pong's memory operations ran (e.g. "loads and stores",
    /// "lse", "load/store exclusive", "x86 lock").
    pub atomics: String,
    /// The HITM round trips' lines: `one line` (both sides write it) or
    /// `two lines` (each side writes its own: core-to-core-latency's
    /// read-write method); null when HITM was not measured.
    #[serde(default)]
    pub hitm_lines: Option<String>,
    /// What this machine's atomic read-modify-writes are on arm64 (LSE
    /// instructions or load/store-exclusive loops); null
    /// elsewhere. The ping-pong itself uses none.
    #[serde(default)]
    pub platform_atomics: Option<Atomics>,
    pub stop_rule: StopRule,
    pub timer: TimerInfo,
    pub notes: Vec<String>,
    #[serde(default)]
    pub failed: Vec<C2cFailed>,
    pub complete: bool,
    #[serde(default)]
    pub interrupted: bool,
}

impl C2cResult {
    /// Every figure's samples replaced by their sketch.
    pub fn leave_out_samples(&mut self) {
        for p in &mut self.pairs {
            p.hitm.iter_mut().for_each(Figure::leave_out_samples);
            p.shared.iter_mut().for_each(Figure::leave_out_samples);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_figure_measured_beside_busy_cpus_is_starred_with_the_reason() {
        let mut f = Figure {
            median: 80.0,
            min: 79.0,
            max: 81.0,
            cv: 0.005,
            samples: vec![79.0, 80.0, 80.0, 80.5, 81.0],
            sketch: None,
            stop: None,
            set_aside: SetAside::default(),
            flagged: false,
            flags: Vec::new(),
        };
        f.mark_beside(Some(0.3));
        assert!(!f.flagged && f.flags.is_empty());
        f.mark_beside(None);
        assert!(!f.flagged);
        f.mark_beside(Some(1.7));
        assert!(f.flagged);
        assert_eq!(f.flags.len(), 1);
        assert!(
            f.flags[0].starts_with("memory traffic from other tasks"),
            "{:?}",
            f.flags
        );
        // Starred already: a second reading neither adds nor clears.
        f.mark_beside(Some(0.0));
        assert!(f.flagged);
        assert_eq!(f.flags.len(), 1);
    }
}
