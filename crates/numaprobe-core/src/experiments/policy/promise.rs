//! What each policy promises about where pages go, and how the pages
//! `move_pages` found compare with it: the check every sample carries.

use super::PolicyPlan;
use crate::model::policy::{Distribution, PolicyKind};
use crate::placement::{PlacementCheck, PLACEMENT_THRESHOLD};
use std::collections::BTreeMap;

/// The share of pages `policy` promises each node, for this plan.
pub fn expected_share(plan: &PolicyPlan, policy: PolicyKind) -> Option<BTreeMap<u32, f64>> {
    let mut m = BTreeMap::new();
    match policy {
        PolicyKind::Unpinned => return None,
        PolicyKind::FirstTouch => {
            let t = plan.threads.len() as f64;
            for s in &plan.threads {
                *m.entry(s.node).or_insert(0.0) += 1.0 / t;
            }
        }
        PolicyKind::Serial | PolicyKind::Preferred => {
            m.insert(plan.node, 1.0);
        }
        PolicyKind::Interleave => {
            let k = plan.mem_nodes.len() as f64;
            for &n in &plan.mem_nodes {
                m.insert(n, 1.0 / k);
            }
        }
        PolicyKind::Weighted => {
            let w = |n: u32| {
                plan.kernel_weights
                    .iter()
                    .find(|x| x.node == n)
                    .map_or(1.0, |x| f64::from(x.weight))
            };
            let sum: f64 = plan.mem_nodes.iter().map(|&n| w(n)).sum();
            for &n in &plan.mem_nodes {
                m.insert(n, w(n) / sum);
            }
        }
    }
    Some(m)
}

/// Sum the checks of a case's buffers and compare with the promise.
pub fn distribution(
    checks: &[PlacementCheck],
    expected: Option<BTreeMap<u32, f64>>,
) -> Distribution {
    let mut per_node = BTreeMap::new();
    let (mut pages, mut not_present, mut page_size) = (0, 0, 4096);
    for c in checks {
        pages += c.pages;
        not_present += c.not_present;
        page_size = c.page_size;
        for (&n, &p) in &c.per_node {
            *per_node.entry(n).or_insert(0) += p;
        }
    }
    let match_fraction = expected.as_ref().map(|e| {
        let total = pages.max(1) as f64;
        e.iter()
            .map(|(n, share)| (per_node.get(n).copied().unwrap_or(0) as f64 / total).min(*share))
            .sum::<f64>()
    });
    Distribution {
        pages,
        page_size,
        buffers: checks.len() as u32,
        per_node,
        not_present,
        expected_share: expected,
        flagged: match_fraction.is_some_and(|m| m < PLACEMENT_THRESHOLD),
        match_fraction,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::policy::{plan, PolicyConfig, Threads};
    use crate::experiments::testing;

    #[test]
    fn shares_follow_each_promise() {
        let topo = testing::live_topology();
        let mut p = plan(
            &topo,
            &PolicyConfig {
                size: Some(4 << 20),
                threads: Some(Threads::Total(1)),
                ..Default::default()
            },
        )
        .unwrap();
        p.mem_nodes = vec![0, 1, 2];
        p.node = 2;
        p.kernel_weights = vec![
            crate::model::policy::NodeWeight { node: 0, weight: 3 },
            crate::model::policy::NodeWeight { node: 1, weight: 1 },
        ];
        let i = expected_share(&p, PolicyKind::Interleave).unwrap();
        assert!((i[&1] - 1.0 / 3.0).abs() < 1e-12);
        let w = expected_share(&p, PolicyKind::Weighted).unwrap();
        // Node 2 has no weight file: the kernel's default weight 1.
        assert_eq!((w[&0], w[&1], w[&2]), (0.6, 0.2, 0.2));
        assert_eq!(expected_share(&p, PolicyKind::Serial).unwrap()[&2], 1.0);
        assert!(expected_share(&p, PolicyKind::Unpinned).is_none());
        let check = PlacementCheck {
            pages: 10,
            page_size: 4096,
            per_node: [(0, 5), (1, 5)].into_iter().collect(),
            not_present: 0,
            intended_nodes: vec![],
            fraction_on_intended: 0.0,
            thp_fraction: None,
        };
        let d = distribution(&[check], Some(w));
        assert!((d.match_fraction.unwrap() - 0.7).abs() < 1e-12);
        assert!(d.flagged);
        assert_eq!(d.shares_text(), "0: 50 %, 1: 50 %");
    }
}
