//! Advice from a policy comparison (`numaprobe policy`): the winner of each
//! data case and by how much, whether that is beyond the noise, when
//! interleave wins (shared data, bandwidth-bound across nodes) and when it
//! loses (independent data that first touch keeps local); plus the weights
//! for weighted interleave derived from a measured bandwidth matrix, and the
//! settings that reproduce them.
//!
//! "Beyond noise" is a plain rule a reader can check: the two policies'
//! ranges over the rounds do not overlap (the worse one's best round is
//! below the better one's worst), with at least three rounds each. With five
//! rounds each, two identical distributions give disjoint ranges with
//! probability 2/252 (< 1 %).

use super::matrix::Matrix;
use crate::model::policy::{
    Advice, CaseResult, DataCase, NodeWeight, PolicyKind, PolicyOutcome, PolicyReport,
};
use crate::stats::Summary;
use crate::units::format_list;

/// Fewest rounds per policy for a "beyond noise" verdict.
pub const MIN_ROUNDS: usize = 3;

/// Weights for weighted interleave from a bandwidth matrix: each memory
/// node's weight follows the mean bandwidth the CPU nodes get from it, in
/// small integers (the largest 10 before reducing by their common divisor;
/// every node at least 1, as the kernel requires).
pub fn derive_weights(
    m: &Matrix,
    cpu_nodes: &[u32],
    mem_nodes: &[u32],
) -> Result<Vec<NodeWeight>, String> {
    if !m.unit.is_bandwidth() {
        return Err(format!(
            "a {} matrix; weights need a bandwidth matrix (GB/s or MB/s, e.g. `numaprobe bandwidth --format json`)",
            m.unit.as_str()
        ));
    }
    let rows: Vec<u32> = cpu_nodes
        .iter()
        .copied()
        .filter(|n| m.row_nodes.contains(n))
        .collect();
    if rows.is_empty() {
        return Err(format!(
            "it has no row for the CPU nodes {} of this machine (rows: {})",
            format_list(cpu_nodes),
            format_list(&m.row_nodes)
        ));
    }
    let mut bw = Vec::new();
    for &j in mem_nodes {
        let v: Vec<f64> = rows.iter().filter_map(|&i| m.get(i, j)).collect();
        if v.is_empty() {
            return Err(format!(
                "it has no value for memory node {j} (columns: {})",
                format_list(&m.col_nodes)
            ));
        }
        bw.push((j, v.iter().sum::<f64>() / v.len() as f64));
    }
    // Ratios to the slowest node, scaled by the smallest factor (1..=10)
    // that rounds every ratio to within 5 %: 40:40:10 GB/s gives 4:4:1,
    // 30:20 gives 3:2, and no weight exceeds the kernel's 255.
    let min = bw.iter().map(|x| x.1).fold(f64::INFINITY, f64::min);
    let ratios: Vec<f64> = bw.iter().map(|x| x.1 / min).collect();
    let fits = |k: f64| {
        ratios
            .iter()
            .all(|r| ((r * k).round() - r * k).abs() <= 0.05 * r * k)
    };
    let k = (1..=10).map(f64::from).find(|&k| fits(k)).unwrap_or(10.0);
    let mut w: Vec<(u32, u32)> = bw
        .iter()
        .zip(&ratios)
        .map(|(&(n, _), r)| (n, ((r * k).round() as u32).clamp(1, 255)))
        .collect();
    let g = w.iter().fold(0, |g, &(_, x)| gcd(g, x)).max(1);
    for x in &mut w {
        x.1 /= g;
    }
    Ok(w.into_iter()
        .map(|(node, weight)| NodeWeight { node, weight })
        .collect())
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The sysfs writes (as root) that set `weights`, and the numactl line that
/// runs a program under weighted interleave over `nodes`.
pub fn reproduce(weights: &[NodeWeight], nodes: &[u32]) -> Vec<String> {
    let mut out: Vec<String> = weights
        .iter()
        .map(|w| {
            format!(
                "echo {} | sudo tee /sys/kernel/mm/mempolicy/weighted_interleave/node{}",
                w.weight, w.node
            )
        })
        .collect();
    out.push(format!(
        "numactl --weighted-interleave={} PROGRAM",
        format_list(nodes)
    ));
    out
}

/// Fill the report's rankings, reproduction lines and advice. The recipe
/// sets weights derived from a bandwidth matrix (`--weights-from`), else
/// the kernel's only when weighted interleave was measured with them: a
/// recipe for a policy nobody measured would read as advice.
pub fn finish(report: &mut PolicyReport) {
    report.rankings = report.rankings();
    let w = if !report.weights.derived.is_empty() {
        &report.weights.derived
    } else if report.measured(PolicyKind::Weighted) {
        &report.weights.kernel
    } else {
        &Vec::new()
    };
    report.weights.reproduce = if w.is_empty() {
        Vec::new()
    } else {
        reproduce(w, &report.parameters.mem_nodes)
    };
    report.advice = advise(report);
}

/// (ratio a/b of median throughputs, beyond noise?) — None when either is
/// missing; the verdict is None with too few rounds to tell.
fn compare(a: &Summary, b: &Summary) -> (f64, Option<bool>) {
    let r = a.median / b.median;
    if a.n < MIN_ROUNDS || b.n < MIN_ROUNDS {
        return (r, None);
    }
    (r, Some(a.min > b.max || b.min > a.max))
}

fn verdict(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "beyond noise: the rounds' ranges do not overlap",
        Some(false) => "within noise: the rounds' ranges overlap",
        None => "too few rounds that held their CPUs to tell from noise (use --rounds 3 or more, on a quieter machine)",
    }
}

fn pct(r: f64) -> String {
    format!("{:.0} %", (r - 1.0).abs() * 100.0)
}

fn get(c: &CaseResult, p: PolicyKind) -> Option<(&PolicyOutcome, &Summary)> {
    // A flagged policy's figures time the scheduler: no advice from them.
    let o = c
        .policies
        .iter()
        .find(|o| o.policy == p && o.flags.is_empty())?;
    Some((o, o.throughput.as_ref()?))
}

fn advise(report: &PolicyReport) -> Vec<Advice> {
    let mut out = Vec::new();
    let multi = report.parameters.mem_nodes.len() > 1;
    for c in &report.cases {
        let case = c.case.name();
        let mut ranked: Vec<(&PolicyOutcome, &Summary)> = c
            .policies
            .iter()
            .filter(|o| o.flags.is_empty())
            .filter_map(|o| Some((o, o.throughput.as_ref()?)))
            .collect();
        ranked.sort_by(|a, b| b.1.median.total_cmp(&a.1.median));
        let Some(&(w, ws)) = ranked.first() else {
            continue;
        };
        // The two policies the winner line compares: a later finding about
        // the same two says it again, so it is left out (or, when it says
        // why, it takes the winner line's place).
        let pair = ranked.get(1).map(|&(r, _)| (w.policy, r.policy));
        let said = |a: PolicyKind, b: PolicyKind| pair == Some((a, b)) || pair == Some((b, a));
        let at = out.len();
        let text = match ranked.get(1) {
            Some(&(r, rs)) => {
                let (ratio, v) = compare(ws, rs);
                format!(
                    "{case} data: {} wins with {:.2} GB/s, {} ahead of {} ({:.2} GB/s); {}",
                    w.policy.name(),
                    ws.median,
                    pct(ratio),
                    r.policy.name(),
                    rs.median,
                    verdict(v)
                )
            }
            None => {
                let flagged: Vec<&str> = c
                    .policies
                    .iter()
                    .filter(|o| !o.flags.is_empty() && o.throughput.is_some())
                    .map(|o| o.policy.name())
                    .collect();
                if flagged.is_empty() {
                    format!(
                        "{case} data: only {} was measured ({:.2} GB/s)",
                        w.policy.name(),
                        ws.median
                    )
                } else {
                    format!(
                        "{case} data: only {} holds ({:.2} GB/s); {} cannot be trusted (starred, see Flagged), so no comparison is made",
                        w.policy.name(),
                        ws.median,
                        flagged.join(", ")
                    )
                }
            }
        };
        out.push(Advice {
            kind: "winner".into(),
            case: Some(c.case),
            text,
        });
        if let (Some((_, il)), Some((_, ft))) = (
            get(c, PolicyKind::Interleave),
            get(c, PolicyKind::FirstTouch),
        ) {
            if multi {
                let (r, v) = compare(il, ft);
                let text = match (v, r > 1.0, c.case) {
                    (Some(true), true, DataCase::Shared) => format!(
                        "shared data: interleave wins, {} more than first touch: every thread reads all of the array, and interleave spreads that traffic over every node's memory controller instead of loading each slice's node from all sides",
                        pct(r)
                    ),
                    (Some(true), true, DataCase::Independent) => format!(
                        "independent data: interleave beats first touch by {}: the threads' own nodes cannot serve their streams alone, so spreading them over more controllers pays (bandwidth-bound beyond one node's memory)",
                        pct(r)
                    ),
                    (Some(true), false, DataCase::Independent) => format!(
                        "independent data: interleave loses {} to first touch: first touch keeps each thread's data on its own node, interleave makes most of it remote",
                        pct(1.0 / r)
                    ),
                    (Some(true), false, DataCase::Shared) => format!(
                        "shared data: interleave loses {} to first touch: the links between nodes, not the memory controllers, limit this machine",
                        pct(1.0 / r)
                    ),
                    _ if said(PolicyKind::Interleave, PolicyKind::FirstTouch) => String::new(),
                    _ => format!(
                        "{case} data: interleave and first touch differ by {} ({}): placement does not limit this workload here",
                        pct(r),
                        verdict(v)
                    ),
                };
                if text.is_empty() {
                } else if said(PolicyKind::Interleave, PolicyKind::FirstTouch) {
                    out[at].text = text;
                } else {
                    out.push(Advice {
                        kind: "interleave".into(),
                        case: Some(c.case),
                        text,
                    });
                }
            }
        }
        if let (Some((so, ss)), Some((_, ft))) =
            (get(c, PolicyKind::Serial), get(c, PolicyKind::FirstTouch))
        {
            if multi && !said(PolicyKind::Serial, PolicyKind::FirstTouch) {
                let (r, v) = compare(ss, ft);
                let on = so
                    .placement
                    .as_ref()
                    .map(|d| d.shares_text())
                    .unwrap_or_default();
                out.push(Advice {
                    kind: "serial".into(),
                    case: Some(c.case),
                    text: format!(
                        "{case} data: serial initialisation ({on}) gives {} {} than first touch ({}); initialise data in the threads that use it",
                        pct(r),
                        if r < 1.0 { "less" } else { "more" },
                        verdict(v)
                    ),
                });
            }
        }
        if let (Some((_, un)), Some((_, ft)), false) = (
            get(c, PolicyKind::Unpinned),
            get(c, PolicyKind::FirstTouch),
            said(PolicyKind::Unpinned, PolicyKind::FirstTouch),
        ) {
            let (r, v) = compare(un, ft);
            out.push(Advice {
                kind: "unpinned".into(),
                case: Some(c.case),
                text: format!(
                    "{case} data: unpinned threads with the default policy give {} {} than pinned first touch ({})",
                    pct(r),
                    if r < 1.0 { "less" } else { "more" },
                    verdict(v)
                ),
            });
        }
    }
    if !multi {
        out.push(Advice {
            kind: "one-node".into(),
            case: None,
            text: format!(
                "one memory node ({}): every policy places every page there, so only the binding can matter (pinned vs unpinned); run on a multi-node machine to compare placements",
                format_list(&report.parameters.mem_nodes)
            ),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::matrix::Unit;
    use crate::model::policy::PolicySample;

    fn outcome(p: PolicyKind, gbps: &[f64]) -> PolicyOutcome {
        let mut o = PolicyOutcome::new(p, String::new(), String::new());
        o.samples = gbps
            .iter()
            .enumerate()
            .map(|(i, &g)| PolicySample {
                round: i as u32 + 1,
                passes: 1,
                seconds_per_pass: 1.0 / g,
                gbps: g,
                placement_match: Some(1.0),
                cpus: vec![],
                set_aside: None,
            })
            .collect();
        o.summarise();
        o
    }

    fn report(cases: Vec<CaseResult>, mem_nodes: Vec<u32>) -> PolicyReport {
        let topo = crate::experiments::testing::live_topology();
        let cfg = crate::experiments::policy::PolicyConfig {
            size: Some(4 << 20),
            threads: Some(crate::experiments::policy::Threads::Total(1)),
            policies: Some(vec![PolicyKind::FirstTouch]),
            ..Default::default()
        };
        let plan = crate::experiments::policy::plan(&topo, &cfg).unwrap();
        let mut r = crate::experiments::policy::empty_report(&plan);
        r.parameters.mem_nodes = mem_nodes;
        r.cases = cases;
        r
    }

    #[test]
    fn summaries_follow_the_samples_a_document_still_has() {
        // Left out when written: the written summaries stand.
        let mut o = outcome(PolicyKind::FirstTouch, &[10.0, 10.1, 9.9]);
        o.leave_out_samples();
        let written = o.throughput;
        assert!(written.is_some());
        o.summarise();
        assert_eq!(o.throughput, written);
        // Samples there: they decide, whatever else the document says.
        let mut o = outcome(PolicyKind::FirstTouch, &[10.0, 10.1, 9.9]);
        o.left_out = Some(crate::model::policy::LeftOut {
            samples: 1,
            set_aside: 0,
            gbps: None,
        });
        o.throughput = None;
        o.summarise();
        assert_eq!(o.throughput.map(|t| t.median), Some(10.0));
        // Neither samples nor what they left: no figure, no flag.
        let mut o = outcome(PolicyKind::FirstTouch, &[]);
        o.throughput = Summary::of(&[5.0]);
        o.flags = vec!["stale".into()];
        o.summarise();
        assert_eq!((o.throughput, o.flags.len()), (None, 0));
    }

    #[test]
    fn shared_data_interleave_win_and_independent_loss_are_said_with_margins() {
        let shared = CaseResult {
            case: DataCase::Shared,
            description: String::new(),
            policies: vec![
                outcome(PolicyKind::FirstTouch, &[10.0, 10.2, 9.9]),
                outcome(PolicyKind::Interleave, &[15.0, 15.3, 14.8]),
                outcome(PolicyKind::Serial, &[6.0, 6.1, 5.9]),
            ],
        };
        let indep = CaseResult {
            case: DataCase::Independent,
            description: String::new(),
            policies: vec![
                outcome(PolicyKind::FirstTouch, &[20.0, 20.5, 19.8]),
                outcome(PolicyKind::Interleave, &[14.0, 20.1, 13.9]),
            ],
        };
        let mut r = report(vec![indep, shared], vec![0, 1]);
        finish(&mut r);
        let texts: Vec<&str> = r.advice.iter().map(|a| a.text.as_str()).collect();
        // Interleave's rounds spread past the trust lines (CV 22 %): no
        // claim rests on them, and the line says why.
        assert_eq!(texts[0], "independent data: only first-touch holds (20.00 GB/s); interleave cannot be trusted (starred, see Flagged), so no comparison is made", "{texts:?}");
        assert!(
            r.rankings[0].entries[1].flags[0].starts_with("unstable: CV 22."),
            "{:?}",
            r.rankings[0]
        );
        assert!(r.rankings[0].entries[0].flags.is_empty());
        assert!(
            texts
                .iter()
                .any(|t| t.starts_with("shared data: interleave wins, 50 % more than first touch")),
            "{texts:?}"
        );
        assert!(
            texts
                .iter()
                .any(|t| t.starts_with("shared data: serial initialisation")
                    && t.contains("40 % less")),
            "{texts:?}"
        );
        // Overlapping ranges: no claim that interleave loses.
        assert!(
            !texts.iter().any(|t| t.contains("interleave loses")),
            "{texts:?}"
        );
        assert_eq!(r.rankings.len(), 2);
        assert_eq!(r.rankings[1].entries[0].label, "interleave");
        assert!(r.rankings.iter().all(|k| k.unit == "GB/s"));
    }

    #[test]
    fn one_memory_node_says_only_binding_matters() {
        let c = CaseResult {
            case: DataCase::Independent,
            description: String::new(),
            policies: vec![
                outcome(PolicyKind::FirstTouch, &[10.0]),
                outcome(PolicyKind::Unpinned, &[9.0]),
            ],
        };
        let mut r = report(vec![c], vec![0]);
        finish(&mut r);
        let kinds: Vec<&str> = r.advice.iter().map(|a| a.kind.as_str()).collect();
        // The winner line already compares first touch with unpinned.
        assert_eq!(kinds, ["winner", "one-node"]);
        assert!(r.advice[0].text.contains("too few rounds"));
        // Weighted interleave was not measured: no recipe, though the
        // kernel has weights.
        r.weights.kernel = vec![NodeWeight { node: 0, weight: 1 }];
        finish(&mut r);
        assert!(r.weights.reproduce.is_empty(), "{:?}", r.weights.reproduce);
        r.cases[0]
            .policies
            .push(outcome(PolicyKind::Weighted, &[9.5]));
        finish(&mut r);
        assert_eq!(
            r.weights.reproduce[0],
            "echo 1 | sudo tee /sys/kernel/mm/mempolicy/weighted_interleave/node0"
        );
        // A line per finding: no two advice lines compare the same pair.
        let unpinned = r
            .advice
            .iter()
            .filter(|a| a.case.is_some() && a.text.contains("unpinned"))
            .count();
        assert_eq!(unpinned, 1, "{:?}", r.advice);
    }

    #[test]
    fn weights_follow_the_bandwidth_each_memory_node_gives() {
        let m = Matrix::new(
            Unit::GBps,
            vec![0, 1],
            vec![0, 1, 2],
            vec![
                vec![Some(40.0), Some(20.0), Some(10.0)],
                vec![Some(20.0), Some(40.0), Some(10.0)],
            ],
        )
        .unwrap();
        let w = derive_weights(&m, &[0, 1], &[0, 1, 2]).unwrap();
        let got: Vec<(u32, u32)> = w.iter().map(|x| (x.node, x.weight)).collect();
        assert_eq!(got, [(0, 3), (1, 3), (2, 1)]);
        let lines = reproduce(&w, &[0, 1, 2]);
        assert_eq!(
            lines[2],
            "echo 1 | sudo tee /sys/kernel/mm/mempolicy/weighted_interleave/node2"
        );
        assert_eq!(lines[3], "numactl --weighted-interleave=0-2 PROGRAM");
        let e = derive_weights(&m, &[0, 1], &[0, 3]).unwrap_err();
        assert!(e.contains("no value for memory node 3"), "{e}");
        let lat = Matrix::new(Unit::Ns, vec![0], vec![0], vec![vec![Some(90.0)]]).unwrap();
        assert!(derive_weights(&lat, &[0], &[0])
            .unwrap_err()
            .contains("bandwidth"));
    }
}
