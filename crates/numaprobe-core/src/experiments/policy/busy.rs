//! Other tasks' busy CPUs beside a policy's samples ([`crate::beside`]),
//! and the star they give its figure. A policy's figure is made of one
//! sample a round, spread over the whole run, and recomputed from them at
//! every round (`PolicyOutcome::summarise`, flags and all): so each
//! sample's reading is kept, and the figure is judged by their mean over
//! the samples it is made of.

use crate::model::policy::{Distribution, PolicyKind, PolicyOutcome, PolicySample};

/// A data case (its index in the plan's cases) and a policy.
type Key = (usize, PolicyKind);

/// For each sample with a reading: whether it held its CPUs, and the busy
/// CPUs other tasks kept beside it.
type Readings = Vec<(bool, f64)>;

/// Per (case, policy), its samples' readings.
#[derive(Debug, Default)]
pub(super) struct Beside(Vec<(Key, Readings)>);

impl Beside {
    /// Record a sample's reading (None: none could be taken) under `key`;
    /// the mean over the samples the outcome's figure is made of (those
    /// that held, or all when none did, as `PolicyOutcome::summarise` takes
    /// them); None without a reading.
    fn record(&mut self, key: Key, held: bool, others: Option<f64>) -> Option<f64> {
        let at = match self.0.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                self.0.push((key, Vec::new()));
                self.0.len() - 1
            }
        };
        let seen = &mut self.0[at].1;
        seen.extend(others.map(|x| (held, x)));
        let any_held = seen.iter().any(|s| s.0);
        let of: Vec<f64> = seen
            .iter()
            .filter(|s| s.0 || !any_held)
            .map(|s| s.1)
            .collect();
        (!of.is_empty()).then(|| of.iter().sum::<f64>() / of.len() as f64)
    }

    /// Add a measured sample of case `case` to its policy's outcome: its
    /// summaries and flags recomputed, then starred when other tasks kept
    /// CPUs busy beside its samples (`others`: this sample's reading).
    pub(super) fn add_sample(
        &mut self,
        outcome: &mut PolicyOutcome,
        case: usize,
        sample: PolicySample,
        dist: Distribution,
        others: Option<f64>,
    ) {
        let held = sample.set_aside.is_none();
        outcome.samples.push(sample);
        outcome.placement = Some(dist);
        outcome.summarise();
        let busy = self.record((case, outcome.policy), held, others);
        crate::beside::mark(&mut outcome.flags, busy);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn sample(gbps: f64, lost: bool) -> PolicySample {
        PolicySample {
            round: 1,
            passes: 10,
            seconds_per_pass: 1.0 / gbps,
            gbps,
            placement_match: Some(1.0),
            cpus: vec![0],
            set_aside: lost.then(|| "preempted".to_string()),
        }
    }

    fn dist() -> Distribution {
        Distribution {
            pages: 1,
            page_size: 4096,
            buffers: 1,
            per_node: BTreeMap::from([(0, 1)]),
            not_present: 0,
            expected_share: None,
            match_fraction: None,
            flagged: false,
        }
    }

    #[test]
    fn the_mean_is_over_the_samples_the_figure_is_made_of() {
        let mut b = Beside::default();
        let first = (0, PolicyKind::FirstTouch);
        assert_eq!(b.record(first, true, None), None);
        assert_eq!(b.record(first, true, Some(1.0)), Some(1.0));
        assert_eq!(b.record(first, true, Some(0.0)), Some(0.5));
        // A sample set aside takes no part while one held.
        assert_eq!(b.record(first, false, Some(9.0)), Some(0.5));
        // Another case or policy is judged apart.
        let shared = (1, PolicyKind::FirstTouch);
        assert_eq!(b.record(shared, false, Some(3.0)), Some(3.0));
        assert_eq!(b.record(shared, false, Some(1.0)), Some(2.0));
        assert_eq!(b.record(shared, true, Some(0.2)), Some(0.2));
        let serial = (0, PolicyKind::Serial);
        assert_eq!(b.record(serial, true, None), None);
        assert_eq!(b.0.len(), 3);
    }

    #[test]
    fn a_policy_is_starred_while_other_tasks_kept_cpus_busy_beside_it() {
        let mut b = Beside::default();
        let mut o = PolicyOutcome::new(PolicyKind::Interleave, String::new(), String::new());
        b.add_sample(&mut o, 0, sample(10.0, false), dist(), Some(0.1));
        assert_eq!(o.samples.len(), 1);
        assert!(o.placement.is_some() && o.throughput.is_some());
        assert!(o.flags.is_empty(), "{:?}", o.flags);
        // A busy round lifts the mean past half a CPU: starred, and the
        // star survives the next round's summaries while the mean stays.
        b.add_sample(&mut o, 0, sample(10.0, false), dist(), Some(2.1));
        assert_eq!(o.flags.len(), 1, "{:?}", o.flags);
        assert!(
            o.flags[0].starts_with("memory traffic from other tasks: they kept 1.1 CPUs"),
            "{:?}",
            o.flags
        );
        b.add_sample(&mut o, 0, sample(10.0, false), dist(), None);
        assert_eq!(o.flags.len(), 1, "{:?}", o.flags);
        // Quiet rounds bring the mean under: the star goes with it.
        for _ in 0..3 {
            b.add_sample(&mut o, 0, sample(10.0, false), dist(), Some(0.0));
        }
        assert!(o.flags.is_empty(), "{:?}", o.flags);
        assert_eq!(o.samples.len(), 6);
    }
}
